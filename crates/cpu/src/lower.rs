//! Instructions and terminators to LLVM IR over 32-lane vectors.

use crate::emit::{
    bits_of_mask_ir, env, full_bits, iota, lanes_mask, sc, vt, Emitter as Gen, Helper, DONE, LIKELY,
};
use crate::indexed::{index_form, indexed, Indexed};
use crate::interleave::{load_interleaved, store_interleaved};
use crate::lanes::Lanes;
use crate::past_jump::{loads_past_jump, stores_past_jump};
use crate::prepare::Unsupported;
use std::fmt::Write;
use warpfold_ir::*;

type R = Result<(), Unsupported>;

/// Lanes that run the instruction: the group mask and the guard.
fn exec_mask<const W: u32>(g: &mut Gen<W>, inst: &Inst) -> String {
    let mask = g.load_mask();
    match inst.guard {
        None => mask,
        Some((p, neg)) => {
            let pv = g.val(Value::Reg(p), 1);
            let pv = if neg { not1(g, &pv) } else { pv };
            g.mask_op("and", &mask, &pv)
        }
    }
}

fn not1<const W: u32>(g: &mut Gen<W>, v: &str) -> String {
    g.mask_op("xor", v, &sc::<W>(1, 1))
}

fn bin<const W: u32>(g: &mut Gen<W>, op: &str, bits: u32, a: &str, b: &str) -> String {
    let r = g.t();
    g.line(&format!("{r} = {op} {} {a}, {b}", vt::<W>(bits)));
    r
}

fn icmp<const W: u32>(g: &mut Gen<W>, pred: &str, bits: u32, a: &str, b: &str) -> String {
    let r = g.t();
    g.line(&format!("{r} = icmp {pred} {} {a}, {b}", vt::<W>(bits)));
    r
}

fn sel<const W: u32>(g: &mut Gen<W>, c: &str, bits: u32, a: &str, b: &str) -> String {
    let r = g.t();
    g.line(&format!(
        "{r} = select <{W} x i1> {c}, {} {a}, {} {b}",
        vt::<W>(bits),
        vt::<W>(bits)
    ));
    r
}

fn env_i32<const W: u32>(g: &mut Gen<W>, idx: usize) -> String {
    let v = g.env(idx);
    let t = g.t();
    g.line(&format!("{t} = trunc i64 {v} to i32"));
    g.splat("i32", &t)
}

fn env_splat64<const W: u32>(g: &mut Gen<W>, idx: usize) -> String {
    let v = g.env(idx);
    g.splat("i64", &v)
}

/// Linear thread index of each lane in the CTA.
fn linear_tid<const W: u32>(g: &mut Gen<W>) -> String {
    let w = g.t();
    g.line(&format!("{w} = mul i32 %warp, {W}"));
    let ws = g.splat("i32", &w);
    bin(g, "add", 32, &ws, &iota::<W>(32))
}

/// Host address of each lane's local frame.
fn lane_base<const W: u32>(g: &mut Gen<W>) -> String {
    let t = linear_tid(g);
    let t64 = g.conv(&t, 32, 64, false);
    let fr = env_splat64(g, env::FRAME);
    let off = bin(g, "mul", 64, &t64, &fr);
    let lb = env_splat64(g, env::LOCAL);
    bin(g, "add", 64, &lb, &off)
}

/// Host base of a space (for turning space addresses into pointers).
fn space_base<const W: u32>(g: &mut Gen<W>, space: Space) -> Option<String> {
    match space {
        Space::Shared => Some(env_splat64(g, env::SHARED)),
        Space::Const => Some(env_splat64(g, env::CONST)),
        Space::Param => Some(env_splat64(g, env::PARAMS)),
        Space::Local => Some(lane_base(g)),
        Space::Global | Space::Generic => None,
    }
}

/// The address of a symbol in its own space, or generic (host) when asked.
fn symbol_addr<const W: u32>(
    g: &mut Gen<W>,
    sym: Symbol,
    generic: bool,
) -> Result<String, Unsupported> {
    let (own, off): (Space, Option<u64>) = match sym {
        Symbol::Global(id) => {
            let gv = &g.m.globals[id];
            match gv.space {
                Space::Global => {
                    let tab = g.env(env::GLOBALS);
                    let p = g.t();
                    let q = g.t();
                    let v = g.t();
                    g.line(&format!("{p} = inttoptr i64 {tab} to i64*"));
                    g.line(&format!("{q} = getelementptr i64, i64* {p}, i64 {}", id.0));
                    g.line(&format!("{v} = load i64, i64* {q}"));
                    return Ok(g.splat("i64", &v));
                }
                Space::Shared => {
                    let off = if gv.dynamic {
                        g.layout.dynamic_base()
                    } else {
                        g.layout.offsets.get(&id).copied().unwrap_or(0)
                    };
                    (Space::Shared, Some(off))
                }
                Space::Const => (Space::Const, Some(gv.offset)),
                other => return Err(Unsupported(format!("variable in the {other} space"))),
            }
        }
        Symbol::Local(l) => (Space::Local, Some(g.p.func.locals[l].offset)),
        Symbol::KernelParam(i) => (
            Space::Param,
            Some(g.p.func.params.get(i as usize).map_or(0, |p| p.offset)),
        ),
        // The interpreter's value (function-pointer tables in memory hold
        // it; indirect calls compare against it).
        Symbol::Function(f) => {
            return Ok(sc::<W>(
                64,
                warpfold_interp::memory::FUNC_WINDOW + 16 * u64::from(f.0),
            ))
        }
    };
    let c = sc::<W>(64, off.unwrap_or(0));
    if !generic {
        return Ok(c);
    }
    let base = space_base(g, own).expect("non-global space has a base");
    Ok(bin(g, "add", 64, &base, &c))
}

/// Host addresses of `[addr]` in `space`, per lane.
fn host_addr<const W: u32>(
    g: &mut Gen<W>,
    a: &Address,
    space: Space,
) -> Result<String, Unsupported> {
    let generic = matches!(space, Space::Generic | Space::Global);
    let base = match a.base {
        AddrBase::Reg(r) => g.val(Value::Reg(r), 64),
        AddrBase::Symbol(s) => symbol_addr(g, s, generic)?,
        AddrBase::None => sc::<W>(64, 0),
    };
    let withoff = if a.offset != 0 {
        bin(g, "add", 64, &base, &sc::<W>(64, a.offset as u64))
    } else {
        base
    };
    if generic {
        return Ok(withoff);
    }
    let b = space_base(g, space).expect("space has a base");
    Ok(bin(g, "add", 64, &b, &withoff))
}

/// Whether every lane's address is uniform and known without registers
/// (kernel parameters and constants named directly).
pub(crate) fn uniform_symbol(a: &Address, space: Space) -> bool {
    matches!(a.base, AddrBase::Symbol(_)) && matches!(space, Space::Param | Space::Const)
}

/// Whether the active lanes' addresses are consecutive elements of `size`
/// bytes starting at lane 0's: then one (masked) vector access serves them.
/// Returns lane 0's address and the test.
fn contiguous<const W: u32>(g: &mut Gen<W>, h: &str, size: u32, exec: &str) -> (String, String) {
    let h0 = g.t();
    g.line(&format!("{h0} = extractelement <{W} x i64> {h}, i32 0"));
    let s0 = g.splat("i64", &h0);
    let steps = bin(g, "mul", 64, &iota::<W>(64), &sc::<W>(64, u64::from(size)));
    let expect = bin(g, "add", 64, &s0, &steps);
    let eq = icmp(g, "eq", 64, h, &expect);
    let all = g.holds_in(&eq, exec);
    (h0, all)
}

/// Lane 0's host address (`i64`) and the constant stride between lanes'
/// addresses of `[addr]` in `space`, when the address register is uniform
/// or affine (see `lanes`): then no per-lane address is computed. The
/// third part is the lane of the form's jump (W: none), if it has one.
pub(crate) fn affine_host_addr<const W: u32>(
    g: &mut Gen<W>,
    a: &Address,
    space: Space,
) -> Option<(String, Lanes, Option<String>)> {
    if space == Space::Local {
        return None;
    }
    let (base, form, jump) = match a.base {
        AddrBase::Reg(r) => {
            let l = g.lanes[r.0 as usize]?;
            let rb = g.reg_bits[r.0 as usize];
            let v = g.t();
            g.line(&format!("{v} = load i{rb}, i{rb}* %r{}", r.0));
            match rb {
                64 => {
                    let k = (l.jump != 0).then(|| g.jump_lane(r));
                    (v, l, k)
                }
                // Read zero-extended: exact when the lanes' values do not
                // straddle 2^32 (as for `lanes` widening).
                32 if l.jump == 0 && l.within(l.align.min(1 << 31), W) => {
                    (g.def(&format!("zext i32 {v} to i64")), l, None)
                }
                _ => return None,
            }
        }
        AddrBase::Symbol(Symbol::Local(_)) => return None,
        AddrBase::Symbol(s) => {
            let generic = matches!(space, Space::Generic | Space::Global);
            let v = symbol_addr(g, s, generic).ok()?;
            (
                g.def(&format!("extractelement <{W} x i64> {v}, i32 0")),
                Lanes::uniform(1),
                None,
            )
        }
        AddrBase::None => ("0".to_string(), Lanes::uniform(1), None),
    };
    let mut h0 = g.def(&format!("add i64 {base}, {}", a.offset));
    if let Some(idx) = match space {
        Space::Shared => Some(env::SHARED),
        Space::Const => Some(env::CONST),
        Space::Param => Some(env::PARAMS),
        _ => None,
    } {
        let b = g.env(idx);
        h0 = g.def(&format!("add i64 {h0}, {b}"));
    }
    Some((h0, form, jump))
}

/// Whether an access of `size`-byte elements through addresses of form
/// `l` needs no per-lane addresses: consecutive or one address, for the
/// warp or for each row of lanes (see `lanes::Lanes`).
fn direct(l: &Lanes, k: &Option<String>, size: u32) -> bool {
    let size = i64::from(size);
    if l.extra == 0 {
        l.stride == size || (l.stride == 0 && k.is_none())
    } else {
        // Rows of one or two lanes are better served by a gather.
        k.is_none() && l.width >= 4 && (l.stride == size || l.stride == 0)
    }
}

/// Each lane's element index from lane 0's address in form `l`, as an
/// `<32 x i32>` literal, for 32- and 64-bit elements at known distances
/// (narrower elements have no hardware gather).
fn element_index<const W: u32>(l: &Lanes, bits: u32) -> Option<String> {
    let size = i64::from(bits / 8);
    if bits < 32 {
        return None;
    }
    let idx: Option<Vec<String>> = (0..W)
        .map(|i| {
            let o = l.offset(i);
            let ok = o % size == 0 && i32::try_from(o / size).is_ok();
            ok.then(|| format!("i32 {}", o / size))
        })
        .collect();
    Some(format!("<{}>", idx?.join(", ")))
}

/// A load whose rows of lanes (`l.width` each) read consecutive elements
/// or one element each, from lane 0's address `h0`: with every lane on,
/// plain loads (no per-row tests, and the prefetchers see them). In
/// shared memory (`owned`) of a seldom-run block (`Gen::cold`), one path:
/// see `owned_rows`.
fn load_rows<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    l: &Lanes,
    bits: u32,
    exec: &str,
    owned: bool,
) -> String {
    if owned && g.cold() {
        return owned_rows(g, h0, l, bits, exec);
    }
    let eb = g.bits_of_mask(exec);
    let full = g.def(&format!("icmp eq i32 {eb}, {}", full_bits::<W>()));
    let (lf, lp, lj) = (
        g.label("rows_all"),
        g.label("rows_some"),
        g.label("rows_join"),
    );
    g.line(&format!("br i1 {full}, label %{lf}, label %{lp}"));
    g.emit_label(&lf);
    let v0 = load_rows_with(g, h0, l, bits, None);
    let lfe = g.label("rows_all_end");
    g.line(&format!("br label %{lfe}"));
    g.emit_label(&lfe);
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lp);
    let v1 = load_rows_with(g, h0, l, bits, Some(exec));
    let lpe = g.label("rows_some_end");
    g.line(&format!("br label %{lpe}"));
    g.emit_label(&lpe);
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lj);
    g.def(&format!(
        "phi <{W} x i{bits}> [ {v0}, %{lfe} ], [ {v1}, %{lpe} ]"
    ))
}

/// `load_rows` in shared memory, whose slack (`crate::SHARED_SLACK`, at
/// least a row) makes a whole row readable when one of its lanes' elements
/// is: every row is a plain load, from the scratch row when none of its
/// lanes runs (the address may be anywhere then). One path where the
/// full/partial split has two: the general warp function of a tiled
/// kernel is mostly such loads (sgemm: 1,500 of its 3,600 lines), but
/// with a full warp the split's path runs 10% fewer instructions (the
/// bitonic sort).
fn owned_rows<const W: u32>(g: &mut Gen<W>, h0: &str, l: &Lanes, bits: u32, exec: &str) -> String {
    let w = l.width.min(W);
    let parts = (0..W / w)
        .map(|row| {
            let base = row_base(g, h0, l, row);
            let any = row_any(g, exec, row, w);
            let at = at_or_sink(g, &base, &any);
            plain_row(g, &at, l, bits)
        })
        .collect();
    join_rows(g, parts, w, bits)
}

/// `load_rows` for the lanes of `exec`, or for all lanes (`None`).
fn load_rows_with<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    l: &Lanes,
    bits: u32,
    exec: Option<&str>,
) -> String {
    // A row at least as wide as the warp holds all of it (one row).
    let (w, size) = (l.width.min(W), bits / 8);
    let mut parts = Vec::new();
    for row in 0..W / w {
        let base = row_base(g, h0, l, row);
        let v = match exec {
            None => plain_row(g, &base, l, bits),
            // A row of one element with no lane running reads the
            // scratch row instead (a select, not a branch: fewer blocks
            // to generate code for).
            Some(exec) if l.stride == 0 => {
                let any = row_any(g, exec, row, w);
                let at = at_or_sink(g, &base, &any);
                plain_row(g, &at, l, bits)
            }
            Some(exec) => {
                let m = row_exec(g, exec, row, w);
                let p = g.def(&format!("inttoptr i64 {base} to <{w} x i{bits}>*"));
                g.def(&format!(
                    "call <{w} x i{bits}> @llvm.masked.load.v{w}i{bits}.p0v{w}i{bits}(<{w} x i{bits}>* {p}, i32 {size}, <{w} x i1> {m}, <{w} x i{bits}> undef)"
                ))
            }
        };
        parts.push(v);
    }
    join_rows(g, parts, w, bits)
}

/// The address of row `row` of form `l` from lane 0's address `h0`.
fn row_base<const W: u32>(g: &mut Gen<W>, h0: &str, l: &Lanes, row: u32) -> String {
    let delta = i64::from(l.width) * l.stride + l.extra;
    g.def(&format!("add i64 {h0}, {}", i64::from(row) * delta))
}

/// The lanes of `exec` in row `row` of `w` lanes, as a `<w x i1>`.
fn row_exec<const W: u32>(g: &mut Gen<W>, exec: &str, row: u32, w: u32) -> String {
    g.def(&format!(
        "shufflevector <{W} x i1> {exec}, <{W} x i1> undef, <{w} x i32> {}",
        lanes_mask::<W>(row * w..(row + 1) * w)
    ))
}

/// Whether some lane of `exec` in row `row` of `w` lanes runs.
fn row_any<const W: u32>(g: &mut Gen<W>, exec: &str, row: u32, w: u32) -> String {
    let m = row_exec(g, exec, row, w);
    let mb = g.def(&format!("bitcast <{w} x i1> {m} to i{w}"));
    g.def(&format!("icmp ne i{w} {mb}, 0"))
}

/// A row of form `l` read whole at `at`: one element splat over the row
/// (stride 0) or consecutive elements.
fn plain_row<const W: u32>(g: &mut Gen<W>, at: &str, l: &Lanes, bits: u32) -> String {
    let (w, size) = (l.width.min(W), bits / 8);
    if l.stride == 0 {
        let p = g.def(&format!("inttoptr i64 {at} to i{bits}*"));
        let x = g.def(&format!("load i{bits}, i{bits}* {p}, align {size}"));
        splat_row(g, &x, w, bits)
    } else {
        let p = g.def(&format!("inttoptr i64 {at} to <{w} x i{bits}>*"));
        g.def(&format!(
            "load <{w} x i{bits}>, <{w} x i{bits}>* {p}, align {size}"
        ))
    }
}

/// Address `at` when `on`, else the scratch row (see `row_sink`).
fn at_or_sink<const W: u32>(g: &mut Gen<W>, at: &str, on: &str) -> String {
    let sink = row_sink(g);
    g.def(&format!("select i1 {on}, i64 {at}, i64 {sink}"))
}

/// The address of a scratch row in the function's frame,
/// read instead of memory for rows whose lanes are all off.
fn row_sink<const W: u32>(g: &mut Gen<W>) -> String {
    // 256 bytes: a row of up to 32 lanes of 64 bits.
    g.alloca_once("row_sink", "[64 x i32], align 64");
    g.def("ptrtoint [64 x i32]* %row_sink to i64")
}

/// `x` in each of a row's `w` lanes.
fn splat_row<const W: u32>(g: &mut Gen<W>, x: &str, w: u32, bits: u32) -> String {
    let one = g.def(&format!(
        "insertelement <{w} x i{bits}> undef, i{bits} {x}, i32 0"
    ));
    g.def(&format!(
        "shufflevector <{w} x i{bits}> {one}, <{w} x i{bits}> undef, <{w} x i32> zeroinitializer"
    ))
}

/// A store whose rows of lanes write consecutive elements each (stride =
/// element size), in lane order.
fn store_rows<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    l: &Lanes,
    bits: u32,
    v: &str,
    exec: &str,
    owned: bool,
) {
    // A row at least as wide as the warp holds all of it (one row).
    let w = l.width.min(W);
    let delta = i64::from(l.width) * l.stride + l.extra;
    for row in 0..W / w {
        let base = g.def(&format!("add i64 {h0}, {}", i64::from(row) * delta));
        let r = lanes_mask::<W>(row * w..(row + 1) * w);
        let m = g.def(&format!(
            "shufflevector <{W} x i1> {exec}, <{W} x i1> undef, <{w} x i32> {r}"
        ));
        let x = g.def(&format!(
            "shufflevector <{W} x i{bits}> {v}, <{W} x i{bits}> undef, <{w} x i32> {r}"
        ));
        let p = g.def(&format!("inttoptr i64 {base} to <{w} x i{bits}>*"));
        if owned && !g.avx512 {
            // A row with a running lane lies within the slack.
            let mb = g.def(&format!("bitcast <{w} x i1> {m} to i{w}"));
            let any = g.def(&format!("icmp ne i{w} {mb}, 0"));
            blend_store_if(g, &any, &p, w, bits, &x, &m);
        } else {
            masked_store(g, w, bits, &x, &p, &m);
        }
    }
}

/// Where an affine access needs no per-lane addresses: when its form has
/// a jump, a branch on the jump's lane to `fast` (no jump) or `slow`;
/// both go on to the returned label.
fn split_on_jump<const W: u32>(g: &mut Gen<W>, k: &Option<String>) -> Option<(String, String)> {
    let k = k.as_ref()?;
    let (fast, slow, join) = (
        g.label("aff_fast"),
        g.label("aff_slow"),
        g.label("aff_join"),
    );
    if g.cold() {
        // A seldom-run block takes the lane-by-lane side,
        // which serves no jump too (`k` = W); LLVM drops the fast side
        // before generating code.
        g.line(&format!("br label %{slow}"));
    } else {
        let none = g.def(&format!("icmp eq i32 {k}, {W}"));
        g.line(&format!(
            "br i1 {none}, label %{fast}, label %{slow}{LIKELY}"
        ));
    }
    g.emit_label(&fast);
    Some((slow, join))
}

/// Consecutive elements from lane 0's address `h0`, for the lanes of `exec`.
fn load_contig<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    bits: u32,
    exec: &str,
    owned: bool,
) -> String {
    let size = bits / 8;
    let eb = g.bits_of_mask(exec);
    if g.cold() {
        return cold_load(g, h0, bits, exec, &eb, owned);
    }
    let bp = g.t();
    g.line(&format!("{bp} = inttoptr i64 {h0} to {}*", vt::<W>(bits)));
    // With AVX-512 outside loops, one masked load (below). Otherwise all
    // 32 lanes: a plain load (masked loads defeat the prefetchers on some
    // CPUs); else a masked one, which cannot fault on lanes off.
    let max = few_lanes_max(g, bits);
    let few_lanes = owned && W > max && g.structured_only;
    if g.avx512 && !few_lanes && !g.block_in_loop() {
        // Outside loops, one masked load: no branch, so the blocks around
        // it stay one (where `shared_regs` keeps shared memory in
        // registers).
        return masked_load(g, &bp, bits, exec);
    }
    let full = g.t();
    g.line(&format!("{full} = icmp eq i32 {eb}, {}", full_bits::<W>()));
    let (lf, lm, lj) = (g.label("ld_full"), g.label("ld_masked"), g.label("ld_cj"));
    let mut few = None;
    if few_lanes {
        // Only some of the first `max` lanes (a tree reduction's last
        // steps, `s[t] += s[t + d]` for t < d): read just their elements.
        // A whole vector there would straddle two recent stores of the
        // previous steps, and a load that takes bytes from two stores in
        // flight waits for both to reach the cache; a load within one
        // store takes its bytes straight from it (a masked load never
        // does). Otherwise as below.
        let start = g.out.len();
        let (check, some, go) = (g.label("ld_fewchk"), g.label("ld_some"), g.label("ld_few"));
        g.line(&format!("br i1 {full}, label %{lf}, label %{check}"));
        g.emit_label(&check);
        // No lane: the masked load (the address may be anywhere).
        let none = g.def(&format!("icmp eq i32 {eb}, 0"));
        g.line(&format!("br i1 {none}, label %{lm}, label %{some}"));
        g.emit_label(&some);
        let high = g.def(&format!("and i32 {eb}, -{}", 1u64 << max));
        let low = g.def(&format!("icmp eq i32 {high}, 0"));
        let other = if g.avx512 { &lm } else { &lf };
        g.line(&format!("br i1 {low}, label %{go}, label %{other}"));
        g.emit_label(&go);
        // Out of line (inlined by LLVM): region functions' code budget
        // counts text, and this is the same for every such load.
        g.few_loads.insert(bits);
        let v = g.def(&format!(
            "call {} @wf_ld_few_{bits}({}* {bp}, i32 {eb})",
            vt::<W>(bits),
            vt::<W>(bits)
        ));
        g.line(&format!("br label %{lj}"));
        few = Some((v, go));
        g.unbudgeted_bytes += g.out.len() - start;
    } else {
        // Without AVX-512 a masked load is several micro-ops per register
        // (edge warps of stencils); a plain one is as safe when the
        // vector's bytes lie in one page that some running lane reads: the
        // other lanes' values are never used.
        let plain = if g.avx512 {
            full
        } else if owned {
            // Shared memory has slack on both sides (see `SHARED_SLACK`):
            // the vector is readable whenever some lane's element is.
            let some = g.def(&format!("icmp ne i32 {eb}, 0"));
            g.def(&format!("or i1 {full}, {some}"))
        } else {
            // The page test only where some lane is off: computed before
            // the branch it cost a full warp's load 7 more instructions
            // (a 3-D stencil's trip makes 7 such loads).
            let check = g.label("ld_pagechk");
            g.line(&format!("br i1 {full}, label %{lf}, label %{check}"));
            g.emit_label(&check);
            let last = g.def(&format!("add i64 {h0}, {}", W * size - 1));
            let diff = g.def(&format!("xor i64 {h0}, {last}"));
            let one_page = g.def(&format!("icmp ult i64 {diff}, 4096"));
            let some = g.def(&format!("icmp ne i32 {eb}, 0"));
            g.def(&format!("and i1 {one_page}, {some}"))
        };
        g.line(&format!("br i1 {plain}, label %{lf}, label %{lm}"));
    }
    g.emit_label(&lf);
    let v0 = g.t();
    g.line(&format!(
        "{v0} = load {}, {}* {bp}, align {size}",
        vt::<W>(bits),
        vt::<W>(bits)
    ));
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lm);
    let v1 = masked_load(g, &bp, bits, exec);
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lj);
    let v = g.t();
    let more = few.map_or(String::new(), |(x, l)| format!(", [ {x}, %{l} ]"));
    g.line(&format!(
        "{v} = phi {} [ {v0}, %{lf} ], [ {v1}, %{lm} ]{more}",
        vt::<W>(bits)
    ));
    v
}

/// One element at `h0` for every lane, read only if some lane runs.
fn load_broadcast<const W: u32>(g: &mut Gen<W>, h0: &str, bits: u32, exec: &str) -> String {
    let size = bits / 8;
    let eb = g.bits_of_mask(exec);
    let any = g.def(&format!("icmp ne i32 {eb}, 0"));
    let (ld, lj, from) = (g.label("ld_one"), g.label("ld_onej"), g.label("ld_none"));
    g.line(&format!("br i1 {any}, label %{ld}, label %{from}"));
    g.emit_label(&from);
    g.line(&format!("br label %{lj}"));
    g.emit_label(&ld);
    let p = g.def(&format!("inttoptr i64 {h0} to i{bits}*"));
    let v = g.def(&format!("load i{bits}, i{bits}* {p}, align {size}"));
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lj);
    let x = g.def(&format!("phi i{bits} [ {v}, %{ld} ], [ 0, %{from} ]"));
    g.splat(&format!("i{bits}"), &x)
}

/// Elements at the addresses `ix` gives, whose indices are consecutive
/// in each block row from the row's first (`firsts`, see
/// `Indexed::row_firsts`): with every lane on and no row's index wrapping,
/// one plain load a row from its first element, with no address formed
/// for the other lanes (an SGEMM tile's rows of `b[(k0 + ty) * n + col]`);
/// else as `load_indexed`.
fn load_row_indexed<const W: u32>(
    g: &mut Gen<W>,
    ix: &Indexed,
    (firsts, room): (Vec<String>, String),
    space: Space,
    bits: u32,
    exec: &str,
) -> String {
    let (w, size) = (g.row_width, bits / 8);
    if space == Space::Global {
        let h0 = ix.address_of(g, &firsts[0]);
        prefetch_stride(g, &h0, Some(i64::from(size)));
    }
    let eb = g.bits_of_mask(exec);
    let full = g.def(&format!("icmp eq i32 {eb}, {}", full_bits::<W>()));
    let fast = g.def(&format!("and i1 {full}, {room}"));
    let t = format!("<{w} x i{bits}>");
    g.if_else(
        "rowix",
        &fast,
        &vt::<W>(bits),
        |g| {
            let parts: Vec<String> = firsts
                .iter()
                .map(|i| {
                    let a = ix.address_of(g, i);
                    let p = g.def(&format!("inttoptr i64 {a} to {t}*"));
                    g.def(&format!("load {t}, {t}* {p}, align {size}"))
                })
                .collect();
            join_rows(g, parts, w, bits)
        },
        |g| load_indexed(g, ix, space, bits, exec),
    )
}

/// Elements at the addresses `ix` gives, 32 bits or wider: one vector
/// load when they are consecutive, else as `load_elems`.
fn load_indexed<const W: u32>(
    g: &mut Gen<W>,
    ix: &Indexed,
    space: Space,
    bits: u32,
    exec: &str,
) -> String {
    let (h0, all) = ix.consecutive(g, exec);
    if space == Space::Global {
        prefetch_stride(g, &h0, Some(i64::from(bits / 8)));
    }
    load_split(g, &h0, &all, bits, exec, |g| {
        if g.avx512 {
            // In line, as `slow_load_fn` says.
            let h = ix.addresses(g);
            return slow_elems(g, &h, bits, exec);
        }
        ix.slow_load(g, bits, exec)
    })
}

fn load_elems<const W: u32>(g: &mut Gen<W>, h: &str, bits: u32, exec: &str) -> String {
    let size = bits / 8;
    let (h0, all) = contiguous(g, h, size, exec);
    load_split(g, &h0, &all, bits, exec, |g| {
        // Narrow elements have no hardware gather: one of each 32-bit word
        // (a byte of each `int`, say) is worth its own test.
        if bits >= 32 {
            return slow_elems(g, h, bits, exec);
        }
        let (_, every) = contiguous(g, h, 4, exec);
        g.if_else(
            "ld_words",
            &every,
            &vt::<W>(bits),
            |g| load_strided(g, &h0, 4 / size, bits, exec),
            |g| slow_elems(g, h, bits, exec),
        )
    })
}

/// The elements from `h0` on, by one vector load if `all` (they are
/// consecutive), else as `other` reads them (a gather, out of line: one
/// copy per element size keeps kernels small).
fn load_split<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    all: &str,
    bits: u32,
    exec: &str,
    other: impl FnOnce(&mut Gen<W>) -> String,
) -> String {
    g.if_else(
        "ld_contig",
        all,
        &vt::<W>(bits),
        |g| load_contig(g, h0, bits, exec, false),
        other,
    )
}

