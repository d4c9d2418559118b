//! End-to-end tests of the device model: hand-assembled VX kernels launched through DCRs.

use vortex_model::abi::csr;
use vortex_model::abi::dcr::*;
use vortex_model::abi::isa::{AtomicOp, Instr, IntCond, MemSize, Op, REG_NONE as N};
use vortex_model::abi::kernel::{build_image, kargs, KernelHeader};
use vortex_model::config::{DeviceConfig, Mode};
use vortex_model::device::Device;
use vortex_model::fault::{Fault, FaultKind};

fn r(op: Op, m: u8, d: u16, a: u16, b: u16, c: u16, imm: u32) -> Instr {
    Instr::r(op, m, d, a, b, c, N, imm)
}

fn header(num_regs: u32, local: [u32; 3]) -> KernelHeader {
    KernelHeader { private_bytes: 16, ..KernelHeader::new(num_regs, local) }
}

struct Harness {
    dev: Device,
    next_id: u64,
}

impl Harness {
    fn new(cfg: DeviceConfig) -> Harness {
        Harness { dev: Device::new(cfg).unwrap(), next_id: 1 }
    }

    fn alloc(&self, bytes: &[u8]) -> u64 {
        let region = self.dev.memory().allocate(bytes.len().max(1) as u64).unwrap();
        self.dev.memory().snapshot().write(region.base, bytes).unwrap();
        region.base
    }

    fn read(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        self.dev.memory().snapshot().read(addr, &mut v).unwrap();
        v
    }

    fn launch(
        &mut self,
        mut h: KernelHeader,
        code: &[Instr],
        grid: [u32; 3],
        params: &[u8],
    ) -> Result<vortex_model::device::DispatchReport, vortex_model::fault::Fault> {
        h.kernel_id = self.next_id;
        self.next_id += 1;
        let img = build_image(h.clone(), code, "test");
        let pc = self.alloc(&img);
        let mut k = vec![0u8; kargs::BYTES];
        k[kargs::PUSH..kargs::PUSH + params.len()].copy_from_slice(params);
        let param = self.alloc(&k);
        let launch = Launch { pc, param, grid, block: h.local_size, lmem_bytes: h.lmem_bytes, cluster: [1, 1, 1] };
        for (a, v) in launch.kmu_writes(self.dev.config().num_threads) {
            self.dev.dcr_write(a, v).unwrap();
        }
        self.dev.start()
    }
}

/// Emits code loading the u64 push-constant at byte `off` into regs (d, d+1), using r0..r1 as
/// the kargs pointer.
fn load_param(d: u16, off: u32) -> Vec<Instr> {
    vec![
        r(Op::Csr, 0, 0, N, N, N, csr::PARAM_LO),
        r(Op::Csr, 0, 1, N, N, N, csr::PARAM_HI),
        r(Op::Ldg, MemSize::B64 as u8, d, 0, N, N, kargs::PUSH as u32 + off),
    ]
}

/// global id = block_id.x * block_dim.x + tid.x into `d` (clobbers d+1).
fn global_id(d: u16) -> Vec<Instr> {
    vec![
        r(Op::Csr, 0, d, N, N, N, csr::CTA_BLOCK_ID_X),
        r(Op::Csr, 0, d + 1, N, N, N, csr::CTA_BLOCK_DIM_X),
        r(Op::Imul, 0, d, d, d + 1, N, 0),
        r(Op::Csr, 0, d + 1, N, N, N, csr::CTA_THREAD_ID_X),
        r(Op::Iadd, 0, d, d, d + 1, N, 0),
    ]
}

/// addr (d, d+1) = base pair (b, b+1) + idx * 4 (clobbers t, t+1, t+2, t+3).
fn index_addr(d: u16, base: u16, idx: u16, t: u16) -> Vec<Instr> {
    vec![
        r(Op::Movi, 0, t + 2, N, N, N, 2),
        r(Op::Shl, 0, t, idx, t + 2, N, 0),
        r(Op::Movi, 0, t + 1, N, N, N, 0),
        r(Op::Iadd64, 0, d, base, t, N, 0),
    ]
}

fn exit() -> Instr {
    r(Op::Exit, 0, N, N, N, N, 0)
}

