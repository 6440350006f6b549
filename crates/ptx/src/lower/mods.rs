//! Classifying an instruction's dot-modifiers. Modifiers that only steer
//! caches or memory-model scope are accepted and dropped (the interpreter is
//! sequentially consistent, which is stronger than every PTX ordering); a
//! modifier we do not know is an error, never silently ignored.

use crate::ast::Type as AstTy;
use warpfold_ir::{BoolOp, CmpOp, Round, Space, Ty};

#[derive(Debug, Default)]
pub struct Mods {
    pub types: Vec<Ty>,
    pub round: Option<Round>,
    pub round_int: Option<Round>,
    pub rna: bool,
    pub ftz: bool,
    pub sat: bool,
    pub space: Option<Space>,
    pub vec: Option<u32>,
    pub cmp: Option<CmpOp>,
    pub boolop: Option<BoolOp>,
    pub approx: bool,
    pub full: bool,
    pub hi: bool,
    pub lo: bool,
    pub wide: bool,
    pub cc: bool,
    pub volatile: bool,
    pub nan: bool,
    pub to: bool,
    /// Words with an opcode-specific meaning (shfl modes, atomic ops, ...).
    pub words: Vec<String>,
}

pub fn ir_ty(t: AstTy) -> Option<Ty> {
    Some(match t {
        AstTy::B8 => Ty::B8,
        AstTy::B16 => Ty::B16,
        AstTy::B32 => Ty::B32,
        AstTy::B64 => Ty::B64,
        AstTy::U8 => Ty::U8,
        AstTy::U16 => Ty::U16,
        AstTy::U32 => Ty::U32,
        AstTy::U64 => Ty::U64,
        AstTy::S8 => Ty::S8,
        AstTy::S16 => Ty::S16,
        AstTy::S32 => Ty::S32,
        AstTy::S64 => Ty::S64,
        AstTy::F16 => Ty::F16,
        AstTy::F16x2 => Ty::F16x2,
        AstTy::Bf16 => Ty::BF16,
        AstTy::Bf16x2 => Ty::BF16x2,
        AstTy::F32 => Ty::F32,
        AstTy::F64 => Ty::F64,
        AstTy::Pred => Ty::Pred,
        AstTy::B128 | AstTy::Tf32 | AstTy::Opaque => return None,
    })
}

fn cmp(s: &str) -> Option<CmpOp> {
    Some(match s {
        "eq" => CmpOp::Eq,
        "ne" => CmpOp::Ne,
        "lt" => CmpOp::Lt,
        "le" => CmpOp::Le,
        "gt" => CmpOp::Gt,
        "ge" => CmpOp::Ge,
        "lo" => CmpOp::Lo,
        "ls" => CmpOp::Ls,
        "hi" => CmpOp::Hi,
        "hs" => CmpOp::Hs,
        "equ" => CmpOp::Equ,
        "neu" => CmpOp::Neu,
        "ltu" => CmpOp::Ltu,
        "leu" => CmpOp::Leu,
        "gtu" => CmpOp::Gtu,
        "geu" => CmpOp::Geu,
        "num" => CmpOp::Num,
        "nan" => CmpOp::Nan,
        _ => return None,
    })
}

/// Modifiers that change nothing about results here.
fn ignorable(s: &str) -> bool {
    matches!(
        s,
        "uni"
            | "aligned"
            | "sync"
            | "ca"
            | "cg"
            | "cs"
            | "lu"
            | "cv"
            | "wb"
            | "wt"
            | "nc"
            | "cta"
            | "gpu"
            | "sys"
            | "cluster"
            | "relaxed"
            | "acquire"
            | "release"
            | "acq_rel"
            | "sc"
            | "weak"
            | "mmio"
            | "noftz"
            | "unified"
    ) || s.starts_with("L1::")
        || s.starts_with("L2::")
        || s.starts_with("level::")
}

/// Split modifiers into classes. `opcode` decides ambiguous words: `.hi`
/// is a comparison in `setp`/`set`, a half selector in `mul`/`mad`.
pub fn classify(opcode: &str, mods: &[String]) -> Result<Mods, String> {
    let mut m = Mods::default();
    let compares = matches!(opcode, "setp" | "set" | "slct");
    for s in mods {
        let s = s.as_str();
        if let Some(t) = AstTy::from_name(s) {
            match ir_ty(t) {
                Some(t) => m.types.push(t),
                None => return Err(format!("type `.{s}` is not supported")),
            }
            continue;
        }
        if compares {
            if let Some(c) = cmp(s) {
                if m.cmp.is_none() {
                    m.cmp = Some(c);
                    continue;
                }
            }
            match s {
                "and" => {
                    m.boolop = Some(BoolOp::And);
                    continue;
                }
                "or" => {
                    m.boolop = Some(BoolOp::Or);
                    continue;
                }
                "xor" => {
                    m.boolop = Some(BoolOp::Xor);
                    continue;
                }
                _ => {}
            }
        }
        match s {
            "rn" => m.round = Some(Round::Nearest),
            "rz" => m.round = Some(Round::Zero),
            "rm" => m.round = Some(Round::Down),
            "rp" => m.round = Some(Round::Up),
            "rni" => m.round_int = Some(Round::Nearest),
            "rzi" => m.round_int = Some(Round::Zero),
            "rmi" => m.round_int = Some(Round::Down),
            "rpi" => m.round_int = Some(Round::Up),
            "rna" => m.rna = true,
            "ftz" => m.ftz = true,
            "sat" | "satfinite" => m.sat = true,
            "approx" => m.approx = true,
            "full" => m.full = true,
            "hi" => m.hi = true,
            "lo" => m.lo = true,
            "wide" => m.wide = true,
            "cc" => m.cc = true,
            "volatile" => m.volatile = true,
            "NaN" => m.nan = true,
            "to" => m.to = true,
            "global" => m.space = Some(Space::Global),
            "shared" => m.space = Some(Space::Shared),
            "local" => m.space = Some(Space::Local),
            "const" => m.space = Some(Space::Const),
            "param" => m.space = Some(Space::Param),
            "v2" => m.vec = Some(2),
            "v4" => m.vec = Some(4),
            "v8" => m.vec = Some(8),
            _ if ignorable(s) => {}
            _ => m.words.push(s.to_string()),
        }
    }
    Ok(m)
}

impl Mods {
    /// The single operation type (`add.s32`), or an error message.
    pub fn one_type(&self) -> Result<Ty, String> {
        match self.types.as_slice() {
            [t] => Ok(*t),
            [] => Err("missing type modifier".into()),
            _ => Err("expected exactly one type modifier".into()),
        }
    }

    /// Reject leftover words: each opcode consumes the words it knows.
    pub fn no_words(&self) -> Result<(), String> {
        match self.words.first() {
            None => Ok(()),
            Some(w) => Err(format!("unknown modifier `.{w}`")),
        }
    }

    pub fn take_word(&mut self, options: &[&str]) -> Option<String> {
        let i = self
            .words
            .iter()
            .position(|w| options.contains(&w.as_str()))?;
        Some(self.words.remove(i))
    }
}
