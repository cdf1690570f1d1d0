//! docs/clusters.md's Slurm recipes, copied from the document as written, run on a real
//! single-node Slurm (Debian's slurm-wlm and munge; this test starts munged, slurmctld and
//! slurmd itself on 127.0.0.1, as root, no systemd): MemoryCode scores, ConvCodeWorld +
//! ConvCodeBench and `check`, each as an array of 8 shards (some of them empty) and a merge
//! job. In each, shard 3 is SIGKILLed (as by the OOM killer) the first time it runs, the
//! merge then waits for ever, and the document's "run one failed shard again" commands
//! recover; the merged output must equal the unsharded run byte for byte. Skipped, visibly,
//! when Slurm is not installed (scripts/test installs it as root) or does not come up here.

// Tests read and write their fixtures as they like (clippy.toml's rules are product code's).
#![allow(clippy::disallowed_methods)]

#[allow(dead_code)] // each test binary uses part of the support module
mod support;

use pivot_test_support::host::{find_program, free_port, human_eval, is_root};
use pivot_test_support::test_skip::skip;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::cli::{repo, reproducible, stdout_if, EXE};
use support::files::{assert_same_files, copy_tree, tree};
use support::model_server::DemoServer;

/// Where Debian installs the daemons, which a non-root PATH lacks.
const SBIN: &[&str] = &["/usr/sbin", "/sbin", "/usr/bin"];

/// A program on PATH or in the sbin folders.
fn find(program: &str) -> Option<PathBuf> {
    find_program(program, SBIN)
}

fn short_host_name() -> String {
    let name = pivot_base::durable::host_name();
    name.split('.').next().unwrap_or("localhost").to_string()
}

fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

/// A one-node cluster in a temporary folder; its daemons are stopped when dropped.
struct Slurm {
    /// The cluster's configuration, state and logs (removed with it).
    _dir: tempfile::TempDir,
    conf: PathBuf,
    daemons: Vec<Child>,
}

