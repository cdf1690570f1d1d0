//! The layering ARCHITECTURE.md promises, checked on the workspace's manifests and on the
//! parsed source (syn) of every crate.
//!
//! Between crates: a crate depends only on crates of a lower rank (`pivot-base` <
//! `pivot-python` < `pivot-exec` / `pivot-llm` / `pivot-history` < `pivot-bench` <
//! `pivot-report` / `pivot-workspace` < `pivot-lsp`, the faces), and the test-only crates
//! (`pivot-test-support`, `pivot-bcb-parity`) only as a dev-dependency. Cargo already refuses a cycle; the ranks also keep a crate from reaching
//! sideways or up.
//!
//! Inside the crates that hold several layers (`pivot-python`: `fasthash` < `python` <
//! `pivots`; `pivot-lsp`: `lsp`, `mcp`, `cli`), a module may use its own layer and the layers below
//! it, never one above. Every path counts: `use` trees with nested groups over several
//! lines, paths in code and types, `super::super::…` and `self::…` resolved from the file's
//! own module (and inline `mod`s). No crate has modules that import each other. Crates that
//! belong to one layer are checked too: clap only in `cli` (and `main.rs`), the LSP types
//! only in `lsp` and `cli`, rmcp only in `mcp`, a tree-sitter `Parser` built only in `python`.
//!
//! Inside `cli`: `cli/mod.rs` is the dispatcher, every other child a command (`cli/NAME.rs`
//! or `cli/NAME/`) or `cli/shared/`. A command uses its own files and `shared`, never the
//! dispatcher nor another command's internals; `shared` uses no command. The one exception
//! is a subcommand that is another command's ([`ALIASES`]).

use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Rank of a top-level module of a crate that holds several layers.
fn rank(module: &str) -> Option<u8> {
    Some(match module {
        "fasthash" => 0,
        "python" => 1,
        "pivots" => 2,
        "bench" | "exec" | "llm" | "history" => 3,
        "report" => 4,
        "lsp" | "cli" | "mcp" => 5,
        _ => return None,
    })
}

/// The workspace's crates: folder, package name, rank, and the layer its modules are in
/// (`None`: the crate's top-level modules are layers of their own, ranked by [`rank`]).
const CRATES: &[(&str, &str, u8, Option<&str>)] = &[
    ("crates/base", "pivot-base", 0, Some("base")),
    ("crates/python", "pivot-python", 1, None),
    ("crates/exec", "pivot-exec", 2, Some("exec")),
    ("crates/llm", "pivot-llm", 2, Some("llm")),
    ("crates/history", "pivot-history", 2, Some("history")),
    ("crates/bench", "pivot-bench", 3, Some("bench")),
    ("crates/report", "pivot-report", 4, Some("report")),
    ("crates/workspace", "pivot-workspace", 4, Some("workspace")),
    ("server", "pivot-lsp", 5, None),
    (
        "crates/test-support",
        "pivot-test-support",
        6,
        Some("test_support"),
    ),
    (
        "crates/bcb-parity",
        "pivot-bcb-parity",
        6,
        Some("bcb_parity"),
    ),
];

/// Crates only tests may depend on: test code shipped in no product crate.
const TEST_ONLY: [&str; 2] = ["pivot-test-support", "pivot-bcb-parity"];

