//! Timed-mode behaviour the functional model cannot show: where CTAs land and when (seed
//! 002), and the RTU microarchitecture's mechanisms (seed 000 §2–§5) seen through their
//! counters. Results are checked too; cycle counts are compared only relative to each other.

mod common;

use common::rq::{build_scene, build_scene_flags, run, spirv, SAMPLES};
use vortex_model::abi::csr;
use vortex_model::abi::dcr::*;
use vortex_model::abi::isa::{Instr, MemSize, Op, REG_NONE as N};
use vortex_model::abi::kernel::{build_image, kargs, KernelHeader};
use vortex_model::config::{DeviceConfig, Mode, WaitMode};
use vortex_model::device::{Device, DispatchReport};

fn r(op: Op, m: u8, d: u16, a: u16, b: u16, imm: u32) -> Instr {
    Instr::r(op, m, d, a, b, N, N, imm)
}

fn timed(f: impl FnOnce(&mut DeviceConfig)) -> DeviceConfig {
    let mut c = DeviceConfig { mode: Mode::Timed, watchdog_ms: 30_000, ..Default::default() };
    f(&mut c);
    c
}

/// Runs a kernel in which thread 0 of every CTA writes (core id, CTA id, LMEM address) to
/// out[3 * linear block id]; returns the records and the report.
fn where_ctas_land(
    cfg: DeviceConfig,
    grid: [u32; 3],
    cluster: [u32; 3],
    block: u32,
    lmem: u32,
) -> (Vec<[u32; 3]>, DispatchReport) {
    let mut dev = Device::new(cfg).unwrap();
    let n = (grid[0] * grid[1] * grid[2]) as usize;
    let alloc = |dev: &Device, bytes: &[u8]| {
        let reg = dev.memory().allocate(bytes.len().max(16) as u64).unwrap();
        dev.memory().snapshot().write(reg.base, bytes).unwrap();
        reg.base
    };
    let out = alloc(&dev, &vec![0u8; 12 * n.max(1)]);
    let mut k = vec![0u8; kargs::BYTES];
    k[kargs::PUSH..kargs::PUSH + 8].copy_from_slice(&out.to_le_bytes());
    let param = alloc(&dev, &k);
    let code = vec![
        r(Op::Csr, 0, 0, N, N, csr::CTA_THREAD_ID_X),
        Instr::bra(0, 14, 2, 14),
        // r2..r3 = out
        r(Op::Csr, 0, 4, N, N, csr::PARAM_LO),
        r(Op::Csr, 0, 5, N, N, csr::PARAM_HI),
        r(Op::Ldg, MemSize::B64 as u8, 2, 4, N, kargs::PUSH as u32),
        // r6 = block id (linear over x, y): bx + by * gx
        r(Op::Csr, 0, 6, N, N, csr::CTA_BLOCK_ID_Y),
        r(Op::Csr, 0, 7, N, N, csr::CTA_GRID_DIM_X),
        r(Op::Imul, 0, 6, 6, 7, 0),
        r(Op::Csr, 0, 7, N, N, csr::CTA_BLOCK_ID_X),
        r(Op::Iadd, 0, 6, 6, 7, 0),
        // r8..r9 = out + 12 * id
        r(Op::Movi, 0, 7, N, N, 12),
        r(Op::Imulx, 0, 8, 6, 7, 0),
        r(Op::Iadd64, 0, 8, 2, 8, 0),
        r(Op::Jmp, 0, N, N, N, 15),
        r(Op::Exit, 0, N, N, N, 0),
        r(Op::Csr, 0, 10, N, N, csr::CORE_ID),
        r(Op::Csr, 0, 11, N, N, csr::CTA_ID),
        r(Op::Csr, 0, 12, N, N, csr::CTA_LMEM_ADDR),
        r(Op::Stg, MemSize::B32 as u8, N, 8, 10, 0),
        r(Op::Stg, MemSize::B32 as u8, N, 8, 11, 4),
        r(Op::Stg, MemSize::B32 as u8, N, 8, 12, 8),
        r(Op::Exit, 0, N, N, N, 0),
    ];
    let mut h = KernelHeader::new(16, [block, 1, 1]);
    h.kernel_id = 1;
    h.lmem_bytes = lmem;
    let img = build_image(h.clone(), &code, "where");
    let pc = alloc(&dev, &img);
    let launch = Launch { pc, param, grid, block: [block, 1, 1], lmem_bytes: lmem, cluster };
    for (a, v) in launch.kmu_writes(dev.config().num_threads) {
        dev.dcr_write(a, v).unwrap();
    }
    let rep = dev.start().unwrap();
    let mut data = vec![0u8; 12 * n];
    dev.memory().snapshot().read(out, &mut data).unwrap();
    let recs = data
        .chunks_exact(12)
        .map(|c| [0, 1, 2].map(|k| u32::from_le_bytes(c[4 * k..4 * k + 4].try_into().unwrap())))
        .collect();
    (recs, rep)
}

