//! Files the kernel makes (`/proc`, `/sys`, cgroupfs): their size reads as 0, so
//! [`crate::bounded_read`], which reads a regular file up to its size, is no use; they are
//! short, so they are read whole up to a small bound. A control file (`memory.max`,
//! `cgroup.procs`) is written in place: it cannot be replaced by a rename.

use std::io;
use std::path::Path;

/// More than any procfs or cgroupfs file this project reads holds.
const LIMIT: u64 = 1 << 20;

/// The text of a kernel file, at most 1 MiB.
pub fn read(path: impl AsRef<Path>) -> io::Result<String> {
    let file = std::fs::File::open(path)?;
    let bytes = crate::bounded_read::read_stream(file, LIMIT, None)?;
    String::from_utf8(bytes)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8: {e}")))
}

/// Write `text` to a kernel control file in place.
pub fn write(path: impl AsRef<Path>, text: impl AsRef<[u8]>) -> io::Result<()> {
    #[allow(clippy::disallowed_methods)] // the one home of in-place writes of kernel files
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_procfs_file_reads_whole_although_its_size_is_zero() {
        assert_eq!(std::fs::metadata("/proc/self/status").unwrap().len(), 0);
        let text = super::read("/proc/self/status").unwrap();
        assert!(text.contains("Pid:"), "{text}");
    }
}
