//! Lowering: syntax tree to warpfold IR. Names are resolved (registers,
//! variables, labels, functions), instructions get their meaning from
//! opcode + modifiers, and variables get their place (module globals, the
//! shared and const segments, the thread's local frame).

mod contract;
mod inst;
mod mods;

use crate::ast::{self, Initializer, Item, Operand, Span, StateSpace, Statement};
use crate::diag::{Diagnostic, Diagnostics};
use std::collections::{HashMap, HashSet};
use warpfold_ir as ir;
use warpfold_ir::{BlockId, FuncId, GlobalId, InstKind, LocalId, Reg, Space, Terminator, Ty};

pub use mods::ir_ty;

/// Parse, lower and verify a PTX module, fusing products and sums as a
/// GPU does (see `contract`).
pub fn load(src: &str) -> Result<ir::Module, Diagnostics> {
    load_with(src, true)
}

/// `load`; `fmad: false` keeps every `mul` and `add` rounded on its own,
/// as ptxas does with `--fmad=false`.
pub fn load_with(src: &str, fmad: bool) -> Result<ir::Module, Diagnostics> {
    let module = crate::parser::parse(src)?;
    lower_with(src, &module, fmad)
}

pub fn lower(src: &str, module: &ast::Module) -> Result<ir::Module, Diagnostics> {
    lower_with(src, module, true)
}

pub fn lower_with(src: &str, module: &ast::Module, fmad: bool) -> Result<ir::Module, Diagnostics> {
    let mut ml = ModuleLower {
        src,
        m: ir::Module {
            ptx_version: module.version,
            target: module.target.join(", "),
            ..Default::default()
        },
        globals: HashMap::new(),
        funcs: HashMap::new(),
        declared: HashSet::new(),
        arity: HashMap::new(),
        kernels: HashSet::new(),
        shared_end: 0,
        const_end: 0,
        fmad,
    };
    // Module variables first: initialisers may name each other, so all are
    // declared before any relocation is resolved.
    let mut pending = Vec::new();
    for item in &module.items {
        if let Item::Var(v) = item {
            let g = ml.declare_global(v, None)?;
            pending.push((g, v));
        }
    }
    // Every function with a body gets a handle before any body is lowered,
    // so calls can go forward and recurse.
    let mut bodies = Vec::new();
    for item in &module.items {
        if let Item::Function(f) = item {
            match &f.body {
                Some(body) => {
                    if ml.funcs.contains_key(&f.name) {
                        return Err(ml
                            .diag(
                                f.name_span,
                                format!("function `{}` is defined twice", f.name),
                            )
                            .into());
                    }
                    let id = ml.m.functions.push(ir::Function::new(
                        f.name.clone(),
                        f.kind == ast::FunctionKind::Entry,
                    ));
                    ml.funcs.insert(f.name.clone(), id);
                    if f.kind == ast::FunctionKind::Entry {
                        ml.kernels.insert(id);
                    }
                    bodies.push((id, f, body));
                }
                None => {
                    ml.declared.insert(f.name.clone());
                }
            }
        }
    }
    // Initialisers may hold function addresses, so they come after the
    // functions have handles.
    for (g, v) in pending {
        ml.init_global(g, v)?;
    }
    for (id, f, _) in &bodies {
        let lowered = ml.signature(f)?;
        ml.arity
            .insert(*id, (lowered.params.len(), lowered.returns.len()));
        ml.m.functions[*id] = lowered;
    }
    for (id, f, body) in bodies {
        let func = std::mem::replace(&mut ml.m.functions[id], ir::Function::new("", false));
        let func = FnLower::run(&mut ml, func, f, body)?;
        ml.m.functions[id] = func;
    }
    if let Err(e) = ir::verify_module(&ml.m) {
        return Err(Diagnostic::new(src, Span::default(), format!("internal error: {e}")).into());
    }
    Ok(ml.m)
}

pub(crate) struct ModuleLower<'a> {
    src: &'a str,
    m: ir::Module,
    globals: HashMap<String, GlobalId>,
    funcs: HashMap<String, FuncId>,
    declared: HashSet<String>,
    /// (parameters, returns) of each function, usable while its own body is
    /// being lowered (recursive calls).
    arity: HashMap<FuncId, (usize, usize)>,
    kernels: HashSet<FuncId>,
    shared_end: u64,
    const_end: u64,
    /// Fuse `mul` + `add` without rounding modifiers (see `contract`).
    fmad: bool,
}

