//! Global integer adds that nothing in the kernel reads back, summed per
//! worker and added to memory once when the worker's share of the grid
//! is done.
//!
//! A histogram's CTAs each merge their bins into the global histogram
//! with one `red.global.add` per bin: 256 locked adds per CTA, on cache
//! lines that the other cores add to as well, so every add waits for the
//! line to come over (a fifth of the histogram benchmark on two cores).
//! When no instruction of the kernel reads the buffer the adds go to (no
//! load, store or other atomic through that parameter, and no pointer of
//! unknown origin that could reach it), no thread can tell when an add
//! lands before the kernel ends: the adds commute, and a `red` returns
//! nothing. Each worker then adds into a private copy of the buffer and
//! the launch adds the copies' non-zero words into memory at the end.
//!
//! The kernel-side condition is found here, from where each address comes
//! from; the launch checks the rest (the buffer is small and no other
//! argument points into it: see `Deferral::target`). Like CUDA C++, this
//! takes an address made from a pointer argument to stay in the
//! allocation the argument points into.

use crate::prepare::Prepared;
use std::collections::HashSet;
use warpfold_ir::*;

/// Largest buffer summed per worker: each worker clears a copy per launch
/// and scans it at the end, a few microseconds at this size.
pub const MAX_BYTES: u64 = 32 << 10;

/// Adds to defer: every `red.global.add` (or `atom` whose result is never
/// read), guarded or not, of integers of one width through the pointer in
/// kernel parameter `param`.
#[derive(Debug, Clone, PartialEq)]
pub struct Deferral {
    /// Index of the `.u64` kernel parameter holding the buffer's address.
    pub param: usize,
    /// Bytes of every deferred add (4 or 8): the copy is added back in
    /// words of this size, so a carry stays where the kernel's add put it.
    pub bytes: u32,
    /// The adds, as (block, index of the instruction in the block).
    pub sites: Sites,
}

/// Instructions by (block, index in the block).
pub type Sites = HashSet<(BlockId, usize)>;

/// Where a register's value comes from, as far as addresses go.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Origin {
    /// No definition seen yet.
    Unset,
    /// Integer data made from no address (indices, loaded 32-bit words).
    Data,
    /// The address in kernel parameter `i`, plus data.
    Param(usize),
    /// An address in a module-scope variable (its own storage).
    Variable,
    /// An address in shared or local memory.
    OnChip,
    /// Anything else (a 64-bit word loaded from memory, pointer arithmetic
    /// this does not follow): may point anywhere.
    Unknown,
}

fn join(a: Origin, b: Origin) -> Origin {
    match (a, b) {
        (Origin::Unset, x) | (x, Origin::Unset) => x,
        (x, y) if x == y => x,
        _ => Origin::Unknown,
    }
}

/// The adds of `p` that can be deferred, if any: those through the one
/// parameter (the first such, by index) that has them and that no other
/// global access uses.
pub(crate) fn deferral(p: &Prepared) -> Option<Deferral> {
    let f = &p.func;
    let origins = origins(f)?;
    let base = |a: &Address| match a.base {
        AddrBase::Reg(r) => origins[r.0 as usize],
        AddrBase::Symbol(Symbol::Global(_)) => Origin::Variable,
        AddrBase::Symbol(Symbol::Local(_)) => Origin::OnChip,
        AddrBase::Symbol(_) | AddrBase::None => Origin::Unknown,
    };
    let mut read = vec![false; f.regs.len()];
    for b in &p.order {
        for i in &f.blocks[*b].insts {
            for r in crate::uniform::uses(i) {
                read[r.0 as usize] = true;
            }
        }
    }
    // Per parameter: its deferrable adds and their widths; and the
    // parameters some other global access goes through.
    let mut adds: std::collections::BTreeMap<usize, (Sites, HashSet<u32>)> = Default::default();
    let mut touched = HashSet::new();
    for b in &p.order {
        for (k, i) in f.blocks[*b].insts.iter().enumerate() {
            let (space, addr) = match &i.kind {
                InstKind::Ld { space, addr, .. } | InstKind::St { space, addr, .. } => {
                    (*space, addr)
                }
                InstKind::Atom { space, addr, .. } => (*space, addr),
                _ => continue,
            };
            if !matches!(space, Space::Global | Space::Generic) {
                continue;
            }
            let o = base(addr);
            if let InstKind::Atom {
                space: Space::Global,
                op: AtomOp::Add,
                ty,
                dst,
                b: None,
                ..
            } = &i.kind
            {
                let result_unread = dst.is_none_or(|d| !read[d.0 as usize]);
                let integer = !ty.is_float() && matches!(ty.bits(), 32 | 64);
                if let (Origin::Param(q), true, true) = (o, result_unread, integer) {
                    let e = adds.entry(q).or_default();
                    e.0.insert((*b, k));
                    e.1.insert(ty.bits() / 8);
                    continue;
                }
            }
            match o {
                Origin::Param(q) => {
                    touched.insert(q);
                }
                // A generic access may reach shared or local memory.
                Origin::OnChip if space == Space::Generic => {}
                Origin::Variable => {}
                // Any other address could be in the buffer.
                _ => return None,
            }
        }
    }
    adds.into_iter()
        .find(|(q, (_, widths))| !touched.contains(q) && widths.len() == 1)
        .map(|(param, (sites, widths))| Deferral {
            param,
            bytes: widths.into_iter().next().unwrap_or(4),
            sites,
        })
}

