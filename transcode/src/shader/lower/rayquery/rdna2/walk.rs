//! The traversal loop in VX (`model::isect::walk` is its host form): `Initialize` sets the
//! query up, `Proceed` runs the loop until a candidate needs the shader or the walk is over.
//!
//! The loop keeps its state in registers while it runs (`Loop`) and in the query's private
//! state between proceeds (`state`), so a proceed that hands a candidate to the shader
//! resumes where it stopped. One iteration pops a node pointer and, by its type:
//! - instance (6): mask test against the cull mask; enter the BLAS: its descriptor from its
//!   header, the ray through the world-to-object matrix (not renormalised, so t means the
//!   same in both spaces), the stack depth remembered so the world ray comes back when the
//!   BLAS's part of the stack is used up;
//! - procedural AABB (7): the slab test (the RTU's, so the same entry distance), and a
//!   candidate for the shader;
//! - box (4, 5): `ISECT`, the hit children pushed far to near;
//! - triangle (0..3): `ISECT`, then the ray interval, facing, opacity and culling rules
//!   (the RTU's classifier): an opaque hit commits (the extent shrinks to it), another is a
//!   candidate for the shader.
//!
//! The loop has one exit (at its head) and every iteration ends at one latch, so the warp
//! reconverges after it. A push past the stack or a walk past its node-visit bound is a
//! trap (seed 004: report the failure, never loop or drop a node).

use super::ops::{self, add64, bit, block, fcmp, icmp, icmpk, k, ldg, op, opk, sel, set};
use super::state::{self as st, rec};
use crate::shader::emit::{Label, I};
use crate::shader::error::Result;
use crate::shader::lower::rayquery::Ray;
use crate::shader::lower::Lowerer;
use vortex_model::abi::bvh;
use vortex_model::abi::isa::{FloatCond, IntCond, MemSize, Op as Vx, TrapCode};
use vortex_model::abi::rdna2::{self as r2, ptr, ray as iray};
use vortex_model::abi::rtu::{self as rtu_abi, geometry_flags as gf, instance_flags as inf, ray_flags as rf};

/// The loop's registers.
struct Loop {
    st: u16,
    /// Flags, cull mask, tmin.
    fct: u16,
    /// Descriptor (4) and node base (2).
    desc: u16,
    /// The `ISECT` ray operand (11).
    ray: u16,
    /// Instance: address (2), index, custom index, SBT/flags word.
    inst: u16,
    /// Stack depth, level, steps, done.
    ctl: u16,
    /// 1 while the loop goes on.
    go: u16,
    /// proceed's result.
    res: u16,
    latch: Label,
}

impl Loop {
    fn flags(&self) -> u16 {
        self.fct
    }
    fn base(&self) -> u16 {
        self.desc + 4
    }
    fn node(&self) -> u16 {
        self.ray + iray::NODE as u16
    }
    fn extent(&self) -> u16 {
        self.ray + iray::EXTENT as u16
    }
    fn sp(&self) -> u16 {
        self.ctl + st::SP as u16
    }
}