/// External crates a layer may name, by the lowest rank that may (or the one layer).
fn crate_allowed(krate: &str, layer: &str) -> bool {
    match krate {
        "clap" | "clap_complete" | "clap_mangen" => layer == "cli",
        "tower_lsp_server" | "ls_types" | "lsp_types" => matches!(layer, "lsp" | "cli"),
        "rmcp" => layer == "mcp",
        _ => true,
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

struct Uses {
    /// The module the code is in, from the crate root (`["bench", "convcode", "merge"]`).
    module: Vec<String>,
    /// (line, the crate-rooted path it names, or `extern:<crate>`).
    found: Vec<(usize, Vec<String>)>,
    /// Leave out `#[cfg(test)]` modules (the cycle check: a test may use the test helpers of
    /// a module that uses the one under test).
    skip_tests: bool,
}

impl Uses {
    /// A path as written, resolved from the current module: `crate::a::b`, `super::x`,
    /// `self::y`. Paths that start elsewhere name an external crate or a local item.
    fn resolve(&self, segs: &[String]) -> Option<Vec<String>> {
        let first = segs.first()?;
        match first.as_str() {
            "crate" => Some(segs[1..].to_vec()),
            "self" => Some(self.module.iter().chain(&segs[1..]).cloned().collect()),
            "super" => {
                let ups = segs.iter().take_while(|s| *s == "super").count();
                let base = self.module.len().checked_sub(ups)?;
                Some(
                    self.module[..base]
                        .iter()
                        .chain(&segs[ups..])
                        .cloned()
                        .collect(),
                )
            }
            _ => None,
        }
    }

    fn record(&mut self, line: usize, segs: Vec<String>) {
        match self.resolve(&segs) {
            Some(p) => self.found.push((line, p)),
            None => {
                if let Some(first) = segs.first() {
                    self.found.push((line, vec![format!("extern:{first}")]));
                    if first == "tree_sitter" && segs.iter().any(|s| s == "Parser") {
                        self.found
                            .push((line, vec!["extern:tree_sitter::Parser".into()]));
                    }
                }
            }
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                if n.ident != "self" {
                    full.push(n.ident.to_string());
                }
                self.record(n.ident.span().start().line, full);
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                self.record(r.ident.span().start().line, full);
            }
            syn::UseTree::Glob(g) => {
                let line = g.star_token.spans[0].start().line;
                self.record(line, prefix.clone());
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Uses {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut prefix = Vec::new();
        self.use_tree(&mut prefix, &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() > 1 || p.leading_colon.is_some() {
            let line = p
                .segments
                .first()
                .map_or(0, |s| s.ident.span().start().line);
            self.record(line, segs);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        // `#[derive(clap::Args)]`: derive lists are paths, though syn keeps them as tokens.
        if a.path().is_ident("derive") {
            if let Ok(list) = a.parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            ) {
                for p in &list {
                    self.visit_path(p);
                }
            }
        }
        syn::visit::visit_attribute(self, a);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if self.skip_tests && m.attrs.iter().any(is_cfg_test) {
            return;
        }
        // An inline module: `super` inside it is the file's module.
        self.module.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.module.pop();
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Macro bodies are not parsed as code; paths in them are read from their tokens.
        let text = m.tokens.to_string();
        let line = m
            .path
            .segments
            .first()
            .map_or(0, |s| s.ident.span().start().line);
        for part in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == ' '))
        {
            let compact: String = part.chars().filter(|c| *c != ' ').collect();
            // `crate::`, `super::` and `self::` paths: a relative one in a macro closes a
            // cycle as surely as a `use` does.
            if ["crate::", "super::", "self::"]
                .iter()
                .any(|p| compact.starts_with(p))
            {
                let segs: Vec<String> = compact.split("::").map(str::to_string).collect();
                self.record(line, segs);
            }
        }
        syn::visit::visit_macro(self, m);
    }
}

/// `#[cfg(test)]`.
fn is_cfg_test(a: &syn::Attribute) -> bool {
    a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
}

/// The module path of a file under `src` (`bench/convcode/mod.rs` -> `bench::convcode`).
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if !matches!(stem, "mod" | "lib" | "main") {
            parts.push(stem.to_string());
        }
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir)
        .expect("source folder readable")
        .flatten()
    {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every use of a higher layer or of a crate the layer may not name, under `src`, as
/// "file:line: layer uses what".
fn violations(src: &Path, fixed_layer: Option<&str>) -> Vec<String> {
    let mut found = Vec::new();
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src");
        let module = module_of(rel);
        let (layer, own) = match fixed_layer {
            Some(l) => (l.to_string(), None),
            None => {
                let Some(layer) = module.first().cloned() else {
                    continue; // lib.rs, main.rs: the crate root wires the faces
                };
                let Some(own) = rank(&layer) else { continue };
                (layer, Some(own))
            }
        };
        let text = std::fs::read_to_string(&file).expect("source readable");
        let parsed = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("{}: does not parse: {e}", rel.display()));
        let mut uses = Uses {
            module,
            found: Vec::new(),
            skip_tests: false,
        };
        uses.visit_file(&parsed);
        let mut seen = std::collections::BTreeSet::new();
        for (line, path) in uses.found {
            let Some(top) = path.first() else { continue };
            let what = if let Some(k) = top.strip_prefix("extern:") {
                let ok = if k == "tree_sitter::Parser" {
                    layer == "python"
                } else {
                    crate_allowed(k, &layer)
                };
                if ok {
                    continue;
                }
                k.to_string()
            } else if own.is_some_and(|own| rank(top).is_some_and(|r| r > own)) {
                top.clone()
            } else {
                continue;
            };
            let line = format!("{}:{line}: {layer} uses {what}", rel.display());
            if seen.insert(line.clone()) {
                found.push(line);
            }
        }
    }
    found
}

/// Top-level modules under `src` that have no rank (a new layer nobody placed).
fn unranked(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out: Vec<String> = files
        .iter()
        .filter_map(|f| module_of(f.strip_prefix(src).ok()?).first().cloned())
        .filter(|m| rank(m).is_none())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Import cycles between the modules (files) under `src`, each as its modules in order. A
/// module's use of its own ancestors or descendants (a `mod.rs` re-exporting its children,
/// a child using its parent's items) is how Rust modules are built, not a cycle; nor is a
/// `#[cfg(test)]` module's use of test helpers.
fn cycles(src: &Path) -> Vec<Vec<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut modules: Vec<Vec<String>> = Vec::new();
    let mut parsed = Vec::new();
    for file in &files {
        let module = module_of(file.strip_prefix(src).expect("under src"));
        let text = std::fs::read_to_string(file).expect("source readable");
        let tree = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        modules.push(module.clone());
        parsed.push((module, tree));
    }
    let index: std::collections::HashMap<&[String], usize> = modules
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_slice(), i))
        .collect();
    let related = |a: &[String], b: &[String]| a.starts_with(b) || b.starts_with(a);
    let mut edges: Vec<std::collections::BTreeSet<usize>> = vec![Default::default(); modules.len()];
    for (i, (module, tree)) in parsed.iter().enumerate() {
        let mut uses = Uses {
            module: module.clone(),
            found: Vec::new(),
            skip_tests: true,
        };
        uses.visit_file(tree);
        for (_, path) in uses.found {
            // The longest prefix of the path that is a module file.
            let target = (1..=path.len())
                .rev()
                .find_map(|n| index.get(&path[..n]).copied());
            if let Some(t) = target {
                if !related(&modules[t], module) {
                    edges[i].insert(t);
                }
            }
        }
    }
    // Strongly connected components (Tarjan), those of more than one module.
    struct Tarjan<'a> {
        edges: &'a [std::collections::BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in self.edges[v].iter() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    self.found.push(scc);
                }
            }
        }
    }
    let n = modules.len();
    let mut t = Tarjan {
        edges: &edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    let mut out: Vec<Vec<String>> = t
        .found
        .into_iter()
        .map(|scc| scc.into_iter().map(|i| modules[i].join("::")).collect())
        .collect();
    out.sort();
    out
}

