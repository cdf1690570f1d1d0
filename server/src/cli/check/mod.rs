//! `pivot-lsp check [PATH]...`: the editor's verdicts as a CI step. The files are checked
//! by the language server itself (a child `pivot-lsp serve` driven over stdio, see
//! drive.rs), so CI reports what the editor shows. This file parses the flags,
//! reads the inputs and writes the outputs.

pub mod bench;
mod cache;
mod config;
mod drive;
pub mod history;
mod report;
mod sarif;

use crate::cli::shared::log_safe;
use crate::cli::shared::progress::Progress;
use crate::lsp::{SetupArgs, Text};
use anyhow::{Context, Result};
use cache::CheckCache;
use clap::ValueEnum;
use drive::{drive, Checked, Driven};
use pivot_base::cache_dir::CacheDir;
use pivot_workspace::replies::{ActivePivot, HeadlessSetup};
use pivot_workspace::walk::{named, relative, sort_problems, walk, Problem, SourceFile};
use report::{Finding, Inputs};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `check --help`: what it does, where pivots come from, exit codes.
pub const LONG_ABOUT: &str =
    "Check Python files against the active pivots, through the language server.\n\n\
The current directory is the workspace root. Directories are walked with .gitignore / \
.ignore respected and virtualenv, cache and build folders skipped. Each file is opened in a \
`pivot-lsp serve` child process exactly as an editor opens it, and the diagnostics it \
publishes are the findings (pivot violations, and syntax errors with source `python`).\n\n\
Pivots come from the nearest pivots.toml in the current directory or a folder above it, \
up to the repository root (the folder holding .git), as ruff finds its settings: that \
file's folder is the root the paths are reported from and the cache lives in; a pivots.toml \
in a folder below applies to that folder's files instead. --pivots names the file instead \
(the current directory is then the root). With no pivots file, a warning says so and only \
syntax is checked; --require-pivots makes it an error (exit 3). A MemoryCode conversation \
(--conversation) adds its pivots at --session (default: the latest session). \
--show-settings FILE says which pivots file and pivots apply to FILE, and why.\n\n\
What the server published for each file is cached in .pivot-cache/ at the root (git-ignored \
by its own .gitignore): a later run with the same pivots, session and pivot-lsp version \
opens only the files whose text changed, and writes the same bytes. --no-cache bypasses it; \
`pivot-lsp clean` removes it.\n\n\
Exit codes: 0 no finding, 1 findings (0 with --exit-zero), 2 a usage or input error \
(missing path, invalid pivots.toml, unreadable conversation), 3 no pivots file found with \
--require-pivots. Files that cannot be checked \
(unreadable, binary, too large, symlink loops, FIFOs and devices) are reported on stderr and \
the rest are checked.\n\n\
The tree may come from a pull request: nothing is read from outside the current directory \
through it. Symlinks that lead out of it (or to a device or FIFO) are reported and not \
followed, and a pivots file, conversation or folder written as a path inside it must stay \
inside it; a path written outside it (absolute, or with ..) is read as named. Every input \
is read only if it is a regular file (at most --max-file-size for Python files, \
PIVOT_MAX_FILE_BYTES, default 64 MiB, for the others). File names and texts are quoted or \
escaped in every format so that none can forge a line of the report or a CI workflow command.";

