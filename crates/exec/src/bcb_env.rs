//! BigCodeBench's evaluation environment in one step (`pivot-lsp env bigcodebench DIR`): a
//! virtualenv with the fork's pinned `Requirements/requirements-eval.txt` (carried in the
//! binary), installed with uv or pip, and a machine-readable record of what had to move
//! (`DIR/pivot-env.json`); and the check `doctor` runs on an interpreter against those pins.
//!
//! The pins are for Python 3.10, and some have no wheel for it. The rule, the same with
//! either installer (every step is the installer's own resolver and index):
//! 1. Wheels only, for every package, as pinned.
//! 2. A package the resolver finds no wheel for is built from its source distribution with
//!    the C compiler disabled (`CC=false`), within [`PURE_BUILD_TIMEOUT`]: a pure-Python
//!    sdist (Flask-Mail 0.9.1, wikipedia, wordninja) builds; one that needs compiling fails.
//! 3. A pin that still does not install moves to the nearest version that has a wheel for this
//!    Python: the lowest one above the pin, else the highest one below (scikit-image 0.18.0
//!    has no CPython 3.10 wheel: 0.19.0). Recorded under `moved`.
//! 4. A package with no wheel for this Python at any version (python-Levenshtein-wheels) is
//!    built from source with the compiler (`build_timeout`). Recorded under `from_source`.
//!
//! Transitive dependencies take the newest version the resolver allows, as `pip install -r`
//! does for the Docker image.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// The fork's `Requirements/requirements-eval.txt`, under a header naming its source.
pub const REQUIREMENTS: &str = include_str!("bigcodebench-requirements-eval.txt");
/// Where the requirements come from (in the record and `--help`).
pub const REQUIREMENTS_SOURCE: &str =
    "Requirements/requirements-eval.txt of the BigCodeBench fork ConvCodeWorld uses (sfc-gh-hhan/bigcodebench @61a443e)";
/// The record `build` writes into the environment's folder, and `doctor` looks for.
pub const RECORD: &str = "pivot-env.json";
/// Step 2's bound: a pure-Python sdist builds in seconds.
pub const PURE_BUILD_TIMEOUT: Duration = Duration::from_secs(90);

/// One requirement line `name==version` (or a bare name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    /// As written in the requirements.
    pub name: String,
    pub version: Option<String>,
}

impl Pin {
    pub fn key(&self) -> String {
        normalize(&self.name)
    }
    fn line(&self) -> String {
        match &self.version {
            Some(v) => format!("{}=={v}", self.name),
            None => self.name.clone(),
        }
    }
}

/// PEP 503's normalized name: lowercase, runs of `-`, `_`, `.` as one `-`.
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
            continue;
        }
        if sep && !out.is_empty() {
            out.push('-');
        }
        sep = false;
        out.extend(c.to_lowercase());
    }
    out
}

/// The pins of a requirements text, each package once (a repeated identical pin, like the
/// original's `requests` and `Requests`, counts once; a repeated different one is an error).
pub fn pins(text: &str) -> Result<Vec<Pin>> {
    let mut out: Vec<Pin> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let pin = match line.split_once("==") {
            Some((n, v)) => Pin {
                name: n.trim().to_string(),
                version: Some(v.trim().to_string()),
            },
            None if line
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) =>
            {
                Pin {
                    name: line.to_string(),
                    version: None,
                }
            }
            None => bail!(
                "requirements line {}: {line:?} is neither `name==version` nor a bare name",
                i + 1
            ),
        };
        match out.iter().find(|p| p.key() == pin.key()) {
            Some(p) if p.version == pin.version => {}
            Some(p) => bail!(
                "requirements line {}: {} is pinned twice ({:?} and {:?})",
                i + 1,
                pin.name,
                p.version,
                pin.version
            ),
            None => out.push(pin),
        }
    }
    Ok(out)
}

/// Which tool installs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Installer {
    /// `uv` at this path (`uv venv`, `uv pip compile`, `uv pip install`).
    Uv(PathBuf),
    /// The new environment's own pip (`python -m venv`, `pip install --dry-run --report`).
    Pip,
}

impl Installer {
    /// `uv` when it is on PATH, else pip.
    pub fn auto() -> Installer {
        match find_on_path("uv") {
            Some(p) => Installer::Uv(p),
            None => Installer::Pip,
        }
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// What to build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub dir: PathBuf,
    /// The base interpreter (`python3.10`).
    pub python: PathBuf,
    pub installer: Installer,
    /// The requirements text (default [`REQUIREMENTS`]) and what to call it in the record.
    pub requirements: String,
    pub requirements_source: String,
    /// Step 4's bound on one source build with the compiler.
    pub build_timeout: Duration,
}

/// A pin that had to move.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moved {
    pub package: String,
    pub pinned: String,
    pub installed: String,
    pub reason: String,
}

