//! BigCodeBench's own evaluator (a checkout of the fork ConvCodeWorld uses, its
//! `bigcodebench.eval.untrusted_check`) on any samples, run as its Docker image runs it: no
//! network, an unprivileged user, a private `/tmp`. The peer of `exec` in the parity rig
//! (the parity rig, `crates/bcb-parity`) and in `bench exec --bigcodebench`.
//!
//! One evaluator process per worker takes every n-th sample, with `evaluate.py`'s limits
//! (`min_time_limit` 0.1, `gt_time_limit` 2.0) and `EVALPLUS_TIMEOUT_PER_TASK` given as a
//! number (the evaluator compares the variable's string with a number). Each verdict is
//! appended to the worker's file as soon as it is known, so progress can be followed and
//! nothing is lost when a worker dies.
//!
//! The Docker-like isolation is bubblewrap: new network, PID, IPC and UTS namespaces, the host
//! file system read-only, a private `/tmp` (mode 1777), and a user who is not root: a root
//! runner's driver drops to `nobody` before it imports the evaluator (folders on the way to the
//! interpreter that `nobody` cannot enter, such as pyenv under `/root`, are replaced by a tmpfs
//! holding only the needed folders); any other user runs it in a user namespace of its own.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::problem::Problem;
use super::sandbox;

/// How the evaluator is contained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// As BigCodeBench's Docker image: no network, an unprivileged user, a private `/tmp`.
    Docker,
    /// As a plain `bigcodebench.evaluate` on the host (the runner's user, the host's `/tmp`).
    None,
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Isolation::Docker => {
                "as in its Docker image: no network, unprivileged user, private /tmp"
            }
            Isolation::None => "on the host",
        })
    }
}

/// Where and how to run the evaluator.
#[derive(Clone, Debug)]
pub struct EvaluatorConfig {
    /// The interpreter of the evaluation environment (e.g. `env bigcodebench`'s venv).
    pub python: PathBuf,
    /// The fork's checkout (holds `bigcodebench/eval/__init__.py`).
    pub fork: PathBuf,
    pub workers: usize,
    /// `exec --timeout`: the evaluator's `EVALPLUS_TIMEOUT_PER_TASK`.
    pub timeout: Duration,
    pub isolation: Isolation,
}

/// One sample's verdict, in the evaluator's terms.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct Verdict {
    /// `pass`, `fail` or `timeout`.
    pub status: String,
    /// Failing test name -> traceback; `ALL` -> the message of an error outside the tests.
    pub details: BTreeMap<String, String>,
}

/// The driver each worker runs. A root runner's driver drops to `nobody` first; verdicts are
/// appended one JSON line each (`{"i", "status", "details"}`).
const DRIVER: &str = r#"import json, os, sys
tasks_file, worker, workers, limit, out_file, drop = sys.argv[1:7]
worker, workers, limit = int(worker), int(workers), float(limit)
if drop != "-":
    uid, gid = (int(x) for x in drop.split(":"))
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid or os.getgroups():
        sys.exit("could not drop to uid %d" % uid)
# The font cache a used installation has (matplotlib builds it on first import, and
# the evaluator's guard imports matplotlib in every task's process): built once per worker,
# in a process of its own so that this one, like the evaluator's, has no matplotlib loaded.
import subprocess
subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], check=False)
real_getenv = os.getenv
os.getenv = lambda k, d=None: limit if k == 'EVALPLUS_TIMEOUT_PER_TASK' else real_getenv(k, d)
from bigcodebench.eval import untrusted_check
with open(tasks_file) as f:
    tasks = json.load(f)
with open(out_file, "a") as out:
    for t in tasks[worker::workers]:
        stat, details = untrusted_check(t['solution'], t['test'], t['entry_point'], 0.1, 2.0)
        out.write(json.dumps({'i': t['i'], 'status': stat, 'details': {k: str(v) for k, v in details.items()}}) + "\n")
        out.flush()
# Its Manager processes outlive the checks (the original script kills them by name).
os._exit(0)
"#;

/// Names this version of the driver (the first 12 hex digits of its SHA-256), so that
/// verdicts kept from a run of another version are not taken for this one's.
pub fn driver_fingerprint() -> String {
    pivot_base::digest::sha256_hex(DRIVER.as_bytes())[..12].to_string()
}

/// `nobody`/`nogroup`, which the runner's tasks use too.
const NOBODY: (u32, u32) = (65534, 65534);

/// A worker of the evaluator that gave no verdict for longer than [`stall_limit`]: it was
/// killed with everything in its process group, and the sample it was on is named.
#[derive(Debug)]
pub struct Hung {
    /// The sample's index in the input and its problem's task id.
    pub index: usize,
    pub task_id: String,
    pub waited: Duration,
}

