//! An instruction file as a document: its Markdown structure (CommonMark with tables and
//! YAML front matter, read by pulldown-cmark) gives markup that holds no instruction
//! (headings, code blocks, HTML, rules, front matter) and sentences, each with the lines it
//! spans and the context its headings, list labels and front matter give it. A paragraph
//! or list item's own text is cut into sentences at `.`, `!`, `?` or `;` followed by a space
//! (not after `e.g.`, `i.e.`, ..., never inside a `code span`), and at a spaced dash that
//! joins an instruction to its gloss ("**Use type hints** - better IDE support").

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// A part of a file, with its 1-based first and last line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// One sentence of a paragraph, list item or table row, list marker and blockquote
    /// marks removed, with the context the document gives it.
    Sentence {
        line: usize,
        end_line: usize,
        text: String,
        context: Context,
    },
    /// Lines that hold no instruction to read, and what they are.
    Markup {
        line: usize,
        end_line: usize,
        what: &'static str,
    },
}

/// What the document around a sentence says of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Context {
    /// Under a heading or label that negates its items (`## Never`, `NEVER:`, `❌`).
    pub negated: Option<String>,
    /// Why the sentence is not read at all: a section for another language, for tests
    /// only, an exception that follows it, or front matter whose globs leave out Python.
    pub blocked: Option<String>,
}

/// The pieces of `text`, in order. Every non-blank line outside a paragraph, item or table
/// row is in a markup piece.
pub fn pieces(text: &str) -> Vec<Piece> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = Lines::new(text);
    let mut walk = Walk {
        src: text,
        lines: &lines,
        out: Vec::new(),
        headings: Vec::new(),
        lists: Vec::new(),
        items: Vec::new(),
        run: None,
        last_run: None,
        scope: None,
        table: None,
    };
    let opts = Options::ENABLE_TABLES | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let mut in_heading: Option<(usize, String, usize)> = None;
    let mut skip_depth = 0usize;
    let mut skip_start = 0usize;
    let mut skip_what = "";
    for (event, range) in Parser::new_ext(text, opts).into_offset_iter() {
        if skip_depth > 0 {
            match &event {
                Event::Start(_) => skip_depth += 1,
                Event::End(_) => skip_depth -= 1,
                _ => {}
            }
            if skip_depth == 0 {
                walk.markup(skip_start, range.end, skip_what);
            }
            continue;
        }
        if let Some((_, heading, _)) = in_heading.as_mut() {
            match &event {
                Event::Text(t) | Event::Code(t) => heading.push_str(t),
                Event::End(TagEnd::Heading(_)) => {
                    let (level, heading, start) = in_heading.take().expect("in a heading");
                    walk.heading(level, heading, start, range.end);
                }
                _ => {}
            }
            continue;
        }
        if let Some(table) = walk.table.as_mut() {
            match &event {
                Event::Start(Tag::TableRow) | Event::Start(Tag::TableHead) => {
                    table.rows.push((range.start, Vec::new()))
                }
                Event::Start(Tag::TableCell) => {
                    if let Some(r) = table.rows.last_mut() {
                        r.1.push(String::new())
                    }
                }
                Event::Text(t) => table.push(t),
                Event::Code(t) => table.push(&format!("`{t}`")),
                Event::End(TagEnd::Table) => walk.end_table(),
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                walk.end_run();
                in_heading = Some((level as usize, String::new(), range.start));
            }
            Event::Start(Tag::CodeBlock(_)) => {
                walk.end_run();
                (skip_depth, skip_start, skip_what) = (1, range.start, "a code block");
            }
            Event::Start(Tag::HtmlBlock) => {
                walk.end_run();
                let what = if text[range.clone()].trim_start().starts_with("<!--") {
                    "an HTML comment"
                } else {
                    "HTML markup"
                };
                (skip_depth, skip_start, skip_what) = (1, range.start, what);
            }
            Event::Start(Tag::MetadataBlock(_)) => {
                walk.end_run();
                walk.scope = front_matter_scope(&text[range.clone()]);
                (skip_depth, skip_start, skip_what) = (1, range.start, "front matter");
            }
            Event::Start(Tag::Table(_)) => {
                walk.end_run();
                walk.table = Some(Table::default());
            }
            Event::Rule => {
                walk.end_run();
                walk.markup(range.start, range.end, "a horizontal rule");
            }
            Event::Start(Tag::List(_)) => {
                walk.end_run();
                let intro = walk
                    .last_run
                    .take()
                    .filter(|t| t.trim_end().trim_end_matches(['*', '_']).ends_with(':'));
                walk.lists.push(List {
                    intro,
                    items: Vec::new(),
                });
            }
            Event::End(TagEnd::List(_)) => {
                walk.end_run();
                walk.end_list();
            }
            Event::Start(Tag::Item) => {
                walk.end_run();
                walk.items.push(String::new());
                if let Some(l) = walk.lists.last_mut() {
                    l.items.push(Vec::new());
                }
            }
            Event::End(TagEnd::Item) => {
                walk.end_run();
                walk.items.pop();
            }
            Event::Start(Tag::Paragraph) | Event::Start(Tag::BlockQuote(_)) => walk.end_run(),
            Event::End(TagEnd::Paragraph) => walk.end_run(),
            Event::Text(_)
            | Event::Code(_)
            | Event::InlineHtml(_)
            | Event::InlineMath(_)
            | Event::DisplayMath(_)
            | Event::FootnoteReference(_)
            | Event::SoftBreak
            | Event::HardBreak
            | Event::TaskListMarker(_)
            | Event::Start(Tag::Emphasis)
            | Event::Start(Tag::Strong)
            | Event::Start(Tag::Strikethrough)
            | Event::Start(Tag::Link { .. })
            | Event::Start(Tag::Image { .. })
            | Event::End(TagEnd::Emphasis)
            | Event::End(TagEnd::Strong)
            | Event::End(TagEnd::Strikethrough)
            | Event::End(TagEnd::Link)
            | Event::End(TagEnd::Image) => walk.inline(range.start, range.end),
            Event::Html(_) => {
                walk.end_run();
                walk.markup(range.start, range.end, "HTML markup");
            }
            _ => {}
        }
    }
    walk.end_run();
    while !walk.lists.is_empty() {
        walk.end_list();
    }
    walk.out.sort_by_key(|p| match p {
        Piece::Sentence { line, .. } | Piece::Markup { line, .. } => *line,
    });
    if let Some(body) = json_body(&lines) {
        // A JSON object written as the file's rules: its `"key": "value"` members, each
        // under its enclosing keys as headings.
        walk.out.retain(|p| match p {
            Piece::Sentence { line, .. } | Piece::Markup { line, .. } => *line <= body,
        });
        json_pieces(&lines, body, walk.scope.clone(), &mut walk.out);
    }
    walk.out
}

