//! The loopback model for tests: `pivot-lsp model-server` playing a bundled script on a free
//! port (the first line it prints is its URL), killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub struct DemoServer {
    child: Child,
    pub url: String,
}

impl DemoServer {
    pub fn start(script: &Path) -> DemoServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pivot-lsp"))
            .args(["model-server", "--port", "0", "--quiet", "--script"])
            .arg(script)
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
        }
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
