//! The flags that pace and retry requests to a model endpoint, shared by every command that
//! calls a model (`convcode run/bench`, `memorycode generate/converse`): one declaration, one
//! meaning, one validation.

use std::time::Duration;

use anyhow::{Context, Result};

use pivot_llm::ClientConfig;

#[derive(clap::Args, Debug, Clone)]
pub struct RequestArgs {
    /// Answer from the cache only; names every request that is missing.
    #[arg(long)]
    pub offline: bool,
    /// Model requests in flight at once (per endpoint).
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Seconds before a model request times out (then it is retried).
    #[arg(long, default_value_t = 300.0)]
    pub request_timeout: f64,
    /// Retries on 429, 5xx, timeouts and connection failures.
    #[arg(long, default_value_t = 6)]
    pub retries: u32,
    /// First retry delay in seconds (doubles each retry).
    #[arg(long, default_value_t = 1.0)]
    pub backoff: f64,
}

impl RequestArgs {
    /// Sets `cfg`'s timeout, retries, back-off, concurrency and offline mode; a negative or
    /// non-finite number of seconds is refused, naming its flag.
    pub fn apply(&self, cfg: &mut ClientConfig) -> Result<()> {
        // A zero timeout would fail every request before it is sent.
        cfg.timeout =
            seconds(self.request_timeout, "--request-timeout")?.max(Duration::from_millis(1));
        cfg.backoff = seconds(self.backoff, "--backoff")?;
        cfg.retries = self.retries;
        cfg.concurrency = self.concurrency.max(1);
        cfg.offline = self.offline;
        Ok(())
    }
}

fn seconds(s: f64, flag: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(s).with_context(|| format!("{flag}: bad number of seconds {s}"))
}