pub fn initialize(l: &mut Lowerer<'_>, q: u16, ray: &Ray) -> Result<()> {
    let s = st::base(l, q)?;
    for (at, r, n) in [(st::FLAGS, ray.flags, 1), (st::CULL, ray.cull_mask, 1), (st::TMIN, ray.tmin, 1)] {
        st::store(l, s, at, r, n);
    }
    st::store(l, s, st::WORLD_ORG, ray.origin, 3);
    st::store(l, s, st::WORLD_DIR, ray.dir, 3);
    // A null structure (nullDescriptor) has no header: nothing to walk.
    let (desc, root) = (l.e.alloc(6)?, l.e.alloc(1)?);
    for w in 0..6 {
        set(l, desc + w, 0);
    }
    set(l, root, ptr::INVALID);
    let (hdr, join) = (block(l, "init.header"), block(l, "init.join"));
    let any = op(l, Vx::Or, ray.accel, ray.accel + 1)?;
    let some = icmpk(l, IntCond::Ne, any, 0)?;
    l.e.bra(some, hdr, join, join);
    l.e.place(hdr)?;
    descriptor(l, ray.accel, desc)?;
    ops::ldg_into(l, root, ray.accel, bvh::header::ROOT as u32, 1);
    l.e.jmp(join);
    l.e.place(join)?;
    st::store(l, s, st::TOP_DESC, desc, 6);
    st::store(l, s, st::DESC, desc, 6);
    let r = l.e.alloc(iray::REGS)?;
    l.e.movi(r + iray::NODE as u16, ptr::INVALID);
    l.e.mov(r + iray::EXTENT as u16, ray.tmax);
    for a in 0..3u16 {
        l.e.mov(r + iray::ORIGIN as u16 + a, ray.origin + a);
        l.e.mov(r + iray::DIR as u16 + a, ray.dir + a);
    }
    inverse(l, r)?;
    st::store(l, s, st::RAY, r, iray::REGS);
    let zero = k(l, 0)?;
    for w in 0..st::INST_WORDS {
        st::store(l, s, st::INST + w, zero, 1);
    }
    // The root on the stack (none for an empty structure).
    st::store(l, s, st::STACK, root, 1);
    let ctl = l.e.alloc(st::CTL_WORDS)?;
    let some = icmpk(l, IntCond::Ne, root, ptr::INVALID)?;
    let one = k(l, 1)?;
    l.e.emit(I::new(Vx::And).dst(ctl + st::SP as u16).a(some).b(one));
    set(l, ctl + st::LEVEL as u16, st::NO_LEVEL);
    set(l, ctl + st::STEPS as u16, 0);
    let never = never_starts(l, ray)?;
    l.e.mov(ctl + st::DONE as u16, never);
    st::store(l, s, st::CTL, ctl, st::CTL_WORDS);
    // Both records cleared and the committed t at tmax, as the RTU's window starts (a
    // shader may compare a candidate against the committed t before anything commits).
    let z4 = l.e.alloc(4)?;
    for w in 0..4 {
        set(l, z4 + w, 0);
    }
    const { assert!(st::COMM == st::CAND + rec::WORDS && (2 * rec::WORDS).is_multiple_of(4)) };
    for w in (0..2 * rec::WORDS).step_by(4) {
        st::store(l, s, st::CAND + w, z4, 4);
    }
    st::store(l, s, st::COMM + rec::T, ray.tmax, 1);
    Ok(())
}

/// The RTU's rule: a ray with a NaN, an all-zero direction, or `!(tmin <= tmax)` finds
/// nothing.
fn never_starts(l: &mut Lowerer<'_>, ray: &Ray) -> Result<u16> {
    let mut nan = fcmp(l, FloatCond::Uno, ray.tmin, ray.tmax)?;
    let zero = k(l, 0)?;
    let mut all_zero = k(l, 1)?;
    for a in 0..3u16 {
        let (o, d) = (ray.origin + a, ray.dir + a);
        let n1 = fcmp(l, FloatCond::Uno, o, d)?;
        nan = op(l, Vx::Or, nan, n1)?;
        let z = fcmp(l, FloatCond::Oeq, d, zero)?;
        all_zero = op(l, Vx::And, all_zero, z)?;
    }
    let ordered = fcmp(l, FloatCond::Ole, ray.tmin, ray.tmax)?;
    let bad_interval = icmpk(l, IntCond::Eq, ordered, 0)?;
    let a = op(l, Vx::Or, nan, all_zero)?;
    op(l, Vx::Or, a, bad_interval)
}

/// The descriptor (`abi::rdna2::Descriptor::encode`) and node base of the structure whose
/// address is the pair `accel`, from its header, into `out .. out + 6`.
fn descriptor(l: &mut Lowerer<'_>, accel: u16, out: u16) -> Result<()> {
    let h = ldg(l, accel, r2::header::BVH_OFFSET as u32, 3)?; // offset, slots, grow/sort/mode
    let (off, slots, gsm) = (h, h + 1, h + 2);
    const { assert!(r2::header::SLOTS == r2::header::BVH_OFFSET + 4) };
    const { assert!(r2::header::BOX_GROW == r2::header::BVH_OFFSET + 8) };
    const { assert!(r2::header::BOX_SORT == r2::header::BOX_GROW + 1) };
    const { assert!(r2::header::RETURN_MODE == r2::header::BOX_GROW + 2) };
    let base = add64(l, accel, off)?;
    l.e.mov(out + 4, base);
    l.e.mov(out + 5, base + 1);
    let eight = k(l, 8)?;
    let b256 = l.e.alloc(2)?;
    l.e.emit(I::new(Vx::Shr64).dst(b256).a(base).b(eight));
    l.e.mov(out, b256);
    // Word 1: base bits 39:32, box growing at 23, sorting at 31.
    let hi = opk(l, Vx::And, b256 + 1, 0xFF)?;
    let grow = opk(l, Vx::And, gsm, 0xFF)?;
    let grow = opk(l, Vx::Shl, grow, 23)?;
    let sort = opk(l, Vx::Shr, gsm, 8)?;
    let sort = opk(l, Vx::And, sort, 1)?;
    let sort = opk(l, Vx::Shl, sort, 31)?;
    let w1 = op(l, Vx::Or, hi, grow)?;
    l.e.emit(I::new(Vx::Or).dst(out + 1).a(w1).b(sort));
    let one = k(l, 1)?;
    l.e.emit(I::new(Vx::Isub).dst(out + 2).a(slots).b(one));
    // Word 3: return mode at 24, large pages at 27, type at 31:28.
    let mode = opk(l, Vx::Shr, gsm, 16)?;
    let mode = opk(l, Vx::And, mode, 1)?;
    let mode = opk(l, Vx::Shl, mode, 24)?;
    let fixed = k(l, 1 << 27 | r2::DESC_TYPE << 28)?;
    l.e.emit(I::new(Vx::Or).dst(out + 3).a(mode).b(fixed));
    Ok(())
}

