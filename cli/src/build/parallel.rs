//! Per-item work spread over threads, results taken in the items' order: what a build
//! writes never depends on which thread finished first.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

/// How many threads a build uses unless told: one per core.
pub(crate) fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Runs `work` on every item on up to `jobs` threads (each takes the next item not yet
/// taken, so a slow item does not hold up a fixed share of the rest) and hands the results
/// to `take` on this thread, in the items' order. When `take` breaks, no further item is
/// started and no further result is taken.
pub(crate) fn in_order<T: Send, R: Send>(
    items: Vec<T>,
    jobs: usize,
    work: impl Fn(T) -> R + Sync,
    mut take: impl FnMut(R) -> ControlFlow<()>,
) {
    if jobs <= 1 || items.len() <= 1 {
        for item in items {
            if take(work(item)).is_break() {
                return;
            }
        }
        return;
    }
    // Each slot is taken by exactly one thread; the lock is never contended.
    let slots: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(slots.len()) {
            let tx = tx.clone();
            let (slots, next, stop, work) = (&slots, &next, &stop, &work);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(slot) = slots.get(i) else { break };
                    let item = match slot.lock() {
                        Ok(mut s) => s.take(),
                        Err(poisoned) => poisoned.into_inner().take(),
                    };
                    let Some(item) = item else { break };
                    if tx.send((i, work(item))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Results that came early wait here until those before them have been taken.
        let mut early = BTreeMap::new();
        let mut wanted = 0;
        for (i, result) in rx {
            early.insert(i, result);
            while let Some(result) = early.remove(&wanted) {
                wanted += 1;
                if take(result).is_break() {
                    stop.store(true, Ordering::Relaxed);
                    // Dropping the receiver makes every further send fail: the threads end.
                    return;
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_item_order_whatever_the_threads_do() {
        for jobs in [1, 2, 7] {
            let items: Vec<u64> = (0..200).collect();
            let mut seen = Vec::new();
            in_order(
                items,
                jobs,
                |i| {
                    // Early items take longest, so later ones finish first.
                    if i % 50 == 0 {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                    i * 3
                },
                |r| {
                    seen.push(r);
                    ControlFlow::Continue(())
                },
            );
            assert_eq!(seen, (0..200).map(|i| i * 3).collect::<Vec<_>>(), "{jobs}");
        }
    }

    #[test]
    fn a_break_stops_taking_and_starting() {
        for jobs in [1, 3] {
            let started = AtomicUsize::new(0);
            let mut seen = Vec::new();
            in_order(
                (0..10_000).collect::<Vec<u32>>(),
                jobs,
                |i| {
                    started.fetch_add(1, Ordering::Relaxed);
                    if i >= 10 {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    i
                },
                |r| {
                    seen.push(r);
                    if r == 9 {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                },
            );
            assert_eq!(seen, (0..10).collect::<Vec<_>>());
            assert!(started.load(Ordering::Relaxed) < 10_000, "{jobs}");
        }
    }
}