#[derive(clap::Args, Clone, Debug)]
pub struct CheckArgs {
    /// Files or folders to check, relative to the current directory.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// The pivots file [default: pivots.toml at the root, when present]
    #[arg(long, value_name = "FILE")]
    pub pivots: Option<PathBuf>,
    /// A MemoryCode dialogue_N.json whose pivots apply too.
    #[arg(long, value_name = "FILE")]
    pub conversation: Option<PathBuf>,
    /// Session index, 0-based [default: the latest: every pivot in its newest version]
    #[arg(long, value_name = "K")]
    pub session: Option<usize>,
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Write the report here instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit 0 even when there are findings (input errors still exit 2).
    #[arg(long)]
    pub exit_zero: bool,
    /// Also write a deterministic analysis bundle (inputs with SHA-256, pivots, findings
    /// with fingerprints) to FILE.
    #[arg(long, value_name = "FILE")]
    pub bundle: Option<PathBuf>,
    /// Report only findings that are not in this bundle (new violations), and print how
    /// many of its findings are fixed.
    #[arg(long, value_name = "BUNDLE")]
    pub baseline: Option<PathBuf>,
    /// Language servers run at once [default: the number of CPUs, at most 8]
    #[arg(long, short)]
    pub jobs: Option<usize>,
    /// Check only shard K of N (1-based) of the files found (their sorted paths dealt
    /// round robin) and write JSON that `pivot-lsp merge` joins into the unsharded run's
    /// JSON (needs --format json; SARIF, text, GitHub, --bundle and --baseline are not sharded).
    #[arg(long, value_name = "K/N", conflicts_with_all = ["bundle", "baseline"])]
    pub shard: Option<pivot_bench::shard::Shard>,
    /// Files larger than this many MB are reported on stderr and not checked [default: the
    /// server's analysis limit, PIVOT_MAX_ANALYSED_BYTES, 4 MiB]. The servers analyse
    /// every file up to it: there is one limit, not two.
    #[arg(long, value_name = "MB")]
    pub max_file_size: Option<f64>,
    /// Neither read nor write the cache: every file is checked by a server.
    #[arg(long)]
    pub no_cache: bool,
    /// The cache folder, relative to the root [default: .pivot-cache]. `pivot-lsp clean`
    /// removes it.
    #[arg(long, value_name = "DIR", env = "PIVOT_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Check the tree of this git commit (a branch, tag, `HEAD~2`, an id) against the
    /// pivots file of that commit, as a checkout of it would be checked; every input path
    /// is read from the commit. Nothing is checked out.
    #[arg(long, value_name = "REV", conflicts_with_all = ["shard", "baseline", "history"])]
    pub rev: Option<String>,
    /// Check every commit of the branch's first-parent history (from --since, to HEAD)
    /// against the pivots of that commit, and report, per pivot, its findings in each
    /// commit after each of its versions took effect: those that break the version in
    /// force and those that still follow the version before it (the update forgotten).
    /// The sessions are the commits that changed the pivots file.
    #[arg(long, conflicts_with_all = ["shard", "baseline", "bundle"])]
    pub history: bool,
    /// With --history: start after this commit, whose findings are the baseline (none of
    /// them is new) [default: the first commit].
    #[arg(long, value_name = "REV", requires = "history")]
    pub since: Option<String>,
    /// With --history: the sessions are the commits that change the rules read from this
    /// file [default: the pivots file]: an instruction file (AGENTS.md, CLAUDE.md, ...) read
    /// as `pivots import` reads it, or a pivots.toml. A change of its words that gives the
    /// same rules (a comment, a moved line) is no session.
    #[arg(long, value_name = "FILE", requires = "history")]
    pub instructions: Option<PathBuf>,
    /// No pivots file found is an error (exit 3), not a warning: for CI, where a check
    /// without pivots would pass without checking anything.
    #[arg(long)]
    pub require_pivots: bool,
    /// Print which pivots file and which pivots apply to FILE, and why; check nothing.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["rev", "history", "shard"])]
    pub show_settings: Option<PathBuf>,
    /// Only these of the files found (relative paths): the history checks again only the
    /// files a commit changed. Not a flag.
    #[arg(skip)]
    pub only: Option<std::collections::BTreeSet<String>>,
}

