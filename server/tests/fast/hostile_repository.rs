//! `pivot-lsp check` on a tree written by whoever opened a pull request: symlinks out of
//! the root (to a folder, to its parent, to a file with a secret) and to devices and FIFOs,
//! FIFOs and ignore files that never end, file names that hold line breaks and GitHub
//! workflow commands, and 100,000 files. In every output format the run ends within 10 s
//! and 500 MB, names what it did not follow, prints nothing from outside the root (and
//! opens nothing there: inotify watches the outside folder), and no line of its output,
//! stdout or stderr, is a workflow command it did not mean.

use crate::support;

use std::os::unix::fs::symlink;
use std::path::Path;
use support::bounds::{bounded, mkfifo, run};
use support::files::write;

const SECRET: &str = "SECRET_TOKEN_4242";

/// The forged names: a line break then a workflow command, the older `##[` form, and a
/// command at the start of the name.
const NEWLINE_NAME: &str = "x\n::error file=app.py,line=1::forged by a file name.py";
const V1_NAME: &str = "##[error]forged v1.py";
const LEADING_NAME: &str = "::warning::forged lead.py";

/// (the folder holding both, the repository root). Outside the root: `outside/` with a
/// secret in a docstring and in names, a FIFO and a `.gitignore` that is a FIFO.
fn hostile_tree() -> (tempfile::TempDir, std::path::PathBuf) {
    let top = tempfile::tempdir().unwrap();
    let outside = top.path().join("outside");
    write(
        &outside.join("secret.py"),
        &format!("def leak_{SECRET}():\n    \"\"\"{SECRET}\"\"\"\n    return 1\n"),
    );
    mkfifo(&outside.join("trap.py"));
    let root = top.path().join("repo");
    write(
        &root.join("pivots.toml"),
        "[[pivot]]\nid = \"fn-prefix\"\n[[pivot.version]]\nsession = 0\nkind = \"function\"\nrule = \"^f_\"\n\n\
         [[pivot]]\nid = \"no-docstrings\"\n[[pivot.version]]\nsession = 0\nkind = \"function docstring\"\nrule = false\n",
    );
    write(
        &root.join("app.py"),
        "def bad():\n    \"\"\"ok\"\"\"\n    return 1\n",
    );
    // Out of the root: a folder, the parent, a file, a FIFO.
    symlink(&outside, root.join("outside_link")).unwrap();
    symlink("..", root.join("up")).unwrap();
    symlink("../outside/secret.py", root.join("secret_link.py")).unwrap();
    symlink("../outside/trap.py", root.join("trap_link.py")).unwrap();
    // Devices and FIFOs inside the tree.
    symlink("/dev/zero", root.join("evil.py")).unwrap();
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    symlink("/dev/urandom", root.join("pkg/random.py")).unwrap();
    mkfifo(&root.join("fifo.py"));
    // Ignore files the walker would read itself: endless, blocking, or outside.
    write(&root.join("zero/ok.py"), "def f_fine():\n    pass\n");
    symlink("/dev/zero", root.join("zero/.gitignore")).unwrap();
    write(&root.join("blocked/ok.py"), "def f_fine():\n    pass\n");
    mkfifo(&root.join("blocked/.ignore"));
    write(&root.join("peek/ok.py"), "def f_fine():\n    pass\n");
    symlink("../../outside/secret.py", root.join("peek/.gitignore")).unwrap();
    // Names that forge workflow commands; each file has a finding.
    for name in [NEWLINE_NAME, V1_NAME, LEADING_NAME] {
        write(&root.join("names").join(name), "def forged():\n    pass\n");
    }
    (top, root)
}

/// Every line a GitHub Actions runner would read as a workflow command (lines end at
/// `\n` or `\r`; `::` after blanks at the start, or `##[` anywhere).
fn commands(out: &str) -> Vec<&str> {
    out.split(['\n', '\r'])
        .filter(|l| l.trim_start().starts_with("::") || l.contains("##["))
        .collect()
}

/// inotify on `dir`: every open or read of it or of a file in it.
struct Watch(std::os::fd::OwnedFd);

