//! The threads that run a launch's CTAs beside the launching thread.
//!
//! A launch is short: an empty grid of 64 CTAs takes 2 µs on one core.
//! Waking rayon's sleeping pool for it (`rayon::broadcast`) took 14-18 µs
//! on this VM, so a launch on all cores cost 8x the one on one core. These
//! workers instead spin for a while after each job before they sleep, as
//! OpenMP's do: back-to-back launches (a benchmark's repetitions, a
//! pipeline of kernels) reach them in about a microsecond, and idle ones
//! sleep within `SPIN` so they take no time from other processes.
//!
//! With `bind_threads` (`warpfold bench` calls it), on Linux, worker `w`
//! is bound to the CPU at index `w` of the process's CPUs and each thread
//! that launches on several workers to index 0, at its first such launch.
//! Unbound, the launching thread and a worker now and then shared one CPU
//! for several milliseconds (the scheduler wakes a thread near its waker):
//! on the 2-CPU VM a whole round of a benchmark's launches then took twice
//! as long (in one run of the suite 4 of 20 launches of scan and of
//! stencil3d, 1 of spmv; bound, none in one run and 1 of reduce in the
//! next). Several bound processes at once share the same CPUs, hence not
//! the default.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a worker polls for the next job after one before it sleeps.
const SPIN: Duration = Duration::from_micros(100);

/// Whether threads bind themselves to CPUs (see `bind_threads`).
static BIND: AtomicBool = AtomicBool::new(false);

/// The process's CPUs (its main thread's), read when binding is turned
/// on; empty where unknown (then nothing is bound).
static CPUS: OnceLock<Vec<usize>> = OnceLock::new();

/// From now on, bind each pool worker and each thread that launches on
/// several workers to a CPU (see the module comment). Idempotent. Nothing
/// is bound when the pool has more threads than the process has CPUs, or
/// beyond Linux, or with more than `CPU_SETSIZE` (1024) CPUs.
pub fn bind_threads() {
    // The count of cores, cached while this thread can still see them all.
    let _ = warpfold_interp::cores();
    CPUS.get_or_init(allowed_cpus);
    BIND.store(true, Ordering::Release);
}

/// Make `cmd`'s process run on every CPU of this process again (a child
/// inherits its parent thread's binding); nothing when binding is off.
pub fn unbind_child(cmd: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    if let Some(cpus) = CPUS.get().filter(|c| !c.is_empty()) {
        use std::os::unix::process::CommandExt;
        let set = cpu_set(cpus);
        // SAFETY: only an async-signal-safe system call runs in the child.
        unsafe {
            cmd.pre_exec(move || {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Let this thread run on every CPU of the process again, if binding is
/// on: for threads a bound thread starts that should not share its CPU
/// (the JIT's code generation of a second module, the watchdog).
pub(crate) fn unbind_thread() {
    #[cfg(target_os = "linux")]
    if let Some(cpus) = CPUS
        .get()
        .filter(|c| !c.is_empty() && BIND.load(Ordering::Acquire))
    {
        let set = cpu_set(cpus);
        // SAFETY: the set is valid; a failure leaves the thread as it was.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    }
}

/// The CPUs the process's main thread may run on, in order (none where
/// unknown): not the caller's, which its owner may have bound.
fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    // SAFETY: a zeroed cpu_set_t is valid; the call writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let main = libc::getpid();
        if libc::sched_getaffinity(main, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            return (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect();
        }
    }
    Vec::new()
}

#[cfg(target_os = "linux")]
fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: a zeroed cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        // SAFETY: `c` is inside the set.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    set
}

/// Bind this thread to the `k`-th allowed CPU, once, if binding is on.
fn bind_once(k: usize) {
    thread_local!(static BOUND: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if !BIND.load(Ordering::Acquire) || BOUND.with(|b| b.replace(true)) {
        return;
    }
    #[cfg(target_os = "linux")]
    if let Some(cpus) = CPUS.get().filter(|c| c.len() > pool().threads) {
        let set = cpu_set(&[cpus[k]]);
        // SAFETY: the set is valid; a failure leaves the thread unbound.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    }
}

/// A job: the launch's `share(w)` closure, borrowed for the duration of
/// `run` (which waits for every participant before it returns).
type Job<'a> = dyn Fn(usize) + Sync + 'a;

/// The job being run, written before `Shared::epoch` announces it.
struct Slot {
    /// The epoch this job is for: a worker that wakes late and finds a
    /// newer job here leaves it for its next round instead of counting
    /// itself done for the wrong one.
    epoch: u64,
    /// Workers `1..participants` run the job (worker 0 is the launcher).
    participants: usize,
    /// The job as a raw fat pointer, valid while the job is running.
    job: Option<*const Job<'static>>,
}

struct Shared {
    /// Bumped once per job; workers wait for it to change.
    epoch: AtomicU64,
    slot: Mutex<Slot>,
    /// Participants other than the launcher that have finished.
    done: AtomicUsize,
    /// The first panic of a worker, re-raised on the launching thread.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    sleep: Mutex<()>,
    wake: Condvar,
}

// SAFETY: the raw job pointer is only dereferenced between a job's start
// and its `done` count, while `run` keeps the closure (which is `Sync`)
// alive and borrowed.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

struct Pool {
    shared: &'static Shared,
    /// Worker threads besides the launcher.
    threads: usize,
    /// One launch at a time uses the workers.
    busy: Mutex<()>,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let shared: &'static Shared = Box::leak(Box::new(Shared {
            epoch: AtomicU64::new(0),
            slot: Mutex::new(Slot {
                epoch: 0,
                participants: 0,
                job: None,
            }),
            done: AtomicUsize::new(0),
            panic: Mutex::new(None),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
        }));
        let wanted = warpfold_interp::cores().saturating_sub(1);
        let mut threads = 0;
        for w in 1..=wanted {
            // Short enough for Linux's 15-byte thread names.
            let spawned = std::thread::Builder::new()
                .name(format!("wf-worker-{w}"))
                .spawn(move || worker(shared, w));
            if spawned.is_err() {
                break;
            }
            threads += 1;
        }
        Pool {
            shared,
            threads,
            busy: Mutex::new(()),
        }
    })
}

fn worker(s: &'static Shared, w: usize) {
    let mut seen = 0u64;
    loop {
        // Poll, then sleep until the epoch moves.
        let start = Instant::now();
        let mut polls = 0u32;
        let epoch = loop {
            let e = s.epoch.load(Ordering::Acquire);
            if e != seen {
                break e;
            }
            polls = polls.wrapping_add(1);
            if !polls.is_multiple_of(64) || start.elapsed() < SPIN {
                std::hint::spin_loop();
                continue;
            }
            let guard = s.sleep.lock().unwrap_or_else(|p| p.into_inner());
            if s.epoch.load(Ordering::Acquire) == seen {
                drop(s.wake.wait(guard).unwrap_or_else(|p| p.into_inner()));
            }
        };
        seen = epoch;
        let job = {
            let slot = s.slot.lock().unwrap_or_else(|p| p.into_inner());
            (slot.epoch == epoch && w < slot.participants)
                .then_some(slot.job)
                .flatten()
        };
        let Some(job) = job else { continue };
        bind_once(w);
        // SAFETY: `run` keeps the job alive until `done` counts us.
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe { (*job)(w) })) {
            let mut slot = s.panic.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert(p);
        }
        s.done.fetch_add(1, Ordering::AcqRel);
    }
}

