//! Soak: many submissions of a small dispatch, to show that the driver's cost per
//! submission and its memory stay flat however long a program runs — in particular with
//! `VORTEX_STATS`, whose counters file grows by one line per dispatch.
//!
//! Each submission records a fresh command buffer (bind, one 64-invocation workgroup that
//! counts itself into a buffer), submits it and waits for its fence. Every `--slice`
//! submissions the program prints the slice's wall time and the process's resident memory
//! (from `/proc/self/statm`); at the end, the counter must equal the invocations run and, on
//! Vortex RT, the stats file must hold one line per dispatch.
//!
//! `VORTEX_STATS` is set to `$TMPDIR/vortex-soak-stats.jsonl` unless it is already set
//! (lavapipe ignores it: it is the baseline).
//!
//! Usage: soak [--icd vortex|lavapipe|PATH] [--submits N (10000)] [--slice N (1000)]
//! Exit 0: the counts are right; 1: they are not; 2: could not run.

use ash::vk;
use std::time::Instant;
use vortex_examples::{Buffer, ComputePipeline, Context, Icd};

const SOAK: &[u8] = include_bytes!("../../shaders/soak.spv");
/// Invocations per dispatch (the shader's workgroup size, one workgroup).
const INVOCATIONS: u64 = 64;

struct Options {
    icd: Icd,
    submits: u64,
    slice: u64,
}

fn parse_args() -> Result<Option<Options>, String> {
    let mut o = Options { icd: Icd::Vortex, submits: 10_000, slice: 1_000 };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--icd" => o.icd = Icd::parse(&value("--icd")?),
            "--submits" => o.submits = value("--submits")?.parse().map_err(|e| format!("--submits: {e}"))?,
            "--slice" => o.slice = value("--slice")?.parse().map_err(|e| format!("--slice: {e}"))?,
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    if o.submits == 0 || o.slice == 0 {
        return Err("--submits and --slice must be at least 1".into());
    }
    Ok(Some(o))
}

/// Resident memory of this process in MiB: `/proc/self/statm`'s second field, in pages of
/// the size the kernel gave the process (`AT_PAGESZ` in `/proc/self/auxv`).
fn rss_mib() -> f64 {
    let pages: u64 = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0);
    pages as f64 * page_size() as f64 / (1024.0 * 1024.0)
}

fn page_size() -> u64 {
    const AT_PAGESZ: u64 = 6;
    let auxv = std::fs::read("/proc/self/auxv").unwrap_or_default();
    let words: Vec<u64> = auxv.chunks_exact(8).map(|c| u64::from_ne_bytes(c.try_into().unwrap())).collect();
    words.chunks_exact(2).find(|kv| kv[0] == AT_PAGESZ).map_or(4096, |kv| kv[1])
}

/// Runs the soak; returns the counter's final value.
fn soak(ctx: &Context, o: &Options) -> Result<u64, String> {
    let err = |e: vortex_examples::Error| e.to_string();
    let counter = Buffer::new(ctx, 4, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    counter.write(&[0u32]);
    let pipe = ComputePipeline::new(ctx, SOAK, &[vk::DescriptorType::STORAGE_BUFFER], 0).map_err(err)?;
    pipe.bind_storage_buffer(0, &counter);
    println!("{:>15}  {:>9}  {:>13}  {:>9}", "submits", "slice s", "ms/submit", "RSS MiB");
    println!("{:>15}  {:>9}  {:>13}  {:>9.1}", "before", "", "", rss_mib());
    let mut done = 0;
    while done < o.submits {
        let n = o.slice.min(o.submits - done);
        let t = Instant::now();
        for _ in 0..n {
            ctx.submit_once(|cmd| pipe.record_dispatch(cmd, &[], [1, 1, 1])).map_err(err)?;
        }
        let s = t.elapsed().as_secs_f64();
        let range = format!("{}-{}", done + 1, done + n);
        println!("{range:>15}  {s:>9.3}  {:>13.3}  {:>9.1}", s * 1e3 / n as f64, rss_mib());
        done += n;
    }
    Ok(counter.read::<u32>()[0] as u64)
}

/// The stats file's dispatch records, checked to be one JSON object per line.
fn stats_lines(path: &str) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    for (n, line) in text.lines().enumerate() {
        let ok = line.trim_start().starts_with('{') && line.contains("\"kernel\"") && line.trim_end().ends_with('}');
        if !ok {
            return Err(format!("{path} line {}: not a dispatch record: {line:.80}", n + 1));
        }
    }
    Ok(text.lines().count())
}

fn main() {
    let o = match parse_args() {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("usage: soak [--icd vortex|lavapipe|PATH] [--submits N (10000)] [--slice N (1000)]");
            return;
        }
        Err(e) => {
            eprintln!("soak: {e}");
            std::process::exit(2);
        }
    };
    let stats = std::env::var("VORTEX_STATS").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| {
        let p = std::env::temp_dir().join("vortex-soak-stats.jsonl").to_string_lossy().into_owned();
        // Before the loader and the driver start: they read the environment.
        std::env::set_var("VORTEX_STATS", &p);
        p
    });
    let ctx = Context::new(&o.icd).unwrap_or_else(|e| {
        eprintln!("soak: {e}");
        std::process::exit(2);
    });
    println!(
        "soak on {}: {} submits of one {INVOCATIONS}-invocation dispatch, VORTEX_STATS={stats}",
        ctx.info().name,
        o.submits
    );
    let t = Instant::now();
    let count = soak(&ctx, &o).unwrap_or_else(|e| {
        eprintln!("soak: {e}");
        std::process::exit(2);
    });
    let total = t.elapsed().as_secs_f64();
    println!("total {total:.3} s, {:.3} ms/submit", total * 1e3 / o.submits as f64);
    let mut ok = count == o.submits * INVOCATIONS;
    println!("counter {count} (expected {})", o.submits * INVOCATIONS);
    if ctx.info().name.contains("Vortex") {
        match stats_lines(&stats) {
            Ok(n) => {
                println!("stats: {n} dispatch records in {stats}");
                ok &= n as u64 == o.submits;
            }
            Err(e) => {
                println!("stats: {e}");
                ok = false;
            }
        }
    }
    std::process::exit(if ok { 0 } else { 1 });
}