/// The most lanes, from lane 0, that a shared access of a partial warp
/// reads or writes with a plain access of just their elements (see
/// `load_contig`, `store_contig`): four without AVX-512 (measured there),
/// else what one 512-bit register holds, up to 16 (a tree reduction's
/// steps of 16, 8, 4, 2 and 1 lanes each read what the step before
/// stored: 65 -> 21 ns for the five steps here, Xeon).
pub(crate) fn few_lanes_max<const W: u32>(g: &Gen<W>, bits: u32) -> u32 {
    if g.avx512 {
        (512 / bits).min(16)
    } else {
        4
    }
}

/// `@wf_ld_few_{bits}(p, m)`: the elements of the lanes of `m`, all
/// among the first `max` (and some set), read with the narrowest load
/// that covers them: 1, 2, 4, ... `max` elements from `p` (see
/// `load_contig`), the other lanes zero. Not undefined: LLVM would read
/// them with the same load, widened (a 16-lane add from memory where 8
/// lanes were asked, which straddles the step before's store again).
pub(crate) fn few_load_fn<const W: u32>(bits: u32, max: u32) -> String {
    let vty = vt::<W>(bits);
    let head =
        format!("define internal {vty} @wf_ld_few_{bits}({vty}* %p, i32 %m) alwaysinline #0");
    few_arms(&head, max, |n| {
        // Lane i < n from element i, the others from the zero vector.
        let idx: Vec<String> = (0..W).map(|i| format!("i32 {}", i.min(n))).collect();
        format!(
            "  %q{n} = bitcast {vty}* %p to <{n} x i{bits}>*\n  %x{n} = load <{n} x i{bits}>, <{n} x i{bits}>* %q{n}, align {}\n  %v{n} = shufflevector <{n} x i{bits}> %x{n}, <{n} x i{bits}> zeroinitializer, <{W} x i32> <{}>\n  ret {vty} %v{n}\n",
            bits / 8,
            idx.join(", ")
        )
    })
}

/// `@wf_st_few_{bits}(p, v, m)`: the elements of `v`'s lanes of `m`, all
/// among the first `max` (and some set), stored with the narrowest plain
/// store that covers them, `n` = 1, 2, 4, ... `max` elements from `p`:
/// of `v` alone when `m` holds all `n` lanes, else blended with the
/// elements there (only for memory this worker alone writes, with slack
/// around it: shared memory; see `blend_store`). A masked store gives its
/// bytes to no later load until it reaches the cache (see `few_lanes_max`).
pub(crate) fn few_store_fn<const W: u32>(bits: u32, max: u32) -> String {
    let vty = vt::<W>(bits);
    let size = bits / 8;
    let head = format!(
        "define internal void @wf_st_few_{bits}({vty}* %p, {vty} %v, i32 %m) alwaysinline #0"
    );
    few_arms(&head, max, |n| {
        let t = format!("<{n} x i{bits}>");
        let idx: Vec<String> = (0..n).map(|i| format!("i32 {i}")).collect();
        let all = crate::emit::low_bits(n);
        format!(
            "  %q{n} = bitcast {vty}* %p to {t}*\n  %x{n} = shufflevector {vty} %v, {vty} undef, <{n} x i32> <{}>\n  %all{n} = icmp eq i32 %m, {all}\n  br i1 %all{n}, label %s{n}, label %b{n}\ns{n}:\n  store {t} %x{n}, {t}* %q{n}, align {size}\n  ret void\nb{n}:\n  %o{n} = load {t}, {t}* %q{n}, align {size}\n  %k{n} = trunc i32 %m to i{n}\n  %kb{n} = bitcast i{n} %k{n} to <{n} x i1>\n  %y{n} = select <{n} x i1> %kb{n}, {t} %x{n}, {t} %o{n}\n  store {t} %y{n}, {t}* %q{n}, align {size}\n  ret void\n",
            idx.join(", ")
        )
    })
}

/// A helper `head {...}` that goes to arm `n` = 1, 2, 4, ... `max` for
/// the narrowest `n` whose first `n` lanes hold every lane of `%m`: block
/// `n{n}` holds `arm(n)`, which returns.
fn few_arms(head: &str, max: u32, arm: impl Fn(u32) -> String) -> String {
    let mut f = format!("{head} {{\nentry:\n");
    let mut n = 1;
    while n <= max {
        if n < max {
            f.push_str(&format!(
                "  %a{n} = and i32 %m, -{}\n  %f{n} = icmp eq i32 %a{n}, 0\n  br i1 %f{n}, label %n{n}, label %w{n}\n",
                1u64 << n
            ));
        } else {
            f.push_str(&format!("  br label %n{n}\n"));
        }
        f.push_str(&format!("n{n}:\n{}w{n}:\n", arm(n)));
        n *= 2;
    }
    f.push_str("  unreachable\n}\n\n");
    f
}

/// The out-of-line part of a load of `bits`-bit elements whose lanes are
/// not consecutive: each half-warp (16 lanes at W = 32: a row of a 16-wide block)
/// reading one address (two scalar loads) or its own consecutive elements
/// (two half-width loads); else a gather.
pub(crate) fn slow_load_fn<const W: u32>(bits: u32, avx512: bool) -> String {
    let size = bits / 8;
    let list = |f: &dyn Fn(u32) -> String| (0..W).map(f).collect::<Vec<_>>().join(", ");
    // Halves of the warp (16 lanes at W = 32).
    let h = W / 2;
    let half_idx = list(&|i| format!("i32 {}", if i < h { 0 } else { h }));
    let steps = list(&|l| format!("i64 {}", (l % h) * size));
    let (lo, hi, all) = (
        lanes_mask::<W>(0..h),
        lanes_mask::<W>(h..W),
        lanes_mask::<W>(0..W),
    );
    let lo_bits = (1u32 << h) - 1;
    let every = full_bits::<W>();
    let eb = bits_of_mask_ir::<W>("%eb", "%exec");
    let ones = sc::<W>(1, 1);
    // With AVX-512 it is inlined (a gather is one instruction there): a
    // call in a loop, even one never made, clobbers every vector register,
    // and values live across it spill on the hot path too (sgemm 7.4 ->
    // 6.2 ms, spmv 3.7 -> 3.2 ms).
    let inl = if avx512 { "alwaysinline" } else { "noinline" };
    format!(
        "define internal <{W} x i{bits}> @wf_ld_slow_{bits}(<{W} x i64> %h, <{W} x i1> %exec) {inl} #0 {{
entry:
  {eb}
  %h0 = extractelement <{W} x i64> %h, i32 0
  %h16 = extractelement <{W} x i64> %h, i32 {h}
  %x = insertelement <{W} x i64> undef, i64 %h0, i32 0
  %y = insertelement <{W} x i64> %x, i64 %h16, i32 {h}
  %halves = shufflevector <{W} x i64> %y, <{W} x i64> undef, <{W} x i32> <{half_idx}>
  %nex = xor <{W} x i1> %exec, {ones}
  %same = icmp eq <{W} x i64> %h, %halves
  %ok = or <{W} x i1> %same, %nex
  %all_same = call i1 @llvm.vector.reduce.and.v{W}i1(<{W} x i1> %ok)
  %lo = and i32 %eb, {lo_bits}
  %hi = lshr i32 %eb, {h}
  %lo_any = icmp ne i32 %lo, 0
  %hi_any = icmp ne i32 %hi, 0
  %both = and i1 %lo_any, %hi_any
  %bc = and i1 %all_same, %both
  br i1 %bc, label %bcast, label %halves_test
bcast:
  %sp0 = inttoptr i64 %h0 to i{bits}*
  %sv0 = load i{bits}, i{bits}* %sp0, align {size}
  %sp1 = inttoptr i64 %h16 to i{bits}*
  %sv1 = load i{bits}, i{bits}* %sp1, align {size}
  %bx = insertelement <{W} x i{bits}> undef, i{bits} %sv0, i32 0
  %by = insertelement <{W} x i{bits}> %bx, i{bits} %sv1, i32 {h}
  %bv = shufflevector <{W} x i{bits}> %by, <{W} x i{bits}> undef, <{W} x i32> <{half_idx}>
  ret <{W} x i{bits}> %bv
halves_test:
  %expect = add <{W} x i64> %halves, <{steps}>
  %eq = icmp eq <{W} x i64> %h, %expect
  %ok2 = or <{W} x i1> %eq, %nex
  %all2 = call i1 @llvm.vector.reduce.and.v{W}i1(<{W} x i1> %ok2)
  br i1 %all2, label %rows, label %gather
rows:
  %p0 = inttoptr i64 %h0 to <{h} x i{bits}>*
  %p1 = inttoptr i64 %h16 to <{h} x i{bits}>*
  %every = icmp eq i32 %eb, {every}
  br i1 %every, label %rows_plain, label %rows_masked
rows_plain:
  %x0 = load <{h} x i{bits}>, <{h} x i{bits}>* %p0, align {size}
  %x1 = load <{h} x i{bits}>, <{h} x i{bits}>* %p1, align {size}
  %xv = shufflevector <{h} x i{bits}> %x0, <{h} x i{bits}> %x1, <{W} x i32> {all}
  ret <{W} x i{bits}> %xv
rows_masked:
  %m0 = shufflevector <{W} x i1> %exec, <{W} x i1> undef, <{h} x i32> {lo}
  %m1 = shufflevector <{W} x i1> %exec, <{W} x i1> undef, <{h} x i32> {hi}
  %w0 = call <{h} x i{bits}> @llvm.masked.load.v{h}i{bits}.p0v{h}i{bits}(<{h} x i{bits}>* %p0, i32 {size}, <{h} x i1> %m0, <{h} x i{bits}> undef)
  %w1 = call <{h} x i{bits}> @llvm.masked.load.v{h}i{bits}.p0v{h}i{bits}(<{h} x i{bits}>* %p1, i32 {size}, <{h} x i1> %m1, <{h} x i{bits}> undef)
  %v = shufflevector <{h} x i{bits}> %w0, <{h} x i{bits}> %w1, <{W} x i32> {all}
  ret <{W} x i{bits}> %v
gather:
  %ps = inttoptr <{W} x i64> %h to <{W} x i{bits}*>
  %g = call <{W} x i{bits}> @llvm.masked.gather.v{W}i{bits}.v{W}p0i{bits}(<{W} x i{bits}*> %ps, i32 {size}, <{W} x i1> %exec, <{W} x i{bits}> undef)
  ret <{W} x i{bits}> %g
}}

"
    )
}

fn store_elems<const W: u32>(g: &mut Gen<W>, h: &str, bits: u32, v: &str, exec: &str) {
    let (h0, all) = contiguous(g, h, bits / 8, exec);
    store_elems_split(g, &h0, &all, |_| h.to_string(), bits, v, exec);
}

/// `store_elems` with the test done: one vector store from `h0` if `all`,
/// else a scatter to the addresses `h` makes.
fn store_elems_split<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    all: &str,
    h: impl FnOnce(&mut Gen<W>) -> String,
    bits: u32,
    v: &str,
    exec: &str,
) {
    let (lc, lg, lj) = (
        g.label("st_contig"),
        g.label("st_scatter"),
        g.label("st_join"),
    );
    g.line(&format!("br i1 {all}, label %{lc}, label %{lg}"));
    g.emit_label(&lc);
    store_contig(g, h0, bits, v, exec, false, false);
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lg);
    // Not consecutive: a scatter (data-dependent positions, the usual case
    // here, gain nothing from the row tests loads use).
    let h = h(g);
    scatter_elems(g, &h, bits, v, exec);
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lj);
}

/// `v` to consecutive elements from lane 0's address `h0`, for the lanes
/// of `exec`. With `streaming` (global memory, elements of 32 bits or
/// more), a launch that fills the caches (`env::STREAM`) stores whole
/// warps at 64-byte aligned addresses non-temporally: the lines go to
/// memory without being read first (a quarter of a triad's traffic, a
/// third of a copy's). Other cores see them after the worker's `sfence`
/// (see `launch`) or a fence or locked instruction in the kernel.
fn store_contig<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    bits: u32,
    v: &str,
    exec: &str,
    streaming: bool,
    owned: bool,
) {
    if g.cold() && !streaming {
        return cold_store(g, h0, bits, v, exec, owned);
    }
    let size = bits / 8;
    let lj = g.label("st_cj");
    let bp = g.t();
    g.line(&format!("{bp} = inttoptr i64 {h0} to {}*", vt::<W>(bits)));
    // All 32 lanes: a plain store (masked stores are slow on some CPUs).
    let eb = g.bits_of_mask(exec);
    let full = g.t();
    g.line(&format!("{full} = icmp eq i32 {eb}, {}", full_bits::<W>()));
    let (lf, lm) = (g.label("st_full"), g.label("st_masked"));
    g.line(&format!("br i1 {full}, label %{lf}, label %{lm}"));
    g.emit_label(&lf);
    let whole = |g: &mut Gen<W>, attrs: &str| {
        g.line(&format!(
            "store {} {v}, {}* {bp}, {attrs}",
            vt::<W>(bits),
            vt::<W>(bits)
        ));
        g.line(&format!("br label %{lj}"));
    };
    if streaming {
        // One test for "streaming and 64-byte aligned" (only the null
        // address passes it otherwise, and a store there faults anyway).
        let need = g.env(env::STREAM);
        let low = g.def(&format!("and i64 {h0}, {need}"));
        let nt = g.def(&format!("icmp eq i64 {low}, 0"));
        let (ls, lc) = (g.label("st_nt"), g.label("st_cached"));
        g.line(&format!("br i1 {nt}, label %{ls}, label %{lc}"));
        g.emit_label(&ls);
        whole(g, "align 64, !nontemporal !{i32 1}");
        g.emit_label(&lc);
    }
    whole(g, &format!("align {size}"));
    g.emit_label(&lm);
    let max = few_lanes_max(g, bits);
    if owned && !g.avx512 {
        let some = g.def(&format!("icmp ne i32 {eb}, 0"));
        blend_store_if(g, &some, &bp, W, bits, v, exec);
    } else {
        let start = g.out.len();
        let few = owned && W > max && g.structured_only;
        if few {
            // Some of the first `max` lanes only: the narrowest plain store
            // (see `few_store_fn`), so that the next step's narrow loads
            // (`load_contig`) take their bytes from it.
            let high = g.def(&format!("and i32 {eb}, -{}", 1u64 << max));
            let low = g.def(&format!("icmp eq i32 {high}, 0"));
            let some = g.def(&format!("icmp ne i32 {eb}, 0"));
            let few = g.def(&format!("and i1 {low}, {some}"));
            let (lfew, lmask) = (g.label("st_few"), g.label("st_masked"));
            g.line(&format!("br i1 {few}, label %{lfew}, label %{lmask}"));
            g.emit_label(&lfew);
            g.few_stores.insert(bits);
            g.line(&format!(
                "call void @wf_st_few_{bits}({}* {bp}, {} {v}, i32 {eb})",
                vt::<W>(bits),
                vt::<W>(bits)
            ));
            g.line(&format!("br label %{lj}"));
            g.emit_label(&lmask);
        }
        masked_store(g, W, bits, v, &bp, exec);
        if few {
            g.unbudgeted_bytes += g.out.len() - start;
        }
    }
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lj);
}

/// The address of a vector at `h0`, or of the scratch row when no lane of
/// `eb` runs (then `h0` may be anywhere; see `row_sink`).
fn or_sink<const W: u32>(g: &mut Gen<W>, h0: &str, eb: &str, bits: u32) -> String {
    let some = g.def(&format!("icmp ne i32 {eb}, 0"));
    let at = at_or_sink(g, h0, &some);
    g.def(&format!("inttoptr i64 {at} to {}*", vt::<W>(bits)))
}

/// `load_contig` in a seldom-run block (`Gen::cold`):
/// one path for any mask, where the fast one adds blocks to generate code
/// for. Shared memory: a plain load (its slack covers the vector when a
/// lane runs); else a masked one.
fn cold_load<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    bits: u32,
    exec: &str,
    eb: &str,
    owned: bool,
) -> String {
    let (t, size) = (vt::<W>(bits), bits / 8);
    if owned {
        let p = or_sink(g, h0, eb, bits);
        return g.def(&format!("load {t}, {t}* {p}, align {size}"));
    }
    let p = g.def(&format!("inttoptr i64 {h0} to {t}*"));
    masked_load(g, &p, bits, exec)
}

/// The lanes of `exec` read from the vector at `bp` (a `<W x i{bits}>*`),
/// the others undefined; lanes off touch no memory.
fn masked_load<const W: u32>(g: &mut Gen<W>, bp: &str, bits: u32, exec: &str) -> String {
    let (t, size) = (vt::<W>(bits), bits / 8);
    g.def(&format!(
        "call {t} @llvm.masked.load.v{W}i{bits}.p0v{W}i{bits}({t}* {bp}, i32 {size}, <{W} x i1> {exec}, {t} undef)"
    ))
}

/// `store_contig` in a seldom-run block: one path. Shared
/// memory without AVX-512: a blend (see `blend_store`), into the scratch
/// row when no lane runs; else a masked store.
fn cold_store<const W: u32>(g: &mut Gen<W>, h0: &str, bits: u32, v: &str, exec: &str, owned: bool) {
    let t = vt::<W>(bits);
    if owned && !g.avx512 {
        let eb = g.bits_of_mask(exec);
        let p = or_sink(g, h0, &eb, bits);
        blend_store(g, &p, W, bits, v, exec);
        return;
    }
    let p = g.def(&format!("inttoptr i64 {h0} to {t}*"));
    masked_store(g, W, bits, v, &p, exec);
}

/// `x` (`<n x i{bits}>`) to the elements at `p` where mask `m` is set, as
/// a read, a blend and a plain store. Only for memory this worker alone
/// writes, with slack around it (shared memory, see `crate::SHARED_SLACK`):
/// no other thread can write the other elements in between. Without
/// AVX-512 a masked store is microcoded on some CPUs (about ten times a
/// plain one on Zen 3), and a later load of the same bytes cannot take its
/// value from it.
fn blend_store<const W: u32>(g: &mut Gen<W>, p: &str, n: u32, bits: u32, x: &str, m: &str) {
    let (t, align) = (format!("<{n} x i{bits}>"), bits / 8);
    let old = g.def(&format!("load {t}, {t}* {p}, align {align}"));
    let y = g.def(&format!("select <{n} x i1> {m}, {t} {x}, {t} {old}"));
    g.line(&format!("store {t} {y}, {t}* {p}, align {align}"));
}

/// `blend_store` when `any` (some element of `m` is set): with none,
/// `p` need not point into the slack.
fn blend_store_if<const W: u32>(
    g: &mut Gen<W>,
    any: &str,
    p: &str,
    n: u32,
    bits: u32,
    x: &str,
    m: &str,
) {
    let (go, join) = (g.label("st_blend"), g.label("st_blendj"));
    g.line(&format!("br i1 {any}, label %{go}, label %{join}"));
    g.emit_label(&go);
    blend_store(g, p, n, bits, x, m);
    g.line(&format!("br label %{join}"));
    g.emit_label(&join);
}

/// `x` (`<n x i{bits}>`) to the elements at `p` where mask `m` is set,
/// with `llvm.masked.store` (declared by `masked_store_decl`).
pub(crate) fn masked_store<const W: u32>(
    g: &mut Gen<W>,
    n: u32,
    bits: u32,
    x: &str,
    p: &str,
    m: &str,
) {
    g.line(&format!(
        "call void @llvm.masked.store.v{n}i{bits}.p0v{n}i{bits}(<{n} x i{bits}> {x}, <{n} x i{bits}>* {p}, i32 {}, <{n} x i1> {m})",
        bits / 8
    ));
}

/// The declaration `masked_store` of `n` elements of `bits` needs.
pub(crate) fn masked_store_decl(n: u32, bits: u32) -> String {
    format!("declare void @llvm.masked.store.v{n}i{bits}.p0v{n}i{bits}(<{n} x i{bits}>, <{n} x i{bits}>*, i32, <{n} x i1>)")
}

/// Whether `dst` takes `src`'s value as is and both hold NaNs made
/// canonical only when observed (see `uniform::lazily_canonical_floats`).
fn carries_lazy_nan<const W: u32>(g: &Gen<W>, dst: Reg, src: Value, bits: u32) -> bool {
    let Value::Reg(s) = src else { return false };
    let t = g.float_reg[dst.0 as usize];
    t.is_some_and(|t| t.bits() == bits) && g.float_reg[s.0 as usize] == t
}

/// The value of the last lane of `exec` to the one address `h`, if any;
/// with `canon`, `v` is of that float type and its NaN is made canonical.
fn store_last_lane<const W: u32>(
    g: &mut Gen<W>,
    h: &str,
    bits: u32,
    v: &str,
    exec: &str,
    canon: Option<Ty>,
) {
    let eb = g.bits_of_mask(exec);
    let any = g.def(&format!("icmp ne i32 {eb}, 0"));
    let (st, done) = (g.label("st_one"), g.label("st_onej"));
    g.line(&format!("br i1 {any}, label %{st}, label %{done}"));
    g.emit_label(&st);
    // The one lane that may store (`if (lane == 0) out[w] = v`).
    let at = (g.cur_id as usize, g.cur_inst);
    let only = crate::demanded::single_lane(g.p, &g.lanes, &g.possible, W, at);
    let x = if let Some(l) = only {
        g.def(&format!("extractelement {} {v}, i32 {l}", vt::<W>(bits)))
    } else {
        store_lane_value(g, v, bits, &eb)
    };
    store_one_value(g, h, bits, x, canon, &done);
}

/// The value of the last lane of `eb` (not zero) in `v`.
fn store_lane_value<const W: u32>(g: &mut Gen<W>, v: &str, bits: u32, eb: &str) -> String {
    let lz = g.def(&format!("call i32 @llvm.ctlz.i32(i32 {eb}, i1 true)"));
    let lane = g.def(&format!("sub i32 31, {lz}"));
    if g.avx512 {
        lane_value(g, v, bits, &lane)
    } else {
        // Lane 0 (`if (lane == 0) out[w] = v`) without the trip through
        // the stack: warp-shuffle reduction 4.26 -> 4.00 ms. A permute of
        // each 8-lane quarter and a scalar pick instead was slower (4.84).
        let first = g.def(&format!("icmp eq i32 {lane}, 0"));
        let (l0, ln, lj) = (g.label("lane0"), g.label("lanen"), g.label("lanej"));
        g.line(&format!("br i1 {first}, label %{l0}, label %{ln}"));
        g.emit_label(&l0);
        let x0 = g.def(&format!("extractelement {} {v}, i32 0", vt::<W>(bits)));
        g.line(&format!("br label %{lj}"));
        g.emit_label(&ln);
        let xn = lane_value(g, v, bits, &lane);
        g.line(&format!("br label %{lj}"));
        g.emit_label(&lj);
        g.def(&format!("phi i{bits} [ {x0}, %{l0} ], [ {xn}, %{ln} ]"))
    }
}

/// `store_last_lane`'s store of the lane's value `x` (its NaN made
/// canonical with `canon`), and the join at `done`.
fn store_one_value<const W: u32>(
    g: &mut Gen<W>,
    h: &str,
    bits: u32,
    x: String,
    canon: Option<Ty>,
    done: &str,
) {
    let x = match canon {
        Some(t) => {
            // In integer registers (no trip to a vector register): a NaN
            // is an exponent of all ones and a fraction not zero.
            let (q, inf) = if t.bits() == 64 {
                (0x7fff_ffff_ffff_ffffu64, 0x7ff0_0000_0000_0000u64)
            } else {
                (0x7fff_ffff, 0x7f80_0000)
            };
            let m = g.def(&format!("and i{bits} {x}, {q}"));
            let nan = g.def(&format!("icmp ugt i{bits} {m}, {inf}"));
            g.def(&format!("select i1 {nan}, i{bits} {q}, i{bits} {x}"))
        }
        None => x,
    };
    let p = g.def(&format!("inttoptr i64 {h} to i{bits}*"));
    g.line(&format!(
        "store i{bits} {x}, i{bits}* {p}, align {}",
        bits / 8
    ));
    g.line(&format!("br label %{done}"));
    g.emit_label(&done);
}

/// Lane `lane` (a run-time i32) of `v`. LLVM extracts a variable lane by
/// a round trip through the stack, and on Zen 4 the narrow load waits for
/// the wide store to retire (18% of the warp-shuffle reduction); with
/// AVX-512 a two-source permute brings 32-bit lanes to lane 0 instead.
fn lane_value<const W: u32>(g: &mut Gen<W>, v: &str, bits: u32, lane: &str) -> String {
    if !(g.avx512 && bits == 32 && W == 32) {
        return g.def(&format!("extractelement {} {v}, i32 {lane}", vt::<W>(bits)));
    }
    let half = |g: &mut Gen<W>, from: u32| {
        let idx: Vec<String> = (from..from + 16).map(|i| format!("i32 {i}")).collect();
        g.def(&format!(
            "shufflevector <{W} x i32> {v}, <{W} x i32> undef, <16 x i32> <{}>",
            idx.join(", ")
        ))
    };
    let (lo, hi) = (half(g, 0), half(g, 16));
    let li = g.def(&format!(
        "insertelement <16 x i32> undef, i32 {lane}, i32 0"
    ));
    let r = g.def(&format!(
        "call <16 x i32> @llvm.x86.avx512.vpermi2var.d.512(<16 x i32> {lo}, <16 x i32> {li}, <16 x i32> {hi})"
    ));
    g.def(&format!("extractelement <16 x i32> {r}, i32 0"))
}

/// Marks the reads of memory emitted from byte `start` of the output on
/// (the code of one `ld.global`) with `!wf.global`: PTX's global space
/// never holds shared memory, so `shared_regs` need not write its mirror
/// back before them (a block reduction's loads then leave the shared
/// stores between them in registers).
fn mark_global_reads<const W: u32>(g: &mut Gen<W>, start: usize) {
    let marked: Vec<String> = g.out[start..]
        .lines()
        .map(|line| {
            let reads = line.contains(" = load ")
                || line.contains("@llvm.masked.load.")
                || line.contains("@llvm.masked.gather.");
            if reads {
                format!("{line}, !{} !{{}}", crate::shared_regs::GLOBAL_READ)
            } else {
                line.to_string()
            }
        })
        .collect();
    g.out.truncate(start);
    for line in marked {
        g.out.push_str(&line);
        g.out.push('\n');
    }
}

/// A load of `dsts` from `[addr]`: without per-lane addresses where the
/// address register's lane form allows (see `lanes`), else tested per lane.
fn load<const W: u32>(
    g: &mut Gen<W>,
    addr: &Address,
    space: Space,
    ty: Ty,
    dsts: &[Option<Reg>],
    exec: &str,
) -> R {
    let bits = ty.bits();
    let rows = rows_consecutive(g, addr, space, bits, dsts.len());
    if let ([Some(d)], true) = (dsts, rows && bits >= 32) {
        let by_row = crate::indexed::index_register(g, addr, space, bits / 8)
            .is_some_and(|i| crate::indexed::row_indexable(g, i));
        if let Some(ix) = indexed(g, addr, space, bits / 8).filter(|_| by_row) {
            let firsts = ix.row_firsts(g);
            let v = load_row_indexed(g, &ix, firsts, space, bits, exec);
            g.set(*d, &v, bits, ty.is_signed(), exec);
            return Ok(());
        }
    }
    let per_lane = if rows { row_elems } else { load_elems };
    let Some((h0, l, k)) = affine_host_addr(g, addr, space) else {
        if let ([Some(d)], true) = (dsts, bits >= 32 && !rows) {
            if let Some(ix) = indexed(g, addr, space, bits / 8) {
                let v = load_indexed(g, &ix, space, bits, exec);
                g.set(*d, &v, bits, ty.is_signed(), exec);
                return Ok(());
            }
        }
        return load_per_lane(g, addr, space, ty, dsts, exec, per_lane);
    };
    // A jump inside the warp (rare): the lanes through one call (see
    // `past_jump`). With AVX-512 too: a gather in line cost a 3-D
    // stencil's JIT 120 of its 410 ms (LLVM passes 71 -> 34 ms, code
    // generation 337 -> 252 ms).
    let jump_side = |g: &mut Gen<W>| loads_past_jump(g, &h0, &l, k.as_deref(), ty, dsts, exec);
    let n = dsts.len() as i64;
    if matches!(n, 2 | 4) && l.extra == 0 && l.stride == n * i64::from(bits / 8) {
        // Each lane's group right after the previous lane's (an array of
        // float4s): one contiguous load, then the elements picked apart.
        if space == Space::Global {
            prefetch_stride(g, &h0, Some(l.stride));
        }
        let split = split_on_jump(g, &k);
        let vs = load_interleaved(g, &h0, bits, n as u32, exec);
        for (d, v) in dsts.iter().zip(&vs) {
            if let Some(d) = d {
                g.set(*d, v, bits, ty.is_signed(), exec);
            }
        }
        return rejoin_after_jump(g, split, jump_side);
    }
    // Known consecutive (or one address): no test; else every f-th
    // element of a window; else known positions.
    let stride = strided(&l, bits);
    let reversed = reversed(&l, bits);
    let index = if direct(&l, &k, bits / 8) || stride.is_some() || reversed {
        None
    } else {
        match element_index::<W>(&l, bits) {
            Some(idx) => Some(idx),
            None => return load_per_lane(g, addr, space, ty, dsts, exec, per_lane),
        }
    };
    if space == Space::Global {
        let step = (l.extra == 0 && l.stride > 0).then_some(l.stride);
        prefetch_stride(g, &h0, step);
    }
    let owned = space == Space::Shared;
    let split = split_on_jump(g, &k);
    for (i, d) in dsts.iter().enumerate() {
        let hi = g.def(&format!("add i64 {h0}, {}", i as u32 * bits / 8));
        let v = match (&index, stride) {
            (Some(idx), _) => match shared_window::<W>(&l, bits, owned) {
                Some(win) => gather_window(g, &hi, &win, bits, exec),
                None if lane_by_lane(g) => gather_spaced(g, &hi, &l, idx, bits, exec),
                None => gather_from(g, &hi, idx, bits, exec),
            },
            (None, Some(f)) => load_strided(g, &hi, f, bits, exec),
            _ if reversed => {
                let (lo, m) = reverse_access(g, &hi, bits, exec);
                let v = load_contig(g, &lo, bits, &m, owned);
                g.def(&format!(
                    "shufflevector {} {v}, {} undef, <{W} x i32> {}",
                    vt::<W>(bits),
                    vt::<W>(bits),
                    reverse_lanes::<W>()
                ))
            }
            _ if l.extra != 0 => load_rows(g, &hi, &l, bits, exec, owned),
            _ if l.stride == 0 => load_broadcast(g, &hi, bits, exec),
            _ => load_contig(g, &hi, bits, exec, owned),
        };
        if let Some(d) = d {
            g.set(*d, &v, bits, ty.is_signed(), exec);
        }
    }
    rejoin_after_jump(g, split, jump_side)
}

