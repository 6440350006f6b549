//! Dominator trees of control-flow graphs (blocks as `usize` nodes).

/// Immediate dominators of a graph's nodes reachable from `entry`
/// (Cooper, Harvey and Kennedy's iterative algorithm).
pub(crate) struct Dominators {
    /// Reachable nodes in reverse postorder.
    rpo: Vec<usize>,
    /// Position in `rpo` (usize::MAX: unreachable).
    pos: Vec<usize>,
    /// Immediate dominator, as a position in `rpo`.
    idom: Vec<usize>,
}

impl Dominators {
    pub(crate) fn new(n: usize, entry: usize, succs: &dyn Fn(usize) -> Vec<usize>) -> Self {
        // Iterative depth-first search for the postorder.
        let mut seen = vec![false; n];
        let mut post = Vec::new();
        let mut stack = vec![(entry, 0usize)];
        seen[entry] = true;
        while let Some((b, i)) = stack.pop() {
            let s = succs(b);
            if i < s.len() {
                stack.push((b, i + 1));
                let t = s[i];
                if !seen[t] {
                    seen[t] = true;
                    stack.push((t, 0));
                }
            } else {
                post.push(b);
            }
        }
        let rpo: Vec<usize> = post.into_iter().rev().collect();
        let mut pos = vec![usize::MAX; n];
        for (i, b) in rpo.iter().enumerate() {
            pos[*b] = i;
        }
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); rpo.len()];
        for (i, b) in rpo.iter().enumerate() {
            for s in succs(*b) {
                preds[pos[s]].push(i);
            }
        }
        let mut idom = vec![usize::MAX; rpo.len()];
        if !rpo.is_empty() {
            idom[0] = 0;
        }
        let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
            while a != b {
                while a > b {
                    a = idom[a];
                }
                while b > a {
                    b = idom[b];
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for i in 1..rpo.len() {
                let mut new = usize::MAX;
                for &q in &preds[i] {
                    if idom[q] == usize::MAX {
                        continue;
                    }
                    new = if new == usize::MAX {
                        q
                    } else {
                        intersect(&idom, q, new)
                    };
                }
                if new != usize::MAX && idom[i] != new {
                    idom[i] = new;
                    changed = true;
                }
            }
        }
        Dominators { rpo, pos, idom }
    }

    pub(crate) fn reachable(&self, b: usize) -> bool {
        self.pos[b] != usize::MAX
    }

    pub(crate) fn entry(&self) -> usize {
        self.rpo[0]
    }

    /// The immediate dominator of reachable `b` (none for the entry).
    pub(crate) fn idom_of(&self, b: usize) -> Option<usize> {
        let p = *self.pos.get(b)?;
        if p == usize::MAX || p == 0 {
            return None;
        }
        Some(self.rpo[self.idom[p]])
    }

    /// Whether `a` dominates `b` (both reachable).
    pub(crate) fn dominates(&self, a: usize, b: usize) -> bool {
        let (a, mut b) = (self.pos[a], self.pos[b]);
        loop {
            if a == b {
                return true;
            }
            if b == 0 || b < a {
                return false;
            }
            b = self.idom[b];
        }
    }
}
