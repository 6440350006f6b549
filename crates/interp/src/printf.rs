//! Device-side `printf` (`vprintf`): CUDA passes the format string and a
//! buffer of arguments, each aligned to its own size, with floats promoted
//! to double, as C varargs are.

/// One conversion of the format string.
struct Spec {
    flags: String,
    width: Option<usize>,
    precision: Option<usize>,
    /// `l`/`ll`/`z`/`j`/`t`: 64-bit integers.
    long: bool,
    /// `h`/`hh`: narrower integers.
    short: u8,
    conv: char,
}

/// Format `fmt` taking argument bytes from `arg(offset, size)`; `string(addr)`
/// reads a NUL-terminated string for `%s`. Returns the text and the number
/// of arguments consumed.
pub fn format(
    fmt: &[u8],
    mut arg: impl FnMut(u64, u32) -> Option<u64>,
    mut string: impl FnMut(u64) -> String,
) -> (String, u32) {
    let mut out = String::new();
    let mut off = 0u64;
    let mut count = 0u32;
    let mut i = 0;
    let mut take = |size: u32, off: &mut u64| -> u64 {
        *off = off.div_ceil(u64::from(size)) * u64::from(size);
        let v = arg(*off, size).unwrap_or(0);
        *off += u64::from(size);
        v
    };
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            // Copy a run of plain bytes (UTF-8 passes through).
            let start = i;
            while i < fmt.len() && fmt[i] != b'%' {
                i += 1;
            }
            out.push_str(&String::from_utf8_lossy(&fmt[start..i]));
            continue;
        }
        i += 1;
        if i < fmt.len() && fmt[i] == b'%' {
            out.push('%');
            i += 1;
            continue;
        }
        let mut spec = Spec {
            flags: String::new(),
            width: None,
            precision: None,
            long: false,
            short: 0,
            conv: '?',
        };
        while i < fmt.len() && b"-+ #0".contains(&fmt[i]) {
            spec.flags.push(fmt[i] as char);
            i += 1;
        }
        let num = |i: &mut usize| -> Option<usize> {
            let s = *i;
            while *i < fmt.len() && fmt[*i].is_ascii_digit() {
                *i += 1;
            }
            std::str::from_utf8(&fmt[s..*i])
                .ok()?
                .parse()
                .ok()
                .map(|n: usize| n.min(4096))
        };
        spec.width = num(&mut i);
        if i < fmt.len() && fmt[i] == b'.' {
            i += 1;
            spec.precision = Some(num(&mut i).unwrap_or(0));
        }
        while i < fmt.len() && b"hlLqjzt".contains(&fmt[i]) {
            match fmt[i] {
                b'h' => spec.short += 1,
                _ => spec.long = true,
            }
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else { break };
        i += 1;
        spec.conv = conv as char;
        count += 1;
        let body = match spec.conv {
            'd' | 'i' => {
                let v = if spec.long {
                    take(8, &mut off) as i64
                } else {
                    i64::from(take(4, &mut off) as u32 as i32)
                };
                let v = match spec.short {
                    1 => i64::from(v as i16),
                    2 => i64::from(v as i8),
                    _ => v,
                };
                signed(v.unsigned_abs().to_string(), v < 0, &spec)
            }
            'u' | 'x' | 'X' | 'o' => {
                let v = if spec.long {
                    take(8, &mut off)
                } else {
                    take(4, &mut off) & 0xffff_ffff
                };
                let v = match spec.short {
                    1 => v & 0xffff,
                    2 => v & 0xff,
                    _ => v,
                };
                let (digits, prefix) = match spec.conv {
                    'x' => (format!("{v:x}"), "0x"),
                    'X' => (format!("{v:X}"), "0X"),
                    'o' => (format!("{v:o}"), "0"),
                    _ => (v.to_string(), ""),
                };
                let digits = match spec.precision {
                    Some(p) if digits.len() < p => {
                        format!("{}{digits}", "0".repeat(p - digits.len()))
                    }
                    _ => digits,
                };
                let digits = if spec.flags.contains('#') && v != 0 {
                    format!("{prefix}{digits}")
                } else {
                    digits
                };
                pad(digits, &spec, true)
            }
            'c' => pad(
                char::from(take(4, &mut off) as u8).to_string(),
                &spec,
                false,
            ),
            's' => {
                let p = take(8, &mut off);
                let mut s = if p == 0 {
                    "(null)".to_string()
                } else {
                    string(p)
                };
                if let Some(prec) = spec.precision {
                    s = s.chars().take(prec).collect();
                }
                pad(s, &spec, false)
            }
            'p' => pad(format!("0x{:x}", take(8, &mut off)), &spec, false),
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => {
                let v = f64::from_bits(take(8, &mut off));
                let text = float(v.abs(), &spec);
                signed(text, v.is_sign_negative() && !v.is_nan(), &spec)
            }
            other => {
                count -= 1;
                format!("%{other}")
            }
        };
        out.push_str(&body);
    }
    (out, count)
}