/// `inv = 1 / dir` in the ray operand (infinities for zero components, as `RayPrep`).
fn inverse(l: &mut Lowerer<'_>, ray: u16) -> Result<()> {
    let one = k(l, 1.0f32.to_bits())?;
    for a in 0..3u16 {
        let d = ray + iray::DIR as u16 + a;
        l.e.emit(I::new(Vx::Fdiv).dst(ray + iray::INV_DIR as u16 + a).a(one).b(d));
    }
    Ok(())
}

pub fn proceed(l: &mut Lowerer<'_>, q: u16) -> Result<u16> {
    let s = st::base(l, q)?;
    let lp = Loop {
        st: s,
        fct: st::fetch(l, s, st::FLAGS, 3)?,
        desc: st::fetch(l, s, st::DESC, 6)?,
        ray: st::fetch(l, s, st::RAY, iray::REGS)?,
        inst: st::fetch(l, s, st::INST, st::INST_WORDS)?,
        ctl: st::fetch(l, s, st::CTL, st::CTL_WORDS)?,
        go: l.e.alloc(1)?,
        res: l.e.alloc(1)?,
        latch: block(l, "latch"),
    };
    let zero = k(l, 0)?;
    l.e.emit(I::new(Vx::Icmp).cond(IntCond::Eq).dst(lp.go).a(lp.ctl + st::DONE as u16).b(zero));
    set(l, lp.res, 0);
    let (head, body, out) = (block(l, "head"), block(l, "body"), block(l, "out"));
    l.e.jmp(head);
    l.e.place(head)?;
    l.e.bra(lp.go, body, out, out);
    l.e.place(body)?;
    pop(l, &lp)?;
    l.e.place(lp.latch)?;
    l.e.jmp(head);
    l.e.place(out)?;
    st::store(l, s, st::DESC, lp.desc, 6);
    st::store(l, s, st::RAY, lp.ray, iray::REGS);
    st::store(l, s, st::INST, lp.inst, st::INST_WORDS);
    st::store(l, s, st::CTL, lp.ctl, st::CTL_WORDS);
    Ok(lp.res)
}