#[derive(clap::Args, Debug)]
pub struct CleanArgs {
    /// The cache folder, relative to the current directory [default: .pivot-cache]
    #[arg(long, value_name = "DIR", env = "PIVOT_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// `pivot-lsp clean`: the cache folder removed (refused when it is not pivot-lsp's).
pub fn clean(a: CleanArgs) -> Result<i32> {
    let root = std::env::current_dir().context("cannot read the current directory")?;
    let dir = cache_dir(&root, a.cache_dir.as_deref());
    match CacheDir::at(&dir).clean() {
        Ok(true) => eprintln!("removed {}", log_safe::text(&dir.display().to_string())),
        Ok(false) => eprintln!("no cache in {}", log_safe::text(&dir.display().to_string())),
        Err(e) => return input_error(format!("{e:#}")),
    }
    Ok(0)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// path:line:col: [code] message
    Text,
    Json,
    /// SARIF 2.1.0 (GitHub code scanning)
    Sarif,
    /// GitHub Actions annotations (::warning / ::error)
    Github,
}

/// Input errors: exit 2 with the message (3 for no pivots file with --require-pivots).
/// A message may have several lines (a TOML error shows the line it is about).
pub fn input_error(msg: String) -> Result<i32> {
    eprintln!("error: {}", log_safe::lines(&msg));
    Ok(match msg.starts_with(config::NO_PIVOTS_START) {
        true => config::NO_PIVOTS_EXIT,
        false => 2,
    })
}

/// A pivots file, conversation or baseline named on the command line (relative to the
/// root): its path, kept inside the root when written inside it (pivot_workspace::walk::named).
fn named_input(root: &Path, p: &Path) -> std::result::Result<PathBuf, String> {
    named(root, p)
        .map(|(real, _)| real)
        .map_err(|e| format!("{}: {e}", p.display()))
}

/// A named input's bytes, through the bounded reader.
fn read_input(root: &Path, p: &Path) -> std::result::Result<(PathBuf, Vec<u8>), String> {
    let real = named_input(root, p)?;
    let bytes = pivot_base::bounded_read::read(&real)
        .map_err(|e| format!("{}: cannot read: {e}", p.display()))?;
    Ok((real, bytes))
}

/// A named input: its resolved path and bytes.
type ReadFile = (PathBuf, Vec<u8>);

/// The inputs a run names besides the tree, each read (bounded, inside the root) and
/// checked before anything is started.
struct Named {
    baseline: Option<HashSet<String>>,
    /// (resolved path, bytes) of the pivots file and of the conversation.
    pivots_file: Option<(PathBuf, Vec<u8>)>,
    conversation: Option<(PathBuf, Vec<u8>)>,
}

/// The folder `check` runs in (its root), resolved.
pub fn root_here() -> Result<PathBuf> {
    std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .context("cannot read the current directory")
}

/// `check` on the files as they are (`--rev` and `--history`: history.rs).
pub fn run(mut a: CheckArgs) -> Result<i32> {
    let here = root_here()?;
    if let Some(file) = &a.show_settings {
        return config::show_settings(&here, file);
    }
    // The nearest pivots file's folder is the root (unless one is named): the inputs the
    // user wrote from here are written from there.
    let root = match &a.pivots {
        Some(_) => here.clone(),
        None => config::discover(&here).unwrap_or_else(|| here.clone()),
    };
    if root != here {
        let from_root = |p: &Path| config::from_root(&root, &here, p);
        a.paths = a.paths.iter().map(|p| from_root(p)).collect();
        a.baseline = a.baseline.as_deref().map(from_root);
        a.conversation = a.conversation.as_deref().map(from_root);
    }
    check_and_write(&a, &root, &root)
}

/// [`check_tree`], then [`write_outcome`] (or the input error), as one run of `check`.
pub fn check_and_write(a: &CheckArgs, tree: &Path, shown: &Path) -> Result<i32> {
    match check_tree(a, tree, shown)? {
        Ok(outcome) => write_outcome(a, shown, outcome),
        Err(e) => input_error(e),
    }
}

/// One run's results, before they are written.
pub struct Outcome {
    pub session: usize,
    pub pivots: Vec<ActivePivot>,
    /// Sorted; only the new ones with --baseline.
    pub findings: Vec<Finding>,
    pub problems: Vec<Problem>,
    /// (path, SHA-256) of each file checked.
    pub checked: Vec<(String, String)>,
    pub setup_errors: Vec<String>,
    from_cache: usize,
    /// Every file the walk found (a shard's merge needs them).
    all: Vec<String>,
}

/// Checks the files of `tree` as the flags say (the bundle written, the baseline applied),
/// reporting paths relative to it; `shown` is the root the reports and the cache name (the
/// work tree when `tree` is a commit's files written out). `Err(message)`: an input error.
pub fn check_tree(
    a: &CheckArgs,
    tree: &Path,
    shown: &Path,
) -> Result<std::result::Result<Outcome, String>> {
    let root = tree;
    let named = match named_inputs(root, a) {
        Ok(n) => n,
        Err(e) => return Ok(Err(e)),
    };
    let mut walked = match walk(root, &a.paths, a.shard) {
        Ok(w) => w,
        Err(e) => return Ok(Err(format!("{e:#}"))),
    };
    if let Some(only) = &a.only {
        walked.files.retain(|f| only.contains(&f.rel));
        walked.problems.retain(|p| only.contains(&p.path));
    }

    // The files of each pivots file: the root's (or the one named), and each nested one's
    // (a pivots.toml in a folder below applies to its files, as in ruff).
    let mut groups: Vec<(Option<ReadFile>, Vec<usize>)> =
        vec![(named.pivots_file.clone(), Vec::new())];
    if a.pivots.is_none() {
        let mut nested = config::Nested::new(root);
        let mut at: HashMap<PathBuf, usize> = HashMap::new();
        for (i, f) in walked.files.iter().enumerate() {
            let Some(dir) = nested.config_dir(&f.abs) else {
                groups[0].1.push(i);
                continue;
            };
            let g = match at.get(&dir) {
                Some(&g) => g,
                None => {
                    let file =
                        config::config_file(&dir).unwrap_or_else(|| dir.join(config::CONFIG));
                    let rel = PathBuf::from(relative(root, &file));
                    match read_input(root, &rel) {
                        Ok(file) => groups.push((Some(file), Vec::new())),
                        Err(e) => return Ok(Err(e)),
                    }
                    at.insert(dir, groups.len() - 1);
                    groups.len() - 1
                }
            };
            groups[g].1.push(i);
        }
    } else {
        groups[0].1 = (0..walked.files.len()).collect();
    }
    if groups.iter().all(|(p, _)| p.is_none()) && named.conversation.is_none() {
        let message = config::no_pivots_message(shown);
        if a.require_pivots {
            return Ok(Err(message));
        }
        eprintln!("warning: {}", log_safe::text(&message));
    }

    let jobs = a.jobs.unwrap_or_else(default_jobs);
    let max_bytes = max_file_bytes(a);
    // Without the user's cache secret nothing is cached (see cache.rs).
    let secret = match a.no_cache {
        true => None,
        false => pivot_base::cache_dir::secret()
            .map_err(|e| {
                eprintln!(
                    "warning: no cache this run: {}",
                    log_safe::text(&format!("{e:#}"))
                )
            })
            .ok(),
    };
    let mut results: Vec<Option<Checked>> = vec![None; walked.files.len()];
    let mut merged: Option<Driven> = None;
    let mut from_cache = 0;
    for (g, (pivots_file, indices)) in groups.iter().enumerate() {
        // A nested pivots file with no file to check has nothing to say.
        if g > 0 && indices.is_empty() {
            continue;
        }
        let files: Vec<SourceFile> = indices.iter().map(|&i| walked.files[i].clone()).collect();
        let driven = check_group(
            a,
            root,
            shown,
            pivots_file.as_ref(),
            &named,
            &files,
            jobs,
            max_bytes,
            secret.as_deref(),
        );
        let (driven, hits) = match driven {
            Ok(d) => d,
            // A conversation that cannot be opened or a session out of range.
            Err(e) if a.conversation.is_some() || a.session.is_some() => {
                return Ok(Err(format!("{e:#}")))
            }
            Err(e) => return Err(e),
        };
        from_cache += hits;
        let Driven {
            setup,
            results: r,
            messages,
        } = driven;
        for (&i, r) in indices.iter().zip(r) {
            results[i] = Some(r);
        }
        merged = Some(match merged {
            None => Driven {
                setup,
                results: Vec::new(),
                messages,
            },
            Some(mut m) => {
                join_setup(&mut m, setup, messages);
                m
            }
        });
    }
    let mut driven = merged.context("no check was run")?;
    driven.results = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Checked::NotChecked(String::new())))
        .collect();
    let setup_errors = say_setup(&driven.setup, &driven.messages);
    let pivots = driven.setup.active.pivots.clone();
    let session = driven.setup.active.index;

    // The findings, sorted, and what could not be checked.
    let (mut findings, problems, checked) = gather(&walked.files, driven.results, walked.problems);
    if let Some(path) = &a.bundle {
        let inputs = Inputs {
            files: checked.clone(),
            pivots: named
                .pivots_file
                .as_ref()
                .map(|(p, b)| (relative(root, p), report::sha256_hex(b))),
            conversation: a
                .conversation
                .as_ref()
                .zip(named.conversation.as_ref())
                .map(|(p, (_, b))| (relative(root, &root.join(p)), report::sha256_hex(b))),
            session,
        };
        let b = report::bundle(&inputs, &pivots, &findings, &problems);
        let mut bytes = log_safe::json(serde_json::to_string_pretty(&b)?).into_bytes();
        bytes.push(b'\n');
        // Replaced whole, as every output file of `check` is.
        pivot_base::durable::write_atomic(path, &bytes)
            .with_context(|| format!("cannot write the bundle {}", path.display()))?;
    }
    if let Some(known) = &named.baseline {
        keep_new(&mut findings, known);
    }
    Ok(Ok(Outcome {
        session,
        pivots,
        findings,
        problems,
        checked,
        setup_errors,
        from_cache,
        all: walked.all,
    }))
}

