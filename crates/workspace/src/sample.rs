//! A generated Python module and ten pivots, one per common rule shape: the input of
//! `pivot-lsp bench lsp` (the latency benchmark) and of the incremental-analysis tests.

/// The ten pivots of the benchmark, one per common rule shape.
pub const PIVOTS: [(&str, &str, &str); 10] = [
    ("fn", "function", r#""^f_""#),
    ("method", "method", r#"".*_m$""#),
    ("class", "class", r#""^[A-Z][a-zA-Z0-9]*$""#),
    ("var", "variable", r#"".*chx.*""#),
    ("arg", "function argument", r#""^a_""#),
    ("attr", "attribute", r#""^at_""#),
    ("doc", "function docstring", "true"),
    ("timer", "method decorator", r#"["timer", true]"#),
    ("import", "import", r#"["hashlib", true]"#),
    ("comment", "comment", "true"),
];

/// A Python module of about `lines` lines: classes with methods and functions, some
/// breaking the pivots, so diagnostics are realistic in number.
pub fn sample_module(lines: usize) -> String {
    let mut s = String::from("\"\"\"Generated module for the latency benchmark.\"\"\"\nimport os\nfrom pedantic import timer\n\n");
    let mut i = 0;
    while s.lines().count() < lines {
        if i % 4 == 0 {
            s.push_str(&format!(
                "class Store{i}:\n    def __init__(self, size):\n        self.at_size = size\n        self.items = []\n\n    @timer\n    def add_m(self, item):\n        self.items.append(item)\n        return len(self.items)\n\n    def get(self, k):\n        return self.items[k]\n\n\n"
            ));
        } else {
            s.push_str(&format!(
                "def f_total{i}(a_x, y):\n    \"\"\"Sum two values.\"\"\"\n    total_chx = a_x + y  # add\n    return total_chx\n\n\ndef helper{i}(x):\n    value = x * 2\n    return value\n\n\n"
            ));
        }
        i += 1;
    }
    s
}
