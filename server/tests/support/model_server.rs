//! The loopback model for tests: `pivot-lsp model-server` playing a script on a free port
//! (the first line it prints is its URL), killed when dropped.

use super::cli::EXE;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub struct DemoServer {
    child: Child,
    pub url: String,
    /// The request log (`--log`), when started with one.
    pub log: Option<PathBuf>,
}

impl DemoServer {
    pub fn start(script: &Path) -> DemoServer {
        Self::launch(script, None, true)
    }

    /// With every request appended to `log` as a JSON line, to count what was asked.
    pub fn start_logged(script: &Path, log: &Path) -> DemoServer {
        Self::launch(script, Some(log), true)
    }

    /// Not `--quiet`: a line per request on its stderr, which `stop` returns.
    pub fn start_verbose(script: &Path, log: Option<&Path>) -> DemoServer {
        Self::launch(script, log, false)
    }

    fn launch(script: &Path, log: Option<&Path>, quiet: bool) -> DemoServer {
        let mut cmd = Command::new(EXE);
        cmd.args(["model-server", "--port", "0", "--script"])
            .arg(script);
        if quiet {
            cmd.arg("--quiet");
        }
        if let Some(l) = log {
            cmd.arg("--log").arg(l);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(if quiet { Stdio::null() } else { Stdio::piped() })
            .spawn()
            .expect("the model server starts");
        let mut url = String::new();
        BufReader::new(child.stdout.take().expect("its stdout"))
            .read_line(&mut url)
            .expect("it prints its URL");
        let url = url.trim().to_string();
        assert!(
            url.starts_with("http://127.0.0.1:") && url.ends_with("/v1"),
            "the model server's first line is not its URL: {url:?}"
        );
        DemoServer {
            child,
            url,
            log: log.map(Path::to_path_buf),
        }
    }

    /// Requests logged so far (0 when the log was never written).
    pub fn requests(&self) -> usize {
        let log = self.log.as_ref().expect("started with a log");
        std::fs::read_to_string(log)
            .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
            .unwrap_or(0)
    }

    /// Stops the server; what it wrote on stderr (started with `start_verbose`).
    pub fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            e.read_to_string(&mut err).expect("its stderr");
        }
        err
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
