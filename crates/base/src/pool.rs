//! The one worker pool: `count` items handed out in order to `workers` scoped threads
//! through a shared counter, each result handed back to the calling thread as it finishes
//! (in order of completion, with its index). A result the caller marks as fatal stops the
//! hand-out: the items already started finish, no new one starts. Used by the test runner,
//! ConvCodeWorld's turns and turn 0, and MemoryCode's generation.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// What the caller wants after a delivered result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    More,
    /// Start no new item (those started are still delivered).
    Stop,
}

/// Run `work(i)` for `i` in `0..count` on up to `workers` threads; `deliver(i, result)` runs
/// on the calling thread for each result. `fatal(&result)` true or `Flow::Stop` stops the
/// hand-out; an error of `deliver` stops it too, and is returned once every worker has
/// stopped (no further result is delivered).
pub fn run<R, E>(
    count: usize,
    workers: usize,
    work: impl Fn(usize) -> R + Sync,
    fatal: impl Fn(&R) -> bool + Sync,
    mut deliver: impl FnMut(usize, R) -> Result<Flow, E>,
) -> Result<(), E>
where
    R: Send,
{
    if count == 0 {
        return Ok(());
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|s| {
        for _ in 0..workers.clamp(1, count) {
            let tx = tx.clone();
            let (next, stop, work, fatal) = (&next, &stop, &work, &fatal);
            s.spawn(move || loop {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= count {
                    break;
                }
                let r = work(i);
                if fatal(&r) {
                    stop.store(true, Ordering::SeqCst);
                }
                if tx.send((i, r)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, r) in &rx {
            match deliver(i, r) {
                Ok(Flow::More) => {}
                Ok(Flow::Stop) => stop.store(true, Ordering::SeqCst),
                Err(e) => {
                    stop.store(true, Ordering::SeqCst);
                    // Dropping the receiver ends the workers' sends; the scope joins them.
                    drop(rx);
                    return Err(e);
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    #[test]
    fn every_item_is_delivered_once_with_its_index() {
        let mut got = vec![0u64; 100];
        run(
            100,
            4,
            |i| (i as u64) * 2,
            |_| false,
            |i, r| {
                got[i] += r + 1;
                Ok::<_, Infallible>(Flow::More)
            },
        )
        .unwrap();
        assert!(got.iter().enumerate().all(|(i, g)| *g == i as u64 * 2 + 1));
    }

    #[test]
    fn a_fatal_result_stops_the_hand_out_and_an_error_is_returned() {
        let started = AtomicUsize::new(0);
        let mut delivered = 0;
        run(
            1000,
            2,
            |i| {
                started.fetch_add(1, Ordering::SeqCst);
                i
            },
            |&i| i == 3,
            |_, _| {
                delivered += 1;
                Ok::<_, Infallible>(Flow::More)
            },
        )
        .unwrap();
        assert!(
            started.load(Ordering::SeqCst) < 1000,
            "the hand-out stopped"
        );
        assert_eq!(
            delivered,
            started.load(Ordering::SeqCst),
            "what started is delivered"
        );
        let e = run(
            1000,
            2,
            |i| i,
            |_| false,
            |i, _| if i >= 5 { Err(i) } else { Ok(Flow::More) },
        );
        assert!(e.is_err());
        assert_eq!(run(0, 4, |i| i, |_| false, |_, _| Err(())), Ok(()));
        // A stop from the caller: what started is still delivered, nothing new starts (each
        // item takes a millisecond, so the stop comes long before the last item).
        let mut seen = 0;
        run(
            1000,
            2,
            |i| {
                std::thread::sleep(std::time::Duration::from_millis(1));
                i
            },
            |_| false,
            |_, _| {
                seen += 1;
                Ok::<_, Infallible>(Flow::Stop)
            },
        )
        .unwrap();
        assert!(seen < 1000, "{seen}");
    }
}