fn pad(s: String, spec: &Spec, numeric: bool) -> String {
    let w = spec.width.unwrap_or(0);
    let len = s.chars().count();
    if len >= w {
        return s;
    }
    let fill = w - len;
    if spec.flags.contains('-') {
        format!("{s}{}", " ".repeat(fill))
    } else if numeric && spec.flags.contains('0') && spec.precision.is_none() {
        format!("{}{s}", "0".repeat(fill))
    } else {
        format!("{}{s}", " ".repeat(fill))
    }
}

/// Sign and padding of a number whose magnitude is `digits`.
fn signed(digits: String, negative: bool, spec: &Spec) -> String {
    let sign = if negative {
        "-"
    } else if spec.flags.contains('+') {
        "+"
    } else if spec.flags.contains(' ') {
        " "
    } else {
        ""
    };
    let digits = match (spec.conv, spec.precision) {
        ('d' | 'i', Some(p)) if digits.len() < p => {
            format!("{}{digits}", "0".repeat(p - digits.len()))
        }
        _ => digits,
    };
    let w = spec.width.unwrap_or(0);
    let len = sign.len() + digits.len();
    let zero = spec.flags.contains('0')
        && !spec.flags.contains('-')
        && (spec.precision.is_none() || !matches!(spec.conv, 'd' | 'i'));
    if len < w && zero && !digits.starts_with(|c: char| c.is_alphabetic()) {
        format!("{sign}{}{digits}", "0".repeat(w - len))
    } else {
        pad(format!("{sign}{digits}"), spec, false)
    }
}

/// C's %f %e %g %a for a non-negative value.
fn float(v: f64, spec: &Spec) -> String {
    let upper = spec.conv.is_ascii_uppercase();
    if v.is_nan() {
        return if upper { "NAN" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if upper { "INF" } else { "inf" }.into();
    }
    let p = spec.precision.unwrap_or(6);
    let alt = spec.flags.contains('#');
    let s = match spec.conv.to_ascii_lowercase() {
        'f' => format!("{v:.p$}"),
        'e' => exp_form(v, p),
        'a' => format!("{v:e}"),
        _ => {
            let p = if p == 0 { 1 } else { p };
            let e = exp_form(v, p - 1);
            let x: i32 = e
                .rsplit('e')
                .next()
                .and_then(|x| x.parse().ok())
                .unwrap_or(0);
            let mut s = if (x as i64) < p as i64 && x >= -4 {
                format!("{v:.*}", (p as i64 - 1 - x as i64).max(0) as usize)
            } else {
                e
            };
            if !alt {
                // Strip trailing zeros of the fraction (before any exponent).
                let (mant, exp) = match s.find('e') {
                    Some(k) => (s[..k].to_string(), s[k..].to_string()),
                    None => (s.clone(), String::new()),
                };
                let mant = if mant.contains('.') {
                    mant.trim_end_matches('0').trim_end_matches('.').to_string()
                } else {
                    mant
                };
                s = format!("{mant}{exp}");
            }
            s
        }
    };
    if upper {
        s.to_uppercase()
    } else {
        s
    }
}

/// `d.ddde+XX` with at least two exponent digits, as C prints.
fn exp_form(v: f64, p: usize) -> String {
    let s = format!("{v:.p$e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let n: i32 = e.parse().unwrap_or(0);
            format!("{m}e{}{:02}", if n < 0 { '-' } else { '+' }, n.abs())
        }
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(fmt: &str, args: &[(u32, u64)]) -> String {
        // Lay the arguments out as CUDA does: each aligned to its size.
        let mut buf = Vec::new();
        for (size, v) in args {
            while buf.len() % *size as usize != 0 {
                buf.push(0u8);
            }
            buf.extend_from_slice(&v.to_le_bytes()[..*size as usize]);
        }
        format(
            fmt.as_bytes(),
            |off, size| {
                let s = buf.get(off as usize..(off + u64::from(size)) as usize)?;
                let mut w = [0u8; 8];
                w[..s.len()].copy_from_slice(s);
                Some(u64::from_le_bytes(w))
            },
            |_| "str".into(),
        )
        .0
    }

    #[test]
    fn c_formats() {
        assert_eq!(
            run(
                "x=%d y=%5.2f|%-4d|%04x\n",
                &[
                    (4, (-3i32) as u32 as u64),
                    (8, 2.5f64.to_bits()),
                    (4, 7),
                    (4, 255)
                ]
            ),
            "x=-3 y= 2.50|7   |00ff\n"
        );
        assert_eq!(
            run(
                "%lld %llu %s %c%%",
                &[(8, (-5i64) as u64), (8, u64::MAX), (8, 0x1000), (4, 65)]
            ),
            "-5 18446744073709551615 str A%"
        );
        assert_eq!(
            run(
                "%g %g %g %e",
                &[
                    (8, 0.0001f64.to_bits()),
                    (8, 123456789.0f64.to_bits()),
                    (8, 0.5f64.to_bits()),
                    (8, 1234.5f64.to_bits())
                ]
            ),
            "0.0001 1.23457e+08 0.5 1.234500e+03"
        );
        assert_eq!(
            run(
                "%+.3f %f",
                &[(8, 1.0f64.to_bits()), (8, f64::NAN.to_bits())]
            ),
            "+1.000 nan"
        );
    }
}
