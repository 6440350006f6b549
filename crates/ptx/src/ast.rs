//! Syntax tree of a PTX module, as written. The parser knows PTX's grammar
//! but not the meaning of each opcode: an instruction is kept as its opcode,
//! its dot-modifiers and its operands, and `lower` gives it meaning. This
//! keeps the parser small and lets an unknown instruction be reported where
//! the semantics live.

/// A byte range in the source with the 1-based line and column of its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
    pub line: u32,
    pub col: u32,
}

impl Span {
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        if other.end <= self.start {
            return self;
        }
        Span {
            start: self.start,
            end: other.end.max(self.end),
            line: self.line,
            col: self.col,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    /// `.version major.minor`
    pub version: (u32, u32),
    /// `.target sm_80, debug` as its comma-separated words.
    pub target: Vec<String>,
    /// `.address_size 64` (64 when absent).
    pub address_size: u32,
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A module-scope variable (`.global`, `.const`, `.shared`, ...).
    Var(VarDecl),
    /// `.entry` or `.func`, with or without a body.
    Function(Function),
}

/// State spaces that a variable or an instruction can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateSpace {
    Reg,
    Sreg,
    Const,
    Global,
    Local,
    Param,
    Shared,
    Tex,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Linkage {
    #[default]
    None,
    Visible,
    Extern,
    Weak,
    Common,
}

/// A PTX fundamental type as written (`.u32`, `.f16x2`, `.pred`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Type {
    B8,
    B16,
    B32,
    B64,
    B128,
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
    Bf16,
    Bf16x2,
    Tf32,
    F32,
    F64,
    Pred,
    /// `.texref`, `.samplerref`, `.surfref`: parsed so modules load, never lowered.
    Opaque,
}

impl Type {
    /// Parse the name without its leading dot (`"u32"`).
    pub fn from_name(s: &str) -> Option<Type> {
        Some(match s {
            "b8" => Type::B8,
            "b16" => Type::B16,
            "b32" => Type::B32,
            "b64" => Type::B64,
            "b128" => Type::B128,
            "u8" => Type::U8,
            "u16" => Type::U16,
            "u32" => Type::U32,
            "u64" => Type::U64,
            "s8" => Type::S8,
            "s16" => Type::S16,
            "s32" => Type::S32,
            "s64" => Type::S64,
            "f16" => Type::F16,
            "f16x2" => Type::F16x2,
            "bf16" => Type::Bf16,
            "bf16x2" => Type::Bf16x2,
            "tf32" => Type::Tf32,
            "f32" => Type::F32,
            "f64" => Type::F64,
            "pred" => Type::Pred,
            "texref" | "samplerref" | "surfref" => Type::Opaque,
            _ => return None,
        })
    }

    /// Size in bytes (a predicate counts as 1, like a `.u8`).
    pub fn size(self) -> u32 {
        match self {
            Type::B8 | Type::U8 | Type::S8 | Type::Pred => 1,
            Type::B16 | Type::U16 | Type::S16 | Type::F16 | Type::Bf16 => 2,
            Type::B32
            | Type::U32
            | Type::S32
            | Type::F32
            | Type::F16x2
            | Type::Bf16x2
            | Type::Tf32 => 4,
            Type::B64 | Type::U64 | Type::S64 | Type::F64 | Type::Opaque => 8,
            Type::B128 => 16,
        }
    }
}

