//! Device shape and unit knobs. Derived values are computed here, never configured.
//!
//! A configuration is the defaults below, optionally overridden by a TOML file
//! (`VORTEX_CONFIG=file.toml`, parsed by [`DeviceConfig::from_toml`]) whose tables mirror the
//! structs: top-level device shape, `[rtu]` (seed 000 §9), `[core]` (op-class latencies),
//! `[mem]` (the memory system) and `[sim]` (how the timed model runs on the host). Unknown
//! keys are refused, and [`DeviceConfig::validate`] refuses combinations the machine cannot
//! be built with, naming the rule.

use serde::Deserialize;

/// Simulation mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Results only, as fast as possible.
    #[default]
    Functional,
    /// Cycle-level cores, memory system and RTU, with counters. Same results.
    Timed,
}

impl Mode {
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "functional" | "" => Ok(Mode::Functional),
            "timed" => Ok(Mode::Timed),
            other => Err(format!("VORTEX_MODE={other:?}: expected `functional` or `timed`")),
        }
    }

    /// The mode `VORTEX_MODE` asks for (functional when unset; a bad value is reported and
    /// ignored).
    pub fn from_env() -> Mode {
        match std::env::var("VORTEX_MODE") {
            Ok(v) => Mode::parse(&v).unwrap_or_else(|e| {
                tracing::error!("{e}; using functional");
                Mode::Functional
            }),
            Err(_) => Mode::Functional,
        }
    }
}

/// Where a parked `WAIT` sits (seed 000 §2.2). `Hold` is the ablation the seed measured
/// against: the WAIT keeps the core's in-order execute port until its record lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WaitMode {
    #[default]
    Parked,
    Hold,
}

/// Backend of the geometry PEs' divider (seed 000 §9 `VX_CFG_RTU_FDIV_LATENCY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FdivBackend {
    /// Soft cores (sim/ASIC): 17 cycles.
    #[default]
    Soft,
    /// Vendor FP IP (`USE_DSP` on Xilinx): 28 cycles.
    Vendor,
    /// Altera FP IP: 15 cycles.
    Altera,
}

impl FdivBackend {
    pub fn latency(self) -> u32 {
        match self {
            FdivBackend::Soft => 17,
            FdivBackend::Vendor => 28,
            FdivBackend::Altera => 15,
        }
    }
}