/// The 0-based first line of a body (after front matter) that is a JSON object.
fn json_body(lines: &Lines) -> Option<usize> {
    let l = &lines.lines;
    let mut start = 0;
    if l.first().is_some_and(|f| f.trim() == "---") {
        start = 1 + (1..l.len()).find(|&i| l[i].trim() == "---")?;
    }
    let body = l.get(start..)?.join("\n");
    if !body.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str::<serde_json::Value>(&body).ok()?;
    Some(start)
}

fn json_pieces(lines: &Lines, body: usize, scope: Option<String>, out: &mut Vec<Piece>) {
    let member = |t: &str| {
        let t = t.trim().trim_end_matches(',');
        t.starts_with('"') && t.ends_with('"') && t.contains("\":")
    };
    let mut keys: Vec<String> = Vec::new();
    for (i, l) in lines.lines.iter().enumerate().skip(body) {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if member(t) {
            let mut context = Context {
                blocked: scope.clone(),
                ..Context::default()
            };
            for k in &keys {
                if context.blocked.is_none() {
                    context.blocked =
                        blocking(k).map(|why| format!("under the key \"{k}\": {why}"));
                }
                if context.negated.is_none() && negating(k) {
                    context.negated = Some(format!("the key \"{k}\""));
                }
            }
            out.push(Piece::Sentence {
                line: i + 1,
                end_line: i + 1,
                text: t.to_string(),
                context,
            });
            continue;
        }
        if let Some(key) = t.strip_suffix('{').or(t.strip_suffix('[')) {
            keys.push(
                key.trim()
                    .trim_end_matches(':')
                    .trim()
                    .trim_matches('"')
                    .replace('_', " "),
            );
        }
        if t.starts_with('}') || t.starts_with(']') {
            keys.pop();
        }
        out.push(Piece::Markup {
            line: i + 1,
            end_line: i + 1,
            what: "JSON markup",
        });
    }
}

