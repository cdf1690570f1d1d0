//! Random edits of Python text for the tests of incremental analysis (here and in the
//! server's documents): a tiny deterministic generator, pieces that open and close strings,
//! brackets and blocks, a corpus, and applying an edit to a text and its tree alike.

use pivot_python::python::module::parse_tree;
use tree_sitter::{InputEdit, Point, Tree};

/// A tiny xorshift generator: deterministic random edits without a dependency.
pub struct Rng(pub u64);
impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Insertions: characters that open and close strings, brackets and blocks, change
/// indentation, and whole statements that add or remove definitions and decorators.
pub const PIECES: &[&str] = &[
    "x",
    "_",
    "1",
    " ",
    "    ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "'",
    "\"",
    "\"\"\"",
    "'''",
    "#",
    "# note\n",
    ":",
    ",",
    "=",
    "\\",
    "\\\n",
    ";",
    "@",
    "é",
    "😀",
    "f\"{",
    "0x",
    "1_",
    "def ",
    "class ",
    "async ",
    "lambda a=1, b: 0",
    "self.",
    "return ",
    "def g(a, b=1, *c, d):\n    \"\"\"Doc.\"\"\"\n    return a\n",
    "class K(Base):\n    def __init__(self):\n        self.at_v = 1\n    def m_m(self): pass\n",
    "@timer\n",
    "@a.b(1)\n",
    "    @timer\n    def z(self) -> int:\n        assert x\n",
    "import os, a.b as c\n",
    "from x import y\n",
    "try:\n    pass\n",
    "except E:\n    pass\n",
    "finally:\n    pass\n",
    "else:\n",
    "elif y:\n",
    "if x:\n",
    "    pass\n",
    "pass\n",
    "x: int = 1\n",
    "a = b = 2\n",
    "a += b = 1\n",
    "print 1\n",
    "f(a=1, 2)\n",
    "t, u = 1, 2\n",
    "def f(a=1, b): pass\n",
    "T: int\n",
    "type X = int\n",
    "match x:\n    case 1:\n        pass\n",
];

/// Python files to edit: the syntax fixture's snippets and a generated module.
pub fn corpus() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/python/syntax_cases.py"
    );
    let cases = std::fs::read_to_string(path).expect("fixtures/python/syntax_cases.py");
    let mut out = vec![cases.clone()];
    // The snippets tree-sitter parses without error, in groups of ten, as separate files:
    // mostly valid code, some of it with the errors only the grammar-level checks find.
    let clean: Vec<&str> = cases
        .split("### ")
        .filter(|c| !parse_tree(c, None).root_node().has_error())
        .collect();
    out.extend(clean.chunks(10).map(|g| g.join("# ")));
    let lsp = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/lsp/session_demo.py"
    );
    out.push(std::fs::read_to_string(lsp).expect("fixtures/lsp/session_demo.py"));
    out.push(sample(120));
    out
}

/// Classes with decorated methods and `__init__`, functions with docstrings, comments.
pub fn sample(lines: usize) -> String {
    let mut s = String::from("\"\"\"Module.\"\"\"\nimport os\nfrom pedantic import timer\n\n");
    let mut i = 0;
    while s.lines().count() < lines {
        if i % 3 == 0 {
            s.push_str(&format!("@dataclass\nclass Store{i}:\n    def __init__(self, size):\n        self.at_size = size  # why\n\n    @timer\n    def add_m(self, item: int) -> int:\n        try:\n            return 1\n        except E:\n            pass\n\n\n"));
        } else {
            s.push_str(&format!("def f_total{i}(a_x, y=2):\n    \"\"\"Sum.\"\"\"\n    total_chx = a_x + y  # add\n    return total_chx\n\n\nvalue{i} = [1,\n    2]\n"));
        }
        i += 1;
    }
    s
}

pub fn point_of(text: &str, byte: usize) -> Point {
    let before = &text.as_bytes()[..byte];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let col = before
        .iter()
        .rev()
        .position(|&b| b == b'\n')
        .unwrap_or(before.len());
    Point { row, column: col }
}

/// A random edit of `text` as (start, end, inserted), on char boundaries.
pub fn random_edit(rng: &mut Rng, text: &str) -> (usize, usize, String) {
    let boundary = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    // Often at a line start, where indentation and definitions change.
    let mut start = boundary(rng.below(text.len() + 1));
    if rng.below(3) == 0 {
        start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    }
    let del = match rng.below(6) {
        0 | 1 => 0,
        2 => 1,
        3 => rng.below(4),
        4 => rng.below(40),
        _ => text[start..].find('\n').map_or(0, |i| i + 1),
    };
    let end = boundary((start + del).min(text.len()));
    let insert = match rng.below(5) {
        0 => String::new(),
        _ => PIECES[rng.below(PIECES.len())].to_string(),
    };
    (start, end, insert)
}

/// Apply an edit to the text and the tree, and re-parse incrementally (as the server).
pub fn apply(text: &mut String, tree: &mut Tree, (s, e, ins): &(usize, usize, String)) {
    let (start_position, old_end_position) = (point_of(text, *s), point_of(text, *e));
    text.replace_range(*s..*e, ins);
    let new_end = s + ins.len();
    tree.edit(&InputEdit {
        start_byte: *s,
        old_end_byte: *e,
        new_end_byte: new_end,
        start_position,
        old_end_position,
        new_end_position: point_of(text, new_end),
    });
    *tree = parse_tree(text, Some(tree));
}