/// The output of one run, one line of counts, and its exit code.
pub fn write_outcome(a: &CheckArgs, shown: &Path, o: Outcome) -> Result<i32> {
    let out = match a.shard {
        Some(shard) => {
            let v = report::shard_json(
                &shown.display().to_string(),
                o.session,
                &o.pivots,
                &o.findings,
                shard,
                &o.all,
            );
            log_safe::json(serde_json::to_string_pretty(&v)?) + "\n"
        }
        None => render(
            a.format,
            shown,
            o.session,
            &o.pivots,
            &o.findings,
            &o.problems,
        )?,
    };
    write_output(a.output.as_deref(), &out)?;
    say_counts(&o);
    Ok(if !o.setup_errors.is_empty() {
        2
    } else if o.findings.is_empty() || a.exit_zero {
        0
    } else {
        1
    })
}

/// "N files checked (M unchanged, from the cache), K findings, J not checked".
pub fn say_counts(o: &Outcome) {
    let (checked, findings, problems) = (&o.checked, &o.findings, &o.problems);
    eprintln!(
        "{} file{} checked{}, {} finding{}{}",
        checked.len(),
        if checked.len() == 1 { "" } else { "s" },
        match o.from_cache {
            0 => String::new(),
            n => format!(" ({n} unchanged, from the cache)"),
        },
        findings.len(),
        if findings.len() == 1 { "" } else { "s" },
        match problems.len() {
            0 => String::new(),
            n => format!(", {n} not checked (see the warnings above)"),
        }
    );
}