/// Whether a global access of one `bits`-wide element at `addr` reads or
/// writes consecutive elements in each block row of the warp, but for a
/// jump where a widened index wraps (see `Gen::row_lanes`), so that
/// `row_elems` or `row_store_elems` serves it.
fn rows_consecutive<const W: u32>(
    g: &Gen<W>,
    addr: &Address,
    space: Space,
    bits: u32,
    elems: usize,
) -> bool {
    let AddrBase::Reg(r) = addr.base else {
        return false;
    };
    space == Space::Global
        && elems == 1
        && g.row_lanes
            .get(r.0 as usize)
            .copied()
            .flatten()
            .is_some_and(|l| l.extra == 0 && l.stride == i64::from(bits / 8))
}

/// Elements at host addresses `h` whose rows of `g.row_width` lanes each
/// read consecutive elements (see `rows_consecutive`): with every lane
/// on and no row straddling a jump (its last lane's address is its
/// first's plus the row), one plain load per row from its first lane's
/// address; else `load_elems` (lanes off hold stale addresses). A 16 x 16
/// SGEMM tile's loads spent a third of its time in `load_elems`'s tests
/// and the gather they fell back to.
fn row_elems<const W: u32>(g: &mut Gen<W>, h: &str, bits: u32, exec: &str) -> String {
    let (w, size) = (g.row_width, bits / 8);
    let t = format!("<{w} x i{bits}>");
    let rows = whole_rows(g, h, bits, exec, "rowld");
    let parts: Vec<String> = rows
        .firsts
        .iter()
        .map(|first| {
            let p = g.def(&format!("inttoptr i64 {first} to {t}*"));
            g.def(&format!("load {t}, {t}* {p}, align {size}"))
        })
        .collect();
    let v0 = join_rows(g, parts, w, bits);
    g.line(&format!("br label %{}", rows.join));
    g.emit_label(&rows.other);
    let v1 = load_elems(g, h, bits, exec);
    let lpe = g.label("rowld_other_end");
    g.line(&format!("br label %{lpe}"));
    g.emit_label(&lpe);
    g.line(&format!("br label %{}", rows.join));
    g.emit_label(&rows.join);
    g.def(&format!(
        "phi {} [ {v0}, %{} ], [ {v1}, %{lpe} ]",
        vt::<W>(bits),
        rows.all
    ))
}

/// The row accesses' branch (see `row_elems`), emitted up to the start
/// of its whole-rows side.
struct RowBranch {
    /// Each row's first host address.
    firsts: Vec<String>,
    /// Labels: whole rows (current block), the per-lane side, the join.
    all: String,
    other: String,
    join: String,
}

/// Branch to whole-rows code when every lane of `exec` runs and each row
/// of `g.row_width` lanes of host addresses `h` spans exactly its
/// elements (no jump inside), else to the per-lane side; labels start
/// with `prefix`.
fn whole_rows<const W: u32>(
    g: &mut Gen<W>,
    h: &str,
    bits: u32,
    exec: &str,
    prefix: &str,
) -> RowBranch {
    let (w, size) = (g.row_width, bits / 8);
    let eb = g.bits_of_mask(exec);
    let mut fast = g.def(&format!("icmp eq i32 {eb}, {}", full_bits::<W>()));
    let mut firsts = Vec::new();
    for row in 0..W / w {
        let first = g.def(&format!("extractelement <{W} x i64> {h}, i32 {}", row * w));
        let last = g.def(&format!(
            "extractelement <{W} x i64> {h}, i32 {}",
            row * w + w - 1
        ));
        let span = g.def(&format!("sub i64 {last}, {first}"));
        let whole = g.def(&format!("icmp eq i64 {span}, {}", (w - 1) * size));
        fast = g.def(&format!("and i1 {fast}, {whole}"));
        firsts.push(first);
    }
    let rows = RowBranch {
        firsts,
        all: g.label(&format!("{prefix}_all")),
        other: g.label(&format!("{prefix}_other")),
        join: g.label(&format!("{prefix}_join")),
    };
    g.line(&format!(
        "br i1 {fast}, label %{}, label %{}",
        rows.all, rows.other
    ));
    g.emit_label(&rows.all);
    rows
}

/// `v` to host addresses `h` whose rows each write consecutive elements
/// (see `rows_consecutive`): one plain store per row under the conditions
/// of `row_elems`, else `store_elems`.
fn row_store_elems<const W: u32>(g: &mut Gen<W>, h: &str, bits: u32, v: &str, exec: &str) {
    let (w, size) = (g.row_width, bits / 8);
    let t = format!("<{w} x i{bits}>");
    let rows = whole_rows(g, h, bits, exec, "rowst");
    for (row, first) in rows.firsts.iter().enumerate() {
        let row = row as u32;
        let x = g.def(&format!(
            "shufflevector <{W} x i{bits}> {v}, <{W} x i{bits}> undef, <{w} x i32> {}",
            lanes_mask::<W>(row * w..(row + 1) * w)
        ));
        let p = g.def(&format!("inttoptr i64 {first} to {t}*"));
        g.line(&format!("store {t} {x}, {t}* {p}, align {size}"));
    }
    g.line(&format!("br label %{}", rows.join));
    g.emit_label(&rows.other);
    store_elems(g, h, bits, v, exec);
    g.line(&format!("br label %{}", rows.join));
    g.emit_label(&rows.join);
}

/// Rows of `w` lanes joined pairwise into one warp-wide vector.
fn join_rows<const W: u32>(g: &mut Gen<W>, mut parts: Vec<String>, w: u32, bits: u32) -> String {
    let mut n = w;
    while parts.len() > 1 {
        let mut next = Vec::new();
        for pair in parts.chunks(2) {
            next.push(g.def(&format!(
                "shufflevector <{n} x i{bits}> {}, <{n} x i{bits}> {}, <{} x i32> {}",
                pair[0],
                pair[1],
                2 * n,
                lanes_mask::<W>(0..2 * n)
            )));
        }
        parts = next;
        n *= 2;
    }
    parts.pop().unwrap_or_default()
}

/// Whether lanes of form `l` access consecutive `bits`-wide elements in
/// reverse (lane i at lane 0's address minus i elements: `a[n - 1 - i]`).
fn reversed(l: &Lanes, bits: u32) -> bool {
    l.extra == 0 && l.stride == -i64::from(bits / 8)
}

/// `<31, 30, ..., 0>`: the lane order of a reversed access.
fn reverse_lanes<const W: u32>() -> String {
    let idx: Vec<String> = (0..W).rev().map(|i| format!("i32 {i}")).collect();
    format!("<{}>", idx.join(", "))
}

/// A reversed access (see `reversed`) as a forward one: the address of
/// lane 31's element and the lanes' mask in reverse.
fn reverse_access<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    bits: u32,
    exec: &str,
) -> (String, String) {
    let lo = g.def(&format!("sub i64 {h0}, {}", (W - 1) * (bits / 8)));
    let m = g.def(&format!(
        "shufflevector <{W} x i1> {exec}, <{W} x i1> undef, <{W} x i32> {}",
        reverse_lanes::<W>()
    ));
    (lo, m)
}

/// Elements at host addresses `h` through the out-of-line slow load.
fn slow_elems<const W: u32>(g: &mut Gen<W>, h: &str, bits: u32, exec: &str) -> String {
    g.slow_loads.insert(bits);
    g.def(&format!(
        "call {} @wf_ld_slow_{bits}(<{W} x i64> {h}, <{W} x i1> {exec})",
        vt::<W>(bits)
    ))
}

/// The factor `f` when the lanes of form `l` read every `f`-th element
/// of one window of `32 f` elements, and one masked vector load of the
/// window and a shuffle beat a gather: narrow elements (no hardware
/// gather; a byte of each `int`, say) up to `f` = 8, and pairs of 32-bit
/// elements (the real parts of complex numbers, say).
fn strided(l: &Lanes, bits: u32) -> Option<u32> {
    let size = i64::from(bits / 8);
    if l.extra != 0 || l.jump != 0 || l.stride <= size || l.stride % size != 0 {
        return None;
    }
    let f = u32::try_from(l.stride / size).ok()?;
    let fits = match bits {
        8 | 16 => f <= 8,
        32 => f == 2,
        _ => false,
    };
    fits.then_some(f)
}

/// Every `f`-th element of the window at `h0`, for the lanes of `exec`:
/// a masked load of only the elements the lanes read (so nothing past
/// the last one is touched), then a shuffle.
fn load_strided<const W: u32>(g: &mut Gen<W>, h0: &str, f: u32, bits: u32, exec: &str) -> String {
    let n = W * f;
    let size = bits / 8;
    let spread: Vec<String> = (0..n)
        .map(|j| format!("i32 {}", if j % f == 0 { j / f } else { W }))
        .collect();
    let m = g.def(&format!(
        "shufflevector <{W} x i1> {exec}, <{W} x i1> zeroinitializer, <{n} x i32> <{}>",
        spread.join(", ")
    ));
    let p = g.def(&format!("inttoptr i64 {h0} to <{n} x i{bits}>*"));
    // With every lane on, a plain load (masked ones defeat the hardware
    // prefetchers) when the bytes past the last element read are on its
    // page, so mapped.
    let eb = g.bits_of_mask(exec);
    let full = g.def(&format!("icmp eq i32 {eb}, {}", full_bits::<W>()));
    let last = g.def(&format!("add i64 {h0}, {}", (W - 1) * f * size));
    let end = g.def(&format!("add i64 {h0}, {}", n * size - 1));
    let pages = g.def(&format!("xor i64 {last}, {end}"));
    let one_page = g.def(&format!("icmp ult i64 {pages}, 4096"));
    let plain = g.def(&format!("and i1 {full}, {one_page}"));
    let (lp, lm, lj) = (
        g.label("sl_plain"),
        g.label("sl_masked"),
        g.label("sl_join"),
    );
    g.line(&format!("br i1 {plain}, label %{lp}, label %{lm}"));
    g.emit_label(&lp);
    let w0 = g.def(&format!(
        "load <{n} x i{bits}>, <{n} x i{bits}>* {p}, align {size}"
    ));
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lm);
    let w1 = g.def(&format!(
        "call <{n} x i{bits}> @llvm.masked.load.v{n}i{bits}.p0v{n}i{bits}(<{n} x i{bits}>* {p}, i32 {size}, <{n} x i1> {m}, <{n} x i{bits}> undef)"
    ));
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lj);
    let win = g.def(&format!(
        "phi <{n} x i{bits}> [ {w0}, %{lp} ], [ {w1}, %{lm} ]"
    ));
    if matches!(f, 2 | 4 | 8) {
        // Every f-th element is the low part of a word f elements wide: a
        // truncation, which LLVM folds into a following widening (a byte
        // index read from each int is then one `and` a register, not
        // byte shuffles and zero-extension).
        let wide = bits * f;
        let words = g.def(&format!("bitcast <{n} x i{bits}> {win} to <{W} x i{wide}>"));
        return g.def(&format!("trunc <{W} x i{wide}> {words} to <{W} x i{bits}>"));
    }
    let pick: Vec<String> = (0..W).map(|i| format!("i32 {}", i * f)).collect();
    g.def(&format!(
        "shufflevector <{n} x i{bits}> {win}, <{n} x i{bits}> undef, <{W} x i32> <{}>",
        pick.join(", ")
    ))
}

/// Loads of one block that together read, for every lane, the `ROW`
/// consecutive 32-bit words at lane stride `ROW` words from one base
/// register (lane i's row of a row-major matrix: `v[k]` of a CSR row,
/// `a[j]` of a warp-register-cache matrix): `(instruction, column)`.
pub(crate) struct LoadGroup(Vec<(usize, u32)>);

/// Words per row of a `LoadGroup`: 16 lanes' worth of one vector.
pub(crate) const ROW: u32 = 16;

impl LoadGroup {
    pub(crate) fn first(&self) -> usize {
        self.0.iter().map(|m| m.0).min().unwrap_or(0)
    }
    pub(crate) fn has(&self, k: usize) -> bool {
        self.0.iter().any(|m| m.0 == k)
    }
}

/// The load groups of a block whose loads may all move up to the first
/// one: unguarded, not volatile, and between them only loads and pure
/// instructions that touch neither the group's destinations nor its base
/// register.
/// `lanes` are the registers' lane forms at warps of `w` lanes.
pub(crate) fn load_groups(lanes: &[Option<Lanes>], insts: &[Inst], w: u32) -> Vec<LoadGroup> {
    use std::collections::BTreeMap;
    // The transposes work on 16 x 16 blocks.
    if w < 16 {
        return Vec::new();
    }
    let row_bytes = i64::from(ROW) * 4;
    let mut by_key: BTreeMap<(u32, i64, u8), Vec<(usize, i64)>> = BTreeMap::new();
    for (k, inst) in insts.iter().enumerate() {
        let InstKind::Ld {
            space,
            ty,
            dsts,
            addr,
            volatile: false,
        } = &inst.kind
        else {
            continue;
        };
        let AddrBase::Reg(r) = addr.base else {
            continue;
        };
        let fits = inst.guard.is_none()
            && ty.bits() == 32
            && matches!(dsts.as_slice(), [Some(d)] if *d != r)
            && matches!(space, Space::Global | Space::Generic | Space::Shared)
            && lanes
                .get(r.0 as usize)
                .copied()
                .flatten()
                .is_some_and(|l| l.extra == 0 && l.jump == 0 && l.stride == row_bytes);
        if fits {
            let key = (r.0, addr.offset.div_euclid(row_bytes), *space as u8);
            by_key.entry(key).or_default().push((k, addr.offset));
        }
    }
    let mut out = Vec::new();
    for ((r, q, _), members) in by_key {
        let mut cols: Vec<u32> = members
            .iter()
            .map(|&(_, o)| ((o - q * row_bytes) / 4) as u32)
            .collect();
        cols.sort_unstable();
        if cols != (0..ROW).collect::<Vec<_>>() || members.iter().any(|&(_, o)| o % 4 != 0) {
            continue;
        }
        let (lo, hi) = (
            members.iter().map(|m| m.0).min().unwrap_or(0),
            members.iter().map(|m| m.0).max().unwrap_or(0),
        );
        // (position, destination) of each member.
        let dsts: Vec<(usize, Reg)> = members
            .iter()
            .filter_map(|&(k, _)| match &insts[k].kind {
                InstKind::Ld { dsts, .. } => dsts[0].map(|d| (k, d)),
                _ => None,
            })
            .collect();
        let mut distinct: Vec<u32> = dsts.iter().map(|d| d.1 .0).collect();
        distinct.sort_unstable();
        distinct.dedup();
        // Moved up to `lo`, a member's load must not be read or overwritten
        // before where it was; the base register must not change.
        let quiet = (lo..=hi)
            .filter(|k| !members.iter().any(|m| m.0 == *k))
            .all(|k| {
                let i = &insts[k];
                let pending = |x: Reg| dsts.iter().any(|&(at, d)| at > k && d == x);
                let defs = crate::uniform::defs(&i.kind);
                (crate::lanes::pure(&i.kind)
                    || matches!(
                        i.kind,
                        InstKind::Ld {
                            volatile: false,
                            ..
                        }
                    ))
                    && !defs.iter().any(|&x| x.0 == r || pending(x))
                    && !crate::uniform::uses(i).into_iter().any(pending)
            });
        if distinct.len() == dsts.len() && quiet {
            out.push(LoadGroup(
                members
                    .iter()
                    .map(|&(k, o)| (k, ((o - q * row_bytes) / 4) as u32))
                    .collect(),
            ));
        }
    }
    out
}

/// How many warps' blocks ahead a load group prefetches (see
/// `prefetch_groups_ahead`): 8 KiB, measured best on spmv (2, 4, 8, 16 tried).
const GROUP_PREFETCH_AHEAD: i64 = 4;

/// Iterations ahead that a load in a loop prefetches (see
/// `prefetch_stride`).
const STRIDE_PREFETCH_AHEAD: i64 = 8;

/// CTAs ahead that a load outside loops prefetches (see
/// `stride_prefetch_for`).
const CTA_PREFETCH_AHEAD: i64 = 2;

/// Whether a load in a block in a loop (`in_loop`), in a grid-stride loop
/// or not (`grid_stride`, see `crate::grid_stride`), prefetches by its
/// stride (`prefetch_stride`): every loop with `WARPFOLD_PREFETCH=stride`,
/// none with `off`, else grid-stride loops on Intel CPUs, each of whose
/// trips jumps the grid's width (the histogram's 1 MiB: every load waited
/// for memory, half its time). On Zen 3 (a VM) prefetching gained nothing
/// anywhere in the suite and cost the histogram's loop its 20
/// instructions a trip (interleaved A/B, off against on: 6.9 against
/// 7.5-8.4 ms at 2, 4 and 8 trips ahead; stencil3d, sgemm, nbody and
/// transpose within 4%). On a Xeon (Emerald Rapids, a VM) the histogram
/// ran 25% faster with it (10th percentile of 100 launches 8.1 against
/// 9.1 ms, median 11.4 against 16.4), but stencil3d 30% slower and sgemm
/// no faster: hence grid-stride loops only.
///
/// Outside loops a load runs once per CTA, and the stride it learns is
/// from one CTA of the worker to the next (a warp's state outlives its
/// CTA): it prefetches what it will read `CTA_PREFETCH_AHEAD` CTAs later.
/// Kernels whose CTAs stream through memory (a block reduction: 1 KiB per
/// CTA) then keep more of it in flight. On the Xeon VM, interleaved runs of
/// the block reduction: 0.72-0.81x OpenMP without, 0.90-1.03x at 2 CTAs
/// ahead (1 CTA ahead: 0.70-0.79x, 4: 0.77-0.98x). Elsewhere only in
/// kernels whose CTAs each read their slice of one stream in one burst
/// (`one_stream`, see `emit::reads_one_stream`). On Zen 3 (a VM;
/// `scripts/ab.py`, prefetch against none), kernels with one load and no
/// loop: the block reduction took 0.78-0.84 of the time (faster in 12 of
/// 12 rounds), copy 0.84-0.91 (7 of 8), the warp-shuffle reduction
/// 0.83-0.99 (6 of 8), scan 0.88-1.04 (8 of 16). Kernels reading more
/// gained nothing (stencil2d, batched LU, transpose; bitonic's two loads
/// 1.03, faster in 2 of 8) or lost: triad's two loads took 1.04-1.16
/// (faster in 5 of 16 rounds), SpMV's 32 took 1.06-1.11 (2 of 10).
/// On Zen 4 (AVX-512; a VM) the block reduction ran faster without it
/// (0.81-0.90 of the time, faster in 31 of 36 rounds), scan and the
/// warp-shuffle reduction no differently, copy slower (1.05-1.13, faster
/// in 2 of 20): in code with AVX-512, kernels with CTA barriers have no
/// `one_stream` (`emit::cta_stream`).
/// `WARPFOLD_PREFETCH=off` turns it off.
pub(crate) fn stride_prefetch_for(in_loop: bool, grid_stride: bool, one_stream: bool) -> bool {
    if !in_loop {
        return prefetch_knob() != Some("off") && (intel_host() || one_stream);
    }
    match prefetch_knob() {
        Some("stride") => true,
        Some("off") => false,
        _ => grid_stride && intel_host(),
    }
}

/// `WARPFOLD_PREFETCH`, read once (every load consults it).
fn prefetch_knob() -> Option<&'static str> {
    static KNOB: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    KNOB.get_or_init(|| std::env::var("WARPFOLD_PREFETCH").ok())
        .as_deref()
}

/// Whether this CPU is an Intel one (CPUID vendor `GenuineIntel`).
fn intel_host() -> bool {
    static INTEL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *INTEL.get_or_init(cpuid_vendor_is_intel)
}

fn cpuid_vendor_is_intel() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let r = std::arch::x86_64::__cpuid(0);
        let mut vendor = [0u8; 12];
        vendor[..4].copy_from_slice(&r.ebx.to_le_bytes());
        vendor[4..8].copy_from_slice(&r.edx.to_le_bytes());
        vendor[8..].copy_from_slice(&r.ecx.to_le_bytes());
        &vendor == b"GenuineIntel"
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A load in a loop whose lane-0 address `h0` moves by a stride the
/// hardware prefetchers do not follow (256 B to 64 MiB forward: a
/// grid-stride loop, a walk down the planes of a 3-D stencil or the rows
/// of a matrix tile) prefetches the 128 bytes it will read
/// `STRIDE_PREFETCH_AHEAD` trips later (see `stride_prefetch_for`); a
/// load outside loops, what it will read `CTA_PREFETCH_AHEAD` CTAs later.
/// The stride is learnt at run time: the load keeps its last address in
/// the warp state. Prefetches never fault, so a stride that changes costs
/// nothing but the instructions.
///
/// Elsewhere than on Intel CPUs a grid-stride loop's load prefetches
/// instead what the same trip reads `GRID_STRIDE_CTAS_AHEAD` CTAs later
/// (see `prefetch_ctas_ahead`); `lane_step`: the bytes from one lane's
/// address to the next's, when the same for all.
fn prefetch_stride<const W: u32>(g: &mut Gen<W>, h0: &str, lane_step: Option<i64>) {
    if lane_step.is_some_and(|step| prefetch_ctas_ahead(g, h0, step)) {
        return;
    }
    let Some(slot) = g.stride_slot() else { return };
    let p = g.state_ptr(slot, "i64");
    let prev = g.def(&format!("load i64, i64* {p}"));
    g.line(&format!("store i64 {h0}, i64* {p}"));
    let d = g.def(&format!("sub i64 {h0}, {prev}"));
    let off = g.def(&format!("sub i64 {d}, 256"));
    let far = g.def(&format!("icmp ult i64 {off}, {}", (64i64 << 20) - 256));
    let (pf, join) = (g.label("pf_stride"), g.label("pf_join"));
    g.line(&format!("br i1 {far}, label %{pf}, label %{join}"));
    g.emit_label(&pf);
    let trips = if g.block_in_loop() {
        STRIDE_PREFETCH_AHEAD
    } else {
        CTA_PREFETCH_AHEAD
    };
    let ahead = g.def(&format!("mul i64 {d}, {trips}"));
    let a = g.def(&format!("add i64 {h0}, {ahead}"));
    for line in [0, 64, 127] {
        let x = g.def(&format!("add i64 {a}, {line}"));
        let xp = g.def(&format!("inttoptr i64 {x} to i8*"));
        g.line(&format!(
            "call void @llvm.prefetch.p0i8(i8* {xp}, i32 0, i32 3, i32 1)"
        ));
    }
    g.line(&format!("br label %{join}"));
    g.emit_label(&join);
}

/// CTAs ahead that a grid-stride loop's load prefetches the same trip's
/// data of (see `prefetch_ctas_ahead`).
const GRID_STRIDE_CTAS_AHEAD: i64 = 1;

/// In a grid-stride loop (`i = blockIdx.x * blockDim.x + threadIdx.x;
/// i += gridDim.x * blockDim.x`) of one-dimensional blocks, on CPUs other
/// than Intel's (where `prefetch_stride` prefetches trips ahead) and
/// unless `WARPFOLD_PREFETCH` is `off` or `stride`: prefetch the lines the
/// warp's load would read `GRID_STRIDE_CTAS_AHEAD` CTAs later, the same
/// trip, `blockDim.x` lanes' steps further per CTA. A worker runs a chunk of
/// consecutive CTAs, each walking the whole input in steps a grid's width
/// apart (the histogram: 1 KiB a trip, 1 MiB apart), and the next CTAs
/// read right next to it: those lines then wait in this core's L2 instead
/// of memory. A kernel that indexes otherwise only wastes the prefetches
/// (they never fault). Histogram on Zen 4 (a VM), alternating runs of 100
/// or 200 launches: one worker, best 9.0-9.2 ms without, 8.0-8.1 ms with;
/// two workers, median 6.8-7.3 ms without, 5.5-6.3 ms one CTA ahead (two:
/// 5.2-7.2, four: 6.6-6.9). Returns whether it prefetched.
fn prefetch_ctas_ahead<const W: u32>(g: &mut Gen<W>, h0: &str, lane_step: i64) -> bool {
    let id = g.cur_id as usize;
    let one_dimensional = g.shape[1] == 1 && g.shape[2] == 1;
    if g.grid_stride_steps(id) == 0
        || !one_dimensional
        || intel_host()
        || matches!(prefetch_knob(), Some("off" | "stride"))
    {
        return false;
    }
    let ahead = GRID_STRIDE_CTAS_AHEAD * i64::from(g.shape[0]) * lane_step;
    let span = i64::from(W) * lane_step;
    // A line per 64 bytes (a third instruction for a span that starts
    // mid-line cost more than it gained).
    for line in (0..span).step_by(64) {
        let x = g.def(&format!("add i64 {h0}, {}", ahead + line));
        let xp = g.def(&format!("inttoptr i64 {x} to i8*"));
        g.line(&format!(
            "call void @llvm.prefetch.p0i8(i8* {xp}, i32 0, i32 3, i32 1)"
        ));
    }
    true
}

/// Software prefetch of the block a load group will read
/// `GROUP_PREFETCH_AHEAD` warps later, assuming consecutive warps read
/// consecutive blocks (one thread per matrix row or small matrix, as in
/// CSR SpMV or batched kernels). Each warp reads its 2 KiB in one burst and
/// then computes; the hardware prefetchers, trained by the burst, stay too
/// close behind it (spmv: 3.4 -> 1.6 ms, on the machine of the time).
/// Prefetches never fault, so a block past the end of the data costs
/// nothing but the instruction. On Intel CPUs only, as `prefetch_stride`
/// in grid-stride loops: on AMD Zen 4 (a VM; `scripts/ab.py`, the time
/// without over the time with), batched LU took 0.83-0.87 of the time at
/// two CPUs (faster in 5 of 6 and 7 of 8 rounds) and 0.91 at one, its
/// 16-thread form 0.85-0.92, SpMV 0.90-1.00 at two CPUs and 0.73 at one
/// (6 of 6). `WARPFOLD_PREFETCH=groups` turns it on on any CPU (the other
/// prefetches as by default), `off` turns it off.
fn prefetch_groups_ahead<const W: u32>(g: &mut Gen<W>, h0: &str) {
    let on = match prefetch_knob() {
        Some("off") => false,
        Some("groups") => true,
        _ => intel_host(),
    };
    if !on {
        return;
    }
    // (for tests: the kernel's IR shows whether it prefetches)
    g.line("; pf_group");
    let block = i64::from(W * ROW) * 4;
    for line in 0..block / 64 {
        let a = g.def(&format!(
            "add i64 {h0}, {}",
            GROUP_PREFETCH_AHEAD * block + line * 64
        ));
        let p = g.def(&format!("inttoptr i64 {a} to i8*"));
        g.line(&format!(
            "call void @llvm.prefetch.p0i8(i8* {p}, i32 0, i32 3, i32 1)"
        ));
    }
}