/// RTU knobs (seed 000 §9). `None` means "derived" (see the accessors).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RtuConfig {
    /// Build the RTU at all. Without it the RTU ops are illegal instructions.
    pub enable: bool,
    /// CW-BVH width the transcoder builds and the walker expects (4 or 6).
    pub bvh_width: u32,
    /// Short-stack entries per traversal context. On overflow the walker drops the farthest
    /// entry and restarts from the root when the stack runs dry (seed 000 §4.3). The seed's
    /// RTL default is 16; ours is deeper because our scenes are megabytes, not 16 KB.
    pub stack_depth: u32,
    /// Restarts allowed per BLAS entry before the walk is declared broken.
    pub restart_cap: u32,
    /// Node and leaf visits allowed for one ray before the walk is declared broken (a
    /// cyclic or corrupt BVH is caught by this bound, never walked forever).
    pub max_visits: u64,
    /// Traversal cores per socket (default ⌈socket_size / 4⌉).
    pub num_rtu_cores: Option<u32>,
    /// Beyond the seed: slots per served SIMT core. The seed derives NUM_SLOTS =
    /// SOCKET_SIZE / NUM_RTU_CORES (one trace per served core); a warp holding several
    /// traces wants more. A slot still owns its contexts (NUM_CTX = NUM_SLOTS × NUM_THREADS).
    pub slots_per_core: u32,
    /// Node-fetch MSHR merge depth: 0 = duplicate in-flight line fetches each take an MSHR
    /// and a memory request (the seed's RTL); d > 0 = up to d later requests ride an
    /// in-flight MSHR.
    pub merge_depth: u32,
    /// RTCache request ports per traversal core (`VX_CFG_NUM_RTU_BLOCKS`; the RTL drives 1).
    pub num_rtu_blocks: u32,
    /// Flat-walker (width 0) instancing path. The CW-BVH walker descends instance leaves
    /// natively, so this knob has no effect on a CW-BVH machine (seed 000 §9).
    pub tlas_enable: bool,
    /// Geometry PEs on hardened vendor FP IP: changes the FMA depth the PE latencies are
    /// derived from (vendor FMA 4 cycles vs soft 9).
    pub use_dsp: bool,
    /// Reciprocal backend: false = LUT + Newton on the divider (FDIV latency), true = BRAM
    /// seed + DSP Newton (FMA-deep: 2·FMA + 2).
    pub recip_dsp_seed: bool,
    /// Divider backend (sets the FDIV latency).
    pub fdiv_backend: FdivBackend,
    /// FDIV latency override (default from the backend).
    pub fdiv_latency: Option<u32>,
    /// FMA latency override (default: 9 soft, 4 with `use_dsp`).
    pub fma_latency: Option<u32>,
    /// Box PE depth (default 3·FMA + 4 = 31).
    pub box_latency: Option<u32>,
    /// Triangle PE depth (default 8·FMA + FDIV + 2 = 91).
    pub tri_latency: Option<u32>,
    /// Instance-transform depth (default 4·FMA = 36).
    pub xform_latency: Option<u32>,
    /// Reciprocal depth (default: the FDIV latency, or 2·FMA + 2 with `recip_dsp_seed`).
    pub recip_latency: Option<u32>,
    /// Entries of the nearest-first box collector (seed: 16; must hold a node's children).
    pub collector_entries: u32,
    /// RTCache geometry (read-only, 64-byte lines).
    pub rtcache_size: u32,
    pub rtcache_ways: u32,
    pub rtcache_banks: u32,
    pub rtcache_mshrs: u32,
    /// RTCache hit latency, cycles.
    pub rtcache_latency: u32,
    /// Reformation threshold: a slot writes a candidate batch back once this many of its
    /// lanes hold a candidate, leaving the still-traversing lanes PENDING. 0 = only when no
    /// lane is traversing. A non-zero `RTU_REFORM_THRESH` DCR overrides it per dispatch.
    pub reform_thresh: u32,
    /// Reformation by SBT key (seed 000's ReformationEngine, batching by (warp, sbt_idx)): in
    /// a dispatch whose candidates select their shader by SBT record (`RTU_CONFIG`'s
    /// `SBT_DISPATCH`, set by the driver for `vkCmdTraceRays*`), a candidate batch holds the
    /// terminal lanes and the candidates of one SBT key; the other candidates read PENDING
    /// and follow in the next batch. Timing only: no result depends on it.
    pub reform_sbt: bool,
    /// Window words the record write-back emits per cycle (the seed writes one row per
    /// cycle; our records are ~41 words because they carry matrices).
    pub window_port_words: u32,
}

impl Default for RtuConfig {
    fn default() -> Self {
        RtuConfig {
            enable: true,
            bvh_width: 4,
            stack_depth: 64,
            restart_cap: 8,
            max_visits: 1 << 24,
            num_rtu_cores: None,
            slots_per_core: 1,
            merge_depth: 0,
            num_rtu_blocks: 1,
            tlas_enable: false,
            use_dsp: false,
            recip_dsp_seed: false,
            fdiv_backend: FdivBackend::Soft,
            fdiv_latency: None,
            fma_latency: None,
            box_latency: None,
            tri_latency: None,
            xform_latency: None,
            recip_latency: None,
            collector_entries: 16,
            rtcache_size: 8 * 1024,
            rtcache_ways: 2,
            rtcache_banks: 1,
            rtcache_mshrs: 16,
            rtcache_latency: 2,
            reform_thresh: 0,
            reform_sbt: false,
            window_port_words: 4,
        }
    }
}

impl RtuConfig {
    pub fn fma_latency(&self) -> u32 {
        self.fma_latency.unwrap_or(if self.use_dsp { 4 } else { 9 })
    }
    pub fn fdiv_latency(&self) -> u32 {
        self.fdiv_latency.unwrap_or(self.fdiv_backend.latency())
    }
    pub fn box_latency(&self) -> u32 {
        self.box_latency.unwrap_or(3 * self.fma_latency() + 4)
    }
    pub fn tri_latency(&self) -> u32 {
        self.tri_latency.unwrap_or(8 * self.fma_latency() + self.fdiv_latency() + 2)
    }
    pub fn xform_latency(&self) -> u32 {
        self.xform_latency.unwrap_or(4 * self.fma_latency())
    }
    pub fn recip_latency(&self) -> u32 {
        self.recip_latency.unwrap_or(if self.recip_dsp_seed { 2 * self.fma_latency() + 2 } else { self.fdiv_latency() })
    }
}

