//! `shared::memory` with its allocator installed, as the ingest function installs it. One
//! test only: the counters are process-wide, so nothing may allocate beside it.

use shared::memory::{measure, CountingAlloc};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const MIB: usize = 1 << 20;

#[test]
fn a_step_s_peak_and_what_it_keeps_are_measured() {
    // Allocated and freed inside: a peak of at least 8 MiB, nothing kept.
    let ((), used) = measure(|| {
        let v = vec![1u8; 8 * MIB];
        std::hint::black_box(&v);
    });
    let used = used.expect("the allocator is installed");
    assert!(used.peak >= 8 * MIB, "{used:?}");
    assert!(used.retained < MIB, "{used:?}");

    // Kept: returned to the caller.
    let (kept, used) = measure(|| vec![1u8; 3 * MIB]);
    let used = used.unwrap();
    assert!(
        used.retained >= 3 * MIB && used.peak >= used.retained,
        "{used:?}"
    );

    // Freed later: the next measurement starts from what is live then.
    drop(kept);
    let ((), used) = measure(|| ());
    assert!(used.unwrap().peak < MIB);
}