/// Line starts of a text, for byte offset -> 0-based line.
struct Lines<'a> {
    lines: Vec<&'a str>,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines {
            lines: text.lines().collect(),
            starts,
        }
    }

    fn of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|s| *s <= offset)
            .saturating_sub(1)
    }
}

struct List {
    /// The paragraph or item text just before the list, when it ends with `:` ("NEVER:").
    intro: Option<String>,
    /// Each item's pieces (indices into `out`), to block an item an exception follows.
    items: Vec<Vec<usize>>,
}

#[derive(Default)]
struct Table {
    /// Each row's start offset and cells.
    rows: Vec<(usize, Vec<String>)>,
}

impl Table {
    fn push(&mut self, t: &str) {
        if let Some(cell) = self.rows.last_mut().and_then(|r| r.1.last_mut()) {
            cell.push_str(t);
        }
    }
}

struct Walk<'a> {
    src: &'a str,
    lines: &'a Lines<'a>,
    out: Vec<Piece>,
    /// (level, text) of the headings in force.
    headings: Vec<(usize, String)>,
    lists: Vec<List>,
    /// The own text of each enclosing list item, innermost last.
    items: Vec<String>,
    /// The inline text run being read: its byte range.
    run: Option<(usize, usize)>,
    /// The text of the last run read, for the intro of a list that follows it.
    last_run: Option<String>,
    /// Why the front matter's globs leave Python out, if they do.
    scope: Option<String>,
    table: Option<Table>,
}

