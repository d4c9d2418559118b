//! The flattened CFG and its post-dominator tree.
//!
//! Every divergent `BRA` reconverges at its block's immediate post-dominator. For structured
//! SPIR-V that is usually the construct's merge block, but breaks, continues, loop exits
//! without a merge and early returns need the general answer, so it is computed here with
//! Cooper–Harvey–Kennedy ("A Simple, Fast Dominance Algorithm") on the reverse CFG rooted
//! at the unified exit block. Blocks that cannot reach the exit (infinite loops, traps) get
//! a virtual edge to it: their reconvergence point is then the exit, which is as good as
//! any for code that never finishes or faults the dispatch.

use super::error::{invalid, Result};
use super::inline::Flat;
use super::module::InstExt;
use super::types::Id;
use rspirv::dr::Operand;
use spirv::Op;
use std::collections::HashMap;

pub(crate) struct Cfg {
    /// Immediate post-dominator of each block of `Flat::blocks` (the exit's is itself).
    pub ipdom: Vec<usize>,
}

/// Successor labels of a terminator, in operand order (duplicates kept).
pub(crate) fn successors(term: &rspirv::dr::Instruction) -> Result<Vec<Id>> {
    Ok(match term.class.opcode {
        Op::Branch => vec![term.id(0)?],
        Op::BranchConditional => vec![term.id(1)?, term.id(2)?],
        Op::Switch => {
            let mut v = vec![term.id(1)?];
            // Pairs of (literal, label) follow the selector and default.
            for o in term.operands.iter().skip(2) {
                if let Operand::IdRef(l) = o {
                    v.push(*l);
                }
            }
            v
        }
        Op::Return | Op::Unreachable | Op::Kill | Op::TerminateInvocation => vec![],
        _ => return Err(invalid!("block ends in {}, which is not a terminator", term.name())),
    })
}

impl Cfg {
    pub fn build(flat: &Flat) -> Result<Cfg> {
        let index: HashMap<Id, usize> = flat.blocks.iter().enumerate().map(|(i, b)| (b.label, i)).collect();
        if index.len() != flat.blocks.len() {
            return Err(invalid!("duplicate block labels"));
        }
        let mut succ = Vec::with_capacity(flat.blocks.len());
        for b in &flat.blocks {
            let term = b.insts.last().ok_or_else(|| invalid!("empty block %{}", b.label))?;
            let mut s = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for l in successors(term)? {
                let i = *index.get(&l).ok_or_else(|| invalid!("branch from %{} to unknown block %{l}", b.label))?;
                if seen.insert(i) {
                    s.push(i);
                }
            }
            succ.push(s);
        }
        let exit = *index.get(&flat.exit).ok_or_else(|| invalid!("no exit block"))?;
        Ok(Cfg { ipdom: post_dominators(&succ, exit) })
    }
}

/// Immediate post-dominators of a graph with `succ` edges, rooted at `exit`.
pub(crate) fn post_dominators(succ: &[Vec<usize>], exit: usize) -> Vec<usize> {
    let n = succ.len();
    let mut succ: Vec<Vec<usize>> = succ.to_vec();
    let mut order = reverse_postorder(&succ, exit);
    if order.len() < n {
        // Blocks that never reach the exit get a virtual edge to it.
        let mut reached = vec![false; n];
        for &b in &order {
            reached[b] = true;
        }
        for (b, s) in succ.iter_mut().enumerate() {
            if !reached[b] && b != exit {
                s.push(exit);
            }
        }
        order = reverse_postorder(&succ, exit);
    }
    // Position in the reverse graph's postorder; the root is last.
    let mut po = vec![usize::MAX; n];
    for (k, &b) in order.iter().rev().enumerate() {
        po[b] = k;
    }
    const UNDEF: usize = usize::MAX;
    let mut idom = vec![UNDEF; n];
    idom[exit] = exit;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            // In the reverse graph, b's predecessors are its CFG successors.
            let mut new = UNDEF;
            for &p in &succ[b] {
                if idom[p] == UNDEF {
                    continue;
                }
                new = if new == UNDEF { p } else { intersect(&idom, &po, p, new) };
            }
            if new != UNDEF && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    // Anything still undefined (impossible after the virtual edges) falls back to the exit.
    idom.iter().map(|&d| if d == UNDEF { exit } else { d }).collect()
}