impl Slurm {
    /// Starts munged, slurmctld and slurmd; `Err(why)` when that cannot be done here.
    fn start() -> Result<Slurm, String> {
        let tools = [
            "munged",
            "slurmctld",
            "slurmd",
            "sbatch",
            "squeue",
            "scontrol",
            "scancel",
            "sinfo",
        ];
        if let Some(t) = tools.iter().find(|t| find(t).is_none()) {
            return Err(format!(
                "{t} is not installed (Debian's slurm-wlm and munge; scripts/test installs them as root)"
            ));
        }
        if !is_root() {
            return Err("not root: slurmd starts jobs as their user, so it runs as root".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let d = dir.path().to_path_buf();
        let munge = d.join("munge");
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir(d.join(sub)).map_err(|e| e.to_string())?;
        }
        std::fs::set_permissions(&munge, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| e.to_string())?;
        let mut key = vec![0u8; 1024];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut key))
            .map_err(|e| e.to_string())?;
        let key_file = munge.join("munge.key");
        std::fs::write(&key_file, &key).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| e.to_string())?;
        let socket = munge.join("munge.socket");
        let logs = d.join("log");
        let log = |name: &str| std::fs::File::create(logs.join(name)).map_err(|e| e.to_string());
        let mut slurm = Slurm {
            conf: d.join("slurm.conf"),
            _dir: dir,
            daemons: Vec::new(),
        };
        let munged = Command::new(find("munged").unwrap())
            .arg("-F")
            .arg("-f")
            .arg(format!("--key-file={}", key_file.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--pid-file={}", munge.join("munged.pid").display()))
            .arg(format!("--log-file={}", d.join("log/munged.log").display()))
            .arg(format!(
                "--seed-file={}",
                munge.join("munged.seed").display()
            ))
            .stdin(Stdio::null())
            .stdout(log("munged.out")?)
            .stderr(log("munged.err")?)
            .spawn()
            .map_err(|e| format!("munged: {e}"))?;
        slurm.daemons.push(munged);
        slurm.wait("munged", &d.join("log/munged.err"), || socket.exists())?;
        let host = short_host_name();
        let cpus = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .max(2);
        let conf = format!(
            "ClusterName=pivottest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MinJobAge=3600
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
",
            ctld = free_port(),
            slurmd = free_port(),
            socket = socket.display(),
            d = d.display(),
        );
        std::fs::write(&slurm.conf, conf).map_err(|e| e.to_string())?;
        let ctld = Command::new(find("slurmctld").unwrap())
            .args(["-D", "-i", "-f"])
            .arg(&slurm.conf)
            .stdin(Stdio::null())
            .stdout(log("slurmctld.out")?)
            .stderr(log("slurmctld.err")?)
            .spawn()
            .map_err(|e| format!("slurmctld: {e}"))?;
        slurm.daemons.push(ctld);
        slurm.wait("slurmctld", &d.join("log/slurmctld.log"), || {
            slurm
                .run("scontrol", &["ping"])
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("is UP"))
        })?;
        let slurmd = Command::new(find("slurmd").unwrap())
            .args(["-D", "-N", &host, "-f"])
            .arg(&slurm.conf)
            .stdin(Stdio::null())
            .stdout(log("slurmd.out")?)
            .stderr(log("slurmd.err")?)
            .spawn()
            .map_err(|e| format!("slurmd: {e}"))?;
        slurm.daemons.push(slurmd);
        slurm.wait("slurmd", &d.join("log/slurmd.log"), || {
            slurm
                .run("sinfo", &["-h", "-o", "%T"])
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        })?;
        Ok(slurm)
    }

    fn wait(&self, what: &str, log: &Path, ready: impl Fn() -> bool) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !ready() {
            if Instant::now() > deadline {
                return Err(format!(
                    "{what} did not come up within 60 s; its log ends:\n{}",
                    tail(log)
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(())
    }

    /// A Slurm client command against this cluster.
    fn run(&self, tool: &str, args: &[&str]) -> std::io::Result<Output> {
        Command::new(find(tool).unwrap())
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .output()
    }

    /// Per job (array tasks one by one): `(ArrayTaskId, JobState, ExitCode, Reason)`.
    fn jobs(&self, id: &str) -> Vec<(String, String, String, String)> {
        let out = self.run("scontrol", &["show", "job", "-o", id]).unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| {
                let field = |k: &str| {
                    l.split_whitespace()
                        .find_map(|f| f.strip_prefix(&format!("{k}=")))
                        .unwrap_or("")
                        .to_string()
                };
                (
                    field("ArrayTaskId"),
                    field("JobState"),
                    field("ExitCode"),
                    field("Reason"),
                )
            })
            .collect()
    }

    /// Waits until none of the job's tasks is pending or running, unless it only waits on a
    /// dependency that can never be met (which the caller checks).
    fn wait_done(&self, id: &str, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(600);
        loop {
            let jobs = self.jobs(id);
            let busy = jobs.iter().any(|(_, state, _, reason)| {
                matches!(
                    state.as_str(),
                    "PENDING" | "RUNNING" | "CONFIGURING" | "COMPLETING"
                ) && reason != "DependencyNeverSatisfied"
            });
            if !jobs.is_empty() && !busy {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: job {id} still busy after 10 minutes: {jobs:?}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        if let Ok(out) = self.run("squeue", &["-h", "-o", "%A"]) {
            for id in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = self.run("scancel", &[id]);
            }
        }
        // slurmd, slurmctld, then munged.
        for mut d in self.daemons.drain(..).rev() {
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

/// Every fenced code block of docs/clusters.md.
fn doc_blocks() -> Vec<String> {
    let doc = std::fs::read_to_string(repo().join("docs/clusters.md")).unwrap();
    let mut blocks = Vec::new();
    let mut rest = doc.as_str();
    while let Some(i) = rest.find("\n```") {
        let after = &rest[i + 4..];
        let body_start = after.find('\n').unwrap() + 1;
        let body = &after[body_start..];
        let end = body.find("\n```").unwrap();
        blocks.push(body[..end + 1].to_string());
        rest = &body[end + 4..];
    }
    blocks
}

/// The script whose header comment names it (`# memorycode.sbatch: ...`).
fn script(name: &str) -> String {
    doc_blocks()
        .into_iter()
        .find(|b| {
            b.lines()
                .take(2)
                .any(|l| l.starts_with(&format!("# {name}")))
        })
        .unwrap_or_else(|| panic!("docs/clusters.md has no {name}"))
}

/// The submission commands of `name` (`mkdir -p shards` ... `SCRIPT=name` ...).
fn submission(name: &str) -> String {
    doc_blocks()
        .into_iter()
        .find(|b| b.starts_with("mkdir -p shards") && b.contains(&format!("SCRIPT={name}")))
        .unwrap_or_else(|| panic!("docs/clusters.md has no submission of {name}"))
}

/// "Running one failed shard again".
fn rerun() -> String {
    doc_blocks()
        .into_iter()
        .find(|b| b.starts_with("K=") && b.contains("scancel"))
        .expect("docs/clusters.md says how to run one failed shard again")
}

/// Stands first on the jobs' PATH as `pivot-lsp`: the first command of shard 3 is SIGKILLed
/// (once `PIVOT_TEST_KILL_WHEN` names an existing file, or at once), the rest runs the real
/// binary. The shard fails as one the OOM killer or a node failure ends.
const KILLER: &str = r#"#!/bin/sh
case " $* " in
  *" --shard 3/"*)
    if mkdir "$PIVOT_TEST_KILLED" 2>/dev/null; then
      "$PIVOT_TEST_REAL" "$@" &
      pid=$!
      if [ -n "$PIVOT_TEST_KILL_WHEN" ]; then
        while kill -0 $pid 2>/dev/null && ! ls $PIVOT_TEST_KILL_WHEN >/dev/null 2>&1; do
          sleep 0.05
        done
      fi
      kill -9 $pid 2>/dev/null
      wait $pid
      exit 137
    fi;;
esac
exec "$PIVOT_TEST_REAL" "$@"
"#;

/// One recipe: the batch script(s) written into `work`, submitted as the document says,
/// shard 3 killed, the merge stuck, shard 3 run again as the document says, the merge done.
struct Recipe<'a> {
    slurm: &'a Slurm,
    work: PathBuf,
    env: Vec<(String, String)>,
}

impl Recipe<'_> {
    fn new<'a>(slurm: &'a Slurm, work: &Path, kill_when: &str) -> Recipe<'a> {
        let tools = work.join(".test-bin");
        std::fs::create_dir_all(&tools).unwrap();
        let killer = tools.join("pivot-lsp");
        std::fs::write(&killer, KILLER).unwrap();
        std::fs::set_permissions(&killer, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!(
            "{}:{}",
            tools.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let env = vec![
            ("PATH".to_string(), path),
            ("SLURM_CONF".into(), slurm.conf.display().to_string()),
            ("PIVOT_TEST_REAL".into(), EXE.to_string()),
            (
                "PIVOT_TEST_KILLED".into(),
                work.join(".test-killed").display().to_string(),
            ),
            ("PIVOT_TEST_KILL_WHEN".into(), kill_when.to_string()),
            ("SOURCE_DATE_EPOCH".into(), "1700000000".into()),
        ];
        Recipe {
            slurm,
            work: work.to_path_buf(),
            env,
        }
    }

    fn bash(&self, script: &str) -> Output {
        let out = Command::new("bash")
            .args(["-c", script])
            .current_dir(&self.work)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script}\n{:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Runs `block` in bash with the variables an earlier block left, and keeps its own.
    fn block(&self, block: &str) -> (String, String) {
        let vars = self.work.join(".test-vars");
        let load = if vars.exists() {
            format!("source {}\n", vars.display())
        } else {
            String::new()
        };
        self.bash(&format!(
            "set -e\n{load}{block}\ndeclare -p N SCRIPT MERGE jid merge > {}\n",
            vars.display()
        ));
        let got = self.bash(&format!("source {}; echo \"$jid $merge\"", vars.display()));
        let text = String::from_utf8_lossy(&got.stdout).into_owned();
        let mut ids = text.split_whitespace().map(str::to_string);
        (ids.next().unwrap(), ids.next().unwrap())
    }

    /// Submits `name` as documented and recovers from shard 3's failure as documented.
    /// Returns the job id of shard 3's second run.
    fn run(&self, name: &str, sbatch: &str) -> String {
        let start = Instant::now();
        std::fs::write(self.work.join(name), sbatch).unwrap();
        let (jid, merge) = self.block(&submission(name));
        self.slurm.wait_done(&jid, name);
        let tasks = self.slurm.jobs(&jid);
        assert_eq!(tasks.len(), 8, "{name}: {tasks:?}");
        for (k, state, exit, _) in &tasks {
            if k == "3" {
                assert_eq!(
                    (state.as_str(), exit.as_str()),
                    ("FAILED", "137:0"),
                    "{name}: shard 3 was killed"
                );
            } else {
                assert_eq!(state, "COMPLETED", "{name}: shard {k}: {tasks:?}");
            }
        }
        // The merge can never start now, as the document says (the scheduler notices on
        // its next pass).
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let stuck = self.slurm.jobs(&merge);
            if stuck
                .iter()
                .all(|j| j.1 == "PENDING" && j.3 == "DependencyNeverSatisfied")
            {
                break;
            }
            assert!(
                Instant::now() < deadline && stuck.iter().all(|j| j.1 == "PENDING"),
                "{name}: merge job {stuck:?}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        eprintln!(
            "{name}: 8 shards and a stuck merge after {:?}",
            start.elapsed()
        );
        let (jid2, merge2) = self.block(&rerun());
        assert_ne!(jid2, jid);
        let cancelled = self.slurm.jobs(&merge);
        assert!(
            cancelled.iter().all(|j| j.1 == "CANCELLED"),
            "{name}: {cancelled:?}"
        );
        self.slurm.wait_done(&jid2, name);
        self.slurm.wait_done(&merge2, name);
        for job in [&jid2, &merge2] {
            let states = self.slurm.jobs(job);
            assert!(
                states.iter().all(|j| j.1 == "COMPLETED"),
                "{name}: job {job}: {states:?}\nits log: {}",
                tail(&self.work.join(format!("shards/merge-{merge2}.log")))
            );
        }
        eprintln!(
            "{name}: shard 3 again and the merge after {:?}",
            start.elapsed()
        );
        jid2
    }
}

fn stdout_of(dir: &Path, args: &[&str], ok: &[i32]) -> Vec<u8> {
    let out = reproducible(dir, args).output().unwrap();
    stdout_if(out, ok, &format!("{args:?}"))
}

#[test]
fn docs_slurm_recipes_run_as_written_and_merge_to_the_unsharded_runs() {
    let slurm = match Slurm::start() {
        Ok(s) => s,
        Err(why) => {
            skip(&format!("no single-node Slurm here: {why}"));
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();

    // MemoryCode: the bundled dialogues (3, so shards 4-8 are empty) with one output
    // missing, so the shard holding that dialogue exits 1 with complete JSON.
    let m = dir.path().join("memorycode");
    let outputs = m.join("data/outputs/gpt-4o");
    std::fs::create_dir_all(&outputs).unwrap();
    let fixtures = repo().join("fixtures/memorycode");
    std::os::unix::fs::symlink(fixtures.join("dataset"), m.join("data/dataset")).unwrap();
    for e in std::fs::read_dir(fixtures.join("outputs/demo-model")).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap() != "output_2.json" {
            std::fs::copy(&p, outputs.join(p.file_name().unwrap())).unwrap();
        }
    }
    let r = Recipe::new(&slurm, &m, "");
    let _ = r.run("memorycode.sbatch", &script("memorycode.sbatch"));
    let whole = stdout_of(
        &m,
        &[
            "score",
            "memorycode",
            "--dataset",
            "data/dataset",
            "--outputs",
            "data/outputs/gpt-4o",
            "--format",
            "json",
        ],
        &[1],
    );
    let merged = std::fs::read(m.join("scores.json")).unwrap();
    assert!(
        merged == whole,
        "MemoryCode: the merge differs from one run"
    );
    assert!(String::from_utf8_lossy(&merged).contains("output_2.json"));

    // check: the bundled workspace (6 files, so two shards are empty), findings = exit 1.
    let k = dir.path().join("check");
    copy_tree(&repo().join("fixtures/check/workspace"), &k);
    let r = Recipe::new(&slurm, &k, "");
    let _ = r.run("check.sbatch", &script("check.sbatch"));
    let whole = stdout_of(&k, &["check", "--format", "json", "--jobs", "1"], &[1]);
    let merged = std::fs::read(k.join("findings.json")).unwrap();
    assert!(merged == whole, "check: the merge differs from one run");

    // ConvCodeWorld + ConvCodeBench against the loopback model: 5 tasks in 8 shards (three
    // empty); shard 3 killed once its live loop reached turn 2, then resumed.
    if !human_eval("the ConvCodeWorld Slurm recipe not run") {
        return;
    }
    let server = DemoServer::start(&repo().join("fixtures/model-server/humaneval-demo.json"));
    let c = dir.path().join("convcode");
    std::fs::create_dir_all(&c).unwrap();
    std::fs::write(c.join("convcode-shard.sh"), script("convcode-shard.sh")).unwrap();
    let mut r = Recipe::new(&slurm, &c, "shards/r3/results/v0.3.6/*_ITER=2.jsonl");
    let flags = "--limit 5 --turns 2 --config CF_EF_UNIT_SNF,CF_SEF";
    r.env.extend([
        ("OPENAI_BASE_URL".to_string(), server.url.clone()),
        ("REF".into(), "demo/ref".into()),
        ("MODEL".into(), "demo/target".into()),
        ("FLAGS".into(), flags.into()),
    ]);
    let again = r.run("convcode.sbatch", &script("convcode.sbatch"));
    // The second run of shard 3 resumed the folder its killed run left, and said so.
    let log = std::fs::read_to_string(c.join(format!("shards/{again}_3.log"))).unwrap();
    assert!(
        log.contains("note: resuming shards/r3") && log.contains("ended without finishing"),
        "{log}"
    );
    let whole = dir.path().join("whole");
    for (cmd, model) in [("run", "demo/ref"), ("bench", "demo/target")] {
        let mut args = vec!["convcode", cmd, "--model", model, "--base-url", &server.url];
        if cmd == "bench" {
            args.extend(["--ref-model", "demo/ref"]);
        }
        args.extend(flags.split(' '));
        let w = whole.to_string_lossy().into_owned();
        args.extend(["--results", &w]);
        stdout_of(dir.path(), &args, &[0]);
    }
    let (merged, want) = (tree(&c.join("convcode-results")), tree(&whole));
    assert_same_files(
        &merged,
        &want,
        "ConvCodeWorld: the merge against the unsharded run",
    );
    assert!(want
        .iter()
        .any(|f| f.0.contains("/static/") && f.0.ends_with("_ITER=2.jsonl")));
}