fn one_cluster_of_four() -> DeviceConfig {
    timed(|c| {
        c.num_clusters = 1;
        c.cores_per_cluster = 4;
        c.socket_size = 4;
    })
}

#[test]
fn a_cluster_lands_on_one_core_and_clusters_round_robin() {
    // 16 CTAs in clusters of 2 along x: the 8 clusters go round robin over the 4 cores.
    let (recs, rep) = where_ctas_land(one_cluster_of_four(), [8, 2, 1], [2, 1, 1], 32, 0);
    assert_eq!(rep.totals.ctas, 16);
    for y in 0..2 {
        for cx in 0..4 {
            let (a, b) = (recs[y * 8 + 2 * cx], recs[y * 8 + 2 * cx + 1]);
            assert_eq!(a[0], b[0], "cluster ({cx},{y}): members on cores {} and {}", a[0], b[0]);
        }
    }
    // Walk order is cluster by cluster; the first four clusters take the four cores.
    let firsts: Vec<u32> = (0..4).map(|cx| recs[2 * cx][0]).collect();
    assert_eq!(firsts, vec![0, 1, 2, 3], "round robin per cluster");
    // Members of a cluster are consecutive slots: LMEM addresses base + r * stride.
    let (_, rep) = where_ctas_land(one_cluster_of_four(), [4, 1, 1], [4, 1, 1], 32, 1024);
    assert_eq!(rep.per_core.iter().filter(|c| c.ctas > 0).count(), 1, "a 4-CTA cluster fills one core");
}

#[test]
fn cluster_members_are_contiguous_in_lmem_and_per_cta_round_robin_without_clusters() {
    let (recs, _) = where_ctas_land(one_cluster_of_four(), [4, 1, 1], [4, 1, 1], 32, 1024);
    let base = recs[0][2];
    for (r, rec) in recs.iter().enumerate() {
        assert_eq!(rec[0], recs[0][0]);
        assert_eq!(rec[2], base + r as u32 * 1024, "member {r} at base + r * stride");
        assert_eq!(rec[1], recs[0][1] + r as u32, "consecutive slots");
    }
    let (recs, _) = where_ctas_land(one_cluster_of_four(), [4, 1, 1], [1, 1, 1], 32, 0);
    let cores: Vec<u32> = recs.iter().map(|r| r[0]).collect();
    assert_eq!(cores, vec![0, 1, 2, 3], "cluster_dim 1: plain per-CTA round robin");
}

