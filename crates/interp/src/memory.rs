//! Device global memory: checked allocations shared by all CTAs.
//!
//! Storage is `AtomicU64` words so that CTAs running on different OS threads
//! can race (as GPU kernels may) without undefined behaviour in the host:
//! plain loads/stores are relaxed atomics, sub-word stores are CAS loops that
//! never clobber neighbouring bytes, and PTX atomics are CAS loops too, so
//! they are atomic under any contention. Every access is bounds-checked
//! against the allocation it falls in.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, RwLock};

/// Generic-address windows of the non-global spaces. Global allocations
/// are ordinary host memory (their device address is their host address,
/// so compiled code can use them directly); the windows lie outside the
/// canonical x86-64/AArch64 user address range, so no host address is ever
/// mistaken for one. A generic address in a window is an offset into that
/// space of the executing thread/CTA.
pub const SHARED_WINDOW: u64 = 0xa000_0000_0000_0000;
pub const LOCAL_WINDOW: u64 = 0xa100_0000_0000_0000;
pub const CONST_WINDOW: u64 = 0xa200_0000_0000_0000;
pub const PARAM_WINDOW: u64 = 0xa300_0000_0000_0000;
/// Function addresses (for calls through pointers): `FUNC_WINDOW + 16 * id`.
pub const FUNC_WINDOW: u64 = 0xa400_0000_0000_0000;
pub const WINDOW_SIZE: u64 = 0x0000_0100_0000_0000;

/// Unmapped words before and after each allocation's data, so small
/// overruns and underruns hit no other allocation.
const PAD_WORDS: usize = 512;
const GUARD: u64 = PAD_WORDS as u64 * 8;

#[derive(Debug)]
pub struct Allocation {
    pub base: u64,
    pub size: u64,
    /// Padding, data, padding.
    words: Words,
}

impl Allocation {
    fn new(size: u64) -> Self {
        let n = size.div_ceil(8).max(1) as usize;
        let words = Words::zeroed(n + 2 * PAD_WORDS);
        let base = words[PAD_WORDS..].as_ptr() as u64;
        Allocation { base, size, words }
    }

    fn data(&self) -> &[AtomicU64] {
        &self.words[PAD_WORDS..self.words.len() - PAD_WORDS]
    }

    /// The host address of the data, for compiled code (valid while the
    /// allocation lives; the words are atomics, so shared mutation is sound).
    pub fn host_ptr(&self) -> *mut u8 {
        self.data().as_ptr() as *mut u8
    }

    /// Whether `[addr, addr+len)` lies inside.
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        addr >= self.base
            && addr
                .checked_add(len)
                .is_some_and(|e| e <= self.base + self.size)
    }

    /// Read `len` (1..=8) bytes at byte offset `off`, little-endian.
    pub fn read(&self, off: u64, len: u32) -> u64 {
        read_words(self.data(), off, len)
    }

    pub fn write(&self, off: u64, len: u32, val: u64) {
        write_words(self.data(), off, len, val)
    }

    /// Atomic read-modify-write of an aligned 4- or 8-byte value: `f(old)`
    /// gives the new value; returns the old one.
    pub fn rmw(&self, off: u64, len: u32, f: impl Fn(u64) -> u64) -> u64 {
        let w = &self.data()[(off / 8) as usize];
        let shift = (off % 8) * 8;
        let m = mask(len);
        let mut cur = w.load(Relaxed);
        loop {
            let old = (cur >> shift) & m;
            let new = (cur & !(m << shift)) | ((f(old) & m) << shift);
            match w.compare_exchange_weak(cur, new, std::sync::atomic::Ordering::SeqCst, Relaxed) {
                Ok(_) => return old,
                Err(c) => cur = c,
            }
        }
    }

    pub fn read_bytes(&self, out: &mut [u8]) {
        for (i, b) in out.iter_mut().enumerate() {
            *b = self.read(i as u64, 1) as u8;
        }
    }

    pub fn write_bytes(&self, data: &[u8]) {
        let words = self.data();
        let mut i = 0;
        while i + 8 <= data.len() {
            let mut w = [0u8; 8];
            w.copy_from_slice(&data[i..i + 8]);
            words[i / 8].store(u64::from_le_bytes(w), Relaxed);
            i += 8;
        }
        while i < data.len() {
            self.write(i as u64, 1, u64::from(data[i]));
            i += 1;
        }
    }
}