/// One pivots file's share of the run: its servers set up with it (and the conversation),
/// its cache table, its files checked.
#[allow(clippy::too_many_arguments)]
fn check_group(
    a: &CheckArgs,
    root: &Path,
    shown: &Path,
    pivots_file: Option<&(PathBuf, Vec<u8>)>,
    named: &Named,
    files: &[SourceFile],
    jobs: usize,
    max_bytes: u64,
    secret: Option<&[u8]>,
) -> Result<(Driven, usize)> {
    // The servers: set up as asked, then each file opened, published and closed.
    let mut setup = SetupArgs::default();
    // The same set-up with the paths as the tree names them, for the cache's key: the
    // findings of a commit's files written out anywhere are the same.
    let mut key_setup = SetupArgs::default();
    let text = |p: &Path| Text(p.display().to_string());
    if let Some((p, _)) = pivots_file {
        setup.pivots = Some(text(p));
        key_setup.pivots = Some(Text(relative(root, p)));
    }
    if let Some((p, _)) = &named.conversation {
        setup.conversation = Some(text(p));
        key_setup.conversation = Some(Text(relative(root, p)));
    }
    setup.session = a.session;
    key_setup.session = a.session;
    let cache = secret.map(|secret| {
        let context = cache::Context {
            secret,
            root: shown,
            setup: &key_setup,
            pivots: pivots_file.map(|(_, b)| b.as_slice()),
            conversation: named.conversation.as_ref().map(|(_, b)| b.as_slice()),
        };
        CheckCache::open(
            CacheDir::at(cache_dir(shown, a.cache_dir.as_deref())),
            &context,
        )
    });
    check_with_cache(root, &setup, files, jobs, max_bytes, cache)
}