#[test]
fn lmem_bounds_occupancy_and_slots_are_reused() {
    // 40 KB per CTA on a 64 KB core: one CTA at a time, always in slot 0.
    let (recs, rep) = where_ctas_land(one_cluster_of_four(), [12, 1, 1], [1, 1, 1], 32, 40 * 1024);
    assert!(recs.iter().all(|r| r[1] == 0 && r[2] == 0), "{recs:?}");
    assert_eq!(rep.totals.ctas, 12);
    // 16 KB: four slots per core, bases at multiples of the stride.
    let (recs, _) = where_ctas_land(one_cluster_of_four(), [32, 1, 1], [1, 1, 1], 32, 16 * 1024);
    assert!(recs.iter().all(|r| r[1] < 4 && r[2] == r[1] * 16 * 1024), "{recs:?}");
    // More slots make the same grid shorter: occupancy is what the allocator buys.
    let (_, one) = where_ctas_land(one_cluster_of_four(), [32, 1, 1], [1, 1, 1], 256, 40 * 1024);
    let (_, four) = where_ctas_land(one_cluster_of_four(), [32, 1, 1], [1, 1, 1], 256, 16 * 1024);
    let (c1, c4) = (one.timed.unwrap().cycles, four.timed.unwrap().cycles);
    assert!(c4 < c1, "4 CTAs per core ({c4} cycles) beat 1 ({c1})");
}

#[test]
fn register_and_private_budgets_bound_resident_warps() {
    // The kernel has 16 registers: a 32-lane warp holds 512. A 1024-register file keeps two
    // warps (two one-warp CTAs) resident where 32 would fit otherwise.
    let run = |f: fn(&mut DeviceConfig)| {
        let mut cfg = one_cluster_of_four();
        f(&mut cfg);
        where_ctas_land(cfg, [64, 1, 1], [1, 1, 1], 32, 0)
    };
    let (free_recs, free) = run(|_| {});
    let (reg_recs, regs) = run(|c| c.core.register_file = 1024);
    let (_, off) = run(|c| {
        c.core.register_file = 1024;
        c.core.occupancy = false;
    });
    let t = |r: &DispatchReport| r.timed.clone().unwrap();
    let (tf, tr, to) = (t(&free), t(&regs), t(&off));
    assert!(tf.cores.iter().all(|c| c.resident_warp_limit == 32 && c.occupancy_limited_cycles == 0));
    assert!(tr.cores.iter().all(|c| c.resident_warp_limit == 2), "{:?}", tr.cores);
    assert!(tr.cores.iter().any(|c| c.occupancy_limited_cycles > 0));
    assert!(to.cores.iter().all(|c| c.resident_warp_limit == 32), "the knob turns the bound off");
    assert_eq!((to.cycles, &to.cores), (tf.cycles, &tf.cores), "off: the same machine as a large budget");
    assert!(tr.cycles > tf.cycles, "two resident warps ({}) take longer than 32 ({})", tr.cycles, tf.cycles);
    // Where CTAs ran and what they wrote may differ by slot, never by block.
    assert_eq!(free_recs.len(), reg_recs.len());
    // A private-memory budget bounds the same way (the kernel declares none: no bound).
    let (_, private) = run(|c| c.core.private_memory = 0);
    assert!(t(&private).cores.iter().all(|c| c.resident_warp_limit == 32));
}

#[test]
fn empty_grid_walks_nothing_and_busy_covers_the_launch_link() {
    let (recs, rep) = where_ctas_land(one_cluster_of_four(), [0, 4, 1], [1, 1, 1], 32, 0);
    assert!(recs.is_empty());
    assert_eq!(rep.totals.ctas, 0);
    // A longer launch link delays the end by the same amount: the dispatch is busy while
    // the last CTA is still on its way, never done early.
    let short = where_ctas_land(one_cluster_of_four(), [1, 1, 1], [1, 1, 1], 32, 0).1.timed.unwrap().cycles;
    let long = where_ctas_land(
        timed(|c| {
            c.num_clusters = 1;
            c.cores_per_cluster = 4;
            c.socket_size = 4;
            c.sim.launch_latency = 103;
        }),
        [1, 1, 1],
        [1, 1, 1],
        32,
        0,
    )
    .1
    .timed
    .unwrap()
    .cycles;
    assert_eq!(long - short, 100);
}

