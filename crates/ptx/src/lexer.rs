//! Tokens of PTX. The lexer works on bytes (PTX is ASCII) but only ever
//! stops on character boundaries, so token text can always be sliced out of
//! the source. Lexical errors become `Tok::Error` tokens rather than early
//! returns, so the parser reports whichever problem comes first in the file.

use crate::ast::Span;

/// Kinds of token. Text is not stored: slice the source with the span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok {
    /// `foo`, `$L__BB0_1`, `_Z3fooi`, `_`, `sm_80`.
    Ident,
    /// A dot-word: `.version`, `.u32`, `.global`, `.L1::no_allocate`, `.2d`.
    Dir,
    /// `%r1`, `%tid.x` (the component is included only for known special registers).
    Reg,
    /// Integer literal without sign (`u` suffix dropped).
    Int(u64),
    /// `0fXXXXXXXX`.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float such as `1.5`, `1e10`.
    F64(u64),
    /// `"..."`, span includes the quotes.
    Str,
    Comma,
    Semi,
    Colon,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Lt,
    Gt,
    Plus,
    Minus,
    Bang,
    Pipe,
    At,
    Eq,
    /// Something that is not a token; the message says why.
    Error(&'static str),
    Eof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: Tok,
    pub span: Span,
}

/// Special registers that take a `.x/.y/.z` (or `.w`) component suffix.
const VECTOR_SREGS: &[&str] = &[
    "tid",
    "ntid",
    "ctaid",
    "nctaid",
    "clusterid",
    "nclusterid",
    "cluster_ctaid",
    "cluster_nctaid",
];

pub struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