/// A package built from its source distribution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FromSource {
    pub package: String,
    pub version: String,
    /// Whether the C compiler was needed (step 4) or not (step 2).
    pub compiled: bool,
}

/// One pin and what is installed for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinState {
    pub package: String,
    pub pinned: Option<String>,
    pub installed: Option<String>,
}

/// `DIR/pivot-env.json`. The file is written for whoever inspects the environment; of what
/// it reads back, [`check`] uses only `moved`, but every field stays in the type that writes
/// it (the file's format is this struct).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    pub benchmark: String,
    pub requirements: String,
    pub requirements_sha256: String,
    pub python: String,
    pub python_version: String,
    pub installer: String,
    pub moved: Vec<Moved>,
    pub from_source: Vec<FromSource>,
    pub pins: Vec<PinState>,
    /// Every installed distribution, `name==version`, sorted.
    pub installed: Vec<String>,
    pub seconds: f64,
}

impl Record {
    pub fn load(dir: &Path) -> Result<Record> {
        let path = dir.join(RECORD);
        let text = pivot_base::bounded_read::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{}: not a pivot-env record", path.display()))
    }
}

/// A resolver's answer.
#[derive(Debug, PartialEq, Eq)]
enum Resolution {
    /// `name==version` of every package.
    Ok(Vec<(String, String)>),
    /// No wheel for `package` (at `version`, or at any version when `None`);
    /// pip also says which versions do have one.
    NoWheel {
        package: String,
        version: Option<String>,
        versions_with_wheels: Option<Vec<String>>,
    },
}