#[test]
fn warp_expansion_takes_a_cycle_per_warp() {
    // One CTA of 32 warps vs one of 1 warp: the dispatcher emits a warp per cycle, so the
    // big CTA's last warp starts 31 cycles later.
    let small = where_ctas_land(one_cluster_of_four(), [1, 1, 1], [1, 1, 1], 32, 0).1.timed.unwrap().cycles;
    let big = where_ctas_land(one_cluster_of_four(), [1, 1, 1], [1, 1, 1], 1024, 0).1.timed.unwrap().cycles;
    assert!(big >= small + 31, "{big} vs {small}");
}

fn glslang() -> bool {
    std::process::Command::new("glslangValidator").arg("--version").output().is_ok()
}

const PRIMARY: &str = crate::rq_kernel!(
    r#"    float x = (float(i % pc.width) + 0.5) / float(pc.width) * 2.0 - 1.0;
    float y = (float(i / pc.width) + 0.5) / float(pc.height) * 2.0 - 1.0;
    rayQueryEXT rq;
    rayQueryInitializeEXT(rq, tlas, pc.flag != 0u ? gl_RayFlagsNoneEXT : gl_RayFlagsOpaqueEXT, 0xFF,
                          vec3(0.0, 1.1, -1.6), 0.0, normalize(vec3(x, -0.55 + 0.6 * y, 1.0)), 100.0);
    uint c = 0u;
    while (rayQueryProceedEXT(rq)) { c++; if (c % 2u == 0u) rayQueryConfirmIntersectionEXT(rq); }
    o[3u * i] = floatBitsToUint(rayQueryGetIntersectionTEXT(rq, true));
    o[3u * i + 1u] = c;
    o[3u * i + 2u] = 0u;"#
);

#[test]
fn parked_wait_keeps_the_rtu_fed_and_holding_the_port_starves_it() {
    if !glslang() {
        return;
    }
    let s = build_scene(32, 4);
    let w = spirv(SAMPLES);
    // Enough slots that the RTU's intake is limited by the cores' TRACE bursts, not the pool.
    let parked = run(&s, &w, &timed(|c| c.rtu.slots_per_core = 16), 32, false);
    let hold = run(
        &s,
        &w,
        &timed(|c| {
            c.rtu.slots_per_core = 16;
            c.core.wait_mode = WaitMode::Hold;
        }),
        32,
        false,
    );
    assert_eq!(parked.data, hold.data);
    let (p, h) = (parked.report.timed.unwrap(), hold.report.timed.unwrap());
    assert!(p.cycles < h.cycles, "parked {} vs hold {}", p.cycles, h.cycles);
    let (pf, hf) = (p.rtu_fractions(), h.rtu_fractions());
    assert!(hf.2 > pf.2, "starved: hold {:.3} vs parked {:.3}", hf.2, pf.2);
    assert!(h.cores.iter().map(|c| c.stall_wait_hold).sum::<u64>() > 0);
}

