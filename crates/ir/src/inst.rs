//! Instructions. Each is one PTX operation with its modifiers made explicit;
//! vector loads/stores keep their lanes together so backends can emit one
//! wide access.

use crate::entity::{BlockId, FuncId, GlobalId, LocalId, Reg};
use crate::types::{Round, Space, Ty};

/// A source operand: a register or an immediate given as raw bits (floats as
/// their IEEE pattern in the low bits, integers sign-extended to 64 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value {
    Reg(Reg),
    Imm(u64),
}

/// Where in the PTX source an instruction came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SrcLoc {
    pub line: u32,
    pub col: u32,
}

/// A named object whose address can be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Symbol {
    /// Module-scope variable (global, const or shared).
    Global(GlobalId),
    /// Variable in the thread's local frame (`.local`, body `.param`, and
    /// device-function parameters).
    Local(LocalId),
    /// Kernel parameter `i`, addressed in the param space.
    KernelParam(u32),
    /// A device function, for calls through pointers.
    Function(FuncId),
}

/// `[base + offset]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Address {
    pub base: AddrBase,
    pub offset: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddrBase {
    Reg(Reg),
    Symbol(Symbol),
    /// Absolute address (`[0x100]`).
    None,
}

/// Integer operations. The operation's `Ty` gives width and signedness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntOp {
    Add,
    Sub,
    /// `add.sat.s32` / `sub.sat.s32`: clamp to the s32 range.
    AddSat,
    SubSat,
    MulLo,
    MulHi,
    /// Result has twice the width of `ty`.
    MulWide,
    Mul24Lo,
    Mul24Hi,
    /// a*b + c, low half.
    MadLo,
    /// high half of a*b, plus c.
    MadHi,
    /// `mad.hi.sat.s32`.
    MadHiSat,
    /// a*b + c at twice the width.
    MadWide,
    Mad24Lo,
    Mad24Hi,
    /// |a - b| + c
    Sad,
    Div,
    Rem,
    Min,
    Max,
    Abs,
    Neg,
    And,
    Or,
    Xor,
    Not,
    /// 1 if a == 0 else 0
    CNot,
    Shl,
    /// Arithmetic when `ty` is signed.
    Shr,
    Popc,
    Clz,
    Brev,
    /// Position of the most significant non-sign bit; `shiftamt` gives the
    /// left shift amount instead.
    Bfind {
        shiftamt: bool,
    },
    /// Bit-field extract (a, pos, len).
    Bfe,
    /// Bit-field insert (a into b, pos, len).
    Bfi,
    /// Byte permute (a, b, selector) with a mode.
    Prmt(PrmtMode),
    /// Funnel shift (a, b, amount).
    Shf {
        left: bool,
        clamp: bool,
    },
    /// Three-input logic with a truth table.
    Lop3(u8),
    /// `dp4a`/`dp2a`: dot products of packed bytes/halves plus c;
    /// the signedness of a and b is given, `hi` selects dp2a's half of b.
    Dp4a {
        a_signed: bool,
        b_signed: bool,
    },
    Dp2a {
        a_signed: bool,
        b_signed: bool,
        hi: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrmtMode {
    Default,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

/// Float operations. `Ty` is f16, f16x2, bf16, bf16x2, f32 or f64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Fma,
    Div(FloatKind),
    Sqrt(FloatKind),
    Rcp(FloatKind),
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    Min {
        nan: bool,
    },
    Max {
        nan: bool,
    },
    Abs,
    Neg,
    /// sign of a, magnitude of b
    Copysign,
}

/// IEEE-rounded, or one of the PTX approximations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloatKind {
    Rounded(Round),
    Approx,
    Full,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    // Unordered float comparisons (true if either is NaN), and ordered ones.
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TestKind {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// Rounding for `cvt`: float results use `Float`, float-to-integer (and
/// float-to-integral-float) use `Int` (`.rni .rzi .rmi .rpi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CvtRound {
    Float(Round),
    Int(Round),
    /// `.rna` (round to nearest, ties away), only for tf32.
    NearestAway,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomOp {
    Add,
    Inc,
    Dec,
    Min,
    Max,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShflMode {
    Idx,
    Up,
    Down,
    Bfly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarKind {
    /// Wait for `count` threads (all of the CTA when absent).
    Sync,
    /// Count this thread, do not wait.
    Arrive,
    /// Wait and reduce a predicate over the participants.
    Red(BarRed),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarRed {
    Popc,
    And,
    Or,
}

/// Special registers, with the component for the vector ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Special {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    GridId,
    LaneMaskEq,
    LaneMaskLe,
    LaneMaskLt,
    LaneMaskGe,
    LaneMaskGt,
    Clock,
    Clock64,
    GlobalTimer,
    DynamicSmemSize,
    TotalSmemSize,
    EnvReg(u8),
}

/// An argument or result of a call: a register value, or a variable of the
/// caller's frame whose bytes are copied (the usual `.param` blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallArg {
    Reg(Reg),
    Imm(u64),
    Local(LocalId),
}

#[derive(Debug, Clone, PartialEq)]
pub enum InstKind {
    Mov {
        ty: Ty,
        dst: Reg,
        src: Value,
    },
    /// `dst` = address of `sym` in `space` (generic when `Space::Generic`).
    AddrOf {
        dst: Reg,
        sym: Symbol,
        space: Space,
    },
    Int {
        op: IntOp,
        ty: Ty,
        dst: Reg,
        args: Vec<Value>,
    },
    /// Add/subtract with carry in and/or out (`add.cc`, `addc`, `subc.cc`...).
    /// The carry lives in a hidden predicate-like register.
    Carry {
        sub: bool,
        ty: Ty,
        dst: Reg,
        a: Value,
        b: Value,
        carry_in: Option<Reg>,
        carry_out: Option<Reg>,
    },
    /// `round` applies to add/sub/mul/fma; div/sqrt/rcp carry their own kind.
    Float {
        op: FloatOp,
        ty: Ty,
        dst: Reg,
        args: Vec<Value>,
        round: Round,
        ftz: bool,
        sat: bool,
    },
    /// `setp`: `dst = cmp(a,b) BOOL c`, `dst2 = !cmp(a,b) BOOL c`.
    Setp {
        cmp: CmpOp,
        ty: Ty,
        dst: Reg,
        dst2: Option<Reg>,
        a: Value,
        b: Value,
        combine: Option<(BoolOp, Value, bool)>,
        ftz: bool,
    },
    /// `set`: like setp, but writes all-ones/1.0 or 0 of `dst_ty`.
    Set {
        cmp: CmpOp,
        ty: Ty,
        dst_ty: Ty,
        dst: Reg,
        a: Value,
        b: Value,
        combine: Option<(BoolOp, Value, bool)>,
        ftz: bool,
    },
    /// `selp`: `dst = c ? a : b`.
    Selp {
        ty: Ty,
        dst: Reg,
        a: Value,
        b: Value,
        c: Value,
    },
    /// `slct`: `dst = (c >= 0) ? a : b`, `c` of type `cty`.
    Slct {
        ty: Ty,
        cty: Ty,
        dst: Reg,
        a: Value,
        b: Value,
        c: Value,
        ftz: bool,
    },
    /// Logical ops on predicates.
    PredOp {
        op: PredOp,
        dst: Reg,
        a: Value,
        b: Value,
    },
    Testp {
        kind: TestKind,
        ty: Ty,
        dst: Reg,
        a: Value,
    },
    Cvt {
        dst_ty: Ty,
        src_ty: Ty,
        dst: Reg,
        src: Value,
        round: Option<CvtRound>,
        ftz: bool,
        sat: bool,
    },
    /// `isspacep`: whether a generic address points into `space`.
    IsSpace {
        space: Space,
        dst: Reg,
        src: Value,
    },
    /// `cvta` (to generic when `to_generic`) and `cvta.to`.
    Cvta {
        to_generic: bool,
        space: Space,
        dst: Reg,
        src: Value,
        bits: u32,
    },
    /// Pack registers into one wider register (`mov.b64 %rd, {%r1,%r2}`), element 0 lowest.
    Pack {
        ty: Ty,
        dst: Reg,
        parts: Vec<Value>,
        part_bits: u32,
    },
    /// Split a register into parts (`mov.b64 {%r1,%r2}, %rd`).
    Unpack {
        ty: Ty,
        dsts: Vec<Option<Reg>>,
        src: Value,
        part_bits: u32,
    },
    /// Load `dsts.len()` consecutive elements of `ty` (`None` for `_`).
    Ld {
        space: Space,
        ty: Ty,
        dsts: Vec<Option<Reg>>,
        addr: Address,
        volatile: bool,
    },
    St {
        space: Space,
        ty: Ty,
        srcs: Vec<Value>,
        addr: Address,
        volatile: bool,
    },
    /// Atomic read-modify-write; `dst` gets the old value (`None` for `red`).
    Atom {
        space: Space,
        op: AtomOp,
        ty: Ty,
        dst: Option<Reg>,
        addr: Address,
        a: Value,
        b: Option<Value>,
    },
    Bar {
        kind: BarKind,
        id: Value,
        count: Option<Value>,
        dst: Option<Reg>,
        pred: Option<(Value, bool)>,
    },
    /// Memory fences: everything is sequentially consistent in the
    /// interpreter; kept so backends can emit the right fence.
    Fence,
    Shfl {
        mode: ShflMode,
        dst: Reg,
        pred_dst: Option<Reg>,
        a: Value,
        b: Value,
        c: Value,
        mask: Value,
    },
    Vote {
        mode: VoteMode,
        dst: Reg,
        a: Value,
        negate: bool,
        mask: Value,
    },
    Activemask {
        dst: Reg,
    },
    Match {
        all: bool,
        ty: Ty,
        dst: Reg,
        pred_dst: Option<Reg>,
        a: Value,
        mask: Value,
    },
    Redux {
        op: ReduxOp,
        ty: Ty,
        dst: Reg,
        a: Value,
        mask: Value,
    },
    /// `bar.warp.sync`: wait for the lanes in the mask.
    WarpSync {
        mask: Value,
    },
    ReadSpecial {
        dst: Reg,
        sreg: Special,
    },
    Call {
        func: FuncId,
        args: Vec<CallArg>,
        rets: Vec<CallArg>,
    },
    /// A call through a function pointer; the callee must take `args.len()`
    /// parameters and return `rets.len()` values (checked when it runs).
    CallIndirect {
        target: Value,
        args: Vec<CallArg>,
        rets: Vec<CallArg>,
    },
    /// A call of a function the CUDA runtime provides (`vprintf`,
    /// `__assertfail`), with the usual argument conventions.
    Builtin {
        which: Builtin,
        args: Vec<CallArg>,
        rets: Vec<CallArg>,
    },
    /// `trap` / `brkpt`: abort the launch.
    Trap,
    /// `nanosleep`, `prefetch`, `pmevent` and other hints with no effect on results.
    Nop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `vprintf(format, args)`: device-side printf.
    Vprintf,
    /// `__assertfail(message, file, line, function, char_size)`: a failed `assert`.
    AssertFail,
    /// `(target)`: a call through a pointer that is no callable function's
    /// address (made by `inline::inline_calls`, never parsed).
    BadFunctionPointer,
}

impl Builtin {
    pub fn from_name(name: &str) -> Option<Builtin> {
        match name {
            "vprintf" => Some(Builtin::Vprintf),
            "__assertfail" => Some(Builtin::AssertFail),
            _ => None,
        }
    }

    /// (arguments, results)
    pub fn arity(self) -> (usize, usize) {
        match self {
            Builtin::Vprintf => (2, 1),
            Builtin::AssertFail => (5, 0),
            Builtin::BadFunctionPointer => (1, 0),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Builtin::Vprintf => "vprintf",
            Builtin::AssertFail => "__assertfail",
            Builtin::BadFunctionPointer => "__warpfold_bad_function_pointer",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PredOp {
    And,
    Or,
    Xor,
    Not,
    Mov,
}

/// A guarded instruction: runs only in threads where the guard holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Inst {
    pub kind: InstKind,
    /// `@%p` (false) or `@!%p` (true).
    pub guard: Option<(Reg, bool)>,
    pub loc: SrcLoc,
}

/// How a block ends.
#[derive(Debug, Clone, PartialEq)]
pub enum Terminator {
    Jump(BlockId),
    /// Per-thread branch: to `then` where `pred` (negated if `negate`) holds.
    Branch {
        pred: Reg,
        negate: bool,
        then: BlockId,
        els: BlockId,
    },
    Return,
    /// The thread ends (`exit`, or `ret` in a kernel).
    Exit,
}