pub fn mask(len: u32) -> u64 {
    if len >= 8 {
        u64::MAX
    } else {
        (1u64 << (len * 8)) - 1
    }
}

/// Zeroed words on the heap. Large buffers are aligned to 2 MiB and asked
/// to be backed by huge pages: kernels stride through device memory (a
/// grid-stride loop jumps gridDim x blockDim elements per trip, a stencil
/// a plane), and with 4 KiB pages nearly every such step misses the TLB
/// and defeats the prefetchers (the histogram benchmark: 32 -> 8 ms).
/// GPUs map device memory with large pages for the same reason.
struct Words {
    ptr: std::ptr::NonNull<AtomicU64>,
    len: usize,
    layout: std::alloc::Layout,
}

// SAFETY: `Words` owns its buffer of atomics, which any thread may use.
unsafe impl Send for Words {}
unsafe impl Sync for Words {}

const HUGE_PAGE: usize = 2 << 20;

impl Words {
    fn zeroed(len: usize) -> Words {
        let bytes = len * 8;
        let align = if bytes >= HUGE_PAGE { HUGE_PAGE } else { 64 };
        let layout = std::alloc::Layout::from_size_align(bytes.div_ceil(align) * align, align)
            .unwrap_or_else(|_| std::alloc::handle_alloc_error(std::alloc::Layout::new::<u64>()));
        // SAFETY: the layout has a non-zero size (len >= 1).
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = std::ptr::NonNull::new(raw as *mut AtomicU64) else {
            std::alloc::handle_alloc_error(layout)
        };
        // The advice must come before the pages are first touched (the
        // zeroing below), or they are already mapped small. It is a hint:
        // without transparent huge pages nothing changes.
        #[cfg(target_os = "linux")]
        if align == HUGE_PAGE {
            // SAFETY: the range is the buffer just allocated.
            unsafe { libc::madvise(raw as *mut libc::c_void, layout.size(), libc::MADV_HUGEPAGE) };
        }
        // SAFETY: the buffer holds `layout.size()` writable bytes.
        unsafe { std::ptr::write_bytes(raw, 0, layout.size()) };
        Words { ptr, len, layout }
    }
}

impl std::ops::Deref for Words {
    type Target = [AtomicU64];
    fn deref(&self) -> &[AtomicU64] {
        // SAFETY: `ptr` holds `len` zero-initialised words (zero is a valid
        // `AtomicU64`) for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Words {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr() as *mut u8, self.layout) };
    }
}

impl std::fmt::Debug for Words {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Words({})", self.len)
    }
}

fn read_words(words: &[AtomicU64], off: u64, len: u32) -> u64 {
    let i = (off / 8) as usize;
    let shift = (off % 8) * 8;
    let lo = words[i].load(Relaxed) >> shift;
    let v = if shift + u64::from(len) * 8 > 64 {
        lo | (words[i + 1].load(Relaxed) << (64 - shift))
    } else {
        lo
    };
    v & mask(len)
}

fn write_words(words: &[AtomicU64], off: u64, len: u32, val: u64) {
    let i = (off / 8) as usize;
    let shift = (off % 8) * 8;
    if shift == 0 && len == 8 {
        words[i].store(val, Relaxed);
        return;
    }
    let first = (64 - shift).min(u64::from(len) * 8);
    let m = if first >= 64 {
        u64::MAX
    } else {
        (1u64 << first) - 1
    };
    let _ = words[i].fetch_update(Relaxed, Relaxed, |w| {
        Some((w & !(m << shift)) | ((val & m) << shift))
    });
    if first < u64::from(len) * 8 {
        let rest = u64::from(len) * 8 - first;
        let m2 = (1u64 << rest) - 1;
        let _ = words[i + 1].fetch_update(Relaxed, Relaxed, |w| {
            Some((w & !m2) | ((val >> first) & m2))
        });
    }
}

/// All global allocations of a device.
#[derive(Debug, Default)]
pub struct DeviceMemory {
    allocs: RwLock<BTreeMap<u64, Arc<Allocation>>>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    #[error("out of device memory allocating {0} bytes")]
    OutOfMemory(u64),
    #[error("no allocation at address {0:#x}")]
    NotAllocated(u64),
    #[error("access of {len} bytes at {addr:#x} is outside allocation {base:#x}..{end:#x}")]
    OutOfBounds {
        addr: u64,
        len: u64,
        base: u64,
        end: u64,
    },
}