#[test]
fn rtu_mechanisms_show_in_their_counters() {
    if !glslang() {
        return;
    }
    let s = build_scene_flags(32, 4, 0);
    let w = spirv(PRIMARY);
    // PENDING lanes: a batch goes back as soon as one lane holds a candidate.
    let pend = run(&s, &w, &timed(|c| c.rtu.reform_thresh = 1), 32, true);
    let all = run(&s, &w, &timed(|_| {}), 32, true);
    assert_eq!(pend.data, all.data);
    let (pt, at) = (pend.report.timed.unwrap(), all.report.timed.unwrap());
    assert!(pt.rtu_totals().pending_lanes > 0);
    assert_eq!(at.rtu_totals().pending_lanes, 0);
    assert!(pt.rtu_totals().batches > at.rtu_totals().batches);
    // A small pool back-pressures: traces wait in staging for a slot.
    assert!(at.rtu_totals().slot_full_cycles > 0);
    // One MSHR: the RTCache refuses and the walker retries.
    let o = run(&build_scene(32, 4), &w, &timed(|c| c.rtu.rtcache_mshrs = 1), 32, false);
    let t = o.report.timed.unwrap();
    assert!(t.rtcache_totals().mshr_full_stalls > 0 && t.rtu_totals().port_retries > 0);
    // Merging: duplicate in-flight lines ride one MSHR.
    let o = run(&build_scene(32, 4), &w, &timed(|c| c.rtu.merge_depth = 8), 32, false);
    let t = o.report.timed.unwrap();
    assert!(t.rtcache_totals().merges > 0);
    let none = run(&build_scene(32, 4), &w, &timed(|_| {}), 32, false).report.timed.unwrap();
    assert_eq!(none.rtcache_totals().merges, 0);
    // A 4-entry short stack overflows and restarts; the answers do not change.
    let small = run(
        &build_scene(32, 4),
        &w,
        &timed(|c| {
            c.rtu.stack_depth = 4;
            c.rtu.restart_cap = 1 << 20;
        }),
        32,
        false,
    );
    let big = run(&build_scene(32, 4), &w, &timed(|_| {}), 32, false);
    assert_eq!(small.data, big.data);
    assert!(small.report.totals.rtu.restarts > 0 && big.report.totals.rtu.restarts == 0);
    // The PEs, transforms and records are all accounted.
    let e = big.report.timed.as_ref().unwrap().rtu_totals();
    assert!(e.box_pe_cycles > 0 && e.tri_pe_cycles > 0 && e.xform_pe_cycles > 0 && e.busy_cycles > 0);
    assert!(e.busy_cycles + e.idle_with_ray + e.idle_starved == e.cycles);
}

/// FNV-1a of `s` (a stable digest for the pins below).
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// The report as JSON without the host's wall-clock fields.
fn simulated(j: &mut serde_json::Value) {
    match j {
        serde_json::Value::Object(m) => {
            m.remove("wall_ms");
            m.remove("simulated_cycles_per_second");
            m.values_mut().for_each(simulated);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(simulated),
        _ => {}
    }
}

/// Every timed counter of a fixed ray-query workload, pinned: work on the simulator's own
/// speed must leave the simulated machine exactly as it was (cycles, stalls, every cache,
/// RTU and core counter in the report). A deliberate change to the timing model updates
/// the pins (a mismatch prints the reports), and so does a change to the compiled kernel.
#[test]
fn timed_counters_are_pinned() {
    if !glslang() {
        return;
    }
    let w = spirv(PRIMARY);
    let s = build_scene(32, 4);
    let machines = [
        ("default machine", timed(|_| {})),
        // RTCache refusals on most requests: the retry path.
        ("one RTCache MSHR", timed(|c| c.rtu.rtcache_mshrs = 1)),
        (
            "one host thread, 1 KB RTCache merging",
            timed(|c| {
                c.host_threads = 1;
                c.rtu.rtcache_size = 1024;
                c.rtu.merge_depth = 4;
            }),
        ),
        // Several lines of a record sent in one micro-step.
        (
            "four RTCache ports and banks",
            timed(|c| {
                c.rtu.num_rtu_blocks = 4;
                c.rtu.rtcache_banks = 4;
            }),
        ),
    ];
    let pins: [(u64, u64); 4] = [
        (25_846, 6_141_142_214_579_853_021),
        (175_699, 15_310_305_620_271_251_958),
        (26_159, 8_261_301_427_010_806_474),
        (25_774, 890_638_377_628_037_475),
    ];
    let mut reports = String::new();
    let mut got = Vec::new();
    for (label, cfg) in &machines {
        let o = run(&s, &w, cfg, 32, true);
        let mut j = o.report.to_json();
        simulated(&mut j);
        let text = j.to_string();
        got.push((o.report.timed.as_ref().expect("timed").cycles, fnv(&text)));
        reports += &format!("{label}: {text}\n");
    }
    assert_eq!(got, pins, "(cycles, digest of the report) per machine; the reports:\n{reports}");
}