/// Leaves a finished BLAS, pops the next node (or ends the walk) and dispatches on its type.
fn pop(l: &mut Lowerer<'_>, lp: &Loop) -> Result<()> {
    let (leave, popb, fin, visit, over, dispatch) =
        (block(l, "leave"), block(l, "pop"), block(l, "fin"), block(l, "visit"), block(l, "steps"), block(l, "node"));
    let level = lp.ctl + st::LEVEL as u16;
    let left = icmp(l, IntCond::Eq, lp.sp(), level)?;
    l.e.bra(left, leave, popb, popb);
    l.e.place(leave)?;
    st::load(l, lp.st, st::WORLD_ORG, lp.ray + iray::ORIGIN as u16, 6);
    inverse(l, lp.ray)?;
    st::load(l, lp.st, st::TOP_DESC, lp.desc, 6);
    set(l, level, st::NO_LEVEL);
    l.e.jmp(popb);
    l.e.place(popb)?;
    let empty = icmpk(l, IntCond::Eq, lp.sp(), 0)?;
    l.e.bra(empty, fin, visit, lp.latch);
    l.e.place(fin)?;
    set(l, lp.ctl + st::DONE as u16, 1);
    set(l, lp.go, 0);
    l.e.jmp(lp.latch);
    l.e.place(visit)?;
    let one = k(l, 1)?;
    l.e.emit(I::new(Vx::Isub).dst(lp.sp()).a(lp.sp()).b(one));
    let at = stack_at(l, lp)?;
    l.e.emit(I::new(Vx::Ldp).size(MemSize::B32).dst(lp.node()).a(at).imm(st::STACK_IMM));
    let steps = lp.ctl + st::STEPS as u16;
    l.e.emit(I::new(Vx::Iadd).dst(steps).a(steps).b(one));
    let too_many = icmpk(l, IntCond::Ugt, steps, st::STEP_LIMIT)?;
    l.e.bra(too_many, over, dispatch, dispatch);
    l.e.place(over)?;
    l.e.emit(I::new(Vx::Trap).imm(TrapCode::RayQuerySteps as u32));
    l.e.place(dispatch)?;
    by_type(l, lp)
}

/// Byte offset (for `LDP`/`STP` with `imm = 4 * STACK`) of the stack entry at depth `sp`.
fn stack_at(l: &mut Lowerer<'_>, lp: &Loop) -> Result<u16> {
    let off = opk(l, Vx::Shl, lp.sp(), 2)?;
    op(l, Vx::Iadd, lp.st, off)
}

fn by_type(l: &mut Lowerer<'_>, lp: &Loop) -> Result<()> {
    let (inst, not_inst, aabb, node) = (block(l, "inst"), block(l, "notinst"), block(l, "aabb"), block(l, "isect"));
    let ty = opk(l, Vx::And, lp.node(), ptr::TYPE_MASK)?;
    let is_inst = icmpk(l, IntCond::Eq, ty, ptr::INSTANCE)?;
    l.e.bra(is_inst, inst, not_inst, lp.latch);
    l.e.place(inst)?;
    instance(l, lp)?;
    l.e.jmp(lp.latch);
    l.e.place(not_inst)?;
    let is_aabb = icmpk(l, IntCond::Eq, ty, ptr::AABB)?;
    l.e.bra(is_aabb, aabb, node, lp.latch);
    l.e.place(aabb)?;
    procedural(l, lp)?;
    l.e.jmp(lp.latch);
    l.e.place(node)?;
    hardware_node(l, lp, ty)
}

/// The address (pair) of the node the loop's node pointer names.
fn node_addr(l: &mut Lowerer<'_>, lp: &Loop) -> Result<u16> {
    let slot = opk(l, Vx::And, lp.node(), !ptr::TYPE_MASK)?;
    let p = l.e.alloc(2)?;
    // slot * 64 = (node & !7) << 3, its high word node >> 29.
    let (three, hi) = (k(l, 3)?, k(l, 29)?);
    l.e.emit(I::new(Vx::Shl).dst(p).a(slot).b(three));
    l.e.emit(I::new(Vx::Shr).dst(p + 1).a(lp.node()).b(hi));
    l.e.op64(Vx::Iadd64, lp.base(), p)
}

/// An instance node of the top level: enter its BLAS when the masks meet.
fn instance(l: &mut Lowerer<'_>, lp: &Loop) -> Result<()> {
    let (visible, enter) = (block(l, "inst.vis"), block(l, "inst.enter"));
    let at = node_addr(l, lp)?;
    let cm = ldg(l, at, r2::inst::CUSTOM_MASK as u32, 1)?;
    let mask = opk(l, Vx::Shr, cm, 24)?;
    let cull = lp.fct + 1;
    let m = op(l, Vx::And, mask, cull)?;
    let shown = icmpk(l, IntCond::Ne, m, 0)?;
    l.e.bra(shown, visible, lp.latch, lp.latch);
    l.e.place(visible)?;
    const { assert!(r2::inst::BLAS_ROOT == r2::inst::BLAS + 8) };
    let blas = ldg(l, at, r2::inst::BLAS as u32, 3)?; // address pair, root
    let root = blas + 2;
    let some = icmpk(l, IntCond::Ne, root, ptr::INVALID)?;
    l.e.bra(some, enter, lp.latch, lp.latch);
    l.e.place(enter)?;
    descriptor(l, blas, lp.desc)?;
    let w2o = ldg(l, at, r2::inst::W2O as u32, 12)?;
    let world = st::fetch(l, lp.st, st::WORLD_ORG, 6)?;
    transform(l, w2o, world, lp.ray + iray::ORIGIN as u16, true)?;
    transform(l, w2o, world + 3, lp.ray + iray::DIR as u16, false)?;
    inverse(l, lp.ray)?;
    l.e.mov(lp.inst, at);
    l.e.mov(lp.inst + 1, at + 1);
    ops::ldg_into(l, lp.inst + 2, at, r2::inst::INDEX as u32, 1);
    let low24 = k(l, 0x00FF_FFFF)?;
    l.e.emit(I::new(Vx::And).dst(lp.inst + 3).a(cm).b(low24));
    ops::ldg_into(l, lp.inst + 4, at, r2::inst::SBT_FLAGS as u32, 1);
    // The BLAS's part of the stack starts here; the instance node was just popped, so
    // there is room for its root.
    l.e.mov(lp.ctl + st::LEVEL as u16, lp.sp());
    push(l, lp, root)
}