/// Builds (or completes) the environment in `opts.dir`; `say` hears each step.
pub fn build(opts: &BuildOptions, say: &dyn Fn(&str)) -> Result<Record> {
    let start = Instant::now();
    let wanted = pins(&opts.requirements)?;
    if wanted.is_empty() {
        bail!("the requirements list no package");
    }
    let dir = std::path::absolute(&opts.dir)
        .with_context(|| format!("resolving {}", opts.dir.display()))?;
    let venv_python = dir.join("bin").join("python");
    make_venv(opts, &dir, say)?;
    let (exe, py_version) = interpreter_facts(&venv_python)?;
    if !py_version.starts_with("3.10.") {
        say(&format!(
            "note: BigCodeBench pins its requirements for Python 3.10; this is Python {py_version}, so more pins may move"
        ));
    }
    let py = short_version(&py_version);
    let work = dir.join(".pivot-env");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;

    let mut current: Vec<Pin> = wanted.clone();
    let mut moved: Vec<Moved> = Vec::new();
    let mut from_source: Vec<FromSource> = Vec::new();
    let mut source_ok: BTreeSet<String> = BTreeSet::new();
    let mut tried_pure: BTreeSet<String> = BTreeSet::new();
    let resolved: Vec<(String, String)>;
    let reqs_file = work.join("requirements.txt");
    let mut rounds = 0;
    loop {
        rounds += 1;
        if rounds > 4 * wanted.len() + 8 {
            bail!("the requirements did not resolve after {rounds} rounds");
        }
        write_requirements(&reqs_file, &current)?;
        say(&format!(
            "resolving {} requirements (wheels only{})",
            current.len(),
            if source_ok.is_empty() {
                String::new()
            } else {
                format!(
                    "; from source: {}",
                    source_ok.iter().cloned().collect::<Vec<_>>().join(", ")
                )
            }
        ));
        let r = resolve(opts, &venv_python, &reqs_file, &source_ok, &work)?;
        let (package, version, versions_with_wheels) = match r {
            Resolution::Ok(list) => {
                resolved = list;
                break;
            }
            Resolution::NoWheel {
                package,
                version,
                versions_with_wheels,
            } => (package, version, versions_with_wheels),
        };
        let key = normalize(&package);
        let spec = match &version {
            Some(v) => format!("{package}=={v}"),
            None => package.clone(),
        };
        // Step 2: a pure-Python source distribution.
        if tried_pure.insert(key.clone()) {
            say(&format!(
                "{spec}: no wheel for Python {py}; building it from source without a C compiler"
            ));
            if build_from_source(
                opts,
                &venv_python,
                &spec,
                &package,
                false,
                PURE_BUILD_TIMEOUT,
            )? {
                source_ok.insert(key.clone());
                from_source.push(FromSource {
                    package: package.clone(),
                    version: version.clone().unwrap_or_default(),
                    compiled: false,
                });
                continue;
            }
        }
        let pin = current.iter().position(|p| p.key() == key);
        // Step 3: a pin moves to the nearest version with a wheel.
        if let (Some(i), Some(v)) = (pin, &version) {
            let candidates = match versions_with_wheels {
                Some(vs) => vs,
                None => wheel_versions_uv(opts, &venv_python, &package, v, &work)?,
            };
            if let Some(to) = nearest(v, &candidates) {
                say(&format!(
                    "{package}=={v}: no wheel for this Python and its source does not build without a C compiler: moved to {to}"
                ));
                moved.push(Moved {
                    package: current[i].name.clone(),
                    pinned: wanted
                        .iter()
                        .find(|p| p.key() == key)
                        .and_then(|p| p.version.clone())
                        .unwrap_or_else(|| v.clone()),
                    installed: to.clone(),
                    reason: format!(
                        "no wheel of {v} for Python {py}, and its source distribution does not build without a C compiler; {to} is the nearest version with one"
                    ),
                });
                current[i].version = Some(to);
                continue;
            }
        }
        // Step 4: no wheel at all: build it with the compiler.
        if source_ok.contains(&key) {
            bail!("{spec}: allowed to build from source and still not resolvable");
        }
        say(&format!(
            "{spec}: no wheel at any version for this Python; compiling it from source"
        ));
        if build_from_source(
            opts,
            &venv_python,
            &spec,
            &package,
            true,
            opts.build_timeout,
        )? {
            source_ok.insert(key.clone());
            from_source.push(FromSource {
                package: package.clone(),
                version: version.clone().unwrap_or_default(),
                compiled: true,
            });
            continue;
        }
        bail!(
            "{spec} cannot be installed for Python {py}: no wheel, and its source distribution did not build within {} s",
            opts.build_timeout.as_secs()
        );
    }
    write_lock(&work.join("lock.txt"), &resolved)?;
    say(&format!("installing {} packages", resolved.len()));
    install(opts, &venv_python, &reqs_file, &source_ok)?;
    let installed = installed_versions(&venv_python)?;
    // Versions built from source are known only now.
    for f in &mut from_source {
        if f.version.is_empty() {
            f.version = installed
                .get(&normalize(&f.package))
                .cloned()
                .unwrap_or_default();
        }
    }
    let pin_states: Vec<PinState> = wanted
        .iter()
        .map(|p| PinState {
            package: p.name.clone(),
            pinned: p.version.clone(),
            installed: installed.get(&p.key()).cloned(),
        })
        .collect();
    for s in &pin_states {
        if s.installed.is_none() {
            bail!("{} is not installed after the install step", s.package);
        }
    }
    let record = Record {
        benchmark: "bigcodebench".into(),
        requirements: opts.requirements_source.clone(),
        requirements_sha256: sha256_hex(opts.requirements.as_bytes()),
        python: exe.display().to_string(),
        python_version: py_version,
        installer: installer_version(opts, &venv_python),
        moved,
        from_source,
        pins: pin_states,
        installed: installed.iter().map(|(k, v)| format!("{k}=={v}")).collect(),
        seconds: start.elapsed().as_secs_f64(),
    };
    let path = dir.join(RECORD);
    let mut f = tempfile::NamedTempFile::new_in(&dir)?;
    std::io::Write::write_all(
        &mut f,
        (serde_json::to_string_pretty(&record)? + "\n").as_bytes(),
    )?;
    f.persist(&path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(record)
}

/// "3.10" of "3.10.13".
fn short_version(v: &str) -> String {
    v.split('.').take(2).collect::<Vec<_>>().join(".")
}

use pivot_base::digest::sha256_hex;

fn write_requirements(path: &Path, pins: &[Pin]) -> Result<()> {
    let text: String = pins.iter().map(|p| p.line() + "\n").collect();
    pivot_base::durable::write_atomic(path, text.as_bytes())
}

fn write_lock(path: &Path, list: &[(String, String)]) -> Result<()> {
    let text: String = list.iter().map(|(n, v)| format!("{n}=={v}\n")).collect();
    pivot_base::durable::write_atomic(path, text.as_bytes())
}

/// Runs a command, returning (success, stdout, stderr); an error only when it cannot start.
fn run(cmd: &mut Command, what: &str) -> Result<(bool, String, String)> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("starting {what}"))?;
    Ok((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// Like [`run`], killed after `limit` (then not a success).
fn run_bounded(cmd: &mut Command, what: &str, limit: Duration) -> Result<(bool, String)> {
    let log = tempfile::tempfile().context("creating a temp file")?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log.try_clone()?)
        // Its own group: the build processes it starts are stopped with it.
        .process_group(0)
        .spawn()
        .with_context(|| format!("starting {what}"))?;
    let ok = pivot_base::child::wait_or_kill(&mut child, limit, pivot_base::child::Group::Own)?
        .is_some_and(|s| s.success());
    let mut text = String::new();
    let mut log = log;
    std::io::Seek::rewind(&mut log)?;
    std::io::Read::read_to_string(&mut log, &mut text)?;
    Ok((ok, text))
}

/// The interpreter `requested` names, as an absolute path that runs. A name that does not
/// run (a pyenv shim for a version that is not the active one, say) is looked for among
/// pyenv's installed versions and the usual prefixes before giving up: uv would otherwise
/// download an interpreter of its own, which is never done here.
pub fn resolve_python(requested: &Path) -> Result<PathBuf> {
    let runs = |p: &Path| -> Option<PathBuf> {
        let out = Command::new(p)
            .args(["-c", "import sys; print(sys.executable)"])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let exe = String::from_utf8(out.stdout).ok()?;
        let exe = exe.trim();
        (out.status.success() && !exe.is_empty()).then(|| PathBuf::from(exe))
    };
    if let Some(p) = runs(requested) {
        return Ok(p);
    }
    let name = requested
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let version = name
        .strip_prefix("python")
        .filter(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'));
    if let (Some(version), true) = (version, requested.components().count() == 1) {
        let mut candidates: Vec<PathBuf> = Vec::new();
        let pyenv = std::env::var_os("PYENV_ROOT")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pyenv")));
        if let Some(versions) = pyenv.map(|r| r.join("versions")) {
            let mut found: Vec<PathBuf> = std::fs::read_dir(&versions)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(&format!("{version}.")))
                })
                .collect();
            // The newest patch release first.
            found.sort_by_key(|p| {
                std::cmp::Reverse(pep440(&p.file_name().unwrap_or_default().to_string_lossy()))
            });
            candidates.extend(found.into_iter().map(|p| p.join("bin").join(&name)));
        }
        for prefix in ["/usr/local/bin", "/usr/bin"] {
            candidates.push(Path::new(prefix).join(&name));
        }
        if let Some(p) = candidates.iter().find_map(|c| runs(c)) {
            return Ok(p);
        }
    }
    bail!(
        "{} does not run here, and no such interpreter was found in pyenv's versions or the usual \
         prefixes: install it (e.g. `pyenv install 3.10`, or your distribution's python3.10) or \
         name one with --python",
        requested.display()
    )
}