#[test]
fn vector_add_over_many_ctas_and_partial_warps() {
    let mut h = Harness::new(DeviceConfig::default());
    let n = 1000u32; // not a multiple of the block: the last CTA has a partial warp
    let a: Vec<u8> = (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let b: Vec<u8> = (0..n).flat_map(|i| (2.0 * i as f32 + 0.5).to_le_bytes()).collect();
    let (pa, pb, pc) = (h.alloc(&a), h.alloc(&b), h.alloc(&vec![0u8; 4 * n as usize]));
    let mut params = Vec::new();
    for p in [pa, pb, pc] {
        params.extend_from_slice(&p.to_le_bytes());
    }
    params.extend_from_slice(&n.to_le_bytes());
    // r2..r3 a, r4..r5 b, r6..r7 c, r8 n, r9 gid, r14.. temps
    let mut code = Vec::new();
    code.extend(load_param(2, 0));
    code.extend(load_param(4, 8));
    code.extend(load_param(6, 16));
    code.push(r(Op::Ldg, MemSize::B32 as u8, 8, 0, N, N, kargs::PUSH as u32 + 24));
    code.extend(global_id(9));
    code.push(r(Op::Icmp, IntCond::Uge as u8, 11, 9, 8, N, 0));
    let bra_at = code.len();
    code.push(Instr::bra(11, 0, 0, 0)); // patched below: out of range -> exit
    code.extend(index_addr(12, 2, 9, 20));
    code.push(r(Op::Ldg, MemSize::B32 as u8, 16, 12, N, N, 0));
    code.extend(index_addr(12, 4, 9, 20));
    code.push(r(Op::Ldg, MemSize::B32 as u8, 17, 12, N, N, 0));
    code.push(r(Op::Fadd, 0, 18, 16, 17, N, 0));
    code.extend(index_addr(12, 6, 9, 20));
    code.push(r(Op::Stg, MemSize::B32 as u8, N, 12, 18, N, 0));
    let exit_pc = code.len() as u32;
    code.push(exit());
    code[bra_at] = Instr::bra(11, exit_pc, bra_at as u32 + 1, exit_pc);
    let rep = h.launch(header(24, [64, 1, 1]), &code, [n.div_ceil(64), 1, 1], &params).unwrap();
    let out = h.read(pc, 4 * n as usize);
    for i in 0..n as usize {
        let v = f32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(v, 3.0 * i as f32 + 0.5, "element {i}");
    }
    assert_eq!(rep.totals.ctas, n.div_ceil(64) as u64);
    assert!(rep.totals.instructions > 0);
}

#[test]
fn divergent_loop_reconverges() {
    // Each lane loops tid times, adding tid each iteration, then stores tid*tid.
    let mut h = Harness::new(DeviceConfig { num_threads: 8, ..Default::default() });
    let out = h.alloc(&[0u8; 4 * 32]);
    let mut code = Vec::new();
    code.extend(load_param(2, 0));
    code.extend(global_id(4)); // r4 = gid (lane count), r5 clobber
    code.push(r(Op::Movi, 0, 6, N, N, N, 0)); // r6 = i
    code.push(r(Op::Movi, 0, 7, N, N, N, 0)); // r7 = acc
    let header_pc = code.len() as u32; // loop header: while i < gid
    code.push(r(Op::Icmp, IntCond::Ult as u8, 8, 6, 4, N, 0));
    let bra_at = code.len();
    code.push(Instr::bra(8, 0, 0, 0));
    let body = code.len() as u32;
    code.push(r(Op::Iadd, 0, 7, 7, 4, N, 0));
    code.push(r(Op::Movi, 0, 9, N, N, N, 1));
    code.push(r(Op::Iadd, 0, 6, 6, 9, N, 0));
    code.push(r(Op::Jmp, 0, N, N, N, N, header_pc));
    let merge = code.len() as u32;
    code.extend(index_addr(10, 2, 4, 20));
    code.push(r(Op::Stg, MemSize::B32 as u8, N, 10, 7, N, 0));
    code.push(exit());
    code[bra_at] = Instr::bra(8, body, merge, merge);
    h.launch(header(24, [32, 1, 1]), &code, [1, 1, 1], &out.to_le_bytes()).unwrap();
    let v = h.read(out, 128);
    for i in 0..32u32 {
        assert_eq!(u32::from_le_bytes(v[4 * i as usize..][..4].try_into().unwrap()), i * i, "lane {i}");
    }
}

#[test]
fn barrier_and_lmem_reverse_within_a_cta() {
    // 64 threads (2 warps of 32): write tid to lmem[tid], barrier, read lmem[63 - tid].
    let mut h = Harness::new(DeviceConfig::default());
    let out = h.alloc(&[0u8; 4 * 128]);
    let mut hd = header(32, [64, 1, 1]);
    hd.lmem_bytes = 256;
    let mut code = Vec::new();
    code.extend(load_param(2, 0));
    code.push(r(Op::Csr, 0, 4, N, N, N, csr::CTA_THREAD_ID_X));
    code.push(r(Op::Csr, 0, 5, N, N, N, csr::CTA_LMEM_ADDR));
    code.push(r(Op::Movi, 0, 6, N, N, N, 2));
    code.push(r(Op::Shl, 0, 7, 4, 6, N, 0));
    code.push(r(Op::Iadd, 0, 7, 7, 5, N, 0));
    code.push(r(Op::Stl, MemSize::B32 as u8, N, 7, 4, N, 0));
    code.push(r(Op::Bar, 1, N, N, N, N, 0));
    code.push(r(Op::Movi, 0, 8, N, N, N, 63));
    code.push(r(Op::Isub, 0, 8, 8, 4, N, 0));
    code.push(r(Op::Shl, 0, 8, 8, 6, N, 0));
    code.push(r(Op::Iadd, 0, 8, 8, 5, N, 0));
    code.push(r(Op::Ldl, MemSize::B32 as u8, 9, 8, N, N, 0));
    code.extend(global_id(10));
    code.extend(index_addr(12, 2, 10, 20));
    code.push(r(Op::Stg, MemSize::B32 as u8, N, 12, 9, N, 0));
    code.push(exit());
    h.launch(hd, &code, [2, 1, 1], &out.to_le_bytes()).unwrap();
    let v = h.read(out, 512);
    for i in 0..128usize {
        let got = u32::from_le_bytes(v[4 * i..][..4].try_into().unwrap());
        assert_eq!(got, 63 - (i as u32 % 64), "thread {i}");
    }
}

#[test]
fn global_atomics_from_every_core() {
    let mut h = Harness::new(DeviceConfig::default());
    let counter = h.alloc(&[0u8; 8]);
    let mut code = load_param(2, 0);
    code.push(r(Op::Movi, 0, 4, N, N, N, 1));
    code.push(r(Op::Atomg, AtomicOp::Add as u8, 5, 2, 4, N, 0));
    code.push(exit());
    h.launch(header(8, [128, 1, 1]), &code, [100, 1, 1], &counter.to_le_bytes()).unwrap();
    assert_eq!(u32::from_le_bytes(h.read(counter, 4).try_into().unwrap()), 12_800);
}

#[test]
fn out_of_bounds_store_is_a_fault_naming_lane_and_address() {
    let mut h = Harness::new(DeviceConfig::default());
    let buf = h.alloc(&[0u8; 64]);
    let mut code = load_param(2, 0);
    code.extend(global_id(4));
    code.extend(index_addr(6, 2, 4, 20));
    code.push(r(Op::Stg, MemSize::B32 as u8, N, 6, 4, N, 0));
    code.push(exit());
    // 32 threads write 128 bytes into a 64-byte buffer: lane 16 faults first.
    let f = h.launch(header(24, [32, 1, 1]), &code, [1, 1, 1], &buf.to_le_bytes()).unwrap_err();
    assert!(matches!(f.kind, FaultKind::Memory(_)), "{f}");
    assert_eq!(f.lane, Some(16), "{f}");
    assert_eq!(f.address(), Some(buf + 64), "{f}");
    assert!(f.to_string().contains("kernel 'test'"), "{f}");
    // The device still works afterwards.
    let mut ok = load_param(2, 0);
    ok.push(exit());
    h.launch(header(8, [1, 1, 1]), &ok, [1, 1, 1], &buf.to_le_bytes()).unwrap();
}

/// A load every active lane makes from one address is read once and broadcast: every
/// active lane, in a full and in a partial warp, gets the value, and a uniform load from an
/// unmapped address faults on the first active lane.
#[test]
fn uniform_loads_broadcast_and_fault_on_the_first_active_lane() {
    let mut h = Harness::new(DeviceConfig::default());
    let src = h.alloc(&0xC0DE_1234u32.to_le_bytes());
    let out = h.alloc(&[0u8; 4 * 40]);
    // r2:r3 = src (uniform), r4 = global id, r6:r7 = out + 4 * id; 40 threads are a full
    // warp and a warp with lanes 8.. inactive.
    let mut params = src.to_le_bytes().to_vec();
    params.extend_from_slice(&out.to_le_bytes());
    let mut code = load_param(2, 0);
    code.extend(load_param(10, 8));
    code.extend(global_id(4));
    code.extend(index_addr(6, 10, 4, 20));
    code.push(r(Op::Ldg, MemSize::B32 as u8, 12, 2, N, N, 0));
    code.push(r(Op::Stg, MemSize::B32 as u8, N, 6, 12, N, 0));
    code.push(exit());
    h.launch(header(24, [40, 1, 1]), &code, [1, 1, 1], &params).unwrap();
    let got = h.read(out, 4 * 40);
    for lane in 0..40 {
        assert_eq!(u32::from_le_bytes(got[4 * lane..4 * lane + 4].try_into().unwrap()), 0xC0DE_1234, "lane {lane}");
    }
    // The same uniform load from an unmapped address: the fault names the first lane.
    let bad = 0xdead_0000_0000u64;
    let mut params = bad.to_le_bytes().to_vec();
    params.extend_from_slice(&out.to_le_bytes());
    let f = h.launch(header(24, [32, 1, 1]), &code, [1, 1, 1], &params).unwrap_err();
    assert!(matches!(f.kind, FaultKind::Memory(_)), "{f}");
    assert_eq!(f.lane, Some(0), "{f}");
    assert_eq!(f.address(), Some(bad), "{f}");
}

/// A device with the watchdog's idle rule at `idle_ms` and its wall-clock rule at `wall_ms`.
fn watched(mode: Mode, idle_ms: u64, wall_ms: u64) -> Harness {
    Harness::new(DeviceConfig { mode, watchdog_idle_ms: idle_ms, watchdog_ms: wall_ms, ..Default::default() })
}

/// 64 CTAs of two warps; the first warp of the last CTA spins on `while (buf[0] == 0) {}`
/// (nobody writes it), the second waits for it at a barrier; every other warp passes the
/// barrier and exits. Returns the code and the pcs of the spin loop.
fn one_cta_hangs() -> (Vec<Instr>, std::ops::Range<u32>) {
    let mut code = load_param(2, 0);
    code.extend(global_id(4)); // r4 = gid
    code.push(r(Op::Movi, 0, 6, N, N, N, 5));
    code.push(r(Op::Shr, 0, 7, 4, 6, N, 0)); // r7 = global warp index
    code.push(r(Op::Movi, 0, 8, N, N, N, 63 * 2));
    code.push(r(Op::Icmp, IntCond::Eq as u8, 9, 7, 8, N, 0));
    code.push(r(Op::Movi, 0, 10, N, N, N, 0));
    let enter = code.len();
    code.push(Instr::bra(9, 0, 0, 0)); // patched: -> spin, or -> after
    let spin = code.len() as u32;
    code.push(r(Op::Ldg, MemSize::B32 as u8, 11, 2, N, N, 0));
    code.push(r(Op::Icmp, IntCond::Eq as u8, 12, 11, 10, N, 0));
    let back = code.len();
    code.push(Instr::bra(12, 0, 0, 0)); // patched: -> spin while zero
    let after = code.len() as u32;
    code.push(r(Op::Bar, 1, N, N, N, N, 0));
    code.push(exit());
    code[enter] = Instr::bra(9, spin, after, after);
    code[back] = Instr::bra(12, spin, after, after);
    (code, spin..after)
}

/// A kernel spinning in one invocation is lost under the idle rule in both modes, whatever
/// the other warps did before; the fault names the rule, the progress, and the warps still
/// there (one spinning, one at the barrier).
#[test]
fn a_hang_is_lost_under_the_idle_rule_in_both_modes() {
    for mode in [Mode::Functional, Mode::Timed] {
        let mut h = watched(mode, 500, 0);
        let flag = h.alloc(&[0u8; 4]);
        let (code, spin) = one_cta_hangs();
        let t = std::time::Instant::now();
        let f = h.launch(header(16, [64, 1, 1]), &code, [64, 1, 1], &flag.to_le_bytes()).unwrap_err();
        eprintln!("{mode:?}: lost after {:.2} s: {f}", t.elapsed().as_secs_f64());
        assert_eq!(f.kind, FaultKind::NoProgress { limit_ms: 500 }, "{f}");
        let s = f.to_string();
        assert!(s.contains("watchdog, idle limit") && s.contains("no progress for 500 ms"), "{s}");
        assert!(s.contains("126 warps retired, 64 CTAs launched, 0 rays completed"), "{s}");
        assert!(s.contains("2 warps still running: 1 at pc "), "{s}");
        assert!(spin.clone().any(|pc| s.contains(&format!("1 at pc {pc} on core "))), "{s}");
        assert!(s.ends_with("(at a barrier)) in kernel 'test'"), "{s}");
        assert!(s.contains("kernel 'test'"), "{s}");
        // The device still works afterwards.
        let done = h.alloc(&1u32.to_le_bytes());
        h.launch(header(16, [64, 1, 1]), &code, [64, 1, 1], &done.to_le_bytes()).unwrap();
    }
}

/// One warp spinning alone on its core, nothing else resident: the checks still come.
#[test]
fn a_lone_spinning_warp_is_lost_in_both_modes() {
    for mode in [Mode::Functional, Mode::Timed] {
        let mut h = watched(mode, 300, 0);
        let code = vec![r(Op::Jmp, 0, N, N, N, N, 0)];
        let f = h.launch(header(1, [1, 1, 1]), &code, [1, 1, 1], &[]).unwrap_err();
        assert_eq!(f.kind, FaultKind::NoProgress { limit_ms: 300 }, "{f}");
        assert!(f.detail.contains("0 warps retired, 1 CTA launched, 0 rays completed"), "{f}");
        assert!(f.detail.contains("1 warp still running at pc 0 on core 0"), "{f}");
    }
}

/// Each thread runs `k` rounds of an LCG from its global id and stores the result: bounded
/// work per CTA, as much in all as the grid asks for.
fn lcg_kernel() -> Vec<Instr> {
    let mut code = load_param(2, 0);
    code.push(r(Op::Ldg, MemSize::B32 as u8, 8, 0, N, N, kargs::PUSH as u32 + 8)); // r8 = k
    code.extend(global_id(4));
    code.push(r(Op::Movi, 0, 6, N, N, N, 0)); // i
    code.push(r(Op::Mov, 0, 7, 4, N, N, 0)); // x = gid
    code.push(r(Op::Movi, 0, 10, N, N, N, 1_664_525));
    code.push(r(Op::Movi, 0, 11, N, N, N, 1_013_904_223));
    code.push(r(Op::Movi, 0, 12, N, N, N, 1));
    let top = code.len() as u32;
    code.push(r(Op::Icmp, IntCond::Ult as u8, 9, 6, 8, N, 0));
    let bra = code.len();
    code.push(Instr::bra(9, 0, 0, 0));
    let body = code.len() as u32;
    code.push(r(Op::Imul, 0, 7, 7, 10, N, 0));
    code.push(r(Op::Iadd, 0, 7, 7, 11, N, 0));
    code.push(r(Op::Iadd, 0, 6, 6, 12, N, 0));
    code.push(r(Op::Jmp, 0, N, N, N, N, top));
    let done = code.len() as u32;
    code[bra] = Instr::bra(9, body, done, done);
    code.extend(index_addr(14, 2, 4, 20));
    code.push(r(Op::Stg, MemSize::B32 as u8, N, 14, 7, N, 0));
    code.push(exit());
    code
}

fn lcg(gid: u32, k: u32) -> u32 {
    (0..k).fold(gid, |x, _| x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223))
}