#[test]
fn every_top_level_module_has_a_rank_and_no_modules_import_each_other() {
    for (dir, _, _, fixed) in CRATES {
        let src = workspace().join(dir).join("src");
        if fixed.is_none() {
            let missing = unranked(&src);
            assert!(
                missing.is_empty(),
                "top-level modules of {dir}/src without a rank in layering.rs's `rank`: {missing:?}"
            );
        }
        let found = cycles(&src);
        assert!(
            found.is_empty(),
            "modules of {dir}/src that import each other (directly or through others): {found:?}"
        );
    }
}

/// The workspace crates a manifest depends on, as (section, package name).
fn pivot_dependencies(manifest: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(manifest).expect("manifest readable");
    let doc: toml::Table = toml::from_str(&text).expect("manifest parses");
    let mut out = Vec::new();
    for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if let Some(deps) = doc.get(section).and_then(|d| d.as_table()) {
            for name in deps.keys().filter(|k| k.starts_with("pivot-")) {
                out.push((section.to_string(), name.clone()));
            }
        }
    }
    out
}

#[test]
fn every_crate_is_ranked_and_depends_only_on_lower_ones() {
    let root = workspace();
    let members: toml::Table =
        toml::from_str(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap()).unwrap();
    let members: Vec<&str> = members["workspace"]["members"]
        .as_array()
        .expect("workspace members")
        .iter()
        .filter_map(|m| m.as_str())
        .collect();
    for m in &members {
        assert!(
            CRATES.iter().any(|(dir, ..)| dir == m),
            "workspace member {m} has no rank in layering.rs's CRATES"
        );
    }
    let rank_of = |name: &str| CRATES.iter().find(|c| c.1 == name).map(|c| c.2);
    let mut bad = Vec::new();
    for (dir, name, own, _) in CRATES {
        for (section, dep) in pivot_dependencies(&root.join(dir).join("Cargo.toml")) {
            if TEST_ONLY.contains(&dep.as_str()) && !TEST_ONLY.contains(name) {
                if section != "dev-dependencies" {
                    bad.push(format!("{name}: {dep} in [{section}]"));
                }
                continue;
            }
            match rank_of(&dep) {
                Some(r) if r < *own => {}
                Some(_) => bad.push(format!("{name} depends on {dep}, not below it")),
                None => bad.push(format!("{name} depends on {dep}, which has no rank")),
            }
        }
    }
    assert!(
        bad.is_empty(),
        "crates out of their layers:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_cycle_check_finds_a_cycle_through_three_modules_and_not_a_parent() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("bench/mod.rs", "pub use a::X;\n");
    write("bench/a.rs", "use super::b::Y;\nuse super::Z;\n");
    write("bench/b.rs", "fn f() { crate::bench::c::g(); }\n");
    write("bench/c.rs", "use super::a::X;\n");
    write("bench/d.rs", "use super::a::X;\n");
    // A test module's use does not close a cycle.
    write("bench/e.rs", "use super::f::W;\n");
    write(
        "bench/f.rs",
        "#[cfg(test)]\nmod tests { use super::super::e::V; }\nuse super::d::U;\n",
    );
    write("novel/e.rs", "\n");
    // A cycle closed only by a `super::` path inside a macro.
    write("bench/g.rs", "use super::h::Y;\n");
    write(
        "bench/h.rs",
        "fn f() { println!(\"{}\", super::g::name()); }\n",
    );
    assert_eq!(
        cycles(dir.path()),
        vec![
            vec![
                "bench::a".to_string(),
                "bench::b".to_string(),
                "bench::c".to_string()
            ],
            vec!["bench::g".to_string(), "bench::h".to_string()]
        ]
    );
    assert_eq!(unranked(dir.path()), vec!["novel".to_string()]);
}

/// Items of one command that another names, because a subcommand of the one is the other's:
/// each `bench` variant is the `Args` and function of the command it times, and `convcode
/// score` is `score convcode`. (the command using it, the item's path under `cli`)
const ALIASES: &[(&str, &str)] = &[
    ("bench", "score::BenchMemorycodeArgs"),
    ("bench", "score::bench_memorycode"),
    ("bench", "exec::BenchExecArgs"),
    ("bench", "exec::bench_exec"),
    ("bench", "convcode::BenchConvcodeArgs"),
    ("bench", "convcode::bench_convcode"),
    ("bench", "check::bench::BenchCheckArgs"),
    ("bench", "check::bench::bench_check"),
    ("bench", "report::BenchReportArgs"),
    ("bench", "report::bench_report"),
    ("convcode", "score::convcode::ScoreConvcodeArgs"),
    ("convcode", "score::convcode::run_score"),
];

/// Every use, under `src/cli`, of the dispatcher by a command or by `shared`, of a command by
/// `shared`, and of a command by another one outside [`ALIASES`], as "file:line: what".
fn cli_reaches(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&src.join("cli"), &mut files);
    files.sort();
    let modules: std::collections::HashSet<Vec<String>> = files
        .iter()
        .map(|f| module_of(f.strip_prefix(src).expect("under src")))
        .collect();
    let mut found = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(src).expect("under src");
        let module = module_of(rel);
        let Some(own) = module.get(1).cloned() else {
            continue; // the dispatcher wires them all
        };
        let text = std::fs::read_to_string(file).expect("source readable");
        let parsed = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("{}: does not parse: {e}", rel.display()));
        let mut uses = Uses {
            module,
            found: Vec::new(),
            skip_tests: false,
        };
        uses.visit_file(&parsed);
        let mut seen = std::collections::BTreeSet::new();
        for (line, path) in uses.found {
            if path.first().map(String::as_str) != Some("cli") {
                continue;
            }
            let Some(target) = (1..=path.len())
                .rev()
                .map(|n| &path[..n])
                .find(|p| modules.contains(*p))
            else {
                continue;
            };
            let what = match target.get(1) {
                None => format!("{own} uses the dispatcher ({})", path.join("::")),
                Some(to) if *to == own || to == "shared" => continue,
                Some(_) if own == "shared" => {
                    format!("shared uses a command ({})", path.join("::"))
                }
                Some(_) => {
                    let item = path[1..].join("::");
                    if ALIASES.iter().any(|(from, it)| *from == own && *it == item) {
                        continue;
                    }
                    format!("{own} uses another command ({})", path.join("::"))
                }
            };
            let line = format!("{}:{line}: {what}", rel.display());
            if seen.insert(line.clone()) {
                found.push(line);
            }
        }
    }
    found
}