fn ir_space(s: StateSpace) -> Option<Space> {
    Some(match s {
        StateSpace::Global => Space::Global,
        StateSpace::Shared => Space::Shared,
        StateSpace::Local => Space::Local,
        StateSpace::Const => Space::Const,
        StateSpace::Param => Space::Param,
        _ => return None,
    })
}

/// Largest variable we accept (1 GiB); bigger is surely a typo or garbage.
const MAX_VAR_BYTES: u64 = 1 << 30;

impl<'a> ModuleLower<'a> {
    fn diag(&self, span: Span, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.src, span, msg)
    }

    /// Element count of a declaration (dims multiplied; `[]` from the initialiser).
    fn var_size(&self, v: &ast::VarDecl) -> Result<(u64, u32), Diagnostic> {
        let elem = u64::from(v.ty.size()) * u64::from(v.vector.unwrap_or(1));
        let mut count: u64 = 1;
        for (i, d) in v.dims.iter().enumerate() {
            let n = match d {
                Some(n) => *n,
                None if i == 0 => match &v.init {
                    Some(Initializer::List(items)) => items.len() as u64,
                    _ => 0,
                },
                None => {
                    return Err(
                        self.diag(v.span, "only the first array dimension may be left empty")
                    )
                }
            };
            count = count
                .checked_mul(n)
                .ok_or_else(|| self.diag(v.span, "array too large"))?;
        }
        let size = count.checked_mul(elem).filter(|s| *s <= MAX_VAR_BYTES);
        let size = size.ok_or_else(|| {
            self.diag(
                v.span,
                format!("variable `{}` is too large (limit 1 GiB)", v.name),
            )
        })?;
        let align = v.align.unwrap_or(elem.clamp(1, 16) as u32);
        if !align.is_power_of_two() {
            return Err(self.diag(v.span, format!("alignment {align} is not a power of two")));
        }
        Ok((size, align))
    }

    /// Declare a module variable (or a function-scope shared/global/const one,
    /// hoisted with its function's name as prefix).
    fn declare_global(
        &mut self,
        v: &ast::VarDecl,
        owner: Option<&str>,
    ) -> Result<GlobalId, Diagnostic> {
        let space = match v.space {
            StateSpace::Global => Space::Global,
            StateSpace::Shared => Space::Shared,
            StateSpace::Const => Space::Const,
            StateSpace::Tex => {
                return Err(self.diag(v.span, "texture references are not supported"))
            }
            other => {
                return Err(self.diag(
                    v.span,
                    format!("a module-scope variable cannot be in the {other:?} space"),
                ))
            }
        };
        if v.ty == ast::Type::Opaque {
            return Err(self.diag(
                v.span,
                "texture, sampler and surface references are not supported",
            ));
        }
        let (size, align) = self.var_size(v)?;
        let dynamic = space == Space::Shared
            && v.linkage == ast::Linkage::Extern
            && v.dims.first() == Some(&None);
        let offset = match space {
            Space::Shared if dynamic => 0,
            Space::Shared => {
                let off = self.shared_end.div_ceil(u64::from(align)) * u64::from(align);
                self.shared_end = off + size;
                off
            }
            Space::Const => {
                let off = self.const_end.div_ceil(u64::from(align)) * u64::from(align);
                self.const_end = off + size;
                if self.const_end > (64 << 10) * 11 {
                    return Err(self.diag(v.span, "constant memory exceeds the 64 KiB banks"));
                }
                off
            }
            _ => 0,
        };
        let name = match owner {
            Some(f) => format!("{f}::{}", v.name),
            None => v.name.clone(),
        };
        if owner.is_none() && self.globals.contains_key(&v.name) {
            // `.extern` declarations may be repeated; a second definition may not.
            if v.linkage == ast::Linkage::Extern {
                return Ok(self.globals[&v.name]);
            }
            return Err(self.diag(v.span, format!("variable `{}` is declared twice", v.name)));
        }
        let id = self.m.globals.push(ir::Global {
            name: name.clone(),
            space,
            size,
            align,
            offset,
            init: Vec::new(),
            relocs: Vec::new(),
            dynamic,
        });
        if owner.is_none() {
            self.globals.insert(name, id);
        }
        Ok(id)
    }

    fn init_global(&mut self, id: GlobalId, v: &ast::VarDecl) -> Result<(), Diagnostic> {
        let Some(init) = &v.init else { return Ok(()) };
        if self.m.globals[id].space == Space::Shared {
            return Err(self.diag(v.span, "shared variables cannot have initialisers"));
        }
        let mut flat = Vec::new();
        flatten(init, &mut flat, 0).map_err(|m| self.diag(v.span, m))?;
        let elem = v.ty.size() as usize;
        let size = self.m.globals[id].size as usize;
        if flat.len().saturating_mul(elem) > size {
            return Err(self.diag(
                v.span,
                format!(
                    "initialiser has {} elements, more than `{}` holds",
                    flat.len(),
                    v.name
                ),
            ));
        }
        let mut bytes = vec![0u8; size];
        let mut relocs = Vec::new();
        let ty = ir_ty(v.ty).ok_or_else(|| self.diag(v.span, "unsupported variable type"))?;
        for (i, e) in flat.iter().enumerate() {
            let at = i * elem;
            let bits: u64 = match e {
                Initializer::Int(x) => *x as u64,
                Initializer::Float(x) => match ty {
                    Ty::F32 => u64::from((*x as f32).to_bits()),
                    Ty::F64 => x.to_bits(),
                    _ => *x as i64 as u64,
                },
                Initializer::Symbol {
                    name,
                    offset,
                    generic,
                } => {
                    let target = match (self.globals.get(name), self.funcs.get(name)) {
                        (Some(g), _) => ir::RelocTarget::Global(*g),
                        (None, Some(f)) => ir::RelocTarget::Function(*f),
                        (None, None) => {
                            return Err(self.diag(
                                v.span,
                                format!("initialiser names unknown variable or function `{name}`"),
                            ))
                        }
                    };
                    if elem < 4 {
                        return Err(self.diag(v.span, "an address does not fit this element type"));
                    }
                    relocs.push(ir::Reloc {
                        at: at as u64,
                        target,
                        addend: *offset,
                        generic: *generic,
                        bytes: elem as u32,
                    });
                    0
                }
                Initializer::List(_) => 0,
            };
            let le = bits.to_le_bytes();
            bytes[at..at + elem.min(8)].copy_from_slice(&le[..elem.min(8)]);
        }
        let g = &mut self.m.globals[id];
        g.init = bytes;
        g.relocs = relocs;
        Ok(())
    }

    /// Parameters and returns of a function with a body.
    fn signature(&mut self, f: &ast::Function) -> Result<ir::Function, Diagnostic> {
        let kernel = f.kind == ast::FunctionKind::Entry;
        let mut func = ir::Function::new(f.name.clone(), kernel);
        func.line = f.span.line;
        for d in &f.directives {
            let dims = || {
                let mut v = [1u32; 3];
                for (i, x) in d.values.iter().take(3).enumerate() {
                    v[i] = (*x).min(u64::from(u32::MAX)) as u32;
                }
                v
            };
            match d.name.as_str() {
                "reqntid" => func.reqntid = Some(dims()),
                "maxntid" => func.maxntid = Some(dims()),
                _ => {}
            }
        }
        let mut offset = 0u64;
        for (list, is_ret) in [(&f.returns, true), (&f.params, false)] {
            for p in list {
                let ty = match (p.ty, p.array) {
                    (ast::Type::Opaque, _) => {
                        return Err(self.diag(
                            p.span,
                            "texture/sampler/surface parameters are not supported",
                        ))
                    }
                    (t, _) => ir_ty(t).ok_or_else(|| {
                        self.diag(p.span, format!("parameter type {:?} is not supported", t))
                    })?,
                };
                let elem = u64::from(p.ty.size()) * u64::from(p.vector.unwrap_or(1));
                let size = elem
                    .checked_mul(p.array.unwrap_or(1))
                    .filter(|s| *s <= 1 << 20)
                    .ok_or_else(|| self.diag(p.span, "parameter too large"))?;
                let align = u64::from(p.align.unwrap_or(elem.clamp(1, 16) as u32).max(1));
                if !align.is_power_of_two() {
                    return Err(self.diag(p.span, "parameter alignment is not a power of two"));
                }
                let param_off = offset.div_ceil(align) * align;
                let binding = if kernel {
                    if is_ret {
                        return Err(self.diag(p.span, "a kernel cannot return values"));
                    }
                    offset = param_off + size;
                    ir::ParamBinding::KernelBuffer
                } else if p.space == StateSpace::Reg {
                    let r = func.regs.push(ir::RegInfo {
                        name: p.name.clone(),
                        ty,
                    });
                    ir::ParamBinding::Reg(r)
                } else {
                    ir::ParamBinding::Local(func.add_local(p.name.clone(), size, align as u32))
                };
                let param = ir::Param {
                    name: p.name.clone(),
                    ty,
                    array: p.array,
                    align: align as u32,
                    size,
                    offset: if kernel { param_off } else { 0 },
                    ptr_space: p.ptr_space.and_then(ir_space),
                    binding,
                };
                if is_ret {
                    func.returns.push(param);
                } else {
                    func.params.push(param);
                }
            }
        }
        if offset > 32764 {
            return Err(self.diag(f.name_span, "kernel parameters exceed 32764 bytes"));
        }
        func.param_bytes = offset;
        Ok(func)
    }
}