/// Runs `lcg_kernel` over `ctas` CTAs of 64 threads and checks every result.
fn long_lcg(h: &mut Harness, ctas: u32, k: u32) -> Result<vortex_model::device::DispatchReport, Fault> {
    let n = ctas * 64;
    let out = h.alloc(&vec![0u8; 4 * n as usize]);
    let mut params = out.to_le_bytes().to_vec();
    params.extend_from_slice(&k.to_le_bytes());
    let rep = h.launch(header(24, [64, 1, 1]), &lcg_kernel(), [ctas, 1, 1], &params)?;
    let got = h.read(out, 4 * n as usize);
    for gid in 0..n {
        assert_eq!(u32::from_le_bytes(got[4 * gid as usize..][..4].try_into().unwrap()), lcg(gid, k), "thread {gid}");
    }
    Ok(rep)
}

/// Long work that keeps making progress (CTAs launching and retiring) runs well past the
/// idle limit and completes with the right results. (The size is per mode, for a few
/// seconds of host time in each; the mode is `VORTEX_MODE`'s, as CI runs both.)
#[test]
fn long_work_with_progress_outlasts_the_idle_limit() {
    let cfg = DeviceConfig::default();
    // Timed mode simulates ~20x fewer instructions per second: shorter CTAs, so the first
    // ones retire well within the limit too (32 two-warp CTAs share a core's issue port).
    let (ctas, k) = if cfg.mode == Mode::Timed { (5000, 200) } else { (6000, 2000) };
    let mut h = watched(cfg.mode, 300, 0);
    let t = std::time::Instant::now();
    let rep = long_lcg(&mut h, ctas, k).unwrap_or_else(|f| panic!("{f}"));
    let wall = t.elapsed();
    eprintln!("{:?}: {ctas} CTAs in {:.2} s under a 300 ms idle limit", cfg.mode, wall.as_secs_f64());
    assert_eq!(rep.totals.ctas, ctas as u64);
    assert!(wall.as_millis() > 300, "the dispatch must outlast the idle limit to test it ({wall:?})");
}