impl Walk<'_> {
    fn markup(&mut self, start: usize, end: usize, what: &'static str) {
        let line = self.lines.of(start);
        let end_line = self.lines.of(end.saturating_sub(1).max(start));
        // A block's range may end on the line after it; blank lines are no part of it.
        let mut end_line = end_line.max(line);
        while end_line > line
            && self
                .lines
                .lines
                .get(end_line)
                .is_none_or(|l| l.trim().is_empty())
        {
            end_line -= 1;
        }
        self.out.push(Piece::Markup {
            line: line + 1,
            end_line: end_line + 1,
            what,
        });
    }

    fn heading(&mut self, level: usize, text: String, start: usize, end: usize) {
        self.markup(start, end, "a heading");
        self.headings.retain(|(l, _)| *l < level);
        self.headings.push((level, text));
        self.last_run = None;
    }

    fn inline(&mut self, start: usize, end: usize) {
        match self.run.as_mut() {
            Some(r) => r.1 = r.1.max(end),
            None => self.run = Some((start, end)),
        }
    }

    fn end_run(&mut self) {
        let Some((start, end)) = self.run.take() else {
            return;
        };
        let first = self.lines.of(start);
        let last = self.lines.of(end.saturating_sub(1).max(start));
        let own: String = self.src[start..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let context = self.context(&own);
        let from = self.out.len();
        let lines = &self.lines.lines[first..=last.min(self.lines.lines.len().saturating_sub(1))];
        if json_like(lines) {
            // A JSON object's lines, each its own `"key": "value"`.
            for (k, l) in lines.iter().enumerate() {
                sentences(&[l], first + k, &context, &mut self.out);
            }
        } else {
            sentences(lines, first, &context, &mut self.out);
        }
        if let (Some(item), Some(list)) = (self.items.last_mut(), self.lists.last_mut()) {
            if item.is_empty() {
                *item = own.clone();
            }
            if let Some(pieces) = list.items.last_mut() {
                pieces.extend(from..self.out.len());
            }
        }
        self.last_run = Some(own);
    }

    /// The context of a run of text: the headings, list intros and enclosing items' own
    /// text above it, and the front matter's scope.
    fn context(&self, own: &str) -> Context {
        let mut c = Context {
            blocked: self.scope.clone(),
            ..Context::default()
        };
        let labels = (self.headings.iter().map(|(_, h)| ("heading", h.as_str())))
            .chain((self.lists.iter().filter_map(|l| l.intro.as_deref())).map(|t| ("label", t)))
            .chain(
                self.items
                    .iter()
                    .filter(|t| !t.is_empty())
                    .map(|t| ("item", t.as_str())),
            );
        for (what, label) in labels {
            if c.blocked.is_none() {
                c.blocked = blocking(label)
                    .map(|why| format!("under the {what} \"{}\": {why}", short(label)));
            }
            if c.negated.is_none() && negating(label) {
                c.negated = Some(format!("the {what} \"{}\"", short(label)));
            }
        }
        // The run's own label ("**Tests**: ...", "❌ ...").
        let lead = own_label(own);
        if c.blocked.is_none() {
            if let Some(why) = lead.and_then(blocking) {
                c.blocked = Some(format!(
                    "its label \"{}\": {why}",
                    short(lead.unwrap_or(""))
                ));
            }
        }
        if c.negated.is_none() {
            if own.trim_start().starts_with(['❌', '🚫', '⛔']) {
                c.negated = Some("its mark ❌".into());
            } else if lead.is_some_and(negating) {
                c.negated = Some(format!("its label \"{}\"", short(lead.unwrap_or(""))));
            }
        }
        c
    }

    fn end_list(&mut self) {
        let Some(list) = self.lists.pop() else { return };
        // An item that follows another and begins with "Exception": the rule before it
        // does not hold for every object.
        for w in list.items.windows(2) {
            let Some(&first_of_next) = w[1].first() else {
                continue;
            };
            let Piece::Sentence { text, line, .. } = &self.out[first_of_next] else {
                continue;
            };
            // "**EXCEPTION**: ...", "Exceptions: ...", not "Exceptions should be raised".
            let t = text.replace(['*', '_'], "").trim_start().to_lowercase();
            if [
                "exception:",
                "exceptions:",
                "except:",
                "exception -",
                "exception —",
            ]
            .iter()
            .any(|p| t.starts_with(p))
            {
                let why = format!("an exception follows at line {line}");
                for &i in &w[0] {
                    if let Piece::Sentence { context, .. } = &mut self.out[i] {
                        context.blocked.get_or_insert_with(|| why.clone());
                    }
                }
            }
        }
    }

    fn end_table(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        let mut rows = table.rows.into_iter();
        let Some((head_at, head)) = rows.next() else {
            return;
        };
        self.markup(head_at, head_at, "a table header");
        let head: Vec<String> = head.iter().map(|h| h.trim().to_lowercase()).collect();
        let col = |names: &[&str]| {
            head.iter()
                .position(|h| names.iter().any(|n| h.contains(n)))
        };
        // A naming table: an element column and a convention column.
        let element = col(&[
            "element",
            "kind",
            "type",
            "identifier",
            "object",
            "item",
            "what",
        ]);
        let convention = col(&["convention", "case", "style", "format", "naming"]);
        let context = self.context("");
        for (at, cells) in rows {
            if cells.iter().all(|c| {
                c.chars()
                    .all(|ch| ch == '-' || ch == ':' || ch.is_whitespace())
            }) {
                continue;
            }
            let line = self.lines.of(at);
            match (element, convention) {
                (Some(e), Some(c)) if e != c && cells.len() > e.max(c) => {
                    self.out.push(Piece::Sentence {
                        line: line + 1,
                        end_line: line + 1,
                        text: format!("{}: {}", cells[e].trim(), cells[c].trim()),
                        context: context.clone(),
                    })
                }
                _ => self.out.push(Piece::Markup {
                    line: line + 1,
                    end_line: line + 1,
                    what: "a table row (only naming tables are read)",
                }),
            }
        }
    }
}

fn short(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}

/// `**Label**: rest` or `Label: rest`: the label, when short.
fn own_label(own: &str) -> Option<&str> {
    let (label, _) = own.split_once(':')?;
    let l = label.trim().trim_matches(['*', '_', ' ']);
    (!l.is_empty() && l.split_whitespace().count() <= 4 && !l.contains('`')).then_some(l)
}

/// The words of a label, lower-cased, without markup.
fn words(label: &str) -> Vec<String> {
    label
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '#' || c == '+'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect()
}