fn flatten<'i>(
    init: &'i Initializer,
    out: &mut Vec<&'i Initializer>,
    depth: u32,
) -> Result<(), String> {
    if depth > 64 {
        return Err("initialiser nested too deeply".into());
    }
    match init {
        Initializer::List(items) => {
            for i in items {
                flatten(i, out, depth + 1)?;
            }
        }
        other => out.push(other),
    }
    Ok(())
}

/// What a name in a function body refers to.
#[derive(Debug, Clone, Copy)]
enum Binding {
    Reg(Reg),
    Local(LocalId),
    Global(GlobalId),
    KernelParam(u32),
}

/// A `.reg .b32 %r<N>;` declaration: registers are made on first use, so a
/// huge N costs nothing.
struct RegRange {
    prefix: String,
    count: u32,
    ty: Ty,
}

#[derive(Default)]
struct Scope {
    names: HashMap<String, Binding>,
    ranges: Vec<RegRange>,
}

struct Fixup {
    block: BlockId,
    label: String,
    span: Span,
    /// Which target of the terminator: 0 = jump/then, 1 = else.
    slot: u8,
}

pub(crate) struct FnLower<'m, 'a> {
    ml: &'m mut ModuleLower<'a>,
    f: ir::Function,
    scopes: Vec<Scope>,
    labels: HashMap<String, BlockId>,
    fixups: Vec<Fixup>,
    cur: BlockId,
    carry: Option<Reg>,
    temps: u32,
    /// Float instructions written without a rounding modifier (see
    /// `contract`).
    implicit: contract::Implicit,
}