/// One warp tracing ray after ray for longer than the idle limit: no warp retires and no CTA
/// launches meanwhile, but every completed walk is progress.
#[test]
fn completed_rays_are_progress() {
    let cfg = DeviceConfig::default();
    let rounds: u32 = if cfg.mode == Mode::Timed { 100_000 } else { 300_000 };
    let mut h = watched(cfg.mode, 300, 0);
    let out = h.alloc(&[0u8; 4 * 32 * 2]);
    let mut params = out.to_le_bytes().to_vec();
    params.extend_from_slice(&rounds.to_le_bytes());
    // r30 = query slot 0, r40..r51 = a ray into the null structure (a miss at once).
    let mut code = load_param(2, 0);
    code.push(r(Op::Ldg, MemSize::B32 as u8, 8, 0, N, N, kargs::PUSH as u32 + 8));
    code.push(r(Op::Movi, 0, 30, N, N, N, 0));
    for k in 0..12 {
        code.push(r(Op::Movi, 0, 40 + k, N, N, N, 0));
    }
    code.push(r(Op::Movi, 0, 6, N, N, N, 0)); // rounds done
    code.push(r(Op::Movi, 0, 12, N, N, N, 1));
    let top = code.len() as u32;
    code.push(r(Op::Trace, 0, N, 30, 40, N, 0));
    code.push(r(Op::Wait, 0, 31, 30, N, N, 0));
    code.push(r(Op::Iadd, 0, 6, 6, 12, N, 0));
    code.push(r(Op::Icmp, IntCond::Ult as u8, 9, 6, 8, N, 0));
    let bra = code.len();
    code.push(Instr::bra(9, 0, 0, 0));
    let done = code.len() as u32;
    code[bra] = Instr::bra(9, top, done, done);
    code.push(r(Op::Csr, 0, 4, N, N, N, csr::LANE_ID));
    code.extend(index_addr(14, 2, 4, 20));
    code.push(r(Op::Stg, MemSize::B32 as u8, N, 14, 6, N, 0));
    code.push(r(Op::Stg, MemSize::B32 as u8, N, 14, 31, N, 128));
    code.push(exit());
    let hd = KernelHeader { num_queries: 1, ..header(64, [32, 1, 1]) };
    let t = std::time::Instant::now();
    let rep = h.launch(hd, &code, [1, 1, 1], &params).unwrap_or_else(|f| panic!("{f}"));
    let wall = t.elapsed();
    eprintln!("{:?}: {rounds} rounds of 32 rays in {:.2} s under a 300 ms idle limit", cfg.mode, wall.as_secs_f64());
    let got = h.read(out, 4 * 64);
    let word = |i: usize| u32::from_le_bytes(got[4 * i..][..4].try_into().unwrap());
    for lane in 0..32 {
        assert_eq!((word(lane), word(32 + lane)), (rounds, vortex_model::abi::rtu::STS_DONE_MISS), "lane {lane}");
    }
    assert_eq!(rep.totals.rtu.records, rounds as u64 * 32);
    assert_eq!((rep.totals.ctas, rep.totals.warps), (1, 1));
    assert!(wall.as_millis() > 300, "the dispatch must outlast the idle limit to test it ({wall:?})");
}