/// `out = M p (+ translation)` for a row-major 3x4 `m`, in `xform_point`'s order of
/// operations (no fused multiply-add), so the object ray is bit-identical to the RTU's.
fn transform(l: &mut Lowerer<'_>, m: u16, p: u16, out: u16, point: bool) -> Result<()> {
    for row in 0..3u16 {
        let r = m + 4 * row;
        let a = op(l, Vx::Fmul, r, p)?;
        let b = op(l, Vx::Fmul, r + 1, p + 1)?;
        let c = op(l, Vx::Fmul, r + 2, p + 2)?;
        let ab = op(l, Vx::Fadd, a, b)?;
        if point {
            let abc = op(l, Vx::Fadd, ab, c)?;
            l.e.emit(I::new(Vx::Fadd).dst(out + row).a(abc).b(r + 3));
        } else {
            l.e.emit(I::new(Vx::Fadd).dst(out + row).a(ab).b(c));
        }
    }
    Ok(())
}

/// Pushes `v` (no room check: the callers know there is room).
fn push(l: &mut Lowerer<'_>, lp: &Loop, v: u16) -> Result<()> {
    let at = stack_at(l, lp)?;
    l.e.emit(I::new(Vx::Stp).size(MemSize::B32).a(at).b(v).imm(st::STACK_IMM));
    let one = k(l, 1)?;
    l.e.emit(I::new(Vx::Iadd).dst(lp.sp()).a(lp.sp()).b(one));
    Ok(())
}

/// Opacity after the overrides (the RTU classifier's `opacity`): 1 opaque, 0 not.
fn opacity(l: &mut Lowerer<'_>, lp: &Loop, geom_word: u16) -> Result<u16> {
    let g = opk(l, Vx::Shr, geom_word, 24)?;
    let mut o = opk(l, Vx::And, g, gf::OPAQUE)?;
    let iflags = opk(l, Vx::Shr, lp.inst + 4, 24)?;
    let (zero, one) = (k(l, 0)?, k(l, 1)?);
    // Lowest precedence first: geometry, then instance, then ray flags.
    for (word, flag, v) in [
        (iflags, inf::FORCE_NO_OPAQUE, zero),
        (iflags, inf::FORCE_OPAQUE, one),
        (lp.flags(), rf::NO_OPAQUE, zero),
        (lp.flags(), rf::OPAQUE, one),
    ] {
        let p = bit(l, word, flag)?;
        o = sel(l, p, v, o)?;
    }
    Ok(o)
}

/// Culled by CULL_OPAQUE / CULL_NO_OPAQUE.
fn opacity_culled(l: &mut Lowerer<'_>, lp: &Loop, o: u16) -> Result<u16> {
    let co = bit(l, lp.flags(), rf::CULL_OPAQUE)?;
    let cn = bit(l, lp.flags(), rf::CULL_NO_OPAQUE)?;
    sel(l, o, co, cn)
}

