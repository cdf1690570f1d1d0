//! The loopback model for tests: `pivot-lsp model-server` playing a bundled script on a free
//! port (the first line it prints is its URL), killed when dropped.

use std::io::{BufRead, BufReader};
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
        Self::launch(script, None)
    }

    /// With every request appended to `log` as a JSON line, to count what was asked.
    #[allow(dead_code)]
    pub fn start_logged(script: &Path, log: &Path) -> DemoServer {
        Self::launch(script, Some(log))
    }

    fn launch(script: &Path, log: Option<&Path>) -> DemoServer {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pivot-lsp"));
        cmd.args(["model-server", "--port", "0", "--quiet", "--script"])
            .arg(script);
        if let Some(l) = log {
            cmd.arg("--log").arg(l);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the model server starts");
        let mut url = String::new();
        BufReader::new(child.stdout.take().expect("its stdout"))
            .read_line(&mut url)
            .expect("it prints its URL");
        DemoServer {
            child,
            url: url.trim().to_string(),
            log: log.map(Path::to_path_buf),
        }
    }

    /// Requests logged so far (0 when the log was never written).
    #[allow(dead_code)]
    pub fn requests(&self) -> usize {
        let log = self.log.as_ref().expect("started with start_logged");
        std::fs::read_to_string(log)
            .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
            .unwrap_or(0)
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