fn to_u32(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Self {
        Lexer {
            src,
            bytes: src.as_bytes(),
            pos: 0,
            line: 1,
            line_start: 0,
        }
    }

    /// All tokens up to and including `Eof` (handy for tests).
    pub fn tokenize(src: &str) -> Vec<Token> {
        let mut lx = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let t = lx.next_token();
            out.push(t);
            if t.kind == Tok::Eof {
                return out;
            }
        }
    }

    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos.checked_add(ahead)?).copied()
    }

    fn span_from(&self, start: usize, line: u32, line_start: usize) -> Span {
        Span {
            start: to_u32(start),
            end: to_u32(self.pos),
            line,
            col: to_u32(start.saturating_sub(line_start).saturating_add(1)),
        }
    }

    /// Advance over ASCII bytes while `f` holds (never crosses a newline
    /// unless `f` accepts it, in which case lines are counted).
    fn eat_while(&mut self, f: impl Fn(u8) -> bool) {
        while let Some(b) = self.peek_byte(0) {
            if !f(b) {
                break;
            }
            self.bump_byte(b);
        }
    }

    fn bump_byte(&mut self, b: u8) {
        self.pos += 1;
        if b == b'\n' {
            self.line = self.line.saturating_add(1);
            self.line_start = self.pos;
        }
    }

    /// Skip whitespace and comments. Returns an error token for an
    /// unterminated block comment.
    fn skip_trivia(&mut self) -> Option<Token> {
        loop {
            match (self.peek_byte(0), self.peek_byte(1)) {
                (Some(b), _) if b.is_ascii_whitespace() => self.bump_byte(b),
                (Some(b'/'), Some(b'/')) => self.eat_while(|b| b != b'\n'),
                (Some(b'/'), Some(b'*')) => {
                    let (start, line, ls) = (self.pos, self.line, self.line_start);
                    self.pos += 2;
                    loop {
                        match (self.peek_byte(0), self.peek_byte(1)) {
                            (Some(b'*'), Some(b'/')) => {
                                self.pos += 2;
                                break;
                            }
                            (Some(b), _) => self.bump_byte(b),
                            (None, _) => {
                                let mut span = self.span_from(start, line, ls);
                                span.end = span.start.saturating_add(2);
                                return Some(Token {
                                    kind: Tok::Error("unterminated block comment"),
                                    span,
                                });
                            }
                        }
                    }
                }
                _ => return None,
            }
        }
    }

    pub fn next_token(&mut self) -> Token {
        if let Some(err) = self.skip_trivia() {
            return err;
        }
        let (start, line, ls) = (self.pos, self.line, self.line_start);
        let Some(b) = self.peek_byte(0) else {
            return Token {
                kind: Tok::Eof,
                span: self.span_from(start, line, ls),
            };
        };
        let kind = match b {
            b'0'..=b'9' => self.number(),
            b'.' => self.dot_word(),
            b'%' => self.register(),
            b'"' => self.string(),
            _ if is_ident_start(b) => {
                self.eat_while(is_ident_char);
                Tok::Ident
            }
            _ => {
                self.pos += 1;
                match b {
                    b',' => Tok::Comma,
                    b';' => Tok::Semi,
                    b':' => Tok::Colon,
                    b'(' => Tok::LParen,
                    b')' => Tok::RParen,
                    b'[' => Tok::LBracket,
                    b']' => Tok::RBracket,
                    b'{' => Tok::LBrace,
                    b'}' => Tok::RBrace,
                    b'<' => Tok::Lt,
                    b'>' => Tok::Gt,
                    b'+' => Tok::Plus,
                    b'-' => Tok::Minus,
                    b'!' => Tok::Bang,
                    b'|' => Tok::Pipe,
                    b'@' => Tok::At,
                    b'=' => Tok::Eq,
                    _ => {
                        // Step over the whole character so spans stay on char boundaries.
                        let len = self
                            .src
                            .get(start..)
                            .and_then(|s| s.chars().next())
                            .map_or(1, char::len_utf8);
                        self.pos = start.saturating_add(len).min(self.bytes.len());
                        Tok::Error("unexpected character")
                    }
                }
            }
        };
        Token {
            kind,
            span: self.span_from(start, line, ls),
        }
    }

    /// `.word`, where a word may contain `::` (`.L2::cache_hint`) and may
    /// start with a digit (`.2d`).
    fn dot_word(&mut self) -> Tok {
        self.pos += 1;
        if !self.peek_byte(0).is_some_and(is_ident_char) {
            return Tok::Error("`.` must be followed by a name");
        }
        loop {
            self.eat_while(is_ident_char);
            let more = self.peek_byte(0) == Some(b':')
                && self.peek_byte(1) == Some(b':')
                && self.peek_byte(2).is_some_and(is_ident_char);
            if !more {
                return Tok::Dir;
            }
            self.pos += 2;
        }
    }

    fn register(&mut self) -> Tok {
        self.pos += 1;
        let name_start = self.pos;
        self.eat_while(is_ident_char);
        if self.pos == name_start {
            return Tok::Error("`%` must be followed by a register name");
        }
        let name = self.src.get(name_start..self.pos).unwrap_or("");
        let component = self.peek_byte(0) == Some(b'.')
            && self
                .peek_byte(1)
                .is_some_and(|c| matches!(c, b'x' | b'y' | b'z' | b'w'))
            && !self.peek_byte(2).is_some_and(is_ident_char);
        if component && VECTOR_SREGS.contains(&name) {
            self.pos += 2;
        }
        Tok::Reg
    }

    /// A string on one line; `\` escapes the next character.
    fn string(&mut self) -> Tok {
        self.pos += 1;
        loop {
            match self.peek_byte(0) {
                Some(b'"') => {
                    self.pos += 1;
                    return Tok::Str;
                }
                Some(b'\\') if self.peek_byte(1).is_some_and(|c| c != b'\n') => {
                    // Skip the backslash; the next char is handled below as ordinary.
                    self.pos += 1;
                    self.skip_char();
                }
                Some(b'\n') | None => return Tok::Error("unterminated string"),
                Some(_) => self.skip_char(),
            }
        }
    }

    /// Step over one (possibly multi-byte) character that is not a newline.
    fn skip_char(&mut self) {
        let len = self
            .src
            .get(self.pos..)
            .and_then(|s| s.chars().next())
            .map_or(1, char::len_utf8);
        self.pos = self.pos.saturating_add(len).min(self.bytes.len());
    }

    fn number(&mut self) -> Tok {
        let start = self.pos;
        let prefix = match (self.peek_byte(0), self.peek_byte(1)) {
            (Some(b'0'), Some(c))
                if matches!(c, b'x' | b'X' | b'b' | b'B' | b'f' | b'F' | b'd' | b'D') =>
            {
                Some(c.to_ascii_lowercase())
            }
            _ => None,
        };
        if let Some(p) = prefix {
            self.pos += 2;
            let digits_start = self.pos;
            self.eat_while(|c| c.is_ascii_alphanumeric() || c == b'_');
            let digits = self.src.get(digits_start..self.pos).unwrap_or("");
            return prefixed_literal(p, digits);
        }
        self.eat_while(|c| c.is_ascii_digit());
        let mut is_float = false;
        if self.peek_byte(0) == Some(b'.') && self.peek_byte(1).is_some_and(|c| c.is_ascii_digit())
        {
            is_float = true;
            self.pos += 1;
            self.eat_while(|c| c.is_ascii_digit());
        }
        if matches!(self.peek_byte(0), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.peek_byte(1), Some(b'+' | b'-')));
            if self.peek_byte(1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                is_float = true;
                self.pos += 1 + sign;
                self.eat_while(|c| c.is_ascii_digit());
            }
        }
        let body_end = self.pos;
        self.eat_while(|c| c.is_ascii_alphanumeric() || c == b'_');
        let suffix = self.src.get(body_end..self.pos).unwrap_or("");
        let body = self.src.get(start..body_end).unwrap_or("");
        if is_float {
            if !suffix.is_empty() {
                return Tok::Error("invalid floating-point literal");
            }
            return match body.parse::<f64>() {
                Ok(v) => Tok::F64(v.to_bits()),
                Err(_) => Tok::Error("invalid floating-point literal"),
            };
        }
        if !(suffix.is_empty() || suffix == "U" || suffix == "u") {
            return Tok::Error("invalid integer literal");
        }
        let (digits, radix) = if body.len() > 1 && body.starts_with('0') {
            (&body[1..], 8)
        } else {
            (body, 10)
        };
        int_literal(digits, radix)
    }
}

