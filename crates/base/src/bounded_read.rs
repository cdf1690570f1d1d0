//! Reading a file named by a user, a command, a state file or a dataset folder without
//! trusting it: only regular files are read (a FIFO would block forever, `/dev/zero` never
//! ends), the file is opened non-blocking so that a path swapped for a FIFO between the
//! check and the open cannot hang us either, and at most `limit()` bytes are read, so a
//! huge file is a clear error rather than gigabytes held in memory.
//!
//! The limit is `PIVOT_MAX_FILE_BYTES` when set (a number of bytes), else 64 MiB: room for
//! the 20 MB Python files the editor must open, and far below what would exhaust memory.
//! Standard input (`extract -`, `feedback --code -`) is held to the same limit
//! ([`read_stdin`]): it may be `/dev/zero` or a pipe that never ends.

use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

pub const DEFAULT_LIMIT: u64 = 64 << 20;
pub const LIMIT_VAR: &str = "PIVOT_MAX_FILE_BYTES";

/// The size limit in bytes (`PIVOT_MAX_FILE_BYTES`, else `DEFAULT_LIMIT`).
pub fn limit() -> u64 {
    std::env::var(LIMIT_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_LIMIT)
}

/// The whole of a regular file of at most `limit()` bytes. Errors keep the `io::ErrorKind`
/// (NotFound stays NotFound) and say what was wrong; callers add the path.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    read_limited(path, limit())
}

/// `read` as UTF-8 text.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read(path)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8: {e}")))
}

/// At most `limit()` bytes of standard input; more is an error, not a longer wait for memory.
pub fn read_stdin() -> io::Result<Vec<u8>> {
    read_stream(io::stdin().lock(), limit(), None)
}

/// `read_stdin` as UTF-8 text.
pub fn read_stdin_to_string() -> io::Result<String> {
    String::from_utf8(read_stdin()?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8: {e}")))
}

/// Everything `r` gives, up to `limit` bytes (`expected`: the size it should have, when
/// known, as a regular file's). Never more than `limit` + 1 bytes are read or held, so an endless stream costs
/// about `limit` bytes of memory before it is refused.
pub fn read_stream(r: impl Read, limit: u64, expected: Option<u64>) -> io::Result<Vec<u8>> {
    let cap = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
    // Unknown size (a pipe): room for the limit is reserved, which costs address space
    // only; growing by doubling would leave every smaller buffer resident in the allocator.
    let first = match expected {
        None => cap,
        Some(n) => usize::try_from(n)
            .unwrap_or(usize::MAX)
            .saturating_add(1)
            .min(cap),
    };
    let mut out: Vec<u8> = Vec::with_capacity(first);
    // Straight into the buffer (no zeroed bounce chunk per file: a tree of small files paid
    // more for zeroing and copying it than for reading), never past the limit's next byte.
    r.take(limit.saturating_add(1)).read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Err(too_large(out.len() as u64, limit, true));
    }
    Ok(out)
}

pub fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    // Checked before opening: opening a FIFO for reading blocks until a writer comes.
    check(&std::fs::metadata(path)?, limit)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    // Checked again on what was opened, in case the path changed in between.
    let meta = file.metadata()?;
    check(&meta, limit)?;
    // Read to the end, not to the size: a file that grew past the limit is told too.
    read_stream(file, limit, Some(meta.len()))
}

/// What a file type is, for messages: "a directory", "a FIFO (named pipe)", "a device"...
pub fn kind_of(t: std::fs::FileType) -> &'static str {
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symlink"
    } else {
        "not a regular file"
    }
}

fn check(meta: &std::fs::Metadata, limit: u64) -> io::Result<()> {
    let t = meta.file_type();
    if !t.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}, not a regular file: only regular files are read",
                kind_of(t)
            ),
        ));
    }
    if meta.len() > limit {
        return Err(too_large(meta.len(), limit, false));
    }
    Ok(())
}

fn too_large(size: u64, limit: u64, grew: bool) -> io::Error {
    let size = if grew {
        format!("more than {limit} bytes")
    } else {
        format!("{size} bytes")
    };
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!(
            "the file is {size}, over the limit of {limit} bytes (set {LIMIT_VAR} to raise it)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("a.json");
        std::fs::write(&small, b"{}").unwrap();
        assert_eq!(read_limited(&small, 10).unwrap(), b"{}");
        let e = read_limited(&small, 1).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert!(e.to_string().contains(LIMIT_VAR), "{e}");
        let e = read_limited(&dir.path().join("missing"), 10).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = read_limited(dir.path(), 10).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");

        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let t = Instant::now();
        let e = read_limited(&fifo, 10).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        let e = read_limited(Path::new("/dev/zero"), 10).unwrap_err();
        assert!(e.to_string().contains("device"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn streams_are_read_to_their_limit_and_no_further() {
        let zero = std::fs::File::open("/dev/zero").unwrap();
        let e = read_stream(zero, 1 << 20, None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        for n in [0usize, 1, 65_535, 65_536, 200_000, 1 << 20] {
            let data: Vec<u8> = (0..n).map(|i| i as u8).collect();
            assert_eq!(read_stream(&data[..], 1 << 20, None).unwrap(), data, "{n}");
            assert_eq!(read_stream(&data[..], 1 << 20, Some(0)).unwrap(), data);
            assert_eq!(
                read_stream(&data[..], 1 << 20, Some(n as u64)).unwrap(),
                data
            );
        }
        let over = vec![1u8; (1 << 20) + 1];
        assert!(read_stream(&over[..], 1 << 20, None).is_err());
    }
}