/// A procedural AABB: the RTU's slab test against `[tmin, extent]`, then a candidate.
fn procedural(l: &mut Lowerer<'_>, lp: &Loop) -> Result<()> {
    let hit_blk = block(l, "aabb.hit");
    let at = node_addr(l, lp)?;
    const { assert!(r2::aabb::MAX == r2::aabb::MIN + 12 && r2::aabb::PRIM == r2::aabb::MIN + 24) };
    const { assert!(r2::aabb::GEOM == r2::aabb::PRIM + 4) };
    let b = ldg(l, at, r2::aabb::MIN as u32, 8)?; // lo xyz, hi xyz, prim, geom
    let (lo, hi, prim, geom) = (b, b + 3, b + 6, b + 7);
    let o = opacity(l, lp, geom)?;
    let culled = opacity_culled(l, lp, o)?;
    let skip = bit(l, lp.flags(), rf::SKIP_AABBS)?;
    let out = op(l, Vx::Or, culled, skip)?;
    let mut near = lp.fct + 2; // tmin
    let mut far = lp.extent();
    for a in 0..3u16 {
        let inv = lp.ray + iray::INV_DIR as u16 + a;
        let org = lp.ray + iray::ORIGIN as u16 + a;
        let zero = k(l, 0)?;
        let neg = fcmp(l, FloatCond::Olt, inv, zero)?;
        let n = sel(l, neg, hi + a, lo + a)?;
        let f = sel(l, neg, lo + a, hi + a)?;
        let dn = op(l, Vx::Fsub, n, org)?;
        let tn = op(l, Vx::Fmul, dn, inv)?;
        let df = op(l, Vx::Fsub, f, org)?;
        let tf = op(l, Vx::Fmul, df, inv)?;
        let wider = fcmp(l, FloatCond::Ogt, tn, near)?;
        near = sel(l, wider, tn, near)?;
        let narrower = fcmp(l, FloatCond::Olt, tf, far)?;
        far = sel(l, narrower, tf, far)?;
    }
    let scale = k(l, vortex_model::isect::grow_scale(r2::BOX_GROW).to_bits())?;
    let far = op(l, Vx::Fmul, far, scale)?;
    let hit = fcmp(l, FloatCond::Ole, near, far)?;
    let not_out = icmpk(l, IntCond::Eq, out, 0)?;
    let take = op(l, Vx::And, hit, not_out)?;
    l.e.bra(take, hit_blk, lp.latch, lp.latch);
    l.e.place(hit_blk)?;
    let zero = k(l, 0)?;
    let cand = opk(l, Vx::Iadd, lp.st, 4 * st::CAND)?;
    let kind = k(l, rtu_abi::CANDIDATE_AABB)?;
    let fields = Fields { t: near, u: zero, v: zero, kind, front: zero, prim, geom };
    record(l, lp, cand, &fields, o, None)?;
    set(l, lp.go, 0);
    set(l, lp.res, 1);
    Ok(())
}

/// Values of an intersection record that differ per hit.
struct Fields {
    t: u16,
    u: u16,
    v: u16,
    kind: u16,
    front: u16,
    prim: u16,
    /// The geometry word (index in 23:0, flags above).
    geom: u16,
}

/// Writes a record at private byte offset `at` (the loop's instance and object ray, and
/// `f`); `tri` is the triangle node's address and index for position fetch.
fn record(
    l: &mut Lowerer<'_>,
    lp: &Loop,
    at: u16,
    f: &Fields,
    aabb_opaque: u16,
    tri: Option<(u16, u16)>,
) -> Result<()> {
    let w = |l: &mut Lowerer<'_>, word: u32, r: u16, n: u32| st::store(l, at, word, r, n);
    w(l, rec::T, f.t, 1);
    w(l, rec::U, f.u, 1);
    w(l, rec::U + 1, f.v, 1);
    w(l, rec::KIND, f.kind, 1);
    w(l, rec::FRONT, f.front, 1);
    w(l, rec::PRIM, f.prim, 1);
    let g = opk(l, Vx::And, f.geom, 0x00FF_FFFF)?;
    w(l, rec::GEOM, g, 1);
    w(l, rec::INST_ID, lp.inst + 2, 2); // index, custom index
    let sbt = opk(l, Vx::And, lp.inst + 4, 0x00FF_FFFF)?;
    w(l, rec::SBT, sbt, 1);
    w(l, rec::AABB_OPAQUE, aabb_opaque, 1);
    w(l, rec::OBJ_ORG, lp.ray + iray::ORIGIN as u16, 6);
    w(l, rec::INST_ADDR, lp.inst, 2);
    let zero = k(l, 0)?;
    match tri {
        Some((addr, kk)) => {
            w(l, rec::TRI_ADDR, addr, 2);
            w(l, rec::TRI_K, kk, 1);
        }
        None => {
            for word in [rec::TRI_ADDR, rec::TRI_ADDR + 1, rec::TRI_K] {
                w(l, word, zero, 1);
            }
        }
    }
    Ok(())
}