/// A nested pivots file's set-up added to the run's: its pivots (those not already
/// listed), errors, warnings and messages.
fn join_setup(into: &mut Driven, setup: HeadlessSetup, messages: Vec<String>) {
    let have: HashSet<(String, String)> = into
        .setup
        .active
        .pivots
        .iter()
        .map(|p| (p.id.clone(), p.rule.to_string()))
        .collect();
    for p in setup.active.pivots {
        if !have.contains(&(p.id.clone(), p.rule.to_string())) {
            into.setup.active.pivots.push(p);
        }
    }
    for (to, from) in [
        (&mut into.setup.errors, setup.errors),
        (&mut into.setup.warnings, setup.warnings),
        (&mut into.messages, messages),
    ] {
        for m in from {
            if !to.contains(&m) {
                to.push(m);
            }
        }
    }
}

/// `--max-file-size` in bytes, or the server's analysis limit: the one limit of a run (the
/// servers are started with it as theirs, shared/lsp_client.rs).
pub fn max_file_bytes(a: &CheckArgs) -> u64 {
    match a.max_file_size {
        Some(mb) => (mb * 1e6) as u64,
        None => pivot_workspace::document::analysed_limit() as u64,
    }
}

/// `--cache-dir`, or `.pivot-cache`, under the root.
fn cache_dir(root: &Path, given: Option<&Path>) -> PathBuf {
    root.join(given.unwrap_or(Path::new(pivot_base::cache_dir::DEFAULT_DIR)))
}

/// The files' results: from the cache where a file's text is the one cached, from the
/// servers for the rest (none started when every file hits), and the cache written back.
/// Also returns how many came from the cache.
fn check_with_cache(
    root: &Path,
    setup: &SetupArgs,
    files: &[SourceFile],
    jobs: usize,
    max_bytes: u64,
    cache: Option<CheckCache>,
) -> Result<(Driven, usize)> {
    let progress = Progress::new(files.len() as u64, "checking");
    let Some(cache) = cache else {
        let driven = drive(root, setup, files, jobs, max_bytes, &|| progress.inc(1));
        progress.finish();
        return driven.map(|d| (d, 0));
    };
    let mut hits = cache.lookup(files, jobs, max_bytes);
    let hit = hits.iter().filter(|h| h.is_some()).count();
    tracing::info!(
        cache = %cache.dir_path().display(),
        hits = hit,
        misses = files.len() - hit,
        "check cache read"
    );
    progress.inc(hit as u64);
    // Files that could not be read are settled without a server too, but were not checked.
    let from_cache = hits
        .iter()
        .filter(|h| matches!(h, Some(Checked::Published { .. })))
        .count();
    let todo: Vec<usize> = (0..files.len()).filter(|&i| hits[i].is_none()).collect();
    let cached_setup = cache.setup.clone().filter(|_| todo.is_empty());
    // Every file hit: the table already holds exactly this run's results.
    let unchanged = cached_setup.is_some();
    let driven = match cached_setup {
        Some((setup, messages)) => Driven {
            setup,
            results: Vec::new(),
            messages,
        },
        None => {
            let misses: Vec<SourceFile> = todo.iter().map(|&i| files[i].clone()).collect();
            drive(root, setup, &misses, jobs, max_bytes, &|| progress.inc(1))?
        }
    };
    progress.finish();
    for (i, r) in todo.into_iter().zip(driven.results) {
        hits[i] = Some(r);
    }
    let results: Vec<Checked> = hits
        .into_iter()
        .map(|h| h.unwrap_or_else(|| Checked::NotChecked(String::new())))
        .collect();
    // The cache can only save time: a folder that cannot be written is said, not fatal.
    let dir = cache.dir_path().to_path_buf();
    let saved = match unchanged {
        true => Ok(()),
        false => cache.save(files, &results, &driven.setup, &driven.messages),
    };
    if let Err(e) = saved {
        eprintln!(
            "warning: the cache in {} was not written: {}",
            log_safe::text(&dir.display().to_string()),
            log_safe::text(&format!("{e:#}"))
        );
    }
    Ok((
        Driven {
            setup: driven.setup,
            results,
            messages: driven.messages,
        },
        from_cache,
    ))
}