#[test]
fn no_cli_command_uses_the_dispatcher_or_another_command() {
    let found = cli_reaches(&workspace().join("server/src"));
    assert!(
        found.is_empty(),
        "move what two commands use into server/src/cli/shared/ (or, for a subcommand that \
         is another command's, add it to layering.rs's ALIASES):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_cli_check_finds_a_command_reaching_into_another() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "cli/mod.rs",
        "mod a; mod b; mod exec; mod bench; mod shared;\nfn f() { a::run(); }\n",
    );
    write("cli/a.rs", "fn g() { let _ = super::Cli::command(); }\n");
    write(
        "cli/b/mod.rs",
        "mod c;\nuse crate::cli::a::Helper;\nuse self::c::Own;\n",
    );
    write(
        "cli/b/c.rs",
        "use super::super::shared::x::Z;\nuse super::Up;\n",
    );
    write(
        "cli/exec.rs",
        "pub struct BenchExecArgs; pub struct SandboxArg;\n",
    );
    write(
        "cli/bench/mod.rs",
        "use crate::cli::exec::BenchExecArgs;\nuse crate::cli::exec::SandboxArg;\n",
    );
    write("cli/shared/mod.rs", "pub mod x;\n");
    write(
        "cli/shared/x.rs",
        "fn h() { println!(\"{}\", super::super::b::name()); }\n",
    );
    assert_eq!(
        cli_reaches(dir.path()),
        vec![
            "cli/a.rs:1: a uses the dispatcher (cli::Cli::command)".to_string(),
            "cli/b/mod.rs:2: b uses another command (cli::a::Helper)".to_string(),
            "cli/bench/mod.rs:2: bench uses another command (cli::exec::SandboxArg)".to_string(),
            "cli/shared/x.rs:1: shared uses a command (cli::b::name)".to_string(),
        ]
    );
}

