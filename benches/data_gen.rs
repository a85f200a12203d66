//! Micro-benchmarks of `ioscope::data`: content generation, verify stamping and
//! checking, key-map operations, and the crash journal's cost on real writes.
//! Run with `cargo bench --bench data_gen` (release profile); figures go to
//! docs/data.md. `IOSCOPE_BENCH_DIR` picks the directory for the journal test
//! (default /var/tmp).

use ioscope::data::keymap::KeyMap;
use ioscope::data::{check, stamp, DataSpec, Generator, Journal, SyncPolicy};
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::time::Instant;

const UNIT: usize = 4096;

fn gbps(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs / 1e9
}

/// Runs `f` over a 128 KiB buffer until ~`bytes` have been processed; GB/s.
fn time_fill(
    spec: &DataSpec,
    bytes: u64,
    mut per_buf: impl FnMut(&mut Generator, &mut [u8], u64),
) -> f64 {
    let mut g = Generator::new(spec, 42);
    let mut buf = vec![0u8; 128 << 10];
    let len = buf.len() as u64;
    let n = bytes / len;
    // Warm up.
    for i in 0..64 {
        per_buf(&mut g, &mut buf, i * len);
    }
    let t = Instant::now();
    for i in 0..n {
        per_buf(&mut g, &mut buf, i * len);
        black_box(&buf);
    }
    gbps(n * len, t.elapsed().as_secs_f64())
}

fn main() {
    let total: u64 = 4 << 30;
    let default = DataSpec::default();
    let c2d3 = DataSpec {
        dedup_ratio: 3.0,
        dedup_unit: 4096,
        compress_ratio: 2.0,
        fill: None,
    };
    println!("content generation, one core, 128 KiB buffers of 4 KiB units:");
    let r = time_fill(&default, total, |g, b, off| g.fill(b, off));
    println!("  unique (default)            {r:6.2} GB/s");
    let r = time_fill(&c2d3, total, |g, b, off| g.fill(b, off));
    println!("  dedup 3, compress 2         {r:6.2} GB/s");
    let r = time_fill(&default, total, |g, b, off| {
        g.fill(b, off);
        for (i, u) in b.chunks_exact_mut(UNIT).enumerate() {
            stamp(u, 0, off + (i * UNIT) as u64, 1, 7);
        }
    });
    println!("  unique + verify stamp       {r:6.2} GB/s");
    let mut buf = vec![0u8; 128 << 10];
    Generator::new(&default, 1).fill(&mut buf, 0);
    for (i, u) in buf.chunks_exact_mut(UNIT).enumerate() {
        stamp(u, 0, (i * UNIT) as u64, 1, 7);
    }
    let expect = ioscope::data::KeyExpectation::exact(7);
    let n = total / buf.len() as u64;
    let t = Instant::now();
    for _ in 0..n {
        for (i, u) in buf.chunks_exact(UNIT).enumerate() {
            black_box(check(black_box(u), 0, (i * UNIT) as u64, &expect).unwrap());
        }
    }
    println!(
        "  verify check (read side)    {:6.2} GB/s",
        gbps(n * buf.len() as u64, t.elapsed().as_secs_f64())
    );

    // Key map: one write and one read of a unit, uncontended.
    let map = KeyMap::new(1 << 20);
    let ops = 20_000_000u64;
    let t = Instant::now();
    for i in 0..ops {
        let u = (i.wrapping_mul(0x9e37_79b9)) & ((1 << 20) - 1);
        let w = map.begin_write(u);
        black_box(map.end_write(w, true));
    }
    let w_ns = t.elapsed().as_nanos() as f64 / ops as f64;
    let t = Instant::now();
    for i in 0..ops {
        let u = (i.wrapping_mul(0x9e37_79b9)) & ((1 << 20) - 1);
        let r = map.begin_read(u);
        black_box(map.end_read(r));
    }
    let r_ns = t.elapsed().as_nanos() as f64 / ops as f64;
    println!("key map: begin+end write {w_ns:.1} ns/unit, begin+end read {r_ns:.1} ns/unit");

    journal_cost();
}

/// 4 KiB random writes to a file, without and with the journal. Each journaled write
/// records an intent, writes it out before the pwrite (the kill -9 rule), and a
/// commit after; fsync per the policy.
fn journal_cost() {
    let dir = std::env::var("IOSCOPE_BENCH_DIR").unwrap_or_else(|_| "/var/tmp".into());
    let base = std::path::Path::new(&dir).join(format!("ioscope-bench-{}", std::process::id()));
    std::fs::create_dir_all(&base).unwrap();
    let file_path = base.join("target.img");
    let ws: u64 = 256 << 20;
    let units = ws / UNIT as u64;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .write(true)
        .truncate(true)
        .open(&file_path)
        .unwrap();
    f.set_len(ws).unwrap();
    let mut g = Generator::new(&DataSpec::default(), 5);
    let secs = 3.0;
    println!(
        "journal cost: 4 KiB random buffered pwrite to {}, {secs} s each:",
        file_path.display()
    );
    let mut run = |label: &str, policy: Option<SyncPolicy>, batch: usize| {
        let jdir = base.join("journal");
        let _ = std::fs::remove_dir_all(&jdir);
        let map = KeyMap::new(units);
        let mut jw = policy.map(|p| {
            let (j, _) = Journal::open_or_create(&jdir, "bench", UNIT as u32, ws).unwrap();
            j.writer(0, p).unwrap()
        });
        let mut bufs = vec![vec![0u8; UNIT]; batch];
        let mut tickets = Vec::with_capacity(batch);
        let start = Instant::now();
        let mut n = 0u64;
        let mut x = 1u64;
        while start.elapsed().as_secs_f64() < secs {
            // One submit batch: intents, one before_submit, the writes, the commits.
            let now = start.elapsed().as_nanos() as u64;
            tickets.clear();
            for b in bufs.iter_mut() {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let unit = (x >> 20) % units;
                g.fill(b, unit * UNIT as u64);
                let t = map.begin_write(unit);
                stamp(b, 0, unit * UNIT as u64, 0, t.key);
                if let Some(w) = jw.as_mut() {
                    w.record_intent(&t, now).unwrap();
                }
                tickets.push(t);
            }
            if let Some(w) = jw.as_mut() {
                w.before_submit(now).unwrap();
            }
            for (b, t) in bufs.iter().zip(&tickets) {
                f.write_at(b, t.unit * UNIT as u64).unwrap();
                n += 1;
            }
            for t in &tickets {
                let clean = map.end_write(*t, true);
                if let Some(w) = jw.as_mut() {
                    w.record_commit(t, true, clean, now).unwrap();
                }
            }
        }
        let syncs = jw.as_ref().map(|w| w.syncs()).unwrap_or(0);
        drop(jw);
        let rate = n as f64 / start.elapsed().as_secs_f64();
        println!("  {label:<44} {rate:>9.0} writes/s ({syncs} fsyncs)");
        rate
    };
    let plain = run("no journal", None, 1);
    for batch in [1, 32] {
        let b = run(
            &format!("journal batched (1024 rec/10 ms), {batch}/submit"),
            Some(SyncPolicy::default()),
            batch,
        );
        println!("    -> {:.1}% fewer writes/s", 100.0 * (1.0 - b / plain));
    }
    for batch in [1, 32] {
        let s = run(
            &format!("journal strict (fsync per submit), {batch}/submit"),
            Some(SyncPolicy::strict()),
            batch,
        );
        println!("    -> {:.1}% fewer writes/s", 100.0 * (1.0 - s / plain));
    }
    let _ = std::fs::remove_dir_all(&base);
}