impl std::fmt::Display for Hung {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "BigCodeBench's evaluator hung on sample {} ({}): no verdict in {}s, its worker was killed",
            self.index,
            self.task_id,
            self.waited.as_secs()
        )
    }
}

impl std::error::Error for Hung {}

/// How long a worker may go without a verdict before it counts as hung: the evaluator's own
/// kill comes a second after the task's limit, and its start (imports, a Manager) takes
/// seconds; a worker that waits on its Manager's socket (seen on a loaded machine) never
/// comes back by itself.
pub fn stall_limit(timeout: Duration) -> Duration {
    timeout * 3 + Duration::from_secs(90)
}

/// Runs the evaluator on `samples` (problem, full solution), calling `progress(done)` as
/// verdicts come in; the verdicts are in input order. A worker silent for longer than
/// [`stall_limit`] is killed and the run fails with [`Hung`] (downcast the error to tell).
pub fn run(
    cfg: &EvaluatorConfig,
    samples: &[(&Problem, &str)],
    progress: &dyn Fn(usize),
) -> Result<Vec<Verdict>> {
    if !cfg.fork.join("bigcodebench/eval/__init__.py").is_file() {
        bail!(
            "{} is not a checkout of BigCodeBench (no bigcodebench/eval/__init__.py)",
            cfg.fork.display()
        );
    }
    // Absolute (not canonical: a venv's python is a symlink that must stay one), since the
    // evaluator runs in its own folder.
    let python = std::path::absolute(&cfg.python)
        .with_context(|| format!("resolving {}", cfg.python.display()))?;
    // The checkout is a plain folder: canonical, so that no `..` or link in its path has
    // to exist inside the sandbox.
    let fork = cfg
        .fork
        .canonicalize()
        .with_context(|| format!("resolving {}", cfg.fork.display()))?;
    let interp = sandbox::query_interpreter(&python)?;
    let dir = tempfile::Builder::new()
        .prefix("pivot-evaluator-")
        .tempdir()
        .context("creating a temp dir")?;
    let work = dir.path().to_path_buf();
    let tasks_file = work.join("tasks.json");
    let list: Vec<serde_json::Value> = samples
        .iter()
        .enumerate()
        .map(|(i, (p, s))| {
            serde_json::json!({"i": i, "test": p.test, "entry_point": p.entry_point, "solution": s})
        })
        .collect();
    pivot_base::durable::write_scratch(&tasks_file, serde_json::to_vec(&list)?)?;
    let drop = cfg.isolation == Isolation::Docker && sandbox::is_root();
    if drop {
        // The dropped driver writes its verdicts here.
        chown(&work, NOBODY)?;
        std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o755))?;
    }
    let n = cfg.workers.max(1);
    let verdicts_file = |k: usize| work.join(format!("verdicts{k}.jsonl"));
    let stderr_file = |k: usize| work.join(format!("stderr{k}"));
    let mut children: Vec<Child> = Vec::with_capacity(n);
    for k in 0..n {
        pivot_base::durable::write_scratch(&verdicts_file(k), b"")?;
        if drop {
            chown(&verdicts_file(k), NOBODY)?;
        }
        let driver_args: Vec<String> = vec![
            "-c".into(),
            DRIVER.into(),
            tasks_file.to_string_lossy().into_owned(),
            k.to_string(),
            n.to_string(),
            cfg.timeout.as_secs_f64().to_string(),
            verdicts_file(k).to_string_lossy().into_owned(),
            if drop {
                format!("{}:{}", NOBODY.0, NOBODY.1)
            } else {
                "-".into()
            },
        ];
        let mut cmd = match cfg.isolation {
            Isolation::None => {
                let mut c = Command::new(&python);
                c.args(&driver_args).env("PYTHONPATH", &fork);
                c
            }
            Isolation::Docker => {
                let bwrap = sandbox::require_bwrap()?;
                let mut c = Command::new(bwrap);
                // The venv itself (its pyvenv.cfg and the python link in it) besides the
                // interpreter's folders: under a private /tmp it would otherwise be gone.
                let mut paths = interp.paths.clone();
                if let Some(bin) = python.parent() {
                    match bin.parent().filter(|v| v.join("pyvenv.cfg").is_file()) {
                        Some(venv) => paths.push(venv.to_path_buf()),
                        None => paths.push(bin.to_path_buf()),
                    }
                }
                c.args(bwrap_args(&paths, python.parent(), &fork, &work, drop)?);
                c.arg("--").arg(&python).args(&driver_args);
                c
            }
        };
        cmd.current_dir(&work)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(stderr_file(k))?)
            // Its own group: what it leaves behind (Manager servers, a test's process that
            // ignored terminate) is killed with it, and holds no pipe of ours.
            .process_group(0);
        let child = cmd
            .spawn()
            .with_context(|| format!("starting the evaluator with {}", python.display()))?;
        children.push(child);
    }
    // Follow the verdict files until every worker has ended, or one stalls.
    let mut ended = vec![None; n];
    let stall = stall_limit(cfg.timeout);
    let mut last: Vec<(usize, std::time::Instant)> = vec![(0, std::time::Instant::now()); n];
    let mut hung: Option<usize> = None;
    loop {
        let mut all = true;
        for (k, child) in children.iter_mut().enumerate() {
            if ended[k].is_none() {
                match child.try_wait()? {
                    Some(status) => {
                        // What the worker left running in its group goes with it.
                        pivot_base::child::kill_group(child);
                        ended[k] = Some(status);
                    }
                    None => all = false,
                }
            }
        }
        let counts: Vec<usize> = (0..n).map(|k| count_lines(&verdicts_file(k))).collect();
        progress(counts.iter().sum());
        for k in 0..n {
            if counts[k] != last[k].0 {
                last[k] = (counts[k], std::time::Instant::now());
            } else if ended[k].is_none() && last[k].1.elapsed() > stall {
                hung = Some(k);
            }
        }
        if let Some(k) = hung {
            for child in children.iter_mut() {
                pivot_base::child::kill_group(child);
                let _ = child.kill();
                let _ = child.wait();
            }
            // The worker's samples are every n-th from k, in order: the first without a
            // verdict is the one it was on.
            let seen: std::collections::HashSet<usize> =
                pivot_base::bounded_read::read_to_string(&verdicts_file(k))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| {
                        let from = l.rfind("{\"i\": ")?;
                        serde_json::from_str::<serde_json::Value>(&l[from..])
                            .ok()?
                            .get("i")?
                            .as_u64()
                            .map(|i| i as usize)
                    })
                    .collect();
            let index = (k..samples.len())
                .step_by(n)
                .find(|i| !seen.contains(i))
                .unwrap_or(k);
            return Err(Hung {
                index,
                task_id: samples[index].0.task_id.clone(),
                waited: stall,
            }
            .into());
        }
        if all {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut out: Vec<Option<Verdict>> = vec![None; samples.len()];
    for (k, status) in ended.iter().enumerate() {
        let file = verdicts_file(k);
        let text = pivot_base::bounded_read::read_to_string(&file).unwrap_or_default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            #[derive(serde::Deserialize)]
            struct Line {
                i: usize,
                #[serde(flatten)]
                verdict: Verdict,
            }
            // The task's process inherits the driver's file and a sample may write into it
            // (the evaluator does not close it): the verdict is the line's last object.
            let Some(from) = line.rfind("{\"i\": ") else {
                continue;
            };
            let l: Line = serde_json::from_str(&line[from..])
                .with_context(|| format!("{}: not a verdict line: {line}", file.display()))?;
            if let Some(slot) = out.get_mut(l.i) {
                *slot = Some(l.verdict);
            }
        }
        let expected = (k..samples.len()).step_by(n).count();
        let got = (k..samples.len())
            .step_by(n)
            .filter(|&i| out[i].is_some())
            .count();
        if got < expected {
            let err = pivot_base::bounded_read::read_to_string(&stderr_file(k)).unwrap_or_default();
            let tail: String = err
                .lines()
                .rev()
                .take(20)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            bail!(
                "BigCodeBench's evaluator ({}) worker {k} ended ({}) after {got} of {expected} verdicts: {}",
                fork.display(),
                status.map(|s| s.to_string()).unwrap_or_default(),
                tail.trim()
            );
        }
    }
    Ok(out.into_iter().map(|v| v.expect("checked above")).collect())
}