fn make_venv(opts: &BuildOptions, dir: &Path, say: &dyn Fn(&str)) -> Result<()> {
    if dir.join("pyvenv.cfg").is_file() {
        say(&format!(
            "{}: an existing environment, completed in place",
            dir.display()
        ));
        return Ok(());
    }
    if dir.exists()
        && std::fs::read_dir(dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .next()
            .is_some()
    {
        bail!(
            "{} exists, is not empty and is not a virtualenv: give a new folder",
            dir.display()
        );
    }
    let python = resolve_python(&opts.python)?;
    say(&format!(
        "creating a virtualenv in {} with {}",
        dir.display(),
        python.display()
    ));
    let (ok, _, err) = match &opts.installer {
        Installer::Uv(uv) => run(
            Command::new(uv)
                .args(["venv", "--quiet", "--allow-existing", "--python"])
                .arg(&python)
                // Only the interpreter named: never one uv would download.
                .env("UV_PYTHON_DOWNLOADS", "never")
                .arg(dir),
            "uv venv",
        )?,
        Installer::Pip => run(
            Command::new(&python).args(["-m", "venv"]).arg(dir),
            "python -m venv",
        )?,
    };
    if !ok {
        bail!(
            "could not create a virtualenv with {}: {}",
            opts.python.display(),
            err.trim()
        );
    }
    Ok(())
}

/// The interpreter behind the venv's (symlinks resolved) and its version.
fn interpreter_facts(python: &Path) -> Result<(PathBuf, String)> {
    let (ok, out, err) = run(
        Command::new(python).args([
            "-c",
            "import os, sys, platform; print(os.path.realpath(sys.executable)); print(platform.python_version())",
        ]),
        &python.display().to_string(),
    )?;
    if !ok {
        bail!("{} does not run: {}", python.display(), err.trim());
    }
    let mut lines = out.lines();
    let exe = PathBuf::from(lines.next().unwrap_or_default());
    let version = lines.next().unwrap_or_default().trim().to_string();
    Ok((exe, version))
}

fn installer_version(opts: &BuildOptions, venv_python: &Path) -> String {
    let out = match &opts.installer {
        Installer::Uv(uv) => Command::new(uv).arg("--version").output(),
        Installer::Pip => Command::new(venv_python)
            .args(["-m", "pip", "--version"])
            .output(),
    };
    out.ok()
        .map(|o| {
            let s = String::from_utf8_lossy(&o.stdout);
            s.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
        })
        .unwrap_or_default()
}

fn no_binary_args(source_ok: &BTreeSet<String>) -> Vec<String> {
    source_ok
        .iter()
        .flat_map(|p| ["--no-binary".to_string(), p.clone()])
        .collect()
}

fn resolve(
    opts: &BuildOptions,
    venv_python: &Path,
    reqs: &Path,
    source_ok: &BTreeSet<String>,
    work: &Path,
) -> Result<Resolution> {
    match &opts.installer {
        Installer::Uv(uv) => {
            let lock = work.join("uv-compile.txt");
            let (ok, _, err) = run(
                Command::new(uv)
                    .args(["pip", "compile", "--quiet", "--no-header", "--no-annotate"])
                    .arg("--python")
                    .arg(venv_python)
                    .args(["--only-binary", ":all:"])
                    .args(no_binary_args(source_ok))
                    .arg(reqs)
                    .arg("-o")
                    .arg(&lock),
                "uv pip compile",
            )?;
            if ok {
                let text = pivot_base::bounded_read::read_to_string(&lock)?;
                return Ok(Resolution::Ok(parse_lock(&text)));
            }
            match parse_uv_no_wheel(&err) {
                Some((package, version)) => Ok(Resolution::NoWheel {
                    package,
                    version,
                    versions_with_wheels: None,
                }),
                None => bail!("the requirements do not resolve (uv):\n{}", err.trim()),
            }
        }
        Installer::Pip => {
            let report = work.join("pip-report.json");
            let (ok, _, err) = run(
                Command::new(venv_python)
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--dry-run",
                        "--ignore-installed",
                        "--quiet",
                        "--disable-pip-version-check",
                        "--only-binary",
                        ":all:",
                    ])
                    .args(no_binary_args(source_ok))
                    .arg("--report")
                    .arg(&report)
                    .arg("-r")
                    .arg(reqs),
                "pip install --dry-run",
            )?;
            if ok {
                return Ok(Resolution::Ok(parse_pip_report(
                    &pivot_base::bounded_read::read_to_string(&report)?,
                )?));
            }
            match parse_pip_no_wheel(&err) {
                Some((package, version, versions)) => Ok(Resolution::NoWheel {
                    package,
                    version,
                    versions_with_wheels: if versions.is_empty() {
                        None
                    } else {
                        Some(versions)
                    },
                }),
                None => bail!("the requirements do not resolve (pip):\n{}", err.trim()),
            }
        }
    }
}