/// Largest single allocation (64 GiB).
const MAX_ALLOC: u64 = 1 << 36;

impl DeviceMemory {
    pub fn new() -> Self {
        DeviceMemory {
            allocs: RwLock::new(BTreeMap::new()),
        }
    }

    /// Allocate `size` zeroed bytes (8-byte aligned), with unmapped guards around.
    pub fn alloc(&self, size: u64) -> Result<Arc<Allocation>, MemoryError> {
        if size > MAX_ALLOC {
            return Err(MemoryError::OutOfMemory(size));
        }
        // Reserve first so an impossible size is an error, not an abort.
        let n = size.div_ceil(8) as usize + 2 * PAD_WORDS;
        let mut probe: Vec<u64> = Vec::new();
        if probe.try_reserve_exact(n).is_err() {
            return Err(MemoryError::OutOfMemory(size));
        }
        drop(probe);
        let a = Arc::new(Allocation::new(size));
        self.allocs
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(a.base, a.clone());
        Ok(a)
    }

    pub fn free(&self, base: u64) -> Result<(), MemoryError> {
        match self
            .allocs
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&base)
        {
            Some(_) => Ok(()),
            None => Err(MemoryError::NotAllocated(base)),
        }
    }

    /// Base and size of the allocation holding byte `addr`, if any.
    pub fn allocation_at(&self, addr: u64) -> Option<(u64, u64)> {
        let allocs = self.allocs.read().unwrap_or_else(|e| e.into_inner());
        let (_, a) = allocs.range(..=addr).next_back()?;
        a.contains(addr, 1).then_some((a.base, a.size))
    }

    /// The allocations as a sorted table, for fast lookups during a launch.
    pub fn snapshot(&self) -> MemoryMap {
        MemoryMap {
            allocs: self
                .allocs
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .values()
                .cloned()
                .collect(),
        }
    }
}

/// A read-only view of the allocations, sorted by base.
#[derive(Debug, Clone)]
pub struct MemoryMap {
    allocs: Vec<Arc<Allocation>>,
}

impl MemoryMap {
    /// The allocation holding `[addr, addr+len)`, or why there is none.
    pub fn find(&self, addr: u64, len: u64) -> Result<&Allocation, MemoryError> {
        let i = self.allocs.partition_point(|a| a.base <= addr);
        if i == 0 {
            return Err(MemoryError::NotAllocated(addr));
        }
        let a = &self.allocs[i - 1];
        if a.contains(addr, len) {
            Ok(a)
        } else if addr < a.base + a.size {
            Err(MemoryError::OutOfBounds {
                addr,
                len,
                base: a.base,
                end: a.base + a.size,
            })
        } else {
            // Just past the end of an allocation reads as out of bounds of it.
            if addr < a.base + a.size + GUARD {
                Err(MemoryError::OutOfBounds {
                    addr,
                    len,
                    base: a.base,
                    end: a.base + a.size,
                })
            } else {
                Err(MemoryError::NotAllocated(addr))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unaligned_and_straddling_access() {
        let m = DeviceMemory::new();
        let a = m.alloc(32).unwrap();
        a.write(3, 8, 0x1122_3344_5566_7788);
        assert_eq!(a.read(3, 8), 0x1122_3344_5566_7788);
        assert_eq!(a.read(3, 1), 0x88);
        assert_eq!(a.read(10, 1), 0x11);
        a.write(4, 2, 0xffff);
        assert_eq!(a.read(3, 4), 0x55ff_ff88);
    }

    #[test]
    fn bounds() {
        let m = DeviceMemory::new();
        let a = m.alloc(10).unwrap();
        let map = m.snapshot();
        assert!(map.find(a.base + 9, 1).is_ok());
        assert!(matches!(
            map.find(a.base + 9, 2),
            Err(MemoryError::OutOfBounds { .. })
        ));
        assert!(matches!(
            map.find(a.base + 10, 1),
            Err(MemoryError::OutOfBounds { .. })
        ));
        assert!(matches!(map.find(0, 4), Err(MemoryError::NotAllocated(0))));
    }

    #[test]
    fn rmw_is_atomic_under_contention() {
        let m = DeviceMemory::new();
        let a = m.alloc(8).unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        a.rmw(4, 4, |x| x + 1);
                        a.rmw(0, 4, |x| x + 2);
                    }
                });
            }
        });
        assert_eq!(a.read(4, 4), 40_000);
        assert_eq!(a.read(0, 4), 80_000);
    }
}