/// A label that negates what is under it: "Never", "Don't", "Do NOT", "Avoid", "Things to
/// avoid", "Anti-patterns (NEVER DO)", "What not to do", `❌`, `🚫`. A negation inside a
/// longer label ("Follow these rules and don't skip them:") does not negate its items.
pub(crate) fn negating(label: &str) -> bool {
    let t = label.trim();
    if t.contains(['❌', '🚫', '⛔']) {
        return true;
    }
    let w = words(t);
    let negation = |x: &str| {
        matches!(
            x,
            "never"
                | "don't"
                | "dont"
                | "don'ts"
                | "donts"
                | "avoid"
                | "forbidden"
                | "prohibited"
                | "禁止"
                | "금지"
        )
    };
    let pair = |a: &str, b: &str| w.windows(2).any(|p| p[0] == a && p[1] == b);
    let starts = w.first().is_some_and(|x| negation(x))
        || (w
            .first()
            .is_some_and(|x| x == "do" || x == "must" || x == "should")
            && w.get(1).is_some_and(|x| x == "not" || x == "never"))
        || w.first().is_some_and(|x| x == "not" || x == "no");
    let phrase = w
        .iter()
        .any(|x| x == "antipatterns" || x == "anti-patterns" || x == "don'ts")
        || (pair("anti", "patterns") || pair("anti", "pattern"))
        || pair("what", "not")
        || pair("never", "do")
        || pair("not", "allowed");
    let short = w.len() <= 3 && w.iter().any(|x| negation(x));
    // "Do's and Don'ts" holds both.
    let mixed = w.iter().any(|x| matches!(x.as_str(), "do's" | "dos"))
        && w.iter()
            .any(|x| matches!(x.as_str(), "don'ts" | "donts" | "don't" | "dont"));
    (starts || phrase || short) && !mixed
}

/// Why what is under a label is not read: another language's section, a tests-only one.
fn blocking(label: &str) -> Option<String> {
    let w = words(label);
    let has = |x: &str| w.iter().any(|y| y == x);
    if has("python") || has("py") {
        return None;
    }
    const OTHER: [&str; 30] = [
        "php",
        "javascript",
        "js",
        "typescript",
        "ts",
        "tsx",
        "jsx",
        "node",
        "nodejs",
        "react",
        "vue",
        "nuxt",
        "angular",
        "svelte",
        "next.js",
        "nextjs",
        "golang",
        "rust",
        "java",
        "kotlin",
        "swift",
        "c#",
        "csharp",
        "c++",
        "cpp",
        "ruby",
        "css",
        "html",
        "frontend",
        "tailwind",
    ];
    if let Some(l) = OTHER.iter().find(|l| has(l)) {
        return Some(format!("a section for {l}, not Python"));
    }
    // Documentation files, not docstrings: "## Docs", "### README", "Markdown".
    const DOCS: [&str; 5] = ["docs", "readme", "markdown", "mkdocs", "changelog"];
    if let Some(d) = DOCS.iter().find(|d| has(d)) {
        return Some(format!("a section for documentation files ({d}), not code"));
    }
    const TESTS: [&str; 6] = ["test", "tests", "testing", "pytest", "unittest", "fixtures"];
    if TESTS.iter().any(|t| has(t)) && !(has("style") || has("naming") || has("code")) {
        return Some("a section for tests only (rules here hold for tests, not all code)".into());
    }
    None
}

/// Why a `.mdc` front matter's `globs` leave Python files out, if they do. Absent or empty
/// globs, or `alwaysApply`, apply to every file.
fn front_matter_scope(block: &str) -> Option<String> {
    let mut globs = String::new();
    for line in block.lines() {
        if let Some(v) = line.trim().strip_prefix("globs:") {
            globs = v.trim().to_string();
        }
    }
    let list: Vec<String> = globs
        .trim_matches(['[', ']'])
        .split(',')
        .map(|g| g.trim().trim_matches(['"', '\'']).to_string())
        .filter(|g| !g.is_empty())
        .collect();
    if list.is_empty() {
        return None;
    }
    // A glob selects Python files when it names them (`*.py`, `python/**/*`) or every file.
    let python = |g: &str| {
        let l = g.to_lowercase();
        l.ends_with(".py")
            || l.contains("python")
            || matches!(l.as_str(), "*" | "**" | "**/*" | "*.*" | "**/*.*")
    };
    let py: Vec<&String> = list.iter().filter(|g| python(g)).collect();
    if py.is_empty() {
        return Some(format!(
            "the front matter's globs ({globs}) select no Python file"
        ));
    }
    if py.iter().all(|g| g.to_lowercase().contains("test")) {
        return Some(format!(
            "the front matter's globs ({globs}) select test files only"
        ));
    }
    None
}

/// Lines of a JSON object (`"key": "value",` one a line).
fn json_like(lines: &[&str]) -> bool {
    lines.len() > 1
        && lines.iter().all(|l| {
            let t = l.trim();
            t.starts_with('"') || t.starts_with('{') || t.starts_with('}') || t.starts_with(']')
        })
}