/// Which ray-tracing architecture the device is (`VORTEX_RT_ARCH`, the `rt_arch` key): the
/// fixed-function RTU walking CW-BVHs (seed 000), or an RDNA2-style node-intersection
/// instruction with traversal in the shader (seed 003, `docs/RDNA2.md`). It decides the
/// acceleration-structure layout the builder writes and the ray-query lowering, so it is
/// read once, at device creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtArch {
    #[default]
    Rtu,
    Rdna2,
}

impl RtArch {
    pub fn parse(s: &str) -> Result<RtArch, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "rtu" => Ok(RtArch::Rtu),
            "rdna2" => Ok(RtArch::Rdna2),
            other => Err(format!("VORTEX_RT_ARCH={other:?}: expected `rtu` or `rdna2`")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RtArch::Rtu => "rtu",
            RtArch::Rdna2 => "rdna2",
        }
    }
}

/// When the rdna2 builder writes FP16 box nodes (64 bytes) instead of FP32 ones (128).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Box16 {
    /// Where the outward-rounded halves grow no child box by more than 1/64 of the node's
    /// extent on any axis.
    #[default]
    Auto,
    Never,
    /// Wherever every corner has a half.
    Always,
}

/// The node-intersection unit of the rdna2 architecture (seed 003's texture-path "TD"),
/// one per SIMT core: a node cache, then a pipeline testing one lane's node per cycle (four
/// boxes or one triangle per clock).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IsectConfig {
    /// Node cache (read-only, 64-byte lines), backed by the cluster's L2.
    pub cache_size: u32,
    pub cache_ways: u32,
    pub cache_banks: u32,
    pub cache_mshrs: u32,
    pub cache_latency: u32,
    /// Cycles from a lane's node data to its result: a box node (four slab tests and the
    /// sort) and a triangle (the watertight test).
    pub box_latency: u32,
    pub tri_latency: u32,
    /// FP16 box nodes in rdna2 builds.
    pub box16: Box16,
}

impl Default for IsectConfig {
    fn default() -> Self {
        IsectConfig {
            cache_size: 16 * 1024,
            cache_ways: 4,
            cache_banks: 2,
            cache_mshrs: 16,
            cache_latency: 4,
            box_latency: 12,
            tri_latency: 16,
            box16: Box16::Auto,
        }
    }
}

/// Per-op-class latencies of the SIMT core, cycles from issue to a dependent's issue.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CoreConfig {
    pub alu_latency: u32,
    pub fma_latency: u32,
    pub div_latency: u32,
    pub sfu_latency: u32,
    pub csr_latency: u32,
    /// LMEM (shared memory) access, plus one cycle per extra bank-conflict way.
    pub lmem_latency: u32,
    /// LMEM banks (4-byte words interleaved).
    pub lmem_banks: u32,
    /// Per-lane private memory (the stack; assumed L1-resident).
    pub private_latency: u32,
    /// Image load/store/atomic through the texture path (fixed).
    pub tex_latency: u32,
    /// GETW/GETWF window reads.
    pub window_latency: u32,
    /// Cross-lane ops (VOTE, BALLOT, SHFL, RED): one pass through the warp's lane crossbar.
    pub warp_latency: u32,
    /// Uops of a TRACE burst (CFG, ORIGIN, DIR, ARM), issued under the FU lock.
    pub trace_beats: u32,
    /// Where a WAIT whose record has not landed sits.
    pub wait_mode: WaitMode,
    /// 32-bit registers in the core's register file, shared by its resident warps: a warp of
    /// a kernel with R registers holds R x NUM_THREADS of them (65,536: 64 per lane at full
    /// occupancy, an SM's register file).
    pub register_file: u32,
    /// Bytes of per-lane private memory the core holds for its resident warps: a warp of a
    /// kernel with P private bytes per lane holds P x NUM_THREADS (128 KB).
    pub private_memory: u32,
    /// Whether the two budgets limit the warps a core keeps resident (timed mode): the CTA
    /// dispatcher admits a CTA only while its warps fit both.
    pub occupancy: bool,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            alu_latency: 1,
            fma_latency: 4,
            div_latency: 16,
            sfu_latency: 16,
            csr_latency: 1,
            lmem_latency: 2,
            lmem_banks: 32,
            private_latency: 2,
            tex_latency: 24,
            window_latency: 2,
            warp_latency: 4,
            trace_beats: 4,
            wait_mode: WaitMode::Parked,
            register_file: 64 * 1024,
            private_memory: 128 * 1024,
            occupancy: true,
        }
    }
}

