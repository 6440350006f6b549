//! The lanes past a jump: where a widened 32-bit index wraps inside the
//! warp (see `lanes::Lanes::jump`), the accesses of the lanes on either
//! side go through one shared out-of-line helper per element size.

use crate::emit::{vt, Emitter as Gen};
use crate::lanes::Lanes;
use crate::prepare::Unsupported;
use std::fmt::Write;
use warpfold_ir::*;

type R = Result<(), Unsupported>;

/// The elements of `dsts` on the rare side of a jump (see `past_jump`).
pub(crate) fn loads_past_jump<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    l: &Lanes,
    k: Option<&str>,
    ty: Ty,
    dsts: &[Option<Reg>],
    exec: &str,
) -> R {
    let (k, bits) = (k.unwrap_or("0"), ty.bits());
    for (i, d) in dsts.iter().enumerate() {
        let hi = g.def(&format!("add i64 {h0}, {}", i as u32 * bits / 8));
        let v = past_jump(g, &hi, l, k, bits, None, exec);
        if let Some(d) = d {
            g.set(*d, &v, bits, ty.is_signed(), exec);
        }
    }
    Ok(())
}

/// The elements of `srcs` on the rare side of a jump (see `past_jump`).
pub(crate) fn stores_past_jump<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    l: &Lanes,
    k: Option<&str>,
    bits: u32,
    srcs: &[Value],
    exec: &str,
) -> R {
    let k = k.unwrap_or("0");
    for (i, s) in srcs.iter().enumerate() {
        let hi = g.def(&format!("add i64 {h0}, {}", i as u32 * bits / 8));
        let v = g.val(*s, bits);
        past_jump(g, &hi, l, k, bits, Some(&v), exec);
    }
    Ok(())
}

/// The lanes' elements of an access whose widened index wraps inside the
/// warp (`split_on_jump`'s rare side): lane i at `h0` + `l.offset(i)`,
/// plus `l.jump` from lane `k` on: a call to one shared helper per element
/// size, which loads or stores lane by lane. In line, the per-site lane
/// loop and its <W x i64> addresses were a fifth of a 3-D stencil's IR and
/// 40% of its code generation time (JIT 411 -> 310 ms, 2-D stencil 148 ->
/// 101, transpose 383 -> 334). The call is on the rare side of a branch
/// weighted as such (`LIKELY`), so LLVM spills the values live across it
/// there, not on the hot side. A load returns its elements by value from a
/// `readonly` helper with the C convention: it clobbers no memory, so the
/// warp's state read before it is reused after the join, and
/// `preserve_allcc` would restore YMM0-15 over the returned vector (LLVM 14
/// keeps the low halves of ZMM0-15 there). A store passes `v` through a
/// stack slot to a `preserve_allcc` helper (it writes memory anyway).
fn past_jump<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    l: &Lanes,
    k: &str,
    bits: u32,
    v: Option<&str>,
    exec: &str,
) -> String {
    let store = v.is_some();
    g.jump_helpers.insert((store, bits));
    let eb = g.bits_of_mask(exec);
    let args = format!(
        "i64 {h0}, i64 {}, i64 {}, i32 {}, i64 {}, i32 {k}, i32 {eb}",
        l.stride,
        l.extra,
        l.width.max(1),
        l.jump
    );
    let Some(v) = v else {
        // By value from a `readonly` helper: the call clobbers nothing, so
        // the warp's state read before the access stays known after it on
        // the common side too (a clobbering call on the rare side made
        // every later access reload its address and jump slot).
        return g.def(&format!(
            "call {} @wf_jump_ld_{bits}({args})",
            vt::<W>(bits)
        ));
    };
    let buf = format!("%{}", g.label("jumpbuf"));
    let _ = writeln!(g.allocas, "  {buf} = alloca {}, align 64", vt::<W>(bits));
    g.line(&format!(
        "store {} {v}, {}* {buf}",
        vt::<W>(bits),
        vt::<W>(bits)
    ));
    let elems = g.def(&format!("bitcast {}* {buf} to i{bits}*", vt::<W>(bits)));
    g.line(&format!(
        "call preserve_allcc void @wf_jump_st_{bits}({args}, i{bits}* {elems})"
    ));
    String::new()
}

/// `@wf_jump_ld_{bits}` or `@wf_jump_st_{bits}` (see `past_jump`): for each
/// lane of mask `%m` in lane order, the element at `%h` + i * `%stride` +
/// (i / `%width`) * `%extra` (+ `%jump` from lane `%k` on), read into the
/// returned vector (a `readonly` function: it writes only its own stack)
/// or written from `%elems[i]`. Lanes off read 0.
pub(crate) fn past_jump_fn<const W: u32>(store: bool, bits: u32) -> String {
    let vty = vt::<W>(bits);
    let params = "i64 %h, i64 %stride, i64 %extra, i32 %width, i64 %jump, i32 %k, i32 %m";
    let (head, end) = if store {
        (
            format!("define internal preserve_allcc void @wf_jump_st_{bits}({params}, i{bits}* %elems) noinline #0 {{\nentry:\n"),
            "  ret void\n".to_string(),
        )
    } else {
        (
            format!(
                "define internal {vty} @wf_jump_ld_{bits}({params}) noinline readonly willreturn #0 {{\nentry:\n  %buf = alloca {vty}, align 64\n  %elems = bitcast {vty}* %buf to i{bits}*\n"
            ),
            format!("  %all = load {vty}, {vty}* %buf, align 64\n  ret {vty} %all\n"),
        )
    };
    let access = if store {
        format!("  %x = load i{bits}, i{bits}* %slot\n  store i{bits} %x, i{bits}* %p, align 1\n")
    } else {
        format!("  %x = load i{bits}, i{bits}* %p, align 1\n  store i{bits} %x, i{bits}* %slot\n")
    };
    let off = if store {
        String::new()
    } else {
        format!("  store i{bits} 0, i{bits}* %slot\n")
    };
    format!(
        "{head}  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i1, %next ]
  %slot = getelementptr i{bits}, i{bits}* %elems, i32 %i
  %sh = lshr i32 %m, %i
  %bit = and i32 %sh, 1
  %on = icmp ne i32 %bit, 0
  br i1 %on, label %lane, label %off
lane:
  %i64 = zext i32 %i to i64
  %row = udiv i32 %i, %width
  %row64 = zext i32 %row to i64
  %a = mul i64 %i64, %stride
  %b = mul i64 %row64, %extra
  %past = icmp uge i32 %i, %k
  %j = select i1 %past, i64 %jump, i64 0
  %ab = add i64 %a, %b
  %o = add i64 %ab, %j
  %ad = add i64 %h, %o
  %p = inttoptr i64 %ad to i{bits}*
{access}  br label %next
off:
{off}  br label %next
next:
  %i1 = add i32 %i, 1
  %more = icmp ult i32 %i1, {W}
  br i1 %more, label %head, label %done
done:
{end}}}

"
    )
}