/// A load group at its first load: the warp's 32 rows as 32 vector loads
/// (of one contiguous block with every lane on; lanes off read a scratch
/// row) and a transposition (four rounds of interleaving pairs of rows)
/// into one vector per column; each load as usual where the rows' address
/// has no lane form.
pub(crate) fn emit_load_group<const W: u32>(
    g: &mut Gen<W>,
    insts: &[Inst],
    group: &LoadGroup,
) -> R {
    let first = &insts[group.first()];
    let InstKind::Ld { space, addr, .. } = &first.kind else {
        return Err(Unsupported(
            "internal error: load group without a load".into(),
        ));
    };
    let exec = exec_mask(g, first);
    g.guarded = false;
    let col0 = group
        .0
        .iter()
        .find(|m| m.0 == group.first())
        .map_or(0, |m| m.1);
    let base = Address {
        base: addr.base,
        offset: addr.offset - i64::from(col0) * 4,
    };
    let (lt, lp, lj) = (
        g.label("grp_rows"),
        g.label("grp_each"),
        g.label("grp_join"),
    );
    if let Some((h0, _, None)) = affine_host_addr(g, &base, *space) {
        let eb = g.bits_of_mask(&exec);
        let full = g.def(&format!("icmp eq i32 {eb}, {}", full_bits::<W>()));
        let (lsome, lboth) = (g.label("grp_some"), g.label("grp_transpose"));
        g.line(&format!("br i1 {full}, label %{lt}, label %{lsome}"));
        let row_at =
            |g: &mut Gen<W>, i: u32| g.def(&format!("add i64 {h0}, {}", i64::from(i * ROW) * 4));
        let load_row = |g: &mut Gen<W>, at: &str| {
            let p = g.def(&format!("inttoptr i64 {at} to <16 x i32>*"));
            g.def(&format!("load <16 x i32>, <16 x i32>* {p}, align 4"))
        };
        g.emit_label(&lt);
        prefetch_groups_ahead(g, &h0);
        let all: Vec<String> = (0..W)
            .map(|i| {
                let at = row_at(g, i);
                load_row(g, &at)
            })
            .collect();
        g.line(&format!("br label %{lboth}"));
        // Some lanes off (a partial warp): their rows are read from a
        // scratch row instead, so the same transpose serves (per-column
        // gathers were 16 to 32 scalarised gathers of code to generate).
        g.emit_label(&lsome);
        let some: Vec<String> = (0..W)
            .map(|i| {
                let bit = g.def(&format!("and i32 {eb}, {}", 1u32 << i));
                let on = g.def(&format!("icmp ne i32 {bit}, 0"));
                let row = row_at(g, i);
                let at = at_or_sink(g, &row, &on);
                load_row(g, &at)
            })
            .collect();
        g.line(&format!("br label %{lboth}"));
        g.emit_label(&lboth);
        let rows: Vec<String> = all
            .iter()
            .zip(&some)
            .map(|(a, s)| g.def(&format!("phi <16 x i32> [ {a}, %{lt} ], [ {s}, %{lsome} ]")))
            .collect();
        // 32 lanes: two 16 x 16 transposes joined; 16 lanes: one.
        let lo = transpose16(g, &rows[..16]);
        let hi = if W == 32 {
            transpose16(g, &rows[16..])
        } else {
            Vec::new()
        };
        for &(k, col) in &group.0 {
            let InstKind::Ld { ty, dsts, .. } = &insts[k].kind else {
                continue;
            };
            let c = col as usize;
            let v = if W == 32 {
                g.def(&format!(
                    "shufflevector <16 x i32> {}, <16 x i32> {}, <{W} x i32> {}",
                    lo[c],
                    hi[c],
                    lanes_mask::<W>(0..32)
                ))
            } else {
                lo[c].clone()
            };
            if let Some(d) = dsts[0] {
                g.set(d, &v, 32, ty.is_signed(), &exec);
            }
        }
        g.line(&format!("br label %{lj}"));
        g.emit_label(&lj);
        return Ok(());
    }
    g.line(&format!("br label %{lp}"));
    g.emit_label(&lp);
    let mut order: Vec<usize> = group.0.iter().map(|m| m.0).collect();
    order.sort_unstable();
    for k in order {
        if let InstKind::Ld {
            space,
            ty,
            dsts,
            addr,
            ..
        } = &insts[k].kind
        {
            load(g, addr, *space, *ty, dsts, &exec)?;
        }
    }
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lj);
    Ok(())
}

/// The transpose of a 16 x 16 matrix of `<16 x i32>` rows: vector j of the
/// result holds column j, in row order. With AVX-512 as unpacks and lane
/// shuffles (see `transpose16_lanes`), each one instruction that keeps its
/// operands, where a two-source permute (`vpermt2d`) overwrites one and
/// costs a register copy. Elsewhere as four rounds of interleaving row k
/// with row k + 8 (low halves into row 2k, high halves into row 2k + 1),
/// which LLVM lowers well without 512-bit permutes.
fn transpose16<const W: u32>(g: &mut Gen<W>, rows: &[String]) -> Vec<String> {
    if g.avx512 {
        return transpose16_lanes(g, rows);
    }
    let lo: Vec<String> = (0..8)
        .flat_map(|i| [i, 16 + i])
        .map(|i| format!("i32 {i}"))
        .collect();
    let hi: Vec<String> = (8..16)
        .flat_map(|i| [i, 16 + i])
        .map(|i| format!("i32 {i}"))
        .collect();
    let (lo, hi) = (lo.join(", "), hi.join(", "));
    let mut v = rows.to_vec();
    for _ in 0..4 {
        let mut next = Vec::with_capacity(16);
        for k in 0..8 {
            for m in [&lo, &hi] {
                next.push(g.def(&format!(
                    "shufflevector <16 x i32> {}, <16 x i32> {}, <16 x i32> <{m}>",
                    v[k],
                    v[k + 8]
                )));
            }
        }
        v = next;
    }
    v
}

/// `transpose16` in 128-bit lanes: rows `2i, 2i+1` unpacked by 32-bit
/// words, then rows `4i+s, 4i+s+2` (s = 0, 1) by 64-bit pairs, then lanes
/// 0 and 2 (1 and 3) of rows `8i+j, 8i+j+4` and of `j, j+8`: vector k then
/// holds column k, in row order (`vpunpck{l,h}dq`, `vpunpck{l,h}qdq`,
/// `vshufi32x4`, or their float forms). Every shuffle is live only because
/// load groups use all 16 columns (`load_groups`): for a few columns the
/// other network leaves fewer.
fn transpose16_lanes<const W: u32>(g: &mut Gen<W>, rows: &[String]) -> Vec<String> {
    // Masks over the 32 words of two rows (16 + k: the second's word k).
    let mask = |pick: &dyn Fn(u32) -> u32| -> String {
        let m: Vec<String> = (0..16).map(|e| format!("i32 {}", pick(e))).collect();
        m.join(", ")
    };
    // Word e of lane L = e / 4 at position e % 4.
    let unpack32 = |hi: u32| mask(&|e| (e / 4) * 4 + 2 * hi + (e % 4) / 2 + 16 * (e % 2));
    let unpack64 = |hi: u32| mask(&|e| (e / 4) * 4 + 2 * hi + e % 2 + 16 * ((e % 4) / 2));
    // 128-bit lanes `odd`, `odd + 2` of the first row, then of the second.
    let lanes = |odd: u32| mask(&|e| 16 * (e / 8) + 4 * (2 * ((e / 4) % 2) + odd) + e % 4);
    let shuffle = |g: &mut Gen<W>, a: &str, b: &str, m: &str| {
        g.def(&format!(
            "shufflevector <16 x i32> {a}, <16 x i32> {b}, <16 x i32> <{m}>"
        ))
    };
    let (words_lo, words_hi) = (unpack32(0), unpack32(1));
    let (pairs_lo, pairs_hi) = (unpack64(0), unpack64(1));
    let (even, odd) = (lanes(0), lanes(1));
    let mut t = vec![String::new(); 16];
    for i in 0..8 {
        t[2 * i] = shuffle(g, &rows[2 * i], &rows[2 * i + 1], &words_lo);
        t[2 * i + 1] = shuffle(g, &rows[2 * i], &rows[2 * i + 1], &words_hi);
    }
    let mut u = vec![String::new(); 16];
    for i in 0..4 {
        for s in 0..2 {
            let (a, b) = (&t[4 * i + s], &t[4 * i + s + 2]);
            u[4 * i + 2 * s] = shuffle(g, a, b, &pairs_lo);
            u[4 * i + 2 * s + 1] = shuffle(g, a, b, &pairs_hi);
        }
    }
    let mut v = vec![String::new(); 16];
    for i in 0..2 {
        for j in 0..4 {
            let (a, b) = (&u[8 * i + j], &u[8 * i + j + 4]);
            v[8 * i + j] = shuffle(g, a, b, &even);
            v[8 * i + j + 4] = shuffle(g, a, b, &odd);
        }
    }
    let mut w = vec![String::new(); 16];
    for j in 0..8 {
        w[j] = shuffle(g, &v[j], &v[j + 8], &even);
        w[j + 8] = shuffle(g, &v[j], &v[j + 8], &odd);
    }
    w
}

/// A store of `srcs` to `[addr]`, as `load`.
fn store<const W: u32>(
    g: &mut Gen<W>,
    addr: &Address,
    space: Space,
    ty: Ty,
    srcs: &[Value],
    exec: &str,
) -> R {
    let bits = ty.bits();
    let size = i64::from(bits / 8);
    enum How {
        /// One address for every lane: the last lane's value lands (lanes
        /// store in lane order).
        LastLane,
        Contig,
        /// Consecutive elements in reverse lane order (see `reversed`).
        Reversed,
        Rows,
        /// Known positions: a scatter from one base (in lane order).
        Index(String),
    }
    let rows = rows_consecutive(g, addr, space, ty.bits(), srcs.len());
    let per_lane = if rows { row_store_elems } else { store_elems };
    let Some((h0, l, k)) = affine_host_addr(g, addr, space) else {
        if let ([s], true) = (srcs, bits >= 32 && !rows) {
            if let Some(ix) = indexed(g, addr, space, bits / 8) {
                let v = g.val(*s, bits);
                let (h0, all) = ix.consecutive(g, exec);
                store_elems_split(g, &h0, &all, |g| ix.addresses(g), bits, &v, exec);
                return Ok(());
            }
        }
        return store_per_lane(g, addr, space, ty, srcs, exec, per_lane);
    };
    // A jump inside the warp (rare): as in `load`.
    let jump_side = |g: &mut Gen<W>| stores_past_jump(g, &h0, &l, k.as_deref(), bits, srcs, exec);
    let n = srcs.len() as i64;
    if matches!(n, 2 | 4) && l.extra == 0 && l.stride == n * size {
        // Each lane's group right after the previous lane's (an array of
        // float4s): one contiguous store of the interleaved values.
        let split = split_on_jump(g, &k);
        let vals: Vec<String> = srcs.iter().map(|s| g.val(*s, bits)).collect();
        store_interleaved(g, &h0, bits, &vals, exec);
        return rejoin_after_jump(g, split, jump_side);
    }
    let how = if l.is_uniform() && k.is_none() {
        How::LastLane
    } else if l.stride == size && l.extra == 0 {
        How::Contig
    } else if reversed(&l, bits) {
        How::Reversed
    } else if l.stride == size && l.width >= 4 {
        How::Rows
    } else if let Some(idx) = element_index::<W>(&l, bits) {
        How::Index(idx)
    } else {
        return store_per_lane(g, addr, space, ty, srcs, exec, per_lane);
    };
    let split = split_on_jump(g, &k);
    let last_lane = matches!(how, How::LastLane);
    for (i, s) in srcs.iter().enumerate() {
        let hi = g.def(&format!("add i64 {h0}, {}", i as u32 * bits / 8));
        // One lane's value: its NaN made canonical after it is picked, not
        // every lane's before (a warp reduction's result store: eight
        // vector instructions fewer per warp).
        let v = if last_lane {
            g.val_raw(*s, bits)
        } else {
            g.val(*s, bits)
        };
        match &how {
            How::LastLane => {
                let lazy = g.lazy_float(*s, bits);
                store_last_lane(g, &hi, bits, &v, exec, lazy)
            }
            How::Contig => {
                // Whole lines only: a warp that fills part of a line
                // would leave it to cached stores of the next warp.
                let streaming = space == Space::Global && bits >= 32 && W * bits / 8 >= 64;
                store_contig(g, &hi, bits, &v, exec, streaming, space == Space::Shared)
            }
            How::Reversed => {
                let (lo, m) = reverse_access(g, &hi, bits, exec);
                let rv = g.def(&format!(
                    "shufflevector {} {v}, {} undef, <{W} x i32> {}",
                    vt::<W>(bits),
                    vt::<W>(bits),
                    reverse_lanes::<W>()
                ));
                store_contig(g, &lo, bits, &rv, &m, false, space == Space::Shared)
            }
            How::Rows => store_rows(g, &hi, &l, bits, &v, exec, space == Space::Shared),
            How::Index(idx) => match shared_window::<W>(&l, bits, space == Space::Shared)
                .filter(|w| w.writes_each_once())
            {
                Some(win) => scatter_window(g, &hi, &win, bits, &v, exec),
                None if lane_by_lane(g) => scatter_spaced(g, &hi, &l, idx, bits, &v, exec),
                None => scatter_from(g, &hi, idx, bits, &v, exec),
            },
        }
    }
    rejoin_after_jump(g, split, jump_side)
}

/// After the accesses of the no-jump side of `split_on_jump`: the side
/// where the widened index wrapped inside the warp (rare), then the join.
fn rejoin_after_jump<const W: u32>(
    g: &mut Gen<W>,
    split: Option<(String, String)>,
    wrapped: impl FnOnce(&mut Gen<W>) -> R,
) -> R {
    if let Some((slow, join)) = split {
        g.line(&format!("br label %{join}"));
        g.emit_label(&slow);
        wrapped(g)?;
        g.line(&format!("br label %{join}"));
        g.emit_label(&join);
    }
    Ok(())
}

/// Pointers to `h` + lane `idx` (element indices).
fn indexed_ptrs<const W: u32>(g: &mut Gen<W>, h: &str, idx: &str, bits: u32) -> String {
    let base = g.def(&format!("inttoptr i64 {h} to i{bits}*"));
    g.def(&format!(
        "getelementptr i{bits}, i{bits}* {base}, <{W} x i32> {idx}"
    ))
}

/// Elements at pointers `ps`, for the lanes of `exec`.
fn gather<const W: u32>(g: &mut Gen<W>, ps: &str, bits: u32, exec: &str) -> String {
    if !g.avx512 {
        // Without AVX-512 LLVM loads lane by lane (AVX2's gathers are
        // slower than that on the CPUs it tunes for, Zen 3 measured 2x),
        // and with a mask behind a branch a lane: 32 blocks a gather, a
        // third of some kernels' code generation time. Inactive lanes read
        // a scratch slot instead, so every lane loads, without branches.
        let ps = aim_off_lanes_at_sink(g, ps, bits, exec);
        return g.def(&format!(
            "call <{W} x i{bits}> @llvm.masked.gather.v{W}i{bits}.v{W}p0i{bits}(<{W} x i{bits}*> {ps}, i32 {}, <{W} x i1> {}, <{W} x i{bits}> undef)",
            bits / 8,
            sc::<W>(1, 1)
        ));
    }
    g.def(&format!(
        "call <{W} x i{bits}> @llvm.masked.gather.v{W}i{bits}.v{W}p0i{bits}(<{W} x i{bits}*> {ps}, i32 {}, <{W} x i1> {exec}, <{W} x i{bits}> undef)",
        bits / 8
    ))
}

/// `v` to pointers `ps`, in lane order.
fn scatter<const W: u32>(g: &mut Gen<W>, ps: &str, bits: u32, v: &str, exec: &str) {
    if !g.avx512 {
        return branchless_scatter(g, ps, bits, v, exec);
    }
    g.line(&format!(
        "call void @llvm.masked.scatter.v{W}i{bits}.v{W}p0i{bits}(<{W} x i{bits}> {v}, <{W} x i{bits}*> {ps}, i32 {}, <{W} x i1> {exec})",
        bits / 8
    ));
}

/// Pointers `ps` with those of the lanes not in `exec` replaced by one to
/// a scratch slot of the warp function (8 bytes, room for any element).
fn aim_off_lanes_at_sink<const W: u32>(g: &mut Gen<W>, ps: &str, bits: u32, exec: &str) -> String {
    g.alloca_once("lane_sink", "i64, align 8");
    let sink = g.def(&format!("bitcast i64* %lane_sink to i{bits}*"));
    let sinks = g.splat(&format!("i{bits}*"), &sink);
    g.def(&format!(
        "select <{W} x i1> {exec}, <{W} x i{bits}*> {ps}, <{W} x i{bits}*> {sinks}"
    ))
}

/// A scatter without AVX-512, which has no scatter instruction: LLVM
/// would store lane by lane behind a branch on each lane's mask bit, and
/// data-dependent masks (a sort's swaps) mispredict half of them. Here
/// inactive lanes aim at a scratch slot instead and every lane stores, in
/// lane order, reading its address and value back from stack copies in a
/// loop (cheaper than extracting them from vector registers).
fn branchless_scatter<const W: u32>(g: &mut Gen<W>, ps: &str, bits: u32, v: &str, exec: &str) {
    g.alloca_once("scat_addr", &format!("[{W} x i64], align 64"));
    g.alloca_once("scat_val", &format!("[{W} x i64], align 64"));
    let ps = aim_off_lanes_at_sink(g, ps, bits, exec);
    let hsel = g.def(&format!("ptrtoint <{W} x i{bits}*> {ps} to <{W} x i64>"));
    let ap = g.def(&format!("bitcast [{W} x i64]* %scat_addr to <{W} x i64>*"));
    g.line(&format!(
        "store <{W} x i64> {hsel}, <{W} x i64>* {ap}, align 64"
    ));
    let vp = g.def(&format!(
        "bitcast [{W} x i64]* %scat_val to {}*",
        vt::<W>(bits)
    ));
    g.line(&format!(
        "store {} {v}, {}* {vp}, align 64",
        vt::<W>(bits),
        vt::<W>(bits)
    ));
    let vbase = g.def(&format!("bitcast [{W} x i64]* %scat_val to i{bits}*"));
    g.for_each_lane(|g, i| {
        let pa = g.def(&format!(
            "getelementptr [{W} x i64], [{W} x i64]* %scat_addr, i32 0, i32 {i}"
        ));
        let a = g.def(&format!("load i64, i64* {pa}, align 8"));
        let pv = g.def(&format!("getelementptr i{bits}, i{bits}* {vbase}, i32 {i}"));
        let x = g.def(&format!("load i{bits}, i{bits}* {pv}, align {}", bits / 8));
        let p = g.def(&format!("inttoptr i64 {a} to i{bits}*"));
        g.line(&format!(
            "store i{bits} {x}, i{bits}* {p}, align {}",
            bits / 8
        ));
    });
}

/// The elements a warp's lanes reach at known positions in shared memory,
/// as one short vector: `n` elements from lane 0's element plus `lo`, lane
/// `i` at `idx[i]`. The window is at most `SHARED_SLACK` bytes, so with one
/// running lane's element in bounds all of it lies in memory the worker
/// owns (see `crate::SHARED_SLACK`): a gather is a load and a shuffle, a
/// scatter a shuffle and a masked store (without AVX-512 a blend and a
/// plain store), with no per-lane work (the steps of a bitonic sort, a
/// tile read down its columns).
struct Window {
    lo: i64,
    n: u32,
    idx: Vec<u32>,
}

impl Window {
    /// Whether no two lanes share an element (a scatter's window holds one
    /// value per element; colliding lanes keep the scatter's lane order).
    fn writes_each_once(&self) -> bool {
        let mut seen = vec![false; self.n as usize];
        self.idx
            .iter()
            .all(|&j| !std::mem::replace(&mut seen[j as usize], true))
    }
}

/// The window of `l`'s elements, for shared memory (`owned`). With
/// AVX-512 too: a scatter there is 16 stores in a row and a gather 16
/// loads; the window's four loads, permutes and masked stores beat them
/// (bitonic sort, 32 lanes, steps 2-16 apart: samples in compiled code
/// 13-23% fewer, runs of the suite kernel 8-15% faster; no other kernel of
/// the suite has such accesses). A scatter's window is stored masked with
/// AVX-512, not read, blended and stored: the sort's second window of a
/// step starts a few bytes past its first, and reading it back waited for
/// the first's stores, which the load could not take its bytes from (Zen
/// 4: 0.88 of the sort's time, faster in 4 of 4 interleaved rounds, 2.29x
/// -> 2.63x OpenMP; one worker in cache 5.0 -> 4.4 ms).
fn shared_window<const W: u32>(l: &Lanes, bits: u32, owned: bool) -> Option<Window> {
    if !owned || bits < 32 {
        return None;
    }
    let size = i64::from(bits / 8);
    let el: Vec<i64> = (0..W)
        .map(|i| l.offset(i))
        .map(|o| (o % size == 0).then_some(o / size))
        .collect::<Option<_>>()?;
    let (lo, hi) = (*el.iter().min()?, *el.iter().max()?);
    // Whole 8-element pieces (vector registers of 32-bit lanes).
    let n = (hi - lo + 1).checked_add(7)? / 8 * 8;
    if n.checked_mul(size)? > crate::SHARED_SLACK as i64 {
        return None;
    }
    Some(Window {
        lo,
        n: n as u32,
        idx: el.iter().map(|e| (e - lo) as u32).collect(),
    })
}

/// Where `win`'s window starts, as a pointer: at lane 0's address `h0`
/// plus the window's offset when some lane of `exec` runs, else at the
/// start of shared memory, whose slack holds any window (no lane's address
/// need mean anything then: a masked store with no lane on writes nothing,
/// and without AVX-512 a write-back of what was read is harmless in memory
/// the worker owns). No branch: the sort's masks are data.
fn window_ptr<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    win: &Window,
    bits: u32,
    exec: &str,
) -> String {
    let eb = g.bits_of_mask(exec);
    let some = g.def(&format!("icmp ne i32 {eb}, 0"));
    let at = g.def(&format!("add i64 {h0}, {}", win.lo * i64::from(bits / 8)));
    let start = g.env(env::SHARED);
    let base = g.def(&format!("select i1 {some}, i64 {at}, i64 {start}"));
    g.def(&format!("inttoptr i64 {base} to <{} x i{bits}>*", win.n))
}

fn gather_window<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    win: &Window,
    bits: u32,
    exec: &str,
) -> String {
    let n = win.n;
    let p = window_ptr(g, h0, win, bits, exec);
    let x = g.def(&format!(
        "load <{n} x i{bits}>, <{n} x i{bits}>* {p}, align {}",
        bits / 8
    ));
    let idx: Vec<String> = win.idx.iter().map(|j| format!("i32 {j}")).collect();
    g.def(&format!(
        "shufflevector <{n} x i{bits}> {x}, <{n} x i{bits}> undef, <{W} x i32> <{}>",
        idx.join(", ")
    ))
}

fn scatter_window<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    win: &Window,
    bits: u32,
    v: &str,
    exec: &str,
) {
    let n = win.n;
    // The lane writing each element; W (the zero vector's first lane,
    // for the mask) where none does.
    let mut by = vec![W; n as usize];
    for (lane, &j) in win.idx.iter().enumerate() {
        by[j as usize] = lane as u32;
    }
    let inv: Vec<String> = by.iter().map(|&k| format!("i32 {k}")).collect();
    let inv = format!("<{}>", inv.join(", "));
    let p = window_ptr(g, h0, win, bits, exec);
    let x = g.def(&format!(
        "shufflevector <{W} x i{bits}> {v}, <{W} x i{bits}> zeroinitializer, <{n} x i32> {inv}"
    ));
    let m = g.def(&format!(
        "shufflevector <{W} x i1> {exec}, <{W} x i1> zeroinitializer, <{n} x i32> {inv}"
    ));
    // With AVX-512 a masked store: a blend reads the window back right
    // after the warp's other window of the step was stored over it, a few
    // bytes off (the sort's `s[pos]` and `s[pos + stride]`), and waits for
    // that store to reach the cache (see `shared_window`).
    if g.avx512 {
        return masked_store(g, n, bits, &x, &p, &m);
    }
    blend_store(g, &p, n, bits, &x, &m);
}

/// Whether full warps reach lanes at fixed distances from lane 0's
/// address (a shared tile's column) with one scalar access per lane
/// (`gather_spaced`, `scatter_spaced`) rather than the hardware's gather
/// or scatter: without AVX-512 (LLVM takes those apart anyway), and with
/// it off Intel CPUs. On Zen 4 a 16-lane `vpgatherdd` of a column 33
/// words apart took about 20 cycles, 16 loads and inserts under half of
/// that (C, in L1: 356-387 against 155-166 ns a 32 x 32 tile); transpose,
/// whose column reads were half its compiled code's time, took 0.81 of
/// the time in 6 of 6 interleaved rounds (1.29x -> 1.54x OpenMP). A
/// 16-lane `vpscatterdd` there: 435-449 against 291 ns a tile for a stack
/// copy and 16 stores; a transpose writing the tile's columns, 0.97 of the
/// time (one worker, in cache). Intel's gathers are faster and were not
/// measured against this.
fn lane_by_lane<const W: u32>(g: &Gen<W>) -> bool {
    !g.avx512 || !intel_host()
}

/// `gather_from` for lanes at fixed distances from lane 0's address `h0`
/// (form `l`) where `lane_by_lane` says so: with every lane on, one scalar
/// load per lane at its constant offset, which LLVM folds into the inserts
/// that build the vector; otherwise `gather_from`. Without AVX-512 the
/// gather, which LLVM 14 takes apart on these CPUs, first builds the 32
/// addresses as vectors and extracts each (a shared tile's column, 33
/// words apart: 160 of transpose's 1116 instructions a warp); with it, a
/// `vpgatherdd` is slower on Zen 4 (see `lane_by_lane`).
fn gather_spaced<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    l: &Lanes,
    idx: &str,
    bits: u32,
    exec: &str,
) -> String {
    let eb = g.bits_of_mask(exec);
    let full = g.def(&format!("icmp eq i32 {eb}, {}", full_bits::<W>()));
    let vty = vt::<W>(bits);
    g.if_else(
        "ld_spaced",
        &full,
        &vty,
        |g| {
            let mut v = "undef".to_string();
            for i in 0..W {
                let p = spaced_lane_ptr(g, h0, l, i, bits);
                let x = g.def(&format!("load i{bits}, i{bits}* {p}, align {}", bits / 8));
                v = g.def(&format!("insertelement {vty} {v}, i{bits} {x}, i32 {i}"));
            }
            v
        },
        |g| gather_from(g, h0, idx, bits, exec),
    )
}

/// Lane `i`'s element pointer: lane 0's address `h0` plus the lane's
/// constant offset in form `l` (see `gather_spaced`, `scatter_spaced`).
fn spaced_lane_ptr<const W: u32>(g: &mut Gen<W>, h0: &str, l: &Lanes, i: u32, bits: u32) -> String {
    let a = g.def(&format!("add i64 {h0}, {}", l.offset(i)));
    g.def(&format!("inttoptr i64 {a} to i{bits}*"))
}

/// `scatter_from` for lanes at fixed distances from lane 0's address
/// `h0` (form `l`) where `lane_by_lane` says so: with every lane on, each
/// lane's value read back from a stack copy and stored at its constant
/// offset, in lane order (lanes that meet keep the last one's value, as the
/// scatter does); otherwise `scatter_from`. Without AVX-512 that scatter
/// stores and reads back 32 addresses besides, in a loop; with it, a
/// `vpscatterdd` is slower on Zen 4 (see `lane_by_lane`).
fn scatter_spaced<const W: u32>(
    g: &mut Gen<W>,
    h0: &str,
    l: &Lanes,
    idx: &str,
    bits: u32,
    v: &str,
    exec: &str,
) {
    g.alloca_once("spaced_val", &format!("[{W} x i64], align 64"));
    let eb = g.bits_of_mask(exec);
    let full = g.def(&format!("icmp eq i32 {eb}, {}", full_bits::<W>()));
    let (lf, ls, lj) = (
        g.label("st_spaced"),
        g.label("st_scatter"),
        g.label("st_spaced_join"),
    );
    g.line(&format!("br i1 {full}, label %{lf}, label %{ls}"));
    g.emit_label(&lf);
    let vty = vt::<W>(bits);
    let vp = g.def(&format!("bitcast [{W} x i64]* %spaced_val to {vty}*"));
    g.line(&format!("store {vty} {v}, {vty}* {vp}, align 64"));
    let base = g.def(&format!("bitcast [{W} x i64]* %spaced_val to i{bits}*"));
    for i in 0..W {
        // Read back volatile, so LLVM does not turn the copy into
        // extracts from the vector registers again.
        let pv = g.def(&format!("getelementptr i{bits}, i{bits}* {base}, i32 {i}"));
        let x = g.def(&format!(
            "load volatile i{bits}, i{bits}* {pv}, align {}",
            bits / 8
        ));
        let p = spaced_lane_ptr(g, h0, l, i, bits);
        g.line(&format!(
            "store i{bits} {x}, i{bits}* {p}, align {}",
            bits / 8
        ));
    }
    g.line(&format!("br label %{lj}"));
    g.emit_label(&ls);
    scatter_from(g, h0, idx, bits, v, exec);
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lj);
}

fn gather_from<const W: u32>(g: &mut Gen<W>, h: &str, idx: &str, bits: u32, exec: &str) -> String {
    let ps = indexed_ptrs(g, h, idx, bits);
    gather(g, &ps, bits, exec)
}

fn scatter_from<const W: u32>(g: &mut Gen<W>, h: &str, idx: &str, bits: u32, v: &str, exec: &str) {
    let ps = indexed_ptrs(g, h, idx, bits);
    scatter(g, &ps, bits, v, exec)
}