/// Each register's origin (joined over all its definitions, wherever
/// they are: compilers give each address a register of its own, while a
/// register that holds addresses into two buffers is `Unknown`), or
/// `None` when the kernel calls functions (whose memory accesses are not
/// seen here).
fn origins(f: &Function) -> Option<Vec<Origin>> {
    let n = f.regs.len();
    let mut o = vec![Origin::Unset; n];
    let insts: Vec<&Inst> = f.blocks.values().flat_map(|b| b.insts.iter()).collect();
    if insts.iter().any(|i| {
        matches!(
            i.kind,
            InstKind::Call { .. } | InstKind::CallIndirect { .. } | InstKind::Builtin { .. }
        )
    }) {
        return None;
    }
    // Joins only go up (Unset < one origin < Unknown): this ends.
    loop {
        let mut changed = false;
        for i in &insts {
            for (d, v) in transfer(f, i, &o) {
                let j = join(o[d.0 as usize], v);
                if j != o[d.0 as usize] {
                    o[d.0 as usize] = j;
                    changed = true;
                }
            }
        }
        if !changed {
            return Some(o);
        }
    }
}

/// The origins an instruction gives the registers it defines.
fn transfer(f: &Function, i: &Inst, o: &[Origin]) -> Vec<(Reg, Origin)> {
    // An operand with no definition seen yet: wait for it (the fixpoint
    // comes back), or a guess would stick (joins never go down).
    if crate::uniform::uses(i)
        .iter()
        .any(|r| o[r.0 as usize] == Origin::Unset)
    {
        return Vec::new();
    }
    let of = |v: &Value| match v {
        Value::Reg(r) => o[r.0 as usize],
        Value::Imm(_) => Origin::Data,
    };
    // Data from data; anything touching an address: unknown.
    let data_of = |vals: &[Value]| {
        if vals.iter().all(|v| of(v) == Origin::Data) {
            Origin::Data
        } else {
            Origin::Unknown
        }
    };
    let defs = crate::uniform::defs(&i.kind);
    let all = |x: Origin| defs.iter().map(|d| (*d, x)).collect::<Vec<_>>();
    match &i.kind {
        InstKind::Mov { src, .. } => all(of(src)),
        InstKind::AddrOf { space, .. } => all(match space {
            Space::Shared | Space::Local => Origin::OnChip,
            Space::Global | Space::Const => Origin::Variable,
            _ => Origin::Unknown,
        }),
        InstKind::Cvta {
            to_generic,
            space,
            src,
            ..
        } => all(match (to_generic, space, of(src)) {
            (_, Space::Global, x) => x,
            (true, Space::Shared | Space::Local, x) if x == Origin::OnChip || x == Origin::Data => {
                Origin::OnChip
            }
            (_, Space::Const, x) => x,
            (_, _, Origin::Data) => Origin::Data,
            _ => Origin::Unknown,
        }),
        InstKind::Int { op, args, .. } => {
            let a: Vec<Origin> = args.iter().map(of).collect();
            let r = match (op, a.as_slice()) {
                (IntOp::Add, [x, Origin::Data]) | (IntOp::Add, [Origin::Data, x]) => *x,
                (IntOp::Sub, [x, Origin::Data]) => *x,
                // `mad.lo`/`mad.wide` of an index and an element size onto
                // an address (how nvcc often indexes an array).
                (IntOp::MadLo | IntOp::MadWide, [Origin::Data, Origin::Data, x]) => *x,
                _ if a.iter().all(|x| *x == Origin::Data) => Origin::Data,
                _ => Origin::Unknown,
            };
            all(r)
        }
        InstKind::Selp { a, b, c, .. } => {
            let sel = if of(c) == Origin::Data {
                join(of(a), of(b))
            } else {
                Origin::Unknown
            };
            all(sel)
        }
        InstKind::Ld {
            space: Space::Param,
            ty,
            addr:
                Address {
                    base: AddrBase::Symbol(Symbol::KernelParam(k)),
                    offset: 0,
                },
            ..
        } if ty.bits() == 64 && f.params.get(*k as usize).is_some_and(|p| p.size == 8) => {
            all(Origin::Param(*k as usize))
        }
        // A word narrower than an address is data wherever it came from.
        InstKind::Ld { ty, .. } | InstKind::Atom { ty, .. } => all(if ty.bits() < 64 {
            Origin::Data
        } else {
            Origin::Unknown
        }),
        InstKind::Cvt { src, src_ty, .. } => all(if src_ty.bits() < 64 {
            Origin::Data
        } else {
            data_of(&[*src])
        }),
        // Halves of a value put together can be an address again.
        InstKind::Pack { .. } => all(Origin::Unknown),
        InstKind::Unpack { .. } => all(Origin::Data),
        InstKind::Carry { a, b, .. } => all(data_of(&[*a, *b])),
        InstKind::Float { .. }
        | InstKind::Setp { .. }
        | InstKind::Set { .. }
        | InstKind::PredOp { .. }
        | InstKind::Testp { .. }
        | InstKind::IsSpace { .. }
        | InstKind::Bar { .. }
        | InstKind::Vote { .. }
        | InstKind::Activemask { .. }
        | InstKind::Match { .. }
        | InstKind::Redux { .. }
        | InstKind::ReadSpecial { .. } => all(Origin::Data),
        // A 32-bit lane exchange moves at most half an address.
        InstKind::Shfl { .. } => all(Origin::Data),
        InstKind::Slct { a, b, .. } => all(join(of(a), of(b))),
        _ => all(Origin::Unknown),
    }
}

