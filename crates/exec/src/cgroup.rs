//! A memory cgroup per zygote, where one can be had: RLIMIT_AS bounds a process's address
//! space, but not the kernel memory a task pins (socket buffers, pipes) nor its processes
//! together. The cgroup bounds all of it, the zygote and every task included; the kernel's
//! OOM killer ends the task that overruns it (reported as killed by SIGKILL).
//!
//! Used when the runner's own cgroup is writable: cgroup v1's memory controller, or v2 with
//! the memory controller delegated to its subtree. Otherwise `doctor` says why not and the
//! rlimits (address space, processes, descriptors) are the bound.
//!
//! A run that is interrupted gives its cgroups back through [`release_all`] (the faces call
//! it from their signal handler); a run killed outright cannot, so each process sweeps, once,
//! the `pivot-PID-N` cgroups of processes that are gone ([`base`] does it).

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, Once};

/// Where cgroups for zygotes go, and which interface it speaks.
#[derive(Debug, Clone)]
pub(crate) struct Base {
    dir: PathBuf,
    v2: bool,
}

/// One zygote's cgroup; removed when dropped (after its processes are gone).
#[derive(Debug)]
pub(crate) struct Cgroup {
    dir: PathBuf,
}

static NEXT: AtomicU64 = AtomicU64::new(1);

/// The cgroups this process made and has not removed yet, for [`release_all`].
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Set by [`release_all`]: the process is stopping and makes no new cgroup.
static RELEASED: AtomicBool = AtomicBool::new(false);
static SWEEP: Once = Once::new();

const PREFIX: &str = "pivot-";

/// The runner's cgroup if a child with a memory limit can be made there, or why not.
pub(crate) fn base() -> Result<Base, String> {
    let text = pivot_base::kernel_file::read("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    // cgroup v1: "N:memory:/path"; v2: "0::/path".
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next(), parts.next(), parts.next());
        let (Some(controllers), Some(path)) = (controllers, path) else {
            continue;
        };
        if controllers.split(',').any(|c| c == "memory") {
            let dir = Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
            if writable(&dir) && dir.join("memory.limit_in_bytes").exists() {
                return Ok(swept(Base { dir, v2: false }));
            }
        }
    }
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("0::") {
            let dir = Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
            let subtree = pivot_base::kernel_file::read(dir.join("cgroup.subtree_control"))
                .unwrap_or_default();
            if writable(&dir) && subtree.split_whitespace().any(|c| c == "memory") {
                return Ok(swept(Base { dir, v2: true }));
            }
        }
    }
    Err(
        "no writable cgroup with the memory controller (run as root, or delegate the memory \
         controller to this user's cgroup); task memory is bounded by rlimits only"
            .to_string(),
    )
}

/// `base`, its stale cgroups swept the first time this process finds it.
fn swept(base: Base) -> Base {
    SWEEP.call_once(|| {
        sweep_stale(&base.dir);
    });
    base
}

/// Removes the `pivot-PID-N` cgroups under `dir` whose process PID is gone (a run killed
/// before it could remove them; on a reused machine they would pile up). One whose PID is
/// alive is another run's, or ours, and is left; so is one that still holds processes (the
/// kernel refuses to remove it). Returns how many went.
pub fn sweep_stale(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .filter(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        if std::fs::remove_dir(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// For an interrupted run, called once from its signal handler while the rest of the process
/// still runs: no new cgroup is made from now on, and each cgroup this process made is
/// emptied and removed. Its processes (the workers and their tasks) are stopped (SIGSTOP:
/// a worker killed now would be reported as a task's failure, and that report could still
/// be written) and moved to the parent cgroup so that the cgroup can go at once. Returns
/// their pids: the caller kills them (SIGKILL) as the last thing before it exits.
pub fn release_all() -> Vec<i32> {
    let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    RELEASED.store(true, Ordering::SeqCst);
    let mut stopped = Vec::new();
    for dir in live.drain(..) {
        let parent_procs = dir.parent().map(|p| p.join("cgroup.procs"));
        // A task may fork between the read and the stop: read again until none is new.
        for _ in 0..20 {
            let pids = members(&dir);
            if pids.is_empty() {
                break;
            }
            for &pid in &pids {
                if let Some(p) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(p, rustix::process::Signal::STOP);
                }
                if !stopped.contains(&pid) {
                    stopped.push(pid);
                }
            }
            if let Some(procs) = &parent_procs {
                for &pid in &pids {
                    let _ = pivot_base::kernel_file::write(procs, pid.to_string());
                }
            }
        }
        for _ in 0..50 {
            if std::fs::remove_dir(&dir).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
    stopped
}

/// The processes in a cgroup (`cgroup.procs`).
fn members(dir: &Path) -> Vec<i32> {
    pivot_base::kernel_file::read(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

fn writable(dir: &Path) -> bool {
    let Ok(c) = CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    rustix::fs::access(c.as_c_str(), rustix::fs::Access::WRITE_OK).is_ok()
}

impl Base {
    /// A new cgroup limited to `limit` bytes of memory (swap included where it can be said).
    pub(crate) fn create(&self, limit: u64) -> std::io::Result<Cgroup> {
        // Held while the folder is made and listed, so that `release_all` sees every one.
        let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        if RELEASED.load(Ordering::SeqCst) {
            return Err(std::io::Error::other(
                "the run is being interrupted: no new worker",
            ));
        }
        // A cgroup left by an earlier process of the same pid (killed before its drop
        // removed it) holds the name: the next number is taken instead.
        let dir = loop {
            let name = format!(
                "{PREFIX}{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::SeqCst)
            );
            let dir = self.dir.join(name);
            match std::fs::create_dir(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        };
        live.push(dir.clone());
        drop(live);
        let group = Cgroup { dir };
        if self.v2 {
            pivot_base::kernel_file::write(group.dir.join("memory.max"), limit.to_string())?;
            let _ = pivot_base::kernel_file::write(group.dir.join("memory.swap.max"), "0");
        } else {
            pivot_base::kernel_file::write(
                group.dir.join("memory.limit_in_bytes"),
                limit.to_string(),
            )?;
            let _ = pivot_base::kernel_file::write(
                group.dir.join("memory.memsw.limit_in_bytes"),
                limit.to_string(),
            );
        }
        Ok(group)
    }

    /// For `doctor`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} memory controller at {}",
            if self.v2 { "cgroup v2" } else { "cgroup v1" },
            self.dir.display()
        )
    }
}

impl Cgroup {
    /// The file a process writes its pid into to join (`cgroup.procs`), as a C string, so a
    /// child can join between fork and exec without allocating.
    pub(crate) fn procs_path(&self) -> Option<CString> {
        CString::new(self.dir.join("cgroup.procs").as_os_str().as_encoded_bytes()).ok()
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // The zygote was killed first; its processes may take a moment to leave.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
                live.retain(|d| d != &self.dir);
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Joins the cgroup whose `cgroup.procs` is `procs`: called in the child between fork and
/// exec, so only async-signal-safe calls (open, write, getpid, close) and no allocation.
pub(crate) fn join_in_child(procs: &CString) -> std::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    // rustix's calls are the system calls themselves (a C string path needs no allocation);
    // the descriptor is closed when dropped, also a plain system call.
    let fd = rustix::fs::open(
        procs.as_c_str(),
        OFlags::WRONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut buf = [0u8; 20];
    let mut n = rustix::process::getpid().as_raw_nonzero().get() as u64;
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    rustix::io::write(&fd, &buf[i..])?;
    Ok(())
}
