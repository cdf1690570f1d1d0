//! `pivot-lsp env bigcodebench DIR`: BigCodeBench's pinned evaluation environment in one
//! command (the work is `exec::bcb_env`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use pivot_exec::bcb_env::{self, BuildOptions, Installer};

#[derive(clap::Subcommand, Debug)]
pub enum EnvCommand {
    /// Build BigCodeBench's evaluation environment: a virtualenv in DIR with the pinned
    /// requirements of the BigCodeBench fork ConvCodeWorld uses (requirements-eval.txt,
    /// carried in this binary; for Python 3.10). Wheels only, as pinned; a package without
    /// a wheel for this Python is built from source when that needs no C compiler; a pin that
    /// still does not install moves to the nearest version with a wheel (the next one above,
    /// else the one below); a package with no wheel at any version is compiled from source.
    /// Every move and source build is recorded in DIR/pivot-env.json, and `pivot-lsp doctor
    /// --python DIR/bin/python` says whether the environment matches the pins.
    /// Run again on the same DIR to complete an interrupted build.
    #[command(
        after_help = "Example:\n  pivot-lsp env bigcodebench ~/bcb-env --python python3.10\n  \
pivot-lsp exec --problems bigcodebench --samples canonical --python ~/bcb-env/bin/python"
    )]
    Bigcodebench(EnvBigcodebenchArgs),
}

#[derive(clap::Args, Debug)]
pub struct EnvBigcodebenchArgs {
    /// Folder of the new virtualenv (created; an existing virtualenv is completed in place).
    pub dir: PathBuf,
    /// The Python to build it with (BigCodeBench pins its requirements for 3.10).
    #[arg(long, default_value = "python3.10")]
    pub python: PathBuf,
    /// Which installer resolves and installs: uv (fast; found on PATH or given with --uv),
    /// pip (the new environment's own), or auto (uv when found, else pip).
    #[arg(long, value_enum, default_value_t = InstallerArg::Auto)]
    pub installer: InstallerArg,
    /// The uv binary to use.
    #[arg(long, value_name = "PATH")]
    pub uv: Option<PathBuf>,
    /// Upper bound, seconds, on compiling one package that has no wheel for this Python.
    #[arg(long, default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..))]
    pub build_timeout: u64,
    /// Another requirements file instead of BigCodeBench's (same rules; for testing).
    #[arg(long, value_name = "FILE", hide = true)]
    pub requirements: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InstallerArg {
    Auto,
    Uv,
    Pip,
}

pub fn run(c: EnvCommand) -> Result<i32> {
    match c {
        EnvCommand::Bigcodebench(a) => run_bigcodebench(a),
    }
}

fn run_bigcodebench(a: EnvBigcodebenchArgs) -> Result<i32> {
    let installer = match (a.installer, &a.uv) {
        (InstallerArg::Pip, _) => Installer::Pip,
        (_, Some(uv)) => Installer::Uv(uv.clone()),
        (InstallerArg::Uv, None) => match Installer::auto() {
            Installer::Pip => bail!("`uv` is not on PATH: install it (`pip install uv`), give --uv PATH, or use --installer pip"),
            uv => uv,
        },
        (InstallerArg::Auto, None) => Installer::auto(),
    };
    let (requirements, source) = match &a.requirements {
        Some(f) => (
            pivot_base::bounded_read::read_to_string(f)
                .with_context(|| format!("reading {}", f.display()))?,
            f.display().to_string(),
        ),
        None => (
            bcb_env::REQUIREMENTS.to_string(),
            bcb_env::REQUIREMENTS_SOURCE.to_string(),
        ),
    };
    let opts = BuildOptions {
        dir: a.dir.clone(),
        python: a.python.clone(),
        installer,
        requirements,
        requirements_source: source,
        build_timeout: Duration::from_secs(a.build_timeout),
    };
    let say = |s: &str| eprintln!("env: {s}");
    let record = bcb_env::build(&opts, &say)?;
    println!(
        "{}: Python {} ({}), {} packages, {:.0} s",
        a.dir.display(),
        record.python_version,
        record.installer,
        record.installed.len(),
        record.seconds
    );
    if record.moved.is_empty() {
        println!("every pin installed as pinned");
    }
    for m in &record.moved {
        println!(
            "moved: {} {} -> {} ({})",
            m.package, m.pinned, m.installed, m.reason
        );
    }
    for f in &record.from_source {
        println!(
            "from source: {} {}{}",
            f.package,
            f.version,
            if f.compiled { " (compiled)" } else { "" }
        );
    }
    println!(
        "record: {}; use it with --python {}",
        a.dir.join(bcb_env::RECORD).display(),
        a.dir.join("bin/python").display()
    );
    Ok(0)
}
