//! The JIT: functional mode's straight lines of register ops compiled to host code with
//! Cranelift, the interpreter running everything else.
//!
//! A kernel is compiled once, when it is hot: the interpreter has run it for
//! [`DEFAULT_HOT`] (`VORTEX_JIT_HOT`) warp instructions per kernel instruction, over all its
//! dispatches (its [`Cache`] lives in the [`DecodedKernel`], so once per pipeline; the many
//! short kernels of a test suite never pay for a compile). It compiles into one host
//! function per run, each a loop over the warp's 4-lane host vectors
//! ([`cover::runs`]): a line of lane-wise ALU/FPU ops between two joins of the control-flow
//! graph, and the loads from the kernel-argument block and the CSR reads among them (a
//! warp's CSRs from its [`CsrTable`], filled once a launch). The issue loop
//! (`Core::run_warp`) calls a run's function when the warp's pc reaches the run's first
//! instruction and the quantum has room for the whole run, counts the run's instructions as
//! the interpreter would (warp instructions, and thread instructions as the mask's lanes per
//! instruction), and moves the pc past it. Branches, other memory ops, RTU and warp ops,
//! divergence and reconvergence stay the interpreter's, so faults, the watchdog's
//! quantum and the warp schedule are those of the interpreter and the results are
//! bit-identical.
//!
//! `VORTEX_JIT=0` (or `jit = false` in the device configuration) runs the interpreter
//! alone; timed mode never uses the JIT. A kernel that fails to compile runs on the
//! interpreter, with a log line.

pub mod cover;
mod emit;

use crate::abi::csr;
use crate::abi::isa::Instr;
use crate::abi::MAX_THREADS;
use crate::core::decode::DecodedKernel;
use crate::mem::MemoryMap;
use cranelift_codegen::ir::{types, AbiParam, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// False when `VORTEX_JIT` is `0`, `off` or `false`: on by default, a hot kernel's runs
/// save more host time than compiling them costs (docs/PERFORMANCE.md, "The JIT").
pub fn from_env() -> bool {
    !matches!(std::env::var("VORTEX_JIT").as_deref().map(str::trim), Ok("0" | "off" | "false"))
}

/// A compiled run: `f(regs, mask, args, csrs)` executes `len` instructions for the lanes in
/// `mask`, reading the kernel-argument block at `args` when `reads_args` and the warp's
/// [`CsrTable`] at `csrs` when `reads_csrs`.
#[derive(Clone, Copy)]
struct Run {
    f: RunFn,
    len: u32,
    reads_args: bool,
    reads_csrs: bool,
}

type RunFn = extern "C" fn(*mut u32, u32, *const u8, *const CsrTable);

/// The values of a warp's CSRs that compiled runs read (`abi::csr::WARP_UNIFORM`, then
/// `abi::csr::PER_LANE`): fixed for the warp's life, so gathered once (`core::exec::csr_table`,
/// through the same reads the interpreter's CSR op makes).
#[repr(C)]
#[derive(Clone)]
pub struct CsrTable {
    pub uniform: [u32; csr::WARP_UNIFORM.len()],
    pub lanes: [[u32; MAX_THREADS]; csr::PER_LANE.len()],
}

impl Default for CsrTable {
    fn default() -> Self {
        CsrTable { uniform: [0; csr::WARP_UNIFORM.len()], lanes: [[0; MAX_THREADS]; csr::PER_LANE.len()] }
    }
}

/// Where a CSR's value is in a [`CsrTable`], as a byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsrAt {
    /// One word for the whole warp.
    Word(i32),
    /// A row of one word a lane.
    Row(i32),
}

/// Where CSR `id` is in a [`CsrTable`], or None when compiled runs do not read it.
pub fn csr_offset(id: u32) -> Option<CsrAt> {
    match csr_slot(id)? {
        k if k < csr::WARP_UNIFORM.len() => Some(CsrAt::Word((std::mem::offset_of!(CsrTable, uniform) + 4 * k) as i32)),
        k => {
            let row = std::mem::offset_of!(CsrTable, lanes) + 4 * MAX_THREADS * (k - csr::WARP_UNIFORM.len());
            Some(CsrAt::Row(row as i32))
        }
    }
}

/// CSR `id`'s slot in a [`CsrTable`]: the uniform words first, then the lane rows (a bit
/// of [`JitKernel::csr_reads`]).
pub fn csr_slot(id: u32) -> Option<usize> {
    csr::WARP_UNIFORM.iter().chain(&csr::PER_LANE).position(|&c| c == id)
}

const _: () = assert!(csr::WARP_UNIFORM.len() + csr::PER_LANE.len() <= 32);

