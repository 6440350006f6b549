//! Per-lane helpers that compiled code calls for operations without an
//! inline form. Each takes the instruction it implements and defers to the
//! interpreter's ALU, so both backends give the same bits.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;
use warpfold_interp::memory::MemoryMap;
use warpfold_interp::{alu, FaultKind};
use warpfold_ir::{Builtin, InstKind};

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
    if addr == 0 || !addr.is_multiple_of(size) {
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

/// What host calls (`trap`, `vprintf`, `__assertfail`) need from the worker
/// running a CTA. Compiled code passes its address through; one worker
/// owns it, so the fault slot needs no lock.
pub struct Host<'a> {
    /// Device allocations (buffers and module variables).
    pub memory: MemoryMap,
    /// The worker's local frames, shared memory and the module's constants.
    pub spaces: [std::ops::Range<u64>; 3],
    pub printf: Option<&'a std::sync::Mutex<String>>,
    pub cancel: &'a AtomicU32,
    /// The first fault: the lane's thread index in the CTA, the PTX line
    /// and what happened.
    pub fault: std::cell::RefCell<Option<(u32, u32, FaultKind)>>,
}

impl Host<'_> {
    /// `len` bytes at a device address, if they are device memory.
    fn read(&self, addr: u64, len: u32) -> Option<u64> {
        let end = addr.checked_add(u64::from(len))?;
        let inside = self.spaces.iter().any(|r| r.start <= addr && end <= r.end)
            || self.memory.find(addr, u64::from(len)).is_ok();
        if !inside || !(1..=8).contains(&len) {
            return None;
        }
        let mut b = [0u8; 8];
        // SAFETY: the bytes lie inside a live allocation, the worker's own
        // buffers or the constant bank, all of which outlive the launch.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, b.as_mut_ptr(), len as usize) };
        Some(u64::from_le_bytes(b))
    }

    /// A NUL-terminated string (at most 4096 bytes, as the interpreter).
    fn c_string(&self, addr: u64) -> Result<String, u64> {
        let mut out = Vec::new();
        for i in 0..4096u64 {
            let a = addr.wrapping_add(i);
            match self.read(a, 1) {
                Some(0) => break,
                Some(b) => out.push(b as u8),
                None => return Err(a),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn raise(&self, thread: u64, line: u64, kind: FaultKind) {
        let mut f = self.fault.borrow_mut();
        if f.is_none() {
            *f = Some((thread as u32, line as u32, kind));
        }
        self.cancel.store(1, Ordering::Relaxed);
    }

    fn bad_read(&self, thread: u64, line: u64, what: &str, addr: u64) {
        self.raise(
            thread,
            line,
            FaultKind::Memory {
                access: format!("{what} read"),
                addr,
                detail: "not in any allocation".into(),
            },
        );
    }
}

/// `trap`, `vprintf` or `__assertfail` for one lane; returns `vprintf`'s
/// result.
#[allow(clippy::too_many_arguments)]
pub extern "C" fn wf_host(
    d: *const InstKind,
    host: u64,
    thread: u64,
    line: u64,
    a0: u64,
    a1: u64,
    a2: u64,
    a3: u64,
    _a4: u64,
) -> u64 {
    // SAFETY: the worker passes its `Host` through the environment; it
    // lives until the CTA returns.
    let host = unsafe { &*(host as *const Host) };
    // After a fault the launch is over: later lanes of the same call do
    // nothing (the interpreter stops at the faulting lane).
    if host.fault.borrow().is_some() {
        return 0;
    }
    // SAFETY: as for the other helpers.
    match unsafe { desc(d) } {
        InstKind::Trap => host.raise(thread, line, FaultKind::Trap),
        InstKind::Builtin {
            which: Builtin::BadFunctionPointer,
            ..
        } => host.raise(thread, line, warpfold_interp::bad_function_pointer(a0)),
        InstKind::Builtin {
            which: Builtin::AssertFail,
            ..
        } => {
            let s = |a: u64| host.c_string(a);
            match (s(a0), s(a1), s(a3)) {
                (Ok(msg), Ok(file), Ok(func)) => host.raise(
                    thread,
                    line,
                    FaultKind::Assert(format!(
                        "assertion `{msg}` failed at {file}:{} in `{func}`",
                        a2 as u32
                    )),
                ),
                (Err(a), _, _) | (_, Err(a), _) | (_, _, Err(a)) => {
                    host.bad_read(thread, line, "assert message", a)
                }
            }
        }
        InstKind::Builtin {
            which: Builtin::Vprintf,
            ..
        } => {
            let fmt = match host.c_string(a0) {
                Ok(f) => f,
                Err(a) => {
                    host.bad_read(thread, line, "printf format", a);
                    return 0;
                }
            };
            let mut bad = None;
            let (text, n) = warpfold_interp::printf::format(
                fmt.as_bytes(),
                |off, size| {
                    let a = a1.wrapping_add(off);
                    let v = host.read(a, size);
                    if v.is_none() {
                        bad.get_or_insert(a);
                    }
                    v
                },
                |p| host.c_string(p).unwrap_or_else(|_| "(bad string)".into()),
            );
            if let Some(a) = bad {
                host.bad_read(thread, line, "printf argument", a);
                return 0;
            }
            match host.printf {
                Some(buf) => buf
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push_str(&text),
                None => {
                    use std::io::Write;
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(text.as_bytes());
                    let _ = out.flush();
                }
            }
            return u64::from(n);
        }
        _ => {}
    }
    0
}

/// `half` to `float`, the run-time library call LLVM 14 makes for `fpext`
/// on CPUs without F16C (x86-64-v2): the process has no such symbol, and
/// without it every kernel comparing f16 values ran on the interpreter
/// there. Exact (as every f16 value is an f32 value); only comparisons use
/// it, so a NaN's payload does not matter.
extern "C" fn wf_half_to_float(h: u16) -> f32 {
    warpfold_fp::half::f16_to_f32(h)
}

/// Names and addresses for the JIT's symbol table.
pub fn table() -> Vec<(&'static str, usize)> {
    vec![
        ("__gnu_h2f_ieee", wf_half_to_float as *const () as usize),
        ("__extendhfsf2", wf_half_to_float as *const () as usize),
        ("wf_int", wf_int as *const () as usize),
        ("wf_float", wf_float as *const () as usize),
        ("wf_cvt", wf_cvt as *const () as usize),
        ("wf_testp", wf_testp as *const () as usize),
        ("wf_atom", wf_atom as *const () as usize),
        ("wf_clock", wf_clock as *const () as usize),
        ("wf_host", wf_host as *const () as usize),
    ]
}