fn parse_lock(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            if l.starts_with('#') {
                return None;
            }
            let (n, v) = l.split_once("==")?;
            Some((
                n.trim().to_string(),
                v.split_whitespace().next()?.to_string(),
            ))
        })
        .collect()
}

fn parse_pip_report(text: &str) -> Result<Vec<(String, String)>> {
    #[derive(Deserialize)]
    struct Report {
        install: Vec<Item>,
    }
    #[derive(Deserialize)]
    struct Item {
        metadata: Meta,
    }
    #[derive(Deserialize)]
    struct Meta {
        name: String,
        version: String,
    }
    let r: Report =
        serde_json::from_str(text).context("pip's --report is not the expected JSON")?;
    let mut v: Vec<(String, String)> = r
        .install
        .into_iter()
        .map(|i| (normalize(&i.metadata.name), i.metadata.version))
        .collect();
    v.sort();
    Ok(v)
}

/// uv: "Because flask-mail==0.9.1 has no usable wheels" / "Because all versions of X have no
/// usable wheels" (the first such clause).
fn parse_uv_no_wheel(err: &str) -> Option<(String, Option<String>)> {
    let re = regex::Regex::new(
        r"(?:all versions of ([A-Za-z0-9][A-Za-z0-9._\-]*)|([A-Za-z0-9][A-Za-z0-9._\-]*)==([^\s,]+)) ha(?:s|ve) no usable wheels",
    )
    .expect("valid regex");
    let c = re.captures(err)?;
    match (c.get(1), c.get(2), c.get(3)) {
        (Some(all), _, _) => Some((all.as_str().to_string(), None)),
        (None, Some(n), Some(v)) => Some((n.as_str().to_string(), Some(v.as_str().to_string()))),
        _ => None,
    }
}

/// pip: "Could not find a version that satisfies the requirement X==V (from versions: a, b)".
fn parse_pip_no_wheel(err: &str) -> Option<(String, Option<String>, Vec<String>)> {
    let re = regex::Regex::new(
        r"Could not find a version that satisfies the requirement ([A-Za-z0-9][A-Za-z0-9._\-]*)(?:==(\S+))? \(from versions: ([^)]*)\)",
    )
    .expect("valid regex");
    let c = re.captures(err)?;
    let versions: Vec<String> = c[3]
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s != "none")
        .collect();
    Some((
        c[1].to_string(),
        c.get(2).map(|m| m.as_str().to_string()),
        versions,
    ))
}