/// A kernel's compiled runs.
pub struct JitKernel {
    nt: usize,
    /// Rows the register file must hold (the kernel's register count): what the runs'
    /// loads and stores reach.
    num_regs: usize,
    /// Bytes of the kernel-argument block the runs read (0: none reads it).
    args_span: u32,
    /// The [`CsrTable`] slots the runs read (bit [`csr_slot`]): what a warp's table needs.
    csr_reads: u32,
    /// Per pc: 1 + the index in `runs` of the run starting there, or 0.
    run_at: Vec<u32>,
    runs: Vec<Run>,
    /// Owns the code the runs point into; freed with the kernel.
    module: Mutex<Option<JITModule>>,
}

impl Drop for JitKernel {
    fn drop(&mut self) {
        if let Some(m) = self.module.get_mut().ok().and_then(Option::take) {
            // SAFETY: the run pointers into this module's code live in `self.runs`, which
            // is dropped with `self`; no call can be running (a call borrows `self`).
            unsafe { m.free_memory() };
        }
    }
}

impl JitKernel {
    /// The run that starts at `pc`, as (length, function).
    #[inline(always)]
    fn run_at(&self, pc: u32) -> Option<Run> {
        match self.run_at.get(pc as usize) {
            Some(&k) if k != 0 => Some(self.runs[k as usize - 1]),
            _ => None,
        }
    }

    /// When a run starts at `pc` and `budget` instructions fit it: runs it over `regs` for
    /// the lanes in `mask` and returns its length. A run that reads the kernel-argument
    /// block runs only with its address (`args`, from [`Self::args`]), one that reads CSRs
    /// only with the warp's table (`csrs`); without them the interpreter takes the run's
    /// pcs.
    #[inline(always)]
    pub fn try_run(
        &self,
        pc: u32,
        regs: &mut [u32],
        mask: u32,
        budget: u64,
        args: Args,
        csrs: Option<&CsrTable>,
    ) -> Option<u32> {
        let run = self.run_at(pc)?;
        if run.len as u64 > budget || (run.reads_args && args.0.is_null()) || (run.reads_csrs && csrs.is_none()) {
            return None;
        }
        assert!(regs.len() >= self.num_regs * self.nt, "register file smaller than the kernel's");
        (run.f)(regs.as_mut_ptr(), mask, args.0, csrs.map_or(std::ptr::null(), |t| t as *const CsrTable));
        Some(run.len)
    }

    /// The [`CsrTable`] slots the runs read (bit [`csr_slot`]; 0: none, no table needed).
    pub fn csr_reads(&self) -> u32 {
        self.csr_reads
    }

    /// The host address of the kernel-argument block at device address `param` for the
    /// runs, when the memory map holds every byte they read in one region; else none (the
    /// interpreter runs those runs' pcs, and faults as it would).
    pub fn args<'m>(&self, mem: &'m MemoryMap, param: u64) -> Args<'m> {
        let host = match self.args_span {
            0 => None,
            span => mem.region(param, span as u64).map(|r| {
                // SAFETY: `region` returned the region holding `[param, param + span)`, so
                // the offset lies inside its live backing.
                unsafe { r.host_ptr().add((param - r.base) as usize) as *const u8 }
            }),
        };
        Args(host.unwrap_or(std::ptr::null()), std::marker::PhantomData)
    }

    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Instructions the runs cover (static count).
    pub fn covered(&self) -> u64 {
        self.runs.iter().map(|r| r.len as u64).sum()
    }
}

/// The kernel-argument block's host address for a dispatch's runs (null: not mapped),
/// valid while the memory map it came from is borrowed.
#[derive(Clone, Copy)]
pub struct Args<'m>(*const u8, std::marker::PhantomData<&'m MemoryMap>);

impl Args<'_> {
    /// No block: runs that read it are left to the interpreter.
    pub const NONE: Args<'static> = Args(std::ptr::null(), std::marker::PhantomData);
}

/// Process-wide JIT counters (what `jit_stats` reports).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JitStats {
    /// Kernels compiled, with at least one run.
    pub kernels: u64,
    /// Kernels left to the interpreter (no run, or a failed compile).
    pub fallbacks: u64,
    /// Runs compiled.
    pub runs: u64,
    /// Time spent compiling, nanoseconds.
    pub compile_ns: u64,
    /// Warp instructions executed by compiled runs.
    pub instructions: u64,
}

static KERNELS: AtomicU64 = AtomicU64::new(0);
static FALLBACKS: AtomicU64 = AtomicU64::new(0);
static RUNS: AtomicU64 = AtomicU64::new(0);
static COMPILE_NS: AtomicU64 = AtomicU64::new(0);
static INSTRUCTIONS: AtomicU64 = AtomicU64::new(0);