/// The memory system: an L1 data cache per core, an L2 per cluster shared by its cores' L1s
/// and its sockets' RTCaches, and DRAM behind each cluster's L2 at a fixed latency with a
/// bandwidth limit. All lines are 64 bytes.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemConfig {
    pub l1_size: u32,
    pub l1_ways: u32,
    pub l1_banks: u32,
    pub l1_mshrs: u32,
    pub l1_latency: u32,
    pub l2_size: u32,
    pub l2_ways: u32,
    pub l2_banks: u32,
    pub l2_mshrs: u32,
    pub l2_latency: u32,
    pub dram_latency: u32,
    /// DRAM bytes per cycle per cluster channel.
    pub dram_bytes_per_cycle: u32,
    /// Pages each LSU's and each traversal core's TLB holds (sparse resources only: see
    /// `crate::tlb`).
    pub tlb_entries: u32,
    /// Cycles a TLB miss adds to its request (the page-table walk).
    pub page_walk_latency: u32,
}

impl Default for MemConfig {
    fn default() -> Self {
        MemConfig {
            l1_size: 16 * 1024,
            l1_ways: 4,
            l1_banks: 4,
            l1_mshrs: 16,
            l1_latency: 4,
            l2_size: 1024 * 1024,
            l2_ways: 8,
            l2_banks: 4,
            l2_mshrs: 64,
            l2_latency: 20,
            dram_latency: 100,
            dram_bytes_per_cycle: 16,
            tlb_entries: 16,
            page_walk_latency: 100,
        }
    }
}

/// The graphics units (`docs/GRAPHICS.md`; timed mode: `docs/TIMING.md` §2).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GfxConfig {
    /// Screen tile side in pixels (a power of two, 2..=16): a tile's fragments run on core
    /// `tile index mod cores`.
    pub tile_size: u32,
    /// Raster unit: cycles between primitive setups (clip, project, cull, set up).
    pub setup_cycles: u32,
    /// Raster unit: cycles from a primitive's setup to its first quad.
    pub raster_latency: u32,
    /// Raster unit: quads it emits (tests early, bins) per cycle.
    pub raster_quads_per_cycle: u32,
    /// Output merger (per core): quads it merges per cycle, and cycles from a fragment
    /// warp's retirement to its first merge.
    pub om_quads_per_cycle: u32,
    pub om_latency: u32,
}

impl Default for GfxConfig {
    fn default() -> Self {
        GfxConfig {
            tile_size: 16,
            setup_cycles: 1,
            raster_latency: 8,
            raster_quads_per_cycle: 4,
            om_quads_per_cycle: 2,
            om_latency: 4,
        }
    }
}

/// The texture unit of each core (`TEX`; `tex/timed.rs`): a tag-only texture cache in front
/// of the cluster's L2, and a filter stage of fixed throughput.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TexConfig {
    pub cache_size: u32,
    pub cache_ways: u32,
    /// Banks, each taking one line per cycle: the address stage's lines per cycle.
    pub cache_banks: u32,
    pub cache_mshrs: u32,
    pub cache_latency: u32,
    /// Texels the filter stage takes per cycle (16: four bilinear samples).
    pub texels_per_cycle: u32,
    /// Cycles from the filter stage to the warp's registers (address generation, format
    /// conversion, filter arithmetic).
    pub latency: u32,
}

impl Default for TexConfig {
    fn default() -> Self {
        TexConfig {
            cache_size: 16 * 1024,
            cache_ways: 4,
            cache_banks: 4,
            cache_mshrs: 16,
            cache_latency: 4,
            texels_per_cycle: 16,
            latency: 16,
        }
    }
}

/// How the timed model runs on the host.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// Cycles from the KMU to a core's dispatcher (one registered stage per router level).
    pub launch_latency: u32,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig { launch_latency: 3 }
    }
}

