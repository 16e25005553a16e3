//! Decoding a full 32 MiB ring (4 Mi slots, startup-like call mix) into events with recovered
//! timestamps, side by side with a plain sequential read of the same 32 MiB.
//!
//! The ratio of the two is the number to quote (target ≤ 3×); absolute times drift on shared
//! machines.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use hubble_format::{decode_events, Mode, RingWriter};

const SLOTS: usize = 4 << 20;

/// A cold-start-like stream: depth wanders between 5 and 60, 90% of methods below 4 GiB
/// (boot image and low arenas), a few hundred ticks per call, bursts of exits for exceptions.
fn startup_ring() -> (RingWriter, u64) {
    let mut ring = RingWriter::new(Mode::Bits64, SLOTS);
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let methods = hubble_testkit::method_mix(50_000);
    let mut t = 1u64 << 40;
    let mut depth = 0u32;
    ring.start(t as u32);
    // Write 1.5 laps so the ring is full and wrapped.
    let mut written = 0usize;
    while written < SLOTS + SLOTS / 2 {
        t += next() % 400;
        let r = next() % 100;
        if depth > 5 && (r < 48 || depth > 60) {
            let burst = if r == 0 { 3.min(depth) } else { 1 };
            for _ in 0..burst {
                ring.exit(t as u32);
                depth -= 1;
                written += 1;
            }
        } else {
            let m = methods[(next() % methods.len() as u64) as usize];
            ring.entry(m, t as u32).expect("valid method");
            depth += 1;
            written += if m >> 32 == 0 { 1 } else { 2 };
        }
    }
    (ring, t + 1)
}

fn bench(c: &mut Criterion) {
    let (ring, reference) = startup_ring();
    let mut group = c.benchmark_group("32MiB-ring");
    group.throughput(Throughput::Elements(SLOTS as u64));
    group.sample_size(20);
    group.bench_function("plain-read", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for &s in ring.slots() {
                acc = acc.wrapping_add(s);
            }
            black_box(acc)
        })
    });
    group.bench_function("decode-events", |b| {
        b.iter(|| {
            let decoded = decode_events(&ring.view(), Mode::Bits64, reference).expect("decodes");
            black_box(decoded.events.len())
        })
    });
    let mut buffer = Some(Vec::new());
    group.bench_function("decode-events-reused-buffer", |b| {
        b.iter(|| {
            let decoded = hubble_format::decode_events_into(
                &ring.view(),
                Mode::Bits64,
                reference,
                buffer.take().expect("buffer"),
            )
            .expect("decodes");
            let n = decoded.events.len();
            buffer = Some(decoded.events);
            black_box(n)
        })
    });
    // A file of a thread that idled now and then: 64 anchors across the window (bounds that
    // never lower the clock, so the events are the same), to price the walk's stops at them.
    let anchors: Vec<hubble_format::TimeAnchor> = (0..64u64)
        .map(|i| hubble_format::TimeAnchor {
            slots_after: i * (SLOTS as u64 / 64) + 1,
            bound: u64::MAX - i,
        })
        .collect();
    let anchored = hubble_format::TimeBase {
        reference,
        anchors: &anchors,
    };
    let mut buffer = Some(Vec::new());
    group.bench_function("decode-events-reused-buffer-64-anchors", |b| {
        b.iter(|| {
            let decoded = hubble_format::decode_events_into(
                &ring.view(),
                Mode::Bits64,
                anchored,
                buffer.take().expect("buffer"),
            )
            .expect("decodes");
            let n = decoded.events.len();
            buffer = Some(decoded.events);
            black_box(n)
        })
    });
    group.bench_function("iterate-events-streaming-64-anchors", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for event in hubble_format::EventIter::new(&ring.view(), Mode::Bits64, anchored)
                .expect("decodes")
            {
                acc = acc.wrapping_add(event.counter);
            }
            black_box(acc)
        })
    });
    group.bench_function("iterate-events-streaming", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for event in hubble_format::EventIter::new(&ring.view(), Mode::Bits64, reference)
                .expect("decodes")
            {
                acc = acc.wrapping_add(event.counter);
            }
            black_box(acc)
        })
    });
    // What a streaming consumer (exporter, analysis) pays: every event with its recovered
    // 64-bit timestamp, handed over one at a time, nothing materialized.
    group.bench_function("events-with-timestamps-streamed", |b| {
        b.iter(|| {
            let mut clock = hubble_format::time::BackwardClock::new(reference);
            let mut acc = 0u64;
            hubble_format::ring::walk_back(&ring.view(), Mode::Bits64, |r| {
                let counter = clock.step(r.ts()).expect("recovers");
                acc = acc.wrapping_add(
                    counter ^ u64::from(matches!(r, hubble_format::Record::Exit { .. })),
                );
            })
            .expect("decodes");
            black_box(acc)
        })
    });
    group.bench_function("walk-only", |b| {
        b.iter(|| {
            let mut n = 0u64;
            hubble_format::ring::walk_back(&ring.view(), Mode::Bits64, |r| {
                n = n.wrapping_add(u64::from(r.ts()))
            })
            .expect("decodes");
            black_box(n)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