/// The flags' values and the files they name, checked and read: the baseline, the pivots
/// file (read here for its hash; the server reads the same resolved path), the conversation.
fn named_inputs(root: &Path, a: &CheckArgs) -> std::result::Result<Named, String> {
    if a.max_file_size.is_some_and(|mb| mb.is_nan() || mb <= 0.0) {
        return Err("--max-file-size must be a positive number of MB".into());
    }
    let baseline = a
        .baseline
        .as_deref()
        .map(|p| read_baseline(root, p))
        .transpose()?;
    // The root's pivots.toml, or its pyproject.toml's [tool.pivot].
    let default_pivots = config::config_file(root)
        .and_then(|f| f.file_name().map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(config::CONFIG));
    let pivots_file = match &a.pivots {
        Some(p) if root.join(p).is_dir() => {
            return Err(format!(
                "--pivots {}: a directory, not a pivots file (name the .toml file, e.g. {})",
                p.display(),
                p.join("pivots.toml").display()
            ))
        }
        Some(p) if std::fs::symlink_metadata(root.join(p)).is_err() => {
            return Err(format!("--pivots {}: no such pivots file", p.display()))
        }
        Some(p) => Some(p.as_path()),
        None => Some(default_pivots.as_path())
            .filter(|p| std::fs::symlink_metadata(root.join(p)).is_ok()),
    };
    let pivots_file = pivots_file.map(|p| read_input(root, p)).transpose()?;
    match &pivots_file {
        Some(_) => tracing::info!(root = %root.display(), "configuration: the root's pivots file"),
        None => tracing::info!(root = %root.display(), "configuration: no pivots file"),
    }
    let conversation = a
        .conversation
        .as_deref()
        .map(|p| read_input(root, p))
        .transpose()?;
    if a.shard.is_some() && a.format != CheckFormat::Json {
        return Err(
            "--shard writes a shard for `pivot-lsp merge`: add --format json (SARIF, text and GitHub output are not sharded; merge the JSON)".into(),
        );
    }
    Ok(Named {
        baseline,
        pivots_file,
        conversation,
    })
}

/// Prints what the servers' set-up said (errors, then messages and warnings not already
/// said), escaped for the log (shared/log_safe.rs); returns the errors.
fn say_setup(setup: &HeadlessSetup, messages: &[String]) -> Vec<String> {
    let errors = setup.errors.clone();
    for e in &errors {
        eprintln!("error: {}", log_safe::lines(e));
    }
    // What the server showed (a corrupt state file...), unless said just above.
    for m in messages {
        if !errors.iter().any(|e| m.contains(e.as_str())) {
            eprintln!("warning: {}", log_safe::lines(m));
        }
    }
    for w in &setup.warnings {
        eprintln!("warning: {}", log_safe::text(w));
    }
    errors
}