/// `v` to the lanes' host addresses `h`: a plain scatter.
fn scatter_elems<const W: u32>(g: &mut Gen<W>, h: &str, bits: u32, v: &str, exec: &str) {
    let ps = g.def(&format!("inttoptr <{W} x i64> {h} to <{W} x i{bits}*>"));
    scatter(g, &ps, bits, v, exec)
}

/// A load with per-lane addresses, element by element with `elems`
/// (`load_elems`: tested for consecutive lanes; `gather_elems`).
fn load_per_lane<const W: u32>(
    g: &mut Gen<W>,
    addr: &Address,
    space: Space,
    ty: Ty,
    dsts: &[Option<Reg>],
    exec: &str,
    elems: fn(&mut Gen<W>, &str, u32, &str) -> String,
) -> R {
    let bits = ty.bits();
    let h = host_addr(g, addr, space)?;
    if space == Space::Global {
        // Lane 0's address, on or off: a prefetch is only a hint.
        let h0 = g.def(&format!("extractelement <{W} x i64> {h}, i32 0"));
        prefetch_stride(g, &h0, None);
    }
    for (i, d) in dsts.iter().enumerate() {
        let hi = if i == 0 {
            h.clone()
        } else {
            bin(
                g,
                "add",
                64,
                &h,
                &sc::<W>(64, u64::from(i as u32 * bits / 8)),
            )
        };
        let v = elems(g, &hi, bits, exec);
        if let Some(d) = d {
            g.set(*d, &v, bits, ty.is_signed(), exec);
        }
    }
    Ok(())
}

/// A store with per-lane addresses, as `load_per_lane`.
fn store_per_lane<const W: u32>(
    g: &mut Gen<W>,
    addr: &Address,
    space: Space,
    ty: Ty,
    srcs: &[Value],
    exec: &str,
    elems: fn(&mut Gen<W>, &str, u32, &str, &str),
) -> R {
    let bits = ty.bits();
    let h = host_addr(g, addr, space)?;
    for (i, s) in srcs.iter().enumerate() {
        let hi = if i == 0 {
            h.clone()
        } else {
            bin(
                g,
                "add",
                64,
                &h,
                &sc::<W>(64, u64::from(i as u32 * bits / 8)),
            )
        };
        let v = g.val(*s, bits);
        elems(g, &hi, bits, &v, exec);
    }
    Ok(())
}

/// Participants of a warp collective, or a wait: returns the bitmask of
/// lanes named by the executing lanes' member masks, after branching to the
/// dispatcher (and marking the group as waiting) when some are elsewhere.
fn collective_gate<const W: u32>(g: &mut Gen<W>, exec: &str, mask_val: Value) -> String {
    // In a convergent block every live lane reaches the collective except
    // lanes parked where they only exit: they would never arrive, and once
    // they have exited the collective goes on without them, so it can go
    // on now (no wait, and the collective need not start a block). Lanes
    // whose guard is off pass it by and take no part (as the interpreter,
    // where they run on and exit while the others wait).
    let live = if g.cur_convergent {
        g.bits_of_mask(exec)
    } else {
        // Elsewhere too, lanes of this group whose guard is off pass by.
        let l = g.load_scalar("live", "i32");
        let m = g.load_mask();
        let (mb, eb) = (g.bits_of_mask(&m), g.bits_of_mask(exec));
        let off = g.def(&format!("xor i32 {eb}, {mb}"));
        let noff = g.def(&format!("xor i32 {off}, -1"));
        g.def(&format!("and i32 {l}, {noff}"))
    };
    let eb = g.bits_of_mask(exec);
    let need = if let Some(m) = g.uniform_i32(mask_val) {
        // One member mask for the warp (the usual `0xffffffff`): no
        // reduction over the lanes' masks.
        let (any, ml, need) = (g.t(), g.t(), g.t());
        g.line(&format!("{any} = icmp ne i32 {eb}, 0"));
        g.line(&format!("{ml} = and i32 {m}, {live}"));
        g.line(&format!("{need} = select i1 {any}, i32 {ml}, i32 0"));
        need
    } else {
        let mm = g.val(mask_val, 32);
        let ls = g.splat("i32", &live);
        let need_v = bin(g, "and", 32, &mm, &ls);
        let need_sel = sel(g, exec, 32, &need_v, "zeroinitializer");
        let need = g.t();
        g.line(&format!(
            "{need} = call i32 @llvm.vector.reduce.or.v{W}i32(<{W} x i32> {need_sel})"
        ));
        need
    };
    if g.cur_convergent {
        return need;
    }
    let neb = g.t();
    g.line(&format!("{neb} = xor i32 {eb}, -1"));
    let missing = g.t();
    g.line(&format!("{missing} = and i32 {need}, {neb}"));
    let any = g.t();
    g.line(&format!("{any} = icmp ne i32 {missing}, 0"));
    let (lw, lgo) = (g.label("coll_wait"), g.label("coll_go"));
    g.line(&format!("br i1 {any}, label %{lw}, label %{lgo}"));
    g.emit_label(&lw);
    // The group waits here (its next stays at this block) for the others.
    let mask = g.load_mask();
    let mb = g.bits_of_mask(&mask);
    let wc = g.load_scalar("wait_coll", "i32");
    let wc2 = g.t();
    g.line(&format!("{wc2} = or i32 {wc}, {mb}"));
    g.line(&format!("store i32 {wc2}, i32* %wait_coll"));
    g.line("br label %dispatch");
    g.emit_label(&lgo);
    need
}

/// After load `inst` (instruction `k` of block `b`): where it reads the
/// thread's own slot of an array whose stores keep the CPU's NaNs (see
/// `own_slots`), what it read made canonical, as those stores used to.
pub(crate) fn canon_own_slot_load<const W: u32>(g: &mut Gen<W>, b: BlockId, k: usize, inst: &Inst) {
    let Some(&t) = g.own_slots.canon_loads.get(&(b, k)) else {
        return;
    };
    let InstKind::Ld { dsts, .. } = &inst.kind else {
        return;
    };
    let Some(Some(d)) = dsts.first() else {
        return;
    };
    let exec = exec_mask(g, inst);
    let bits = t.bits();
    let x = g.val_raw(Value::Reg(*d), bits);
    let ft = if t == Ty::F64 { "double" } else { "float" };
    let f = g.def(&format!("bitcast <{W} x i{bits}> {x} to <{W} x {ft}>"));
    let c = g.canon(&f, t);
    let v = g.def(&format!("bitcast <{W} x {ft}> {c} to <{W} x i{bits}>"));
    g.set(*d, &v, bits, false, &exec);
}

pub(crate) fn emit_inst<const W: u32>(
    g: &mut Gen<W>,
    inst: &Inst,
    first: bool,
    waited: &mut bool,
    succ: Option<u32>,
) -> R {
    let exec = exec_mask(g, inst);
    g.guarded = inst.guard.is_some();
    match &inst.kind {
        InstKind::Mov { ty, dst, src } => {
            let bits = if *ty == Ty::Pred { 1 } else { ty.bits() };
            // Moving a value whose NaN is made canonical later: raw bits.
            let v = if carries_lazy_nan(g, *dst, *src, bits) {
                g.val_raw(*src, bits)
            } else {
                g.val(*src, bits)
            };
            g.set(*dst, &v, bits, false, &exec);
        }
        InstKind::AddrOf { dst, sym, space } => {
            let v = symbol_addr(g, *sym, *space == Space::Generic)?;
            g.set(*dst, &v, 64, false, &exec);
        }
        InstKind::Int { op, ty, dst, args } => emit_int(g, &inst.kind, *op, *ty, *dst, args, &exec),
        InstKind::Carry {
            sub,
            ty,
            dst,
            a,
            b,
            carry_in,
            carry_out,
        } => {
            let w = ty.bits();
            let x = g.val(*a, w);
            let y = g.val(*b, w);
            let x2 = g.conv(&x, w, w * 2, false);
            let y2 = g.conv(&y, w, w * 2, false);
            let cin = match carry_in {
                Some(c) => {
                    let cv = g.val(Value::Reg(*c), 1);
                    g.conv(&cv, 1, w * 2, false)
                }
                None => "zeroinitializer".into(),
            };
            let (s, cout) = if *sub {
                let d1 = bin(g, "sub", w * 2, &x2, &y2);
                let d = bin(g, "sub", w * 2, &d1, &cin);
                let yc = bin(g, "add", w * 2, &y2, &cin);
                let borrow = icmp(g, "ult", w * 2, &x2, &yc);
                (d, borrow)
            } else {
                let s1 = bin(g, "add", w * 2, &x2, &y2);
                let s = bin(g, "add", w * 2, &s1, &cin);
                let hi = bin(g, "lshr", w * 2, &s, &sc::<W>(w * 2, u64::from(w)));
                let c = icmp(g, "ne", w * 2, &hi, "zeroinitializer");
                (s, c)
            };
            let r = g.conv(&s, w * 2, w, false);
            g.set(*dst, &r, w, false, &exec);
            if let Some(c) = carry_out {
                g.set(*c, &cout, 1, false, &exec);
            }
        }
        InstKind::Float {
            op,
            ty,
            dst,
            args,
            round,
            ftz,
            sat,
        } => {
            if !g.float_inline(*op, *ty, *dst, args, *round, *ftz, *sat, &exec) {
                let bits = ty.bits();
                let a: Vec<String> = args.iter().map(|v| g.to64(*v, bits)).collect();
                let r = g.call_lanes(Helper::Float, inst.kind.clone(), &a, None);
                let r = g.conv(&r, 64, bits, false);
                g.set(*dst, &r, bits, false, &exec);
            }
        }
        InstKind::Setp {
            cmp,
            ty,
            dst,
            dst2,
            a,
            b,
            combine,
            ftz,
        } => {
            let c = match index_compare_mask(g, (*cmp, *ty, *a, *b)) {
                Some(m) => m,
                None => compare(g, *cmp, *ty, *a, *b, *ftz),
            };
            let (r1, r2) = match combine {
                None => {
                    let n = not1(g, &c);
                    (c, n)
                }
                Some((op, p, neg)) => {
                    let pv = g.val(*p, 1);
                    let pv = if *neg { not1(g, &pv) } else { pv };
                    let n = not1(g, &c);
                    let o = match op {
                        BoolOp::And => "and",
                        BoolOp::Or => "or",
                        BoolOp::Xor => "xor",
                    };
                    let r1 = bin(g, o, 1, &c, &pv);
                    let r2 = bin(g, o, 1, &n, &pv);
                    (r1, r2)
                }
            };
            g.set(*dst, &r1, 1, false, &exec);
            if let Some(d2) = dst2 {
                g.set(*d2, &r2, 1, false, &exec);
            }
        }
        InstKind::Set {
            cmp,
            ty,
            dst_ty,
            dst,
            a,
            b,
            combine,
            ftz,
        } => {
            let mut c = compare(g, *cmp, *ty, *a, *b, *ftz);
            if let Some((op, p, neg)) = combine {
                let pv = g.val(*p, 1);
                let pv = if *neg { not1(g, &pv) } else { pv };
                let o = match op {
                    BoolOp::And => "and",
                    BoolOp::Or => "or",
                    BoolOp::Xor => "xor",
                };
                c = bin(g, o, 1, &c, &pv);
            }
            let bits = dst_ty.bits();
            let one = if *dst_ty == Ty::F32 {
                sc::<W>(32, u64::from(1.0f32.to_bits()))
            } else {
                sc::<W>(bits, u64::MAX)
            };
            let r = sel(g, &c, bits, &one, "zeroinitializer");
            g.set(*dst, &r, bits, false, &exec);
        }
        InstKind::Selp { ty, dst, a, b, c } => {
            let bits = if *ty == Ty::Pred { 1 } else { ty.bits() };
            // Into a lazily canonical register: the operands' raw bits
            // (both are lazy too, or harmless constants).
            let (x, y) = if g.float_reg[dst.0 as usize].is_some_and(|t| t.bits() == bits) {
                (g.val_raw(*a, bits), g.val_raw(*b, bits))
            } else {
                (g.val(*a, bits), g.val(*b, bits))
            };
            let cv = g.val(*c, 1);
            let r = sel(g, &cv, bits, &x, &y);
            g.set(*dst, &r, bits, false, &exec);
        }
        InstKind::Slct {
            ty,
            cty,
            dst,
            a,
            b,
            c,
            ftz,
        } => {
            let bits = ty.bits();
            let x = g.val(*a, bits);
            let y = g.val(*b, bits);
            let ge = if *cty == Ty::F32 {
                let f = g.fval(*c, Ty::F32);
                let f = if *ftz { g.ftz(&f, Ty::F32) } else { f };
                let r = g.t();
                g.line(&format!(
                    "{r} = fcmp oge <{W} x float> {f}, zeroinitializer"
                ));
                r
            } else {
                let cv = g.val(*c, 32);
                icmp(g, "sge", 32, &cv, "zeroinitializer")
            };
            let r = sel(g, &ge, bits, &x, &y);
            g.set(*dst, &r, bits, false, &exec);
        }
        InstKind::PredOp { op, dst, a, b } => {
            let x = g.val(*a, 1);
            let y = g.val(*b, 1);
            let r = match op {
                PredOp::And => bin(g, "and", 1, &x, &y),
                PredOp::Or => bin(g, "or", 1, &x, &y),
                PredOp::Xor => bin(g, "xor", 1, &x, &y),
                PredOp::Not => not1(g, &x),
                PredOp::Mov => x,
            };
            g.set(*dst, &r, 1, false, &exec);
        }
        InstKind::Testp { ty, dst, a, .. } => {
            let x = g.to64(*a, ty.bits());
            let r = g.call_lanes(Helper::Testp, inst.kind.clone(), &[x], None);
            let r = g.conv(&r, 64, 1, false);
            g.set(*dst, &r, 1, false, &exec);
        }
        InstKind::Cvt {
            dst_ty,
            src_ty,
            dst,
            src,
            round,
            ftz,
            sat,
        } => emit_cvt(
            g, &inst.kind, *dst_ty, *src_ty, *dst, *src, *round, *ftz, *sat, &exec,
        ),
        InstKind::IsSpace { space, dst, src } => {
            let a = g.val(*src, 64);
            let in_range = |g: &mut Gen<W>, base_idx: usize, len_idx: usize, a: &str| {
                let b = env_splat64(g, base_idx);
                let l = env_splat64(g, len_idx);
                let e = bin(g, "add", 64, &b, &l);
                let ge = icmp(g, "uge", 64, a, &b);
                let lt = icmp(g, "ult", 64, a, &e);
                bin(g, "and", 1, &ge, &lt)
            };
            let sh = in_range(g, env::SHARED, env::TOTAL_SMEM, &a);
            let lo = in_range(g, env::LOCAL, env::LOCAL_LEN, &a);
            let co = in_range(g, env::CONST, env::CONST_LEN, &a);
            let pa = in_range(g, env::PARAMS, env::PARAMS_LEN, &a);
            let r = match space {
                Space::Shared => sh,
                Space::Local => lo,
                Space::Const => co,
                Space::Param => pa,
                _ => {
                    let o1 = bin(g, "or", 1, &sh, &lo);
                    let o2 = bin(g, "or", 1, &co, &pa);
                    let o = bin(g, "or", 1, &o1, &o2);
                    not1(g, &o)
                }
            };
            g.set(*dst, &r, 1, false, &exec);
        }
        InstKind::Cvta {
            to_generic,
            space,
            dst,
            src,
            bits,
        } => {
            let x = g.val(*src, *bits);
            let x = g.conv(&x, *bits, 64, false);
            let r = match space_base(g, *space) {
                None => x,
                Some(b) => {
                    if *to_generic {
                        bin(g, "add", 64, &x, &b)
                    } else {
                        bin(g, "sub", 64, &x, &b)
                    }
                }
            };
            let r = g.conv(&r, 64, *bits, false);
            g.set(*dst, &r, *bits, false, &exec);
        }
        InstKind::Pack {
            ty,
            dst,
            parts,
            part_bits,
        } => {
            let bits = ty.bits();
            let mut acc = "zeroinitializer".to_string();
            for (i, p) in parts.iter().enumerate() {
                let v = g.val(*p, *part_bits);
                let v = g.conv(&v, *part_bits, bits, false);
                let sh = bin(
                    g,
                    "shl",
                    bits,
                    &v,
                    &sc::<W>(bits, u64::from(i as u32 * part_bits)),
                );
                acc = bin(g, "or", bits, &acc, &sh);
            }
            g.set(*dst, &acc, bits, false, &exec);
        }
        InstKind::Unpack {
            ty,
            dsts,
            src,
            part_bits,
        } => {
            let bits = ty.bits();
            let x = g.val(*src, bits);
            for (i, d) in dsts.iter().enumerate() {
                if let Some(d) = d {
                    let sh = bin(
                        g,
                        "lshr",
                        bits,
                        &x,
                        &sc::<W>(bits, u64::from(i as u32 * part_bits)),
                    );
                    let v = g.conv(&sh, bits, *part_bits, false);
                    g.set(*d, &v, *part_bits, false, &exec);
                }
            }
        }
        InstKind::Ld {
            space,
            ty,
            dsts,
            addr,
            ..
        } => {
            let bits = ty.bits();
            if uniform_symbol(addr, *space) {
                // Kernel parameters / constants by name: one scalar load.
                let h = host_addr(g, addr, *space)?;
                for (i, d) in dsts.iter().enumerate() {
                    let h0 = g.t();
                    g.line(&format!("{h0} = extractelement <{W} x i64> {h}, i32 0"));
                    let hi = g.t();
                    g.line(&format!("{hi} = add i64 {h0}, {}", i as u32 * bits / 8));
                    let p = g.t();
                    g.line(&format!("{p} = inttoptr i64 {hi} to i{bits}*"));
                    let v = g.t();
                    // Parameters and constants do not change in a launch
                    // (stores to them are refused): a load of one is the
                    // same after any store, in any warp.
                    g.line(&format!(
                        "{v} = load i{bits}, i{bits}* {p}, align 1, !invariant.load !{{}}"
                    ));
                    let s = g.splat(&format!("i{bits}"), &v);
                    if let Some(d) = d {
                        g.set(*d, &s, bits, ty.is_signed(), &exec);
                    }
                }
            } else {
                let start = g.out.len();
                load(g, addr, *space, *ty, dsts, &exec)?;
                if *space == Space::Global {
                    mark_global_reads(g, start);
                }
                let b = g.p.order[g.cur_id as usize];
                canon_own_slot_load(g, b, g.cur_inst, inst);
            }
        }
        InstKind::St {
            space,
            ty,
            srcs,
            addr,
            ..
        } => {
            if matches!(space, Space::Param | Space::Const) {
                return Err(Unsupported("stores to the param or const space".into()));
            }
            let at = (g.p.order[g.cur_id as usize], g.cur_inst);
            g.keep_nans = g.own_slots.raw_stores.contains(&at);
            let stored = store(g, addr, *space, *ty, srcs, &exec);
            g.keep_nans = false;
            stored?;
        }
        InstKind::Atom {
            space,
            op,
            ty,
            dst,
            addr,
            a,
            b,
            ..
        } => {
            let h = host_addr(g, addr, *space)?;
            let x = g.to64(*a, ty.bits());
            if g.deferred_red_here() {
                // Its result is never read: no `dst` to set.
                deferred_add(g, h, x, ty.bits(), &exec);
                return Ok(());
            }
            let y = match b {
                Some(b) => g.to64(*b, ty.bits()),
                None => sc::<W>(64, 0),
            };
            let r = match atomic_rmw(*op, *ty) {
                Some(rmw) => {
                    let n = ty.bits();
                    // Shared memory belongs to the CTA, which one worker
                    // runs: plain read-modify-write, no locked instruction.
                    let private = *space == Space::Shared;
                    if private {
                        let form = index_form(g, addr, *space);
                        let replay = form.as_ref().and_then(|f| f.replay(g));
                        let args = [h, x, y];
                        private_atomic(g, rmw, n, args, form.as_ref(), replay.as_ref(), &exec)
                    } else {
                        g.lane_loop(&[h, x, y], 3, Some(&exec), |g, xs| {
                            inline_atomic(g, rmw, n, xs, private)
                        })
                    }
                }
                None => g.call_lanes(Helper::Atom, inst.kind.clone(), &[h, x, y], Some(&exec)),
            };
            if let Some(d) = dst {
                let bits = ty.bits();
                let r = g.conv(&r, 64, bits, false);
                g.set(*d, &r, bits, ty.is_signed(), &exec);
            }
        }
        InstKind::Fence => g.line("fence seq_cst"),
        InstKind::Nop => {}
        InstKind::ReadSpecial { dst, sreg } => {
            let (v, bits) = special(g, *sreg);
            g.set(*dst, &v, bits, false, &exec);
        }
        InstKind::Activemask { dst } => {
            let b = g.bits_of_mask(&exec);
            let s = g.splat("i32", &b);
            g.set(*dst, &s, 32, false, &exec);
        }
        InstKind::Shfl {
            mode,
            dst,
            pred_dst,
            a,
            b,
            c,
            mask,
        } => {
            debug_assert!(first);
            let part = collective_gate(g, &exec, *mask);
            let av = if carries_lazy_nan(g, *dst, *a, 32) {
                g.val_raw(*a, 32)
            } else {
                g.val(*a, 32)
            };
            let konst = |v: &Value| crate::uniform::known_constant(&g.consts, v);
            let (got, j, ok) = if let (Some(bk), Some(ck)) = (konst(b), konst(c)) {
                // Constant lane pattern (shuffle trees): one constant
                // permutation, which LLVM lowers well for any vector ISA.
                let (j, ok) = shfl_lanes(*mode, bk as u32, ck as u32);
                let list = |f: &dyn Fn(usize) -> String| {
                    format!("<{}>", (0..32).map(f).collect::<Vec<_>>().join(", "))
                };
                // Lanes nothing reads are left undefined (see `demanded`):
                // LLVM drops what computes only them.
                let read = g.demanded.get(dst.0 as usize).copied().unwrap_or(u32::MAX);
                if read != u32::MAX {
                    crate::emit::NARROWED_SHUFFLES.with(|n| n.set(n.get() + 1));
                }
                let picks = list(&|l| {
                    if read >> l & 1 == 1 {
                        format!("i32 {}", j[l])
                    } else {
                        "i32 undef".to_string()
                    }
                });
                let j = list(&|l| format!("i32 {}", j[l]));
                let ok = list(&|l| format!("i1 {}", u8::from(ok[l])));
                let got = g.def(&format!(
                    "shufflevector <{W} x i32> {av}, <{W} x i32> undef, <{W} x i32> {picks}"
                ));
                (got, j, ok)
            } else {
                let bv = g.val(*b, 32);
                let bv = bin(g, "and", 32, &bv, &sc::<W>(32, 31));
                let cv = g.val(*c, 32);
                let lane = iota::<W>(32);
                let cval = bin(g, "and", 32, &cv, &sc::<W>(32, 31));
                let seg0 = bin(g, "lshr", 32, &cv, &sc::<W>(32, 8));
                let seg = bin(g, "and", 32, &seg0, &sc::<W>(32, 31));
                let nseg = bin(g, "xor", 32, &seg, &sc::<W>(32, u64::from(u32::MAX)));
                let l_seg = bin(g, "and", 32, &lane, &seg);
                let c_nseg = bin(g, "and", 32, &cval, &nseg);
                let maxl = bin(g, "or", 32, &l_seg, &c_nseg);
                let (j, ok) = match mode {
                    ShflMode::Up => {
                        let j = bin(g, "sub", 32, &lane, &bv);
                        let ok = icmp(g, "sge", 32, &j, &maxl);
                        (j, ok)
                    }
                    ShflMode::Down => {
                        let j = bin(g, "add", 32, &lane, &bv);
                        let ok = icmp(g, "sle", 32, &j, &maxl);
                        (j, ok)
                    }
                    ShflMode::Bfly => {
                        let j = bin(g, "xor", 32, &lane, &bv);
                        let ok = icmp(g, "sle", 32, &j, &maxl);
                        (j, ok)
                    }
                    ShflMode::Idx => {
                        let bn = bin(g, "and", 32, &bv, &nseg);
                        let j = bin(g, "or", 32, &l_seg, &bn);
                        let ok = icmp(g, "sle", 32, &j, &maxl);
                        (j, ok)
                    }
                };
                let j = sel(g, &ok, 32, &j, &lane);
                let got = if g.avx512 {
                    permute_lanes(g, &av, &j)
                } else if g.avx2 {
                    permute_lanes_avx2(g, &av, &j)
                } else {
                    gather_lanes(g, &av, &j)
                };
                (got, j, ok)
            };
            // A source lane that does not take part gives the caller's own value.
            let ps = g.splat("i32", &part);
            let sh = bin(g, "lshr", 32, &ps, &j);
            let bit = bin(g, "and", 32, &sh, &sc::<W>(32, 1));
            let inp = icmp(g, "ne", 32, &bit, "zeroinitializer");
            let v = sel(g, &inp, 32, &got, &av);
            g.set(*dst, &v, 32, false, &exec);
            if let Some(p) = pred_dst {
                g.set(*p, &ok, 1, false, &exec);
            }
        }
        InstKind::Vote {
            mode,
            dst,
            a,
            negate,
            mask,
        } => {
            let part = collective_gate(g, &exec, *mask);
            let pv = g.val(*a, 1);
            let pv = if *negate { not1(g, &pv) } else { pv };
            let pb = g.bits_of_mask(&pv);
            let ballot = g.t();
            g.line(&format!("{ballot} = and i32 {pb}, {part}"));
            match mode {
                VoteMode::Ballot => {
                    let s = g.splat("i32", &ballot);
                    g.set(*dst, &s, 32, false, &exec);
                }
                _ => {
                    let r = g.t();
                    match mode {
                        VoteMode::All => g.line(&format!("{r} = icmp eq i32 {ballot}, {part}")),
                        VoteMode::Any => g.line(&format!("{r} = icmp ne i32 {ballot}, 0")),
                        _ => {
                            let x = g.t();
                            let y = g.t();
                            g.line(&format!("{x} = icmp eq i32 {ballot}, {part}"));
                            g.line(&format!("{y} = icmp eq i32 {ballot}, 0"));
                            g.line(&format!("{r} = or i1 {x}, {y}"));
                        }
                    }
                    let s = g.splat("i1", &r);
                    g.set(*dst, &s, 1, false, &exec);
                }
            }
        }
        InstKind::Redux {
            op,
            ty,
            dst,
            a,
            mask,
        } => {
            let part = collective_gate(g, &exec, *mask);
            let av = g.val(*a, 32);
            let pm = g.mask_of_bits(&part);
            let (ident, red) = match (op, ty.is_signed()) {
                (ReduxOp::Add, _) => (0u64, "add"),
                (ReduxOp::And, _) => (u64::from(u32::MAX), "and"),
                (ReduxOp::Or, _) => (0, "or"),
                (ReduxOp::Xor, _) => (0, "xor"),
                (ReduxOp::Min, true) => (i32::MAX as u64, "smin"),
                (ReduxOp::Max, true) => (i32::MIN as u32 as u64, "smax"),
                (ReduxOp::Min, false) => (u64::from(u32::MAX), "umin"),
                (ReduxOp::Max, false) => (0, "umax"),
            };
            let v = sel(g, &pm, 32, &av, &sc::<W>(32, ident));
            let r = g.t();
            g.line(&format!(
                "{r} = call i32 @llvm.vector.reduce.{red}.v{W}i32(<{W} x i32> {v})"
            ));
            let s = g.splat("i32", &r);
            g.set(*dst, &s, 32, false, &exec);
        }
        InstKind::WarpSync { mask } => {
            let _ = collective_gate(g, &exec, *mask);
        }
        InstKind::Bar {
            kind,
            pred,
            id,
            count,
            ..
        } => {
            // A barrier is alone in its block: the lanes wait; the others
            // (guard false) go on.
            let Some(succ) = succ else {
                return Err(Unsupported("barrier at the end of a block".into()));
            };
            let eb = g.bits_of_mask(&exec);
            if g.counted_barriers {
                count_arrivals(g, *id, *count, &eb)?;
                if *kind == BarKind::Arrive {
                    // Arriving lanes go on.
                    return Ok(());
                }
            }
            if let (BarKind::Red(_), Some((p, neg))) = (kind, pred) {
                // This warp's share of the reduction, accumulated in its state.
                let pv = g.val(*p, 1);
                let pv = if *neg { not1(g, &pv) } else { pv };
                let on = bin(g, "and", 1, &exec, &pv);
                let ob = g.bits_of_mask(&on);
                let npv = not1(g, &pv);
                let off = bin(g, "and", 1, &exec, &npv);
                let fb = g.bits_of_mask(&off);
                let field = |g: &mut Gen<W>, o: usize| g.state_ptr(o, "i32");
                let pp = field(g, crate::emit::state::RED_POPC);
                let (old, cnt, new) = (g.t(), g.t(), g.t());
                g.line(&format!("{old} = load i32, i32* {pp}"));
                g.line(&format!("{cnt} = call i32 @llvm.ctpop.i32(i32 {ob})"));
                g.line(&format!("{new} = add i32 {old}, {cnt}"));
                g.line(&format!("store i32 {new}, i32* {pp}"));
                let pa = field(g, crate::emit::state::RED_AND);
                let (olda, none_off, na) = (g.t(), g.t(), g.t());
                g.line(&format!("{olda} = load i32, i32* {pa}"));
                g.line(&format!("{none_off} = icmp eq i32 {fb}, 0"));
                let z = g.t();
                g.line(&format!("{z} = zext i1 {none_off} to i32"));
                g.line(&format!("{na} = and i32 {olda}, {z}"));
                g.line(&format!("store i32 {na}, i32* {pa}"));
                let po = field(g, crate::emit::state::RED_OR);
                let (oldo, any, no) = (g.t(), g.t(), g.t());
                g.line(&format!("{oldo} = load i32, i32* {po}"));
                g.line(&format!("{any} = icmp ne i32 {ob}, 0"));
                let z2 = g.t();
                g.line(&format!("{z2} = zext i1 {any} to i32"));
                g.line(&format!("{no} = or i32 {oldo}, {z2}"));
                g.line(&format!("store i32 {no}, i32* {po}"));
            }
            let wb = g.load_scalar("wait_bar", "i32");
            let wb2 = g.t();
            g.line(&format!("{wb2} = or i32 {wb}, {eb}"));
            g.line(&format!("store i32 {wb2}, i32* %wait_bar"));
            // Remember which barrier; two different ones is an error the
            // CTA driver reports.
            let site = g.load_scalar("bar_site", "i32");
            let me = g.cur_id + 1;
            let is0 = g.t();
            let same = g.t();
            let ok = g.t();
            let ns = g.t();
            g.line(&format!("{is0} = icmp eq i32 {site}, 0"));
            g.line(&format!("{same} = icmp eq i32 {site}, {me}"));
            g.line(&format!("{ok} = or i1 {is0}, {same}"));
            g.line(&format!("{ns} = select i1 {ok}, i32 {me}, i32 -1"));
            g.line(&format!("store i32 {ns}, i32* %bar_site"));
            set_next(g, &sc::<W>(32, u64::from(succ)));
            let rp = g.state_ptr(crate::emit::state::RESUME_AT, "i32");
            g.line(&format!("store i32 {}, i32* {rp}", succ + 1));
            // The whole warp waiting (the usual case): nothing to pick.
            let live = g.load_scalar("live", "i32");
            let wc = g.load_scalar("wait_coll", "i32");
            let (w, all) = (g.t(), g.t());
            g.line(&format!("{w} = or i32 {wb2}, {wc}"));
            g.line(&format!("{all} = icmp eq i32 {w}, {live}"));
            if g.lean_barriers && g.cur_convergent && pred.is_none() {
                // All live lanes here and none waiting elsewhere (the
                // case in a convergent block; checked, it costs little):
                // the lean exit.
                let (before, idle, whole, lean) = (g.t(), g.t(), g.t(), g.t());
                g.line(&format!("{before} = or i32 {wb}, {wc}"));
                g.line(&format!("{idle} = icmp eq i32 {before}, 0"));
                g.line(&format!("{whole} = icmp eq i32 {eb}, {live}"));
                g.line(&format!("{lean} = and i1 {idle}, {whole}"));
                g.line(&format!("store i32 {me}, i32* %bar_me"));
                let general = g.label("bar_general");
                g.line(&format!("br i1 {lean}, label %leave_bar, label %{general}"));
                g.emit_label(&general);
            }
            g.line(&format!("br i1 {all}, label %leave, label %dispatch"));
            *waited = true;
        }
        InstKind::Match {
            all,
            ty,
            dst,
            pred_dst,
            a,
            mask,
        } => {
            let part = collective_gate(g, &exec, *mask);
            let bits = ty.bits();
            let av = g.val(*a, bits);
            // For each lane, the participating lanes holding the same value.
            let mut acc = "zeroinitializer".to_string();
            for k in 0..W {
                let ak = g.t();
                g.line(&format!(
                    "{ak} = extractelement {} {av}, i32 {k}",
                    vt::<W>(bits)
                ));
                let sk = g.splat(&format!("i{bits}"), &ak);
                let eq = icmp(g, "eq", bits, &av, &sk);
                let (sh, on) = (g.t(), g.t());
                g.line(&format!("{sh} = lshr i32 {part}, {k}"));
                g.line(&format!("{on} = trunc i32 {sh} to i1"));
                let onv = g.splat("i1", &on);
                let eqm = bin(g, "and", 1, &eq, &onv);
                let add = sel(g, &eqm, 32, &sc::<W>(32, 1u64 << k), "zeroinitializer");
                acc = bin(g, "or", 32, &acc, &add);
            }
            if *all {
                let ps = g.splat("i32", &part);
                let same = icmp(g, "eq", 32, &acc, &ps);
                let r = sel(g, &same, 32, &ps, "zeroinitializer");
                g.set(*dst, &r, 32, false, &exec);
                if let Some(p) = pred_dst {
                    g.set(*p, &same, 1, false, &exec);
                }
            } else {
                g.set(*dst, &acc, 32, false, &exec);
                if let Some(p) = pred_dst {
                    g.set(*p, &sc::<W>(1, 0), 1, false, &exec);
                }
            }
        }
        InstKind::Builtin { .. } | InstKind::Trap => host_call(g, inst, &exec)?,
        InstKind::Call { .. } | InstKind::CallIndirect { .. } => {
            return Err(Unsupported(
                "instruction not supported by the compiled backend".into(),
            ))
        }
    }
    Ok(())
}