impl Deferral {
    /// The buffer (device base address and bytes) the launch's copies
    /// stand in for, when it may: the parameter points into an allocation
    /// of at most `MAX_BYTES` that no other 64-bit argument and no module
    /// variable (`variables`: their addresses) lies in.
    pub fn target(
        &self,
        func: &Function,
        params: &[u8],
        variables: &[u64],
        allocation_at: impl Fn(u64) -> Option<(u64, u64)>,
    ) -> Option<(u64, u64)> {
        let word = |p: &Param| crate::pointer_arg(p, params);
        let mine = func.params.get(self.param)?;
        let (base, len) = allocation_at(word(mine)?)?;
        if len == 0 || len > MAX_BYTES {
            return None;
        }
        let elsewhere = func.params.iter().enumerate().any(|(i, p)| {
            i != self.param && p.size == 8 && word(p).is_some_and(|a| a >= base && a - base < len)
        });
        let variable = variables.iter().any(|&a| a >= base && a - base < len);
        (!elsewhere && !variable).then_some((base, len))
    }
}

/// Adds a worker's copy (`copy`: `len` bytes, in words of `bytes`) into
/// the buffer at device address `base`, skipping zero words.
pub(crate) fn add_back(base: u64, len: u64, bytes: u32, copy: &[u64]) {
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
    for (i, &w) in copy.iter().enumerate() {
        let at = i as u64 * 8;
        if w == 0 || at >= len {
            continue;
        }
        if bytes == 8 {
            // SAFETY: `base..base + len` is a live device allocation (the
            // launch's argument), 8-byte aligned at its base; the code only
            // added to words wholly inside it, so a non-zero word is.
            unsafe { AtomicU64::from_ptr((base + at) as *mut u64) }.fetch_add(w, Relaxed);
        } else {
            for half in 0..2u64 {
                let v = (w >> (32 * half)) as u32;
                if v != 0 {
                    // SAFETY: as above, for the 4-byte word at `at + 4 * half`.
                    unsafe { AtomicU32::from_ptr((base + at + 4 * half) as *mut u32) }
                        .fetch_add(v, Relaxed);
                }
            }
        }
    }
}