/// The counters so far.
pub fn stats() -> JitStats {
    let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
    JitStats {
        kernels: l(&KERNELS),
        fallbacks: l(&FALLBACKS),
        runs: l(&RUNS),
        compile_ns: l(&COMPILE_NS),
        instructions: l(&INSTRUCTIONS),
    }
}

/// Adds `n` warp instructions executed by runs (a core reports once per dispatch).
pub fn count_instructions(n: u64) {
    if n != 0 {
        INSTRUCTIONS.fetch_add(n, Ordering::Relaxed);
    }
}

/// Default of `VORTEX_JIT_HOT`: interpreted warp instructions per kernel instruction before
/// a kernel is compiled. Compiling costs about as much host time as interpreting this many
/// warp instructions (docs/PERFORMANCE.md, "The JIT"), so a kernel is compiled once the
/// interpreter has spent about as long on it as compiling would take.
pub const DEFAULT_HOT: u64 = 1000;

/// `VORTEX_JIT_HOT` (a number; 0 compiles every kernel at its first dispatch), else
/// [`DEFAULT_HOT`].
pub fn hot_from_env() -> u64 {
    std::env::var("VORTEX_JIT_HOT").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(DEFAULT_HOT)
}

/// A kernel's compiled code, made once the interpreter has run the kernel long enough for
/// compiling to pay (so the many short kernels of a test suite never compile).
#[derive(Default)]
pub struct Cache {
    code: OnceLock<Option<JitKernel>>,
    /// Warp instructions the interpreter ran of this kernel, over all dispatches and cores.
    heat: AtomicU64,
    /// A core is compiling the kernel; the others keep interpreting meanwhile.
    claimed: AtomicBool,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code.get() {
            Some(Some(k)) => write!(f, "Jit({} runs)", k.runs.len()),
            Some(None) => f.write_str("Jit(interpreted)"),
            None => f.write_str("Jit(not compiled)"),
        }
    }
}

impl Cache {
    /// The compiled kernel for warps of `nt` lanes, or `None` while the interpreter runs it
    /// all. `ran` interpreted warp instructions are added to the kernel's heat first; once
    /// the heat reaches `hot` per kernel instruction, the first core to see it compiles.
    pub fn get(&self, kernel: &DecodedKernel, nt: usize, ran: u64, hot: u64) -> Option<&JitKernel> {
        if let Some(k) = self.code.get() {
            return k.as_ref().filter(|k| k.nt == nt);
        }
        let heat = self.heat.fetch_add(ran, Ordering::Relaxed) + ran;
        if heat < hot.saturating_mul(kernel.code.len() as u64) || self.claimed.swap(true, Ordering::AcqRel) {
            return None;
        }
        let _ = self.code.set(compile_logged(kernel, nt));
        self.code.get()?.as_ref().filter(|k| k.nt == nt)
    }
}

fn compile_logged(k: &DecodedKernel, nt: usize) -> Option<JitKernel> {
    let t = Instant::now();
    let out = compile(&k.code, k.header.entry, k.header.num_regs as usize, nt);
    let ns = t.elapsed().as_nanos() as u64;
    COMPILE_NS.fetch_add(ns, Ordering::Relaxed);
    match out {
        Ok(Some(j)) => {
            KERNELS.fetch_add(1, Ordering::Relaxed);
            RUNS.fetch_add(j.runs.len() as u64, Ordering::Relaxed);
            tracing::info!(
                "jit: `{}`: {} runs, {} of {} instructions, compiled in {} us",
                k.name,
                j.runs.len(),
                j.covered(),
                k.code.len(),
                ns / 1000
            );
            Some(j)
        }
        Ok(None) => {
            FALLBACKS.fetch_add(1, Ordering::Relaxed);
            tracing::debug!("jit: `{}`: no run to compile; interpreted", k.name);
            None
        }
        Err(e) => {
            FALLBACKS.fetch_add(1, Ordering::Relaxed);
            tracing::warn!("jit: `{}` did not compile ({e}); interpreted", k.name);
            None
        }
    }
}

/// The host's code generator, built once per process; an error (and the interpreter
/// everywhere) where Cranelift does not support the host.
fn host_isa() -> Result<std::sync::Arc<dyn cranelift_codegen::isa::TargetIsa>, String> {
    static ISA: OnceLock<Result<std::sync::Arc<dyn cranelift_codegen::isa::TargetIsa>, String>> = OnceLock::new();
    ISA.get_or_init(|| {
        let mut flags = settings::builder();
        let set = |f: &mut settings::Builder, k: &str, v: &str| f.set(k, v).map_err(|e| e.to_string());
        set(&mut flags, "opt_level", "speed")?;
        // The IR verifier is a sixth of a compile's instructions; the unit tests keep it on.
        set(&mut flags, "enable_verifier", if cfg!(test) { "true" } else { "false" })?;
        set(&mut flags, "use_colocated_libcalls", "false")?;
        set(&mut flags, "is_pic", "false")?;
        let isa = cranelift_native::builder().map_err(|e| e.to_string())?;
        isa.finish(settings::Flags::new(flags)).map_err(|e| e.to_string())
    })
    .clone()
}