/// A variable declaration: module scope, or inside a function body.
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl {
    pub space: StateSpace,
    pub linkage: Linkage,
    pub align: Option<u32>,
    /// `.v2`/`.v4` element count, if a vector type.
    pub vector: Option<u32>,
    pub ty: Type,
    pub name: String,
    /// Array dimensions in order; `None` for `[]` (size from the initialiser,
    /// or a dynamic `.extern .shared` array).
    pub dims: Vec<Option<u64>>,
    pub init: Option<Initializer>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Initializer {
    /// `{a, b, {c, d}}`
    List(Vec<Initializer>),
    /// An integer literal (sign already applied, two's complement).
    Int(i128),
    /// A float literal as f64 (`0f3F800000` is converted exactly).
    Float(f64),
    /// The address of another variable, plus a byte offset: `sym`,
    /// `sym+8`, `generic(sym)+8`.
    Symbol {
        name: String,
        offset: i64,
        generic: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionKind {
    /// `.entry`: a kernel.
    Entry,
    /// `.func`: a device function.
    Func,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub kind: FunctionKind,
    pub linkage: Linkage,
    pub name: String,
    /// Return parameters of a `.func` (`.func (.param .b32 r) f(...)`).
    pub returns: Vec<Param>,
    pub params: Vec<Param>,
    /// `None` for a declaration (prototype) without body.
    pub body: Option<Vec<Statement>>,
    /// `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`, `.maxnctapersm`,
    /// `.noreturn`, `.pragma` and similar, kept as written.
    pub directives: Vec<PerfDirective>,
    pub span: Span,
    /// Span of the name, for diagnostics that point at the function.
    pub name_span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PerfDirective {
    /// Without the dot: `"maxntid"`.
    pub name: String,
    /// Integer arguments, or for `.pragma` empty (see `strings`).
    pub values: Vec<u64>,
    pub strings: Vec<String>,
    pub span: Span,
}

/// A kernel or function parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// `.param` for kernels/functions; `.reg` is legal for `.func` params.
    pub space: StateSpace,
    pub ty: Type,
    pub vector: Option<u32>,
    pub align: Option<u32>,
    pub name: String,
    /// `p[40]` for by-value aggregates (`.b8 p[40]`); `None` if scalar.
    pub array: Option<u64>,
    /// `.ptr .global .align 4` annotation on kernel pointer params.
    pub ptr_space: Option<StateSpace>,
    pub ptr_align: Option<u32>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// `name:`
    Label {
        name: String,
        span: Span,
    },
    /// `.reg .b32 %r<10>;` or `.reg .f32 %f, %g;` — one statement per name.
    /// `count` is `Some(n)` for the `<n>` form, declaring `%r0`..`%r{n-1}`.
    Reg {
        ty: Type,
        vector: Option<u32>,
        name: String,
        count: Option<u32>,
        span: Span,
    },
    /// `.local`, `.shared`, `.const`, `.global` or `.param` variable inside a body.
    Var(VarDecl),
    /// A `{ ... }` nested scope.
    Block(Vec<Statement>),
    Inst(Instruction),
    /// `.pragma "nounroll";` and other body directives that change nothing.
    Directive(PerfDirective),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    /// `@%p` is `Some((name, false))`, `@!%p` is `Some((name, true))`.
    pub guard: Option<(String, bool)>,
    /// Opcode without modifiers: `"ld"`, `"setp"`, `"shfl"`.
    pub opcode: String,
    /// Dot-modifiers in written order, without dots:
    /// `ld.global.nc.v4.f32` gives `["global","nc","v4","f32"]`.
    pub modifiers: Vec<String>,
    pub operands: Vec<Operand>,
    /// The whole instruction, from the guard to before the `;`.
    pub span: Span,
    /// Just the opcode with its modifiers.
    pub opcode_span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A register or special register: `%r1`, `%tid.x`, `%laneid`, or a
    /// parameter/variable name used as a value (`mov.u64 %rd, sym` is `Symbol`).
    Reg(String, Span),
    /// A non-register identifier: labels, functions, variables, parameters.
    Symbol(String, Span),
    /// Integer literal (sign applied). `u` suffix is accepted and dropped.
    Int(i128, Span),
    /// `0fXXXXXXXX`: the exact 32-bit pattern.
    F32Bits(u32, Span),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float literal: f64 bits.
    F64Bits(u64, Span),
    /// `[base+offset]`; base is a register, a symbol, or absent (`[0x100]`).
    Address {
        base: Option<Box<Operand>>,
        offset: i64,
        span: Span,
    },
    /// `{a, b, c, d}`
    Vector(Vec<Operand>, Span),
    /// `!%p` (negated predicate source).
    Not(Box<Operand>, Span),
    /// `-%r` where the ISA allows negation of a source (rare); also `-sym`.
    Neg(Box<Operand>, Span),
    /// `%p|%q`: the two destinations of `setp`.
    Pair(Box<Operand>, Box<Operand>, Span),
    /// `(a, b)` in `call`: return and argument lists.
    List(Vec<Operand>, Span),
    /// `_` sink destination.
    Sink(Span),
}

impl Operand {
    pub fn span(&self) -> Span {
        match self {
            Operand::Reg(_, s)
            | Operand::Symbol(_, s)
            | Operand::Int(_, s)
            | Operand::F32Bits(_, s)
            | Operand::F64Bits(_, s)
            | Operand::Vector(_, s)
            | Operand::Not(_, s)
            | Operand::Neg(_, s)
            | Operand::Pair(_, _, s)
            | Operand::List(_, s)
            | Operand::Sink(s) => *s,
            Operand::Address { span, .. } => *span,
        }
    }
}