/// Add the lanes of `eb` to the arrivals at barrier `id` (and note its
/// thread count) in the CTA's barrier table.
fn count_arrivals<const W: u32>(g: &mut Gen<W>, id: Value, count: Option<Value>, eb: &str) -> R {
    let id = match id {
        Value::Imm(v) if v < 16 => v,
        _ => {
            return Err(Unsupported(
                "a barrier with a run-time or out-of-range id".into(),
            ))
        }
    };
    let tab = g.env(env::BARS);
    let base = g.def(&format!("inttoptr i64 {tab} to i32*"));
    let ap = g.def(&format!("getelementptr i32, i32* {base}, i64 {id}"));
    let n = g.def(&format!("call i32 @llvm.ctpop.i32(i32 {eb})"));
    let old = g.def(&format!("load i32, i32* {ap}"));
    let new = g.def(&format!("add i32 {old}, {n}"));
    g.line(&format!("store i32 {new}, i32* {ap}"));
    if let Some(c) = count {
        let Value::Imm(c) = c else {
            return Err(Unsupported("a barrier with a run-time thread count".into()));
        };
        // Only lanes that arrive set the count.
        let some = g.def(&format!("icmp ne i32 {eb}, 0"));
        let ep = g.def(&format!("getelementptr i32, i32* {base}, i64 {}", 16 + id));
        let e = g.def(&format!("load i32, i32* {ep}"));
        let unset = g.def(&format!("icmp eq i32 {e}, 0"));
        let same = g.def(&format!("icmp eq i32 {e}, {c}"));
        let fine = g.def(&format!("or i1 {unset}, {same}"));
        let clash = g.def(&format!("xor i1 {fine}, true"));
        let clash = g.def(&format!("and i1 {clash}, {some}"));
        let e2 = g.def(&format!("select i1 {some}, i32 {c}, i32 {e}"));
        g.line(&format!("store i32 {e2}, i32* {ep}"));
        let fp = g.def(&format!("getelementptr i32, i32* {base}, i64 32"));
        let f = g.def(&format!("load i32, i32* {fp}"));
        let cz = g.def(&format!("zext i1 {clash} to i32"));
        let f2 = g.def(&format!("or i32 {f}, {cz}"));
        g.line(&format!("store i32 {f2}, i32* {fp}"));
    }
    Ok(())
}

/// `trap`, `vprintf` and `__assertfail` run on the host, lane by lane in
/// lane order (as the interpreter runs them). A lane that traps or fails
/// an assertion records the fault and cancels the launch; the warp then
/// leaves at once, so nothing after the fault runs.
fn host_call<const W: u32>(g: &mut Gen<W>, inst: &Inst, exec: &str) -> R {
    let (args, rets): (&[CallArg], &[CallArg]) = match &inst.kind {
        InstKind::Builtin { args, rets, .. } => (args, rets),
        _ => (&[], &[]),
    };
    let ret_size = |l: &LocalId| g.p.func.locals[*l].size;
    let odd_ret =
        matches!(rets.first(), Some(CallArg::Local(l)) if ![1, 2, 4, 8].contains(&ret_size(l)));
    if args.len() > 5 || rets.len() > 1 || odd_ret {
        return Err(Unsupported(format!(
            "this form of a printf/assert call (PTX line {})",
            inst.loc.line
        )));
    }
    let host = env_splat64(g, env::HOST);
    let t = linear_tid(g);
    let t64 = g.conv(&t, 32, 64, false);
    let mut vals = vec![host, t64, sc::<W>(64, u64::from(inst.loc.line))];
    for a in args {
        let v = match a {
            CallArg::Reg(r) => g.val(Value::Reg(*r), 64),
            CallArg::Imm(v) => sc::<W>(64, *v),
            // A `.param` block: its bytes, at most 8.
            CallArg::Local(l) => {
                let size = g.p.func.locals[*l].size.min(8);
                let h = symbol_addr(g, Symbol::Local(*l), true)?;
                let ps = g.def(&format!("inttoptr <{W} x i64> {h} to <{W} x i64*>"));
                let v = g.def(&format!(
                    "call <{W} x i64> @llvm.masked.gather.v{W}i64.v{W}p0i64(<{W} x i64*> {ps}, i32 1, <{W} x i1> {exec}, <{W} x i64> undef)"
                ));
                if size < 8 {
                    bin(g, "and", 64, &v, &sc::<W>(64, (1u64 << (8 * size)) - 1))
                } else {
                    v
                }
            }
        };
        vals.push(v);
    }
    let r = g.call_lanes(Helper::Host, inst.kind.clone(), &vals, Some(exec));
    match rets.first() {
        Some(CallArg::Reg(d)) => g.set(*d, &r, 64, false, exec),
        // A `.param` block for the result.
        Some(CallArg::Local(l)) => {
            let bits = (g.p.func.locals[*l].size * 8) as u32;
            let h = symbol_addr(g, Symbol::Local(*l), true)?;
            let ps = g.def(&format!("inttoptr <{W} x i64> {h} to <{W} x i{bits}*>"));
            let v = g.conv(&r, 64, bits, false);
            g.line(&format!(
                "call void @llvm.masked.scatter.v{W}i{bits}.v{W}p0i{bits}(<{W} x i{bits}> {v}, <{W} x i{bits}*> {ps}, i32 1, <{W} x i1> {exec})"
            ));
        }
        _ => {}
    }
    let cp = g.env(env::CANCEL);
    let p = g.def(&format!("inttoptr i64 {cp} to i32*"));
    let v = g.def(&format!("load volatile i32, i32* {p}"));
    let stop = g.def(&format!("icmp ne i32 {v}, 0"));
    let go = g.label("after_host");
    g.line(&format!("br i1 {stop}, label %cancelled, label %{go}"));
    g.emit_label(&go);
    Ok(())
}

/// After the current block sent its lanes on, with `x` the earliest block
/// they went to: go where the dispatcher would. Every runnable lane is at
/// the current block or later while it runs (the dispatcher takes the
/// earliest), so when `x` is a backward target or the very next block, the
/// dispatcher would pick `x`: go there directly with the lanes whose next
/// it is. Otherwise, or after a latest-first pick (checked at run time),
/// ask the dispatcher.
fn go_as_dispatcher<const W: u32>(g: &mut Gen<W>, x: u32) {
    if g.structured_only || !(x <= g.cur_id || x == g.cur_id + 1) {
        g.line("br label %dispatch");
        return;
    }
    let latest = g.load_scalar("latest", "i1");
    let go = g.label("pick_known");
    g.line(&format!("br i1 {latest}, label %dispatch, label %{go}"));
    g.emit_label(&go);
    let next = g.load_scalar("next", &vt::<W>(32));
    let wc = g.load_scalar("wait_coll", "i32");
    g.take_group_at(&next, &x.to_string(), &wc);
    let tl = g.target(x);
    g.line(&format!("br label %{tl}"));
}

/// next = target for the lanes of the group.
pub(crate) fn set_next<const W: u32>(g: &mut Gen<W>, target: &str) {
    let mask = g.load_mask();
    let next = g.load_scalar("next", &vt::<W>(32));
    let n2 = sel(g, &mask, 32, target, &next);
    g.line(&format!("store <{W} x i32> {n2}, <{W} x i32>* %next"));
}

/// The lanes (bits, lane 0 lowest) where branch condition `pred` holds,
/// worked out from lane-0 values when the block computes it itself from
/// comparisons of a consecutive index with uniform values (`x >= w`,
/// `x == 0`; the index below 2^31 in every lane, so none wraps) or of
/// uniform values, joined by and/or/xor/not: a few scalar instructions
/// where vector compares packed into bits are tens (a 2-D stencil's
/// bounds and edge tests ran 50 vector instructions per warp). With
/// AVX-512 too, where a compare writes a mask register: the two compares
/// of a 32-lane index, their join and the test are still ten
/// instructions where `i < n` for every lane is one compare of lane 31's
/// value. Zen 4, one worker, inputs in cache, alternating runs: block
/// reduction 0.044 -> 0.041 ms, warp-shuffle reduction 0.051 -> 0.049,
/// scan 0.092 -> 0.089, triad 0.042 -> 0.040; the stencils the same.
///
/// Also returns the condition under which the bits are right when an
/// index may wrap (see `Spread::Wrapping`): no lane past 2^31 - 1.
fn branch_bits<const W: u32>(g: &mut Gen<W>, pred: Reg) -> Option<(Cond, Option<String>)> {
    let p = g.p;
    let insts = &p.func.blocks[p.order[g.cur_id as usize]].insts;
    let end = insts.len();
    if !cond_bits_ok(g, insts, end, Value::Reg(pred), 0) {
        return None;
    }
    let mut guards = Vec::new();
    let bits = cond_bits(g, insts, end, Value::Reg(pred), 0, &mut guards);
    let guard = guards
        .into_iter()
        .reduce(|a, b| g.def(&format!("and i1 {a}, {b}")));
    Some((bits, guard))
}

/// `setp` of a consecutive index against a uniform value (`i < n`, `n >=
/// i`), with AVX-512: the lanes where it holds as bits from lane-0 values
/// (`compare_bits`), moved into a mask register, in place of the index
/// vector's compare (a broadcast, an add of the lane numbers and a compare
/// per 16 lanes, on the vector units the kernel's arithmetic needs); a
/// guarded load or store and a select then use the mask as it is. Not for
/// indices that may wrap (`Spread::Wrapping`), nor for equality: a
/// stencil's edge tests (`x == 0`) gained nothing. Single CPU, inputs in
/// cache (`scripts/cache_suite.py`), 8 rounds: the warp-shuffle reduction
/// took 0.95 of the time (8/8 faster); with the instcombine after
/// `shared_regs` (see `jit`), the block reduction 0.89 (8/8) and the scan
/// 0.90 (6/8). The same bits for the guards of loads and stores, worked
/// out again at each guarded instruction (`cond_bits`), made the scan 4%
/// slower and the others no faster.
fn index_compare_mask<const W: u32>(
    g: &mut Gen<W>,
    (cmp, ty, a, b): (CmpOp, Ty, Value, Value),
) -> Option<String> {
    if !g.avx512 || int_compare(cmp, ty) != Some(true) {
        return None;
    }
    let spreads = [spread(g, a)?, spread(g, b)?];
    if !matches!(
        spreads,
        [Spread::Consecutive, Spread::Uniform] | [Spread::Uniform, Spread::Consecutive]
    ) {
        return None;
    }
    // (No index that may wrap: no guard to test first.)
    let mut guards = Vec::new();
    let bits = compare_bits(g, (cmp, ty, a, b), &mut guards).bits.make(g);
    debug_assert!(guards.is_empty());
    crate::emit::INDEX_MASKS.with(|n| n.set(n.get() + 1));
    Some(g.mask_of_bits(&bits))
}

/// For a 32-bit integer comparison `compare_bits` can work out: whether
/// it orders (`lt`, `ls`, ...) rather than tests equality; None for
/// other types and comparisons.
fn int_compare(cmp: CmpOp, ty: Ty) -> Option<bool> {
    if !matches!(ty, Ty::S32 | Ty::U32 | Ty::B32) {
        return None;
    }
    match cmp {
        CmpOp::Eq | CmpOp::Ne => Some(false),
        CmpOp::Lt
        | CmpOp::Le
        | CmpOp::Gt
        | CmpOp::Ge
        | CmpOp::Lo
        | CmpOp::Ls
        | CmpOp::Hi
        | CmpOp::Hs => Some(true),
        _ => None,
    }
}

/// How an integer operand of a comparison varies across the lanes, for
/// `branch_bits` and `index_compare_mask`: one value, or lane 0's plus the
/// lane index.
#[derive(Clone, Copy, PartialEq)]
enum Spread {
    Uniform,
    Consecutive,
    /// Consecutive from a lane-0 value with no known bound (a grid-stride
    /// loop's index): lanes past 2^31 - 1 wrap.
    Wrapping,
}

impl Spread {
    fn is_index(self) -> bool {
        matches!(self, Spread::Consecutive | Spread::Wrapping)
    }
}

fn spread<const W: u32>(g: &Gen<W>, v: Value) -> Option<Spread> {
    let Value::Reg(r) = v else {
        return Some(Spread::Uniform);
    };
    // A register holding float bits whose NaNs are made canonical only
    // where read as bits: its scalar is raw (an `int` index never is).
    if g.reg_bits[r.0 as usize] != 32 || g.float_reg[r.0 as usize].is_some() {
        return None;
    }
    let l = g.lanes[r.0 as usize]?;
    if l.extra != 0 || l.jump != 0 {
        return None;
    }
    match l.stride {
        0 => Some(Spread::Uniform),
        1 if l.max < 1 << 31 => Some(Spread::Consecutive),
        1 => Some(Spread::Wrapping),
        _ => None,
    }
}

/// Lane 0's value (an `i32`) of a 32-bit integer operand kept as one
/// scalar (see `spread`).
pub(crate) fn lane0_i32<const W: u32>(g: &mut Gen<W>, v: Value) -> String {
    match v {
        Value::Imm(x) => (x as u32).to_string(),
        Value::Reg(r) => g.load_scalar(&format!("r{}", r.0), "i32"),
    }
}

/// Whether 32-bit integer operand `v` holds lane 0's value plus the lane
/// (see `spread`), wrapping past 2^31 - 1 in some lanes unless lane 0's
/// value is at most 2^31 - W: callers test that.
pub(crate) fn consecutive_index<const W: u32>(g: &Gen<W>, v: Value) -> bool {
    spread(g, v).is_some_and(Spread::is_index)
}

/// Whether 32-bit integer operand `v` is the same in every lane, its
/// scalar in `%rN` (or an immediate).
pub(crate) fn uniform_int32<const W: u32>(g: &Gen<W>, v: Value) -> bool {
    spread(g, v) == Some(Spread::Uniform)
}

/// The last instruction before `end` defining `r`, unguarded, whose
/// operands no instruction from it to `end` writes.
pub(crate) fn quiet_def(insts: &[Inst], end: usize, r: Reg) -> Option<&Inst> {
    let k = (0..end)
        .rev()
        .find(|&k| crate::uniform::defs(&insts[k].kind).contains(&r))?;
    let i = &insts[k];
    let ops = crate::uniform::uses(i);
    let stable = insts[k + 1..end].iter().all(|j| {
        crate::uniform::defs(&j.kind)
            .iter()
            .all(|d| !ops.contains(d))
    });
    (i.guard.is_none() && stable).then_some(i)
}

/// Whether `cond_bits` can work out predicate `v` at instruction `end`.
fn cond_bits_ok<const W: u32>(
    g: &Gen<W>,
    insts: &[Inst],
    end: usize,
    v: Value,
    depth: u32,
) -> bool {
    let Value::Reg(r) = v else {
        return true;
    };
    // Kept as bits in the warp state, a predicate's bits are one load at
    // the branch, whatever defined it, in this block or before (a
    // stencil's edge test made before its loop: 35 vector instructions a
    // trip to move the bits into a vector and back).
    g.is_uniform(r.0 as usize)
        || defined_bits_ok(g, insts, end, r, depth)
        || g.bits_in_state(r.0 as usize, 1)
}

/// Whether `cond_bits` can work out predicate `r` from its definition in
/// the block.
fn defined_bits_ok<const W: u32>(
    g: &Gen<W>,
    insts: &[Inst],
    end: usize,
    r: Reg,
    depth: u32,
) -> bool {
    if depth > 6 {
        return false;
    }
    let Some(i) = quiet_def(insts, end, r) else {
        return false;
    };
    let ok = |v: Value| cond_bits_ok(g, insts, end, v, depth + 1);
    match &i.kind {
        InstKind::Setp {
            cmp,
            ty,
            dst,
            a,
            b,
            combine,
            ..
        } => {
            let known = int_compare(*cmp, *ty).is_some();
            let spreads = [spread(g, *a), spread(g, *b)];
            let one_index = spreads.iter().all(|s| s.is_some())
                && spreads
                    .iter()
                    .filter(|s| s.is_some_and(Spread::is_index))
                    .count()
                    <= 1;
            known && *dst == r && one_index && combine.is_none_or(|(_, p, _)| ok(p))
        }
        InstKind::PredOp { op, a, b, .. } => match op {
            PredOp::Not | PredOp::Mov => ok(*a),
            _ => ok(*a) && ok(*b),
        },
        _ => false,
    }
}

/// A branch condition's lanes as i32 bits, with conditions under which
/// it holds in every lane (`all`) or in none, where known. Each of these
/// suffices (it need not be the only way): the branch tests them before
/// the bits, as the plain compares LLVM does not find through the bits.
struct Cond {
    bits: Bits,
    all: Option<String>,
    none: Option<String>,
}

/// A condition's lane bits: made, or still to be made from lane 0's
/// values, so that a branch makes them only past its every-lane and
/// no-lane tests (`Bits::make`).
enum Bits {
    Made(String),
    /// The first `n` lanes (every lane when `all`, none when `none`), or
    /// the other lanes when `flip`.
    Prefix {
        n: String,
        all: String,
        none: String,
        flip: bool,
    },
    /// Lane `d` alone when `inside` (`d` below W), or every other lane
    /// when `flip`.
    Lane {
        d: String,
        inside: String,
        flip: bool,
    },
}

impl Bits {
    fn make<const W: u32>(self, g: &mut Gen<W>) -> String {
        let full = full_bits::<W>();
        let (bits, flip) = match self {
            Bits::Made(b) => return b,
            Bits::Prefix { n, all, none, flip } => {
                // The middle case's shift stays below 32.
                let n32 = g.def(&format!("trunc i64 {n} to i32"));
                let s = g.def(&format!("and i32 {n32}, 31"));
                let one = g.def(&format!("shl i32 1, {s}"));
                let m = g.def(&format!("sub i32 {one}, 1"));
                let low = g.def(&format!("select i1 {none}, i32 0, i32 {m}"));
                let bits = g.def(&format!("select i1 {all}, i32 {full}, i32 {low}"));
                (bits, flip)
            }
            Bits::Lane { d, inside, flip } => {
                let one = g.def(&format!("shl i64 1, {d}"));
                let bit = g.def(&format!("trunc i64 {one} to i32"));
                let bits = g.def(&format!("select i1 {inside}, i32 {bit}, i32 0"));
                (bits, flip)
            }
        };
        if flip {
            g.def(&format!("xor i32 {bits}, {full}"))
        } else {
            bits
        }
    }

    fn flipped<const W: u32>(self, g: &mut Gen<W>) -> Bits {
        match self {
            Bits::Made(b) => Bits::Made(g.def(&format!("xor i32 {b}, {}", full_bits::<W>()))),
            Bits::Prefix { n, all, none, flip } => Bits::Prefix {
                n,
                all,
                none,
                flip: !flip,
            },
            Bits::Lane { d, inside, flip } => Bits::Lane {
                d,
                inside,
                flip: !flip,
            },
        }
    }
}

impl Cond {
    fn not<const W: u32>(self, g: &mut Gen<W>) -> Cond {
        Cond {
            bits: self.bits.flipped(g),
            all: self.none,
            none: self.all,
        }
    }

    /// `self op other` on the bits. The ends of a join are left unknown:
    /// as a chain of tests before the bits (a 2-D stencil's four edge
    /// compares) they made the stencil 8% slower in fewer instructions.
    fn join<const W: u32>(self, g: &mut Gen<W>, op: &str, other: Cond) -> Cond {
        let (x, y) = (self.bits.make(g), other.bits.make(g));
        Cond {
            bits: Bits::Made(g.def(&format!("{op} i32 {x}, {y}"))),
            all: None,
            none: None,
        }
    }
}

/// Predicate `v`'s lanes as i32 bits (see `branch_bits`), given
/// `cond_bits_ok`.
fn cond_bits<const W: u32>(
    g: &mut Gen<W>,
    insts: &[Inst],
    end: usize,
    v: Value,
    depth: u32,
    guards: &mut Vec<String>,
) -> Cond {
    let full = full_bits::<W>();
    let known = |on: bool| Cond {
        bits: Bits::Made(if on { full.to_string() } else { "0".into() }),
        all: Some(on.to_string()),
        none: Some((!on).to_string()),
    };
    let r = match v {
        Value::Imm(x) => return known(x & 1 != 0),
        Value::Reg(r) => r,
    };
    if g.is_uniform(r.0 as usize) {
        let s = g.load_scalar(&format!("r{}", r.0), "i1");
        return uniform_cond(g, &s);
    }
    let def = quiet_def(insts, end, r).filter(|_| defined_bits_ok(g, insts, end, r, depth));
    let Some(i) = def else {
        // Every instruction of the block is lowered by now: the state
        // holds the predicate's value (`cond_bits_ok`).
        return Cond {
            bits: Bits::Made(g.stored_pred_bits(r.0 as usize)),
            all: None,
            none: None,
        };
    };
    let i = i.clone();
    match &i.kind {
        InstKind::Setp {
            cmp,
            ty,
            a,
            b,
            combine,
            ..
        } => {
            let c = compare_bits(g, (*cmp, *ty, *a, *b), guards);
            match combine {
                None => c,
                Some((op, p, neg)) => {
                    let pb = cond_bits(g, insts, end, *p, depth + 1, guards);
                    let pb = if *neg { pb.not(g) } else { pb };
                    let o = match op {
                        BoolOp::And => "and",
                        BoolOp::Or => "or",
                        BoolOp::Xor => "xor",
                    };
                    c.join(g, o, pb)
                }
            }
        }
        InstKind::PredOp { op, a, b, .. } => {
            let x = cond_bits(g, insts, end, *a, depth + 1, guards);
            match op {
                PredOp::Mov => x,
                PredOp::Not => x.not(g),
                PredOp::And | PredOp::Or | PredOp::Xor => {
                    let y = cond_bits(g, insts, end, *b, depth + 1, guards);
                    let o = match op {
                        PredOp::And => "and",
                        PredOp::Or => "or",
                        _ => "xor",
                    };
                    x.join(g, o, y)
                }
            }
        }
        _ => known(false),
    }
}

/// The lanes of uniform condition `s` (i1).
fn uniform_cond<const W: u32>(g: &mut Gen<W>, s: &str) -> Cond {
    let bits = Bits::Made(g.def(&format!("select i1 {s}, i32 {}, i32 0", full_bits::<W>())));
    let none = g.def(&format!("xor i1 {s}, true"));
    Cond {
        bits,
        all: Some(s.to_string()),
        none: Some(none),
    }
}