/// True when the host ISA fuses multiply-add in one rounding (x86-64 with FMA; AArch64).
fn has_fma(isa: &dyn cranelift_codegen::isa::TargetIsa) -> bool {
    match isa.name() {
        "x64" => isa.isa_flags().iter().any(|f| f.name == "has_fma" && f.as_bool() == Some(true)),
        "aarch64" => true,
        _ => false,
    }
}

/// Compiles `code`'s runs for warps of `nt` lanes; `Ok(None)` when there is none (or `nt`
/// is not a whole number of host vectors).
pub fn compile(code: &[Instr], entry: u32, num_regs: usize, nt: usize) -> Result<Option<JitKernel>, String> {
    if nt < emit::VLANES || !nt.is_multiple_of(emit::VLANES) {
        return Ok(None);
    }
    let isa = host_isa()?;
    let arg_loads = cover::arg_loads(code, entry);
    let spans = cover::runs(code, entry, has_fma(&*isa), &arg_loads);
    if spans.is_empty() {
        return Ok(None);
    }
    let zeroed = crate::core::decode::read_before_write(code, entry, num_regs as u32);
    let consts = cover::constants(code, num_regs, &zeroed);
    // Per run, the end of the argument bytes its loads read; and of all runs'.
    let reads: Vec<Option<u32>> = spans
        .iter()
        .map(|&(pc, len)| {
            let pcs = pc as usize..(pc + len) as usize;
            pcs.filter(|&p| arg_loads[p]).filter_map(|p| cover::arg_words(&code[p]).map(|w| code[p].imm + 4 * w)).max()
        })
        .collect();
    let args_span = reads.iter().flatten().copied().max().unwrap_or(0);
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(module.target_config().pointer_type()));
    sig.params.push(AbiParam::new(types::I32));
    sig.params.push(AbiParam::new(module.target_config().pointer_type()));
    sig.params.push(AbiParam::new(module.target_config().pointer_type()));
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let mut ids = Vec::with_capacity(spans.len());
    for (n, &(pc, len)) in spans.iter().enumerate() {
        let id = module.declare_function(&format!("run{pc}"), Linkage::Local, &sig).map_err(|e| e.to_string())?;
        ctx.func.signature = sig.clone();
        ctx.func.name = UserFuncName::user(0, n as u32);
        {
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
            let block = b.create_block();
            b.append_block_params_for_function_params(block);
            b.switch_to_block(block);
            let p = b.block_params(block);
            let params = emit::Params { regs: p[0], mask: p[1], args: p[2], csrs: p[3] };
            emit::run_body(&mut b, params, &code[pc as usize..][..len as usize], nt, &consts);
            b.seal_all_blocks();
            b.finalize(module.target_config());
        }
        module.define_function(id, &mut ctx).map_err(|e| format!("run at {pc}: {e:?}"))?;
        module.clear_context(&mut ctx);
        ids.push(id);
    }
    module.finalize_definitions().map_err(|e| e.to_string())?;
    let mut run_at = vec![0u32; code.len()];
    let mut runs = Vec::with_capacity(spans.len());
    for ((&(pc, len), &id), read) in spans.iter().zip(&ids).zip(&reads) {
        let p = module.get_finalized_function(id);
        // SAFETY: the function was declared with the signature `(pointer, i32, pointer,
        // pointer)` and the host's default calling convention, which is `extern "C"`'s.
        let f = unsafe { std::mem::transmute::<*const u8, RunFn>(p) };
        let reads_csrs = code[pc as usize..][..len as usize].iter().any(|i| i.op == crate::abi::isa::Op::Csr);
        runs.push(Run { f, len, reads_args: read.is_some(), reads_csrs });
        run_at[pc as usize] = runs.len() as u32;
    }
    let csr_reads = spans
        .iter()
        .flat_map(|&(pc, len)| &code[pc as usize..][..len as usize])
        .filter(|i| i.op == crate::abi::isa::Op::Csr)
        .filter_map(|i| csr_slot(i.imm))
        .fold(0u32, |m, k| m | 1 << k);
    Ok(Some(JitKernel { nt, num_regs, args_span, csr_reads, run_at, runs, module: Mutex::new(Some(module)) }))
}

#[cfg(test)]
mod tests;
