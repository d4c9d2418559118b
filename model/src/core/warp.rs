//! Warp state: the per-lane register file, private memory and the reconvergence stack.
//!
//! The register file is laid out register-major (`regs[r * NT + lane]`) so one instruction
//! touches one contiguous row per operand and its per-lane loop vectorises.
//!
//! The reconvergence stack holds `(pc, reconv, mask)` entries; the top entry executes. A
//! divergent `BRA` turns the top into the reconvergence entry (pc = reconv, all lanes) and
//! pushes one entry per side whose target is not the reconvergence point; an entry whose pc
//! reaches its `reconv` is popped, handing its lanes back to the entry below. When the
//! branching entry already reconverges at the same point (a loop's back edge, a break) it is
//! replaced instead of nested, so loops do not grow the stack.

/// One reconvergence-stack entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackEntry {
    pub pc: u32,
    pub reconv: u32,
    pub mask: u32,
}

/// Never a valid reconvergence point (the base entry's).
pub const NO_RECONV: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpState {
    /// Has work to do.
    Ready,
    /// Waiting at a CTA barrier.
    Barrier,
    /// Parked on a WAIT whose record has not landed.
    Parked,
    /// All lanes exited.
    Done,
}

pub struct Warp {
    /// CTA slot this warp belongs to.
    pub cta_slot: u32,
    /// Index of this warp within its CTA.
    pub rank: u32,
    pub stack: Vec<StackEntry>,
    pub regs: Vec<u32>,
    pub private: Vec<u8>,
    pub private_bytes: usize,
    pub state: WarpState,
    /// Helper lanes (fragment warps): lanes that execute but whose stores, atomics and
    /// exports do nothing (`Op::skips_helper_lanes`): quad pixels outside the primitive, and
    /// lanes `DEMOTE` made helpers. 0 in every other warp.
    pub helper: u32,
    /// The CSR values compiled runs read (functional mode's JIT), filled once a launch when
    /// a run first needs them (`csrs_ready`).
    pub csrs: Box<crate::jit::CsrTable>,
    pub csrs_ready: bool,
}

impl Warp {
    pub fn new() -> Warp {
        Warp {
            cta_slot: 0,
            rank: 0,
            stack: Vec::new(),
            regs: Vec::new(),
            private: Vec::new(),
            private_bytes: 0,
            state: WarpState::Done,
            helper: 0,
            csrs: Box::default(),
            csrs_ready: false,
        }
    }

    /// Starts the warp at `entry` with the lanes in `mask`; registers and private memory are
    /// zeroed (kernels may rely on neither, but zero keeps runs reproducible).
    pub fn launch(&mut self, entry: u32, mask: u32, num_regs: usize, nt: usize, private_bytes: usize) {
        self.regs.clear();
        self.launch_zeroing(entry, mask, num_regs, nt, private_bytes, &[]);
    }

    /// [`Self::launch`] for a kernel whose lanes each write a register before reading it,
    /// except the registers in `zeroed` (`DecodedKernel::zeroed_regs`): only those rows are
    /// zeroed when the register file is reused; the others keep an earlier warp's values,
    /// which no lane of this warp reads.
    pub fn launch_zeroing(
        &mut self,
        entry: u32,
        mask: u32,
        num_regs: usize,
        nt: usize,
        private_bytes: usize,
        zeroed: &[u16],
    ) {
        self.stack.clear();
        self.stack.push(StackEntry { pc: entry, reconv: NO_RECONV, mask });
        if self.regs.len() == num_regs * nt {
            for &r in zeroed {
                self.regs[r as usize * nt..][..nt].fill(0);
            }
        } else {
            self.regs.clear();
            self.regs.resize(num_regs * nt, 0);
        }
        self.private.clear();
        self.private.resize(private_bytes * nt, 0);
        self.private_bytes = private_bytes;
        self.state = WarpState::Ready;
        self.helper = 0;
        self.csrs_ready = false;
    }

    /// The executing entry after popping finished ones, or `None` when the warp is done.
    #[inline]
    pub fn top(&mut self) -> Option<&mut StackEntry> {
        while let Some(t) = self.stack.last() {
            if t.mask == 0 || t.pc == t.reconv {
                self.stack.pop();
            } else {
                break;
            }
        }
        self.stack.last_mut()
    }