/// Box and triangle nodes: the intersection unit.
fn hardware_node(l: &mut Lowerer<'_>, lp: &Loop, ty: u16) -> Result<()> {
    let (test, boxes, tri) = (block(l, "isect.go"), block(l, "box"), block(l, "tri"));
    let is_box = icmpk(l, IntCond::Uge, ty, ptr::BOX16)?;
    // Skip-triangles culls a triangle before the unit sees it.
    let skip = bit(l, lp.flags(), rf::SKIP_TRIANGLES)?;
    let no_skip = icmpk(l, IntCond::Eq, skip, 0)?;
    let keep = op(l, Vx::Or, is_box, no_skip)?;
    l.e.bra(keep, test, lp.latch, lp.latch);
    l.e.place(test)?;
    let words = l.e.alloc(r2::result::REGS)?;
    l.e.emit(I::new(Vx::Isect).dst(words).a(lp.desc).b(lp.ray));
    l.e.bra(is_box, boxes, tri, lp.latch);
    l.e.place(boxes)?;
    push_children(l, lp, words)?;
    l.e.jmp(lp.latch);
    l.e.place(tri)?;
    triangle(l, lp, ty, words)
}

/// The children a box node's test returned, far first (so the nearest is popped next).
fn push_children(l: &mut Lowerer<'_>, lp: &Loop, words: u16) -> Result<()> {
    let (full, room) = (block(l, "box.full"), block(l, "box.push"));
    let over = icmpk(l, IntCond::Ugt, lp.sp(), st::STACK_DEPTH - r2::result::REGS)?;
    l.e.bra(over, full, room, room);
    l.e.place(full)?;
    l.e.emit(I::new(Vx::Trap).imm(TrapCode::RayQueryStack as u32));
    l.e.place(room)?;
    for c in (0..r2::result::REGS as u16).rev() {
        // Always written, kept only when it is a child: no branch per child.
        let at = stack_at(l, lp)?;
        l.e.emit(I::new(Vx::Stp).size(MemSize::B32).a(at).b(words + c).imm(st::STACK_IMM));
        let hit = icmpk(l, IntCond::Ne, words + c, r2::result::MISS)?;
        l.e.emit(I::new(Vx::Iadd).dst(lp.sp()).a(lp.sp()).b(hit));
    }
    Ok(())
}