/// A PEP 440 version (`pep440_rs`): epochs, pre-, post- and dev-releases and local labels
/// ordered as pip orders them. None for a string that is not one.
fn pep440(v: &str) -> Option<pep440_rs::Version> {
    v.trim().parse().ok()
}

/// Equal as PEP 440 versions (`4.15` is `4.15.0`, case does not matter); two strings that
/// are not versions are equal when they are the same text.
fn same_version(a: &str, b: &str) -> bool {
    match (pep440(a), pep440(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.trim().eq_ignore_ascii_case(b.trim()),
    }
}

/// The lowest stable release above `pinned`, else the highest below (pre- and
/// dev-releases are never chosen; a post-release is a stable one).
fn nearest(pinned: &str, candidates: &[String]) -> Option<String> {
    let p = pep440(pinned)?;
    let stable: Vec<(&String, pep440_rs::Version)> = candidates
        .iter()
        .filter_map(|c| Some((c, pep440(c)?)))
        .filter(|(_, v)| v.is_stable())
        .collect();
    let above = stable
        .iter()
        .filter(|(_, v)| *v > p)
        .min_by(|a, b| a.1.cmp(&b.1));
    let below = stable
        .iter()
        .filter(|(_, v)| *v < p)
        .max_by(|a, b| a.1.cmp(&b.1));
    above.or(below).map(|(c, _)| (*c).clone())
}

/// uv has no `index versions`: the nearest wheel above (`--resolution lowest-direct` of
/// `X>V`) and below (`X<V`), each one resolution of that package alone.
fn wheel_versions_uv(
    opts: &BuildOptions,
    venv_python: &Path,
    package: &str,
    pinned: &str,
    work: &Path,
) -> Result<Vec<String>> {
    let Installer::Uv(uv) = &opts.installer else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for (spec, resolution) in [(">", "lowest-direct"), ("<", "highest")] {
        let req = work.join("probe.txt");
        pivot_base::durable::write_scratch(&req, format!("{package}{spec}{pinned}\n"))?;
        let out = work.join("probe-lock.txt");
        let (ok, _, _) = run(
            Command::new(uv)
                .args([
                    "pip",
                    "compile",
                    "--quiet",
                    "--no-header",
                    "--no-annotate",
                    "--no-deps",
                ])
                .arg("--python")
                .arg(venv_python)
                .args(["--only-binary", ":all:", "--resolution", resolution])
                .arg(&req)
                .arg("-o")
                .arg(&out),
            "uv pip compile",
        )?;
        if ok {
            let lock = parse_lock(&pivot_base::bounded_read::read_to_string(&out)?);
            if let Some((_, v)) = lock
                .into_iter()
                .find(|(n, _)| normalize(n) == normalize(package))
            {
                found.push(v);
            }
        }
    }
    Ok(found)
}

/// Installs `spec` from its source distribution into the environment, without its
/// dependencies, within `limit`; `compiler: false` disables the C compiler. Nothing cached is
/// reused, so the answer does not depend on what was built on this machine before.
fn build_from_source(
    opts: &BuildOptions,
    venv_python: &Path,
    spec: &str,
    package: &str,
    compiler: bool,
    limit: Duration,
) -> Result<bool> {
    let mut cmd = match &opts.installer {
        Installer::Uv(uv) => {
            let mut c = Command::new(uv);
            c.args(["pip", "install", "--quiet", "--no-deps", "--no-cache"])
                .arg("--python")
                .arg(venv_python)
                .args(["--no-binary", package, spec]);
            c
        }
        Installer::Pip => {
            let mut c = Command::new(venv_python);
            c.args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--no-cache-dir",
                "--no-binary",
                package,
                spec,
            ]);
            c
        }
    };
    if !compiler {
        for var in ["CC", "CXX", "LDSHARED", "FC"] {
            cmd.env(var, "false");
        }
    }
    let (ok, _) = run_bounded(&mut cmd, "a source build", limit)?;
    Ok(ok)
}

fn install(
    opts: &BuildOptions,
    venv_python: &Path,
    reqs: &Path,
    source_ok: &BTreeSet<String>,
) -> Result<()> {
    let (ok, _, err) = match &opts.installer {
        Installer::Uv(uv) => run(
            Command::new(uv)
                .args(["pip", "install", "--quiet"])
                .arg("--python")
                .arg(venv_python)
                .args(["--only-binary", ":all:"])
                .args(no_binary_args(source_ok))
                .arg("-r")
                .arg(reqs),
            "uv pip install",
        )?,
        Installer::Pip => run(
            Command::new(venv_python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--only-binary",
                    ":all:",
                ])
                .args(no_binary_args(source_ok))
                .arg("-r")
                .arg(reqs),
            "pip install",
        )?,
    };
    if !ok {
        bail!("installing the requirements failed:\n{}", err.trim());
    }
    Ok(())
}

