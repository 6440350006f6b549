//! Per-lane helpers that compiled code calls for operations without an
//! inline form. Each takes the instruction it implements and defers to the
//! interpreter's ALU, so both backends give the same bits.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;
use warpfold_interp::alu;
use warpfold_ir::InstKind;

/// # Safety
/// `desc` points to a live `InstKind` owned by the compiled kernel.
unsafe fn desc<'a>(p: *const InstKind) -> &'a InstKind {
    &*p
}

pub extern "C" fn wf_int(d: *const InstKind, a: u64, b: u64, c: u64, e: u64) -> u64 {
    // SAFETY: compiled code passes the descriptor it was generated with.
    match unsafe { desc(d) } {
        InstKind::Int { op, ty, args, .. } => {
            let all = [a, b, c, e];
            alu::int_op(*op, *ty, &all[..args.len().min(4)])
        }
        _ => 0,
    }
}

pub extern "C" fn wf_float(d: *const InstKind, a: u64, b: u64, c: u64) -> u64 {
    // SAFETY: as above.
    match unsafe { desc(d) } {
        InstKind::Float {
            op,
            ty,
            args,
            round,
            ftz,
            sat,
            ..
        } => {
            let all = [a, b, c];
            alu::float_op(*op, *ty, &all[..args.len().min(3)], *round, *ftz, *sat)
        }
        _ => 0,
    }
}

pub extern "C" fn wf_cvt(d: *const InstKind, v: u64) -> u64 {
    // SAFETY: as above.
    match unsafe { desc(d) } {
        InstKind::Cvt {
            dst_ty,
            src_ty,
            round,
            ftz,
            sat,
            ..
        } => alu::cvt(*dst_ty, *src_ty, v, *round, *ftz, *sat),
        _ => 0,
    }
}

pub extern "C" fn wf_testp(d: *const InstKind, v: u64) -> u64 {
    // SAFETY: as above.
    match unsafe { desc(d) } {
        InstKind::Testp { kind, ty, .. } => u64::from(alu::testp(*kind, *ty, v)),
        _ => 0,
    }
}

/// Atomic read-modify-write at a host address; returns the old value.
pub extern "C" fn wf_atom(d: *const InstKind, addr: u64, a: u64, b: u64) -> u64 {
    // SAFETY: as above.
    let InstKind::Atom { op, ty, .. } = (unsafe { desc(d) }) else {
        return 0;
    };
    let (op, ty) = (*op, *ty);
    let size = ty.bytes() as u64;
    if addr == 0 || addr % size != 0 {
        // Misaligned or null: a GPU faults; we cannot report from here, so
        // do nothing rather than touch memory unsafely.
        return 0;
    }
    let f = |old: u64| alu::atom_apply(op, ty, old, a, b);
    // SAFETY: the address is a device address (host memory owned by a live
    // allocation or the CTA's shared/local memory) and naturally aligned;
    // all concurrent accesses through helpers are atomic.
    unsafe {
        match size {
            2 => {
                let p = &*(addr as *const AtomicU16);
                let old = p.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |o| {
                    Some(f(u64::from(o)) as u16)
                });
                u64::from(old.unwrap_or_else(|o| o))
            }
            4 => {
                let p = &*(addr as *const AtomicU32);
                let old = p.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |o| {
                    Some(f(u64::from(o)) as u32)
                });
                u64::from(old.unwrap_or_else(|o| o))
            }
            _ => {
                let p = &*(addr as *const AtomicU64);
                p.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |o| Some(f(o)))
                    .unwrap_or_else(|o| o)
            }
        }
    }
}

/// A monotonic clock for `%clock`, `%clock64` and `%globaltimer` (ns).
pub extern "C" fn wf_clock() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Names and addresses for the JIT's symbol table.
pub fn table() -> Vec<(&'static str, usize)> {
    vec![
        ("wf_int", wf_int as *const () as usize),
        ("wf_float", wf_float as *const () as usize),
        ("wf_cvt", wf_cvt as *const () as usize),
        ("wf_testp", wf_testp as *const () as usize),
        ("wf_atom", wf_atom as *const () as usize),
        ("wf_clock", wf_clock as *const () as usize),
    ]
}
