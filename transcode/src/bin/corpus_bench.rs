//! Compiles every shader of the differential corpus (`corpus/shaders/**/*.spv`) and reports
//! how long the SPIR-V -> VX compilation takes (the part of vkCreateComputePipelines that is
//! ours) and how big the kernels are: instructions, registers, ray-query slots, private and
//! LMEM bytes. The layout is read off each module (`reflect_layout`); specialization
//! constants keep their defaults.
//!
//! Usage: corpus_bench [CORPUS_DIR] [--runs N] [--dump DIR]   (default: the repository's
//! corpus, 5 runs; the time reported is the median run). `--dump DIR` also writes every
//! kernel as `DIR/AREA/NAME.vx` (the encoded instructions and the header fields) and
//! `NAME.vxs` (the listing): `diff -r` of two dumps shows whether a compiler change altered
//! any generated code.

use std::path::{Path, PathBuf};
use std::time::Instant;
use vortex_transcode::shader::{compile, optimize_from_env, reflect_layout, CompileOptions};

fn spv_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            spv_files(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "spv") {
            out.push(p);
        }
    }
    Ok(())
}

fn main() {
    let mut dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/shaders");
    let mut runs = 5usize;
    let mut dump: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(5).max(1),
            "--dump" => dump = args.next().map(PathBuf::from),
            "-h" | "--help" => {
                println!("usage: corpus_bench [CORPUS_DIR] [--runs N] [--dump DIR]");
                return;
            }
            _ => dir = PathBuf::from(a),
        }
    }
    let mut files = Vec::new();
    if let Err(e) = spv_files(&dir, &mut files) {
        eprintln!("corpus_bench: cannot list {}: {e}", dir.display());
        std::process::exit(2);
    }
    files.sort();
    println!(
        "{:<44} {:>9} {:>7} {:>6} {:>4} {:>8} {:>6}",
        "shader", "compile", "instrs", "regs", "rq", "private", "lmem"
    );
    let (mut total_ms, mut total_instrs, mut total_regs, mut n, mut failed) = (0.0, 0u64, 0u64, 0u64, 0);
    let mut times = Vec::new();
    let mut instrs = Vec::new();
    for f in &files {
        let id = f.strip_prefix(&dir).unwrap_or(f).with_extension("").to_string_lossy().replace('\\', "/");
        let bytes = match std::fs::read(f) {
            Ok(b) => b,
            Err(e) => {
                println!("{id:<44} cannot read: {e}");
                failed += 1;
                continue;
            }
        };
        let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let layout = match reflect_layout(&words) {
            Ok(l) => l,
            Err(e) => {
                println!("{id:<44} layout: {e}");
                failed += 1;
                continue;
            }
        };
        let opts = CompileOptions { layout, optimize: optimize_from_env(), ..CompileOptions::entry("main") };
        let mut ms = Vec::with_capacity(runs);
        let mut kernel = None;
        for _ in 0..runs {
            let t0 = Instant::now();
            let k = compile(&words, &opts);
            ms.push(t0.elapsed().as_secs_f64() * 1e3);
            kernel = Some(k);
        }
        ms.sort_by(|a, b| a.total_cmp(b));
        let med = ms[ms.len() / 2];
        match kernel.expect("at least one run") {
            Ok(k) => {
                println!(
                    "{id:<44} {med:>7.3}ms {:>7} {:>6} {:>4} {:>8} {:>6}",
                    k.code.len(),
                    k.num_regs,
                    k.num_queries,
                    k.private_bytes,
                    k.lmem_bytes
                );
                if let Some(d) = &dump {
                    if let Err(e) = write_dump(d, &id, &k) {
                        eprintln!("corpus_bench: cannot dump {id}: {e}");
                        std::process::exit(2);
                    }
                }
                total_ms += med;
                total_instrs += k.code.len() as u64;
                total_regs += k.num_regs as u64;
                n += 1;
                times.push(med);
                instrs.push(k.code.len());
            }
            Err(e) => {
                println!("{id:<44} refused: {e}");
                failed += 1;
            }
        }
    }
    if n == 0 {
        eprintln!("corpus_bench: no shader compiled");
        std::process::exit(1);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    instrs.sort_unstable();
    println!(
        "\n{n} kernels ({failed} not compiled): compile total {total_ms:.1} ms, mean {:.3} ms, median {:.3} ms, max {:.3} ms",
        total_ms / n as f64,
        times[times.len() / 2],
        times[times.len() - 1]
    );
    println!(
        "kernel size: mean {:.0} instructions (median {}, max {}), mean {:.0} registers",
        total_instrs as f64 / n as f64,
        instrs[instrs.len() / 2],
        instrs[instrs.len() - 1],
        total_regs as f64 / n as f64
    );
}

/// `DIR/ID.vx`: the encoded instructions, then the header fields as text; `DIR/ID.vxs`: the
/// listing.
fn write_dump(dir: &Path, id: &str, k: &vortex_transcode::shader::CompiledKernel) -> std::io::Result<()> {
    let path = dir.join(id);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut bin = vortex_model::abi::isa::encode_all(&k.code);
    let header = format!(
        "regs {} queries {} private {} lmem {} local {:?}\n",
        k.num_regs, k.num_queries, k.private_bytes, k.lmem_bytes, k.local_size
    );
    bin.extend_from_slice(header.as_bytes());
    std::fs::write(path.with_extension("vx"), bin)?;
    std::fs::write(path.with_extension("vxs"), k.disassemble())
}
