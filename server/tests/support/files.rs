//! Folder trees: writing a file with its folders, copying a tree, and a tree as its sorted
//! (relative path, bytes) listing, compared file by file.

use std::path::Path;

/// A file's sorted listing entry: its path relative to the tree's root, and its bytes.
pub type Listing = Vec<(String, Vec<u8>)>;

/// Writes `text` to `path`, making its folders first.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Copies the files and folders under `from` to `to`. A symbolic link is not followed: a
/// link to a folder fails the copy rather than doubling a tree.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest)
                .unwrap_or_else(|err| panic!("copy {}: {err}", e.path().display()));
        }
    }
}

/// Every file under `root` (relative path, bytes), sorted.
pub fn tree(root: &Path) -> Listing {
    fn walk(root: &Path, dir: &Path, out: &mut Listing) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// The two listings hold the same file names and every file the same bytes; `what` names
/// the comparison, and a difference names the first file (not two whole trees).
pub fn assert_same_files(got: &[(String, Vec<u8>)], want: &[(String, Vec<u8>)], what: &str) {
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(got), names(want), "{what}: file names differ");
    for ((name, a), (_, b)) in got.iter().zip(want) {
        assert!(a == b, "{what}: {name} differs");
    }
}