fn count_lines(path: &Path) -> usize {
    std::fs::File::open(path)
        .map(|f| BufReader::new(f).lines().count())
        .unwrap_or(0)
}

fn chown(path: &Path, (uid, gid): (u32, u32)) -> Result<()> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
        .with_context(|| format!("giving {} to uid {uid}", path.display()))
}

/// bubblewrap's arguments: the host read-only, private `/tmp`, `/dev` and `/proc`, no
/// network, the work folder writable, a clean environment.
/// Binds `p` (read-only) inside the tmpfs mounted at `base`, making the folders on the way
/// first with mode 0755: bwrap would make them private to root, closed to `nobody`.
fn bind_inside(a: &mut Vec<String>, base: &Path, p: &Path) {
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut d = base.to_path_buf();
    for c in p.strip_prefix(base).unwrap_or(Path::new("")).components() {
        d.push(c);
        if d != *p {
            a.extend(["--perms", "0755", "--dir"].map(String::from));
            a.push(s(&d));
        }
    }
    a.extend(["--ro-bind".to_string(), s(p), s(p)]);
}

fn bwrap_args(
    interpreter_paths: &[PathBuf],
    interpreter_dir: Option<&Path>,
    fork: &Path,
    work: &Path,
    drop: bool,
) -> Result<Vec<String>> {
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut a: Vec<String> = Vec::new();
    let mut push = |items: &[&str]| a.extend(items.iter().map(|x| x.to_string()));
    push(&["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
    push(&["--perms", "01777", "--tmpfs", "/tmp"]);
    push(&["--perms", "01777", "--tmpfs", "/dev/shm"]);
    let mut needed: Vec<PathBuf> = interpreter_paths.to_vec();
    needed.push(fork.to_path_buf());
    if drop {
        // Folders `nobody` cannot enter become a tmpfs holding only what the evaluator reads.
        let mut hidden: Vec<PathBuf> = Vec::new();
        for p in &needed {
            if let Some(a) = closed_ancestor(p) {
                if !hidden.contains(&a) {
                    hidden.push(a);
                }
            }
        }
        for h in &hidden {
            a.extend(["--perms", "0755", "--tmpfs"].map(String::from));
            a.push(s(h));
            for p in needed.iter().filter(|p| p.starts_with(h) && p.exists()) {
                bind_inside(&mut a, h, p);
            }
        }
    }
    // What the evaluator reads from under /tmp or /dev/shm (a checkout or a venv there) is
    // bound again over the private ones, with the folders on the way open to `nobody`.
    for p in needed.iter().filter(|p| p.exists()) {
        let Some(base) = [Path::new("/tmp"), Path::new("/dev/shm")]
            .into_iter()
            .find(|b| p.starts_with(b) && p.as_path() != *b)
        else {
            continue;
        };
        bind_inside(&mut a, base, p);
    }
    // After the private /tmp: the work folder (under the host's temp dir) stays visible.
    a.extend(["--bind".to_string(), s(work), s(work)]);
    // In BigCodeBench's image the environment's interpreter is the `python` on PATH (a task
    // that runs `python script.py` gets it), as it is for `exec`'s tasks.
    let path = match interpreter_dir {
        Some(d) => format!("{}:/usr/local/bin:/usr/bin:/bin", s(d)),
        None => "/usr/local/bin:/usr/bin:/bin".to_string(),
    };
    a.extend(
        [
            "--chdir",
            &s(work),
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--clearenv",
            "--setenv",
            "PATH",
            &path,
            "--setenv",
            "HOME",
            "/tmp",
            "--setenv",
            "LANG",
            "C.UTF-8",
            "--setenv",
            "PYTHONPATH",
            &s(fork),
        ]
        .map(String::from),
    );
    if !drop {
        a.push("--unshare-user".into());
    }
    Ok(a)
}

/// The outermost folder on the way to `path` that others cannot enter (no `o+x`).
fn closed_ancestor(path: &Path) -> Option<PathBuf> {
    let mut cur = PathBuf::new();
    for c in path.components() {
        cur.push(c);
        if cur == Path::new("/") {
            continue;
        }
        match std::fs::metadata(&cur) {
            Ok(m) if m.is_dir() && m.permissions().mode() & 0o001 == 0 => return Some(cur),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A checkout or venv under /tmp is bound again over the private /tmp, after it, with the
    /// folders on the way made first.
    #[test]
    fn folders_under_tmp_stay_visible() {
        let d = tempfile::Builder::new()
            .prefix("pivot-evaluator-test-")
            .tempdir_in("/tmp")
            .unwrap();
        let venv = d.path().join("venv");
        std::fs::create_dir_all(&venv).unwrap();
        let work = d.path().join("work");
        let args = bwrap_args(
            std::slice::from_ref(&venv),
            None,
            Path::new("/usr"),
            &work,
            false,
        )
        .unwrap();
        let s = |p: &Path| p.to_string_lossy().into_owned();
        let tmpfs = args
            .windows(2)
            .position(|w| w == ["--tmpfs", "/tmp"])
            .unwrap();
        let dir = args
            .windows(2)
            .position(|w| w[0] == "--dir" && w[1] == s(d.path()));
        let bind = args
            .windows(3)
            .position(|w| w == ["--ro-bind".to_string(), s(&venv), s(&venv)]);
        assert!(dir.is_some_and(|i| i > tmpfs), "{args:?}");
        assert!(bind.is_some_and(|i| i > dir.unwrap()), "{args:?}");
    }
}