#[test]
fn no_layer_imports_a_higher_one() {
    let mut bad = Vec::new();
    for (dir, _, _, fixed) in CRATES {
        bad.extend(
            violations(&workspace().join(dir).join("src"), *fixed)
                .into_iter()
                .map(|v| format!("{dir}/src/{v}")),
        );
    }
    assert!(
        bad.is_empty(),
        "lower layers use higher ones, or crates they may not name:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_check_finds_a_higher_import_in_every_form() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "pivots/ledger.rs",
        "use crate::bench::memorycode::data::Dialogue;\n",
    );
    write(
        "python/a.rs",
        "use crate::{fasthash::X, lsp::Server};\n// crate::cli in a comment\n",
    );
    write(
        "exec/b.rs",
        "fn f() { crate::llm::x(); crate::python::y(); }\n",
    );
    write("cli/c.rs", "use crate::lsp::z;\n");
    // A group over several lines, with an item after a nested group.
    write(
        "llm/d.rs",
        "use crate::{\n    python::{a, b},\n    pivots::c,\n    report::d,\n};\n",
    );
    // `super::super` out of a nested module into another layer's sibling... and back in.
    write(
        "bench/convcode/e.rs",
        "use super::super::exec::X;\nuse super::f::Y;\nfn g() { let _ = super::super::super::cli::run(); }\n",
    );
    // Paths inside macros, and an inline module's `super`.
    write(
        "python/f.rs",
        "fn h() { println!(\"{}\", crate::exec::name()); }\nmod tests { use super::super::super::lsp::Z; }\n",
    );
    write("exec/g.rs", "#[derive(clap::ValueEnum)]\nenum M { A }\n");
    write(
        "exec/h.rs",
        "use tree_sitter::Parser;\nfn p() { let _ = tree_sitter::Parser::new(); }\n",
    );
    write("python/i.rs", "use tree_sitter::Parser;\n");
    write("report/j.rs", "use crate::lsp::Server;\n");
    write("report/k.rs", "use ls_types::Range;\n");
    let mut bad = violations(dir.path(), None);
    bad.sort();
    assert_eq!(
        bad,
        vec![
            "bench/convcode/e.rs:3: bench uses cli".to_string(),
            "exec/g.rs:1: exec uses clap".to_string(),
            "exec/h.rs:1: exec uses tree_sitter::Parser".to_string(),
            "exec/h.rs:2: exec uses tree_sitter::Parser".to_string(),
            "llm/d.rs:4: llm uses report".to_string(),
            "pivots/ledger.rs:1: pivots uses bench".to_string(),
            "python/a.rs:1: python uses lsp".to_string(),
            "python/f.rs:1: python uses exec".to_string(),
            "python/f.rs:2: python uses lsp".to_string(),
            "report/j.rs:1: report uses lsp".to_string(),
            "report/k.rs:1: report uses ls_types".to_string(),
        ]
    );
}
