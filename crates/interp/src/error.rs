//! Launch errors. Each names the kernel, and where a thread is at fault, its
//! block, thread and PTX line.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// Load/store/atomic outside any allocation or space.
    Memory {
        access: String,
        addr: u64,
        detail: String,
    },
    Misaligned {
        access: String,
        addr: u64,
        align: u32,
    },
    /// `trap`/`brkpt`.
    Trap,
    /// A device `assert` failed.
    Assert(String),
    /// Call depth or local memory exhausted.
    StackOverflow,
    /// A warp operation used wrongly (e.g. the thread is not in its mask).
    Warp(String),
}

/// A thread's fault: what and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub kernel: String,
    pub block: [u32; 3],
    pub thread: [u32; 3],
    pub line: u32,
    pub kind: FaultKind,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            FaultKind::Memory {
                access,
                addr,
                detail,
            } => write!(f, "out of bounds {access} at address {addr:#x} ({detail})")?,
            FaultKind::Misaligned {
                access,
                addr,
                align,
            } => write!(
                f,
                "misaligned {access} at address {addr:#x} (needs {align}-byte alignment)"
            )?,
            FaultKind::Trap => write!(f, "trap instruction executed")?,
            FaultKind::Assert(m) => write!(f, "{m}")?,
            FaultKind::StackOverflow => write!(f, "call stack overflow (recursion too deep)")?,
            FaultKind::Warp(m) => write!(f, "{m}")?,
        }
        write!(
            f,
            " in kernel `{}`, block ({},{},{}), thread ({},{},{}), PTX line {}",
            self.kernel,
            self.block[0],
            self.block[1],
            self.block[2],
            self.thread[0],
            self.thread[1],
            self.thread[2],
            self.line
        )
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExecError {
    #[error("{0}")]
    Fault(Box<Fault>),
    #[error("barrier deadlock in kernel `{kernel}`, block ({},{},{}): {detail}", block[0], block[1], block[2])]
    Deadlock {
        kernel: String,
        block: [u32; 3],
        detail: String,
    },
    /// `bar.sync` reached at different places by threads of one CTA:
    /// undefined in CUDA (`__syncthreads` must be reached by every thread at
    /// the same point), so reported rather than guessed at.
    #[error("barrier divergence in kernel `{kernel}`, block ({},{},{}): {detail}", block[0], block[1], block[2])]
    BarrierDivergence {
        kernel: String,
        block: [u32; 3],
        detail: String,
    },
    #[error("kernel `{kernel}` exceeded the time limit of {secs:.1} s and was stopped")]
    Timeout { kernel: String, secs: f64 },
    #[error("invalid launch: {0}")]
    BadLaunch(String),
    #[error("launch cancelled")]
    Cancelled,
}

/// A call through a pointer that is no device function's address.
pub fn bad_function_pointer(addr: u64) -> FaultKind {
    FaultKind::Memory {
        access: "call through a function pointer".into(),
        addr,
        detail: "not the address of a device function".into(),
    }
}