/// `WARPFOLD_DEFER_RED=off` keeps every global add a locked add in memory.
pub(crate) fn enabled() -> bool {
    std::env::var("WARPFOLD_DEFER_RED").map_or(true, |v| v != "off")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The deferral of kernel `name` of `tests/kernels/deferred_red.ptx`
    /// (the runtime's): (parameter, bytes, adds).
    fn analysed(name: &str) -> Option<(usize, u32, usize)> {
        let src = include_str!("../../runtime/tests/kernels/deferred_red.ptx");
        deferral(&crate::prepare::prepared(src, name)).map(|d| (d.param, d.bytes, d.sites.len()))
    }

    #[test]
    fn adds_nothing_reads_back_are_deferred() {
        // The bins through `mad.wide` and the unused `atom` result both.
        assert_eq!(analysed("hist"), Some((0, 4, 2)));
        assert_eq!(analysed("wide"), Some((0, 8, 1)));
        // Read through another parameter: the launch decides.
        assert_eq!(analysed("visible_after_barrier"), Some((0, 4, 1)));
    }

    #[test]
    fn adds_the_kernel_could_see_stay_in_memory() {
        for k in [
            "reads_back",
            "loaded_pointer",
            "float_add",
            "result_used",
            "mixed_widths",
        ] {
            assert_eq!(analysed(k), None, "{k}");
        }
    }

    #[test]
    fn the_launch_defers_only_into_a_small_buffer_no_other_argument_reaches() {
        let src = include_str!("../../runtime/tests/kernels/deferred_red.ptx");
        let p = crate::prepare::prepared(src, "visible_after_barrier");
        let f = &p.func;
        let d = deferral(&p).expect("deferrable");
        let params = |a: u64, b: u64| [a.to_le_bytes(), b.to_le_bytes()].concat();
        // Two allocations: 0x1000..0x1100 and 0x2000..0x12000 (64 KiB).
        let at = |x: u64| match x {
            0x1000..0x1100 => Some((0x1000, 0x100)),
            0x2000..0x12000 => Some((0x2000, 0x10000)),
            _ => None,
        };
        assert_eq!(
            d.target(f, &params(0x1000, 0x2000), &[], at),
            Some((0x1000, 0x100))
        );
        // A pointer into the middle still means the whole allocation.
        assert_eq!(
            d.target(f, &params(0x1040, 0x2000), &[], at),
            Some((0x1000, 0x100))
        );
        // The other argument points into it.
        assert_eq!(d.target(f, &params(0x1000, 0x10fc), &[], at), None);
        assert_eq!(d.target(f, &params(0x1000, 0x1000), &[], at), None);
        // A module variable lives in it.
        assert_eq!(d.target(f, &params(0x1000, 0x2000), &[0x1080], at), None);
        // Too large, or no allocation.
        assert_eq!(d.target(f, &params(0x2000, 0x1000), &[], at), None);
        assert_eq!(d.target(f, &params(0x9000, 0x1000), &[], at), None);
    }

    #[test]
    fn copies_are_added_back_word_by_word() {
        let mut mem = [u32::MAX, 5, 0, 7];
        let base = mem.as_mut_ptr() as u64;
        // Words 0 and 1 (+1 and +2), word 3 (+3); word 2 stays zero.
        add_back(base, 16, 4, &[1 | (2 << 32), 3 << 32]);
        assert_eq!(mem, [0, 7, 0, 10]);
        let mut wide = [u64::MAX, 1u64 << 32];
        add_back(wide.as_mut_ptr() as u64, 16, 8, &[2, 0xffff_ffff]);
        assert_eq!(wide, [1, (1u64 << 32) + 0xffff_ffff]);
    }
}
