//! Accesses whose lanes each read or write a group of 2 or 4 consecutive
//! elements right after the previous lane's (`ld.v4`/`st.v4` of an array
//! of float4s): the warp's groups move as one vector, interleaved.

use crate::emit::{full_bits, vt, Emitter as Gen};

/// The `n` (2 or 4) elements of each lane's group, from `h0` on, group
/// after group, for the lanes of `exec`: one load of the warp's groups
/// (masked for a partial warp), then a shuffle per element. A gather per
/// element was the alternative.
pub(crate) fn load_interleaved<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    bits: u32,
    n: u32,
    exec: &str,
) -> Vec<String> {
    let t = format!("<{} x i{bits}>", n * W);
    let p = g.def(&format!("inttoptr i64 {h0} to {t}*"));
    let size = bits / 8;
    let v = whole_or_part(
        g,
        exec,
        n,
        Some(&t),
        |g| g.def(&format!("load {t}, {t}* {p}, align {size}")),
        |g, m| {
            g.def(&format!(
                "call {t} @llvm.masked.load.v{0}i{bits}.p0v{0}i{bits}({t}* {p}, i32 {size}, <{0} x i1> {m}, {t} undef)",
                n * W
            ))
        },
    );
    (0..n)
        .map(|c| {
            g.def(&format!(
                "shufflevector {t} {v}, {t} undef, <{W} x i32> <{}>",
                index_list(W, |j| j * n + c)
            ))
        })
        .collect()
}

/// `i32 f(0), i32 f(1), ...` for a shuffle mask of `len` elements.
fn index_list(len: u32, f: impl Fn(u32) -> u32) -> String {
    (0..len)
        .map(|i| format!("i32 {}", f(i)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `vals` (2 or 4 vectors) interleaved, lane by lane (`a0 b0 a1 b1 ...`),
/// and stored from `h0` on for the lanes of `exec`: each lane's group of
/// elements follows the previous lane's. A scatter per element was a loop
/// over the lanes each (four for a float4), and a fifth of an n-body
/// kernel's IR.
pub(crate) fn store_interleaved<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    bits: u32,
    vals: &[String],
    exec: &str,
) {
    let n = vals.len() as u32;
    let total = n * W;
    let pair = |g: &mut Gen<W>, a: &str, b: &str| {
        let idx = index_list(2 * W, |i| i / 2 + (i % 2) * W);
        g.def(&format!(
            "shufflevector {} {a}, {} {b}, <{} x i32> <{idx}>",
            vt::<W>(bits),
            vt::<W>(bits),
            2 * W
        ))
    };
    let v = match vals {
        [a, b] => pair(g, a, b),
        [a, b, c, d] => {
            let (ab, cd) = (pair(g, a, b), pair(g, c, d));
            // Lane j: ab[2j], ab[2j + 1], cd[2j], cd[2j + 1].
            let idx = index_list(total, |i| 2 * (i / 4) + i % 2 + (i % 4 / 2) * 2 * W);
            g.def(&format!(
                "shufflevector <{0} x i{bits}> {ab}, <{0} x i{bits}> {cd}, <{total} x i32> <{idx}>",
                2 * W
            ))
        }
        _ => unreachable!("interleaved stores of 2 or 4 elements"),
    };
    let t = format!("<{total} x i{bits}>");
    let p = g.def(&format!("inttoptr i64 {h0} to {t}*"));
    let size = bits / 8;
    whole_or_part(
        g,
        exec,
        n,
        None,
        |g| {
            g.line(&format!("store {t} {v}, {t}* {p}, align {size}"));
            String::new()
        },
        |g, m| {
            crate::lower::masked_store(g, total, bits, &v, &p, m);
            String::new()
        },
    );
}

/// `whole(g)` when every lane of `exec` runs, else `part(g, m)` with `m`
/// each lane's bit spread over its `n` elements; their results joined
/// (a phi of type `ty`, or nothing without one).
fn whole_or_part<const W: u32>(
    g: &mut Gen<W>,
    exec: &str,
    n: u32,
    ty: Option<&str>,
    whole: impl FnOnce(&mut Gen<W>) -> String,
    part: impl FnOnce(&mut Gen<W>, &str) -> String,
) -> String {
    let eb = g.bits_of_mask(exec);
    let full = g.def(&format!("icmp eq i32 {eb}, {}", full_bits::<W>()));
    let (lf, lm, lj) = (g.label("ilv_all"), g.label("ilv_some"), g.label("ilv_join"));
    g.line(&format!("br i1 {full}, label %{lf}, label %{lm}"));
    g.emit_label(&lf);
    let a = whole(g);
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lm);
    let m = g.def(&format!(
        "shufflevector <{W} x i1> {exec}, <{W} x i1> undef, <{} x i32> <{}>",
        n * W,
        index_list(n * W, |i| i / n)
    ));
    let b = part(g, &m);
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lj);
    match ty {
        Some(t) => g.def(&format!("phi {t} [ {a}, %{lf} ], [ {b}, %{lm} ]")),
        None => String::new(),
    }
}
