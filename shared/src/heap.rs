//! How much heap building an index takes, measured rather than guessed.
//!
//! A knowledge base's index can need far more memory than its JSON: CJK text yields a
//! bigram per character pair, so 5 MB of Chinese pages took a search process from 30 to
//! 239 MB, and a 128 MB function died at cold start. The ingest function therefore builds
//! the index of every version it is asked to store, exactly as the serving functions will,
//! and measures the heap that took with [`CountingAlloc`]: a global allocator that counts
//! the bytes live and their high-water mark. A binary installs it with
//! `#[global_allocator] static A: CountingAlloc = CountingAlloc;`; without it [`measure`]
//! reports nothing and callers fall back to an estimate.
//!
//! [`record`] splits a measurement by the [`mark`]s the work passes: the JSON build path
//! marks its phases, and `shared/examples/build_memory.rs` prints where its peak is.
//!
//! The counters are process-wide: a measurement is exact when nothing else allocates at
//! the same time, as in a Lambda instance, which runs one request at a time.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting live bytes and their peak (see the module docs).
pub struct CountingAlloc;

// SAFETY: every call is forwarded unchanged to `System`; the counters only observe sizes.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

fn grew(bytes: usize) {
    INSTALLED.store(true, Ordering::Relaxed);
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

/// What a measured step took from the heap, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapUse {
    /// The most it held at once beyond what was live before it started.
    pub peak: usize,
    /// What it left allocated (what it returned, typically).
    pub retained: usize,
}

/// Runs `f` and reports its heap use, or `None` when [`CountingAlloc`] is not this
/// process's allocator.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Option<HeapUse>) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    if !INSTALLED.load(Ordering::Relaxed) {
        return (out, None);
    }
    let (live, peak) = (LIVE.load(Ordering::Relaxed), PEAK.load(Ordering::Relaxed));
    let used = HeapUse {
        peak: peak.saturating_sub(before),
        retained: live.saturating_sub(before),
    };
    (out, Some(used))
}

/// The heap at one [`mark`] of a [`record`]ed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// What had just finished.
    pub label: &'static str,
    /// The most held at once since the previous mark (or the start), above the start.
    pub peak: usize,
    /// What was held at the mark, above the start.
    pub live: usize,
}

/// Whether [`mark`] records (only inside [`record`]).
static RECORDING: AtomicBool = AtomicBool::new(false);
static MARKS: Mutex<Vec<Mark>> = Mutex::new(Vec::new());
/// Live bytes when the recording started.
static BASE: AtomicUsize = AtomicUsize::new(0);

/// Most marks one recording keeps (their room is reserved up front, so recording a mark
/// allocates nothing and the figures are not disturbed).
const MAX_MARKS: usize = 64;

/// Notes the heap at the end of a phase of the work [`record`] runs: the build marks its
/// phases so a measurement can tell where the peak is. Costs one atomic load otherwise.
pub fn mark(label: &'static str) {
    if RECORDING.load(Ordering::Relaxed) {
        push_mark(label, MAX_MARKS);
    }
}

/// Records a mark unless `room` marks are already kept.
fn push_mark(label: &'static str, room: usize) {
    let base = BASE.load(Ordering::Relaxed);
    let live = LIVE.load(Ordering::Relaxed);
    let peak = PEAK.swap(live, Ordering::Relaxed);
    let mut marks = MARKS.lock().unwrap_or_else(|e| e.into_inner());
    if marks.len() < room {
        marks.push(Mark {
            label,
            peak: peak.saturating_sub(base),
            live: live.saturating_sub(base),
        });
    }
}

/// Runs `f`, returning the [`mark`]s it passed (and a last one, `"end"`); empty when
/// [`CountingAlloc`] is not this process's allocator. One recording at a time, and no
/// [`measure`] inside it (each restarts the peak): the counters are process-wide.
pub fn record<T>(f: impl FnOnce() -> T) -> (T, Vec<Mark>) {
    {
        let mut marks = MARKS.lock().unwrap_or_else(|e| e.into_inner());
        marks.clear();
        marks.reserve(MAX_MARKS + 1);
    }
    let before = LIVE.load(Ordering::Relaxed);
    BASE.store(before, Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    RECORDING.store(true, Ordering::Relaxed);
    let out = f();
    // Room kept for it: the end is there however many marks the work passed.
    push_mark("end", MAX_MARKS + 1);
    RECORDING.store(false, Ordering::Relaxed);
    let marks = std::mem::take(&mut *MARKS.lock().unwrap_or_else(|e| e.into_inner()));
    if !INSTALLED.load(Ordering::Relaxed) {
        return (out, Vec::new());
    }
    (out, marks)
}

/// The process's resident memory as the kernel counts it (what Lambda's memory limit
/// applies to), unlike the heap above: code, stacks and allocator slack included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Resident {
    /// Resident now, in MiB (`VmRSS`).
    pub now_mib: u64,
    /// The most it has been, in MiB (`VmHWM`).
    pub peak_mib: u64,
}

/// This process's [`Resident`] memory, from `/proc/self/status`; `None` where there is no
/// such file (not Linux).
pub fn resident() -> Option<Resident> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib = |key: &str| {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line[key.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .ok()
    };
    Some(Resident {
        now_mib: kib("VmRSS:")? / 1024,
        peak_mib: kib("VmHWM:")? / 1024,
    })
}

/// The memory Lambda gives this function, in MB (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`, set
/// by the runtime); `None` outside Lambda.
pub fn memory_limit_mb() -> Option<u64> {
    std::env::var("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod resident_tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn resident_memory_counts_touched_pages() {
        // 64 MiB written (so resident), then read back so it is not optimised away. Other
        // tests run beside this one, so only what must hold is checked: the process holds
        // at least the block, and its peak at least what it holds.
        let block = std::hint::black_box(vec![1u8; 64 << 20]);
        let now = resident().expect("Linux has /proc/self/status");
        assert_eq!(block.iter().map(|&b| u64::from(b)).sum::<u64>(), 64 << 20);
        assert!(now.now_mib >= 64, "{now:?}");
        assert!(now.peak_mib >= now.now_mib, "{now:?}");
    }
}