    /// Applies a branch taken by `taken` lanes (the rest take `not_taken`).
    pub fn branch(&mut self, taken_mask: u32, taken: u32, not_taken: u32, reconv: u32) {
        let top = *self.stack.last().expect("branch on an empty stack");
        let t = taken_mask & top.mask;
        let n = top.mask & !t;
        if n == 0 {
            self.stack.last_mut().unwrap().pc = taken;
            return;
        }
        if t == 0 {
            self.stack.last_mut().unwrap().pc = not_taken;
            return;
        }
        if top.reconv == reconv {
            // Already a path of the same construct: its lanes are covered by the
            // reconvergence entry below, so replace rather than nest.
            self.stack.pop();
        } else {
            self.stack.last_mut().unwrap().pc = reconv;
        }
        if not_taken != reconv {
            self.stack.push(StackEntry { pc: not_taken, reconv, mask: n });
        }
        if taken != reconv {
            self.stack.push(StackEntry { pc: taken, reconv, mask: t });
        }
    }

    /// Lanes in `mask` exit: they leave every entry.
    pub fn exit_lanes(&mut self, mask: u32) {
        for e in &mut self.stack {
            e.mask &= !mask;
        }
        if self.stack.iter().all(|e| e.mask == 0) {
            self.stack.clear();
            self.state = WarpState::Done;
        }
    }

    /// Lanes still alive anywhere on the stack.
    pub fn live_mask(&self) -> u32 {
        self.stack.iter().fold(0, |m, e| m | e.mask)
    }
}

impl Default for Warp {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_else_splits_and_reconverges() {
        let mut w = Warp::new();
        w.launch(0, 0b1111, 1, 4, 0);
        // At pc 0: lanes 0,1 take pc 10, lanes 2,3 go to 20, reconverge at 30.
        w.branch(0b0011, 10, 20, 30);
        assert_eq!(*w.top().unwrap(), StackEntry { pc: 10, reconv: 30, mask: 0b0011 });
        w.top().unwrap().pc = 30; // taken side finished its block
        assert_eq!(*w.top().unwrap(), StackEntry { pc: 20, reconv: 30, mask: 0b1100 });
        w.top().unwrap().pc = 30;
        assert_eq!(*w.top().unwrap(), StackEntry { pc: 30, reconv: NO_RECONV, mask: 0b1111 });
    }

    #[test]
    fn loops_do_not_grow_the_stack() {
        let mut w = Warp::new();
        w.launch(5, 0b1111, 1, 4, 0);
        // Loop header at 5, body at 6, merge at 9. Lanes leave one per iteration.
        let mut alive = 0b1111u32;
        let mut depth = Vec::new();
        while alive != 0 {
            let top = *w.top().unwrap();
            assert_eq!(top.pc, 5);
            alive &= alive - 1; // one lane exits the loop
            w.branch(alive, 6, 9, 9);
            if let Some(t) = w.top() {
                if t.pc == 6 {
                    t.pc = 5; // back edge
                }
            }
            depth.push(w.stack.len());
        }
        assert!(depth.iter().all(|&d| d <= 2), "{depth:?}");
        assert_eq!(*w.top().unwrap(), StackEntry { pc: 9, reconv: NO_RECONV, mask: 0b1111 });
    }

    #[test]
    fn exit_removes_lanes_everywhere() {
        let mut w = Warp::new();
        w.launch(0, 0b11, 1, 2, 0);
        w.branch(0b01, 10, 20, 30);
        w.exit_lanes(0b01);
        assert_eq!(w.top().unwrap().mask, 0b10);
        assert_eq!(w.live_mask(), 0b10);
        w.exit_lanes(0b10);
        assert_eq!(w.state, WarpState::Done);
        assert!(w.top().is_none());
    }

    /// A relaunch zeroes the rows the kernel may read before writing and keeps the others;
    /// a register file of another size is made afresh, all zero.
    #[test]
    fn relaunch_zeroes_the_listed_rows() {
        let mut w = Warp::new();
        w.launch(0, 0b11, 3, 2, 0);
        assert_eq!(w.regs, [0; 6]);
        w.regs.fill(9);
        w.launch_zeroing(0, 0b11, 3, 2, 0, &[1]);
        assert_eq!(w.regs, [9, 9, 0, 0, 9, 9]);
        w.launch_zeroing(0, 0b11, 4, 2, 0, &[1]);
        assert_eq!(w.regs, [0; 8]);
        w.regs.fill(9);
        w.launch(0, 0b11, 4, 2, 0);
        assert_eq!(w.regs, [0; 8]);
    }
}