/// The lanes where integer comparison `a cmp b` holds, from lane 0's
/// values (see `spread`): with index x = x0 + lane and uniform u, the
/// lanes form a prefix, a suffix or one lane, found in 64-bit arithmetic.
/// An index that may wrap adds to `guards` the test that it does not.
fn compare_bits<const W: u32>(
    g: &mut Gen<W>,
    (cmp, ty, a, b): (CmpOp, Ty, Value, Value),
    guards: &mut Vec<String>,
) -> Cond {
    let signed = ty == Ty::S32 && !matches!(cmp, CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs);
    let (x, y) = (lane0_i32(g, a), lane0_i32(g, b));
    // `lt`, `le`, `gt`, `ge`, `eq` or `ne`, with the index on the left.
    let base = match cmp {
        CmpOp::Lt | CmpOp::Lo => "lt",
        CmpOp::Le | CmpOp::Ls => "le",
        CmpOp::Gt | CmpOp::Hi => "gt",
        CmpOp::Ge | CmpOp::Hs => "ge",
        CmpOp::Eq => "eq",
        _ => "ne",
    };
    let (sa, sb) = (spread(g, a), spread(g, b));
    let index_right = sb.is_some_and(Spread::is_index);
    if !sa.is_some_and(Spread::is_index) && !index_right {
        let pred = match (base, signed) {
            ("eq", _) => "eq",
            ("ne", _) => "ne",
            ("lt", true) => "slt",
            ("le", true) => "sle",
            ("gt", true) => "sgt",
            ("ge", true) => "sge",
            ("lt", false) => "ult",
            ("le", false) => "ule",
            ("gt", false) => "ugt",
            _ => "uge",
        };
        let c = g.def(&format!("icmp {pred} i32 {x}, {y}"));
        return uniform_cond(g, &c);
    }
    let (idx, other, base) = if index_right {
        let flipped = match base {
            "lt" => "gt",
            "le" => "ge",
            "gt" => "lt",
            "ge" => "le",
            b => b,
        };
        (y, x, flipped)
    } else {
        (x, y, base)
    };
    if [sa, sb].contains(&Some(Spread::Wrapping)) {
        let low = g.def(&format!("icmp ule i32 {idx}, {}", (1u32 << 31) - W));
        guards.push(low);
    }
    // Lane i holds idx0 + i (below 2^31): it compares as `i base d`.
    let i0 = g.def(&format!("zext i32 {idx} to i64"));
    let u = g.def(&format!(
        "{} i32 {other} to i64",
        if signed { "sext" } else { "zext" }
    ));
    let d = g.def(&format!("sub i64 {u}, {i0}"));
    // The first `n` lanes: none (`n <= 0`), all (`n >= W`), or the low
    // `n` bits; a guard like `i < n` costs two compares, not a clamp, a
    // shift and two tests.
    let prefix = |g: &mut Gen<W>, n: &str, flip: bool| {
        let none = g.def(&format!("icmp sle i64 {n}, 0"));
        let all = g.def(&format!("icmp sge i64 {n}, {W}"));
        let bits = Bits::Prefix {
            n: n.to_string(),
            all: all.clone(),
            none: none.clone(),
            flip,
        };
        let (all, none) = if flip { (none, all) } else { (all, none) };
        Cond {
            bits,
            all: Some(all),
            none: Some(none),
        }
    };
    let d1 = g.def(&format!("add i64 {d}, 1"));
    match base {
        "lt" => prefix(g, &d, false),
        "le" => prefix(g, &d1, false),
        "gt" => prefix(g, &d1, true),
        "ge" => prefix(g, &d, true),
        _ => {
            let inside = g.def(&format!("icmp ult i64 {d}, {W}"));
            let outside = g.def(&format!("xor i1 {inside}, true"));
            let eq = Cond {
                bits: Bits::Lane {
                    d,
                    inside,
                    flip: false,
                },
                all: None,
                none: Some(outside),
            };
            if base == "eq" {
                eq
            } else {
                eq.not(g)
            }
        }
    }
}

/// At the end of a triangle's body or a diamond's arm: takes the kept
/// lanes (`%pend`, cleared) and goes on in a new block when they and the
/// group are every live lane; returns them and the label of the other
/// case, for the caller to emit.
fn join_kept<const W: u32>(g: &mut Gen<W>, mb: &str, live: &str, prefix: &str) -> (String, String) {
    let pend = g.load_scalar("pend", "i32");
    g.line("store i32 0, i32* %pend");
    let all = g.def(&format!("or i32 {mb}, {pend}"));
    let joined = g.def(&format!("icmp eq i32 {all}, {live}"));
    let (fast, slow) = (
        g.label(&format!("{prefix}_join")),
        g.label(&format!("{prefix}_slow")),
    );
    g.line(&format!("br i1 {joined}, label %{fast}, label %{slow}"));
    g.emit_label(&fast);
    (pend, slow)
}

pub(crate) fn emit_term<const W: u32>(g: &mut Gen<W>, term: Option<&Terminator>, id_of: &[u32]) {
    let mask = g.load_mask();
    let mb = g.load_scalar("mask_bits", "i32");
    let live = g.load_scalar("live", "i32");
    let conv = g.t();
    g.line(&format!("{conv} = icmp eq i32 {mb}, {live}"));
    match term {
        Some(Terminator::Jump(t)) if g.tri_body[g.cur_id as usize] => {
            // The end of a triangle's body: the lanes kept at the next
            // block join; all live lanes there is the convergent case.
            let id = id_of[t.0 as usize];
            let (_, slow) = join_kept(g, &mb, &live, "tri");
            let lm = g.mask_of_bits(&live);
            g.store_mask(&lm, &live);
            g.go_together(id, &live);
            g.emit_label(&slow);
            // Kept lanes already have the next block as their target.
            set_next(g, &sc::<W>(32, u64::from(id)));
            go_as_dispatcher(g, id);
        }
        Some(Terminator::Jump(t)) if g.diamond_first[g.cur_id as usize] => {
            // The end of a diamond's first arm (see `emit::if_bodies`):
            // the lanes kept for the second arm, the next block, run it
            // now, and these wait at the join for them.
            let (id, arm) = (id_of[t.0 as usize], g.cur_id + 1);
            let (pend, slow) = join_kept(g, &mb, &live, "dia");
            let none = g.def(&format!("icmp eq i32 {pend}, 0"));
            let (together, swap) = (g.label("dia_all"), g.label("dia_swap"));
            g.line(&format!("br i1 {none}, label %{together}, label %{swap}"));
            g.emit_label(&together);
            g.go_together(id, &mb);
            g.emit_label(&swap);
            // Their target, should the second arm's lanes leave for the
            // dispatcher.
            set_next(g, &sc::<W>(32, u64::from(id)));
            g.line(&format!("store i32 {mb}, i32* %pend"));
            let lm = g.mask_of_bits(&pend);
            g.store_mask(&lm, &pend);
            let tl = g.target(arm);
            g.line(&format!("br label %{tl}"));
            g.emit_label(&slow);
            set_next(g, &sc::<W>(32, u64::from(id)));
            go_as_dispatcher(g, id);
        }
        Some(Terminator::Jump(t)) => {
            let id = id_of[t.0 as usize];
            let (together, slow) = (g.label("jump_conv"), g.label("jump_slow"));
            g.line(&format!("br i1 {conv}, label %{together}, label %{slow}"));
            g.emit_label(&together);
            g.go_together(id, &mb);
            g.emit_label(&slow);
            set_next(g, &sc::<W>(32, u64::from(id)));
            go_as_dispatcher(g, id);
        }
        Some(Terminator::Branch {
            pred,
            negate,
            then,
            els,
        }) => {
            let (ti, ei) = (id_of[then.0 as usize], id_of[els.0 as usize]);
            let vector = |g: &mut Gen<W>| {
                let pv = g.val(Value::Reg(*pred), 1);
                let pv = if *negate { not1(g, &pv) } else { pv };
                let taken = g.t();
                g.line(&format!("{taken} = and <{W} x i1> {mask}, {pv}"));
                let tb = g.bits_of_mask(&taken);
                (pv, tb)
            };
            let (pv, tb) = if g.is_uniform(pred.0 as usize) && g.reg_bits[pred.0 as usize] == 1 {
                // A uniform condition (loop counters): the lanes taking
                // the branch are all running lanes or none, with no vector
                // mask kept alive across the loop for it.
                let s = g.load_scalar(&format!("r{}", pred.0), "i1");
                let s = if *negate {
                    g.def(&format!("xor i1 {s}, true"))
                } else {
                    s
                };
                let tb = g.def(&format!("select i1 {s}, i32 {mb}, i32 0"));
                (g.splat("i1", &s), tb)
            } else if let Some((c, guard)) = branch_bits(g, *pred) {
                let c = if *negate { c.not(g) } else { c };
                let wide = guard.map(|guard| {
                    // An index that may wrap: its lanes as vectors (seldom).
                    let (fast, wide) = (g.label("br_index"), g.label("br_wide"));
                    g.line(&format!("br i1 {guard}, label %{fast}, label %{wide}"));
                    g.emit_label(&fast);
                    wide
                });
                let exact = ends_first(g, &conv, &mb, (ti, ei), (c.all, c.none));
                // Lanes part: the bits, made only here, and the vector
                // condition only where they do not go together (below).
                let bits = c.bits.make(g);
                let tb = g.def(&format!("and i32 {mb}, {bits}"));
                match wide {
                    None => (String::new(), tb),
                    Some(wide) => {
                        let join = g.label("br_lanes");
                        g.line(&format!("br label %{join}"));
                        g.emit_label(&wide);
                        let (_, wide_tb) = vector(g);
                        g.line(&format!("br label %{join}"));
                        g.emit_label(&join);
                        let tb = g.def(&format!(
                            "phi i32 [ {tb}, %{exact} ], [ {wide_tb}, %{wide} ]"
                        ));
                        (String::new(), tb)
                    }
                }
            } else {
                vector(g)
            };
            branch_tail(g, (ti, ei), &conv, &mb, pv, tb);
        }
        Some(Terminator::Exit) | Some(Terminator::Return) | None => {
            let nmb = g.t();
            let l2 = g.t();
            g.line(&format!("{nmb} = xor i32 {mb}, -1"));
            g.line(&format!("{l2} = and i32 {live}, {nmb}"));
            g.line(&format!("store i32 {l2}, i32* %live"));
            set_next(g, &sc::<W>(32, u64::from(DONE)));
            // The last lanes out leave directly.
            let none = g.t();
            g.line(&format!("{none} = icmp eq i32 {l2}, 0"));
            g.line(&format!("br i1 {none}, label %leave, label %dispatch"));
        }
    }
}

/// A block that branches back to itself, run by some of the live lanes
/// (the others have left it or wait later on), when every lane of the
/// group goes round again: straight back with the same group. The
/// dispatcher would pick the same lanes: it takes the earliest block, and
/// the lanes at this one are the group, since none waits inside it (it
/// has no barrier, collective or call). Mandelbrot's escape loop went
/// through `%next` and the pick on every trip once its first lane left.
/// Not after a latest-first pick, nor in `@wf_fresh` (which yields to the
/// general function where lanes part), nor in a block every live lane
/// runs together (its group is never partial).
fn round_again<const W: u32>(g: &mut Gen<W>, (ti, ei): (u32, u32), (allt, nonet): (&str, &str)) {
    let here = g.cur_id;
    let plain = g.plain[g.p.order[here as usize].0 as usize];
    if g.structured_only || g.cur_convergent || !plain || (ti == here) == (ei == here) {
        return;
    }
    let all = if ti == here { allt } else { nonet };
    let latest = g.load_scalar("latest", "i1");
    let earliest = g.def(&format!("xor i1 {latest}, true"));
    let again = g.def(&format!("and i1 {all}, {earliest}"));
    let (go, parted) = (g.label("round_again"), g.label("br_parted"));
    g.line(&format!("br i1 {again}, label %{go}, label %{parted}"));
    g.emit_label(&go);
    let tl = g.target(here);
    g.line(&format!("br label %{tl}"));
    g.emit_label(&parted);
    ROUNDS_AGAIN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Branches given `round_again`'s way back, over every compilation in
/// this process: for tests that a kernel takes this path.
pub(crate) static ROUNDS_AGAIN: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// Where a branch condition's `Cond::all` or `Cond::none` holds, every
/// lane goes one way: tested first, so a loop's `i < n` is a compare and
/// a branch, and the lane bits are made only past them, in the block whose
/// label this returns.
fn ends_first<const W: u32>(
    g: &mut Gen<W>,
    conv: &str,
    mb: &str,
    (ti, ei): (u32, u32),
    (all, none): (Option<String>, Option<String>),
) -> String {
    let exact = g.label("br_exact");
    for (end, id) in [(all, ti), (none, ei)] {
        let Some(end) = end else { continue };
        let (yes, together, next) = (
            g.label("br_end"),
            g.label("br_end_conv"),
            g.label("br_next"),
        );
        g.line(&format!("br i1 {end}, label %{yes}, label %{next}"));
        g.emit_label(&yes);
        // A group of only some live lanes parts as below.
        g.line(&format!("br i1 {conv}, label %{together}, label %{exact}"));
        g.emit_label(&together);
        g.go_together(id, mb);
        g.emit_label(&next);
    }
    g.line(&format!("br label %{exact}"));
    g.emit_label(&exact);
    exact
}

/// The rest of a conditional branch's lowering, given the lanes taking it
/// (`tb`, bits) and the condition's vector when already made (`pv`, or
/// empty): together to one side when the group is every live lane and
/// goes one way, else parted through `%next`.
fn branch_tail<const W: u32>(
    g: &mut Gen<W>,
    (ti, ei): (u32, u32),
    conv: &str,
    mb: &str,
    pv: String,
    tb: String,
) {
    let allt = g.t();
    let nonet = g.t();
    g.line(&format!("{allt} = icmp eq i32 {tb}, {mb}"));
    g.line(&format!("{nonet} = icmp eq i32 {tb}, 0"));
    let (c1, c2, slow) = (g.label("br_conv"), g.label("br_conv2"), g.label("br_slow"));
    g.line(&format!("br i1 {conv}, label %{c1}, label %{slow}"));
    // All live lanes one way: together.
    let (tl, el) = (g.label("br_then"), g.label("br_else"));
    g.emit_label(&c1);
    g.line(&format!("br i1 {allt}, label %{tl}, label %{c2}"));
    g.emit_label(&tl);
    g.go_together(ti, mb);
    g.emit_label(&c2);
    g.line(&format!("br i1 {nonet}, label %{el}, label %{slow}"));
    g.emit_label(&el);
    g.go_together(ei, mb);
    g.emit_label(&slow);
    round_again(g, (ti, ei), (&allt, &nonet));
    // From the bits when the vector was not made: then nothing on the
    // way here needs the condition as a vector (the index's lanes).
    let pv = if pv.is_empty() {
        g.mask_of_bits(&tb)
    } else {
        pv
    };
    let tgt = sel(
        g,
        &pv,
        32,
        &sc::<W>(32, u64::from(ti)),
        &sc::<W>(32, u64::from(ei)),
    );
    set_next(g, &tgt);
    // The earlier target that receives lanes is the candidate.
    let (lo, hi) = (ti.min(ei), ti.max(ei));
    if lo == hi {
        go_as_dispatcher(g, lo);
    } else {
        let lo_bits = if lo == ti {
            tb.clone()
        } else {
            let nt = g.t();
            g.line(&format!("{nt} = xor i32 {mb}, {tb}"));
            nt
        };
        let any_lo = g.t();
        g.line(&format!("{any_lo} = icmp ne i32 {lo_bits}, 0"));
        let (llo, lhi) = (g.label("to_lo"), g.label("to_hi"));
        g.line(&format!("br i1 {any_lo}, label %{llo}, label %{lhi}"));
        let body = |v: &[bool]| v.get(lo as usize).copied().unwrap_or(false);
        let triangle =
            lo == g.cur_id + 1 && hi == lo + 1 && (body(&g.tri_body) || body(&g.diamond_first));
        g.emit_label(&llo);
        if triangle {
            // Run the body with its lanes; keep the others (their
            // target is already the block after it).
            // Only when B ran with every live lane: no lane can be
            // waiting at the body, and none elsewhere goes first.
            let latest = g.load_scalar("latest", "i1");
            let (go, disp) = (g.label("tri_go"), g.label("tri_disp"));
            let partial = g.def(&format!("xor i1 {conv}, true"));
            let off = g.def(&format!("or i1 {latest}, {partial}"));
            g.line(&format!("br i1 {off}, label %{disp}, label %{go}"));
            g.emit_label(&go);
            let hi_bits = g.def(&format!("xor i32 {mb}, {lo_bits}"));
            g.line(&format!("store i32 {hi_bits}, i32* %pend"));
            let lm = g.mask_of_bits(&lo_bits);
            g.store_mask(&lm, &lo_bits);
            let tl = g.target(lo);
            g.line(&format!("br label %{tl}"));
            g.emit_label(&disp);
        }
        go_as_dispatcher(g, lo);
        g.emit_label(&lhi);
        go_as_dispatcher(g, hi);
    }
}

fn special<const W: u32>(g: &mut Gen<W>, s: Special) -> (String, u32) {
    match s {
        // Rows of whole warps: lane 0's index from the warp's by constant
        // divisors, so code with a constant warp index (unrolled rounds,
        // see `emit::unrolled_round`) folds it.
        Special::Tid(c) if g.shape[0].is_multiple_of(W) && g.shape.iter().product::<u32>() > W => {
            let first = g.def(&format!("mul i32 %warp, {W}"));
            let (sx, sy) = (g.shape[0], g.shape[1]);
            let v = match c {
                0 => g.def(&format!("urem i32 {first}, {sx}")),
                1 => {
                    let row = g.def(&format!("udiv i32 {first}, {sx}"));
                    g.def(&format!("urem i32 {row}, {sy}"))
                }
                _ => g.def(&format!("udiv i32 {first}, {}", sx * sy)),
            };
            let s = g.splat("i32", &v);
            if c == 0 {
                (bin(g, "add", 32, &s, &iota::<W>(32)), 32)
            } else {
                (s, 32)
            }
        }
        Special::Tid(c) => {
            // Precomputed per warp by the launcher: no per-lane division.
            let tab = g.env(env::TID);
            let w64 = g.t();
            let idx = g.t();
            let p = g.t();
            let q = g.t();
            let v = g.t();
            g.line(&format!("{w64} = zext i32 %warp to i64"));
            g.line(&format!("{idx} = mul i64 {w64}, {}", 3 * 4 * W));
            g.line(&format!("{p} = add i64 {tab}, {idx}"));
            g.line(&format!("{q} = add i64 {p}, {}", u32::from(c) * 4 * W));
            let ptr = g.t();
            g.line(&format!("{ptr} = inttoptr i64 {q} to <{W} x i32>*"));
            g.line(&format!(
                "{v} = load <{W} x i32>, <{W} x i32>* {ptr}, align 4"
            ));
            (v, 32)
        }
        // The code is specialised for one block shape.
        Special::Ntid(c) => (sc::<W>(32, u64::from(g.shape[c as usize])), 32),
        Special::Ctaid(c) => (env_i32(g, env::CTAID + c as usize), 32),
        Special::Nctaid(c) => (env_i32(g, env::NCTAID + c as usize), 32),
        Special::LaneId => (iota::<W>(32), 32),
        Special::WarpId => (g.splat("i32", "%warp"), 32),
        Special::NWarpId => (sc::<W>(32, 64), 32),
        Special::SmId => (env_i32(g, env::SMID), 32),
        Special::NSmId => (env_i32(g, env::NSMID), 32),
        Special::GridId => (sc::<W>(32, 1), 32),
        Special::LaneMaskEq
        | Special::LaneMaskLe
        | Special::LaneMaskLt
        | Special::LaneMaskGe
        | Special::LaneMaskGt => {
            let one = sc::<W>(32, 1);
            let eq = bin(g, "shl", 32, &one, &iota::<W>(32));
            let lt = bin(g, "sub", 32, &eq, &one);
            let v = match s {
                Special::LaneMaskEq => eq,
                Special::LaneMaskLt => lt,
                Special::LaneMaskLe => bin(g, "or", 32, &lt, &eq),
                Special::LaneMaskGe => bin(g, "xor", 32, &lt, &sc::<W>(32, u64::from(u32::MAX))),
                _ => {
                    let le = bin(g, "or", 32, &lt, &eq);
                    bin(g, "xor", 32, &le, &sc::<W>(32, u64::from(u32::MAX)))
                }
            };
            (v, 32)
        }
        Special::Clock | Special::Clock64 | Special::GlobalTimer => {
            let c = g.t();
            g.line(&format!("{c} = call i64 @wf_clock()"));
            let s64 = g.splat("i64", &c);
            if s == Special::Clock {
                (g.conv(&s64, 64, 32, false), 32)
            } else {
                (s64, 64)
            }
        }
        Special::DynamicSmemSize => (env_i32(g, env::DYN_SMEM), 32),
        Special::TotalSmemSize => (env_i32(g, env::TOTAL_SMEM), 32),
        Special::EnvReg(_) => (sc::<W>(32, 0), 32),
    }
}

fn compare<const W: u32>(
    g: &mut Gen<W>,
    cmp: CmpOp,
    ty: Ty,
    a: Value,
    b: Value,
    ftz: bool,
) -> String {
    if ty.is_float() {
        let (x, y, ft) = match ty {
            Ty::F64 => (g.fval(a, Ty::F64), g.fval(b, Ty::F64), "double"),
            Ty::F32 => {
                let x = g.fval(a, Ty::F32);
                let y = g.fval(b, Ty::F32);
                if ftz {
                    (g.ftz(&x, Ty::F32), g.ftz(&y, Ty::F32), "float")
                } else {
                    (x, y, "float")
                }
            }
            _ => {
                // f16/bf16 widen exactly to f32.
                let widen = |g: &mut Gen<W>, v: Value| {
                    let h = g.val(v, 16);
                    if ty == Ty::BF16 || ty == Ty::BF16x2 {
                        let w = g.conv(&h, 16, 32, false);
                        let s = bin(g, "shl", 32, &w, &sc::<W>(32, 16));
                        let f = g.t();
                        g.line(&format!("{f} = bitcast <{W} x i32> {s} to <{W} x float>"));
                        f
                    } else {
                        let hh = g.t();
                        let f = g.t();
                        g.line(&format!("{hh} = bitcast <{W} x i16> {h} to <{W} x half>"));
                        g.line(&format!("{f} = fpext <{W} x half> {hh} to <{W} x float>"));
                        f
                    }
                };
                (widen(g, a), widen(g, b), "float")
            }
        };
        let p = match cmp {
            CmpOp::Eq => "oeq",
            CmpOp::Ne => "one",
            CmpOp::Lt | CmpOp::Lo => "olt",
            CmpOp::Le | CmpOp::Ls => "ole",
            CmpOp::Gt | CmpOp::Hi => "ogt",
            CmpOp::Ge | CmpOp::Hs => "oge",
            CmpOp::Equ => "ueq",
            CmpOp::Neu => "une",
            CmpOp::Ltu => "ult",
            CmpOp::Leu => "ule",
            CmpOp::Gtu => "ugt",
            CmpOp::Geu => "uge",
            CmpOp::Num => "ord",
            CmpOp::Nan => "uno",
        };
        let r = g.t();
        g.line(&format!("{r} = fcmp {p} <{W} x {ft}> {x}, {y}"));
        return r;
    }
    let bits = if ty == Ty::Pred { 1 } else { ty.bits() };
    let x = g.val(a, bits);
    let y = g.val(b, bits);
    let s = ty.is_signed();
    let p = match cmp {
        CmpOp::Eq | CmpOp::Equ => "eq",
        CmpOp::Ne | CmpOp::Neu => "ne",
        CmpOp::Lt | CmpOp::Ltu => {
            if s {
                "slt"
            } else {
                "ult"
            }
        }
        CmpOp::Le | CmpOp::Leu => {
            if s {
                "sle"
            } else {
                "ule"
            }
        }
        CmpOp::Gt | CmpOp::Gtu => {
            if s {
                "sgt"
            } else {
                "ugt"
            }
        }
        CmpOp::Ge | CmpOp::Geu => {
            if s {
                "sge"
            } else {
                "uge"
            }
        }
        CmpOp::Lo => "ult",
        CmpOp::Ls => "ule",
        CmpOp::Hi => "ugt",
        CmpOp::Hs => "uge",
        CmpOp::Num => return sc::<W>(1, 1),
        CmpOp::Nan => return "zeroinitializer".into(),
    };
    icmp(g, p, bits, &x, &y)
}

fn emit_int<const W: u32>(
    g: &mut Gen<W>,
    kind: &InstKind,
    op: IntOp,
    ty: Ty,
    dst: Reg,
    args: &[Value],
    exec: &str,
) {
    let bits = ty.bits();
    let signed = ty.is_signed();
    let a = |g: &mut Gen<W>, i: usize, b: u32| g.val(args[i], b);
    let r = match op {
        IntOp::Add => {
            let (x, y) = (a(g, 0, bits), a(g, 1, bits));
            bin(g, "add", bits, &x, &y)
        }
        IntOp::Sub => {
            let (x, y) = (a(g, 0, bits), a(g, 1, bits));
            bin(g, "sub", bits, &x, &y)
        }
        IntOp::MulLo => {
            let (x, y) = (a(g, 0, bits), a(g, 1, bits));
            bin(g, "mul", bits, &x, &y)
        }
        IntOp::MadLo => {
            let (x, y, z) = (a(g, 0, bits), a(g, 1, bits), a(g, 2, bits));
            let p = bin(g, "mul", bits, &x, &y);
            bin(g, "add", bits, &p, &z)
        }
        IntOp::MulHi | IntOp::MadHi | IntOp::MulWide | IntOp::MadWide => {
            let (x, y) = (a(g, 0, bits), a(g, 1, bits));
            let x2 = g.conv(&x, bits, bits * 2, signed);
            let y2 = g.conv(&y, bits, bits * 2, signed);
            let p = bin(g, "mul", bits * 2, &x2, &y2);
            match op {
                IntOp::MulWide => {
                    g.set(dst, &p, bits * 2, false, exec);
                    return;
                }
                IntOp::MadWide => {
                    let z = a(g, 2, bits * 2);
                    let s = bin(g, "add", bits * 2, &p, &z);
                    g.set(dst, &s, bits * 2, false, exec);
                    return;
                }
                _ => {
                    let hi = bin(
                        g,
                        if signed { "ashr" } else { "lshr" },
                        bits * 2,
                        &p,
                        &sc::<W>(bits * 2, u64::from(bits)),
                    );
                    let h = g.conv(&hi, bits * 2, bits, false);
                    if op == IntOp::MadHi {
                        let z = a(g, 2, bits);
                        bin(g, "add", bits, &h, &z)
                    } else {
                        h
                    }
                }
            }
        }
        IntOp::Div | IntOp::Rem => {
            let (x, y) = (a(g, 0, bits), a(g, 1, bits));
            let zero = icmp(g, "eq", bits, &y, "zeroinitializer");
            let minv = if signed { 1u64 << (bits - 1) } else { 0 };
            let ovf = if signed {
                let xm = icmp(g, "eq", bits, &x, &sc::<W>(bits, minv));
                let ym = icmp(g, "eq", bits, &y, &sc::<W>(bits, u64::MAX));
                bin(g, "and", 1, &xm, &ym)
            } else {
                "zeroinitializer".into()
            };
            // Special divisors divide by 1 (x86 traps where PTX gives a
            // value), and so do inactive lanes, unless the result is kept
            // as one scalar: that is lane 0's, computed even where lane 0
            // is off (`if (tid != 0) q = n / d;` stored n), from operands
            // that are then the same formula in every lane.
            let bad = bin(g, "or", 1, &zero, &ovf);
            let bad = if g.compact(dst.0 as usize) {
                bad
            } else {
                let nexec = not1(g, exec);
                bin(g, "or", 1, &bad, &nexec)
            };
            let ysafe = sel(g, &bad, bits, &sc::<W>(bits, 1), &y);
            let q = bin(
                g,
                if op == IntOp::Div {
                    if signed {
                        "sdiv"
                    } else {
                        "udiv"
                    }
                } else if signed {
                    "srem"
                } else {
                    "urem"
                },
                bits,
                &x,
                &ysafe,
            );
            let (on_zero, on_ovf) = if op == IntOp::Div {
                (sc::<W>(bits, u64::MAX), sc::<W>(bits, minv))
            } else {
                (x.clone(), "zeroinitializer".to_string())
            };
            let q1 = sel(g, &ovf, bits, &on_ovf, &q);
            sel(g, &zero, bits, &on_zero, &q1)
        }
        IntOp::Min | IntOp::Max => {
            let (x, y) = (a(g, 0, bits), a(g, 1, bits));
            let p = match (op, signed) {
                (IntOp::Min, true) => "slt",
                (IntOp::Min, false) => "ult",
                (_, true) => "sgt",
                (_, false) => "ugt",
            };
            let c = icmp(g, p, bits, &x, &y);
            sel(g, &c, bits, &x, &y)
        }
        IntOp::Abs => {
            let x = a(g, 0, bits);
            let n = bin(g, "sub", bits, "zeroinitializer", &x);
            let c = icmp(g, "slt", bits, &x, "zeroinitializer");
            sel(g, &c, bits, &n, &x)
        }
        IntOp::Neg => {
            let x = a(g, 0, bits);
            bin(g, "sub", bits, "zeroinitializer", &x)
        }
        IntOp::And | IntOp::Or | IntOp::Xor => {
            let (x, y) = (a(g, 0, bits), a(g, 1, bits));
            bin(
                g,
                match op {
                    IntOp::And => "and",
                    IntOp::Or => "or",
                    _ => "xor",
                },
                bits,
                &x,
                &y,
            )
        }
        IntOp::Not => {
            let x = a(g, 0, bits);
            bin(g, "xor", bits, &x, &sc::<W>(bits, u64::MAX))
        }
        IntOp::CNot => {
            let x = a(g, 0, bits);
            let c = icmp(g, "eq", bits, &x, "zeroinitializer");
            g.conv(&c, 1, bits, false)
        }
        IntOp::Shl | IntOp::Shr => {
            let x = a(g, 0, bits);
            let s32 = a(g, 1, 32);
            let s = g.conv(&s32, 32, bits, false);
            let big = icmp(g, "uge", 32, &s32, &sc::<W>(32, u64::from(bits)));
            let s = if bits < 32 {
                sel(g, &big, bits, &sc::<W>(bits, 0), &s)
            } else {
                s
            };
            match (op, signed) {
                (IntOp::Shl, _) => {
                    let v = bin(g, "shl", bits, &x, &s);
                    sel(g, &big, bits, "zeroinitializer", &v)
                }
                (_, false) => {
                    let v = bin(g, "lshr", bits, &x, &s);
                    sel(g, &big, bits, "zeroinitializer", &v)
                }
                (_, true) => {
                    let sc = sel(g, &big, bits, &sc::<W>(bits, u64::from(bits - 1)), &s);
                    bin(g, "ashr", bits, &x, &sc)
                }
            }
        }
        IntOp::Popc | IntOp::Clz => {
            let x = a(g, 0, bits);
            let r = g.t();
            if op == IntOp::Popc {
                g.line(&format!(
                    "{r} = call {} @llvm.ctpop.v{W}i{bits}({} {x})",
                    vt::<W>(bits),
                    vt::<W>(bits)
                ));
            } else {
                g.line(&format!(
                    "{r} = call {} @llvm.ctlz.v{W}i{bits}({} {x}, i1 false)",
                    vt::<W>(bits),
                    vt::<W>(bits)
                ));
            }
            let r32 = g.conv(&r, bits, 32, false);
            g.set(dst, &r32, 32, false, exec);
            return;
        }
        IntOp::Brev => {
            let x = a(g, 0, bits);
            let r = g.t();
            g.line(&format!(
                "{r} = call {} @llvm.bitreverse.v{W}i{bits}({} {x})",
                vt::<W>(bits),
                vt::<W>(bits)
            ));
            r
        }
        IntOp::Lop3(lut) if bits == 32 => {
            let (x, y, z) = (a(g, 0, 32), a(g, 1, 32), a(g, 2, 32));
            let nx = bin(g, "xor", 32, &x, &sc::<W>(32, u64::from(u32::MAX)));
            let ny = bin(g, "xor", 32, &y, &sc::<W>(32, u64::from(u32::MAX)));
            let nz = bin(g, "xor", 32, &z, &sc::<W>(32, u64::from(u32::MAX)));
            let mut acc = "zeroinitializer".to_string();
            for i in 0..8u8 {
                if lut & (1 << i) == 0 {
                    continue;
                }
                let p = if i & 4 != 0 { &x } else { &nx };
                let q = if i & 2 != 0 { &y } else { &ny };
                let r = if i & 1 != 0 { &z } else { &nz };
                let t1 = bin(g, "and", 32, p, q);
                let t2 = bin(g, "and", 32, &t1, r);
                acc = bin(g, "or", 32, &acc, &t2);
            }
            acc
        }
        IntOp::Shf { left, clamp } => {
            let (lo, hi, n) = (a(g, 0, 32), a(g, 1, 32), a(g, 2, 32));
            let n = if clamp {
                let big = icmp(g, "ugt", 32, &n, &sc::<W>(32, 32));
                sel(g, &big, 32, &sc::<W>(32, 32), &n)
            } else {
                bin(g, "and", 32, &n, &sc::<W>(32, 31))
            };
            let r = g.t();
            let f = if left { "fshl" } else { "fshr" };
            g.line(&format!("{r} = call <{W} x i32> @llvm.{f}.v{W}i32(<{W} x i32> {hi}, <{W} x i32> {lo}, <{W} x i32> {n})"));
            if clamp {
                let is32 = icmp(g, "eq", 32, &n, &sc::<W>(32, 32));
                sel(g, &is32, 32, if left { &lo } else { &hi }, &r)
            } else {
                r
            }
        }
        _ => {
            g.helper_int(kind, op, ty, dst, args, exec);
            return;
        }
    };
    g.set(dst, &r, bits, false, exec);
}

#[allow(clippy::too_many_arguments)]
fn emit_cvt<const W: u32>(
    g: &mut Gen<W>,
    kind: &InstKind,
    dst_ty: Ty,
    src_ty: Ty,
    dst: Reg,
    src: Value,
    round: Option<CvtRound>,
    ftz: bool,
    sat: bool,
    exec: &str,
) {
    let (db, sb) = (dst_ty.bits(), src_ty.bits());
    // Integer to integer.
    if !dst_ty.is_float() && !src_ty.is_float() && !sat {
        let x = g.val(src, sb);
        let y = g.conv(&x, sb, db, src_ty.is_signed());
        g.set(dst, &y, db, dst_ty.is_signed(), exec);
        return;
    }
    // Float to int, round to integral then saturate (NaN -> 0 or, from
    // f64 or to 64 bits, the sign bit alone, as the PTX ISA says).
    if matches!(src_ty, Ty::F32 | Ty::F64) && !dst_ty.is_float() && matches!(db, 32 | 64) {
        let f = g.fval(src, src_ty);
        let f = if ftz { g.ftz(&f, src_ty) } else { f };
        let sfx = &if src_ty == Ty::F64 {
            format!("v{W}f64")
        } else {
            format!("v{W}f32")
        };
        let ft = format!("<{W} x {}>", fty_of(src_ty));
        let rf = match round {
            Some(CvtRound::Int(Round::Nearest)) => "roundeven",
            Some(CvtRound::Int(Round::Down)) => "floor",
            Some(CvtRound::Int(Round::Up)) => "ceil",
            _ => "trunc",
        };
        let rr = g.t();
        g.line(&format!("{rr} = call {ft} @llvm.{rf}.{sfx}({ft} {f})"));
        let conv = if dst_ty.is_signed() {
            "fptosi"
        } else {
            "fptoui"
        };
        let r = g.t();
        g.line(&format!(
            "{r} = call {} @llvm.{conv}.sat.v{W}i{db}.{sfx}({ft} {rr})",
            vt::<W>(db)
        ));
        let nan_val = if src_ty == Ty::F64 || db == 64 {
            1u64 << (db - 1)
        } else {
            0
        };
        let r = if nan_val != 0 {
            let isn = g.t();
            g.line(&format!("{isn} = fcmp uno {ft} {f}, {f}"));
            sel(g, &isn, db, &sc::<W>(db, nan_val), &r)
        } else {
            r
        };
        g.set(dst, &r, db, dst_ty.is_signed(), exec);
        return;
    }
    // Int to float, round to nearest.
    if !src_ty.is_float()
        && matches!(dst_ty, Ty::F32 | Ty::F64)
        && matches!(round, None | Some(CvtRound::Float(Round::Nearest)))
        && !sat
    {
        let x = g.val(src, sb);
        let op = if src_ty.is_signed() {
            "sitofp"
        } else {
            "uitofp"
        };
        let f = g.t();
        g.line(&format!(
            "{f} = {op} {} {x} to <{W} x {}>",
            vt::<W>(sb),
            fty_of(dst_ty)
        ));
        g.fset(dst, &f, dst_ty, exec);
        return;
    }
    // f32 <-> f64, nearest.
    if matches!((dst_ty, src_ty), (Ty::F64, Ty::F32) | (Ty::F32, Ty::F64))
        && matches!(round, None | Some(CvtRound::Float(Round::Nearest)))
        && !sat
    {
        let f = g.fval(src, src_ty);
        let f = if ftz && src_ty == Ty::F32 {
            g.ftz(&f, Ty::F32)
        } else {
            f
        };
        let r = g.t();
        let op = if dst_ty == Ty::F64 {
            "fpext"
        } else {
            "fptrunc"
        };
        g.line(&format!(
            "{r} = {op} <{W} x {}> {f} to <{W} x {}>",
            fty_of(src_ty),
            fty_of(dst_ty)
        ));
        let r = g.canon(&r, dst_ty);
        let r = if ftz && dst_ty == Ty::F32 {
            g.ftz(&r, Ty::F32)
        } else {
            r
        };
        g.fset(dst, &r, dst_ty, exec);
        return;
    }
    let x = g.to64(src, sb);
    let r = g.call_lanes(Helper::Cvt, kind.clone(), &[x], None);
    let r = g.conv(&r, 64, db, false);
    // A signed result sign-extends into a wider register, as PTX does
    // (`cvt.sat.s8.s32` of -200 is 0xffffff80 in a 32-bit register).
    g.set(dst, &r, db, dst_ty.is_signed(), exec);
}

fn fty_of(t: Ty) -> &'static str {
    if t == Ty::F64 {
        "double"
    } else {
        "float"
    }
}

