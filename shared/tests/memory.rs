//! `shared::memory` with its allocator installed, as the ingest function installs it. One
//! test only: the counters are process-wide, so nothing may allocate beside it.

use shared::heap::{mark, measure, record, CountingAlloc};

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

    // A recorded run: each mark's peak since the previous one, and the end after any
    // number of marks.
    let (kept, marks) = record(|| {
        let big = vec![1u8; 4 * MIB];
        std::hint::black_box(&big);
        drop(big);
        mark("freed");
        let small = vec![1u8; MIB];
        (0..100).for_each(|_| mark("busy"));
        small
    });
    assert_eq!(marks.first().map(|m| m.label), Some("freed"), "{marks:?}");
    assert!(
        marks[0].peak >= 4 * MIB && marks[0].live < MIB,
        "{:?}",
        marks[0]
    );
    let end = marks.last().expect("marks");
    assert_eq!(end.label, "end");
    assert!(end.live >= MIB && end.peak < 2 * MIB, "{end:?}");
    drop(kept);
}