/// Every installed distribution of `python`: normalized name -> version.
pub fn installed_versions(python: &Path) -> Result<BTreeMap<String, String>> {
    let (ok, out, err) = run(
        Command::new(python).args([
            "-c",
            "import importlib.metadata as m, json\n\
             print(json.dumps({d.metadata['Name']: d.version for d in m.distributions() if d.metadata['Name']}))",
        ]),
        &python.display().to_string(),
    )?;
    if !ok {
        bail!(
            "{} could not list its packages: {}",
            python.display(),
            err.trim()
        );
    }
    let map: BTreeMap<String, String> =
        serde_json::from_str(out.trim()).context("the package list is not JSON")?;
    Ok(map.into_iter().map(|(k, v)| (normalize(&k), v)).collect())
}

/// What `doctor` says about an interpreter and BigCodeBench's pins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PinCheck {
    /// Built by `env bigcodebench` (its record found in the interpreter's prefix).
    pub recorded: bool,
    pub as_pinned: usize,
    /// Moved as the record says.
    pub moved: Vec<Moved>,
    /// `name pinned -> installed-or-missing`, against the pins and the record's moves.
    pub differ: Vec<String>,
    pub total: usize,
}

impl PinCheck {
    /// Matches: every pin as pinned or as the record moved it.
    pub fn matches(&self) -> bool {
        self.recorded && self.differ.is_empty()
    }

