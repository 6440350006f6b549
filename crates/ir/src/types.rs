//! Scalar types and address spaces of the IR.

use std::fmt;

/// The type an operation works on. Registers hold raw bits (up to 64); the
/// operation's type says how to read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ty {
    B8,
    B16,
    B32,
    B64,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    BF16,
    BF16x2,
    F32,
    F64,
    Pred,
}

impl Ty {
    pub fn bits(self) -> u32 {
        match self {
            Ty::Pred => 1,
            Ty::B8 | Ty::U8 | Ty::S8 => 8,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 | Ty::BF16 => 16,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 | Ty::F16x2 | Ty::BF16x2 => 32,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 64,
        }
    }

    /// Bytes in memory (a predicate is not storable; 1 for completeness).
    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::BF16x2 | Ty::F32 | Ty::F64
        )
    }

    pub fn is_int(self) -> bool {
        !self.is_float() && self != Ty::Pred
    }

    /// The unsigned/signed/bit type of the given width.
    pub fn uint(bits: u32) -> Ty {
        match bits {
            8 => Ty::U8,
            16 => Ty::U16,
            32 => Ty::U32,
            _ => Ty::U64,
        }
    }

    pub fn sint(bits: u32) -> Ty {
        match bits {
            8 => Ty::S8,
            16 => Ty::S16,
            32 => Ty::S32,
            _ => Ty::S64,
        }
    }

    /// Same signedness, twice the width (for `.wide`).
    pub fn widened(self) -> Ty {
        if self.is_signed() {
            Ty::sint(self.bits() * 2)
        } else {
            Ty::uint(self.bits() * 2)
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Ty::B8 => "b8",
            Ty::B16 => "b16",
            Ty::B32 => "b32",
            Ty::B64 => "b64",
            Ty::U8 => "u8",
            Ty::U16 => "u16",
            Ty::U32 => "u32",
            Ty::U64 => "u64",
            Ty::S8 => "s8",
            Ty::S16 => "s16",
            Ty::S32 => "s32",
            Ty::S64 => "s64",
            Ty::F16 => "f16",
            Ty::F16x2 => "f16x2",
            Ty::BF16 => "bf16",
            Ty::BF16x2 => "bf16x2",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::Pred => "pred",
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Address spaces of loads, stores and atomics. `.param` variables declared
/// in function bodies, and the parameters of device functions, are placed in
/// the thread's local frame by the front end, so `Param` here only means
/// the kernel's own parameter buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    Generic,
    Global,
    Shared,
    Local,
    Const,
    Param,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Generic => "generic",
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param => "param",
        }
    }
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// IEEE rounding of a float result (`.rn .rz .rm .rp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Round {
    Nearest,
    Zero,
    Down,
    Up,
}

impl Round {
    pub fn name(self) -> &'static str {
        match self {
            Round::Nearest => "rn",
            Round::Zero => "rz",
            Round::Down => "rm",
            Round::Up => "rp",
        }
    }
}