/// The wall-clock rule, when asked for, bounds a dispatch whatever it does: a hang, and
/// long work that keeps making progress.
#[test]
fn the_wall_clock_rule_still_bounds_a_dispatch() {
    let mut h = watched(DeviceConfig::default().mode, 0, 200);
    let code = vec![r(Op::Jmp, 0, N, N, N, N, 0)];
    let f = h.launch(header(1, [1, 1, 1]), &code, [4, 1, 1], &[]).unwrap_err();
    assert_eq!(f.kind, FaultKind::WallClock { limit_ms: 200 }, "{f}");
    assert!(f.to_string().contains("watchdog, wall-clock limit"), "{f}");
    assert!(f.detail.contains("dispatch exceeded the wall-clock limit of 200 ms"), "{f}");
    assert!(
        f.detail.contains("4 CTAs launched")
            && f.detail.contains("4 warps still running")
            && f.detail.contains("at pc 0 on core"),
        "{f}"
    );
    let f = long_lcg(&mut h, 3000, 2000).unwrap_err();
    assert_eq!(f.kind, FaultKind::WallClock { limit_ms: 200 }, "{f}");
}

#[test]
fn trap_and_empty_grid() {
    let mut h = Harness::new(DeviceConfig::default());
    let code = vec![r(Op::Trap, 0, N, N, N, N, 1)];
    let f = h.launch(header(1, [1, 1, 1]), &code, [1, 1, 1], &[]).unwrap_err();
    assert!(matches!(f.kind, FaultKind::Trap { code: 1 }), "{f}");
    // An empty grid launches nothing and succeeds.
    let rep = h.launch(header(1, [1, 1, 1]), &[exit()], [0, 1, 1], &[]).unwrap();
    assert_eq!(rep.totals.ctas, 0);
}