    /// One line for `doctor`.
    pub fn describe(&self) -> String {
        let moved = if self.moved.is_empty() {
            String::new()
        } else {
            format!(
                ", {} moved as recorded ({})",
                self.moved.len(),
                self.moved
                    .iter()
                    .map(|m| format!("{} {} -> {}", m.package, m.pinned, m.installed))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        if !self.recorded {
            return format!(
                "not built by `pivot-lsp env bigcodebench` (no {RECORD} in its prefix): {} of BigCodeBench's {} pins installed as pinned",
                self.as_pinned, self.total
            );
        }
        if self.differ.is_empty() {
            format!(
                "matches BigCodeBench's pins: {} of {} as pinned{moved}",
                self.as_pinned, self.total
            )
        } else {
            format!(
                "does not match BigCodeBench's pins: {} differ ({}){moved}; rebuild with `pivot-lsp env bigcodebench DIR`",
                self.differ.len(),
                self.differ.join(", ")
            )
        }
    }
}

/// Compares `python`'s packages with the pins, and with the record of moves when the
/// environment was built by [`build`] (the record sits in `sys.prefix`).
pub fn check(python: &Path) -> Result<PinCheck> {
    let (ok, out, err) = run(
        Command::new(python).args(["-c", "import sys; print(sys.prefix)"]),
        &python.display().to_string(),
    )?;
    if !ok {
        bail!("{} does not run: {}", python.display(), err.trim());
    }
    let prefix = PathBuf::from(out.trim());
    let record = if prefix.join(RECORD).is_file() {
        Some(Record::load(&prefix)?)
    } else {
        None
    };
    let installed = installed_versions(python)?;
    let wanted = pins(REQUIREMENTS)?;
    let mut c = PinCheck {
        recorded: record.is_some(),
        as_pinned: 0,
        moved: Vec::new(),
        differ: Vec::new(),
        total: wanted.len(),
    };
    for p in &wanted {
        let have = installed.get(&p.key());
        let moved = record.as_ref().and_then(|r| {
            r.moved
                .iter()
                .find(|m| normalize(&m.package) == p.key())
                .cloned()
        });
        match (have, &p.version) {
            (None, _) => c.differ.push(format!("{} missing", p.name)),
            (Some(_), None) => c.as_pinned += 1,
            (Some(h), Some(v)) if same_version(h, v) => c.as_pinned += 1,
            (Some(h), Some(v)) => match moved {
                Some(m) if same_version(&m.installed, h) => c.moved.push(m),
                _ => c.differ.push(format!("{} {v} -> {h}", p.name)),
            },
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interpreter_is_resolved_to_a_path_that_runs_or_named_in_the_error() {
        let p = resolve_python(Path::new("python3")).expect("python3 runs here");
        assert!(p.is_absolute(), "{}", p.display());
        let e = resolve_python(Path::new("python9.97"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("python9.97 does not run here") && e.contains("--python"),
            "{e}"
        );
    }

    #[test]
    fn pins_of_the_shipped_requirements() {
        let ps = pins(REQUIREMENTS).unwrap();
        // requests/Requests, statsmodels and xlrd are listed twice in the original.
        assert!(ps.iter().filter(|p| p.key() == "requests").count() == 1);
        let levenshtein = ps
            .iter()
            .find(|p| p.key() == "python-levenshtein-wheels")
            .unwrap();
        assert_eq!(levenshtein.version, None);
        let sk = ps.iter().find(|p| p.key() == "scikit-image").unwrap();
        assert_eq!(sk.version.as_deref(), Some("0.18.0"));
        assert!(pins("a==1\nA==2\n").is_err());
        assert!(pins("a>=1\n").is_err());
    }

    #[test]
    fn shipped_requirements_equal_the_forks() {
        let orig = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/originals/bigcodebench-fork/Requirements/requirements-eval.txt");
        let Ok(text) = std::fs::read_to_string(&orig) else {
            pivot_test_support::test_skip::skip("no ../shared/originals/bigcodebench-fork");
            return;
        };
        let body: String = REQUIREMENTS
            .lines()
            .skip_while(|l| l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(body, text.trim_end_matches('\n'));
    }

    #[test]
    fn names_normalize_as_pep_503() {
        assert_eq!(normalize("Flask-Mail"), "flask-mail");
        assert_eq!(
            normalize("python_Levenshtein.wheels"),
            "python-levenshtein-wheels"
        );
        assert_eq!(normalize("PyYAML"), "pyyaml");
    }

    #[test]
    fn installer_messages_are_read() {
        let uv = "  × No solution found when resolving dependencies:\n  ╰─▶ Because scikit-image==0.18.0 has no usable wheels and you require scikit-image==0.18.0, we can conclude that your requirements are unsatisfiable.";
        assert_eq!(
            parse_uv_no_wheel(uv),
            Some(("scikit-image".into(), Some("0.18.0".into())))
        );
        let uv_all = "Because all versions of python-levenshtein-wheels have no usable wheels and you require python-levenshtein-wheels, we can conclude";
        assert_eq!(
            parse_uv_no_wheel(uv_all),
            Some(("python-levenshtein-wheels".into(), None))
        );
        let pip = "ERROR: Could not find a version that satisfies the requirement scikit-image==0.18.0 (from versions: 0.19.0rc0, 0.19.0, 0.19.1)\nERROR: No matching distribution found";
        assert_eq!(
            parse_pip_no_wheel(pip),
            Some((
                "scikit-image".into(),
                Some("0.18.0".into()),
                vec!["0.19.0rc0".into(), "0.19.0".into(), "0.19.1".into()]
            ))
        );
        let none = "ERROR: Could not find a version that satisfies the requirement wordninja==2.0.0 (from versions: none)";
        assert_eq!(parse_pip_no_wheel(none).unwrap().2, Vec::<String>::new());
    }

    #[test]
    fn versions_compare_as_pep_440_release_numbers() {
        assert!(same_version("4.15", "4.15.0"));
        assert!(same_version("2023.3.post1", "2023.3.post1"));
        assert!(!same_version("2023.3", "2023.3.post1"));
        assert!(!same_version("1.21.2", "1.21.20"));
        assert!(same_version("1.0", "1"));
        // What the hand-written comparison got wrong: epochs, pre-, post- and dev-releases.
        assert!(same_version("1.0RC1", "1.0rc1"));
        assert!(!same_version("1!1.0", "1.0"));
        assert!(same_version("not-a-version", "NOT-A-VERSION"));
    }

    #[test]
    fn releases_order_as_pep_440_orders_them() {
        let vs: Vec<String> = ["1.0.dev1", "1.0a1", "1.0rc1", "1.0", "1.0.post1", "1!0.5"]
            .map(String::from)
            .to_vec();
        // Above 0.9: the first stable release, not the dev- or pre-releases before it.
        assert_eq!(nearest("0.9", &vs).as_deref(), Some("1.0"));
        // Above 1.0: its post-release; an epoch outranks every release without one.
        assert_eq!(nearest("1.0", &vs[..5]).as_deref(), Some("1.0.post1"));
        assert_eq!(nearest("2.0", &vs).as_deref(), Some("1!0.5"));
        assert_eq!(nearest("not a version", &vs), None);
    }

    #[test]
    fn nearest_prefers_the_next_final_release_above() {
        let vs: Vec<String> = ["0.17.2", "0.19.0rc0", "0.19.0", "0.19.1", "0.20.0.dev0"]
            .map(String::from)
            .to_vec();
        assert_eq!(nearest("0.18.0", &vs).as_deref(), Some("0.19.0"));
        assert_eq!(nearest("0.30", &vs).as_deref(), Some("0.19.1"));
        assert_eq!(
            nearest("1.0", &["2023.3.post1".into()]).as_deref(),
            Some("2023.3.post1")
        );
        assert_eq!(nearest("1.0", &[]), None);
    }
}