/// `> > text` -> `text`.
fn strip_quote(t: &str) -> &str {
    let mut t = t;
    while let Some(rest) = t.strip_prefix('>') {
        t = rest.trim_start();
    }
    t
}

/// The length of a list marker at the start of `t` (`-`, `*`, `+`, `1.`, `1)`, with a
/// task box `[ ]` / `[x]`), spaces after it included.
fn item_marker(t: &str) -> Option<usize> {
    let b = t.as_bytes();
    let mut n = if matches!(b.first(), Some(b'-' | b'*' | b'+')) {
        1
    } else {
        let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 || digits > 9 || !matches!(b.get(digits), Some(b'.' | b')')) {
            return None;
        }
        digits + 1
    };
    if !matches!(b.get(n), Some(b' ' | b'\t')) {
        return None;
    }
    while matches!(b.get(n), Some(b' ' | b'\t')) {
        n += 1;
    }
    for task in ["[ ] ", "[x] ", "[X] "] {
        if t[n..].starts_with(task) {
            n += task.len();
        }
    }
    Some(n)
}

/// The sentences of one paragraph or list item's text (`lines`, the first at 0-based
/// `first`).
fn sentences(lines: &[&str], first: usize, context: &Context, out: &mut Vec<Piece>) {
    // The block's text, its lines joined by spaces, and where each line starts in it.
    let mut text = String::new();
    let mut starts = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        let mut t = strip_quote(l.trim());
        while k == 0 && item_marker(t).is_some() {
            t = &t[item_marker(t).unwrap_or(0)..];
        }
        if !text.is_empty() {
            text.push(' ');
        }
        starts.push(text.len());
        text.push_str(t.trim());
    }
    let line_at = |at: usize| first + starts.partition_point(|s| *s <= at);
    let mut begin = 0;
    let mut in_code = false;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '`' {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // A spaced dash between an instruction and its gloss: " - ", " — ", " – ".
        if matches!(c, '-' | '—' | '–')
            && at > 0
            && text[..at].ends_with(' ')
            && chars.peek().is_some_and(|(_, n)| *n == ' ')
        {
            push_sentence(&text, begin, at, &line_at, context, out);
            begin = at + c.len_utf8();
            continue;
        }
        if !matches!(c, '.' | '!' | '?' | ';') {
            continue;
        }
        let next_is_space = chars.peek().is_some_and(|(_, n)| n.is_whitespace());
        if !next_is_space || (c == '.' && abbreviation_before(&text[..at])) {
            continue;
        }
        // A `;` joins two sentences: it belongs to neither.
        let end = if c == ';' { at } else { at + 1 };
        push_sentence(&text, begin, end, &line_at, context, out);
        begin = at + 1;
    }
    push_sentence(&text, begin, text.len(), &line_at, context, out);
}

fn push_sentence(
    text: &str,
    from: usize,
    to: usize,
    line_at: &dyn Fn(usize) -> usize,
    context: &Context,
    out: &mut Vec<Piece>,
) {
    let s = &text[from..to];
    let lead = s.len() - s.trim_start().len();
    let t = s.trim();
    if t.is_empty() {
        return;
    }
    let start = from + lead;
    out.push(Piece::Sentence {
        line: line_at(start),
        end_line: line_at(start + t.len() - 1),
        text: t.to_string(),
        context: context.clone(),
    });
}