/// The LLVM form of an atomic the interpreter's `atom_apply` defines the same
/// way; `None` sends it to the per-lane helper.
#[derive(Clone, Copy)]
enum Rmw {
    Op(&'static str),
    FAdd,
    Cas,
}

fn atomic_rmw(op: AtomOp, ty: Ty) -> Option<Rmw> {
    let bits = ty.bits();
    if bits != 32 && bits != 64 {
        return None;
    }
    let float = matches!(ty, Ty::F32 | Ty::F64);
    Some(match op {
        AtomOp::Add if float => Rmw::FAdd,
        _ if float && !matches!(op, AtomOp::Exch | AtomOp::Cas) => return None,
        AtomOp::Add => Rmw::Op("add"),
        AtomOp::And => Rmw::Op("and"),
        AtomOp::Or => Rmw::Op("or"),
        AtomOp::Xor => Rmw::Op("xor"),
        AtomOp::Exch => Rmw::Op("xchg"),
        AtomOp::Min if ty.is_signed() => Rmw::Op("min"),
        AtomOp::Max if ty.is_signed() => Rmw::Op("max"),
        AtomOp::Min => Rmw::Op("umin"),
        AtomOp::Max => Rmw::Op("umax"),
        AtomOp::Cas => Rmw::Cas,
        AtomOp::Inc | AtomOp::Dec => return None,
    })
}

/// A shared-memory atomic for the lanes of `exec`, in lane order, on the
/// lanes' `[address, a, b]` (`<32 x i64>` each): with every lane on,
/// straight-line code per lane (a histogram's bins cost a few
/// instructions each); otherwise the compact lane loop.
///
/// The straight-line form reads each lane's operands back from a stack
/// copy of the vectors (volatile loads, so LLVM keeps them loads): moving
/// 64-bit lanes out of vector registers one by one and addressing memory
/// through them runs several times slower on Zen 4 (3.8 against 0.5 ns
/// per bin in a C model of the histogram's loop).
/// `form`, when known, gives the lanes' addresses as a base and 32-bit
/// indices: every lane running, those are what each lane reads back (a
/// histogram's bins: no 64-bit address vector to build and spill), or
/// with `replay` and no jump in the load's addresses, each lane reads its
/// index from memory again.
fn private_atomic<const W: u32>(
    g: &mut Gen<W>,
    rmw: Rmw,
    bits: u32,
    args: [String; 3],
    form: Option<&Indexed>,
    replay: Option<&crate::indexed::Replay>,
    exec: &str,
) -> String {
    let eb = g.bits_of_mask(exec);
    let mut full = g.def(&format!("icmp eq i32 {eb}, {}", full_bits::<W>()));
    if let Some(k) = replay.and_then(|r| r.jump.as_ref()) {
        // A warp across the load's jump (an index passing 2^31 inside it:
        // next to never) takes the lane loop.
        let none = g.def(&format!("icmp eq i32 {k}, {W}"));
        full = g.def(&format!("and i1 {full}, {none}"));
    }
    if replay.is_some() {
        // For tests and readers of the generated code.
        g.line("; replayed indices");
    }
    let (lu, ll, lj) = (
        g.label("atom_all"),
        g.label("atom_some"),
        g.label("atom_join"),
    );
    g.line(&format!("br i1 {full}, label %{lu}, label %{ll}"));
    g.emit_label(&lu);
    let constant = |a: &str| a.starts_with('<') || a == "zeroinitializer" || a == "undef";
    // What each lane reads of each argument: its element of a stack copy
    // (`(buffer, element bits)`, read back volatile so LLVM does not turn
    // it into extracts again), or of a constant. With `form`, the address
    // is the lane's 32-bit index, made an address per lane.
    let mut bufs: Vec<Option<(String, u32)>> = Vec::new();
    for (k, a) in args.iter().enumerate() {
        let (v, ebits) = match form {
            Some(_) if k == 0 && replay.is_some() => {
                bufs.push(None);
                continue;
            }
            Some(f) if k == 0 => (f.indices().to_string(), 32),
            _ if constant(a) => {
                bufs.push(None);
                continue;
            }
            _ => (a.clone(), 64),
        };
        let b = g.label(&format!("atombuf{k}_"));
        let _ = writeln!(g.allocas, "  %{b} = alloca [{W} x i{ebits}], align 64");
        let vp = g.def(&format!(
            "bitcast [{W} x i{ebits}]* %{b} to <{W} x i{ebits}>*"
        ));
        g.line(&format!(
            "store <{W} x i{ebits}> {v}, <{W} x i{ebits}>* {vp}, align 64"
        ));
        bufs.push(Some((b, ebits)));
    }
    let res = g.label("atomres");
    let _ = writeln!(g.allocas, "  %{res} = alloca [{W} x i64], align 64");
    for i in 0..W {
        let mut xs = Vec::new();
        for (k, (a, b)) in args.iter().zip(&bufs).enumerate() {
            if let (0, Some(f), Some(r)) = (k, form, replay) {
                // Volatile: LLVM would take it from the load's vector.
                let at = g.def(&format!(
                    "add i64 {}, {}",
                    r.h0,
                    r.stride.wrapping_mul(i64::from(i))
                ));
                let p = g.def(&format!("inttoptr i64 {at} to i{}*", r.bits));
                let v = g.def(&format!("load volatile i{}, i{}* {p}", r.bits, r.bits));
                let x = if r.bits < 32 {
                    g.def(&format!("zext i{} {v} to i32", r.bits))
                } else {
                    v
                };
                xs.push(f.address_of(g, &x));
                continue;
            }
            let Some((b, ebits)) = b else {
                xs.push(g.def(&format!("extractelement <{W} x i64> {a}, i32 {i}")));
                continue;
            };
            let p = g.def(&format!(
                "getelementptr [{W} x i{ebits}], [{W} x i{ebits}]* %{b}, i32 0, i32 {i}"
            ));
            let x = g.def(&format!("load volatile i{ebits}, i{ebits}* {p}"));
            xs.push(match form {
                Some(f) if k == 0 => f.address_of(g, &x),
                _ => x,
            });
        }
        let r = inline_atomic(g, rmw, bits, &xs, true);
        let p = g.def(&format!(
            "getelementptr [{W} x i64], [{W} x i64]* %{res}, i32 0, i32 {i}"
        ));
        g.line(&format!("store i64 {r}, i64* {p}"));
    }
    let vp = g.def(&format!("bitcast [{W} x i64]* %{res} to <{W} x i64>*"));
    let acc = g.def(&format!("load <{W} x i64>, <{W} x i64>* {vp}, align 64"));
    let lue = g.label("atom_all_end");
    g.line(&format!("br label %{lue}"));
    g.emit_label(&lue);
    g.line(&format!("br label %{lj}"));
    g.emit_label(&ll);
    let r = g.lane_loop(&args, 3, Some(exec), |g, xs| {
        inline_atomic(g, rmw, bits, xs, true)
    });
    let lle = g.label("atom_some_end");
    g.line(&format!("br label %{lle}"));
    g.emit_label(&lle);
    g.line(&format!("br label %{lj}"));
    g.emit_label(&lj);
    g.def(&format!(
        "phi <{W} x i64> [ {acc}, %{lue} ], [ {r}, %{lle} ]"
    ))
}

/// `old + a` as the GPU's `atom.add` computes it, on the bit patterns
/// (`i{bits}`): f32 flushes subnormal inputs and results to signed zero
/// and gives the canonical NaN; f64 keeps subnormals and returns a NaN
/// operand (the old value's first) made quiet, else the canonical NaN (as
/// `warpfold_fp::add_f64`). The CPU's own NaN would differ from the
/// interpreter's.
fn gpu_fadd<const W: u32>(g: &mut Gen<W>, bits: u32, old: &str, a: &str) -> String {
    let it = format!("i{bits}");
    if bits == 32 {
        let flush = |g: &mut Gen<W>, x: &str| {
            let e = g.def(&format!("and i32 {x}, 2139095040"));
            let sub = g.def(&format!("icmp eq i32 {e}, 0"));
            let z = g.def(&format!("and i32 {x}, -2147483648"));
            g.def(&format!("select i1 {sub}, i32 {z}, i32 {x}"))
        };
        let o = flush(g, old);
        let x = flush(g, a);
        let fo = g.def(&format!("bitcast i32 {o} to float"));
        let fx = g.def(&format!("bitcast i32 {x} to float"));
        let fs = g.def(&format!("fadd float {fo}, {fx}"));
        let sb = g.def(&format!("bitcast float {fs} to i32"));
        let r = flush(g, &sb);
        let m = g.def(&format!("and i32 {r}, 2147483647"));
        let nan = g.def(&format!("icmp ugt i32 {m}, 2139095040"));
        return g.def(&format!("select i1 {nan}, i32 2147483647, i32 {r}"));
    }
    let is_nan = |g: &mut Gen<W>, x: &str| {
        let m = g.def(&format!("and i64 {x}, 9223372036854775807"));
        g.def(&format!("icmp ugt i64 {m}, 9218868437227405312"))
    };
    let fo = g.def(&format!("bitcast {it} {old} to double"));
    let fx = g.def(&format!("bitcast {it} {a} to double"));
    let fs = g.def(&format!("fadd double {fo}, {fx}"));
    let sb = g.def(&format!("bitcast double {fs} to i64"));
    let sn = is_nan(g, &sb);
    let r = g.def(&format!(
        "select i1 {sn}, i64 9223372036854775807, i64 {sb}"
    ));
    let an = is_nan(g, a);
    let aq = g.def(&format!("or i64 {a}, 2251799813685248"));
    let r = g.def(&format!("select i1 {an}, i64 {aq}, i64 {r}"));
    let on = is_nan(g, old);
    let oq = g.def(&format!("or i64 {old}, 2251799813685248"));
    g.def(&format!("select i1 {on}, i64 {oq}, i64 {r}"))
}

fn inline_atomic<const W: u32>(
    g: &mut Gen<W>,
    rmw: Rmw,
    bits: u32,
    xs: &[String],
    private: bool,
) -> String {
    let it = format!("i{bits}");
    let p = g.def(&format!("inttoptr i64 {} to {it}*", xs[0]));
    let a = narrow_i64(g, &xs[1], bits);
    let b = match rmw {
        Rmw::Cas => narrow_i64(g, &xs[2], bits),
        _ => String::new(),
    };
    let old = if private {
        let old = g.def(&format!("load {it}, {it}* {p}"));
        let new = match rmw {
            Rmw::Op("xchg") => a,
            Rmw::Op(op @ ("add" | "and" | "or" | "xor")) => g.def(&format!("{op} {it} {old}, {a}")),
            Rmw::Op(op) => {
                let cond = match op {
                    "min" => "slt",
                    "max" => "sgt",
                    "umin" => "ult",
                    _ => "ugt",
                };
                let c = g.def(&format!("icmp {cond} {it} {old}, {a}"));
                g.def(&format!("select i1 {c}, {it} {old}, {it} {a}"))
            }
            Rmw::FAdd => gpu_fadd(g, bits, &old, &a),
            Rmw::Cas => {
                let c = g.def(&format!("icmp eq {it} {old}, {a}"));
                g.def(&format!("select i1 {c}, {it} {b}, {it} {old}"))
            }
        };
        g.line(&format!("store {it} {new}, {it}* {p}"));
        old
    } else {
        match rmw {
            Rmw::Op(name) => g.def(&format!("atomicrmw {name} {it}* {p}, {it} {a} monotonic")),
            Rmw::FAdd => {
                // A compare-and-swap loop (what LLVM makes of `atomicrmw
                // fadd` here anyway) around the GPU's add.
                let start = g.def(&format!(
                    "load atomic {it}, {it}* {p} monotonic, align {}",
                    bits / 8
                ));
                let (from, lp, done) = (
                    g.label("fadd_from"),
                    g.label("fadd_cas"),
                    g.label("fadd_done"),
                );
                g.line(&format!("br label %{from}"));
                g.emit_label(&from);
                g.line(&format!("br label %{lp}"));
                g.emit_label(&lp);
                let cur = g.t();
                let seen = g.t();
                g.line(&format!(
                    "{cur} = phi {it} [ {start}, %{from} ], [ {seen}, %{lp} ]"
                ));
                let new = gpu_fadd(g, bits, &cur, &a);
                let pair = g.def(&format!(
                    "cmpxchg {it}* {p}, {it} {cur}, {it} {new} monotonic monotonic"
                ));
                g.line(&format!("{seen} = extractvalue {{ {it}, i1 }} {pair}, 0"));
                let ok = g.def(&format!("extractvalue {{ {it}, i1 }} {pair}, 1"));
                g.line(&format!("br i1 {ok}, label %{done}, label %{lp}"));
                g.emit_label(&done);
                cur
            }
            Rmw::Cas => {
                let pair = g.def(&format!(
                    "cmpxchg {it}* {p}, {it} {a}, {it} {b} monotonic monotonic"
                ));
                g.def(&format!("extractvalue {{ {it}, i1 }} {pair}, 0"))
            }
        }
    };
    if bits == 64 {
        old
    } else {
        g.def(&format!("zext {it} {old} to i64"))
    }
}

/// A global integer add whose buffer the launch may sum per worker (see
/// `deferred_red`): each lane's add goes to the worker's copy when its
/// address is an aligned word of the buffer the launch set
/// (`env::RED_BASE`, `env::RED_LEN`; a length of 0 when it did not), else
/// to memory as a locked add.
fn deferred_add<const W: u32>(g: &mut Gen<W>, h: String, x: String, bits: u32, exec: &str) {
    let base = g.env(env::RED_BASE);
    let len = g.env(env::RED_LEN);
    let copy = g.env(env::RED_COPY);
    g.lane_loop(&[h, x], 2, Some(exec), |g, xs| {
        let it = format!("i{bits}");
        let off = g.def(&format!("sub i64 {}, {base}", xs[0]));
        let inside = g.def(&format!("icmp ult i64 {off}, {len}"));
        let odd = g.def(&format!("and i64 {off}, {}", bits / 8 - 1));
        let aligned = g.def(&format!("icmp eq i64 {odd}, 0"));
        let ok = g.def(&format!("and i1 {inside}, {aligned}"));
        let (lc, lm, lj) = (g.label("red_copy"), g.label("red_mem"), g.label("red_join"));
        g.line(&format!("br i1 {ok}, label %{lc}, label %{lm}{LIKELY}"));
        g.emit_label(&lc);
        let at = g.def(&format!("add i64 {copy}, {off}"));
        let p = g.def(&format!("inttoptr i64 {at} to {it}*"));
        let a = narrow_i64(g, &xs[1], bits);
        let old = g.def(&format!("load {it}, {it}* {p}"));
        let new = g.def(&format!("add {it} {old}, {a}"));
        g.line(&format!("store {it} {new}, {it}* {p}"));
        g.line(&format!("br label %{lj}"));
        g.emit_label(&lm);
        inline_atomic(
            g,
            Rmw::Op("add"),
            bits,
            &[xs[0].clone(), xs[1].clone(), "0".into()],
            false,
        );
        g.line(&format!("br label %{lj}"));
        g.emit_label(&lj);
        "0".into()
    });
}

fn narrow_i64<const W: u32>(g: &mut Gen<W>, x: &str, bits: u32) -> String {
    if bits == 64 {
        return x.to_string();
    }
    g.def(&format!("trunc i64 {x} to i{bits}"))
}

/// Lane `j[l]` of `v` for each lane `l`: two-table permutes over the
/// vector's halves (AVX-512 `vpermi2d`), a few cycles.
/// Source lane and whether it is in range, per lane, of a shuffle with
/// constant `b` and `c` (the PTX ISA's formula; out-of-range lanes read
/// their own value).
pub(crate) fn shfl_lanes(mode: ShflMode, b: u32, c: u32) -> ([u32; 32], [bool; 32]) {
    let (b, cval, seg) = (b & 31, c & 31, (c >> 8) & 31);
    let mut j = [0u32; 32];
    let mut ok = [false; 32];
    for lane in 0..32u32 {
        let maxl = (lane & seg) | (cval & !seg);
        let (src, good) = match mode {
            ShflMode::Up => {
                let s = lane as i32 - b as i32;
                (s, s >= maxl as i32)
            }
            ShflMode::Down => {
                let s = (lane + b) as i32;
                (s, s <= maxl as i32)
            }
            ShflMode::Bfly => {
                let s = (lane ^ b) as i32;
                (s, s <= maxl as i32)
            }
            ShflMode::Idx => {
                let s = ((lane & seg) | (b & !seg)) as i32;
                (s, s <= maxl as i32)
            }
        };
        j[lane as usize] = if good { src as u32 } else { lane };
        ok[lane as usize] = good;
    }
    (j, ok)
}

fn permute_lanes<const W: u32>(g: &mut Gen<W>, v: &str, j: &str) -> String {
    let (lo, hi) = (lanes_mask::<W>(0..16), lanes_mask::<W>(16..32));
    let half = |g: &mut Gen<W>, x: &str, idx: &str| {
        g.def(&format!(
            "shufflevector <{W} x i32> {x}, <{W} x i32> undef, <16 x i32> {idx}"
        ))
    };
    let (vl, vh) = (half(g, v, &lo), half(g, v, &hi));
    let t = "<16 x i32>";
    let permute = |g: &mut Gen<W>, idx: &str| {
        g.def(&format!(
            "call {t} @llvm.x86.avx512.vpermi2var.d.512({t} {vl}, {t} {idx}, {t} {vh})"
        ))
    };
    let (jl, jh) = (half(g, j, &lo), half(g, j, &hi));
    let (rl, rh) = (permute(g, &jl), permute(g, &jh));
    g.def(&format!(
        "shufflevector {t} {rl}, {t} {rh}, <{W} x i32> {}",
        lanes_mask::<W>(0..32)
    ))
}

/// Lane `j[l]` of `v` for each lane `l` with AVX2's eight-lane permute:
/// each quarter of the result permutes all four quarters of `v` by the low
/// three bits of its indices and picks by the high two (LLVM would
/// otherwise gather, which it does one lane at a time on many CPUs).
fn permute_lanes_avx2<const W: u32>(g: &mut Gen<W>, v: &str, j: &str) -> String {
    let t = "<8 x i32>";
    let quarter = |g: &mut Gen<W>, x: &str, q: u32| {
        g.def(&format!(
            "shufflevector <{W} x i32> {x}, <{W} x i32> undef, {t} {}",
            lanes_mask::<W>(8 * q..8 * q + 8)
        ))
    };
    let src: Vec<String> = (0..4).map(|q| quarter(g, v, q)).collect();
    let mut out = Vec::new();
    for q in 0..4 {
        let jq = quarter(g, j, q);
        let low = g.def(&format!(
            "and {t} {jq}, <i32 7, i32 7, i32 7, i32 7, i32 7, i32 7, i32 7, i32 7>"
        ));
        let high = g.def(&format!(
            "lshr {t} {jq}, <i32 3, i32 3, i32 3, i32 3, i32 3, i32 3, i32 3, i32 3>"
        ));
        let mut acc = g.def(&format!(
            "call {t} @llvm.x86.avx2.permd({t} {}, {t} {low})",
            src[3]
        ));
        for k in (0..3).rev() {
            let r = g.def(&format!(
                "call {t} @llvm.x86.avx2.permd({t} {}, {t} {low})",
                src[k]
            ));
            let is_k = g.def(&format!(
                "icmp eq {t} {high}, <i32 {k}, i32 {k}, i32 {k}, i32 {k}, i32 {k}, i32 {k}, i32 {k}, i32 {k}>"
            ));
            acc = g.def(&format!("select <8 x i1> {is_k}, {t} {r}, {t} {acc}"));
        }
        out.push(acc);
    }
    let lo = g.def(&format!(
        "shufflevector {t} {}, {t} {}, <16 x i32> {}",
        out[0],
        out[1],
        lanes_mask::<W>(0..16)
    ));
    let hi = g.def(&format!(
        "shufflevector {t} {}, {t} {}, <16 x i32> {}",
        out[2],
        out[3],
        lanes_mask::<W>(0..16)
    ));
    g.def(&format!(
        "shufflevector <16 x i32> {lo}, <16 x i32> {hi}, <{W} x i32> {}",
        lanes_mask::<W>(0..32)
    ))
}

/// Lane `j[l]` of `v` for each lane `l`, through a stack buffer (CPUs
/// without AVX-512).
fn gather_lanes<const W: u32>(g: &mut Gen<W>, v: &str, j: &str) -> String {
    let bp = g.t();
    g.line(&format!(
        "{bp} = bitcast [{W} x i32]* %shfl_buf to <{W} x i32>*"
    ));
    g.line(&format!(
        "store <{W} x i32> {v}, <{W} x i32>* {bp}, align 64"
    ));
    let base = g.t();
    g.line(&format!(
        "{base} = getelementptr [{W} x i32], [{W} x i32]* %shfl_buf, i32 0, i32 0"
    ));
    let ptrs = g.t();
    g.line(&format!(
        "{ptrs} = getelementptr i32, i32* {base}, <{W} x i32> {j}"
    ));
    let got = g.t();
    g.line(&format!("{got} = call <{W} x i32> @llvm.masked.gather.v{W}i32.v{W}p0i32(<{W} x i32*> {ptrs}, i32 4, <{W} x i1> {}, <{W} x i32> undef)", sc::<W>(1, 1)));
    got
}