/// Device shape and global knobs.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeviceConfig {
    pub mode: Mode,
    pub num_clusters: u32,
    /// Cores per cluster.
    pub cores_per_cluster: u32,
    /// Cores per socket (cores sharing one RTU socket).
    pub socket_size: u32,
    /// Warp slots per core.
    pub num_warps: u32,
    /// Lanes per warp (at most 32).
    pub num_threads: u32,
    /// Local memory per core, bytes.
    pub lmem_bytes: u32,
    /// The ray-tracing architecture (`VORTEX_RT_ARCH` overrides it).
    pub rt_arch: RtArch,
    pub rtu: RtuConfig,
    /// The rdna2 architecture's node-intersection unit.
    pub isect: IsectConfig,
    pub core: CoreConfig,
    pub mem: MemConfig,
    pub tex: TexConfig,
    pub sim: SimConfig,
    pub gfx: GfxConfig,
    /// The watchdog's idle rule: a dispatch that makes no progress (no warp retired, no CTA
    /// launched, no ray completed) for this long, milliseconds, is lost (0 = never;
    /// `watchdog.rs`).
    pub watchdog_idle_ms: u64,
    /// The watchdog's wall-clock rule: a dispatch running longer than this, milliseconds,
    /// is lost whatever it does (0 = no limit, the default).
    pub watchdog_ms: u64,
    /// Host threads that run cores (functional) or clusters (timed) in parallel (0 = all
    /// host cores). Results and cycle counts do not depend on it.
    pub host_threads: u32,
    /// Attribute RTU work to the invocations that traced (the traversal-cost heatmap of
    /// `VORTEX_STATS`) and, in timed mode, keep each traversal core's activity over time
    /// ([`crate::rtu::timeline`]); an observability switch, not a machine knob.
    pub detailed_stats: bool,
    /// Functional mode runs straight lines of register ops as host code compiled by the
    /// JIT (`crate::jit`); the default is `VORTEX_JIT`'s (on unless `0`). Results do not
    /// change.
    pub jit: bool,
    /// Offer `VK_KHR_ray_tracing_pipeline` (`docs/RTPIPELINE.md`) on the RT-unit
    /// architecture (rdna2 devices never offer it); on by default, `VORTEX_RT_PIPELINE=0`
    /// turns it off.
    pub rt_pipeline: bool,
    /// Interpreted warp instructions per kernel instruction before the JIT compiles a
    /// kernel (0: at its first dispatch); the default is `VORTEX_JIT_HOT`'s, else
    /// [`crate::jit::DEFAULT_HOT`].
    pub jit_hot: u64,
}

impl Default for DeviceConfig {
    /// The default machine; its mode is `VORTEX_MODE`'s (functional when unset), so every
    /// harness that starts from the defaults runs in the mode the environment asks for.
    fn default() -> Self {
        DeviceConfig {
            mode: Mode::from_env(),
            num_clusters: 2,
            cores_per_cluster: 2,
            socket_size: 2,
            num_warps: 32,
            num_threads: 32,
            lmem_bytes: 64 * 1024,
            rt_arch: RtArch::Rtu,
            rtu: RtuConfig::default(),
            isect: IsectConfig::default(),
            core: CoreConfig::default(),
            mem: MemConfig::default(),
            tex: TexConfig::default(),
            sim: SimConfig::default(),
            gfx: GfxConfig::default(),
            watchdog_idle_ms: 20_000,
            watchdog_ms: 0,
            host_threads: 0,
            detailed_stats: false,
            jit: crate::jit::from_env(),
            rt_pipeline: true,
            jit_hot: crate::jit::hot_from_env(),
        }
    }
}

fn pow2(v: u32) -> bool {
    v != 0 && v.is_power_of_two()
}

impl DeviceConfig {
    /// Parses a TOML configuration over the defaults, then validates it.
    pub fn from_toml(text: &str) -> Result<DeviceConfig, String> {
        let c: DeviceConfig = toml::from_str(text).map_err(|e| format!("configuration: {}", e.message()))?;
        c.validate()?;
        Ok(c)
    }