/// Whether the word before a `.` is an abbreviation that does not end a sentence.
fn abbreviation_before(before: &str) -> bool {
    let word = before
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    matches!(
        word.as_str(),
        "e.g" | "i.e" | "eg" | "ie" | "etc" | "vs" | "cf" | "approx" | "no" | "resp"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentence(line: usize, end_line: usize, text: &str) -> Piece {
        Piece::Sentence {
            line,
            end_line,
            text: text.into(),
            context: Context::default(),
        }
    }

    fn markup(line: usize, end_line: usize, what: &'static str) -> Piece {
        Piece::Markup {
            line,
            end_line,
            what,
        }
    }

    fn texts(md: &str) -> Vec<(String, Context)> {
        pieces(md)
            .into_iter()
            .filter_map(|p| match p {
                Piece::Sentence { text, context, .. } => Some((text, context)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn markdown_blocks_and_sentences_with_their_lines() {
        let md = "# Style\n\n- Use snake_case for functions. Never import `pickle`.\n- Start method\n  names with `x_` (e.g. `x_run`).\n\n```python\ndef f(): pass\n```\n> Quoted rule; another.\n\n<!-- note\nmore -->\n\n1. [x] Done item\n";
        assert_eq!(
            pieces(md),
            vec![
                markup(1, 1, "a heading"),
                sentence(3, 3, "Use snake_case for functions."),
                sentence(3, 3, "Never import `pickle`."),
                sentence(4, 5, "Start method names with `x_` (e.g. `x_run`)."),
                markup(7, 9, "a code block"),
                sentence(10, 10, "Quoted rule"),
                sentence(10, 10, "another."),
                markup(12, 13, "an HTML comment"),
                sentence(15, 15, "Done item"),
            ]
        );
    }

    #[test]
    fn no_cut_inside_code_or_after_abbreviations() {
        let got: Vec<String> = texts("Use `a. b` here, e.g. `x`. Then this! And? that - a gloss")
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert_eq!(
            got,
            [
                "Use `a. b` here, e.g. `x`.",
                "Then this!",
                "And?",
                "that",
                "a gloss"
            ]
        );
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        assert_eq!(
            pieces("text\n```\ncode\n"),
            vec![sentence(1, 1, "text"), markup(2, 3, "a code block")]
        );
    }

    #[test]
    fn headings_and_labels_negate_or_block_their_items() {
        let md = "## Never\n\n- Import `pickle`\n\n## TypeScript\n\n- Use camelCase for functions\n\nNEVER:\n- Use `eval`\n\n## Tests\n\n- Every function has a docstring\n\n## Style\n\n- ❌ Skip hints\n- Fine\n\n## Docs\n\n- Every function is listed\n\n## Documentation\n\n- Every function has a docstring\n";
        let got = texts(md);
        assert_eq!(got[0].0, "Import `pickle`");
        assert!(got[0].1.negated.is_some() && got[0].1.blocked.is_none());
        assert!(
            got[1].1.blocked.as_deref().unwrap().contains("typescript"),
            "{got:?}"
        );
        assert_eq!(got[2].0, "NEVER:");
        assert!(got[3].1.negated.is_some(), "{got:?}");
        assert!(got[4].1.blocked.as_deref().unwrap().contains("tests only"));
        assert!(
            got[5].1.negated.is_some() && got[6].1 == Context::default(),
            "{got:?}"
        );
        assert!(got[7]
            .1
            .blocked
            .as_deref()
            .unwrap()
            .contains("documentation files"));
        assert_eq!(got[8].1, Context::default(), "docstrings are code");
    }

    #[test]
    fn front_matter_is_markup_and_its_globs_scope_the_file() {
        let md = "---\ndescription: x\nglobs: frontend/**\nalwaysApply: false\n---\n- Use snake_case for functions\n";
        let p = pieces(md);
        assert_eq!(p[0], markup(1, 5, "front matter"));
        let Piece::Sentence { context, .. } = &p[1] else {
            panic!("{p:?}")
        };
        assert!(context
            .blocked
            .as_deref()
            .unwrap()
            .contains("select no Python file"));
        for (globs, blocked) in [
            ("*.py", false),
            ("[\"**/*.py\"]", false),
            ("", false),
            ("**/*", false),
            ("test/**/test_*.py", true),
            ("*.ts,*.tsx", true),
            ("src/**", true),
            ("[\"bengal/**/*.py\", \"tests/**/*.py\"]", false),
        ] {
            let md = format!("---\nglobs: {globs}\n---\nUse snake_case for functions.\n");
            let got = texts(&md);
            assert_eq!(got[0].1.blocked.is_some(), blocked, "{globs}: {got:?}");
        }
    }

    #[test]
    fn an_exception_item_blocks_the_item_before_it() {
        let got = texts(
            "- Always annotate all functions\n- **EXCEPTION**: test functions need not\n- Other\n- Exceptions carry a message\n",
        );
        assert!(got[0].1.blocked.as_deref().unwrap().contains("exception"));
        assert!(got[2].1.blocked.is_none(), "{got:?}");
    }

    #[test]
    fn naming_tables_are_read_row_by_row() {
        let md = "| Element | Convention | Example |\n|---|---|---|\n| Variable | `snake_case` | `x` |\n| Class | `PascalCase` | `A` |\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
        let got: Vec<String> = texts(md).into_iter().map(|t| t.0).collect();
        assert_eq!(got, ["Variable: `snake_case`", "Class: `PascalCase`"]);
    }
}