fn int_literal(digits: &str, radix: u32) -> Tok {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Tok::Error(match radix {
            2 => "invalid binary literal",
            8 => "invalid octal literal",
            16 => "invalid hexadecimal literal",
            _ => "invalid integer literal",
        });
    }
    match u64::from_str_radix(digits, radix) {
        Ok(v) => Tok::Int(v),
        Err(_) => Tok::Error("integer literal does not fit in 64 bits"),
    }
}

/// Literals with a `0x`, `0b`, `0f` or `0d` prefix; `digits` is everything
/// alphanumeric after the prefix.
fn prefixed_literal(prefix: u8, digits: &str) -> Tok {
    let strip_u = |d: &'_ str| d.strip_suffix(['U', 'u']).unwrap_or(d).to_string();
    match prefix {
        b'x' => int_literal(&strip_u(digits), 16),
        b'b' => int_literal(&strip_u(digits), 2),
        b'f' => match hex_exact(digits, 8) {
            Some(v) => Tok::F32(v as u32),
            None => Tok::Error("invalid `0f` float literal (expected exactly 8 hex digits)"),
        },
        _ => match hex_exact(digits, 16) {
            Some(v) => Tok::F64(v),
            None => Tok::Error("invalid `0d` float literal (expected exactly 16 hex digits)"),
        },
    }
}

fn hex_exact(digits: &str, n: usize) -> Option<u64> {
    if digits.len() != n || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        Lexer::tokenize(src).into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn words_and_registers() {
        assert_eq!(
            kinds("ld.global.nc.v4.f32 %tid.x, %r1.x"),
            vec![
                Tok::Ident,
                Tok::Dir,
                Tok::Dir,
                Tok::Dir,
                Tok::Dir,
                Tok::Reg,
                Tok::Comma,
                Tok::Reg,
                Tok::Dir,
                Tok::Eof
            ]
        );
        let toks = Lexer::tokenize(".L1::no_allocate .L2::128B");
        assert_eq!(toks[0].span.end - toks[0].span.start, 16);
        assert_eq!(toks[1].kind, Tok::Dir);
        assert_eq!(toks[2].kind, Tok::Eof);
    }

    #[test]
    fn literals() {
        assert_eq!(
            kinds("0x10 010 0b101 12U 0"),
            vec![
                Tok::Int(16),
                Tok::Int(8),
                Tok::Int(5),
                Tok::Int(12),
                Tok::Int(0),
                Tok::Eof
            ]
        );
        assert_eq!(kinds("0f3F800000"), vec![Tok::F32(0x3F80_0000), Tok::Eof]);
        assert_eq!(
            kinds("0d3FF0000000000000"),
            vec![Tok::F64(1.0f64.to_bits()), Tok::Eof]
        );
        assert_eq!(
            kinds("1.5 1e10 2E-3"),
            vec![
                Tok::F64(1.5f64.to_bits()),
                Tok::F64(1e10f64.to_bits()),
                Tok::F64(2e-3f64.to_bits()),
                Tok::Eof
            ]
        );
        assert!(matches!(kinds("0fZZ")[0], Tok::Error(_)));
        assert!(matches!(kinds("99999999999999999999999")[0], Tok::Error(_)));
        assert!(matches!(kinds("09")[0], Tok::Error(_)));
    }

    #[test]
    fn positions_and_errors() {
        let toks = Lexer::tokenize("a\n  /* x\n */ b é \"s");
        assert_eq!((toks[0].span.line, toks[0].span.col), (1, 1));
        assert_eq!((toks[1].span.line, toks[1].span.col), (3, 5));
        assert_eq!(toks[2].kind, Tok::Error("unexpected character"));
        assert_eq!(toks[3].kind, Tok::Error("unterminated string"));
        assert_eq!(
            kinds("/* never closed"),
            vec![Tok::Error("unterminated block comment"), Tok::Eof]
        );
    }
}