#[test]
fn garbage_kernel_image_is_a_fault() {
    let mut h = Harness::new(DeviceConfig::default());
    let junk = h.alloc(&[0x5Au8; 256]);
    h.dev.dcr_write(KMU_PC_LO, junk as u32).unwrap();
    h.dev.dcr_write(KMU_PC_HI, (junk >> 32) as u32).unwrap();
    for (a, v) in [(KMU_GRID_DIM_X, 1), (KMU_GRID_DIM_Y, 1), (KMU_GRID_DIM_Z, 1), (KMU_BLOCK_SIZE, 1)] {
        h.dev.dcr_write(a, v).unwrap();
    }
    let f = h.dev.start().unwrap_err();
    assert_eq!(f.kind, FaultKind::BadKernel, "{f}");
}

#[test]
fn oversized_block_is_a_bad_launch() {
    let mut h = Harness::new(DeviceConfig { num_warps: 2, num_threads: 4, ..Default::default() });
    let f = h.launch(header(1, [9, 1, 1]), &[exit()], [1, 1, 1], &[]).unwrap_err();
    assert_eq!(f.kind, FaultKind::BadLaunch, "{f}");
}

/// The f64 ops on register pairs: each lane computes from its index and stores the results.
#[test]
fn double_precision_ops() {
    use vortex_model::abi::isa::{FloatCond, Round};
    let mut h = Harness::new(DeviceConfig { num_threads: 4, ..Default::default() });
    const OUT: usize = 16; // u64 results per lane
    let out = h.alloc(&vec![0u8; 8 * OUT * 4]);
    let mut code = Vec::new();
    code.extend(load_param(2, 0));
    code.push(r(Op::Csr, 0, 4, N, N, N, csr::LANE_ID));
    // r6:7 = x = lane - 1.75, r8:9 = y = 3.0 (from i2d/f2d)
    code.push(r(Op::I2d, 0, 6, 4, N, N, 0));
    code.push(r(Op::Movi, 0, 10, N, N, N, (1.75f32).to_bits()));
    code.push(r(Op::F2d, 0, 12, 10, N, N, 0));
    code.push(r(Op::Dsub, 0, 6, 6, 12, N, 0));
    code.push(r(Op::Movi, 0, 10, N, N, N, 3));
    code.push(r(Op::U2d, 0, 8, 10, N, N, 0));
    let ops: Vec<Instr> = vec![
        r(Op::Dadd, 0, 20, 6, 8, N, 0),
        r(Op::Dmul, 0, 22, 6, 8, N, 0),
        r(Op::Ddiv, 0, 24, 6, 8, N, 0),
        Instr::r(Op::Dfma, 0, 26, 6, 8, 6, N, 0),
        r(Op::Dmin, 0, 28, 6, 8, N, 0),
        r(Op::Dsqrt, 0, 30, 8, N, N, 0),
        r(Op::Drsq, 0, 32, 8, N, N, 0),
        r(Op::Drcp, 0, 34, 8, N, N, 0),
        r(Op::Dround, Round::Floor as u8, 36, 6, N, N, 0),
        r(Op::Dfract, 0, 38, 6, N, N, 0),
        r(Op::D2l, 0, 40, 6, N, N, 0),
        r(Op::L2d, 0, 42, 40, N, N, 0),
        r(Op::Dcmp, FloatCond::Olt as u8, 44, 6, 8, N, 0),
        r(Op::D2i, 0, 45, 22, N, N, 0),
        r(Op::D2f, 0, 46, 24, N, N, 0),
        r(Op::D2h, 0, 47, 6, N, N, 0),
    ];
    code.extend(ops);
    // out + lane * 128
    code.push(r(Op::Movi, 0, 11, N, N, N, 7));
    code.push(r(Op::Shl, 0, 10, 4, 11, N, 0));
    code.push(r(Op::Movi, 0, 11, N, N, N, 0));
    code.push(r(Op::Iadd64, 0, 14, 2, 10, N, 0));
    for k in 0..12u32 {
        code.push(r(Op::Stg, MemSize::B64 as u8, N, 14, 20 + 2 * k as u16, N, 8 * k));
    }
    code.push(r(Op::Stg, MemSize::B128 as u8, N, 14, 44, N, 96));
    code.push(exit());
    h.launch(header(48, [4, 1, 1]), &code, [1, 1, 1], &out.to_le_bytes()).unwrap();
    let bytes = h.read(out, 8 * OUT * 4);
    for lane in 0..4usize {
        let at = |k: usize| u64::from_le_bytes(bytes[lane * 128 + 8 * k..lane * 128 + 8 * k + 8].try_into().unwrap());
        let d = |k: usize| f64::from_bits(at(k));
        let word = |k: usize| u32::from_le_bytes(bytes[lane * 128 + 96 + 4 * k..][..4].try_into().unwrap());
        let (x, y) = (lane as f64 - 1.75, 3.0f64);
        assert_eq!(d(0), x + y);
        assert_eq!(d(1), x * y);
        assert_eq!(d(2), x / y);
        assert_eq!(d(3), x.mul_add(y, x));
        assert_eq!(d(4), x.min(y));
        assert_eq!(d(5), y.sqrt());
        assert_eq!(d(6), 1.0 / y.sqrt());
        assert_eq!(d(7), 1.0 / y);
        assert_eq!(d(8), x.floor());
        assert_eq!(d(9), x - x.floor());
        assert_eq!(at(10) as i64, x as i64);
        assert_eq!(d(11), x.trunc());
        assert_eq!(word(0), 1, "x < y");
        assert_eq!(word(1) as i32, (x * y) as i32);
        assert_eq!(f32::from_bits(word(2)), (x / y) as f32);
        assert_eq!(word(3), half::f16::from_f64(x).to_bits() as u32);
    }
}