impl<'m, 'a> FnLower<'m, 'a> {
    fn run(
        ml: &'m mut ModuleLower<'a>,
        mut f: ir::Function,
        ast_fn: &ast::Function,
        body: &[Statement],
    ) -> Result<ir::Function, Diagnostics> {
        let entry = f.blocks.push(ir::Block::default());
        f.entry = entry;
        let mut top = Scope::default();
        for (i, p) in f.params.iter().enumerate() {
            let b = match p.binding {
                ir::ParamBinding::KernelBuffer => Binding::KernelParam(i as u32),
                ir::ParamBinding::Local(l) => Binding::Local(l),
                ir::ParamBinding::Reg(r) => Binding::Reg(r),
            };
            top.names.insert(p.name.clone(), b);
        }
        for p in &f.returns {
            let b = match p.binding {
                ir::ParamBinding::Local(l) => Binding::Local(l),
                ir::ParamBinding::Reg(r) => Binding::Reg(r),
                ir::ParamBinding::KernelBuffer => continue,
            };
            top.names.insert(p.name.clone(), b);
        }
        let mut fl = FnLower {
            ml,
            f,
            scopes: vec![top],
            labels: HashMap::new(),
            fixups: Vec::new(),
            cur: entry,
            carry: None,
            temps: 0,
            implicit: contract::Implicit::new(),
        };
        // Labels are function-wide: collect them first so their blocks are
        // made in source order (blocks' order is the scheduling order of the
        // interpreter's reconvergence).
        fl.statements(body, &ast_fn.name, 0)?;
        if fl.f.blocks[fl.cur].term.is_none() {
            let t = if fl.f.is_kernel {
                Terminator::Exit
            } else {
                Terminator::Return
            };
            fl.f.blocks[fl.cur].term = Some(t);
        }
        fl.resolve_fixups()?;
        if fl.ml.fmad {
            contract::contract(&mut fl.f, &fl.implicit);
        }
        Ok(fl.f)
    }

    pub(crate) fn diag(&self, span: Span, msg: impl Into<String>) -> Diagnostic {
        self.ml.diag(span, msg)
    }