/// Run `job(w)` for each `w` in `0..workers` at once, `w = 0` on this
/// thread, and return when all have finished. With fewer worker threads
/// than `workers - 1`, the extra indices are not run (the launch's shares
/// are taken over by the others). A panic in any of them is raised here
/// after all have finished.
pub(crate) fn run(workers: usize, job: &Job<'_>) {
    let p = pool();
    let n = workers.min(p.threads + 1);
    if n <= 1 {
        return job(0);
    }
    let _one = p.busy.lock().unwrap_or_else(|e| e.into_inner());
    bind_once(0);
    let s = p.shared;
    // SAFETY (lifetime): workers call the job only until they count
    // themselves done, and this function waits for that below, also when
    // its own share panics.
    let erased: *const Job<'static> =
        unsafe { std::mem::transmute::<&Job<'_>, &Job<'static>>(job) };
    s.done.store(0, Ordering::Release);
    let epoch = s.epoch.load(Ordering::Acquire) + 1;
    *s.slot.lock().unwrap_or_else(|e| e.into_inner()) = Slot {
        epoch,
        participants: n,
        job: Some(erased),
    };
    {
        let _g = s.sleep.lock().unwrap_or_else(|e| e.into_inner());
        s.epoch.store(epoch, Ordering::Release);
    }
    s.wake.notify_all();
    let mine = catch_unwind(AssertUnwindSafe(|| job(0)));
    let mut polls = 0u32;
    while s.done.load(Ordering::Acquire) < n - 1 {
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(1024) {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
    s.slot.lock().unwrap_or_else(|e| e.into_inner()).job = None;
    if let Err(e) = mine {
        resume_unwind(e);
    }
    if let Some(e) = s.panic.lock().unwrap_or_else(|e| e.into_inner()).take() {
        resume_unwind(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_index_runs_once_per_job() {
        for workers in [1, 2, 3, 8] {
            for _ in 0..200 {
                let hits: Vec<AtomicU32> = (0..8).map(|_| AtomicU32::new(0)).collect();
                run(workers, &|w| {
                    hits[w].fetch_add(1, Ordering::Relaxed);
                });
                let n = workers.min(pool().threads + 1);
                for (w, h) in hits.iter().enumerate() {
                    assert_eq!(
                        h.load(Ordering::Relaxed),
                        u32::from(w < n),
                        "workers {workers}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_panic_in_a_share_reaches_the_launcher_after_the_others_finish() {
        let finished = AtomicU32::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            run(2, &|w| {
                if w == pool().threads.min(1) {
                    panic!("share {w}");
                }
                finished.fetch_add(1, Ordering::Relaxed);
            })
        }));
        assert!(r.is_err());
        // And the pool still works.
        let count = AtomicU32::new(0);
        run(2, &|_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(
            count.load(Ordering::Relaxed) as usize,
            2.min(pool().threads + 1)
        );
    }
}