/// Each file's findings (sorted), the files not checked (sorted and printed) and the
/// (path, SHA-256) of each file checked.
fn gather(
    files: &[SourceFile],
    results: Vec<Checked>,
    mut problems: Vec<Problem>,
) -> (Vec<Finding>, Vec<Problem>, Vec<(String, String)>) {
    let mut findings: Vec<Finding> = Vec::new();
    let mut checked: Vec<(String, String)> = Vec::new();
    for (f, result) in files.iter().zip(results) {
        match result {
            Checked::Published {
                diagnostics,
                sha256,
            } => {
                // The server's notices (no pivot's code) are not findings: a file it did
                // not analyse is a file not checked, the rest a warning.
                let (notices, diagnostics): (Vec<_>, Vec<_>) = diagnostics
                    .into_iter()
                    .partition(|d| d.code.is_none() && d.source.as_deref() == Some("pivot"));
                let mut skipped = false;
                for n in notices {
                    let message = n.message.strip_prefix("pivot: ").unwrap_or(&n.message);
                    if message.starts_with("not checked") {
                        skipped = true;
                        problems.push(Problem {
                            path: f.rel.clone(),
                            problem: message.to_string(),
                        });
                    } else {
                        eprintln!(
                            "warning: {}: {}",
                            log_safe::path(&f.rel),
                            log_safe::text(message)
                        );
                    }
                }
                if !skipped {
                    findings.extend(report::file_findings(&f.rel, diagnostics));
                    checked.push((f.rel.clone(), sha256));
                }
            }
            Checked::NotChecked(problem) => problems.push(Problem {
                path: f.rel.clone(),
                problem,
            }),
        }
    }
    sort_problems(&mut problems);
    for p in &problems {
        eprintln!(
            "warning: {}: {}",
            log_safe::path(&p.path),
            log_safe::text(&p.problem)
        );
    }
    report::sort(&mut findings);
    (findings, problems, checked)
}

/// Keeps the findings the baseline does not hold, and says how many of its were fixed.
fn keep_new(findings: &mut Vec<Finding>, known: &HashSet<String>) {
    let now: HashSet<&str> = findings.iter().map(|f| f.fingerprint.as_str()).collect();
    let fixed = known.iter().filter(|k| !now.contains(k.as_str())).count();
    findings.retain(|f| !known.contains(&f.fingerprint));
    eprintln!(
        "baseline: {} new finding{}, {fixed} of the baseline's {} fixed",
        findings.len(),
        if findings.len() == 1 { "" } else { "s" },
        known.len()
    );
}

fn render(
    format: CheckFormat,
    root: &Path,
    session: usize,
    pivots: &[ActivePivot],
    findings: &[Finding],
    problems: &[Problem],
) -> Result<String> {
    Ok(match format {
        CheckFormat::Text => report::text(findings),
        CheckFormat::Github => report::github(findings),
        CheckFormat::Json => {
            let v = report::json_report(&root.display().to_string(), session, pivots, findings);
            log_safe::json(serde_json::to_string_pretty(&v)?) + "\n"
        }
        CheckFormat::Sarif => {
            let mut root_uri = crate::cli::shared::lsp_client::uri_of(root)?;
            if !root_uri.ends_with('/') {
                root_uri.push('/');
            }
            let v = report::sarif(&root_uri, pivots, findings, problems);
            log_safe::json(serde_json::to_string_pretty(&v)?) + "\n"
        }
    })
}

fn write_output(path: Option<&Path>, text: &str) -> Result<()> {
    match path {
        // Whole or not at all (a killed shard leaves no half file to merge).
        Some(p) => pivot_base::durable::write_atomic(p, text.as_bytes()),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(())
        }
    }
}

fn read_baseline(root: &Path, p: &Path) -> std::result::Result<HashSet<String>, String> {
    let (_, bytes) = read_input(root, p)?;
    let v: Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: not JSON: {e}", p.display()))?;
    report::baseline_fingerprints(&v).map_err(|e| format!("{}: {e}", p.display()))
}

/// `--jobs`' default: one server per core, at most 8.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
}
