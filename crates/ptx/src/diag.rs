//! Diagnostics: every problem with PTX input is reported with where it is
//! (line:column), the offending text and, when known, what was expected.

use crate::ast::Span;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub span: Span,
    /// What is wrong, e.g. "unsupported instruction `tex.2d`".
    pub message: String,
    /// The source text under `span` (at most one line, trimmed to 80 chars).
    pub found: String,
    /// What would have been accepted, e.g. "`;` or `,`".
    pub expected: Option<String>,
}

impl Diagnostic {
    pub fn new(src: &str, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            span,
            message: message.into(),
            found: excerpt(src, span),
            expected: None,
        }
    }

    pub fn expected(mut self, what: impl Into<String>) -> Self {
        self.expected = Some(what.into());
        self
    }

    /// Render for a person: `file:line:col: error: message`, the source line
    /// and a caret under the offending text.
    pub fn render(&self, file: &str, src: &str) -> String {
        let mut out = format!(
            "{}:{}:{}: error: {}",
            file, self.span.line, self.span.col, self.message
        );
        if let Some(e) = &self.expected {
            out.push_str(&format!(" (expected {e})"));
        }
        if let Some(line) = src.lines().nth(self.span.line.saturating_sub(1) as usize) {
            let line = line.replace('\t', " ");
            let shown: String = line.chars().take(160).collect();
            out.push_str(&format!("\n {:>5} | {}\n       | ", self.span.line, shown));
            let col = self.span.col.saturating_sub(1) as usize;
            let width = (self.span.end.saturating_sub(self.span.start) as usize)
                .clamp(1, shown.len().saturating_sub(col).max(1));
            out.push_str(&" ".repeat(col.min(shown.len())));
            out.push_str(&"^".repeat(width));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.span.line, self.span.col, self.message)?;
        if !self.found.is_empty() {
            write!(f, " at `{}`", self.found)?;
        }
        if let Some(e) = &self.expected {
            write!(f, " (expected {e})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// The text under a span, cut at the first newline and to 80 characters.
pub fn excerpt(src: &str, span: Span) -> String {
    let start = (span.start as usize).min(src.len());
    let end = (span.end as usize).clamp(start, src.len());
    let text = src.get(start..end).unwrap_or("");
    let text = text.lines().next().unwrap_or("");
    text.chars().take(80).collect()
}

/// One or more diagnostics from loading a module; the first is the primary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn render(&self, file: &str, src: &str) -> String {
        self.0
            .iter()
            .map(|d| d.render(file, src))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Diagnostics(vec![d])
    }
}