/// The cross-lane ops on a warp with a divergent branch: only the active lanes take part.
#[test]
fn cross_lane_ops_see_the_active_lanes() {
    use vortex_model::abi::isa::{RedOp, ShflMode, VoteOp, RED_CLUSTER_SHIFT, RED_EXCLUSIVE, RED_INCLUSIVE};
    let mut h = Harness::new(DeviceConfig { num_threads: 8, ..Default::default() });
    let out = h.alloc(&vec![0u8; 4 * 8 * 8]);
    let mut code = Vec::new();
    code.extend(load_param(2, 0));
    code.push(r(Op::Csr, 0, 4, N, N, N, csr::LANE_ID));
    // Odd lanes skip to the join: the ops below run on lanes 0, 2, 4, 6 only.
    code.push(r(Op::Movi, 0, 5, N, N, N, 1));
    code.push(r(Op::And, 0, 6, 4, 5, N, 0));
    let bra_at = code.len();
    code.push(Instr::bra(6, 0, 0, 0));
    code.push(r(Op::Vote, VoteOp::All as u8, 10, 4, N, N, 0)); // lane 0 holds 0 -> 0
    code.push(r(Op::Vote, VoteOp::Any as u8, 11, 4, N, N, 0));
    code.push(r(Op::Ballot, 0, 12, 4, N, N, 0)); // lanes 2, 4, 6 non-zero
    code.push(r(Op::Movi, 0, 7, N, N, N, 2));
    code.push(r(Op::Shfl, ShflMode::Down as u8, 13, 4, 7, N, 0)); // lane + 2
    code.push(r(Op::Shfl, ShflMode::Xor as u8, 14, 4, 5, N, 0)); // lane ^ 1: inactive -> own
    code.push(r(Op::Red, RedOp::Iadd as u8, 15, 4, N, N, 0)); // 0+2+4+6
    code.push(r(Op::Red, RedOp::Iadd as u8, 16, 4, N, N, RED_EXCLUSIVE));
    code.push(r(Op::Red, RedOp::Umax as u8, 17, 4, N, N, RED_INCLUSIVE | 4 << RED_CLUSTER_SHIFT));
    let join = code.len() as u32;
    code[bra_at] = Instr::bra(6, join, bra_at as u32 + 1, join);
    // out + lane * 32: r10..r17
    code.push(r(Op::Movi, 0, 7, N, N, N, 5));
    code.push(r(Op::Shl, 0, 8, 4, 7, N, 0));
    code.push(r(Op::Movi, 0, 9, N, N, N, 0));
    code.push(r(Op::Iadd64, 0, 18, 2, 8, N, 0));
    code.push(r(Op::Stg, MemSize::B128 as u8, N, 18, 10, N, 0));
    code.push(r(Op::Stg, MemSize::B128 as u8, N, 18, 14, N, 16));
    code.push(exit());
    h.launch(header(20, [8, 1, 1]), &code, [1, 1, 1], &out.to_le_bytes()).unwrap();
    let bytes = h.read(out, 4 * 8 * 8);
    for lane in (0..8usize).step_by(2) {
        let w = |k: usize| u32::from_le_bytes(bytes[lane * 32 + 4 * k..][..4].try_into().unwrap());
        assert_eq!(w(0), 0, "vote.all");
        assert_eq!(w(1), 1, "vote.any");
        assert_eq!(w(2), 0b0101_0100, "ballot");
        assert_eq!(w(3), if lane + 2 < 8 { lane as u32 + 2 } else { lane as u32 }, "shfl.down");
        assert_eq!(w(4), lane as u32, "shfl.xor from an inactive lane");
        assert_eq!(w(5), 12, "red.iadd");
        assert_eq!(w(6), (0..lane as u32).step_by(2).sum::<u32>(), "exclusive scan");
        assert_eq!(w(7), lane as u32, "inclusive max within clusters of 4");
    }
}

