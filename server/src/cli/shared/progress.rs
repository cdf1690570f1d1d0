//! Progress of long work on stderr. On a terminal: a bar (indicatif). Otherwise (a file, a
//! pipe, a CI log): one plain line every `PIVOT_PROGRESS_SECONDS` seconds (default 30) with
//! the count, the elapsed time and an estimate of the time left, as cargo and pip log their
//! progress, so that a log never stays silent for minutes; a closing line when any was
//! written. Work that finishes before the first interval writes nothing.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Seconds between two plain progress lines; read from `PIVOT_PROGRESS_SECONDS`.
pub const INTERVAL_ENV: &str = "PIVOT_PROGRESS_SECONDS";
const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);

pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    log: Option<Ticker>,
}

/// The plain-line writer: a thread that wakes every interval and prints one line.
struct Ticker {
    pos: Arc<AtomicU64>,
    stop: Mutex<Option<Sender<()>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Progress {
    /// Counted work: `total` steps of `what` (e.g. "exec", 1140).
    pub fn new(total: u64, what: &str) -> Self {
        Self::make(Some(total), what)
    }

    /// Work that cannot be counted (a child program that says nothing until it ends): the
    /// log gets "still running" lines with the elapsed time.
    pub fn phase(what: &str) -> Self {
        Self::make(None, what)
    }

    fn make(total: Option<u64>, what: &str) -> Self {
        if std::io::stderr().is_terminal() {
            let bar = match total {
                Some(t) => {
                    let bar = indicatif::ProgressBar::new(t);
                    bar.set_style(
                        indicatif::ProgressStyle::with_template(
                            "{msg:>12} [{bar:40}] {pos}/{len} ({elapsed}, eta {eta})",
                        )
                        .expect("static template")
                        .progress_chars("=> "),
                    );
                    bar
                }
                None => {
                    let bar = indicatif::ProgressBar::new_spinner();
                    bar.enable_steady_tick(Duration::from_millis(200));
                    bar
                }
            };
            bar.set_message(what.to_string());
            return Progress {
                bar: Some(bar),
                log: None,
            };
        }
        Progress {
            bar: None,
            log: Some(Ticker::start(total, what.to_string(), interval())),
        }
    }

    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
        if let Some(t) = &self.log {
            t.pos.fetch_add(n, Ordering::Relaxed);
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
        if let Some(t) = &self.log {
            t.stop_now();
        }
    }
}

fn interval() -> Duration {
    std::env::var(INTERVAL_ENV)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(|s| Duration::from_secs_f64(s.max(0.05)))
        .unwrap_or(DEFAULT_INTERVAL)
}

impl Ticker {
    fn start(total: Option<u64>, what: String, every: Duration) -> Ticker {
        let pos = Arc::new(AtomicU64::new(0));
        let (tx, rx) = channel::<()>();
        let seen = pos.clone();
        let thread = std::thread::spawn(move || {
            let start = Instant::now();
            let mut wrote = false;
            loop {
                let last = match rx.recv_timeout(every) {
                    Err(RecvTimeoutError::Timeout) => false,
                    // Finished (or dropped): a closing line only after progress lines.
                    _ => true,
                };
                if last && !wrote {
                    return;
                }
                let line = line(
                    &what,
                    seen.load(Ordering::Relaxed),
                    total,
                    start.elapsed(),
                    last,
                );
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "{line}");
                let _ = err.flush();
                wrote = true;
                if last {
                    return;
                }
            }
        });
        Ticker {
            pos,
            stop: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        }
    }

    /// Stops the thread and waits for its closing line, so that it comes before whatever
    /// the command prints next.
    fn stop_now(&self) {
        let tx = self.stop.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(tx) = tx {
            let _ = tx.send(());
        }
        let thread = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(t) = thread {
            let _ = t.join();
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop_now();
    }
}

/// `exec: 120/1140 (10%), 1m05s elapsed, about 9m13s left`.
fn line(what: &str, pos: u64, total: Option<u64>, elapsed: Duration, done: bool) -> String {
    let el = short(elapsed);
    match total {
        None if done => format!("{what}: done after {el}"),
        None => format!("{what}: still running, {el} elapsed"),
        Some(t) if done => format!("{what}: {pos}/{t} done after {el}"),
        Some(t) => {
            let pct = (pos * 100).checked_div(t).unwrap_or(100);
            let eta = if pos == 0 || pos > t {
                "time left not known yet".to_string()
            } else {
                let left = elapsed.as_secs_f64() * (t - pos) as f64 / pos as f64;
                format!("about {} left", short(Duration::from_secs_f64(left)))
            };
            format!("{what}: {pos}/{t} ({pct}%), {el} elapsed, {eta}")
        }
    }
}

/// `45s`, `3m07s`, `1h02m`.
fn short(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_count_elapsed_and_time_left() {
        let l = line("exec", 120, Some(1140), Duration::from_secs(65), false);
        assert_eq!(l, "exec: 120/1140 (10%), 1m05s elapsed, about 9m12s left");
        let l = line("exec", 0, Some(10), Duration::from_secs(3), false);
        assert!(l.ends_with("time left not known yet"), "{l}");
        let l = line(
            "original evaluator",
            0,
            None,
            Duration::from_secs(3700),
            false,
        );
        assert_eq!(l, "original evaluator: still running, 1h01m elapsed");
        assert_eq!(
            line("exec", 10, Some(10), Duration::from_secs(2), true),
            "exec: 10/10 done after 2s"
        );
    }
}