    fn statements(
        &mut self,
        body: &[Statement],
        fname: &str,
        depth: u32,
    ) -> Result<(), Diagnostic> {
        if depth > 64 {
            return Err(self.diag(Span::default(), "blocks nested too deeply"));
        }
        for st in body {
            match st {
                Statement::Label { name, span } => {
                    if self.labels.contains_key(name) {
                        return Err(self.diag(*span, format!("label `{name}` is defined twice")));
                    }
                    let b = self.f.blocks.push(ir::Block {
                        name: Some(name.clone()),
                        ..Default::default()
                    });
                    if self.f.blocks[self.cur].term.is_none() {
                        self.f.blocks[self.cur].term = Some(Terminator::Jump(b));
                    }
                    self.cur = b;
                    self.labels.insert(name.clone(), b);
                }
                Statement::Reg {
                    ty,
                    vector,
                    name,
                    count,
                    span,
                } => {
                    if vector.is_some() {
                        return Err(self.diag(*span, "vector registers are not supported"));
                    }
                    let ty =
                        ir_ty(*ty).ok_or_else(|| self.diag(*span, "unsupported register type"))?;
                    let scope = self.scopes.last_mut().expect("scope stack is never empty");
                    match count {
                        Some(n) => scope.ranges.push(RegRange {
                            prefix: name.clone(),
                            count: *n,
                            ty,
                        }),
                        None => {
                            let r = self.f.regs.push(ir::RegInfo {
                                name: name.clone(),
                                ty,
                            });
                            scope.names.insert(name.clone(), Binding::Reg(r));
                        }
                    }
                }
                Statement::Var(v) => self.local_var(v, fname)?,
                Statement::Block(inner) => {
                    self.scopes.push(Scope::default());
                    self.statements(inner, fname, depth + 1)?;
                    self.scopes.pop();
                }
                Statement::Inst(i) => self.instruction(i)?,
                Statement::Directive(_) => {}
            }
        }
        Ok(())
    }

    fn local_var(&mut self, v: &ast::VarDecl, fname: &str) -> Result<(), Diagnostic> {
        let binding = match v.space {
            StateSpace::Local | StateSpace::Param => {
                if v.init.is_some() {
                    return Err(self.diag(v.span, "local variables cannot have initialisers"));
                }
                let (size, align) = self.ml.var_size(v)?;
                Binding::Local(self.f.add_local(v.name.clone(), size, align))
            }
            StateSpace::Shared | StateSpace::Global | StateSpace::Const => {
                let g = self.ml.declare_global(v, Some(fname))?;
                self.ml.init_global(g, v)?;
                Binding::Global(g)
            }
            other => {
                return Err(self.diag(
                    v.span,
                    format!("variables in the {other:?} space are not supported here"),
                ))
            }
        };
        self.scopes
            .last_mut()
            .expect("scope")
            .names
            .insert(v.name.clone(), binding);
        Ok(())
    }

