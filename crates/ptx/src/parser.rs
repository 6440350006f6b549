//! Recursive-descent parser from tokens to `ast::Module`.
//!
//! The parser stops at the first error. Every loop consumes a token or
//! stops, and every recursion (blocks, operand vectors/lists, initialiser
//! lists) is bounded by `MAX_DEPTH`, so no input can hang it or overflow
//! the stack.

use crate::ast::*;
use crate::diag::{Diagnostic, Diagnostics};
use crate::lexer::{Lexer, Tok, Token};
use std::collections::VecDeque;

/// Deepest nesting of `{}` blocks, operand lists or initialiser lists.
pub const MAX_DEPTH: u32 = 256;

type PResult<T> = Result<T, Diagnostic>;

/// Parse a whole PTX module.
pub fn parse(src: &str) -> Result<Module, Diagnostics> {
    Parser::new(src).module().map_err(Diagnostics::from)
}

/// Directives allowed between a function's parameters and its body.
const PERF_DIRECTIVES: &[&str] = &[
    "maxntid",
    "reqntid",
    "minnctapersm",
    "maxnctapersm",
    "maxnreg",
    "noreturn",
    "maxclusterrank",
    "reqnctapercluster",
    "explicitcluster",
    "blocksareclusters",
];

fn space_of(name: &str) -> Option<StateSpace> {
    Some(match name {
        "reg" => StateSpace::Reg,
        "sreg" => StateSpace::Sreg,
        "const" => StateSpace::Const,
        "global" => StateSpace::Global,
        "local" => StateSpace::Local,
        "param" => StateSpace::Param,
        "shared" => StateSpace::Shared,
        "tex" => StateSpace::Tex,
        _ => return None,
    })
}

fn linkage_of(name: &str) -> Option<Linkage> {
    Some(match name {
        "visible" => Linkage::Visible,
        "extern" => Linkage::Extern,
        "weak" => Linkage::Weak,
        "common" => Linkage::Common,
        _ => return None,
    })
}

fn vector_of(name: &str) -> Option<u32> {
    match name {
        "v2" => Some(2),
        "v4" => Some(4),
        "v8" => Some(8),
        _ => None,
    }
}

/// A signed literal offset (`+8`, `-4`, `+-4`) checked into an i64.
fn signed_offset(neg: bool, v: u64) -> Option<i64> {
    let v = i128::from(v);
    i64::try_from(if neg { -v } else { v }).ok()
}