fn intersect(idom: &[usize], po: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while po[a] < po[b] {
            a = idom[a];
        }
        while po[b] < po[a] {
            b = idom[b];
        }
    }
    a
}

/// Reverse postorder of the reverse graph from `root` (iterative DFS over CFG predecessors).
fn reverse_postorder(succ: &[Vec<usize>], root: usize) -> Vec<usize> {
    let n = succ.len();
    let mut pred = vec![Vec::new(); n];
    for (b, s) in succ.iter().enumerate() {
        for &t in s {
            pred[t].push(b);
        }
    }
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    while let Some(&mut (b, ref mut k)) = stack.last_mut() {
        if let Some(&p) = pred[b].get(*k) {
            *k += 1;
            if !seen[p] {
                seen[p] = true;
                stack.push((p, 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    post.reverse();
    post
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diamond_reconverges_at_join() {
        // 0 -> 1, 2 -> 3 -> 4(exit)
        let succ = vec![vec![1, 2], vec![3], vec![3], vec![4], vec![]];
        let ip = post_dominators(&succ, 4);
        assert_eq!(ip, vec![3, 3, 3, 4, 4]);
    }

    #[test]
    fn loop_with_break_and_continue() {
        // 0 entry -> 1 header; 1 -> 2 body | 6 merge; 2 -> 3 (break test) ;
        // 3 -> 6 (break) | 4 ; 4 -> 5 continue | 5 ; 5 -> 1 ; 6 -> 7 exit
        let succ = vec![vec![1], vec![2, 6], vec![3], vec![6, 4], vec![5], vec![1], vec![7], vec![]];
        let ip = post_dominators(&succ, 7);
        assert_eq!(ip[1], 6, "loop header reconverges at the merge");
        assert_eq!(ip[3], 6, "a break reconverges at the loop merge");
        assert_eq!(ip[4], 5);
        assert_eq!(ip[5], 1);
    }

    #[test]
    fn early_return_reconverges_at_exit() {
        // 0 -> 1 (return) | 2 ; 1 -> 4 exit ; 2 -> 3 -> 4
        let succ = vec![vec![1, 2], vec![4], vec![3], vec![4], vec![]];
        let ip = post_dominators(&succ, 4);
        assert_eq!(ip[0], 4);
        // A return inside a loop: the loop header no longer reconverges at its merge.
        // 0 -> 1 header ; 1 -> 2 body | 4 merge ; 2 -> 5 (return) | 3 ; 3 -> 1 ; 4 -> 5 exit
        let succ = vec![vec![1], vec![2, 4], vec![5, 3], vec![1], vec![5], vec![]];
        let ip = post_dominators(&succ, 5);
        assert_eq!(ip[1], 5);
        assert_eq!(ip[2], 5);
    }

    #[test]
    fn infinite_loop_and_unreachable_blocks_get_the_exit() {
        // 0 -> 1 | 3 ; 1 -> 2 ; 2 -> 1 (never exits) ; 3 -> 4 exit ; 5 unreachable -> 4
        let succ = vec![vec![1, 3], vec![2], vec![1], vec![4], vec![], vec![4]];
        let ip = post_dominators(&succ, 4);
        assert_eq!(ip[0], 4);
        assert_eq!(ip[1], 4, "the loop's blocks get virtual exits");
        assert_eq!(ip[2], 4);
        assert_eq!(ip[5], 4);
    }

    #[test]
    fn switch_with_fallthrough() {
        // 0 switch -> 1 | 2 | 3(default) ; 1 -> 2 (fall through) ; 2 -> 4 ; 3 -> 4 ; 4 -> 5 exit
        let succ = vec![vec![3, 1, 2], vec![2], vec![4], vec![4], vec![5], vec![]];
        let ip = post_dominators(&succ, 5);
        assert_eq!(ip[0], 4);
        assert_eq!(ip[1], 2);
    }
}