    fn resolve_fixups(&mut self) -> Result<(), Diagnostic> {
        for fx in std::mem::take(&mut self.fixups) {
            let target = *self
                .labels
                .get(&fx.label)
                .ok_or_else(|| self.diag(fx.span, format!("unknown label `{}`", fx.label)))?;
            match &mut self.f.blocks[fx.block].term {
                Some(Terminator::Jump(t)) => *t = target,
                Some(Terminator::Branch { then, els, .. }) => {
                    if fx.slot == 0 {
                        *then = target
                    } else {
                        *els = target
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn lookup(&mut self, name: &str) -> Option<Binding> {
        for i in (0..self.scopes.len()).rev() {
            if let Some(b) = self.scopes[i].names.get(name) {
                return Some(*b);
            }
            // `%r12` from a `%r<N>` range in this scope.
            let hit = self.scopes[i].ranges.iter().find_map(|rg| {
                let rest = name.strip_prefix(rg.prefix.as_str())?;
                if rest.is_empty()
                    || !rest.bytes().all(|c| c.is_ascii_digit())
                    || (rest.len() > 1 && rest.starts_with('0'))
                {
                    return None;
                }
                let n: u32 = rest.parse().ok()?;
                (n < rg.count).then_some(rg.ty)
            });
            if let Some(ty) = hit {
                let r = self.f.regs.push(ir::RegInfo {
                    name: name.to_string(),
                    ty,
                });
                self.scopes[i]
                    .names
                    .insert(name.to_string(), Binding::Reg(r));
                return Some(Binding::Reg(r));
            }
        }
        if let Some(g) = self.ml.globals.get(name) {
            return Some(Binding::Global(*g));
        }
        None
    }

    fn temp(&mut self, ty: Ty) -> Reg {
        self.temps += 1;
        self.f.regs.push(ir::RegInfo {
            name: format!("%tmp{}", self.temps),
            ty,
        })
    }

    fn carry_reg(&mut self) -> Reg {
        match self.carry {
            Some(r) => r,
            None => {
                let r = self.f.regs.push(ir::RegInfo {
                    name: "%cc.cf".into(),
                    ty: Ty::Pred,
                });
                self.carry = Some(r);
                r
            }
        }
    }

    fn emit(&mut self, kind: InstKind, guard: Option<(Reg, bool)>, span: Span) {
        let loc = ir::SrcLoc {
            line: span.line,
            col: span.col,
        };
        self.f.blocks[self.cur]
            .insts
            .push(ir::Inst { kind, guard, loc });
    }

    /// End the current block and continue in a fresh one.
    fn terminate(&mut self, term: Terminator) -> BlockId {
        let b = self.cur;
        self.f.blocks[b].term = Some(term);
        self.cur = self.f.blocks.push(ir::Block::default());
        b
    }

    fn new_block(&mut self) -> BlockId {
        self.f.blocks.push(ir::Block::default())
    }

    pub(crate) fn function_id(&self, name: &str, span: Span) -> Result<FuncId, Diagnostic> {
        if let Some(id) = self.ml.funcs.get(name) {
            return Ok(*id);
        }
        if self.ml.declared.contains(name) {
            return Err(self.diag(
                span,
                format!("function `{name}` is declared but not defined in this module (of the CUDA runtime's device functions only vprintf and __assertfail are provided; malloc, free and others are not)"),
            ));
        }
        Err(self.diag(span, format!("unknown function `{name}`")))
    }

    /// A register operand as a destination.
    pub(crate) fn dst(&mut self, op: &Operand, ty: Ty) -> Result<Reg, Diagnostic> {
        match op {
            Operand::Reg(name, span) | Operand::Symbol(name, span) => match self.lookup(name) {
                Some(Binding::Reg(r)) => Ok(r),
                Some(_) => Err(self.diag(*span, format!("`{name}` is not a register"))),
                None if special(name).is_some() => {
                    Err(self.diag(*span, "special registers are read-only"))
                }
                None => Err(self.diag(*span, format!("unknown register `{name}`"))),
            },
            Operand::Sink(_) => Ok(self.temp(ty)),
            other => Err(self
                .diag(other.span(), "expected a register")
                .expected("a destination register")),
        }
    }

    /// A source operand of type `ty`.
    pub(crate) fn src(&mut self, op: &Operand, ty: Ty) -> Result<ir::Value, Diagnostic> {
        use ir::Value;
        match op {
            Operand::Reg(name, span) | Operand::Symbol(name, span) => {
                if let Some(b) = self.lookup(name) {
                    return Ok(match b {
                        Binding::Reg(r) => Value::Reg(r),
                        other => {
                            let t = self.temp(Ty::U64);
                            let (sym, space) = self.symbol_of(other);
                            self.emit(InstKind::AddrOf { dst: t, sym, space }, None, *span);
                            Value::Reg(t)
                        }
                    });
                }
                if let Some(s) = special(name) {
                    let t = self.temp(
                        if matches!(s, ir::Special::Clock64 | ir::Special::GlobalTimer) {
                            Ty::U64
                        } else {
                            Ty::U32
                        },
                    );
                    self.emit(InstKind::ReadSpecial { dst: t, sreg: s }, None, *span);
                    return Ok(Value::Reg(t));
                }
                if let Some(id) = self.ml.funcs.get(name).copied() {
                    if self.ml.m.functions[id].is_kernel || self.ml.kernels.contains(&id) {
                        return Err(self.diag(*span, "the address of a kernel cannot be taken"));
                    }
                    let t = self.temp(Ty::U64);
                    self.emit(
                        InstKind::AddrOf {
                            dst: t,
                            sym: ir::Symbol::Function(id),
                            space: Space::Generic,
                        },
                        None,
                        *span,
                    );
                    return Ok(Value::Reg(t));
                }
                if self.ml.declared.contains(name) {
                    return Err(self.diag(
                        *span,
                        format!("`{name}` is declared but not defined in this module"),
                    ));
                }
                let what = if name.starts_with('%') {
                    "register"
                } else {
                    "name"
                };
                Err(self.diag(*span, format!("unknown {what} `{name}`")))
            }
            Operand::Int(v, span) => {
                if ty.is_float() {
                    // An integer literal for a float operand means its value.
                    let x = *v as f64;
                    return Ok(Value::Imm(match ty {
                        Ty::F32 => u64::from((x as f32).to_bits()),
                        Ty::F64 => x.to_bits(),
                        _ => return Err(self.diag(
                            *span,
                            "integer literal for a half-precision operand; use 0x bits with .b16",
                        )),
                    }));
                }
                Ok(Value::Imm(*v as u64))
            }
            Operand::F32Bits(b, span) => match ty {
                Ty::F64 => Ok(Value::Imm(f64::from(f32::from_bits(*b)).to_bits())),
                Ty::F16 | Ty::BF16 | Ty::F16x2 | Ty::BF16x2 => {
                    Err(self.diag(*span, "f32 literal for a half-precision operand"))
                }
                _ => Ok(Value::Imm(u64::from(*b))),
            },
            Operand::F64Bits(b, _) => match ty {
                Ty::F64 | Ty::B64 | Ty::U64 | Ty::S64 => Ok(Value::Imm(*b)),
                _ => Ok(Value::Imm(u64::from((f64::from_bits(*b) as f32).to_bits()))),
            },
            Operand::Neg(inner, span) => match &**inner {
                Operand::Int(v, _) => Ok(Value::Imm(v.wrapping_neg() as u64)),
                _ => Err(self.diag(*span, "negated operands are not supported here")),
            },
            other => Err(self
                .diag(other.span(), "unexpected operand")
                .expected("a register or a literal")),
        }
    }

    /// Reject a register whose declared type cannot be an operand of type
    /// `ty`, as ptxas does ("Arguments mismatch"): one of another size (a
    /// `.b64` register in `add.s32`), a float register in an integer
    /// operation, an integer (`.u`/`.s`) register in a float operation, or
    /// a predicate mixed with a value. Bit-size (`.b`) registers of the
    /// right size go anywhere. The size of a special register (`%tid.x`,
    /// read through a 32-bit temporary) is not checked, only its class.
    pub(crate) fn check_type(&self, op: &Operand, r: Reg, ty: Ty) -> Result<(), Diagnostic> {
        let info = &self.f.regs[r];
        // A declared register carries its own name; a special register or
        // a symbol's address comes in a temporary of another.
        let declared = matches!(op, Operand::Reg(n, _) | Operand::Symbol(n, _) if *n == info.name);
        let rt = info.ty;
        let bits = |t: Ty| matches!(t, Ty::B8 | Ty::B16 | Ty::B32 | Ty::B64);
        let clash = if rt == Ty::Pred || ty == Ty::Pred {
            rt != ty
        } else if declared && rt.bits() != ty.bits() {
            true
        } else if bits(rt) || bits(ty) {
            false
        } else {
            rt.is_float() != ty.is_float()
        };
        if clash {
            let name = match op {
                Operand::Reg(n, _) | Operand::Symbol(n, _) => n.as_str(),
                _ => "operand",
            };
            return Err(self.diag(
                op.span(),
                format!(
                    "`{name}` is a .{} register, but the instruction needs .{}",
                    rt, ty
                ),
            ));
        }
        Ok(())
    }

    /// A source that must be of type `ty` (arithmetic operands).
    pub(crate) fn typed_src(&mut self, op: &Operand, ty: Ty) -> Result<ir::Value, Diagnostic> {
        let v = self.src(op, ty)?;
        if let (ir::Value::Reg(r), Operand::Reg(..) | Operand::Symbol(..)) = (v, op) {
            self.check_type(op, r, ty)?;
        }
        Ok(v)
    }

    /// A destination that must hold type `ty`.
    pub(crate) fn typed_dst(&mut self, op: &Operand, ty: Ty) -> Result<Reg, Diagnostic> {
        let r = self.dst(op, ty)?;
        if !matches!(op, Operand::Sink(_)) {
            self.check_type(op, r, ty)?;
        }
        Ok(r)
    }

    /// A predicate source, possibly negated with `!`.
    pub(crate) fn pred_src(&mut self, op: &Operand) -> Result<(ir::Value, bool), Diagnostic> {
        match op {
            Operand::Not(inner, _) => Ok((self.src(inner, Ty::Pred)?, true)),
            other => Ok((self.src(other, Ty::Pred)?, false)),
        }
    }

    fn symbol_of(&self, b: Binding) -> (ir::Symbol, Space) {
        match b {
            Binding::Global(g) => (ir::Symbol::Global(g), self.ml.m.globals[g].space),
            Binding::Local(l) => (ir::Symbol::Local(l), Space::Local),
            Binding::KernelParam(i) => (ir::Symbol::KernelParam(i), Space::Param),
            Binding::Reg(_) => unreachable!("registers are not symbols"),
        }
    }

    /// `[base+off]` for an instruction in `space`; returns the space to use
    /// (a body `.param` variable lives in the local frame).
    pub(crate) fn address(
        &mut self,
        op: &Operand,
        space: Space,
    ) -> Result<(ir::Address, Space), Diagnostic> {
        let Operand::Address { base, offset, span } = op else {
            return Err(self
                .diag(op.span(), "expected an address")
                .expected("`[register+offset]` or `[variable]`"));
        };
        let mut space = space;
        let base = match base.as_deref() {
            None => ir::AddrBase::None,
            Some(Operand::Reg(name, s)) | Some(Operand::Symbol(name, s)) => {
                match self.lookup(name) {
                    Some(Binding::Reg(r)) => {
                        if space == Space::Param && !self.f.is_kernel {
                            space = Space::Local;
                        }
                        ir::AddrBase::Reg(r)
                    }
                    Some(b) => {
                        let (sym, own) = self.symbol_of(b);
                        // `ld.param [p]` of a body variable or device-function
                        // parameter reads the local frame.
                        if own == Space::Local && space == Space::Param {
                            space = Space::Local;
                        }
                        if space != Space::Generic && own != space {
                            return Err(self
                                .diag(*s, format!("`{name}` is in the {own} space, not {space}")));
                        }
                        ir::AddrBase::Symbol(sym)
                    }
                    None => return Err(self.diag(*s, format!("unknown name `{name}` in address"))),
                }
            }
            Some(other) => {
                return Err(self
                    .diag(other.span(), "bad address base")
                    .expected("a register or a variable"))
            }
        };
        let _ = span;
        Ok((
            ir::Address {
                base,
                offset: *offset,
            },
            space,
        ))
    }

    /// `bra` to a label (fixed up after the whole body is seen).
    fn branch_to(&mut self, label: &Operand, guard: Option<(Reg, bool)>) -> Result<(), Diagnostic> {
        let (name, span) = match label {
            Operand::Symbol(n, s) | Operand::Reg(n, s) => (n.clone(), *s),
            other => return Err(self.diag(other.span(), "expected a label")),
        };
        let block = match guard {
            None => self.terminate(Terminator::Jump(BlockId(0))),
            Some((pred, negate)) => {
                let next = self.new_block();
                let b = self.cur;
                self.f.blocks[b].term = Some(Terminator::Branch {
                    pred,
                    negate,
                    then: BlockId(0),
                    els: next,
                });
                self.cur = next;
                b
            }
        };
        self.fixups.push(Fixup {
            block,
            label: name,
            span,
            slot: 0,
        });
        Ok(())
    }

    /// `ret`/`exit`, possibly guarded.
    fn leave(&mut self, term: Terminator, guard: Option<(Reg, bool)>) {
        match guard {
            None => {
                self.terminate(term);
            }
            Some((pred, negate)) => {
                let out = self.new_block();
                self.f.blocks[out].term = Some(term);
                let next = self.new_block();
                self.f.blocks[self.cur].term = Some(Terminator::Branch {
                    pred,
                    negate,
                    then: out,
                    els: next,
                });
                self.cur = next;
            }
        }
    }
}

/// Special register by name.
pub(crate) fn special(name: &str) -> Option<ir::Special> {
    use ir::Special::*;
    let comp = |s: &str| match s {
        "x" => Some(0u8),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    };
    if let Some((base, c)) = name.split_once('.') {
        let c = comp(c)?;
        return Some(match base {
            "%tid" => Tid(c),
            "%ntid" => Ntid(c),
            "%ctaid" => Ctaid(c),
            "%nctaid" => Nctaid(c),
            _ => return None,
        });
    }
    if let Some(n) = name.strip_prefix("%envreg") {
        let n: u8 = n.parse().ok()?;
        return (n < 32).then_some(EnvReg(n));
    }
    Some(match name {
        "%tid" => Tid(0),
        "%ntid" => Ntid(0),
        "%ctaid" => Ctaid(0),
        "%nctaid" => Nctaid(0),
        "%laneid" => LaneId,
        "%warpid" => WarpId,
        "%nwarpid" => NWarpId,
        "%smid" => SmId,
        "%nsmid" => NSmId,
        "%gridid" => GridId,
        "%lanemask_eq" => LaneMaskEq,
        "%lanemask_le" => LaneMaskLe,
        "%lanemask_lt" => LaneMaskLt,
        "%lanemask_ge" => LaneMaskGe,
        "%lanemask_gt" => LaneMaskGt,
        "%clock" => Clock,
        "%clock64" => Clock64,
        "%globaltimer" => GlobalTimer,
        "%dynamic_smem_size" => DynamicSmemSize,
        "%total_smem_size" => TotalSmemSize,
        _ => return None,
    })
}