struct Parser<'a> {
    src: &'a str,
    lex: Lexer<'a>,
    /// Look-ahead tokens (at most two are ever needed).
    look: VecDeque<Token>,
    /// Span of the last consumed token.
    prev: Span,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        Parser {
            src,
            lex: Lexer::new(src),
            look: VecDeque::with_capacity(4),
            prev: Span::default(),
        }
    }

    // ---- token plumbing ----

    fn peek_at(&mut self, n: usize) -> Token {
        while self.look.len() <= n {
            let t = self.lex.next_token();
            self.look.push_back(t);
        }
        self.look.get(n).copied().unwrap_or(Token {
            kind: Tok::Eof,
            span: self.prev,
        })
    }

    fn peek(&mut self) -> Token {
        self.peek_at(0)
    }

    fn bump(&mut self) -> Token {
        let t = self.peek();
        // Eof stays in the buffer so repeated peeks keep seeing it.
        if t.kind != Tok::Eof {
            self.look.pop_front();
        }
        self.prev = t.span;
        t
    }

    fn text(&self, t: Token) -> &'a str {
        self.src
            .get(t.span.start as usize..t.span.end as usize)
            .unwrap_or("")
    }

    /// Name of a `Dir` token without the dot, or "" for other tokens.
    fn dir_name(&self, t: Token) -> &'a str {
        if t.kind == Tok::Dir {
            self.text(t).get(1..).unwrap_or("")
        } else {
            ""
        }
    }

    fn peek_dir(&mut self) -> &'a str {
        let t = self.peek();
        self.dir_name(t)
    }

    fn eat(&mut self, kind: Tok) -> bool {
        if self.peek().kind == kind {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, kind: Tok, what: &str) -> PResult<Token> {
        let t = self.peek();
        if t.kind == kind {
            Ok(self.bump())
        } else {
            Err(self.unexpected(t, what))
        }
    }

    fn expect_int(&mut self, what: &str) -> PResult<(u64, Token)> {
        let t = self.peek();
        match t.kind {
            Tok::Int(v) => Ok((v, self.bump())),
            _ => Err(self.unexpected(t, what)),
        }
    }

    fn expect_u32(&mut self, what: &str) -> PResult<u32> {
        let (v, t) = self.expect_int(what)?;
        u32::try_from(v).map_err(|_| {
            self.error(t.span, "value does not fit in 32 bits")
                .expected(what.to_string())
        })
    }

    fn error(&self, span: Span, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.src, span, msg)
    }

    /// The diagnostic for finding `t` where `expected` was wanted. A lexer
    /// error token reports its own message.
    fn unexpected(&self, t: Token, expected: &str) -> Diagnostic {
        let msg = match t.kind {
            Tok::Error(m) => m.to_string(),
            Tok::Eof => "unexpected end of input".to_string(),
            _ => "unexpected token".to_string(),
        };
        self.error(t.span, msg).expected(expected.to_string())
    }

    fn check_depth(&self, depth: u32, t: Token) -> PResult<()> {
        if depth >= MAX_DEPTH {
            Err(self.error(
                t.span,
                format!("nesting too deep (more than {MAX_DEPTH} levels)"),
            ))
        } else {
            Ok(())
        }
    }

    /// Skip every token on the same line as `line` (for `.loc` and `.file`).
    fn skip_line(&mut self, line: u32) -> PResult<()> {
        loop {
            let t = self.peek();
            if t.kind == Tok::Eof || t.span.line != line {
                return Ok(());
            }
            if let Tok::Error(_) = t.kind {
                return Err(self.unexpected(t, "debug information"));
            }
            self.bump();
        }
    }

    // ---- module ----

    fn module(&mut self) -> PResult<Module> {
        let mut m = Module {
            version: (0, 0),
            target: Vec::new(),
            address_size: 64,
            items: Vec::new(),
        };
        loop {
            let t = self.peek();
            if t.kind == Tok::Eof {
                return Ok(m);
            }
            if t.kind != Tok::Dir {
                return Err(
                    self.unexpected(t, "a directive such as `.entry`, `.func` or `.global`")
                );
            }
            match self.dir_name(t) {
                "version" => m.version = self.version()?,
                "target" => m.target = self.target()?,
                "address_size" => {
                    self.bump();
                    m.address_size = self.expect_u32("an address size (`32` or `64`)")?;
                }
                "file" | "loc" => {
                    self.bump();
                    self.skip_line(t.span.line)?;
                }
                "section" => self.section()?,
                "pragma" => {
                    self.pragma()?;
                }
                "visible" | "extern" | "weak" | "common" | "entry" | "func" | "global"
                | "const" | "shared" | "local" | "tex" => self.item(&mut m.items)?,
                name => {
                    return Err(self
                        .error(
                            t.span,
                            format!("unknown directive `.{name}` at module scope"),
                        )
                        .expected(
                            "a module directive such as `.entry`, `.func`, `.global`".to_string(),
                        ))
                }
            }
        }
    }

    fn version(&mut self) -> PResult<(u32, u32)> {
        self.bump();
        let t = self.peek();
        let parsed = match t.kind {
            Tok::F64(_) | Tok::Int(_) => {
                let text = self.text(t);
                let (a, b) = text.split_once('.').unwrap_or((text, "0"));
                a.parse::<u32>().ok().zip(b.parse::<u32>().ok())
            }
            _ => None,
        };
        match parsed {
            Some(v) => {
                self.bump();
                Ok(v)
            }
            None => Err(self.unexpected(t, "a version such as `8.0`")),
        }
    }

    fn target(&mut self) -> PResult<Vec<String>> {
        self.bump();
        let mut out = Vec::new();
        loop {
            let t = self.expect(Tok::Ident, "a target such as `sm_80`")?;
            out.push(self.text(t).to_string());
            if !self.eat(Tok::Comma) {
                return Ok(out);
            }
        }
    }

    /// `.section .debug_xxx { ... }`: skipped, braces balanced.
    fn section(&mut self) -> PResult<()> {
        self.bump();
        let name = self.peek();
        if !matches!(name.kind, Tok::Dir | Tok::Ident) {
            return Err(self.unexpected(name, "a section name such as `.debug_info`"));
        }
        self.bump();
        self.expect(Tok::LBrace, "`{`")?;
        let mut depth: u64 = 1;
        loop {
            let t = self.bump();
            match t.kind {
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Tok::Eof => return Err(self.unexpected(t, "`}` closing the `.section`")),
                Tok::Error(_) => return Err(self.unexpected(t, "section contents")),
                _ => {}
            }
        }
    }

    /// `.pragma "a", "b";` with the `;`.
    fn pragma(&mut self) -> PResult<PerfDirective> {
        let start = self.bump();
        let mut strings = Vec::new();
        loop {
            let t = self.expect(Tok::Str, "a string such as `\"nounroll\"`")?;
            let text = self.text(t);
            strings.push(
                text.get(1..text.len().saturating_sub(1))
                    .unwrap_or("")
                    .to_string(),
            );
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        let end = self.expect(Tok::Semi, "`;`")?;
        Ok(PerfDirective {
            name: "pragma".into(),
            values: Vec::new(),
            strings,
            span: start.span.to(end.span),
        })
    }

    /// A function or module-scope variable, after optional linkage.
    fn item(&mut self, items: &mut Vec<Item>) -> PResult<()> {
        let start = self.peek();
        let linkage = self.linkage();
        let t = self.peek();
        match self.dir_name(t) {
            "entry" | "func" => {
                let f = self.function(linkage, start.span)?;
                items.push(Item::Function(f));
            }
            name if space_of(name).is_some() => {
                for v in self.var_decls(linkage)? {
                    items.push(Item::Var(v));
                }
            }
            _ => {
                return Err(
                    self.unexpected(t, "`.entry`, `.func` or a state space such as `.global`")
                )
            }
        }
        Ok(())
    }

    fn linkage(&mut self) -> Linkage {
        let mut linkage = Linkage::None;
        while let Some(l) = linkage_of(self.peek_dir()) {
            self.bump();
            linkage = l;
        }
        linkage
    }

    /// `.attribute( ... )`: skipped with balanced parentheses.
    fn skip_attribute(&mut self) -> PResult<()> {
        while self.peek_dir() == "attribute" {
            self.bump();
            self.expect(Tok::LParen, "`(`")?;
            let mut depth: u64 = 1;
            while depth > 0 {
                let t = self.bump();
                match t.kind {
                    Tok::LParen => depth += 1,
                    Tok::RParen => depth -= 1,
                    Tok::Eof | Tok::Error(_) | Tok::Semi => return Err(self.unexpected(t, "`)`")),
                    _ => {}
                }
            }
        }
        Ok(())
    }

    // ---- functions ----

    fn function(&mut self, linkage: Linkage, start: Span) -> PResult<Function> {
        let kw = self.bump();
        let kind = if self.dir_name(kw) == "entry" {
            FunctionKind::Entry
        } else {
            FunctionKind::Func
        };
        self.skip_attribute()?;
        let returns = if kind == FunctionKind::Func && self.peek().kind == Tok::LParen {
            self.param_list()?
        } else {
            Vec::new()
        };
        let name_tok = self.expect(Tok::Ident, "a function name")?;
        let params = if self.peek().kind == Tok::LParen {
            self.param_list()?
        } else {
            Vec::new()
        };
        let mut directives = Vec::new();
        loop {
            let t = self.peek();
            let name = self.dir_name(t);
            if name == "pragma" {
                directives.push(self.pragma()?);
            } else if PERF_DIRECTIVES.contains(&name) {
                directives.push(self.perf_directive()?);
            } else {
                break;
            }
        }
        let t = self.peek();
        let body = match t.kind {
            Tok::Semi => {
                self.bump();
                None
            }
            Tok::LBrace => {
                self.bump();
                Some(self.block_body(1)?)
            }
            _ => {
                let what = "`{`, `;` or a directive such as `.maxntid`";
                return Err(if t.kind == Tok::Dir {
                    self.error(
                        t.span,
                        format!("unknown function directive `{}`", self.text(t)),
                    )
                    .expected(what.to_string())
                } else {
                    self.unexpected(t, what)
                });
            }
        };
        Ok(Function {
            kind,
            linkage,
            name: self.text(name_tok).to_string(),
            returns,
            params,
            body,
            directives,
            span: start.to(self.prev),
            name_span: name_tok.span,
        })
    }

    /// `.maxntid 256, 1, 1` and friends.
    fn perf_directive(&mut self) -> PResult<PerfDirective> {
        let t = self.bump();
        let mut values = Vec::new();
        if let Tok::Int(_) = self.peek().kind {
            loop {
                values.push(self.expect_int("an integer")?.0);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        Ok(PerfDirective {
            name: self.dir_name(t).to_string(),
            values,
            strings: Vec::new(),
            span: t.span.to(self.prev),
        })
    }

    fn param_list(&mut self) -> PResult<Vec<Param>> {
        self.expect(Tok::LParen, "`(`")?;
        let mut out = Vec::new();
        if self.eat(Tok::RParen) {
            return Ok(out);
        }
        loop {
            out.push(self.param()?);
            let t = self.peek();
            match t.kind {
                Tok::Comma => {
                    self.bump();
                }
                Tok::RParen => {
                    self.bump();
                    return Ok(out);
                }
                _ => return Err(self.unexpected(t, "`,` or `)`")),
            }
        }
    }

    fn param(&mut self) -> PResult<Param> {
        let start = self.peek();
        let space = match self.dir_name(start) {
            "param" => StateSpace::Param,
            "reg" => StateSpace::Reg,
            _ => return Err(self.unexpected(start, "`.param` or `.reg`")),
        };
        self.bump();
        let (mut ty, mut vector, mut align) = (None, None, None);
        let (mut ptr, mut ptr_space, mut ptr_align) = (false, None, None);
        loop {
            let t = self.peek();
            if t.kind != Tok::Dir {
                break;
            }
            let name = self.dir_name(t);
            self.bump();
            if name == "align" {
                let a = self.expect_u32("an alignment")?;
                if ptr {
                    ptr_align = Some(a)
                } else {
                    align = Some(a)
                }
            } else if name == "ptr" {
                ptr = true;
            } else if let (true, Some(s)) = (ptr, space_of(name)) {
                ptr_space = Some(s);
            } else if let Some(n) = vector_of(name) {
                vector = Some(n);
            } else if let Some(tt) = Type::from_name(name) {
                ty = Some(tt);
            } else {
                return Err(self.unexpected(t, "a type such as `.u32`"));
            }
        }
        let name_tok = self.peek();
        let Some(ty) = ty else {
            return Err(self.unexpected(name_tok, "a type such as `.u32`"));
        };
        if !matches!(name_tok.kind, Tok::Ident | Tok::Reg) {
            return Err(self.unexpected(name_tok, "a parameter name"));
        }
        self.bump();
        let mut array = None;
        if self.peek().kind == Tok::LBracket {
            let dims = self.dims()?;
            let [Some(n)] = dims.as_slice() else {
                return Err(self.error(
                    name_tok.span.to(self.prev),
                    "a parameter array must have exactly one sized dimension",
                ));
            };
            array = Some(*n);
        }
        Ok(Param {
            space,
            ty,
            vector,
            align,
            name: self.text(name_tok).to_string(),
            array,
            ptr_space,
            ptr_align,
            span: start.span.to(self.prev),
        })
    }

    /// `[4][8]` or `[]`: dimensions, checking their product fits in 64 bits.
    fn dims(&mut self) -> PResult<Vec<Option<u64>>> {
        let mut dims = Vec::new();
        let mut total: u64 = 1;
        while self.peek().kind == Tok::LBracket {
            let open = self.bump();
            if self.eat(Tok::RBracket) {
                dims.push(None);
                continue;
            }
            let (n, _) = self.expect_int("an array size or `]`")?;
            self.expect(Tok::RBracket, "`]`")?;
            total = total.checked_mul(n).ok_or_else(|| {
                self.error(open.span.to(self.prev), "array size overflows 64 bits")
            })?;
            dims.push(Some(n));
        }
        Ok(dims)
    }

    // ---- variables ----

    /// `.global .align 4 .b8 a[4] = {...}, b;` after linkage; one decl per name.
    fn var_decls(&mut self, linkage: Linkage) -> PResult<Vec<VarDecl>> {
        let kw = self.bump();
        let Some(space) = space_of(self.dir_name(kw)) else {
            return Err(self.unexpected(kw, "a state space such as `.global`"));
        };
        let (mut ty, mut vector, mut align) = (None, None, None);
        loop {
            self.skip_attribute()?;
            let t = self.peek();
            if t.kind != Tok::Dir {
                break;
            }
            let name = self.dir_name(t);
            self.bump();
            if name == "align" {
                align = Some(self.expect_u32("an alignment")?);
            } else if let Some(n) = vector_of(name) {
                vector = Some(n);
            } else if let Some(tt) = Type::from_name(name) {
                ty = Some(tt);
            } else {
                return Err(self.unexpected(t, "a type such as `.u32`"));
            }
        }
        let Some(ty) = ty else {
            let t = self.peek();
            return Err(self.unexpected(t, "a type such as `.u32`"));
        };
        let mut out = Vec::new();
        loop {
            let name_tok = self.peek();
            if !matches!(name_tok.kind, Tok::Ident | Tok::Reg) {
                return Err(self.unexpected(name_tok, "a variable name"));
            }
            self.bump();
            let dims = self.dims()?;
            let init = if self.eat(Tok::Eq) {
                Some(self.initializer(0)?)
            } else {
                None
            };
            out.push(VarDecl {
                space,
                linkage,
                align,
                vector,
                ty,
                name: self.text(name_tok).to_string(),
                dims,
                init,
                span: name_tok.span.to(self.prev),
            });
            let t = self.peek();
            match t.kind {
                Tok::Comma => {
                    self.bump();
                }
                Tok::Semi => {
                    self.bump();
                    return Ok(out);
                }
                _ => return Err(self.unexpected(t, "`;`")),
            }
        }
    }

    fn initializer(&mut self, depth: u32) -> PResult<Initializer> {
        let t = self.peek();
        if t.kind != Tok::LBrace {
            return self.init_scalar();
        }
        self.check_depth(depth, t)?;
        self.bump();
        let mut items = Vec::new();
        if self.eat(Tok::RBrace) {
            return Ok(Initializer::List(items));
        }
        loop {
            items.push(self.initializer(depth + 1)?);
            let t = self.peek();
            match t.kind {
                Tok::Comma => {
                    self.bump();
                }
                Tok::RBrace => {
                    self.bump();
                    return Ok(Initializer::List(items));
                }
                _ => return Err(self.unexpected(t, "`,` or `}`")),
            }
        }
    }

    fn init_scalar(&mut self) -> PResult<Initializer> {
        const WHAT: &str = "an initial value (number, symbol or `{`)";
        let neg = self.eat(Tok::Minus);
        let t = self.peek();
        let sign = if neg { -1.0 } else { 1.0 };
        let value = match t.kind {
            Tok::Int(v) => Initializer::Int(if neg { -i128::from(v) } else { i128::from(v) }),
            Tok::F32(b) => Initializer::Float(sign * f64::from(f32::from_bits(b))),
            Tok::F64(b) => Initializer::Float(sign * f64::from_bits(b)),
            Tok::Ident if !neg => return self.init_symbol(),
            _ => return Err(self.unexpected(t, WHAT)),
        };
        self.bump();
        Ok(value)
    }

    /// `sym`, `sym+8`, `generic(sym)`, `generic(sym)+8`.
    fn init_symbol(&mut self) -> PResult<Initializer> {
        let t = self.bump();
        let (name, generic) = if self.text(t) == "generic" && self.peek().kind == Tok::LParen {
            self.bump();
            let n = self.expect(Tok::Ident, "a variable name")?;
            self.expect(Tok::RParen, "`)`")?;
            (self.text(n).to_string(), true)
        } else {
            (self.text(t).to_string(), false)
        };
        let mut offset = 0;
        let op = self.peek().kind;
        if op == Tok::Plus || op == Tok::Minus {
            self.bump();
            let (v, vt) = self.expect_int("an integer offset")?;
            offset = signed_offset(op == Tok::Minus, v)
                .ok_or_else(|| self.error(vt.span, "offset does not fit in 64 bits"))?;
        }
        Ok(Initializer::Symbol {
            name,
            offset,
            generic,
        })
    }

    // ---- bodies ----

    /// Statements up to and including the closing `}`.
    fn block_body(&mut self, depth: u32) -> PResult<Vec<Statement>> {
        let mut out = Vec::new();
        loop {
            let t = self.peek();
            match t.kind {
                Tok::RBrace => {
                    self.bump();
                    return Ok(out);
                }
                Tok::Eof => return Err(self.unexpected(t, "`}`")),
                _ => self.statement(&mut out, depth)?,
            }
        }
    }

    fn statement(&mut self, out: &mut Vec<Statement>, depth: u32) -> PResult<()> {
        let t = self.peek();
        match t.kind {
            Tok::LBrace => {
                self.check_depth(depth, t)?;
                self.bump();
                out.push(Statement::Block(self.block_body(depth + 1)?));
            }
            Tok::At => out.push(Statement::Inst(self.instruction()?)),
            Tok::Ident if self.peek_at(1).kind == Tok::Colon => {
                self.bump();
                let colon = self.bump();
                out.push(Statement::Label {
                    name: self.text(t).to_string(),
                    span: t.span.to(colon.span),
                });
            }
            Tok::Ident => out.push(Statement::Inst(self.instruction()?)),
            Tok::Dir => self.body_directive(out, t)?,
            _ => return Err(self.unexpected(t, "an instruction, a label, a declaration or `}`")),
        }
        Ok(())
    }

    fn body_directive(&mut self, out: &mut Vec<Statement>, t: Token) -> PResult<()> {
        match self.dir_name(t) {
            "reg" => self.reg_decl(out)?,
            "loc" | "file" => {
                self.bump();
                self.skip_line(t.span.line)?;
            }
            "pragma" => out.push(Statement::Directive(self.pragma()?)),
            "callprototype" => out.push(Statement::Directive(self.skip_to_semi()?)),
            "calltargets" | "branchtargets" => out.push(Statement::Directive(self.target_list()?)),
            name if linkage_of(name).is_some() || space_of(name).is_some() => {
                let linkage = self.linkage();
                for v in self.var_decls(linkage)? {
                    out.push(Statement::Var(v));
                }
            }
            name => {
                return Err(self
                    .error(
                        t.span,
                        format!("unknown directive `.{name}` in a function body"),
                    )
                    .expected("an instruction, a label or a declaration".to_string()))
            }
        }
        Ok(())
    }

    /// `.callprototype ...;`: kept as a directive with no arguments.
    fn skip_to_semi(&mut self) -> PResult<PerfDirective> {
        let start = self.bump();
        loop {
            let t = self.bump();
            match t.kind {
                Tok::Semi => break,
                Tok::Eof | Tok::Error(_) | Tok::LBrace | Tok::RBrace => {
                    return Err(self.unexpected(t, "`;`"))
                }
                _ => {}
            }
        }
        Ok(PerfDirective {
            name: self.dir_name(start).to_string(),
            values: Vec::new(),
            strings: Vec::new(),
            span: start.span.to(self.prev),
        })
    }

    /// `.calltargets f, g;` / `.branchtargets L1, L2;`: names in `strings`.
    fn target_list(&mut self) -> PResult<PerfDirective> {
        let start = self.bump();
        let mut strings = Vec::new();
        loop {
            let t = self.expect(Tok::Ident, "a label or function name")?;
            strings.push(self.text(t).to_string());
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        self.expect(Tok::Semi, "`;` or `,`")?;
        Ok(PerfDirective {
            name: self.dir_name(start).to_string(),
            values: Vec::new(),
            strings,
            span: start.span.to(self.prev),
        })
    }

    /// `.reg .b32 %r<10>, %x;`: one statement per name.
    fn reg_decl(&mut self, out: &mut Vec<Statement>) -> PResult<()> {
        self.bump();
        let (mut ty, mut vector) = (None, None);
        loop {
            let t = self.peek();
            if t.kind != Tok::Dir {
                break;
            }
            let name = self.dir_name(t);
            self.bump();
            if name == "align" {
                self.expect_u32("an alignment")?;
            } else if let Some(n) = vector_of(name) {
                vector = Some(n);
            } else if let Some(tt) = Type::from_name(name) {
                ty = Some(tt);
            } else {
                return Err(self.unexpected(t, "a type such as `.b32`"));
            }
        }
        let Some(ty) = ty else {
            let t = self.peek();
            return Err(self.unexpected(t, "a type such as `.b32`"));
        };
        loop {
            let name_tok = self.peek();
            if !matches!(name_tok.kind, Tok::Reg | Tok::Ident) {
                return Err(self.unexpected(name_tok, "a register name such as `%r`"));
            }
            self.bump();
            let mut count = None;
            if self.eat(Tok::Lt) {
                count = Some(self.expect_u32("a register count")?);
                self.expect(Tok::Gt, "`>`")?;
            }
            out.push(Statement::Reg {
                ty,
                vector,
                name: self.text(name_tok).to_string(),
                count,
                span: name_tok.span.to(self.prev),
            });
            let t = self.peek();
            match t.kind {
                Tok::Comma => {
                    self.bump();
                }
                Tok::Semi => {
                    self.bump();
                    return Ok(());
                }
                _ => return Err(self.unexpected(t, "`,` or `;`")),
            }
        }
    }

    // ---- instructions ----

    fn instruction(&mut self) -> PResult<Instruction> {
        let start = self.peek();
        let mut guard = None;
        if self.eat(Tok::At) {
            let neg = self.eat(Tok::Bang);
            let p = self.peek();
            if !matches!(p.kind, Tok::Reg | Tok::Ident) {
                return Err(self.unexpected(p, "a predicate register such as `%p1`"));
            }
            self.bump();
            guard = Some((self.text(p).to_string(), neg));
        }
        let op = self.expect(Tok::Ident, "an instruction opcode")?;
        let mut modifiers = Vec::new();
        // Modifiers are written without spaces: `ld.global.f32`.
        while self.peek().kind == Tok::Dir && self.peek().span.start == self.prev.end {
            let m = self.bump();
            modifiers.push(self.dir_name(m).to_string());
        }
        let opcode_span = op.span.to(self.prev);
        let mut operands = Vec::new();
        if self.peek().kind != Tok::Semi {
            loop {
                operands.push(self.operand(0)?);
                let t = self.peek();
                match t.kind {
                    Tok::Comma => {
                        self.bump();
                    }
                    Tok::Semi => break,
                    _ => return Err(self.unexpected(t, "`,` or `;`")),
                }
            }
        }
        let span = start.span.to(self.prev);
        self.bump(); // the `;`
        Ok(Instruction {
            guard,
            opcode: self.text(op).to_string(),
            modifiers,
            operands,
            span,
            opcode_span,
        })
    }

    /// An operand, including `%p|%q` pairs.
    fn operand(&mut self, depth: u32) -> PResult<Operand> {
        let t = self.peek();
        self.check_depth(depth, t)?;
        let first = self.primary(depth)?;
        if self.eat(Tok::Pipe) {
            let second = self.primary(depth)?;
            let span = first.span().to(second.span());
            return Ok(Operand::Pair(Box::new(first), Box::new(second), span));
        }
        Ok(first)
    }

    fn primary(&mut self, depth: u32) -> PResult<Operand> {
        const WHAT: &str = "an operand";
        let t = self.peek();
        let s = t.span;
        let op = match t.kind {
            Tok::Reg => Operand::Reg(self.text(t).to_string(), s),
            Tok::Ident if self.text(t) == "_" => Operand::Sink(s),
            Tok::Ident => Operand::Symbol(self.text(t).to_string(), s),
            Tok::Int(v) => Operand::Int(i128::from(v), s),
            Tok::F32(b) => Operand::F32Bits(b, s),
            Tok::F64(b) => Operand::F64Bits(b, s),
            Tok::Minus => {
                self.bump();
                self.check_depth(depth + 1, t)?;
                return Ok(match self.primary(depth + 1)? {
                    Operand::Int(v, vs) => Operand::Int(-v, s.to(vs)),
                    Operand::F32Bits(b, vs) => Operand::F32Bits(b ^ 0x8000_0000, s.to(vs)),
                    Operand::F64Bits(b, vs) => Operand::F64Bits(b ^ (1 << 63), s.to(vs)),
                    inner => {
                        let span = s.to(inner.span());
                        Operand::Neg(Box::new(inner), span)
                    }
                });
            }
            Tok::Bang => {
                self.bump();
                self.check_depth(depth + 1, t)?;
                let inner = self.primary(depth + 1)?;
                let span = s.to(inner.span());
                return Ok(Operand::Not(Box::new(inner), span));
            }
            Tok::LBracket => return self.address(),
            Tok::LBrace => {
                let (items, span) = self.operand_list(Tok::RBrace, depth, "`,` or `}`")?;
                if items.is_empty() {
                    return Err(self
                        .error(span, "empty vector operand")
                        .expected(WHAT.to_string()));
                }
                return Ok(Operand::Vector(items, span));
            }
            Tok::LParen => {
                let (items, span) = self.operand_list(Tok::RParen, depth, "`,` or `)`")?;
                return Ok(Operand::List(items, span));
            }
            _ => return Err(self.unexpected(t, WHAT)),
        };
        self.bump();
        Ok(op)
    }

    /// `{a, b}` or `(a, b)`; the opening token is next. `()` is allowed.
    fn operand_list(
        &mut self,
        close: Tok,
        depth: u32,
        what: &str,
    ) -> PResult<(Vec<Operand>, Span)> {
        let open = self.bump();
        let mut items = Vec::new();
        if !self.eat(close) {
            loop {
                items.push(self.operand(depth + 1)?);
                let t = self.peek();
                if t.kind == Tok::Comma {
                    self.bump();
                } else if t.kind == close {
                    self.bump();
                    break;
                } else {
                    return Err(self.unexpected(t, what));
                }
            }
        }
        Ok((items, open.span.to(self.prev)))
    }

    /// `[%rd1]`, `[%rd1+4]`, `[%rd1+-4]`, `[%rd1-4]`, `[sym+8]`, `[0x100]`.
    fn address(&mut self) -> PResult<Operand> {
        let open = self.bump();
        let t = self.peek();
        let mut base = None;
        let mut offset = 0;
        match t.kind {
            Tok::Reg => base = Some(Box::new(Operand::Reg(self.text(t).to_string(), t.span))),
            Tok::Ident => base = Some(Box::new(Operand::Symbol(self.text(t).to_string(), t.span))),
            Tok::Int(_) | Tok::Minus => offset = self.address_offset(false)?,
            _ => return Err(self.unexpected(t, "an address such as `%rd1`, `sym` or an integer")),
        }
        if base.is_some() {
            self.bump();
            let k = self.peek().kind;
            if k == Tok::Plus || k == Tok::Minus {
                self.bump();
                offset = self.address_offset(k == Tok::Minus)?;
            }
        }
        self.expect(Tok::RBracket, "`]` or `+offset`")?;
        Ok(Operand::Address {
            base,
            offset,
            span: open.span.to(self.prev),
        })
    }

    /// An integer with optional `-` (negated again if `neg`).
    fn address_offset(&mut self, neg: bool) -> PResult<i64> {
        let neg = neg ^ self.eat(Tok::Minus);
        let (v, t) = self.expect_int("an integer offset")?;
        signed_offset(neg, v)
            .ok_or_else(|| self.error(t.span, "address offset does not fit in 64 bits"))
    }
}