/// 16-byte loads and a 16-byte store that cross a page boundary between two bindings of a
/// sparse resource read and write both memories, in both modes; a load reaching an unbound
/// page faults with its address.
#[test]
fn sparse_pages_through_the_lsu() {
    use vortex_model::abi::PAGE_BYTES as P;
    use vortex_model::mem::MemFaultKind;
    let mut h = Harness::new(DeviceConfig::default());
    let space = h.dev.memory().clone();
    let res = space.reserve(3 * P).unwrap();
    let (a, b) = (space.allocate(P).unwrap(), space.allocate(P).unwrap());
    // Page 0 is b, page 1 is a; page 2 is not bound. Byte k of the resource holds k % 251.
    space.bind(res.base, 0, P, Some((&b, 0))).unwrap();
    space.bind(res.base, P, P, Some((&a, 0))).unwrap();
    let pattern: Vec<u8> = (0..2 * P).map(|k| (k % 251) as u8).collect();
    space.snapshot().write(res.base, &pattern).unwrap();
    assert_eq!(h.read(a.base, 4), pattern[P as usize..][..4], "page 1 is a's memory");
    let out = h.alloc(&[0u8; 16 * 32]);
    // Lane l loads 16 bytes at base + 4l (lanes 5..7 cross into page 1) and stores them at
    // out + 16l.
    let start = res.base + P - 32;
    let mut params = start.to_le_bytes().to_vec();
    params.extend_from_slice(&out.to_le_bytes());
    let mut code = load_param(2, 0);
    code.extend(load_param(10, 8));
    code.extend(global_id(4));
    code.extend(index_addr(6, 2, 4, 20));
    code.push(r(Op::Ldg, MemSize::B128 as u8, 12, 6, N, N, 0));
    code.extend(index_addr(6, 10, 4, 20));
    code.extend(index_addr(6, 6, 4, 20));
    code.extend(index_addr(6, 6, 4, 20));
    code.extend(index_addr(6, 6, 4, 20));
    code.push(r(Op::Stg, MemSize::B128 as u8, N, 6, 12, N, 0));
    code.push(exit());
    h.launch(header(32, [32, 1, 1]), &code, [1, 1, 1], &params).unwrap();
    let got = h.read(out, 16 * 32);
    for lane in 0..32 {
        let from = (P - 32) as usize + 4 * lane;
        assert_eq!(&got[16 * lane..][..16], &pattern[from..from + 16], "lane {lane}");
    }
    // One thread stores 16 bytes across the boundary.
    let at = res.base + P - 8;
    let mut store = load_param(2, 0);
    store.extend((0..4).map(|k| r(Op::Movi, 0, 12 + k, N, N, N, 0x1111_1111 * (k as u32 + 1))));
    store.push(r(Op::Stg, MemSize::B128 as u8, N, 2, 12, N, 0));
    store.push(exit());
    h.launch(header(24, [1, 1, 1]), &store, [1, 1, 1], &at.to_le_bytes()).unwrap();
    assert_eq!(h.read(b.base + P - 8, 8), [0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x22]);
    assert_eq!(h.read(a.base, 8), [0x33, 0x33, 0x33, 0x33, 0x44, 0x44, 0x44, 0x44]);
    // Lanes whose 16 bytes reach page 2 fault, naming the page.
    let mut params = (res.base + 2 * P - 32).to_le_bytes().to_vec();
    params.extend_from_slice(&out.to_le_bytes());
    let f = h.launch(header(32, [32, 1, 1]), &code, [1, 1, 1], &params).unwrap_err();
    let FaultKind::Memory(m) = f.kind else { panic!("{f}") };
    assert_eq!(m.kind, MemFaultKind::Unbound { page: res.base + 2 * P }, "{f}");
    assert_eq!((f.lane, f.address()), (Some(5), Some(res.base + 2 * P - 12)), "{f}");
}

/// With robustness2's null descriptors on, a load, store or atomic in the null window below
/// every mapping (where a null buffer descriptor points) reads zero and writes nothing;
/// without them it faults.
#[test]
fn null_window_reads_zero_only_with_null_descriptors() {
    let mut h = Harness::new(DeviceConfig::default());
    let out = h.alloc(&[0xFFu8; 8]);
    let mut params = 0x40u64.to_le_bytes().to_vec();
    params.extend_from_slice(&out.to_le_bytes());
    let mut code = load_param(2, 0);
    code.extend(load_param(10, 8));
    code.push(r(Op::Movi, 0, 13, N, N, N, 9));
    code.push(r(Op::Stg, MemSize::B32 as u8, N, 2, 13, N, 0));
    code.push(r(Op::Ldg, MemSize::B32 as u8, 12, 2, N, N, 0));
    code.push(r(Op::Stg, MemSize::B32 as u8, N, 10, 12, N, 0));
    code.push(r(Op::Atomg, AtomicOp::Add as u8, 12, 2, 13, N, 0));
    code.push(r(Op::Stg, MemSize::B32 as u8, N, 10, 12, N, 4));
    code.push(exit());
    let f = h.launch(header(24, [1, 1, 1]), &code, [1, 1, 1], &params).unwrap_err();
    assert_eq!(f.address(), Some(0x40), "{f}");
    h.dev.memory().set_null_descriptor(true);
    h.launch(header(24, [1, 1, 1]), &code, [1, 1, 1], &params).unwrap();
    assert_eq!(h.read(out, 8), [0; 8], "the load and the atomic read zero");
}

/// A warp spinning through a loop of JIT code (a compiled run, then JMP back) still comes
/// back to its core every quantum: the watchdog loses it as under the interpreter.
#[test]
fn a_warp_spinning_in_jit_code_is_lost() {
    let before = vortex_model::jit::stats().instructions;
    let mut h =
        Harness::new(DeviceConfig { mode: Mode::Functional, jit: true, watchdog_idle_ms: 300, ..Default::default() });
    let add = r(Op::Iadd, 0, 0, 0, 0, N, 0);
    let code = vec![add, add, add, r(Op::Jmp, 0, N, N, N, N, 0)];
    let f = h.launch(header(1, [32, 1, 1]), &code, [32, 1, 1], &[]).unwrap_err();
    assert_eq!(f.kind, FaultKind::NoProgress { limit_ms: 300 }, "{f}");
    assert!(vortex_model::jit::stats().instructions > before, "the loop ran as JIT code");
}