    /// Reads and parses `path` (see [`DeviceConfig::from_toml`]).
    pub fn from_file(path: &str) -> Result<DeviceConfig, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("VORTEX_CONFIG={path}: {e}"))?;
        DeviceConfig::from_toml(&text).map_err(|e| format!("VORTEX_CONFIG={path}: {e}"))
    }

    pub fn num_cores(&self) -> u32 {
        self.num_clusters * self.cores_per_cluster
    }

    /// Sockets per cluster.
    pub fn sockets_per_cluster(&self) -> u32 {
        self.cores_per_cluster / self.socket_size
    }

    /// Traversal cores per socket (seed: ⌈SOCKET_SIZE / 4⌉).
    pub fn num_rtu_cores(&self) -> u32 {
        self.rtu.num_rtu_cores.unwrap_or(self.socket_size.div_ceil(4))
    }

    /// SIMT cores one traversal core serves (a static, contiguous binding).
    pub fn cores_per_rtu(&self) -> u32 {
        self.socket_size / self.num_rtu_cores()
    }

    /// Concurrent traces per traversal core (derived: SOCKET_SIZE / NUM_RTU_CORES, times the
    /// beyond-the-seed `slots_per_core`).
    pub fn rtu_slots(&self) -> u32 {
        self.cores_per_rtu() * self.rtu.slots_per_core
    }

    /// Traversal contexts per traversal core (derived: NUM_SLOTS × NUM_THREADS).
    pub fn rtu_contexts(&self) -> u32 {
        self.rtu_slots() * self.num_threads
    }

    /// RTCache instances per socket (derived: max(1, ⌈NUM_RTU_CORES / 4⌉)).
    pub fn num_rtcaches(&self) -> u32 {
        self.num_rtu_cores().div_ceil(4).max(1)
    }

    /// Largest CTA a core can hold (all its warps).
    pub fn max_block_threads(&self) -> u32 {
        self.num_warps * self.num_threads
    }

    /// Checks the rules that tie knobs together; the error names the rule.
    pub fn validate(&self) -> Result<(), String> {
        if self.num_threads == 0
            || self.num_threads > crate::abi::MAX_THREADS as u32
            || !self.num_threads.is_power_of_two()
        {
            return Err(format!(
                "num_threads = {} must be a power of two in 1..={}",
                self.num_threads,
                crate::abi::MAX_THREADS
            ));
        }
        if self.num_warps == 0 || self.num_warps > 64 {
            return Err(format!("num_warps = {} must be in 1..=64", self.num_warps));
        }
        if self.num_clusters == 0 || self.cores_per_cluster == 0 {
            return Err("the device needs at least one cluster with at least one core".into());
        }
        if self.socket_size == 0 || !self.cores_per_cluster.is_multiple_of(self.socket_size) {
            return Err(format!(
                "cores_per_cluster = {} must be a multiple of socket_size = {}",
                self.cores_per_cluster, self.socket_size
            ));
        }
        if !self.lmem_bytes.is_multiple_of(crate::abi::dcr::LMEM_BLOCK) {
            return Err(format!(
                "lmem_bytes = {} must be a multiple of the LMEM block ({})",
                self.lmem_bytes,
                crate::abi::dcr::LMEM_BLOCK
            ));
        }
        let t = self.gfx.tile_size;
        if !(2..=16).contains(&t) || !t.is_power_of_two() {
            return Err(format!("gfx.tile_size = {t} must be a power of two in 2..=16"));
        }
        if self.gfx.raster_quads_per_cycle == 0 || self.gfx.om_quads_per_cycle == 0 {
            return Err("gfx.raster_quads_per_cycle and gfx.om_quads_per_cycle must be at least 1".into());
        }
        let r = &self.rtu;
        if r.bvh_width == 0 {
            return Err(
                "rtu.bvh_width = 0 (the flat triangle-list walker) is not built by this model; use 4 or 6".into()
            );
        }
        if !crate::abi::bvh::WIDTHS.contains(&r.bvh_width) {
            return Err(format!("rtu.bvh_width = {} must be 4 or 6", r.bvh_width));
        }
        if r.stack_depth < 2 {
            return Err(format!("rtu.stack_depth = {} must be at least 2", r.stack_depth));
        }
        let nrc = self.num_rtu_cores();
        if nrc == 0 || nrc > self.socket_size || !self.socket_size.is_multiple_of(nrc) {
            return Err(format!(
                "rtu.num_rtu_cores = {nrc} must divide socket_size = {} (cores bind to traversal cores in \
                 equal contiguous groups)",
                self.socket_size
            ));
        }
        if r.slots_per_core == 0 || r.slots_per_core > 64 {
            return Err(format!("rtu.slots_per_core = {} must be in 1..=64", r.slots_per_core));
        }
        if self.rtu_contexts() > 4096 {
            return Err(format!(
                "rtu contexts (NUM_SLOTS {} x NUM_THREADS {}) = {} exceed 4096",
                self.rtu_slots(),
                self.num_threads,
                self.rtu_contexts()
            ));
        }
        if (r.collector_entries as usize) < r.bvh_width as usize {
            return Err(format!(
                "rtu.collector_entries = {} cannot hold the {} children of a node (bvh_width)",
                r.collector_entries, r.bvh_width
            ));
        }
        if r.num_rtu_blocks == 0 || r.window_port_words == 0 {
            return Err("rtu.num_rtu_blocks and rtu.window_port_words must be at least 1".into());
        }
        for (name, v) in [
            ("rtu.fma_latency", r.fma_latency()),
            ("rtu.fdiv_latency", r.fdiv_latency()),
            ("rtu.box_latency", r.box_latency()),
            ("rtu.tri_latency", r.tri_latency()),
            ("rtu.xform_latency", r.xform_latency()),
            ("rtu.recip_latency", r.recip_latency()),
        ] {
            if v == 0 || v > 10_000 {
                return Err(format!("{name} = {v} must be in 1..=10000 cycles (a pipelined unit has depth)"));
            }
        }
        cache_rule("rtu.rtcache", r.rtcache_size, r.rtcache_ways, r.rtcache_banks, r.rtcache_mshrs)?;
        let m = &self.mem;
        cache_rule("mem.l1", m.l1_size, m.l1_ways, m.l1_banks, m.l1_mshrs)?;
        cache_rule("mem.l2", m.l2_size, m.l2_ways, m.l2_banks, m.l2_mshrs)?;
        if m.dram_bytes_per_cycle == 0 {
            return Err("mem.dram_bytes_per_cycle must be at least 1".into());
        }
        if m.tlb_entries == 0 || m.tlb_entries > 4096 {
            return Err(format!("mem.tlb_entries = {} must be in 1..=4096", m.tlb_entries));
        }
        let x = &self.isect;
        cache_rule("isect.cache", x.cache_size, x.cache_ways, x.cache_banks, x.cache_mshrs)?;
        let t = &self.tex;
        cache_rule("tex.cache", t.cache_size, t.cache_ways, t.cache_banks, t.cache_mshrs)?;
        let c = &self.core;
        for (name, v) in [
            ("isect.cache_latency", x.cache_latency),
            ("isect.box_latency", x.box_latency),
            ("isect.tri_latency", x.tri_latency),
            ("core.alu_latency", c.alu_latency),
            ("core.fma_latency", c.fma_latency),
            ("core.div_latency", c.div_latency),
            ("core.sfu_latency", c.sfu_latency),
            ("core.csr_latency", c.csr_latency),
            ("core.lmem_latency", c.lmem_latency),
            ("core.private_latency", c.private_latency),
            ("core.tex_latency", c.tex_latency),
            ("core.window_latency", c.window_latency),
            ("core.warp_latency", c.warp_latency),
            ("core.trace_beats", c.trace_beats),
            ("mem.l1_latency", m.l1_latency),
            ("tex.cache_latency", t.cache_latency),
            ("tex.texels_per_cycle", t.texels_per_cycle),
            ("tex.latency", t.latency),
            ("rtu.rtcache_latency", r.rtcache_latency),
        ] {
            if v == 0 {
                return Err(format!("{name} must be at least 1 cycle"));
            }
        }
        if !pow2(c.lmem_banks) {
            return Err(format!("core.lmem_banks = {} must be a power of two", c.lmem_banks));
        }
        Ok(())
    }

    /// Host threads to use for cores.
    pub fn host_threads(&self) -> usize {
        if self.host_threads > 0 {
            self.host_threads as usize
        } else {
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
        }
    }
}