impl Watch {
    fn new(dir: &Path) -> Watch {
        use std::os::fd::FromRawFd;
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(fd >= 0);
        let c = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
        let w = unsafe { libc::inotify_add_watch(fd, c.as_ptr(), libc::IN_OPEN | libc::IN_ACCESS) };
        assert!(w >= 0);
        Watch(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
    }

    /// Events since the last call.
    fn events(&self) -> usize {
        use std::os::fd::AsRawFd;
        let mut buf = [0u8; 4096];
        let mut n = 0;
        loop {
            let r = unsafe { libc::read(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if r <= 0 {
                return n;
            }
            n += r as usize;
        }
    }
}

#[test]
fn check_stays_in_its_root_and_no_name_forges_a_workflow_command() {
    let (top, root) = hostile_tree();
    let watch = Watch::new(&top.path().join("outside"));
    for format in ["text", "json", "sarif", "github"] {
        let what = format!("check --format {format}");
        let r = bounded(run(&root, &["check", "--format", format]), &what);
        assert_eq!(r.code, Some(1), "{what}: {}", r.out());
        let all = format!("{}\n{}", r.stdout, r.stderr);
        assert!(
            !all.contains(SECRET),
            "{what} printed what is outside: {all}"
        );
        assert_eq!(watch.events(), 0, "{what} opened a file outside the root");
        // Named and not followed (stderr is the same in every format).
        for (path, why) in [
            ("outside_link", "symlink out of the checked folder"),
            ("up", "symlink out of the checked folder"),
            ("secret_link.py", "symlink out of the checked folder"),
            ("trap_link.py", "FIFO"),
            ("evil.py", "a device"),
            ("pkg/random.py", "a device"),
            ("fifo.py", "FIFO"),
            (
                "zero",
                ".gitignore is a symlink out of the checked folder (to /dev/zero, a device)",
            ),
            ("blocked", ".ignore is a FIFO"),
            ("peek", ".gitignore is a symlink out of the checked folder"),
        ] {
            assert!(
                r.stderr
                    .lines()
                    .any(|l| l.starts_with(&format!("warning: {path}: ")) && l.contains(why)),
                "{what}: no `{why}` for {path}:\n{}",
                r.stderr
            );
        }
        // Whatever the format, the only workflow commands are GitHub's own annotations.
        for line in commands(&all) {
            assert!(
                format == "github"
                    && (line.starts_with("::warning file=") || line.starts_with("::error file="))
                    && line.contains(",title=pivot-lsp "),
                "{what}: a forged workflow command: {line:?}\n{all}"
            );
        }
        // The forged-name files were checked, and their names survive the format.
        match format {
            "json" => {
                let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
                let paths: Vec<&str> = v["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f["path"].as_str().unwrap())
                    .collect();
                for name in [NEWLINE_NAME, V1_NAME, LEADING_NAME] {
                    assert!(
                        paths.contains(&format!("names/{name}").as_str()),
                        "{paths:?}"
                    );
                }
                assert!(paths.contains(&"app.py"));
                assert!(!paths.contains(&"zero/ok.py"));
            }
            "text" => {
                assert!(
                    r.stdout.contains("\"names/x\\n::error file=app.py,line=1::forged by a file name.py\":1:5: [fn-prefix]"),
                    "{}",
                    r.stdout
                );
            }
            "github" => {
                let forged: Vec<&str> = r
                    .stdout
                    .lines()
                    .filter(|l| l.contains("forged by a file name"))
                    .collect();
                assert_eq!(forged.len(), 1, "{}", r.stdout);
                assert!(forged[0].contains("names/x%0A%3A%3Aerror"), "{}", forged[0]);
            }
            _ => {
                let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
                assert_eq!(v["version"], "2.1.0");
            }
        }
    }
}

/// Named on the command line: a path inside the root that a symlink takes out of it is
/// refused; one written outside the root is the user's word and is read.
#[test]
fn paths_named_inside_the_root_stay_inside_it() {
    let (top, root) = hostile_tree();
    let watch = Watch::new(&top.path().join("outside"));
    for args in [
        &["check", "outside_link"][..],
        &["check", "secret_link.py"],
        &["check", "up/outside"],
        &["check", "--pivots", "secret_link.py"],
        &["check", "--conversation", "secret_link.py"],
        &["check", "--baseline", "secret_link.py"],
    ] {
        let r = bounded(run(&root, args), &format!("{args:?}"));
        assert!(
            !r.stdout.contains(SECRET) && !r.stderr.contains(SECRET),
            "{}",
            r.out()
        );
        assert!(
            r.stderr.contains("symlink out of the checked folder"),
            "{args:?}: {}",
            r.out()
        );
        assert_eq!(watch.events(), 0, "{args:?} opened a file outside the root");
    }
    // Written outside the root: read as named.
    let r = bounded(
        run(&root, &["check", "../outside/secret.py"]),
        "check ../outside/secret.py",
    );
    assert_eq!(r.code, Some(1), "{}", r.out());
    assert!(r.stdout.contains(SECRET), "{}", r.out());
}

/// 100,000 files (one in ten Python, the rest data a repository carries), walked and
/// checked within the bounds.
#[test]
fn a_tree_of_100k_files_is_walked_and_checked_within_bounds() {
    let top = tempfile::tempdir().unwrap();
    let root = top.path();
    let n = 100_000;
    for i in 0..n {
        let dir = root.join(format!("d{}", i / 1000));
        if i % 1000 == 0 {
            std::fs::create_dir(&dir).unwrap();
        }
        if i % 10 == 0 {
            std::fs::write(dir.join(format!("m{i}.py")), "def f():\n    pass\n").unwrap();
        } else {
            std::fs::write(dir.join(format!("data{i}.json")), "{}").unwrap();
        }
    }
    let r = bounded(
        run(root, &["check", "--format", "json", "--exit-zero"]),
        "check, 100k files",
    );
    assert_eq!(r.code, Some(0), "{}", r.out());
    assert!(
        r.stderr.contains(&format!("{} files checked", n / 10)),
        "{}",
        r.stderr
    );
}