/// A triangle result: interval, facing and culling, opacity; commit or hand to the shader.
fn triangle(l: &mut Lowerer<'_>, lp: &Loop, ty: u16, words: u16) -> Result<()> {
    let (ids, take) = (block(l, "tri.ids"), block(l, "tri.take"));
    let den = words + r2::result::T_DENOM as u16;
    let t = op(l, Vx::Fdiv, words + r2::result::T_NUM as u16, den)?;
    let within = fcmp(l, FloatCond::Ole, t, lp.extent())?;
    let past_min = fcmp(l, FloatCond::Oge, t, lp.fct + 2)?;
    let hit = op(l, Vx::And, within, past_min)?;
    let iflags = opk(l, Vx::Shr, lp.inst + 4, 24)?;
    let zero = k(l, 0)?;
    let geo_front = fcmp(l, FloatCond::Ogt, den, zero)?;
    let flip = bit(l, iflags, inf::TRIANGLE_FLIP_FACING)?;
    let front = op(l, Vx::Xor, geo_front, flip)?;
    let cull_front = bit(l, lp.flags(), rf::CULL_FRONT_FACING)?;
    let cull_back = bit(l, lp.flags(), rf::CULL_BACK_FACING)?;
    let cull = sel(l, front, cull_front, cull_back)?;
    let disabled = bit(l, iflags, inf::TRIANGLE_FACING_CULL_DISABLE)?;
    let enabled = icmpk(l, IntCond::Eq, disabled, 0)?;
    let culled = op(l, Vx::And, cull, enabled)?;
    let unculled = icmpk(l, IntCond::Eq, culled, 0)?;
    let kept = op(l, Vx::And, hit, unculled)?;
    l.e.bra(kept, ids, lp.latch, lp.latch);
    l.e.place(ids)?;
    let node = node_addr(l, lp)?;
    let side_off = opk(l, Vx::Shl, ty, 2)?;
    let side = add64(l, node, side_off)?;
    let prim = ldg(l, side, (r2::SLOT_BYTES as usize + r2::tri_side::prim(0)) as u32, 1)?;
    let geom = ldg(l, side, (r2::SLOT_BYTES as usize + r2::tri_side::geom(0)) as u32, 1)?;
    let o = opacity(l, lp, geom)?;
    let culled = opacity_culled(l, lp, o)?;
    let not_culled = icmpk(l, IntCond::Eq, culled, 0)?;
    l.e.bra(not_culled, take, lp.latch, lp.latch);
    l.e.place(take)?;
    // Opaque: the committed record (kind TRIANGLE = 1 = o); otherwise the candidate (0).
    const { assert!(rtu_abi::COMMITTED_TRIANGLE == 1 && rtu_abi::CANDIDATE_TRIANGLE == 0) };
    let (cand, comm) = (k(l, 4 * st::CAND)?, k(l, 4 * st::COMM)?);
    let which = sel(l, o, comm, cand)?;
    let at = op(l, Vx::Iadd, lp.st, which)?;
    let u = op(l, Vx::Fdiv, words + r2::result::ID_OR_I as u16, den)?;
    let v = op(l, Vx::Fdiv, words + r2::result::HIT_OR_J as u16, den)?;
    let fields = Fields { t, u, v, kind: o, front, prim, geom };
    record(l, lp, at, &fields, zero, Some((node, ty)))?;
    // An opaque hit narrows the interval and, with terminate-on-first-hit, ends the walk;
    // a non-opaque one goes to the shader.
    l.e.emit(I::new(Vx::Sel).dst(lp.extent()).a(o).b(t).c(lp.extent()));
    let first = bit(l, lp.flags(), rf::TERMINATE_ON_FIRST_HIT)?;
    let stop = op(l, Vx::And, o, first)?;
    let done = lp.ctl + st::DONE as u16;
    l.e.emit(I::new(Vx::Or).dst(done).a(done).b(stop));
    let yields = icmpk(l, IntCond::Eq, o, 0)?;
    l.e.mov(lp.res, yields);
    let ends = op(l, Vx::Or, yields, stop)?;
    l.e.emit(I::new(Vx::Icmp).cond(IntCond::Eq).dst(lp.go).a(ends).b(zero));
    l.e.jmp(lp.latch);
    Ok(())
}

/// Confirm (`t` None) or Generate(t): the candidate becomes the committed intersection
/// (a triangle, or a generated hit at `t`), the interval shrinks to it, and with
/// terminate-on-first-hit the walk is over.
pub fn commit(l: &mut Lowerer<'_>, q: u16, t: Option<u16>) -> Result<()> {
    let s = st::base(l, q)?;
    let r = st::fetch(l, s, st::CAND, rec::WORDS)?;
    let (kind, t) = match t {
        Some(t) => (rtu_abi::COMMITTED_GENERATED, t),
        None => (rtu_abi::COMMITTED_TRIANGLE, r + rec::T as u16),
    };
    l.e.mov(r + rec::T as u16, t);
    set(l, r + rec::KIND as u16, kind);
    st::store(l, s, st::COMM, r, rec::WORDS);
    st::store(l, s, st::RAY + iray::EXTENT, t, 1);
    let flags = st::fetch(l, s, st::FLAGS, 1)?;
    let stop = bit(l, flags, rf::TERMINATE_ON_FIRST_HIT)?;
    let done = st::fetch(l, s, st::CTL + st::DONE, 1)?;
    let done = op(l, Vx::Or, done, stop)?;
    st::store(l, s, st::CTL + st::DONE, done, 1);
    Ok(())
}

/// The ray log's hook (`RQLOG`): the query was armed (`accel`: the structure's address) or
/// a proceed returned; the model reads the rest from the query's state.
pub fn log(l: &mut Lowerer<'_>, q: u16, what: u32, accel: Option<u16>) -> Result<()> {
    let s = st::base(l, q)?;
    let i = I::new(Vx::Rqlog).a(s).imm(what);
    l.e.emit(match accel {
        Some(a) => i.b(a),
        None => i,
    });
    Ok(())
}

/// Terminate: no more candidates; the committed intersection stays.
pub fn terminate(l: &mut Lowerer<'_>, q: u16) -> Result<()> {
    let s = st::base(l, q)?;
    let one = k(l, 1)?;
    st::store(l, s, st::CTL + st::DONE, one, 1);
    Ok(())
}