/// A set-associative cache of 64-byte lines must split evenly into ways, banks and sets.
fn cache_rule(name: &str, size: u32, ways: u32, banks: u32, mshrs: u32) -> Result<(), String> {
    const LINE: u32 = 64;
    if !pow2(size) || size < LINE {
        return Err(format!("{name}_size = {size} must be a power of two of at least one 64-byte line"));
    }
    if !pow2(ways) || ways * LINE > size {
        return Err(format!("{name}_ways = {ways} must be a power of two with ways x 64 B <= size ({size})"));
    }
    if !pow2(banks) || banks * ways * LINE > size {
        return Err(format!(
            "{name}_banks = {banks} must be a power of two with banks x ways x 64 B <= size ({size}): every bank needs a set"
        ));
    }
    if mshrs == 0 {
        return Err(format!("{name}_mshrs must be at least 1"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_holds_a_1024_thread_cta() {
        let c = DeviceConfig::default();
        c.validate().unwrap();
        assert!(c.max_block_threads() >= 1024);
    }

    #[test]
    fn invalid_combinations_name_the_rule() {
        let c = DeviceConfig { num_threads: 24, ..Default::default() };
        assert!(c.validate().unwrap_err().contains("power of two"));
        let c = DeviceConfig { socket_size: 3, ..Default::default() };
        assert!(c.validate().unwrap_err().contains("socket_size"));
        let mut c = DeviceConfig::default();
        c.rtu.bvh_width = 5;
        assert!(c.validate().unwrap_err().contains("bvh_width"));
    }

    #[test]
    fn derived_values_follow_the_seed() {
        let mut c = DeviceConfig { cores_per_cluster: 8, socket_size: 8, ..Default::default() };
        assert_eq!(c.num_rtu_cores(), 2);
        assert_eq!(c.cores_per_rtu(), 4);
        assert_eq!(c.rtu_slots(), 4);
        assert_eq!(c.rtu_contexts(), 4 * 32);
        assert_eq!(c.num_rtcaches(), 1);
        c.rtu.num_rtu_cores = Some(8);
        assert_eq!(c.num_rtcaches(), 2);
        let r = RtuConfig::default();
        assert_eq!((r.box_latency(), r.tri_latency(), r.xform_latency(), r.recip_latency()), (31, 91, 36, 17));
        let dsp = RtuConfig { use_dsp: true, fdiv_backend: FdivBackend::Vendor, ..Default::default() };
        assert_eq!((dsp.box_latency(), dsp.tri_latency()), (16, 4 * 8 + 28 + 2));
    }

    #[test]
    fn toml_overrides_defaults_and_refuses_bad_input() {
        let c = DeviceConfig::from_toml(
            "mode = \"timed\"\nnum_clusters = 1\n[rtu]\nstack_depth = 8\nmerge_depth = 4\nbox_latency = 20\n\
             [mem]\ndram_latency = 200\n",
        )
        .unwrap();
        assert_eq!(c.mode, Mode::Timed);
        assert_eq!((c.num_clusters, c.rtu.stack_depth, c.rtu.merge_depth), (1, 8, 4));
        assert_eq!((c.rtu.box_latency(), c.rtu.tri_latency()), (20, 91));
        assert_eq!(c.mem.dram_latency, 200);
        assert_eq!(c.num_threads, 32, "unset keys keep their defaults");
        assert_eq!((c.watchdog_idle_ms, c.watchdog_ms), (20_000, 0), "the idle rule on, the wall clock off");
        let c = DeviceConfig::from_toml("watchdog_idle_ms = 0\nwatchdog_ms = 1500\n").unwrap();
        assert_eq!((c.watchdog_idle_ms, c.watchdog_ms), (0, 1500));
        let e = DeviceConfig::from_toml("[rtu]\nstack_dpeth = 8\n").unwrap_err();
        assert!(e.contains("stack_dpeth"), "{e}");
        let e = DeviceConfig::from_toml("[rtu]\nrtcache_size = 3000\n").unwrap_err();
        assert!(e.contains("rtu.rtcache_size"), "{e}");
        let e = DeviceConfig::from_toml("socket_size = 2\n[rtu]\nnum_rtu_cores = 3\n").unwrap_err();
        assert!(e.contains("num_rtu_cores"), "{e}");
        let e = DeviceConfig::from_toml("[rtu]\nbvh_width = 0\n").unwrap_err();
        assert!(e.contains("flat"), "{e}");
        let c =
            DeviceConfig::from_toml("rt_arch = \"rdna2\"\n[isect]\nbox16 = \"never\"\ncache_size = 4096\n").unwrap();
        assert_eq!((c.rt_arch, c.isect.box16, c.isect.cache_size), (RtArch::Rdna2, Box16::Never, 4096));
        assert_eq!(DeviceConfig::default().rt_arch, RtArch::Rtu, "the RTU stays the default");
        let e = DeviceConfig::from_toml("rt_arch = \"rdna3\"\n").unwrap_err();
        assert!(e.contains("rdna3") || e.contains("variant"), "{e}");
        let e = DeviceConfig::from_toml("[isect]\ncache_size = 100\n").unwrap_err();
        assert!(e.contains("isect.cache_size"), "{e}");
        assert_eq!(RtArch::parse(" RDNA2 "), Ok(RtArch::Rdna2));
        assert!(RtArch::parse("x").unwrap_err().contains("VORTEX_RT_ARCH"));
        let e = DeviceConfig::from_toml("[tex]\ncache_ways = 3\n").unwrap_err();
        assert!(e.contains("tex.cache_ways"), "{e}");
        let e = DeviceConfig::from_toml("[tex]\ntexels_per_cycle = 0\n").unwrap_err();
        assert!(e.contains("tex.texels_per_cycle"), "{e}");
        let c = DeviceConfig::from_toml("[tex]\ncache_size = 4096\nlatency = 3\n").unwrap();
        assert_eq!((c.tex.cache_size, c.tex.latency, c.tex.cache_ways), (4096, 3, 4));
        let e = DeviceConfig::from_toml("mode = \"fast\"\n").unwrap_err();
        assert!(e.contains("fast") || e.contains("variant"), "{e}");
    }
}
