//! LLVM IR (text) for a prepared kernel: one function that runs one warp
//! of W lanes (32, or 8/16: see `width`) as SIMD vectors, from its saved state until every lane has
//! exited or waits at a barrier.
//!
//! Control flow follows the interpreter's rule so both backends schedule
//! divergent lanes alike: each lane has a next-block id; a dispatcher picks
//! the smallest id among lanes that are not waiting and runs that block for
//! the lanes at it (the group mask). When every live lane is in the group
//! and a branch is uniform, blocks jump straight to each other, so
//! convergent code never visits the dispatcher.

use crate::lanes::{JumpFrom, Lanes, Shape};
use crate::prepare::Prepared;
use crate::region::Region;
use std::fmt::Write;
use warpfold_ir::shared::SharedLayout;
use warpfold_ir::*;

/// Branch weights for a conditional branch whose first target is taken
/// almost always (no lane past an index jump): LLVM then lays the rare
/// side out of line and spills around its calls there, not on the hot path.
pub(crate) const LIKELY: &str = ", !prof !{!\"branch_weights\", i32 2000, i32 1}";
/// The same for a branch whose first target is the rare one (the watchdog
/// cancelling, a yield).
pub(crate) const UNLIKELY: &str = ", !prof !{!\"branch_weights\", i32 1, i32 2000}";
/// When lane 0's value `a` of a `bits`-wide index (`signed` or not,
/// extended to a signed `i{wide}`, wide > bits) that steps by `stride` per
/// lane leaves no lane past a jump (`Emitter::lane_of_jump`).
#[derive(Debug, PartialEq)]
enum NoJump {
    /// Whatever `a` is (the constant lies past `a`'s `i{wide}` range).
    Always(bool),
    /// When a <= the constant.
    AtMost(i128),
    /// When a >= the constant.
    AtLeast(i128),
}

/// See `NoJump`. With stride > 0, floor((bound - 1 - a) / stride) >= W - 1
/// (the lanes before the jump) iff a <= bound - 1 - (W - 1) * stride, as
/// bound - 1 - a >= 0; below, floor((a + low) / |stride|) >= W - 1 iff
/// a >= (W - 1) * |stride| - low.
fn no_jump_test<const W: u32>(wide: u32, bits: u32, signed: bool, stride: i64) -> NoJump {
    let span = i128::from(W - 1) * i128::from(stride.unsigned_abs());
    let (min, max) = match wide {
        128 => (i128::MIN, i128::MAX),
        _ => (-(1i128 << (wide - 1)), (1i128 << (wide - 1)) - 1),
    };
    if stride > 0 {
        let bound: i128 = if signed { 1 << (bits - 1) } else { 1 << bits };
        match bound - 1 - span {
            c if c > max => NoJump::Always(true),
            c if c < min => NoJump::Always(false),
            c => NoJump::AtMost(c),
        }
    } else {
        let low: i128 = if signed { 1 << (bits - 1) } else { 0 };
        match span - low {
            c if c > max => NoJump::Always(false),
            c if c < min => NoJump::Always(true),
            c => NoJump::AtLeast(c),
        }
    }
}

/// `next` value of lanes that have exited or do not exist.
pub const DONE: u32 = u32::MAX;

/// Byte offsets in a warp's saved state.
pub mod state {
    pub const NEXT: usize = 0;
    pub const LIVE: usize = 128;
    pub const WAIT_COLL: usize = 132;
    pub const WAIT_BAR: usize = 136;
    /// 1 + id of the barrier block the waiting lanes are at (u32::MAX if
    /// lanes of the warp wait at different barriers).
    pub const BAR_SITE: usize = 140;
    /// Non-zero: the next pick takes the latest lanes, not the earliest
    /// (set when a warp yields from a loop, so a lane holding a lock that
    /// others spin on gets to run).
    pub const PICK_MAX: usize = 144;
    /// `bar.red` partial results of this warp's arrivals (popc, and, or)
    /// and the CTA-wide results the driver writes back on release.
    pub const RED_POPC: usize = 152;
    pub const RED_AND: usize = 156;
    pub const RED_OR: usize = 160;
    pub const RED_RESULT: usize = 164;
    /// 1 + id of the block after the barrier the warp's lanes wait at (0:
    /// none). Once the barrier is released every live lane is there, so
    /// the warp resumes there without the dispatcher.
    pub const RESUME_AT: usize = 176;
    pub const REGS: usize = 256;
}

/// Indices of the `i64` launch environment.
pub mod env {
    pub const PARAMS: usize = 0;
    pub const SHARED: usize = 1;
    pub const CONST: usize = 2;
    pub const LOCAL: usize = 3;
    pub const FRAME: usize = 4;
    pub const CTAID: usize = 5;
    pub const NCTAID: usize = 8;
    pub const NTID: usize = 11;
    pub const DYN_SMEM: usize = 14;
    pub const TOTAL_SMEM: usize = 15;
    pub const GLOBALS: usize = 16;
    pub const SMID: usize = 17;
    pub const NSMID: usize = 18;
    pub const CONST_LEN: usize = 19;
    pub const PARAMS_LEN: usize = 20;
    pub const LOCAL_LEN: usize = 21;
    /// Address of a `u32` that becomes non-zero to stop the launch.
    pub const CANCEL: usize = 22;
    /// `u32 [warp][3][W]`: each lane's %tid.x/.y/.z (the same for every CTA).
    pub const TID: usize = 23;
    /// `*const InstKind [n]`: the descriptors per-lane helpers receive
    /// (indices, not addresses, in the code: it can be cached on disk).
    pub const DESCS: usize = 24;
    /// `*const helpers::Host`: what `trap`, `vprintf` and `__assertfail`
    /// need from the worker running the CTA.
    pub const HOST: usize = 25;
    /// `u32 [33]`: per barrier id, threads arrived [0..16] and the thread
    /// count expected (0: all) [16..32]; [32] != 0 when one barrier was
    /// used with two different counts.
    pub const BARS: usize = 26;
    /// The address bits a whole-warp contiguous global store needs clear
    /// to be non-temporal: 63 when the launch streams (see
    /// `ExecOptions::streaming_stores`), all of them when it does not.
    pub const STREAM: usize = 27;
    /// The buffer whose adds this worker sums in its copy (see
    /// `deferred_red`): device address, bytes (0: add to memory), and the
    /// copy's address.
    pub const RED_BASE: usize = 28;
    pub const RED_LEN: usize = 29;
    pub const RED_COPY: usize = 30;
    pub const LEN: usize = 31;
}

/// Helper kinds called per lane for operations without an inline form.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Helper {
    Int,
    Float,
    Cvt,
    Testp,
    Atom,
    Host,
}

pub struct Emitted {
    /// The kernel's whole module.
    pub ir: String,
    /// What LLVM compiles: `ir`, or `ir` split in two modules compiled at
    /// once (see `split_modules`).
    pub modules: Vec<String>,
    pub state_bytes: usize,
    /// Instructions whose address is passed to per-lane helpers (kept alive
    /// by the compiled kernel; boxed, so those addresses never move).
    #[allow(clippy::vec_box)]
    pub descs: Vec<Box<InstKind>>,
    /// Global adds the launch may sum per worker.
    pub deferral: Option<crate::deferred_red::Deferral>,
}

/// Register writes made without a blend because the register is live
/// into their block alone (see `uniform::live_in_one_block`), over every
/// compilation in this process: for tests that a kernel takes this path.
pub(crate) static UNBLENDED: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

thread_local! {
    /// Registers kept as one scalar per block row (see `Gen::rows`) by
    /// compilations on this thread: for tests that a kernel takes this
    /// path.
    pub(crate) static ROW_REGS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Kernels compiled on this thread whose general warp function was too
    /// large for region functions but got some, their regions being small
    /// (see `regions_all_small`): for tests that a kernel takes that path.
    pub(crate) static SMALL_REGION_KERNELS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Index compares made lane bits from lane-0 values by
    /// compilations on this thread (see `lower::index_compare_mask`): for
    /// tests that a kernel takes this path.
    pub(crate) static INDEX_MASKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Accesses through an index that wraps round an array, tested for
    /// consecutive lanes from lane 0's values by compilations on this
    /// thread (see `indexed::Wrapped`): for tests that a kernel takes
    /// this path.
    pub(crate) static WRAPPED_INDICES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Constant shuffles with lanes nothing reads, left undefined (see
    /// `demanded`), by compilations on this thread: for tests.
    pub(crate) static NARROWED_SHUFFLES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

pub(crate) struct Gen<'a, const W: u32> {
    pub(crate) m: &'a Module,
    pub(crate) p: &'a Prepared,
    pub(crate) layout: &'a SharedLayout,
    pub(crate) out: String,
    n: u32,
    /// (boxed: see `Emitted::descs`)
    #[allow(clippy::vec_box)]
    descs: Vec<Box<InstKind>>,
    pub(crate) reg_bits: Vec<u32>,
    /// How registers vary across lanes; uniform and affine ones are kept
    /// as one scalar, lane 0's value (see `lanes`).
    pub(crate) lanes: Vec<Option<Lanes>>,
    /// Lane forms for warps of `row_width` lanes, a block row narrower
    /// than the warp (16 of a 16 x 16 block), where the kernel does not
    /// observe its warp: a register with none of its own above may have
    /// one here, and then each row's lanes are related though the rows
    /// are not (`a[row * k + tx]` with `k` a parameter). Empty otherwise.
    pub(crate) row_lanes: Vec<Option<Lanes>>,
    pub(crate) row_width: u32,
    /// Registers kept as one scalar per block row, its first lane's value
    /// (`<W / row_width x i{bits}>`): those with no form of their own but
    /// an exact one in every row (see `lanes::row_forms`), such as
    /// `row * k + tx` with `k` a parameter. Empty when rows do not apply.
    pub(crate) rows: Vec<Option<Lanes>>,
    /// Where each jump-form register's jump lane comes from.
    jumps: Vec<Option<JumpFrom>>,
    /// Per block: every live lane runs it together (see `lanes`).
    convergent: Vec<bool>,
    /// The block being emitted is convergent: lanes outside the group
    /// have exited, so results need no blend with their old values.
    pub(crate) cur_convergent: bool,
    /// The block shape the code is specialised for.
    pub(crate) shape: Shape,
    /// Registers computed again on resume instead of saved (see `uniform`).
    pub(crate) remat: Vec<bool>,
    /// Registers live into some block (others are written without blends).
    pub(crate) live: Vec<bool>,
    /// Registers live into one block alone, written there without blends
    /// (see `uniform::live_in_one_block`).
    live_in_one: Vec<Option<BlockId>>,
    /// Per block (by index): no lane can wait inside it (see
    /// `uniform::plain_blocks`).
    pub(crate) plain: Vec<bool>,
    /// The block whose instructions are being emitted (none in code that
    /// runs elsewhere: resumes, recomputed values).
    cur_block: Option<BlockId>,
    /// Whether the instruction being emitted is guarded.
    pub(crate) guarded: bool,
    /// Registers declared `.f32`/`.f64`: they may hold non-canonical NaNs.
    pub(crate) float_reg: Vec<Option<Ty>>,
    /// Own-slot shared arrays: stores that keep the CPU's NaNs and the
    /// loads that make them canonical instead.
    pub(crate) own_slots: crate::own_slots::OwnSlots,
    /// Global adds summed per worker (see `deferred_red`).
    pub(crate) deferral: Option<crate::deferred_red::Deferral>,
    /// Set while a store in `own_slots.raw_stores` is lowered: `val` then
    /// leaves lazily canonical NaNs as they are.
    pub(crate) keep_nans: bool,
    /// Current block id (for collective waits).
    pub(crate) cur_id: u32,
    /// Backward-jump targets that first check for cancellation: the
    /// label, the block, whether a yield there resumes with the earliest
    /// lanes, the label to go on to, and the block jumping (whose jumps to
    /// one place share a check).
    pub(crate) checks: Vec<(String, u32, bool, String, u32)>,
    /// Per block: emitted a second time for all live lanes (see
    /// `whole_warp_copies`).
    pub(crate) whole_copy: Vec<bool>,
    /// Bytes of IR the last warp function spent on whole-warp copies and
    /// narrow loads (`lower::load_contig`): not counted against the
    /// regions' code budget.
    pub(crate) unbudgeted_bytes: usize,
    /// Per block: see `LaneForms::earliest_after_yield`.
    earliest: Vec<bool>,
    /// The block being emitted is one of those.
    cur_earliest: bool,
    /// Registers live across blocks are kept in the warp state (large
    /// kernels), not in allocas.
    pub(crate) regs_in_state: bool,
    /// The CPU has AVX-512 (two-table permutes for shuffles).
    pub(crate) avx512: bool,
    pub(crate) avx2: bool,
    /// Per block (by order index): the body of a triangle or the second
    /// arm of a diamond (see `if_bodies`).
    pub(crate) tri_body: Vec<bool>,
    /// Per block (by order index): the first arm of a diamond.
    pub(crate) diamond_first: Vec<bool>,
    /// Registers that only ever hold one constant (see `uniform::constants`).
    pub(crate) consts: std::collections::HashMap<Reg, u64>,
    /// The lanes that may run each block (by id), as bits (see `demanded`).
    pub(crate) possible: Vec<u32>,
    /// Per register, the lanes some instruction reads (see `demanded`).
    pub(crate) demanded: Vec<u32>,
    /// Element sizes whose out-of-line slow load path is used.
    pub(crate) slow_loads: std::collections::BTreeSet<u32>,
    /// `(bits, signed)` of the indexed slow loads used (see `indexed`).
    pub(crate) slow_index_loads: std::collections::BTreeSet<(u32, bool)>,
    /// Lane masks made from i32 bits (`mask_of_bits`), and those bits:
    /// the bits of such a mask are the bits again, not a pack of the
    /// vector LLVM 14 does not see through (names are unique per module).
    mask_bits: std::collections::HashMap<String, String>,
    /// Element sizes of `@wf_ld_few_*` helpers to define (see `lower`).
    pub(crate) few_loads: std::collections::BTreeSet<u32>,
    /// Element sizes of `@wf_st_few_*` helpers to define (see `lower`).
    pub(crate) few_stores: std::collections::BTreeSet<u32>,
    /// (store?, element size) of `@wf_jump_ld_*` / `@wf_jump_st_*` helpers
    /// to define (see `past_jump`).
    pub(crate) jump_helpers: std::collections::BTreeSet<(bool, u32)>,
    /// Stack buffers, emitted in the entry block.
    pub(crate) allocas: String,
    /// Plain barriers reached by a whole warp in a convergent block leave
    /// through `leave_bar` with code `BAR_CODE + site` (see `cta_fn`).
    pub(crate) lean_barriers: bool,
    /// The kernel has `bar.arrive` or counted barriers: every barrier
    /// counts its arrivals in the CTA's table (env::BARS) and the driver
    /// releases them.
    pub(crate) counted_barriers: bool,
    /// Set while emitting `@wf_fresh`: lanes that split anywhere but a
    /// triangle yield to the general warp function, so the masks stay
    /// constants LLVM can fold (see `lower::go_as_dispatcher`).
    pub(crate) structured_only: bool,
    /// Emitting the general warp function of a kernel with region
    /// functions: see `cold`.
    pub(crate) cold_general: bool,
    /// The kernel's regions are all small (`regions_all_small`): the
    /// general warp function is inlined into the round loop at any size.
    pub(crate) small_regions: bool,
    /// Per block id: full warps may run the block in the general warp
    /// function for long even with region functions (see `cold`).
    pub(crate) hot_anyway: Vec<bool>,
    /// Per block id: the block lies on a cycle (a loop).
    pub(crate) in_loop: Vec<bool>,
    /// Per block id: the grid-stride steps the block makes, 0 outside
    /// grid-stride loops (see `grid_stride`).
    pub(crate) grid_stride: Vec<u32>,
    /// Each CTA reads its slice of one stream in one burst, and the next
    /// CTAs' slices are worth prefetching (see `cta_stream`).
    pub(crate) one_stream: bool,
    /// Index of the instruction being lowered in its block.
    pub(crate) cur_inst: usize,
    /// Per block id: the load that prefetches by its stride (instruction
    /// index) and the state offset of its last address (see `stride_slot`).
    stride_slots: std::collections::HashMap<u32, (usize, usize)>,
    /// Where those slots start in the warp state (0: none reserved).
    stride_at: usize,
}

/// Loads that remember their last address (for prefetching by the stride
/// they learn, in a loop or from CTA to CTA; see `lower::prefetch_stride`):
/// 8 bytes of warp state each.
const STRIDE_SLOTS: usize = 16;

/// Whether `p` makes one load from global (or generic) memory and has no
/// loop (`in_loop`, per block id): a CTA then reads its slice of one
/// stream in one burst (a block reduction, a copy), and what the next CTAs
/// read is best asked for early (see `lower::stride_prefetch_for`).
fn reads_one_stream(p: &Prepared, in_loop: &[bool]) -> bool {
    let loads = p
        .order
        .iter()
        .flat_map(|b| p.func.blocks[*b].insts.iter())
        .filter(|i| {
            matches!(
                i.kind,
                InstKind::Ld {
                    space: Space::Global | Space::Generic,
                    ..
                }
            )
        })
        .count();
    !in_loop.contains(&true) && loads == 1
}

/// Whether loads outside loops prefetch the next CTAs' data on CPUs other
/// than Intel's (which do it anyway; see `lower::stride_prefetch_for`):
/// where `p` reads one stream (`reads_one_stream`), except in kernels with
/// CTA barriers in code with AVX-512 (`features`), where the block
/// reduction ran slower with the prefetch (Zen 4).
fn cta_stream(p: &Prepared, in_loop: &[bool], features: &str) -> bool {
    let avx512 = crate::width::widest_vectors(features) == "AVX-512";
    reads_one_stream(p, in_loop) && !(avx512 && p.barriers().next().is_some())
}

/// Per block id of `p`: whether the block lies on a cycle.
pub(crate) fn blocks_in_loops(p: &Prepared) -> Vec<bool> {
    blocks_on_cycles(p, |_| true)
}

/// Per block id of `p`: whether the block lies on a cycle of blocks
/// without a CTA barrier (the loops the general warp function runs; loops
/// with one run in region functions).
fn blocks_in_barrier_free_loops(p: &Prepared) -> Vec<bool> {
    let f = &p.func;
    blocks_on_cycles(p, |id| {
        !f.blocks[p.order[id]]
            .insts
            .iter()
            .any(|i| matches!(i.kind, InstKind::Bar { .. }))
    })
}

/// Per block id of `p`: whether the block lies on a cycle through blocks
/// that all pass `through`.
fn blocks_on_cycles(p: &Prepared, through: impl Fn(usize) -> bool) -> Vec<bool> {
    let n = p.order.len();
    // Large kernels: no answer rather than quadratic work.
    if n > 4000 {
        return vec![false; n];
    }
    let succs = p.succs();
    let ok: Vec<bool> = (0..n).map(&through).collect();
    (0..n)
        .map(|b| {
            if !ok[b] {
                return false;
            }
            let mut seen = vec![false; n];
            let mut stack = succs[b].clone();
            while let Some(x) = stack.pop() {
                if x == b {
                    return true;
                }
                if x < n && ok[x] && !seen[x] {
                    seen[x] = true;
                    stack.extend(&succs[x]);
                }
            }
            false
        })
        .collect()
}

/// Codes from `BAR_CODE` up: the warp waits at a plain barrier with all its
/// live lanes and nothing else pending; `code - BAR_CODE` is the site (1 +
/// the barrier block's id). Only the registers, `LIVE` and `RESUME_AT` are
/// in the state; the round loop turns such a warp into the general form
/// (code 1) before it hands it to the driver.
pub const BAR_CODE: u32 = 16;

/// A constant splat of `v` (low `bits` bits) as a vector literal.
pub(crate) fn sc<const W: u32>(bits: u32, v: u64) -> String {
    if v == 0 {
        return "zeroinitializer".into();
    }
    let lit = wrap_lit::<W>(bits, v);
    let items: Vec<String> = (0..W).map(|_| format!("i{bits} {lit}")).collect();
    format!("<{}>", items.join(", "))
}

/// `v` as an LLVM literal of type `i{bits}`.
fn wrap_lit<const W: u32>(bits: u32, v: u64) -> String {
    if bits == 1 {
        if v & 1 == 1 {
            "true".to_string()
        } else {
            "false".to_string()
        }
    } else if bits < 64 {
        (((v << (64 - bits)) as i64) >> (64 - bits)).to_string()
    } else {
        (v as i64).to_string()
    }
}

/// The jump `j` of a form in every lane but lane 0, which never jumps
/// (its lane k >= 1): the zero there lets LLVM take lane 0's value, the
/// scalar every affine use starts from, without the lane comparison.
fn jump_steps<const W: u32>(bits: u32, j: u64) -> String {
    let lit = wrap_lit::<W>(bits, j);
    let items: Vec<String> = (0..W)
        .map(|i| format!("i{bits} {}", if i == 0 { "0" } else { &lit }))
        .collect();
    format!("<{}>", items.join(", "))
}

/// A constant float splat (`lit` in LLVM's float syntax).
pub(crate) fn fsplat<const W: u32>(t: Ty, lit: &str) -> String {
    let items: Vec<String> = (0..W).map(|_| format!("{} {lit}", fty(t))).collect();
    format!("<{}>", items.join(", "))
}

pub(crate) fn vt<const W: u32>(bits: u32) -> String {
    format!("<{W} x i{bits}>")
}

/// The type of a warp's lane mask.
pub(crate) fn mask_ty<const W: u32>() -> String {
    format!("<{W} x i1>")
}

/// The instruction(s) setting `bits`, an i32, to lane mask `m`'s bits
/// (zeros above lane W-1).
pub(crate) fn bits_of_mask_ir<const W: u32>(bits: &str, m: &str) -> String {
    if W == 32 {
        format!("{bits} = bitcast <{W} x i1> {m} to i32")
    } else {
        format!("{bits}.w = bitcast <{W} x i1> {m} to i{W}\n  {bits} = zext i{W} {bits}.w to i32")
    }
}

/// The instruction(s) setting lane mask `m` from the i32 lane mask `bits`
/// in one move, as CPUs with mask registers do.
pub(crate) fn mask_of_bits_ir<const W: u32>(m: &str, bits: &str) -> String {
    if W == 32 {
        format!("{m} = bitcast i32 {bits} to <{W} x i1>")
    } else {
        format!("{m}.w = trunc i32 {bits} to i{W}\n  {m} = bitcast i{W} {m}.w to <{W} x i1>")
    }
}

/// The low `n` bits set (all 32 from `n` = 32 on): a set of `n` warps or
/// lanes.
pub(crate) fn low_bits(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

/// The i32 lane mask with every lane of a warp set. Lane masks kept as
/// integers have one bit per lane and zeros above lane W-1, so the
/// driver's masks mean the same at every warp width.
pub(crate) fn full_bits<const W: u32>() -> String {
    if W == 32 {
        "-1".into()
    } else {
        ((1u32 << W) - 1).to_string()
    }
}

fn reg_bits(t: Ty) -> u32 {
    if t == Ty::Pred {
        1
    } else {
        t.bits()
    }
}

/// A shuffle mask selecting lanes `r`: `<i32 a, i32 a+1, ...>`.
pub(crate) fn lanes_mask<const W: u32>(r: std::ops::Range<u32>) -> String {
    let items: Vec<String> = r.map(|i| format!("i32 {i}")).collect();
    format!("<{}>", items.join(", "))
}

/// What each lane adds to lane 0's value in form `l` (ignoring a jump).
pub(crate) fn lane_steps<const W: u32>(bits: u32, l: Lanes) -> String {
    let items: Vec<String> = (0..W)
        .map(|i| {
            let v = l.offset(i);
            let v = if bits < 64 {
                (v << (64 - bits)) >> (64 - bits)
            } else {
                v
            };
            format!("i{bits} {v}")
        })
        .collect();
    format!("<{}>", items.join(", "))
}

/// The bodies of if-then triangles and if-then-else diamonds, by order
/// index: (ends that join the kept lanes, first arms of diamonds).
///
/// A triangle is B, T, F laid out in this order: B branches to T or F, T
/// is reached only from B, jumps to F and has no warp collective or
/// barrier. Lanes that leave B for F then wait while T runs, as the
/// earliest-block rule says, and nothing can run between T and F; so when
/// B's lanes split, T runs with its lanes and the others are kept in
/// `%pend`, and T's end joins them at F without going through the
/// dispatcher's per-lane targets.
///
/// A diamond is B, T, E, J: B branches to T or E, each reached only from
/// B and jumping to J, neither with a collective or barrier. By the same
/// rule T runs first with its lanes (E's kept), then E with the kept
/// lanes (T's now kept at J), then J with all: T's end hands over to E,
/// and E's end joins like a triangle's (a 2-D stencil's edge test: every
/// warp at the edge went through the dispatcher three times).
fn if_bodies(p: &Prepared) -> (Vec<bool>, Vec<bool>) {
    let f = &p.func;
    let n = p.order.len();
    let mut preds = vec![0u32; n];
    for b in &p.order {
        for s in crate::lanes::succs(&f.blocks[*b]) {
            if let Some(c) = preds.get_mut(p.id_of[s.0 as usize] as usize) {
                *c += 1;
            }
        }
    }
    let id = |b: BlockId| p.id_of[b.0 as usize] as usize;
    let block = |t: usize| &f.blocks[p.order[t]];
    let jumps_to =
        |t: usize, to: usize| matches!(block(t).term, Some(Terminator::Jump(x)) if id(x) == to);
    let splits = |h: usize, a: usize, b: usize| {
        matches!(block(h).term, Some(Terminator::Branch { then, els, .. })
            if (id(then), id(els)) == (a, b) || (id(then), id(els)) == (b, a))
    };
    let plain = |t: usize| {
        preds[t] == 1
            && !block(t)
                .insts
                .iter()
                .any(|i| crate::prepare::is_sync_point(&i.kind))
    };
    let triangle =
        |t: usize| t >= 1 && t + 1 < n && plain(t) && jumps_to(t, t + 1) && splits(t - 1, t, t + 1);
    let diamond = |t: usize| {
        t >= 1
            && t + 2 < n
            && plain(t)
            && plain(t + 1)
            && jumps_to(t, t + 2)
            && jumps_to(t + 1, t + 2)
            && splits(t - 1, t, t + 1)
    };
    let first: Vec<bool> = (0..n).map(diamond).collect();
    let ends = (0..n)
        .map(|t| triangle(t) || (t >= 1 && first[t - 1]))
        .collect();
    (ends, first)
}

/// Each lane's bit of a 32-bit lane mask: `<i32 1, i32 2, i32 4, ...>`.
pub(crate) fn lane_bits<const W: u32>() -> String {
    let items: Vec<String> = (0..W)
        .map(|i| format!("i32 {}", (1u32 << i) as i32))
        .collect();
    format!("<{}>", items.join(", "))
}

pub(crate) fn iota<const W: u32>(bits: u32) -> String {
    let items: Vec<String> = (0..W).map(|i| format!("i{bits} {i}")).collect();
    format!("<{}>", items.join(", "))
}

fn fty(t: Ty) -> &'static str {
    if t == Ty::F64 {
        "double"
    } else {
        "float"
    }
}

impl<'a, const W: u32> Gen<'a, W> {
    /// The label to jump to block `id` directly: backward jumps go through
    /// a cancellation check.
    pub(crate) fn target(&mut self, id: u32) -> String {
        self.target_label(id, format!("B{id}"))
    }

    /// Go to block `id` with every live lane (nothing waits, nothing is
    /// pending; `mb` the mask bits): to its whole-warp copy when that is
    /// all lanes of a full warp, else to the block.
    pub(crate) fn go_together(&mut self, id: u32, mb: &str) {
        if !self.whole_copy.get(id as usize).copied().unwrap_or(false) {
            let tl = self.target(id);
            self.line(&format!("br label %{tl}"));
            return;
        }
        let full = self.def(&format!("icmp eq i32 {mb}, {}", full_bits::<W>()));
        let wl = self.target_label(id, format!("W{id}"));
        let tl = self.target(id);
        self.line(&format!("br i1 {full}, label %{wl}, label %{tl}"));
    }

    fn target_label(&mut self, id: u32, to: String) -> String {
        if id > self.cur_id {
            return to;
        }
        let key = (id, self.cur_earliest, to, self.cur_id);
        if let Some(c) = self
            .checks
            .iter()
            .find(|c| (c.1, c.2, &c.3, c.4) == (key.0, key.1, &key.2, key.3))
        {
            return c.0.clone();
        }
        let l = self.label("loopchk");
        self.checks.push((l.clone(), key.0, key.1, key.2, key.3));
        l
    }

    /// Whether the block being emitted seldom runs here: a block of the
    /// general warp function of a kernel with region functions that no
    /// warp reaches before its first barrier (full warps run it in a
    /// region function; the general one gets partial warps and warps that
    /// leave a lean round). Such blocks take one slower path where others
    /// have a fast and a general one: the general function's code
    /// generation is what the JIT waits for (sgemm, transpose). Not the
    /// first round: full warps run it here when the kernel has no
    /// `@wf_fresh` (transpose's loads: 4x slower on the one path). Nor
    /// loops without barriers: a warp that yields there after many trips
    /// (see `Gen::poll`) runs the rest of the loop here.
    pub(crate) fn cold(&self) -> bool {
        self.cold_general
            && !self
                .hot_anyway
                .get(self.cur_id as usize)
                .copied()
                .unwrap_or(true)
    }

    /// The grid-stride steps block `id` makes (0 outside grid-stride
    /// loops, see `grid_stride`).
    pub(crate) fn grid_stride_steps(&self, id: usize) -> u32 {
        self.grid_stride.get(id).copied().unwrap_or(0)
    }

    /// The state slot where the load being lowered keeps its last
    /// address: the first global load of a block that prefetches (in a
    /// loop, or outside loops, by CTA: see `lower::stride_prefetch_for`)
    /// has one (a block's later loads mostly read next to it: a stencil's
    /// seven, a row and its neighbours), while slots last.
    pub(crate) fn stride_slot(&mut self) -> Option<usize> {
        let id = self.cur_id as usize;
        let in_loop = self.in_loop.get(id).copied().unwrap_or(false);
        let grid_stride = self.grid_stride_steps(id) > 0;
        if self.stride_at == 0
            || !crate::lower::stride_prefetch_for(in_loop, grid_stride, self.one_stream)
        {
            return None;
        }
        let next = self.stride_slots.len();
        let at = self.stride_at + 8 * next;
        let (inst, slot) = *self
            .stride_slots
            .entry(self.cur_id)
            .or_insert((self.cur_inst, at));
        (inst == self.cur_inst && slot < self.stride_at + 8 * STRIDE_SLOTS).then_some(slot)
    }

    /// The instruction being lowered is a global add summed per worker.
    pub(crate) fn deferred_red_here(&self) -> bool {
        let at = (self.p.order[self.cur_id as usize], self.cur_inst);
        self.deferral
            .as_ref()
            .is_some_and(|d| d.sites.contains(&at))
    }

    /// The block being lowered is in a loop.
    pub(crate) fn block_in_loop(&self) -> bool {
        self.in_loop
            .get(self.cur_id as usize)
            .copied()
            .unwrap_or(false)
    }

    /// `%{name} = alloca {ty}` in the function's entry block, once however
    /// many accesses use it (scratch slots shared by a function's sites).
    pub(crate) fn alloca_once(&mut self, name: &str, ty: &str) {
        let def = format!("  %{name} = alloca {ty}\n");
        if !self.allocas.contains(&def) {
            self.allocas.push_str(&def);
        }
    }

    /// A pointer of type `ty*` to the warp state at byte `off`.
    pub(crate) fn state_ptr(&mut self, off: usize, ty: &str) -> String {
        self.ptr_in("%st", off, ty)
    }

    /// A `ty*` at byte `off` of the `i8*` value `base`.
    pub(crate) fn ptr_in(&mut self, base: &str, off: usize, ty: &str) -> String {
        let q = self.t();
        let c = self.t();
        self.line(&format!("{q} = getelementptr i8, i8* {base}, i64 {off}"));
        self.line(&format!("{c} = bitcast i8* {q} to {ty}*"));
        c
    }

    /// Whether register `i` is kept as one scalar (uniform or affine).
    pub(crate) fn scalar(&self, i: usize) -> bool {
        self.lanes[i].is_some()
    }

    /// Register `i`'s form in each block row, when it is kept as one
    /// scalar per row (see `rows`).
    pub(crate) fn row_reg(&self, i: usize) -> Option<Lanes> {
        self.rows.get(i).copied().flatten()
    }

    /// Whether register `i` is kept as less than a vector: one scalar, or
    /// one per row.
    pub(crate) fn compact(&self, i: usize) -> bool {
        self.scalar(i) || self.row_reg(i).is_some()
    }

    /// The type of a row register of `bits` bits: one element per row.
    fn row_ty(&self, bits: u32) -> String {
        format!("<{} x i{bits}>", W / self.row_width)
    }

    pub(crate) fn is_uniform(&self, i: usize) -> bool {
        self.lanes[i].is_some_and(|l| l.is_uniform())
    }

    /// What goes into register `r`'s jump slot `%k{r}` as it is being
    /// defined: for a widening of at most 32 bits (see `jump_origin`), the
    /// source's lane-0 value, extended to 32 bits; otherwise the lane of the
    /// jump itself. Storing the source and working the lane out where it
    /// is read leaves one compare on the common side of each access, and
    /// none of the lane's arithmetic at each definition (a 3-D stencil
    /// with `int` indices widens nine addresses per step: 2.5% fewer
    /// instructions, no time measurably gained).
    fn jump_slot(&mut self, r: Reg) -> String {
        match self.jumps[r.0 as usize] {
            Some(JumpFrom::Same(s)) => self.load_scalar(&format!("k{}", s.0), "i32"),
            Some(JumpFrom::Widen {
                src,
                bits,
                signed,
                stride,
            }) => {
                let sb = self.reg_bits[src.0 as usize];
                let a = self.load_scalar(&format!("r{}", src.0), &format!("i{sb}"));
                let a = if sb > bits {
                    self.def(&format!("trunc i{sb} {a} to i{bits}"))
                } else if sb < bits {
                    self.def(&format!("zext i{sb} {a} to i{bits}"))
                } else {
                    a
                };
                let ext = if signed { "sext" } else { "zext" };
                if bits <= 32 {
                    return if bits == 32 {
                        a
                    } else {
                        self.def(&format!("{ext} i{bits} {a} to i32"))
                    };
                }
                let a = self.def(&format!("{ext} i{bits} {a} to i128"));
                self.lane_of_jump(&a, 128, bits, signed, stride)
            }
            None => W.to_string(),
        }
    }

    /// The widening that register `r`'s jump comes from, following copies
    /// (`JumpFrom::Same`), when its slot holds the widened value's lane-0
    /// source (at most 32 bits) rather than the lane: (bits, signed,
    /// stride).
    fn jump_origin(&self, r: Reg) -> Option<(u32, bool, i64)> {
        let mut at = r;
        for _ in 0..=self.jumps.len() {
            match self.jumps.get(at.0 as usize).copied().flatten()? {
                JumpFrom::Same(s) => at = s,
                JumpFrom::Widen {
                    bits,
                    signed,
                    stride,
                    ..
                } => return (bits <= 32).then_some((bits, signed, stride)),
            }
        }
        None
    }

    /// The lane of register `r`'s jump (W: none), read from its slot.
    pub(crate) fn jump_lane(&mut self, r: Reg) -> String {
        let slot = self.load_scalar(&format!("k{}", r.0), "i32");
        match self.jump_origin(r) {
            Some((bits, signed, stride)) => {
                let ext = if signed { "sext" } else { "zext" };
                let a = self.def(&format!("{ext} i32 {slot} to i64"));
                self.lane_of_jump(&a, 64, bits, signed, stride)
            }
            None => slot,
        }
    }

    /// The first lane whose value passes 2^(bits-1) (signed) or 2^bits
    /// (unsigned), counting from lane 0's value `a` (`i{wide}`, extended
    /// from `bits`); with a negative stride, the first to go below
    /// -2^(bits-1) (signed) or 0 (unsigned). W when no lane does.
    fn lane_of_jump(&mut self, a: &str, wide: u32, bits: u32, signed: bool, stride: i64) -> String {
        // Lane 0 never jumps (its value is the start of the count),
        // so k >= 1: counted as 1 + the lanes before the jump past
        // lane 0, clamped to W - 1.
        let before = if stride > 0 {
            // ceil((bound - a) / stride) - 1 with bound - a >= 1.
            let bound: u128 = if signed { 1 << (bits - 1) } else { 1 << bits };
            let num = self.def(&format!("sub i{wide} {}, {a}", bound - 1));
            self.def(&format!("udiv i{wide} {num}, {stride}"))
        } else {
            let low: u128 = if signed { 1 << (bits - 1) } else { 0 };
            let num = self.def(&format!("add i{wide} {a}, {low}"));
            self.def(&format!("udiv i{wide} {num}, {}", stride.unsigned_abs()))
        };
        // No jump (k = W) when at least W - 1 lanes fit before it: one
        // compare of `a` with a constant (see `no_jump_test`), which LLVM
        // narrows to the unextended value (`before` > W - 2 kept three
        // more instructions at every access). Otherwise k = before + 1 <
        // W, which the mask by W - 1 keeps and LLVM can see: a use's
        // `k == W` test then folds to `none` and the jump lane is only
        // computed where it is kept or the slow side needs it.
        let none = match no_jump_test::<W>(wide, bits, signed, stride) {
            NoJump::Always(all) => all.to_string(),
            NoJump::AtMost(c) => self.def(&format!("icmp sle i{wide} {a}, {c}")),
            NoJump::AtLeast(c) => self.def(&format!("icmp sge i{wide} {a}, {c}")),
        };
        let before = self.def(&format!("trunc i{wide} {before} to i32"));
        let k = self.def(&format!("add i32 {before}, 1"));
        let k = self.def(&format!("and i32 {k}, {}", W - 1));
        self.def(&format!("select i1 {none}, i32 {W}, i32 {k}"))
    }

    /// Whether register `i`'s form has a jump, its lane found from `%k{i}`
    /// (see `jump_slot`).
    pub(crate) fn has_jump(&self, i: usize) -> bool {
        self.lanes[i].is_some_and(|l| l.jump != 0)
    }

    /// Whether register `i` is kept in the state across a return to the
    /// driver: only registers live across blocks, and of those not the ones
    /// computed again on resume.
    pub(crate) fn saved(&self, i: usize) -> bool {
        self.live[i] && !self.remat[i]
    }

    /// (type in the saved state, type of the register's alloca).
    pub(crate) fn saved_types(&self, i: usize, bits: u32) -> (String, String) {
        if self.row_reg(i).is_some() {
            let t = self.row_ty(bits);
            return (t.clone(), t);
        }
        match (self.scalar(i), bits) {
            (true, 1) => ("i8".into(), "i1".into()),
            (true, b) => (format!("i{b}"), format!("i{b}")),
            (false, 1) => (format!("i{W}"), mask_ty::<W>()),
            (false, b) => (vt::<W>(b), vt::<W>(b)),
        }
    }

    /// Convert between the saved and the register form of a value.
    pub(crate) fn cast(&mut self, v: &str, from: &str, to: &str) -> String {
        if !self.avx512 && from == format!("i{W}") && to == mask_ty::<W>() {
            // Not a bitcast: see `bits_in_state`.
            let b = if W == 32 {
                v.to_string()
            } else {
                self.def(&format!("zext i{W} {v} to i32"))
            };
            return self.mask_of_bits(&b);
        }
        let op = match (from, to) {
            (f, t) if f == t => return v.to_string(),
            ("i8", "i1") => "trunc",
            ("i1", "i8") => "zext",
            _ => "bitcast",
        };
        let r = self.t();
        self.line(&format!("{r} = {op} {from} {v} to {to}"));
        r
    }

    /// Stop if the watchdog says so (to `cancelled`), else count `cost`
    /// units of the warp's budget: go on to `go`, or to `out` when it runs
    /// out. With `lazy`, the watchdog's flag is read only when the budget
    /// runs out: a grid-stride loop's trip loses a load and a branch
    /// (histogram 0.88-0.91 of the time, faster in 4 of 4 interleaved
    /// rounds, twice, on Zen 4). Only for loops where no warp waits (see
    /// `grid_stride::loop_may_wait`), which therefore spend their budget
    /// within one call and read the flag within one budget of trips. Not
    /// for other loops: the same change there made stencil3d, batched LU
    /// and bitonic 7-8% slower (LLVM allocated their large loops'
    /// registers differently).
    pub(crate) fn poll(&mut self, go: &str, out: &str, cost: u32, lazy: bool) {
        let cancelled_or = |g: &mut Self, other: &str| {
            let cp = g.env(env::CANCEL);
            let (p, v, stop) = (g.t(), g.t(), g.t());
            g.line(&format!("{p} = inttoptr i64 {cp} to i32*"));
            g.line(&format!("{v} = load volatile i32, i32* {p}"));
            g.line(&format!("{stop} = icmp ne i32 {v}, 0"));
            g.line(&format!(
                "br i1 {stop}, label %cancelled, label %{other}{UNLIKELY}"
            ));
        };
        let more = self.label(if lazy { "spent" } else { "budget" });
        if !lazy {
            cancelled_or(self, &more);
            self.emit_label(&more);
        }
        let b = self.load_scalar("budget", "i32");
        let (b2, z) = (self.t(), self.t());
        self.line(&format!("{b2} = sub i32 {b}, {cost}"));
        self.line(&format!("store i32 {b2}, i32* %budget"));
        self.line(&format!("{z} = icmp slt i32 {b2}, 1"));
        if lazy {
            self.line(&format!("br i1 {z}, label %{more}, label %{go}{UNLIKELY}"));
            self.emit_label(&more);
            cancelled_or(self, out);
        } else {
            self.line(&format!("br i1 {z}, label %{out}, label %{go}{UNLIKELY}"));
        }
    }

    /// The group to run at block `block` (an i32): every lane whose next
    /// block it is, including lanes waiting at a collective there, which
    /// stop waiting. `next` and `wait_coll` are the current values.
    pub(crate) fn take_group_at(&mut self, next: &str, block: &str, wait_coll: &str) {
        let bs = self.splat("i32", block);
        let m = self.def(&format!("icmp eq <{W} x i32> {next}, {bs}"));
        let mb = self.bits_of_mask(&m);
        self.store_mask(&m, &mb);
        let nmb = self.def(&format!("xor i32 {mb}, -1"));
        let wc = self.def(&format!("and i32 {wait_coll}, {nmb}"));
        self.line(&format!("store i32 {wc}, i32* %wait_coll"));
    }

    /// A new value: `%t = rhs`.
    pub(crate) fn def(&mut self, rhs: &str) -> String {
        let r = self.t();
        self.line(&format!("{r} = {rhs}"));
        r
    }

    pub(crate) fn t(&mut self) -> String {
        self.n += 1;
        format!("%t{}", self.n)
    }

    /// `if cond { then } else { other }` as a value of type `ty`; either
    /// side may make blocks of its own (`prefix` names the new ones).
    pub(crate) fn if_else(
        &mut self,
        prefix: &str,
        cond: &str,
        ty: &str,
        then: impl FnOnce(&mut Self) -> String,
        other: impl FnOnce(&mut Self) -> String,
    ) -> String {
        let (lt, lo, lj) = (
            self.label(&format!("{prefix}_then")),
            self.label(&format!("{prefix}_else")),
            self.label(&format!("{prefix}_join")),
        );
        self.line(&format!("br i1 {cond}, label %{lt}, label %{lo}"));
        self.emit_label(&lt);
        let a = then(self);
        let ea = self.side_end(prefix, &lj);
        self.emit_label(&lo);
        let b = other(self);
        let eb = self.side_end(prefix, &lj);
        self.emit_label(&lj);
        self.def(&format!("phi {ty} [ {a}, %{ea} ], [ {b}, %{eb} ]"))
    }

    /// Ends a side of `if_else` in a block of its own, the one named for
    /// the phi (the side may have made blocks), going on to `join`.
    fn side_end(&mut self, prefix: &str, join: &str) -> String {
        let end = self.label(&format!("{prefix}_from"));
        self.line(&format!("br label %{end}"));
        self.emit_label(&end);
        self.line(&format!("br label %{join}"));
        end
    }

    pub(crate) fn label(&mut self, prefix: &str) -> String {
        self.n += 1;
        // "br_conv2" + 764 would be "br_conv" + 2764 (a function with
        // 2764 names made them collide): a digit ends a prefix with "_".
        if prefix.ends_with(|c: char| c.is_ascii_digit()) {
            format!("{prefix}_{}", self.n)
        } else {
            format!("{prefix}{}", self.n)
        }
    }

    pub(crate) fn line(&mut self, s: &str) {
        self.out.push_str("  ");
        self.out.push_str(s);
        self.out.push('\n');
    }

    pub(crate) fn emit_label(&mut self, l: &str) {
        let _ = writeln!(self.out, "{l}:");
    }

    /// A splat of a scalar value (`i32 %x` or `i32 7`) to W lanes.
    pub(crate) fn splat(&mut self, ty: &str, scalar: &str) -> String {
        if ty == "i1" && self.avx512 {
            // As the bits of an integer: one mask-register move, where
            // LLVM 14 widens a splatted i1 to words and back (three
            // vector instructions). Not without AVX-512, where masks are
            // vectors and the bits would need spreading to lanes.
            let all = self.def(&format!("sext i1 {scalar} to i{W}"));
            return self.def(&format!("bitcast i{W} {all} to <{W} x i1>"));
        }
        let a = self.t();
        let b = self.t();
        self.line(&format!(
            "{a} = insertelement <{W} x {ty}> undef, {ty} {scalar}, i32 0"
        ));
        self.line(&format!(
            "{b} = shufflevector <{W} x {ty}> {a}, <{W} x {ty}> undef, <{W} x i32> zeroinitializer"
        ));
        b
    }

    pub(crate) fn env(&mut self, idx: usize) -> String {
        let p = self.t();
        let v = self.t();
        self.line(&format!("{p} = getelementptr i64, i64* %env, i64 {idx}"));
        // Fixed for the launch: loads of it survive stores in between.
        self.line(&format!("{v} = load i64, i64* {p}, !invariant.load !{{}}"));
        v
    }

    pub(crate) fn conv(&mut self, v: &str, from: u32, to: u32, signed: bool) -> String {
        if from == to {
            return v.to_string();
        }
        let r = self.t();
        let op = if from > to {
            "trunc"
        } else if signed {
            "sext"
        } else {
            "zext"
        };
        self.line(&format!(
            "{r} = {op} {} {v} to {}",
            vt::<W>(from),
            vt::<W>(to)
        ));
        r
    }

    /// A source operand as `<32 x i{bits}>`.
    /// A source operand as `<32 x i{bits}>` for a use that sees its bits:
    /// NaNs in float registers are made canonical here (float arithmetic
    /// leaves them as the CPU made them; NaN-ness does not depend on the
    /// payload, so only where bits are observed does it matter).
    pub(crate) fn val(&mut self, v: Value, bits: u32) -> String {
        let x = self.val_raw(v, bits);
        if self.keep_nans {
            return x;
        }
        let Some(t) = self.lazy_float(v, bits) else {
            return x;
        };
        let f = self.t();
        self.line(&format!(
            "{f} = bitcast {} {x} to <{W} x {}>",
            vt::<W>(bits),
            fty(t)
        ));
        let c = self.canon(&f, t);
        let b = self.t();
        self.line(&format!(
            "{b} = bitcast <{W} x {}> {c} to {}",
            fty(t),
            vt::<W>(bits)
        ));
        b
    }

    /// The float type of `v` read as `bits`-bit values when it is a float
    /// register whose NaNs are made canonical only where observed.
    pub(crate) fn lazy_float(&self, v: Value, bits: u32) -> Option<Ty> {
        let Value::Reg(r) = v else { return None };
        self.float_reg[r.0 as usize].filter(|t| t.bits() == bits)
    }

    /// A 32-bit operand as a scalar `i32`, when it is the same for every
    /// lane (an immediate or a warp-uniform 32-bit register) and its
    /// scalar is its bits (not a float whose NaN is made canonical only
    /// where read through `val`).
    pub(crate) fn uniform_i32(&mut self, v: Value) -> Option<String> {
        match v {
            Value::Imm(x) => Some((x as u32).to_string()),
            Value::Reg(r)
                if self.is_uniform(r.0 as usize)
                    && self.reg_bits[r.0 as usize] == 32
                    && self.float_reg[r.0 as usize].is_none() =>
            {
                let s = self.t();
                self.line(&format!("{s} = load i32, i32* %r{}", r.0));
                Some(s)
            }
            _ => None,
        }
    }

    /// A source operand's bits as they are in the register.
    pub(crate) fn val_raw(&mut self, v: Value, bits: u32) -> String {
        match v {
            Value::Reg(r) => {
                let rb = self.reg_bits[r.0 as usize];
                let x = if let Some(l) = self.lanes[r.0 as usize] {
                    let s = self.t();
                    self.line(&format!("{s} = load i{rb}, i{rb}* %r{}", r.0));
                    let v = self.splat(&format!("i{rb}"), &s);
                    let v = if l.stride == 0 && l.extra == 0 {
                        v
                    } else {
                        let steps = lane_steps::<W>(rb, l);
                        self.def(&format!("add {} {v}, {steps}", vt::<W>(rb)))
                    };
                    if l.jump == 0 {
                        v
                    } else {
                        let k = self.jump_lane(r);
                        let ks = self.splat("i32", &k);
                        let on = self.def(&format!("icmp uge <{W} x i32> {}, {ks}", iota::<W>(32)));
                        let j = self.def(&format!(
                            "select <{W} x i1> {on}, {} {}, {} zeroinitializer",
                            vt::<W>(rb),
                            jump_steps::<W>(rb, l.jump as u64),
                            vt::<W>(rb)
                        ));
                        self.def(&format!("add {} {v}, {j}", vt::<W>(rb)))
                    }
                } else if let Some(l) = self.row_reg(r.0 as usize) {
                    self.row_vector(r.0 as usize, rb, l)
                } else {
                    self.load_vreg(r.0 as usize, rb)
                };
                if rb == 1 && bits != 1 {
                    return self.conv(&x, 1, bits, false);
                }
                if bits == 1 && rb != 1 {
                    let one = self.conv(&x, rb, rb, false);
                    return self.low_bit(&one, rb);
                }
                self.conv(&x, rb, bits, false)
            }
            Value::Imm(x) => {
                let masked = if bits >= 64 {
                    x
                } else {
                    x & ((1u64 << bits) - 1)
                };
                sc::<W>(bits, masked)
            }
        }
    }

    /// Row register `i`'s rows' first values (`<W / row_width x i{rb}>`).
    pub(crate) fn row_values(&mut self, i: usize, rb: u32) -> String {
        let t = self.row_ty(rb);
        self.def(&format!("load {t}, {t}* %r{i}"))
    }

    /// Row register `i`'s lanes (`<W x i{rb}>`): each row's first value
    /// in all of the row's lanes, plus the lane's offset in the row.
    fn row_vector(&mut self, i: usize, rb: u32, l: Lanes) -> String {
        let t = self.row_ty(rb);
        let firsts = self.row_values(i, rb);
        let w = self.row_width;
        let pick = (0..W)
            .map(|lane| format!("i32 {}", lane / w))
            .collect::<Vec<_>>()
            .join(", ");
        let v = self.def(&format!(
            "shufflevector {t} {firsts}, {t} undef, <{W} x i32> <{pick}>"
        ));
        if l.stride == 0 {
            return v;
        }
        // The lane's offset in its row: a form whose rows restart at 0.
        let in_row = Lanes {
            width: w,
            extra: -i64::from(w).wrapping_mul(l.stride),
            ..l
        };
        let steps = lane_steps::<W>(rb, in_row);
        self.def(&format!("add {} {v}, {steps}", vt::<W>(rb)))
    }

    /// Each lane's lowest bit of `x` (`<W x i{bits}>`), as a predicate.
    fn low_bit(&mut self, x: &str, bits: u32) -> String {
        let z = self.def(&format!("and {} {x}, {}", vt::<W>(bits), sc::<W>(bits, 1)));
        self.def(&format!("icmp ne {} {z}, zeroinitializer", vt::<W>(bits)))
    }

    /// Write `v` (`<32 x i{bits}>`) to register `r` in the lanes of `exec`.
    pub(crate) fn set(&mut self, r: Reg, v: &str, bits: u32, signed: bool, exec: &str) {
        let rb = self.reg_bits[r.0 as usize];
        let v = if rb == 1 && bits != 1 {
            self.low_bit(v, bits)
        } else {
            self.conv(v, bits, rb, signed)
        };
        if let Some(l) = self.lanes[r.0 as usize] {
            // Every lane that reads it gets lane 0's value plus its stride
            // (see `lanes`), whichever lanes run this.
            let e = self.t();
            self.line(&format!("{e} = extractelement {} {v}, i32 0", vt::<W>(rb)));
            self.line(&format!("store i{rb} {e}, i{rb}* %r{}", r.0));
            if l.jump != 0 {
                let k = self.jump_slot(r);
                self.line(&format!("store i32 {k}, i32* %k{}", r.0));
            }
            return;
        }
        if self.row_reg(r.0 as usize).is_some() {
            // Likewise each row's first lane's value, whichever lanes run
            // this (see `lanes::row_forms`).
            let t = self.row_ty(rb);
            let firsts = (0..W / self.row_width)
                .map(|row| format!("i32 {}", row * self.row_width))
                .collect::<Vec<_>>()
                .join(", ");
            let x = self.def(&format!(
                "shufflevector {} {v}, {} undef, <{} x i32> <{firsts}>",
                vt::<W>(rb),
                vt::<W>(rb),
                W / self.row_width
            ));
            self.line(&format!("store {t} {x}, {t}* %r{}", r.0));
            return;
        }
        let dead = !self.live[r.0 as usize] || self.cur_convergent;
        let here = self.cur_block.is_some() && self.live_in_one[r.0 as usize] == self.cur_block;
        if !self.guarded && (dead || here) {
            if !dead {
                UNBLENDED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            // Dead in the lanes not running: no need to keep their values.
            self.store_vreg(r.0 as usize, rb, &v);
            return;
        }
        let old = self.load_vreg(r.0 as usize, rb);
        let new = self.t();
        self.line(&format!(
            "{new} = select <{W} x i1> {exec}, {} {v}, {} {old}",
            vt::<W>(rb),
            vt::<W>(rb)
        ));
        self.store_vreg(r.0 as usize, rb, &new);
    }

    /// Whether vector register `i` is a predicate kept in the warp state
    /// as bits on a CPU without mask registers: LLVM 14 moves such a
    /// `<W x i1>` between memory and vector registers one bit at a time
    /// (64 scalar instructions), so it goes through an integer instead.
    pub(crate) fn bits_in_state(&self, i: usize, rb: u32) -> bool {
        rb == 1 && !self.avx512 && self.regs_in_state && self.saved(i)
    }

    /// Predicate register `i`'s lanes as an i32, read from the warp state
    /// where it is kept as bits (see `bits_in_state`).
    pub(crate) fn stored_pred_bits(&mut self, i: usize) -> String {
        let b = self.load_pred_word(i);
        if W == 32 {
            b
        } else {
            self.def(&format!("zext i{W} {b} to i32"))
        }
    }

    /// The `i{W}` word of predicate register `i` kept as bits.
    fn load_pred_word(&mut self, i: usize) -> String {
        let p = self.def(&format!("bitcast <{W} x i1>* %r{i} to i{W}*"));
        self.def(&format!("load i{W}, i{W}* {p}"))
    }

    /// The vector value of register `i` (`<W x i{rb}>`).
    fn load_vreg(&mut self, i: usize, rb: u32) -> String {
        if self.bits_in_state(i, rb) {
            let b = self.load_pred_word(i);
            return self.cast(&b, &format!("i{W}"), &mask_ty::<W>());
        }
        self.def(&format!("load {}, {}* %r{i}", vt::<W>(rb), vt::<W>(rb)))
    }

    /// Register `i` becomes `v` (`<W x i{rb}>`) in every lane.
    fn store_vreg(&mut self, i: usize, rb: u32, v: &str) {
        if self.bits_in_state(i, rb) {
            let b = self.def(&format!("bitcast <{W} x i1> {v} to i{W}"));
            let p = self.def(&format!("bitcast <{W} x i1>* %r{i} to i{W}*"));
            self.line(&format!("store i{W} {b}, i{W}* {p}"));
            return;
        }
        self.line(&format!(
            "store {} {v}, {}* %r{i}",
            vt::<W>(rb),
            vt::<W>(rb)
        ));
    }

    /// Set the running lanes: `m` as a lane mask and `bits` as an i32.
    /// The group's lane mask, its bits known alongside (see `mask_bits`;
    /// `store_mask` keeps the two in step).
    pub(crate) fn load_mask(&mut self) -> String {
        let m = self.load_scalar("mask", &mask_ty::<W>());
        let b = self.load_scalar("mask_bits", "i32");
        self.mask_bits.insert(m.clone(), b);
        m
    }

    /// Whether predicate `p` holds in every lane of `exec` (an `i1`).
    pub(crate) fn holds_in(&mut self, p: &str, exec: &str) -> String {
        let off = self.mask_op("xor", exec, &sc::<W>(1, 1));
        let ok = self.def(&format!("or <{W} x i1> {p}, {off}"));
        self.def(&format!(
            "call i1 @llvm.vector.reduce.and.v{W}i1(<{W} x i1> {ok})"
        ))
    }

    /// `a op b` (`and`, `or`, `xor`) of two lane masks; when both have
    /// known bits (see `mask_bits`), so has the result.
    pub(crate) fn mask_op(&mut self, op: &str, a: &str, b: &str) -> String {
        let r = self.def(&format!("{op} <{W} x i1> {a}, {b}"));
        let known = |g: &Self, m: &str| {
            if m == sc::<W>(1, 1) {
                Some(full_bits::<W>())
            } else {
                g.mask_bits.get(m).cloned()
            }
        };
        if let (Some(x), Some(y)) = (known(self, a), known(self, b)) {
            let bits = self.def(&format!("{op} i32 {x}, {y}"));
            self.mask_bits.insert(r.clone(), bits);
        }
        r
    }

    pub(crate) fn store_mask(&mut self, m: &str, bits: &str) {
        self.line(&format!("store <{W} x i1> {m}, <{W} x i1>* %mask"));
        self.line(&format!("store i32 {bits}, i32* %mask_bits"));
    }

    pub(crate) fn bits_of_mask(&mut self, m: &str) -> String {
        if let Some(b) = self.mask_bits.get(m).cloned() {
            // Zeros above lane W-1, as `bits_of_mask_ir` makes them.
            return if W == 32 {
                b
            } else {
                self.def(&format!("and i32 {b}, {}", full_bits::<W>()))
            };
        }
        let b = self.t();
        self.line(&bits_of_mask_ir::<W>(&b, m));
        b
    }

    pub(crate) fn mask_of_bits(&mut self, b: &str) -> String {
        let m = self.t();
        if self.avx512 {
            // One move into a mask register.
            self.line(&mask_of_bits_ir::<W>(&m, b));
        } else {
            // Without mask registers LLVM 14 extracts and inserts the 32
            // bits one by one; a broadcast, an and with each lane's bit
            // and a compare are three instructions per vector register.
            let s = self.splat("i32", b);
            let bits = lane_bits::<W>();
            let a = self.def(&format!("and <{W} x i32> {s}, {bits}"));
            self.line(&format!("{m} = icmp ne <{W} x i32> {a}, zeroinitializer"));
        }
        self.mask_bits.insert(m.clone(), b.to_string());
        m
    }

    pub(crate) fn load_scalar(&mut self, name: &str, ty: &str) -> String {
        let v = self.t();
        self.line(&format!("{v} = load {ty}, {ty}* %{name}"));
        v
    }

    /// Per-lane call of a helper over 64-bit lane values; `exec` lanes only
    /// when `masked` (helpers with side effects), all lanes otherwise.
    pub(crate) fn call_lanes(
        &mut self,
        helper: Helper,
        desc: InstKind,
        args: &[String],
        exec: Option<&str>,
    ) -> String {
        let idx = self.descs.len();
        self.descs.push(Box::new(desc));
        let table = self.env(env::DESCS);
        let (tp, ep, dp) = (self.t(), self.t(), self.t());
        self.line(&format!("{tp} = inttoptr i64 {table} to i8**"));
        self.line(&format!("{ep} = getelementptr i8*, i8** {tp}, i64 {idx}"));
        self.line(&format!("{dp} = load i8*, i8** {ep}"));
        let name = match helper {
            Helper::Int => "wf_int",
            Helper::Float => "wf_float",
            Helper::Cvt => "wf_cvt",
            Helper::Testp => "wf_testp",
            Helper::Atom => "wf_atom",
            Helper::Host => "wf_host",
        };
        let nargs = match helper {
            Helper::Int => 4,
            Helper::Float | Helper::Atom => 3,
            Helper::Cvt | Helper::Testp => 1,
            Helper::Host => 8,
        };
        self.lane_loop(args, nargs, exec, |g, xs| {
            let mut call_args = vec![format!("i8* {dp}")];
            call_args.extend(xs.iter().map(|x| format!("i64 {x}")));
            let r = g.t();
            g.line(&format!("{r} = call i64 @{name}({})", call_args.join(", ")));
            r
        })
    }

    /// A loop over the lanes 0..W in order: `body` gets the lane index (an
    /// i32 value) and may branch, as long as it ends in an open block.
    pub(crate) fn for_each_lane(&mut self, body: impl FnOnce(&mut Self, &str)) {
        let (pre, head, latch, done) = (
            self.label("lanes_pre"),
            self.label("lanes_head"),
            self.label("lanes_latch"),
            self.label("lanes_done"),
        );
        self.line(&format!("br label %{pre}"));
        self.emit_label(&pre);
        self.line(&format!("br label %{head}"));
        self.emit_label(&head);
        let (i, inext) = (self.t(), self.t());
        self.line(&format!(
            "{i} = phi i32 [ 0, %{pre} ], [ {inext}, %{latch} ]"
        ));
        body(self, &i);
        self.line(&format!("br label %{latch}"));
        self.emit_label(&latch);
        self.line(&format!("{inext} = add i32 {i}, 1"));
        let more = self.def(&format!("icmp ult i32 {inext}, {W}"));
        self.line(&format!("br i1 {more}, label %{head}, label %{done}"));
        self.emit_label(&done);
    }

    /// Run `body` once per executing lane, in lane order, on the lanes'
    /// elements of `args` (as i64, `0` past `args.len()` up to `nargs`);
    /// gives the <32 x i64> of its results (0 in idle lanes). A loop through
    /// stack buffers (allocated once, in the entry block) keeps the IR
    /// compact however many such operations a kernel has.
    pub(crate) fn lane_loop(
        &mut self,
        args: &[String],
        nargs: usize,
        exec: Option<&str>,
        body: impl FnOnce(&mut Self, &[String]) -> String,
    ) -> String {
        let exec_bits = exec.map(|e| self.bits_of_mask(e));
        let mut bufs = Vec::new();
        for (k, a) in args.iter().enumerate() {
            let b = format!("%lanebuf{}_{k}", self.n);
            let _ = writeln!(self.allocas, "  {b} = alloca [{W} x i64], align 64");
            let vp = self.t();
            self.line(&format!("{vp} = bitcast [{W} x i64]* {b} to <{W} x i64>*"));
            self.line(&format!(
                "store <{W} x i64> {a}, <{W} x i64>* {vp}, align 64"
            ));
            bufs.push(b);
        }
        let res = format!("%laneres{}", self.n);
        let _ = writeln!(self.allocas, "  {res} = alloca [{W} x i64], align 64");
        self.for_each_lane(|g, i| {
            let (call, skip, join) = (
                g.label("lanes_call"),
                g.label("lanes_skip"),
                g.label("lanes_join"),
            );
            match &exec_bits {
                Some(eb) => {
                    let sh = g.def(&format!("lshr i32 {eb}, {i}"));
                    let bit = g.def(&format!("and i32 {sh}, 1"));
                    let on = g.def(&format!("icmp ne i32 {bit}, 0"));
                    g.line(&format!("br i1 {on}, label %{call}, label %{skip}"));
                }
                None => g.line(&format!("br label %{call}")),
            }
            g.emit_label(&call);
            let mut xs = Vec::new();
            for k in 0..nargs {
                match bufs.get(k) {
                    Some(b) => {
                        let p = g.def(&format!(
                            "getelementptr [{W} x i64], [{W} x i64]* {b}, i32 0, i32 {i}"
                        ));
                        xs.push(g.def(&format!("load i64, i64* {p}")));
                    }
                    None => xs.push("0".into()),
                }
            }
            let r = body(g, &xs);
            let rp = g.def(&format!(
                "getelementptr [{W} x i64], [{W} x i64]* {res}, i32 0, i32 {i}"
            ));
            g.line(&format!("store i64 {r}, i64* {rp}"));
            g.line(&format!("br label %{join}"));
            g.emit_label(&skip);
            let sp = g.def(&format!(
                "getelementptr [{W} x i64], [{W} x i64]* {res}, i32 0, i32 {i}"
            ));
            g.line(&format!("store i64 0, i64* {sp}"));
            g.line(&format!("br label %{join}"));
            g.emit_label(&join);
        });
        let vp = self.t();
        let acc = self.t();
        self.line(&format!(
            "{vp} = bitcast [{W} x i64]* {res} to <{W} x i64>*"
        ));
        self.line(&format!(
            "{acc} = load <{W} x i64>, <{W} x i64>* {vp}, align 64"
        ));
        acc
    }

    pub(crate) fn to64(&mut self, v: Value, bits: u32) -> String {
        if let Value::Imm(x) = v {
            // A literal, so per-lane code (shared atomics) sees a constant
            // operand, not a vector to read back lane by lane.
            let bits = bits.clamp(1, 64);
            let m = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            return sc::<W>(64, x & m);
        }
        let x = self.val(v, bits.max(1));
        self.conv(&x, bits.max(1), 64, false)
    }

    pub(crate) fn helper_int(
        &mut self,
        inst: &InstKind,
        op: IntOp,
        ty: Ty,
        dst: Reg,
        args: &[Value],
        exec: &str,
    ) {
        let bits = ty.bits();
        let a: Vec<String> = args
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let b = match op {
                    IntOp::MadWide if k == 2 => bits * 2,
                    IntOp::Bfe | IntOp::Bfi | IntOp::Shf { .. }
                        if k >= 1
                            && !(matches!(op, IntOp::Bfi) && k == 1)
                            && !(matches!(op, IntOp::Shf { .. }) && k == 1) =>
                    {
                        32
                    }
                    _ => bits,
                };
                self.to64(*v, b)
            })
            .collect();
        let r = self.call_lanes(Helper::Int, inst.clone(), &a, None);
        let dbits = if matches!(op, IntOp::MulWide | IntOp::MadWide) {
            bits * 2
        } else if matches!(op, IntOp::Popc | IntOp::Clz | IntOp::Bfind { .. }) {
            32
        } else {
            bits
        };
        let r = self.conv(&r, 64, dbits, false);
        self.set(dst, &r, dbits, false, exec);
    }

    /// Flush f32 subnormals to signed zero.
    pub(crate) fn ftz(&mut self, x: &str, t: Ty) -> String {
        if t != Ty::F32 {
            return x.to_string();
        }
        let a = self.t();
        let c = self.t();
        let z = self.t();
        let r = self.t();
        self.line(&format!(
            "{a} = call <{W} x float> @llvm.fabs.v{W}f32(<{W} x float> {x})"
        ));
        self.line(&format!(
            "{c} = fcmp olt <{W} x float> {a}, {}",
            fsplat::<W>(t, "0x3810000000000000")
        ));
        self.line(&format!("{z} = call <{W} x float> @llvm.copysign.v{W}f32(<{W} x float> zeroinitializer, <{W} x float> {x})"));
        self.line(&format!(
            "{r} = select <{W} x i1> {c}, <{W} x float> {z}, <{W} x float> {x}"
        ));
        r
    }

    /// NaN results become the canonical NaN, as on the GPU.
    pub(crate) fn canon(&mut self, x: &str, t: Ty) -> String {
        let c = self.t();
        let r = self.t();
        let ft = fty(t);
        self.line(&format!("{c} = fcmp uno <{W} x {ft}> {x}, {x}"));
        // The canonical NaN as a bit pattern (float literals cannot say it).
        let (ib, bits) = if t == Ty::F64 {
            (64, 0x7fff_ffff_ffff_ffffu64)
        } else {
            (32, 0x7fff_ffff)
        };
        let nanv = self.t();
        self.line(&format!(
            "{nanv} = bitcast {} {} to <{W} x {ft}>",
            vt::<W>(ib),
            sc::<W>(ib, bits)
        ));
        self.line(&format!(
            "{r} = select <{W} x i1> {c}, <{W} x {ft}> {nanv}, <{W} x {ft}> {x}"
        ));
        r
    }

    pub(crate) fn fval(&mut self, v: Value, t: Ty) -> String {
        let bits = t.bits();
        let x = self.val_raw(v, bits);
        let f = self.t();
        self.line(&format!(
            "{f} = bitcast {} {x} to <{W} x {}>",
            vt::<W>(bits),
            fty(t)
        ));
        f
    }

    pub(crate) fn fset(&mut self, dst: Reg, f: &str, t: Ty, exec: &str) {
        let bits = t.bits();
        let x = self.t();
        self.line(&format!(
            "{x} = bitcast <{W} x {}> {f} to {}",
            fty(t),
            vt::<W>(bits)
        ));
        self.set(dst, &x, bits, false, exec);
    }

    /// `div.approx.f32` exactly as warpfold-fp defines it: the rounded
    /// quotient, except a signed zero (NaN for infinite or NaN `a`) for
    /// 2^126 < |b| < inf, and `a * (1/b)` for subnormal `b`.
    fn div_approx_f32(&mut self, a: &str, b: &str, ftz: bool) -> String {
        let f = &format!("<{W} x float>");
        let big = fsplat::<W>(Ty::F32, "0x47D0000000000000"); // 2^126
        let inf = fsplat::<W>(Ty::F32, "0x7FF0000000000000");
        let tiny = fsplat::<W>(Ty::F32, "0x3810000000000000"); // 2^-126
        let (ab, q, huge_lo, huge_hi, huge) = (self.t(), self.t(), self.t(), self.t(), self.t());
        self.line(&format!("{ab} = call {f} @llvm.fabs.v{W}f32({f} {b})"));
        self.line(&format!("{q} = fdiv {f} {a}, {b}"));
        self.line(&format!("{huge_lo} = fcmp ogt {f} {ab}, {big}"));
        self.line(&format!("{huge_hi} = fcmp olt {f} {ab}, {inf}"));
        self.line(&format!("{huge} = and <{W} x i1> {huge_lo}, {huge_hi}"));
        let mut res = q;
        if !ftz {
            let (sub_lo, sub_hi, sub, rc, m, sel) =
                (self.t(), self.t(), self.t(), self.t(), self.t(), self.t());
            self.line(&format!("{sub_lo} = fcmp olt {f} {ab}, {tiny}"));
            self.line(&format!("{sub_hi} = fcmp one {f} {ab}, zeroinitializer"));
            self.line(&format!("{sub} = and <{W} x i1> {sub_lo}, {sub_hi}"));
            self.line(&format!(
                "{rc} = fdiv {f} {}, {b}",
                fsplat::<W>(Ty::F32, "1.0")
            ));
            self.line(&format!("{m} = fmul {f} {a}, {rc}"));
            self.line(&format!(
                "{sel} = select <{W} x i1> {sub}, {f} {m}, {f} {res}"
            ));
            res = sel;
        }
        let (aa, afin, prod, z, hz, nan, out) = (
            self.t(),
            self.t(),
            self.t(),
            self.t(),
            self.t(),
            self.t(),
            self.t(),
        );
        self.line(&format!("{aa} = call {f} @llvm.fabs.v{W}f32({f} {a})"));
        self.line(&format!("{afin} = fcmp olt {f} {aa}, {inf}"));
        self.line(&format!("{prod} = fmul {f} {a}, {b}"));
        self.line(&format!(
            "{z} = call {f} @llvm.copysign.v{W}f32({f} zeroinitializer, {f} {prod})"
        ));
        self.line(&format!(
            "{nan} = bitcast <{W} x i32> {} to {f}",
            sc::<W>(32, 0x7fff_ffff)
        ));
        self.line(&format!(
            "{hz} = select <{W} x i1> {afin}, {f} {z}, {f} {nan}"
        ));
        self.line(&format!(
            "{out} = select <{W} x i1> {huge}, {f} {hz}, {f} {res}"
        ));
        out
    }

    /// Inline float arithmetic for f32/f64 in round-to-nearest; `false`
    /// when the operation needs the exact per-lane helper.
    pub(crate) fn float_inline(
        &mut self,
        op: FloatOp,
        t: Ty,
        dst: Reg,
        args: &[Value],
        round: Round,
        ftz: bool,
        sat: bool,
        exec: &str,
    ) -> bool {
        if !matches!(t, Ty::F32 | Ty::F64) {
            return false;
        }
        let nearest = round == Round::Nearest;
        let simple = match op {
            FloatOp::Add | FloatOp::Sub | FloatOp::Mul | FloatOp::Fma => nearest,
            FloatOp::Div(FloatKind::Rounded(Round::Nearest)) | FloatOp::Div(FloatKind::Full) => {
                true
            }
            FloatOp::Div(FloatKind::Approx) => t == Ty::F32,
            FloatOp::Sqrt(FloatKind::Rounded(Round::Nearest))
            | FloatOp::Sqrt(FloatKind::Approx) => true,
            FloatOp::Abs | FloatOp::Neg => true,
            FloatOp::Min { nan: false } | FloatOp::Max { nan: false } => true,
            // The interpreter's approximations are IEEE operations in f64 or
            // libm calls (see warpfold-fp `approx`), so these forms give the
            // same bits.
            FloatOp::Rcp(FloatKind::Approx) => t == Ty::F32,
            FloatOp::Rcp(FloatKind::Rounded(Round::Nearest)) => true,
            FloatOp::Rsqrt => t == Ty::F32 || !ftz,
            FloatOp::Ex2 | FloatOp::Lg2 | FloatOp::Sin | FloatOp::Cos => t == Ty::F32,
            _ => false,
        };
        if !simple {
            return false;
        }
        let ftype = format!("<{W} x {}>", fty(t));
        let mut xs = Vec::new();
        // abs/neg/copysign show their operand's NaN payload: it must be the
        // canonical one the GPU's arithmetic made.
        // A lazily canonical negation is read by arithmetic alone (see
        // `lazily_canonical_floats`), which hides any NaN's bits.
        let dst_is_float = self.float_reg[dst.0 as usize] == Some(t);
        let keeps_payload = matches!(op, FloatOp::Abs | FloatOp::Neg | FloatOp::Copysign)
            && !(op == FloatOp::Neg && dst_is_float);
        for a in args {
            let f = if keeps_payload {
                let x = self.val(*a, t.bits());
                self.def(&format!(
                    "bitcast {} {x} to <{W} x {}>",
                    vt::<W>(t.bits()),
                    fty(t)
                ))
            } else {
                self.fval(*a, t)
            };
            xs.push(if ftz { self.ftz(&f, t) } else { f });
        }
        let sfx = &if t == Ty::F64 {
            format!("v{W}f64")
        } else {
            format!("v{W}f32")
        };
        let one = fsplat::<W>(t, "1.0");
        let mut r = match op {
            FloatOp::Add => self.def(&format!("fadd {ftype} {}, {}", xs[0], xs[1])),
            FloatOp::Sub => self.def(&format!("fsub {ftype} {}, {}", xs[0], xs[1])),
            FloatOp::Mul => self.def(&format!("fmul {ftype} {}, {}", xs[0], xs[1])),
            FloatOp::Fma => self.def(&format!(
                "call {ftype} @llvm.fma.{sfx}({ftype} {}, {ftype} {}, {ftype} {})",
                xs[0], xs[1], xs[2]
            )),
            FloatOp::Div(FloatKind::Approx) => self.div_approx_f32(&xs[0], &xs[1], ftz),
            FloatOp::Div(_) => self.def(&format!("fdiv {ftype} {}, {}", xs[0], xs[1])),
            FloatOp::Rcp(_) => self.def(&format!("fdiv {ftype} {one}, {}", xs[0])),
            // sqrt then reciprocal, each rounded (warpfold-fp's definition).
            FloatOp::Rsqrt => {
                let s = self.def(&format!("call {ftype} @llvm.sqrt.{sfx}({ftype} {})", xs[0]));
                self.def(&format!("fdiv {ftype} {one}, {s}"))
            }
            // f32 only: libm's f64 function, rounded once to f32.
            FloatOp::Ex2 | FloatOp::Lg2 | FloatOp::Sin | FloatOp::Cos => {
                let name = match op {
                    FloatOp::Ex2 => "exp2",
                    FloatOp::Lg2 => "log2",
                    FloatOp::Sin => "sin",
                    _ => "cos",
                };
                let d = &format!("<{W} x double>");
                let x = self.def(&format!("fpext {ftype} {} to {d}", xs[0]));
                let q = self.def(&format!("call {d} @llvm.{name}.v{W}f64({d} {x})"));
                self.def(&format!("fptrunc {d} {q} to {ftype}"))
            }
            FloatOp::Sqrt(_) => {
                self.def(&format!("call {ftype} @llvm.sqrt.{sfx}({ftype} {})", xs[0]))
            }
            FloatOp::Abs => self.def(&format!("call {ftype} @llvm.fabs.{sfx}({ftype} {})", xs[0])),
            FloatOp::Neg => self.def(&format!("fneg {ftype} {}", xs[0])),
            FloatOp::Min { .. } | FloatOp::Max { .. } => {
                let (name, pick) = if matches!(op, FloatOp::Min { .. }) {
                    ("minnum", "or")
                } else {
                    ("maxnum", "and")
                };
                let m = self.def(&format!(
                    "call {ftype} @llvm.{name}.{sfx}({ftype} {}, {ftype} {})",
                    xs[0], xs[1]
                ));
                // PTX orders -0.0 below +0.0; LLVM's minnum and maxnum may
                // return either zero (x86's min and max give the second
                // operand). Equal operands give their bits' OR for min (a
                // -0.0 wins) and AND for max (a +0.0 wins), which for
                // other equal values is the value itself.
                let it = vt::<W>(t.bits());
                let eq = self.def(&format!("fcmp oeq {ftype} {}, {}", xs[0], xs[1]));
                let a = self.def(&format!("bitcast {ftype} {} to {it}", xs[0]));
                let b = self.def(&format!("bitcast {ftype} {} to {it}", xs[1]));
                let z = self.def(&format!("{pick} {it} {a}, {b}"));
                let z = self.def(&format!("bitcast {it} {z} to {ftype}"));
                self.def(&format!("select <{W} x i1> {eq}, {ftype} {z}, {ftype} {m}"))
            }
            _ => unreachable!("filtered above"),
        };
        // abs/neg keep NaN payloads (as the interpreter does); arithmetic
        // gives the canonical NaN.
        if !matches!(op, FloatOp::Abs | FloatOp::Neg) && !dst_is_float {
            r = self.canon(&r, t);
        }
        if ftz {
            r = self.ftz(&r, t);
        }
        if sat {
            // clamp to [0, 1], NaN -> 0
            let lo = self.t();
            let hi = self.t();
            let nanz = self.t();
            let isn = self.t();
            self.line(&format!("{isn} = fcmp uno {ftype} {r}, {r}"));
            self.line(&format!(
                "{nanz} = select <{W} x i1> {isn}, {ftype} zeroinitializer, {ftype} {r}"
            ));
            self.line(&format!(
                "{lo} = call {ftype} @llvm.maxnum.{sfx}({ftype} {nanz}, {ftype} zeroinitializer)"
            ));
            self.line(&format!(
                "{hi} = call {ftype} @llvm.minnum.{sfx}({ftype} {lo}, {ftype} {})",
                fsplat::<W>(t, "1.0")
            ));
            // -0.0 -> +0.0 (maxnum may keep either zero).
            r = self.def(&format!("fadd {ftype} {hi}, zeroinitializer"));
        }
        self.fset(dst, &r, t, exec);
        true
    }
}

/// Blocks times registers live across them above which those registers
/// stay in memory (see `emit`); `WARPFOLD_REGS_IN_STATE=0|1` forces it.
const REGS_IN_STATE_ABOVE: usize = 800;

/// Registers live across blocks stay in the warp state when the kernel has
/// CTA barriers (every barrier returns each warp to the driver, which would
/// save and restore them all) or is large; barrier-free loops keep their
/// loop-carried values in registers.
fn regs_in_state<const W: u32>(
    p: &Prepared,
    reg_bits: &[u32],
    g: &Gen<W>,
    has_barriers: bool,
) -> bool {
    if let Ok(v) = std::env::var("WARPFOLD_REGS_IN_STATE") {
        return v == "1";
    }
    let saved = (0..reg_bits.len()).filter(|&i| g.saved(i)).count();
    has_barriers || p.order.len() * saved > REGS_IN_STATE_ABOVE
}

/// Registers the code keeps as vectors whatever their lane form:
/// predicates (masks) and floats whose NaNs are made canonical where read
/// (see `uniform::lazily_canonical_floats`).
pub(crate) fn vector_registers(reg_bits: &[u32], float_reg: &[Option<Ty>]) -> Vec<bool> {
    reg_bits
        .iter()
        .zip(float_reg)
        .map(|(&b, f)| b == 1 || f.is_some())
        .collect()
}

/// Whether registers may be kept as one scalar per block row (see
/// `Gen::rows`); `WARPFOLD_ROW_REGS=off` keeps them as vectors.
fn rows_knob() -> bool {
    std::env::var("WARPFOLD_ROW_REGS").map_or(true, |v| v != "off")
}

/// Generate the warp function for `p` (kernel `kernel` of `m`).
pub fn emit<const W: u32>(
    m: &Module,
    p: &Prepared,
    layout: &SharedLayout,
    shape: Shape,
    grid_fits: bool,
    cpu: &str,
    features: &str,
) -> Result<Emitted, crate::prepare::Unsupported> {
    let f = &p.func;
    let reg_bits: Vec<u32> = f.regs.values().map(|r| reg_bits(r.ty)).collect();
    let liveness = crate::uniform::liveness(p);
    let plain = crate::uniform::plain_blocks(&p.func);
    let forms = crate::lanes::lane_forms(m, p, shape, grid_fits, W, &liveness);
    let float_reg = crate::uniform::lazily_canonical_floats(p);
    let row_width = shape[0];
    let rows_apply = crate::lanes::row_width(p, shape, W).is_some();
    let rows = if rows_apply && rows_knob() {
        crate::lanes::row_forms(
            m,
            p,
            (shape, grid_fits, row_width),
            &liveness,
            &crate::lanes::Warp {
                forms: &forms.forms,
                convergent: &forms.convergent,
                vectors: &vector_registers(&reg_bits, &float_reg),
            },
        )
    } else {
        vec![None; reg_bits.len()]
    };
    ROW_REGS.with(|c| c.set(c.get() + rows.iter().flatten().count()));
    let (reg_offsets, jump_offsets, mut off) = state_layout::<W>(
        &reg_bits,
        &forms.forms,
        &rows,
        W / row_width.max(1),
        &liveness.anywhere,
    );
    let in_loop = blocks_in_loops(p);
    let grid_stride = crate::grid_stride::grid_stride_blocks(p, &in_loop);
    let one_stream = cta_stream(p, &in_loop, features);
    let prefetching_loads = p.order.iter().enumerate().any(|(id, b)| {
        crate::lower::stride_prefetch_for(in_loop[id], grid_stride[id] > 0, one_stream)
            && f.blocks[*b].insts.iter().any(|i| {
                matches!(
                    i.kind,
                    InstKind::Ld {
                        space: Space::Global,
                        ..
                    }
                )
            })
    });
    let stride_at = if prefetching_loads { off } else { 0 };
    if prefetching_loads {
        off += 8 * STRIDE_SLOTS;
        off = off.div_ceil(128) * 128;
    }
    let state_bytes = off;
    let row_lanes = if rows_apply {
        crate::lanes::forms_with_unplaced_jumps(m, p, shape, grid_fits, row_width, &liveness)
    } else {
        Vec::new()
    };
    let mut g = Gen::<W> {
        m,
        p,
        layout,
        out: String::new(),
        n: 0,
        descs: Vec::new(),
        reg_bits: reg_bits.clone(),
        lanes: forms.forms,
        row_lanes,
        row_width,
        rows,
        jumps: forms.jumps,
        convergent: forms.convergent,
        cur_convergent: false,
        earliest: forms.earliest_after_yield,
        cur_earliest: false,
        shape,
        live_in_one: crate::uniform::live_in_one_block(p, &liveness, &plain),
        plain,
        cur_block: None,
        live: liveness.anywhere,
        remat: Vec::new(),
        guarded: false,
        float_reg: float_reg.clone(),
        own_slots: crate::own_slots::own_slots(p, shape, &float_reg),
        deferral: crate::deferred_red::deferral(p).filter(|_| crate::deferred_red::enabled()),
        keep_nans: false,
        cur_id: 0,
        checks: Vec::new(),
        whole_copy: Vec::new(),
        unbudgeted_bytes: 0,
        regs_in_state: false,
        avx512: features.contains("+avx512f"),
        avx2: features.contains("+avx2"),
        tri_body: Vec::new(),
        diamond_first: Vec::new(),
        consts: crate::uniform::constants(&p.func),
        possible: Vec::new(),
        demanded: Vec::new(),
        slow_loads: std::collections::BTreeSet::new(),
        slow_index_loads: std::collections::BTreeSet::new(),
        mask_bits: std::collections::HashMap::new(),
        few_loads: std::collections::BTreeSet::new(),
        few_stores: std::collections::BTreeSet::new(),
        jump_helpers: std::collections::BTreeSet::new(),
        allocas: String::new(),
        lean_barriers: false,
        counted_barriers: false,
        structured_only: false,
        cold_general: false,
        small_regions: false,
        hot_anyway: crate::region::blocks(p, 0)
            .into_iter()
            .zip(blocks_in_barrier_free_loops(p))
            .map(|(first, free_loop)| first || free_loop)
            .collect(),
        in_loop,
        one_stream,
        grid_stride,
        cur_inst: 0,
        stride_slots: std::collections::HashMap::new(),
        stride_at,
    };
    (g.tri_body, g.diamond_first) = if_bodies(p);
    g.possible = crate::demanded::possible_lanes(p, &g.lanes, W);
    // Only shuffles read it (a missing entry: every lane).
    let shuffles = p.order.iter().any(|b| {
        f.blocks[*b]
            .insts
            .iter()
            .any(|i| matches!(i.kind, InstKind::Shfl { .. }))
    });
    if shuffles {
        g.demanded = crate::demanded::demanded_lanes(p, &g.lanes, &g.consts, &g.possible, W);
    }
    let (mut remat, remat_insts) = crate::uniform::rematerialisable(m, p);
    // Uniform and affine registers are scalars: keeping one costs less
    // than computing it again on every resume. Vectors are recomputed, with
    // the scalars they are computed from (walking back from the last).
    // Where every warp runs its regions with its index a constant (the
    // unrolled rounds), scalars computed from `%tid` and constants fold to
    // constants: recomputing them is free and keeps them out of the state.
    // A register moved a constant and live after a barrier costs nothing
    // to set again where a region starts, and its known value folds there
    // (SGEMM's `0.0` for tiles past the edge: no state slot, and no NaN
    // test where the float is read).
    let recompute_all = unroll_planned::<W>(p, shape);
    let mut needed: Vec<bool> = (0..remat.len())
        .map(|i| recompute_all || !g.compact(i))
        .collect();
    for inst in &remat_insts {
        if let InstKind::Mov {
            dst,
            src: Value::Imm(_),
            ..
        } = inst.kind
        {
            let i = dst.0 as usize;
            needed[i] |= p
                .barriers()
                .any(|(_, t)| liveness.live_in[t.0 as usize][i]);
        }
    }
    let mut kept = Vec::new();
    for inst in remat_insts.into_iter().rev() {
        if crate::uniform::defs(&inst.kind)
            .iter()
            .any(|d| needed[d.0 as usize])
        {
            for r in crate::uniform::uses(&inst) {
                needed[r.0 as usize] = true;
            }
            kept.push(inst);
        }
    }
    kept.reverse();
    let remat_insts = kept;
    for (i, r) in remat.iter_mut().enumerate() {
        *r &= needed[i];
    }
    g.remat = remat;
    let has_barriers = p.barriers().next().is_some();
    // Plain barriers are released inside the round loop; `bar.red`
    // results are combined by the driver.
    g.counted_barriers = p
        .barriers()
        .any(|(k, _)| crate::prepare::counted_barrier(k));
    let bar_red = p.barriers().any(|(k, _)| {
        matches!(
            k,
            InstKind::Bar {
                kind: BarKind::Red(_),
                ..
            }
        )
    });
    let release = has_barriers && !g.counted_barriers && !bar_red;
    g.lean_barriers = release;
    g.regs_in_state = regs_in_state(p, &reg_bits, &g, has_barriers);
    let ctx = WarpCtx {
        reg_bits: &reg_bits,
        reg_offsets: &reg_offsets,
        jump_offsets: &jump_offsets,
        at_entry: &liveness.at_entry,
        live_in: &liveness.live_in,
        after_bar: (0..reg_bits.len())
            .map(|i| p.barriers().any(|(_, t)| liveness.live_in[t.0 as usize][i]))
            .collect(),
        remat_insts: &remat_insts,
        has_barriers,
        bar_red,
    };
    // With regions, full warps run there after a barrier and the general
    // function is the fallback (partial warps, warps that leave a lean
    // round): code there may trade speed for size (see `Gen::cold`).
    // Unless it is too large for regions: then it runs the whole kernel.
    g.cold_general = g.lean_barriers && crate::region::enabled();
    g.small_regions = g.cold_general && regions_all_small(p);
    let mut warp_fns = warp_function(&mut g, &ctx, None)?;
    let regions_wanted = warp_fns.len() < INLINE_BELOW_BYTES || g.small_regions;
    if g.cold_general && !regions_wanted {
        g.cold_general = false;
        warp_fns = warp_function(&mut g, &ctx, None)?;
    }
    g.cold_general = false;
    let general_bytes = warp_fns.len();
    // The fast path of plain barriers: after each lean release the round
    // loop runs the region after the barrier through a function of its own
    // (see `region`).
    let mut region_sites = Vec::new();
    // PTX instructions (and terminators) of each region, by its block.
    let mut region_insts = std::collections::HashMap::new();
    // The one barrier site each region can end at, if only one.
    let mut region_next = std::collections::HashMap::new();
    // Whether each region may run two warps at once (see `warp_pairs`).
    let mut region_pairs = std::collections::HashMap::new();
    // Not for warp functions too large to inline: their code generation
    // already dominates, and twice as much of it costs more than regions
    // save (the bitonic sort: 1.0 -> 2.1 s of JIT for 10% faster runs).
    if g.lean_barriers && crate::region::enabled() && regions_wanted {
        let mut done = std::collections::HashSet::new();
        let warp_bytes = (warp_fns.len() * 2).max(REGION_BYTES_FLOOR);
        let line_room = (crate::ir_line_limit() * 9 / 10).saturating_sub(warp_fns.lines().count());
        let (mut added_bytes, mut added_lines) = (0, 0);
        for (id, succ) in barrier_regions(p) {
            if !done.contains(&succ) {
                // Within a budget: at most twice as much code again as the
                // warp function (JIT time), and under the size limit. At
                // 1.5 times scan's last region (of 17) missed it by a few
                // hundred bytes, and a site without a region function
                // stops every round's unrolling (4.2 -> 6 ms).
                let region = Region::new(p, ctx.live_in, ctx.remat_insts, succ);
                let region_inside = region.inside.clone();
                g.structured_only = true;
                let text = in_ssa(&mut g, |g| warp_function(g, &ctx, Some(region)));
                g.structured_only = false;
                let text = text?;
                let lines = text.lines().count();
                // Whole-warp copies and narrow loads do not count: they
                // save more run time than their code generation costs,
                // and counting them would leave later regions without
                // functions (scan: 4.2 -> 6 ms).
                let bytes = text.len() - g.unbudgeted_bytes.min(text.len());
                if added_bytes + bytes > warp_bytes || added_lines + lines > line_room {
                    break;
                }
                added_bytes += bytes;
                added_lines += lines;
                region_insts.insert(succ, insts_inside(p, &region_inside));
                region_next.insert(succ, only_barrier(p, &region_inside));
                region_pairs.insert(succ, crate::warp_pairs::pairs_well(p, &region_inside));
                warp_fns.push_str(&text);
                done.insert(succ);
            }
            // The site of a barrier is 1 + its block's id (see `Bar`).
            region_sites.push(RegionSite {
                site: id as u32 + 1,
                succ,
                unrolled: false,
                next: region_next[&succ],
                pair: false,
            });
        }
        if g.small_regions && general_bytes >= INLINE_BELOW_BYTES && !done.is_empty() {
            SMALL_REGION_KERNELS.with(|c| c.set(c.get() + 1));
        }
    }
    // A full warp's first call goes through a function of its own as well:
    // from the entry block with every lane live (see `fresh_prologue`).
    // Only for small kernels, where per-warp overheads weigh most and the
    // second copy adds little JIT time (the warp-shuffle reduction: 5.5 ->
    // 3.8 ms, 25 -> 35 ms of JIT; a large stencil's JIT grew 200 -> 310 ms
    // for no measurable gain).
    let mut fresh_fn = false;
    // Lean rounds of CTAs of a few full warps are unrolled over the warps.
    let threads: u32 = shape.iter().product();
    let unrolled =
        (threads.is_multiple_of(W) && threads / W <= UNROLL_WARPS_UP_TO && unroll_enabled())
            .then_some(threads / W);
    // The fresh region's PTX instructions and the one barrier it can end at.
    let region = Region::fresh(p, ctx.live_in);
    let fresh_insts = insts_inside(p, &region.inside);
    let fresh_next = only_barrier(p, &region.inside);
    // Larger kernels too when the first round may be unrolled with the
    // rounds after it: the tree reduction's first round through the general
    // function was half its time.
    let may_unroll_fresh = unrolled.is_some()
        && !region_sites.is_empty()
        && fresh_insts <= UNROLL_FRESH_INSTS
        && fresh_unroll_enabled();
    // The warps of a barrier-free CTA of whole warps (see `fresh_loop`).
    let barrier_free_warps =
        (!has_barriers && threads.is_multiple_of(W) && threads / W <= 32).then_some(threads / W);
    // A barrier-free kernel of whole warps runs the function from a loop
    // of its own (`fresh_loop_blocks`), where it pays off in larger
    // kernels too: structured code instead of the general function's
    // dispatcher for every warp (CSR SpMV: 15% fewer samples in compiled
    // code, JIT 216 -> 463 ms).
    let fresh_below = if barrier_free_warps.is_some() && fresh_loop_enabled() {
        FRESH_LOOP_BELOW_BYTES
    } else {
        FRESH_BELOW_BYTES
    };
    if crate::region::fresh_enabled() && (general_bytes < fresh_below || may_unroll_fresh) {
        let line_room = crate::ir_line_limit() * 9 / 10;
        g.structured_only = true;
        let text = in_ssa(&mut g, |g| warp_function(g, &ctx, Some(region)));
        g.structured_only = false;
        let text = text?;
        if warp_fns.lines().count() + text.lines().count() <= line_room {
            warp_fns.push_str(&text);
            fresh_fn = true;
        }
    }
    let mut ir = String::new();
    ir.push_str("target datalayout = \"e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128\"\n");
    ir.push_str("target triple = \"x86_64-unknown-linux-gnu\"\n\n");
    let mut declared = std::collections::HashSet::new();
    let mut declare = |ir: &mut String, line: &str| {
        // Narrow warps' fixed-width declarations can repeat W-wide ones.
        if line.is_empty() || declared.insert(line.to_string()) {
            ir.push_str(line);
            ir.push('\n');
        }
    };
    for line in decls::<W>().lines() {
        declare(&mut ir, line);
    }
    // Masked loads of the windows of strided narrow loads
    // (`lower::load_strided`) and of interleaved groups of 2 or 4 elements
    // a lane, which are also stored masked (see `interleave`).
    let windows = (2..=8).flat_map(|f| [(8, f), (16, f)]).chain([(32, 2)]);
    let groups = [8, 16, 32, 64].into_iter().flat_map(|b| [(b, 2), (b, 4)]);
    for (bits, f) in windows.chain(groups.clone()) {
        let n = W * f;
        declare(
            &mut ir,
            &format!("declare <{n} x i{bits}> @llvm.masked.load.v{n}i{bits}.p0v{n}i{bits}(<{n} x i{bits}>*, i32, <{n} x i1>, <{n} x i{bits}>)"),
        );
    }
    // Rows of load groups, masked by a lane each (`lower::emit_load_group`).
    declare(
        &mut ir,
        "declare <16 x i32> @llvm.masked.load.v16i32.p0v16i32(<16 x i32>*, i32, <16 x i1>, <16 x i32>)",
    );
    for (bits, f) in groups {
        let n = W * f;
        declare(&mut ir, &crate::lower::masked_store_decl(n, bits));
    }
    // Masked stores of shared windows (`lower::scatter_window`).
    for bits in [32, 64] {
        for n in (8..=crate::SHARED_SLACK as u32 * 8 / bits).step_by(8) {
            declare(&mut ir, &crate::lower::masked_store_decl(n, bits));
        }
    }
    let prelude_end = ir.len();
    ir.push_str(&warp_fns);
    let general_end = prelude_end + general_bytes;
    let mut fresh = if fresh_fn {
        FreshRound::Loop
    } else {
        FreshRound::None
    };
    if let (Some(n), false) = (unrolled, region_sites.is_empty()) {
        // Each unrolled site inlines its region once per warp: only tiny
        // regions (a step of a tree reduction, say), all sites or none,
        // within a budget of instructions for JIT time. Larger regions
        // lose: sgemm's tile loop unrolled over 8 warps runs 2x slower.
        // The first round too when its region is as small.
        let sizes: Vec<usize> = region_sites.iter().map(|r| region_insts[&r.succ]).collect();
        let fresh_too = fresh_fn && may_unroll_fresh;
        let mut total: usize = sizes.iter().map(|s| s * n as usize).sum();
        if fresh_too {
            total += fresh_insts * n as usize;
        }
        if sizes.iter().all(|&s| s <= UNROLL_REGION_INSTS) && total <= UNROLL_TOTAL_INSTS {
            for site in &mut region_sites {
                site.unrolled = true;
            }
            if fresh_too && may_unroll_fresh {
                fresh = FreshRound::Unrolled { next: fresh_next };
            }
        }
    }
    // A barrier-free kernel runs whole in its first round: with a few full
    // warps of a small kernel, that round is unrolled over them too, the
    // warp index a constant in each copy and no loop over the warps (a
    // CTA's fixed cost weighs on kernels of many small CTAs).
    if fresh_fn
        && unrolled.is_some()
        && !has_barriers
        && fresh_insts <= UNROLL_FRESH_INSTS
        && fresh_unroll_enabled()
    {
        fresh = FreshRound::Unrolled { next: None };
    }
    if unrolled.is_some() && region_sites.iter().any(|r| r.unrolled) {
        let _ = writeln!(ir, "{UNROLLED_MARK}");
        let _ = writeln!(ir, "{SHARED_BYTES_MARK}{}", layout.static_bytes);
    }
    // Regions the round loop runs warp after warp may take two at a time
    // (GPU warps: narrower ones are slices of one, see `warp_pairs`).
    if W == 32 && threads.div_ceil(W) >= 2 && crate::warp_pairs::enabled() {
        for site in &mut region_sites {
            site.pair = !site.unrolled && region_pairs[&site.succ];
        }
    }
    if region_sites.iter().any(|r| r.pair) {
        ir.push_str(crate::warp_pairs::MARK_FN);
    }
    let chain = if region_sites.iter().any(|r| r.unrolled) {
        chain_copies(&g, &ctx, &region_sites)
    } else {
        ChainCopies::default()
    };
    ir.push_str(&cta_fn::<W>(
        release,
        g.avx512,
        &region_sites,
        fresh,
        unrolled,
        barrier_free_warps,
        state_bytes,
        &chain,
    ));
    let cta_end = ir.len();
    for &(bits, signed) in &g.slow_index_loads {
        ir.push_str(&crate::indexed::slow_load_fn::<W>(bits, signed));
    }
    for bits in &g.slow_loads {
        ir.push_str(&crate::lower::slow_load_fn::<W>(*bits, g.avx512));
    }
    for bits in &g.few_loads {
        let max = crate::lower::few_lanes_max(&g, *bits);
        ir.push_str(&crate::lower::few_load_fn::<W>(*bits, max));
    }
    for bits in &g.few_stores {
        let max = crate::lower::few_lanes_max(&g, *bits);
        ir.push_str(&crate::lower::few_store_fn::<W>(*bits, max));
    }
    for (store, bits) in &g.jump_helpers {
        ir.push_str(&crate::past_jump::past_jump_fn::<W>(*store, *bits));
    }
    let _ = writeln!(
        ir,
        "attributes #0 = {{ nounwind \"target-cpu\"=\"{cpu}\" \"target-features\"=\"{features}\" \"prefer-vector-width\"=\"512\" \"min-legal-vector-width\"=\"512\" }}"
    );
    let modules = split_modules(&ir, prelude_end, general_end, cta_end);
    Ok(Emitted {
        ir,
        modules,
        state_bytes,
        descs: g.descs,
        deferral: g.deferral,
    })
}

/// Bytes of IR each side needs before a kernel's module is split in two.
const SPLIT_ABOVE_BYTES: usize = 60_000;

/// The module as two that LLVM compiles at once on two threads (code
/// generation is most of a kernel's JIT time and runs on one core): the
/// general warp function, called rather than inlined, and everything else
/// (the round loop with the region functions it inlines). Only when both
/// are large, so the call costs nothing next to a warp's run through it,
/// and there is a second core. `WARPFOLD_SPLIT=off` keeps one module.
/// `ir` is prelude (declarations) ..`prelude_end`, the general function
/// ..`general_end`, the other warp functions and the round loop
/// ..`cta_end`, then helpers both sides may call (internal to each).
fn split_modules(ir: &str, prelude_end: usize, general_end: usize, cta_end: usize) -> Vec<String> {
    let (prelude, general) = (&ir[..prelude_end], &ir[prelude_end..general_end]);
    let (rest, helpers) = (&ir[general_end..cta_end], &ir[cta_end..]);
    let cores = warpfold_interp::cores();
    let wanted = std::env::var("WARPFOLD_SPLIT").map_or(true, |v| v != "off");
    // Unrolled rounds run the first round through the general function
    // too, inlined once per warp (scan: 3.5 -> 5.1 ms called instead).
    let unrolled = rest.contains(UNROLLED_MARK);
    if !wanted
        || unrolled
        || cores < 2
        || general.len() < SPLIT_ABOVE_BYTES
        || rest.len() < SPLIT_ABOVE_BYTES
    {
        return vec![ir.to_string()];
    }
    let exported = general
        .replacen("define internal i32 @wf_warp(", "define i32 @wf_warp(", 1)
        .replacen(") alwaysinline #0", ") noinline #0", 1);
    let declared = "declare i32 @wf_warp(i8* noalias, i64*, i32, i32, i32)\n\n";
    vec![
        format!("{prelude}{exported}{helpers}"),
        format!("{prelude}{declared}{rest}{helpers}"),
    ]
}

/// `emit` for a region or first-round function with its registers in
/// allocas, promoted to SSA: these functions have no dispatcher loop (whose
/// joins made the general function's registers stay in the warp state),
/// so a value passed between blocks stays in a register, and only what the
/// function wrote goes back to the state when it leaves (a block reduction
/// stored each loaded value to the state and read it back).
fn in_ssa<const W: u32, T>(g: &mut Gen<W>, emit: impl FnOnce(&mut Gen<W>) -> T) -> T {
    let was = std::mem::replace(&mut g.regs_in_state, false);
    let out = emit(g);
    g.regs_in_state = was;
    out
}

/// What every variant of the warp function shares.
struct WarpCtx<'a> {
    reg_bits: &'a [u32],
    reg_offsets: &'a [usize],
    /// Where a register with a jump keeps the jump's lane (see `state_layout`).
    jump_offsets: &'a [usize],
    /// Registers live at the entry block (zeroed on a fresh start).
    at_entry: &'a [bool],
    /// Per block (by index): the registers live on entry.
    live_in: &'a [Vec<bool>],
    /// The registers live into some block right after a barrier.
    after_bar: Vec<bool>,
    remat_insts: &'a [Inst],
    has_barriers: bool,
    /// Some barrier is a `bar.red` (its shares live in the warp state).
    bar_red: bool,
}

impl WarpCtx<'_> {
    /// Whether region `r` gives register `i` its value: writes it, or (a
    /// first round) starts it at zero, read before any write.
    fn wrote(&self, r: &Region, i: usize) -> bool {
        r.defs[i] || (r.fresh && self.at_entry[i])
    }
}

/// The text of one warp function: `@wf_warp` (every entry: fresh start,
/// general state, lean barrier resume) or, for a `region`, a
/// `@wf_region{entry}` that resumes there after a lean barrier release
/// and holds only that region's blocks.
fn warp_function<const W: u32>(
    g: &mut Gen<W>,
    ctx: &WarpCtx,
    region: Option<Region>,
) -> Result<String, crate::prepare::Unsupported> {
    let (reg_bits, reg_offsets) = (ctx.reg_bits, ctx.reg_offsets);
    g.out = String::new();
    g.allocas = String::new();
    let name = match &region {
        None => "wf_warp".to_string(),
        Some(r) if r.fresh => "wf_fresh".to_string(),
        Some(r) => format!("wf_region{}", r.entry),
    };
    // Region and first-round functions read the registers live into them
    // from `%lr` and leave those live after their barrier there: the warp
    // state in the round loop, a scratch copy in the CTA function's
    // unrolled rounds (see `ChainSlots`).
    // The round loop passes the warp state as both: `%st` is `noalias`
    // only where there is no `%lr`.
    let (st, lr) = if region.is_some() {
        ("i8* %st", ", i8* %lr")
    } else {
        ("i8* noalias %st", "")
    };
    g.out.push_str(&format!(
        "define internal i32 @{name}({st}, i64* %env, i32 %warp, i32 %fresh_live, i32 %prev{lr}) ;INLINE\n#0 {{\nentry:\n;ALLOCAS\n"
    ));
    // Allocas for registers and warp bookkeeping (promoted to SSA by
    // mem2reg). In large kernels the registers live across blocks stay in
    // the warp state instead: SSA form for them means a phi per register
    // at every join of the dispatcher graph, and LLVM's register allocator
    // takes minutes on that; in memory they cost an L1 access per block,
    // code generation stays linear, and returning to the driver saves
    // nothing.
    for (i, b) in reg_bits.iter().enumerate() {
        if region.as_ref().is_some_and(|r| !r.regs[i]) {
            continue;
        }
        if g.regs_in_state && g.saved(i) {
            let (_, val) = g.saved_types(i, *b);
            let q = g.t();
            g.line(&format!(
                "{q} = getelementptr i8, i8* %st, i64 {}",
                reg_offsets[i]
            ));
            g.line(&format!("%r{i} = bitcast i8* {q} to {val}*"));
            if g.has_jump(i) {
                let q = g.t();
                g.line(&format!(
                    "{q} = getelementptr i8, i8* %st, i64 {}",
                    ctx.jump_offsets[i]
                ));
                g.line(&format!("%k{i} = bitcast i8* {q} to i32*"));
            }
        } else if g.scalar(i) {
            g.line(&format!("%r{i} = alloca i{b}"));
            if g.has_jump(i) {
                g.line(&format!("%k{i} = alloca i32"));
            }
        } else if g.row_reg(i).is_some() {
            g.line(&format!("%r{i} = alloca {}", g.row_ty(*b)));
        } else {
            g.line(&format!("%r{i} = alloca {}", vt::<W>(*b)));
        }
    }
    g.line(&format!("%next = alloca <{W} x i32>"));
    g.line(&format!("%mask = alloca <{W} x i1>"));
    // The same lanes as a bit mask: block ends test it against `live`
    // without turning the vector back into bits.
    g.line("%mask_bits = alloca i32");
    g.line("%live = alloca i32");
    g.line("%wait_coll = alloca i32");
    g.line("%wait_bar = alloca i32");
    g.line("%bar_site = alloca i32");
    g.line("%bar_me = alloca i32");
    g.line("%pick_max = alloca i32");
    g.line(&format!("%shfl_buf = alloca [{W} x i32], align 64"));
    g.line("%budget = alloca i32");
    g.line("%yielded = alloca i1");
    // Set while a latest-first pick is in effect: then runnable lanes may
    // sit at earlier blocks, and only the dispatcher knows where to go.
    g.line("%latest = alloca i1");
    g.line("store i1 false, i1* %latest");
    // Lanes waiting at the block after a triangle's body or a diamond's
    // arm (see `if_bodies`); zero everywhere else.
    g.line("%pend = alloca i32");
    // The block the general function's entry switch goes to (see
    // `dispatcher`).
    g.line("%enter_at = alloca i32");
    g.line("store i32 0, i32* %pend");
    g.line(&format!("store i32 {}, i32* %budget", yield_budget()));
    g.line("store i1 false, i1* %yielded");
    if let Some(r) = region.as_ref().filter(|r| r.fresh) {
        fresh_prologue(g, ctx, r);
    } else if let Some(r) = &region {
        // Resume after a lean release: every live lane at the region's
        // first block, nothing waiting (as `resume_bar`, with the block
        // known).
        region_prologue(g, ctx, r.entry)?;
    } else {
        general_prologue(g, ctx)?;
    }
    dispatcher_and_blocks(g, ctx, region.as_ref())
}

/// The entry of `@wf_region{entry}` (see `warp_function`).
///
/// The round loop calls it only for warps with all 32 lanes live: with the
/// masks constant, LLVM folds the masked forms of convergent code away.
fn region_prologue<const W: u32>(
    g: &mut Gen<W>,
    ctx: &WarpCtx,
    entry: u32,
) -> Result<(), crate::prepare::Unsupported> {
    let lv = full_bits::<W>();
    g.line(&format!("store i32 {lv}, i32* %live"));
    let rp = g.state_ptr(state::RESUME_AT, "i32");
    g.line(&format!("store i32 0, i32* {rp}"));
    let lm = g.mask_of_bits(&lv);
    let ats = g.splat("i32", &entry.to_string());
    let n0 = g.def(&format!(
        "select <{W} x i1> {lm}, <{W} x i32> {ats}, <{W} x i32> {}",
        sc::<W>(32, u64::from(DONE))
    ));
    g.line(&format!("store <{W} x i32> {n0}, <{W} x i32>* %next"));
    for name in ["wait_coll", "wait_bar", "bar_site", "pick_max"] {
        g.line(&format!("store i32 0, i32* %{name}"));
    }
    // Only what the region reads before writing (see `WarpCtx::live_in`).
    let live = &ctx.live_in[g.p.order[entry as usize].0 as usize];
    load_saved_regs_where(g, ctx, "%lr", |i| live[i]);
    recompute(g, ctx.remat_insts)?;
    g.store_mask(&lm, &lv);
    g.line(&format!("br label %B{entry}"));
    Ok(())
}

/// The entry of `@wf_fresh`: a full warp's first call, as the fresh start
/// of `general_prologue` with every lane live (so LLVM folds the masked
/// forms of convergent code away, as in regions after barriers).
fn fresh_prologue<const W: u32>(g: &mut Gen<W>, ctx: &WarpCtx, r: &Region) {
    let full = full_bits::<W>();
    g.line(&format!("store i32 {full}, i32* %live"));
    g.line(&format!(
        "store <{W} x i32> zeroinitializer, <{W} x i32>* %next"
    ));
    for name in ["wait_coll", "wait_bar", "bar_site", "pick_max"] {
        g.line(&format!("store i32 0, i32* %{name}"));
    }
    if ctx.has_barriers {
        barrier_bookkeeping(g, ctx);
    }
    // Zero what lanes may read before writing (see `general_prologue`).
    for (i, b) in ctx.reg_bits.iter().enumerate() {
        if !r.regs[i] || (g.regs_in_state && g.saved(i) && !ctx.at_entry[i]) {
            continue;
        }
        if g.scalar(i) {
            g.line(&format!("store i{b} 0, i{b}* %r{i}"));
        } else if g.row_reg(i).is_some() {
            let t = g.row_ty(*b);
            g.line(&format!("store {t} zeroinitializer, {t}* %r{i}"));
        } else {
            g.line(&format!(
                "store {} zeroinitializer, {}* %r{i}",
                vt::<W>(*b),
                vt::<W>(*b)
            ));
        }
    }
    let lm = g.mask_of_bits(&full);
    g.store_mask(&lm, &full);
    g.line("br label %B0");
}

/// Barrier bookkeeping the driver and the resume path read, as a fresh
/// start leaves it: no resume block, and `bar.red` shares empty (only in
/// kernels with `bar.red`: elsewhere nothing reads them, and a CTA of 8
/// warps spent 16 stores a launch on them).
fn barrier_bookkeeping<const W: u32>(g: &mut Gen<W>, ctx: &WarpCtx) {
    let red: &[(usize, u32)] = if ctx.bar_red {
        &[
            (state::RED_POPC, 0),
            (state::RED_AND, 1),
            (state::RED_OR, 0),
        ]
    } else {
        &[]
    };
    for &(o, v) in red.iter().chain(&[(state::RESUME_AT, 0)]) {
        let c = g.state_ptr(o, "i32");
        g.line(&format!("store i32 {v}, i32* {c}"));
    }
}

/// The entries of `@wf_warp`: a fresh start, the general state, and (with
/// lean barriers) the resume after a lean release.
fn general_prologue<const W: u32>(
    g: &mut Gen<W>,
    ctx: &WarpCtx,
) -> Result<(), crate::prepare::Unsupported> {
    let (reg_bits, remat_insts, has_barriers) = (ctx.reg_bits, ctx.remat_insts, ctx.has_barriers);
    // A first call (`fresh_live` = the warp's live lanes) starts every
    // live lane at the entry block with nothing waiting: no header to read.
    g.line("%is_fresh = icmp ne i32 %fresh_live, 0");
    if g.lean_barriers {
        // After a lean barrier exit (`BAR_CODE`) the general bookkeeping in
        // the state is stale: resume through `resume_bar`.
        g.line("br i1 %is_fresh, label %fresh, label %not_fresh");
        g.emit_label("not_fresh");
        g.line(&format!("%lean = icmp uge i32 %prev, {BAR_CODE}"));
        g.line("br i1 %lean, label %resume_bar, label %restore");
    } else {
        g.line("br i1 %is_fresh, label %fresh, label %restore");
    }
    g.emit_label("fresh");
    {
        let lm = g.mask_of_bits("%fresh_live");
        let n0 = g.t();
        g.line(&format!(
            "{n0} = select <{W} x i1> {lm}, <{W} x i32> zeroinitializer, <{W} x i32> {}",
            sc::<W>(32, u64::from(DONE))
        ));
        g.line(&format!("store <{W} x i32> {n0}, <{W} x i32>* %next"));
        g.line("store i32 %fresh_live, i32* %live");
        for name in ["wait_coll", "wait_bar", "bar_site", "pick_max"] {
            g.line(&format!("store i32 0, i32* %{name}"));
        }
        if has_barriers {
            barrier_bookkeeping(g, ctx);
        }
        // Registers no lane reads before writing need no zero; in the warp
        // state that saves real stores (allocas fold away anyway).
        for (i, b) in reg_bits.iter().enumerate() {
            if g.regs_in_state && g.saved(i) && !ctx.at_entry[i] {
                continue;
            }
            if g.scalar(i) {
                g.line(&format!("store i{b} 0, i{b}* %r{i}"));
            } else if g.row_reg(i).is_some() {
                let t = g.row_ty(*b);
                g.line(&format!("store {t} zeroinitializer, {t}* %r{i}"));
            } else {
                g.line(&format!(
                    "store {} zeroinitializer, {}* %r{i}",
                    vt::<W>(*b),
                    vt::<W>(*b)
                ));
            }
        }
        g.store_mask(&lm, "%fresh_live");
        g.line("br label %B0");
    }
    // Restore state.
    g.emit_label("restore");
    let np = g.state_ptr(state::NEXT, &vt::<W>(32));
    let nv = g.t();
    g.line(&format!(
        "{nv} = load <{W} x i32>, <{W} x i32>* {np}, align 4"
    ));
    g.line(&format!("store <{W} x i32> {nv}, <{W} x i32>* %next"));
    for (name, o) in [
        ("live", state::LIVE),
        ("wait_coll", state::WAIT_COLL),
        ("wait_bar", state::WAIT_BAR),
        ("bar_site", state::BAR_SITE),
        ("pick_max", state::PICK_MAX),
    ] {
        let c = g.state_ptr(o, "i32");
        let v = g.t();
        g.line(&format!("{v} = load i32, i32* {c}"));
        g.line(&format!("store i32 {v}, i32* %{name}"));
    }
    load_saved_regs(g, ctx);
    recompute(g, remat_insts)?;
    if !has_barriers {
        g.line("br label %dispatch");
    } else {
        // Straight back after a released barrier: all live lanes at one
        // known block.
        let rp = g.state_ptr(state::RESUME_AT, "i32");
        let ra = g.t();
        g.line(&format!("{ra} = load i32, i32* {rp}"));
        let wb = g.load_scalar("wait_bar", "i32");
        let pm = g.load_scalar("pick_max", "i32");
        let (c1, c2, c3, f1, fast) = (g.t(), g.t(), g.t(), g.t(), g.t());
        g.line(&format!("{c1} = icmp ne i32 {ra}, 0"));
        g.line(&format!("{c2} = icmp eq i32 {wb}, 0"));
        g.line(&format!("{c3} = icmp eq i32 {pm}, 0"));
        g.line(&format!("{f1} = and i1 {c1}, {c2}"));
        g.line(&format!("{fast} = and i1 {f1}, {c3}"));
        g.line(&format!(
            "br i1 {fast}, label %resume_fast, label %dispatch"
        ));
        g.emit_label("resume_fast");
        g.line(&format!("store i32 0, i32* {rp}"));
        let lv = g.load_scalar("live", "i32");
        let lm = g.mask_of_bits(&lv);
        g.store_mask(&lm, &lv);
        let at = g.t();
        g.line(&format!("{at} = sub i32 {ra}, 1"));
        enter_block(g, &at);
    }

    if g.lean_barriers {
        // Resume after a lean barrier exit, once the barrier is released:
        // every live lane goes on at the block after it, nothing waits.
        g.emit_label("resume_bar");
        let lp = g.state_ptr(state::LIVE, "i32");
        let lv = g.def(&format!("load i32, i32* {lp}"));
        g.line(&format!("store i32 {lv}, i32* %live"));
        let rp = g.state_ptr(state::RESUME_AT, "i32");
        let ra = g.t();
        g.line(&format!("{ra} = load i32, i32* {rp}"));
        g.line(&format!("store i32 0, i32* {rp}"));
        let at = g.t();
        g.line(&format!("{at} = sub i32 {ra}, 1"));
        let lm = g.mask_of_bits(&lv);
        let ats = g.splat("i32", &at);
        let n0 = g.t();
        g.line(&format!(
            "{n0} = select <{W} x i1> {lm}, <{W} x i32> {ats}, <{W} x i32> {}",
            sc::<W>(32, u64::from(DONE))
        ));
        g.line(&format!("store <{W} x i32> {n0}, <{W} x i32>* %next"));
        for name in ["wait_coll", "wait_bar", "bar_site", "pick_max"] {
            g.line(&format!("store i32 0, i32* %{name}"));
        }
        load_saved_regs(g, ctx);
        recompute(g, remat_insts)?;
        g.store_mask(&lm, &lv);
        enter_block(g, &at);
    }

    Ok(())
}

/// Blocks emitted twice: once for any group of lanes, once for every lane
/// of a full warp (ISPC's "all on" code). Branches and jumps that keep all
/// lanes of a full warp together go to the second copy, where the mask is
/// a constant: the selects that keep inactive lanes' values and the masked
/// loads and stores become plain ones (sgemm 6.9 -> 6.2 ms, block reduce
/// 5.4 -> 4.9, warp-shuffle reduce 5.4 -> 4.3). Convergent blocks (all live
/// lanes there) need it too where a partial warp may run them: their loads
/// test the mask. Not blocks a barrier or `bar.red` starts or ends. In
/// region functions (after a barrier, and a full warp's first call) all
/// blocks (transpose 13.7 -> 12.3 ms, scan 3.63 -> 3.45); in the general
/// warp function the blocks of loops without barriers (3-D stencil 2.52 ->
/// 2.24 ms, JIT +50 ms) and, in other loops, blocks without memory
/// accesses that can run with some lanes elsewhere (Mandelbrot 17.0 ->
/// 15.8 ms). Those other loops' blocks with memory accesses run in regions
/// (copying them cost sgemm 40 ms and nbody 70 ms of JIT for nothing), and
/// copies of blocks outside loops made a 2-D stencil 1.4-1.7x slower.
/// Copies cost code generation time: there is a budget.
fn whole_warp_copies<const W: u32>(
    g: &Gen<W>,
    region: Option<&Region>,
    red_after: &std::collections::HashMap<BlockId, (BarRed, Reg)>,
) -> Vec<bool> {
    let p = g.p;
    let f = &p.func;
    let mut budget = WHOLE_COPY_INSTS;
    let memory = |i: &Inst| {
        matches!(
            i.kind,
            InstKind::Ld { .. } | InstKind::St { .. } | InstKind::Atom { .. }
        )
    };
    let free_loops = match region {
        Some(_) => Vec::new(),
        None => blocks_in_barrier_free_loops(p),
    };
    p.order
        .iter()
        .enumerate()
        .map(|(id, bid)| {
            let block = &f.blocks[*bid];
            // Convergent blocks too (all live lanes there, but not always
            // all 32): in a region, and in the general function's loops
            // without barriers (the loops with one run in regions).
            let every = match region {
                Some(r) => r.inside[id],
                None => free_loops[id],
            };
            let wanted = every || (g.in_loop[id] && !block.insts.iter().any(memory));
            let eligible = wanted
                && (every || !g.convergent[bid.0 as usize])
                && !red_after.contains_key(bid)
                && !block
                    .insts
                    .iter()
                    .any(|i| matches!(i.kind, InstKind::Bar { .. }));
            let n = block.insts.len() + 1;
            if eligible && n <= budget {
                budget -= n;
                true
            } else {
                false
            }
        })
        .collect()
}

/// Dispatcher visits and trips round loops after which a warp yields
/// (`WARPFOLD_YIELD_BUDGET`, at least 2 so a turn always runs something;
/// small values let tests reach every yield).
fn yield_budget() -> u32 {
    std::env::var("WARPFOLD_YIELD_BUDGET")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .map_or(16384, |b| b.clamp(2, i32::MAX as u32))
}

/// Grid-stride steps a warp makes round a grid-stride loop (see
/// `crate::grid_stride`: a trip of a loop unrolled by 4 makes 4) before it
/// yields to the next warp of its CTA. Each step of a warp reads its 128
/// bytes a grid's width past the last (the histogram's: a megabyte): the
/// CTA's warps taking turns every few steps read each region of memory
/// together, a kilobyte at once, where one warp's 64 steps at a time
/// touched 64 pages for 128 bytes each. Histogram (one step a trip), bench
/// runs interleaved with the budget as a knob: 0.55-0.56x OpenMP when
/// warps ran to the end, 0.62-0.74x at 4 trips, 0.70-0.76x at 8, 0.50-0.65x
/// at 16, 0.66-0.72x at 32; then this constant against the old code in 4
/// more interleaved runs: 0.53-0.58x -> 0.74-0.77x. A grid-stride sum
/// NVRTC unrolled by 4, one worker: best at 8 steps too (turns of 1, 2, 4,
/// 8 and 16 steps), as the histogram at 1, 2, 4, 8 and 16.
const GRID_STRIDE_STEPS_PER_TURN: u32 = 8;

/// Instructions (PTX, per warp function) whose blocks get a whole-warp
/// copy (see `whole_warp_copies`).
const WHOLE_COPY_INSTS: usize = 400;

/// The dispatcher of the general warp function. It also polls the cancel
/// flag and, after many visits, yields (divergent loops pass through here
/// on every trip).
fn dispatcher<const W: u32>(g: &mut Gen<W>) {
    let p = g.p;
    g.emit_label("dispatch");
    g.poll("dispatch_go", "dispatch_yield", 1, false);
    g.emit_label("dispatch_yield");
    g.line("store i1 true, i1* %yielded");
    // The next turn goes to the earliest lanes, as always. Latest first
    // here could run a join block for lanes that left a branch early
    // while the others are still inside it, and blocks where lanes meet
    // update uniform registers (a loop's index, its pointers) for every
    // lane: the early lanes went round the loop alone and the others
    // then read wild addresses (a stencil loop with an edge test, yielding
    // at its second dispatcher visit). Loops' own yields decide per loop
    // (see the checks in `dispatcher_and_blocks`).
    g.line("store i32 0, i32* %pick_max");
    g.line("br label %leave");
    g.emit_label("dispatch_go");
    let next = g.load_scalar("next", &vt::<W>(32));
    let wc = g.load_scalar("wait_coll", "i32");
    let wb = g.load_scalar("wait_bar", "i32");
    let w = g.t();
    g.line(&format!("{w} = or i32 {wc}, {wb}"));
    let wm = g.mask_of_bits(&w);
    let elig = g.t();
    let done = sc::<W>(32, u64::from(DONE));
    g.line(&format!(
        "{elig} = select <{W} x i1> {wm}, <{W} x i32> {done}, <{W} x i32> {next}"
    ));
    let cmin = g.t();
    g.line(&format!(
        "{cmin} = call i32 @llvm.vector.reduce.umin.v{W}i32(<{W} x i32> {elig})"
    ));
    // The latest lanes only after a yield (rare): no second reduction on
    // the common path.
    let pm = g.load_scalar("pick_max", "i32");
    let pmb = g.t();
    g.line(&format!("{pmb} = icmp ne i32 {pm}, 0"));
    let (lmax, lmin, lsel) = (
        g.label("pick_latest"),
        g.label("pick_earliest"),
        g.label("picked"),
    );
    g.line(&format!("br i1 {pmb}, label %{lmax}, label %{lmin}"));
    g.emit_label(&lmax);
    let isdone = g.t();
    let elig_max = g.t();
    let cmax = g.t();
    g.line(&format!("{isdone} = icmp eq <{W} x i32> {elig}, {done}"));
    g.line(&format!(
        "{elig_max} = select <{W} x i1> {isdone}, <{W} x i32> zeroinitializer, <{W} x i32> {elig}"
    ));
    g.line(&format!(
        "{cmax} = call i32 @llvm.vector.reduce.umax.v{W}i32(<{W} x i32> {elig_max})"
    ));
    g.line(&format!("br label %{lsel}"));
    g.emit_label(&lmin);
    g.line(&format!("br label %{lsel}"));
    g.emit_label(&lsel);
    let c2 = g.t();
    let cmin_none = g.t();
    let cur = g.t();
    g.line(&format!(
        "{c2} = phi i32 [ {cmax}, %{lmax} ], [ {cmin}, %{lmin} ]"
    ));
    g.line(&format!("{cmin_none} = icmp eq i32 {cmin}, -1"));
    g.line(&format!("{cur} = select i1 {cmin_none}, i32 -1, i32 {c2}"));
    g.line("store i32 0, i32* %pick_max");
    g.line(&format!("store i1 {pmb}, i1* %latest"));
    let none = g.t();
    g.line(&format!("{none} = icmp eq i32 {cur}, -1"));
    g.line(
        "br i1 %__none_placeholder, label %leave, label %pick"
            .replace("%__none_placeholder", &none)
            .as_str(),
    );
    g.emit_label("pick");
    g.take_group_at(&next, &cur, &wc);
    enter_block(g, &cur);
    // Every way into a block of the general function (a pick, a resume
    // after a barrier) meets here, so the bookkeeping values they set
    // (zero waits, a fresh budget) join once, not in a phi per block with
    // a stack slot each that every resume filled (the bitonic sort: ~70
    // stores on each of its 56 resumes a warp).
    g.emit_label("enter");
    let at = g.load_scalar("enter_at", "i32");
    let cases: Vec<String> = (0..p.order.len())
        .map(|i| format!("i32 {i}, label %B{i}"))
        .collect();
    g.line(&format!(
        "switch i32 {at}, label %leave [ {} ]",
        cases.join(" ")
    ));
}

/// Go on at block `at` through the general function's one entry switch
/// (see `dispatcher`).
fn enter_block<const W: u32>(g: &mut Gen<W>, at: &str) {
    g.line(&format!("store i32 {at}, i32* %enter_at"));
    g.line("br label %enter");
}

/// The dispatcher, the blocks (of the region, if any) and the exits of a
/// warp function; its text, the function complete.
fn dispatcher_and_blocks<const W: u32>(
    g: &mut Gen<W>,
    ctx: &WarpCtx,
    region: Option<&Region>,
) -> Result<String, crate::prepare::Unsupported> {
    let p = g.p;
    let f = &p.func;
    let inside = |id: usize| region.is_none_or(|r| r.inside[id]);
    if region.is_none() {
        dispatcher(g);
    } else {
        // A region has no dispatcher: where its lanes need one (they split
        // where no direct path serves, or only some reach a barrier), the
        // warp saves the general state and yields, and the general warp
        // function goes on from there in the driver's next round.
        g.emit_label("dispatch");
        g.line("store i1 true, i1* %yielded");
        g.line("br label %leave");
    }

    // Blocks.
    // Blocks right after a `bar.red`: their lanes first read the CTA-wide
    // result the driver stored when it released the barrier.
    let red_after: std::collections::HashMap<BlockId, (BarRed, Reg)> = p
        .barriers()
        .filter_map(|(k, t)| match k {
            InstKind::Bar {
                kind: BarKind::Red(op),
                dst: Some(d),
                ..
            } => Some((t, (*op, *d))),
            _ => None,
        })
        .collect();
    g.whole_copy = whole_warp_copies(g, region, &red_after);
    g.unbudgeted_bytes = 0;
    let copies = p
        .order
        .iter()
        .enumerate()
        .flat_map(|(id, bid)| [(id, bid, false), (id, bid, true)]);
    for (id, bid, whole) in copies {
        if !inside(id) || (whole && !g.whole_copy[id]) {
            continue;
        }
        g.cur_id = id as u32;
        g.cur_earliest = g.earliest[bid.0 as usize];
        let (start, unbudgeted) = (g.out.len(), g.unbudgeted_bytes);
        if whole {
            // Every live lane runs it: exited lanes need no blend, and
            // with the mask known LLVM folds the masked forms away.
            g.cur_convergent = true;
            g.emit_label(&format!("W{id}"));
            let full = full_bits::<W>();
            g.line(&format!("store i32 {full}, i32* %live"));
            g.store_mask(
                &format!("<{}>", vec!["i1 true"; W as usize].join(", ")),
                &full.to_string(),
            );
        } else {
            g.cur_convergent = g.convergent[bid.0 as usize];
            g.emit_label(&format!("B{id}"));
            // Without mask registers a block in a loop makes its mask
            // afresh from the bits: a vector of booleans carried round a
            // loop goes through byte packs and unpacks at the joins in
            // LLVM 14 (25 instructions each time a stencil's edge warp
            // began its masked block). Not in straight-line code, where
            // the vector flows from block to block (a sorting network:
            // 7% more instructions made afresh). Only in the general
            // function, where that was measured.
            if !g.avx512 && !g.structured_only && g.in_loop[id] {
                let b = g.load_scalar("mask_bits", "i32");
                let m = g.mask_of_bits(&b);
                g.store_mask(&m, &b);
            }
        }
        let block = &f.blocks[*bid];
        if let Some((op, d)) = red_after.get(bid) {
            let off = state::RED_RESULT
                + 4 * match op {
                    BarRed::Popc => 0,
                    BarRed::And => 1,
                    BarRed::Or => 2,
                };
            let c = g.state_ptr(off, "i32");
            let v = g.t();
            g.line(&format!("{v} = load i32, i32* {c}"));
            let sv = g.splat("i32", &v);
            let mask = g.load_mask();
            let bits = if *op == BarRed::Popc { 32 } else { 1 };
            let val = if bits == 1 {
                let t = g.t();
                g.line(&format!("{t} = icmp ne <{W} x i32> {sv}, zeroinitializer"));
                t
            } else {
                sv
            };
            g.set(*d, &val, bits, false, &mask);
        }
        let mut waited = false;
        let succ = match &block.term {
            Some(Terminator::Jump(t)) => Some(p.id_of[t.0 as usize]),
            _ => None,
        };
        let groups = crate::lower::load_groups(&g.lanes, &block.insts, W);
        for (k, inst) in block.insts.iter().enumerate() {
            if let Some(group) = groups.iter().find(|x| x.first() == k) {
                crate::lower::emit_load_group(g, &block.insts, group)?;
                for (j, member) in block.insts.iter().enumerate() {
                    if group.has(j) {
                        crate::lower::canon_own_slot_load(g, *bid, j, member);
                    }
                }
                continue;
            }
            if groups.iter().any(|x| x.has(k)) {
                continue;
            }
            g.cur_inst = k;
            g.cur_block = Some(*bid);
            emit_inst(g, inst, k == 0, &mut waited, succ)?;
            g.cur_block = None;
            if waited {
                break;
            }
        }
        if !waited {
            emit_term(g, block.term.as_ref(), &p.id_of);
        }
        if whole {
            // The whole copy, narrow loads in it included (once).
            g.unbudgeted_bytes = unbudgeted + g.out.len() - start;
        }
    }

    // Loops check for cancellation (the watchdog) on their way back.
    let budget = yield_budget();
    for (l, id, earliest, to, from) in std::mem::take(&mut g.checks) {
        g.emit_label(&l);
        // After many trips round loops the warp yields, so warps that wait
        // on each other through memory all make progress; its next turn
        // goes to its latest lanes (which a spinning lane may wait for),
        // except where lanes must meet first (see `lanes`).
        let y = g.label("yield");
        let steps = g.grid_stride_steps(from as usize);
        let grid_stride = steps > 0;
        // A trip of a loop unrolled by 4 makes 4 steps (a sum of 16M
        // ints: 15.3 -> 9.3 ms on one worker counting 1, 6.2-6.7 counting
        // 4). At most the budget (a yield every trip): the cost is an i32.
        let cost = if grid_stride {
            (budget / GRID_STRIDE_STEPS_PER_TURN)
                .saturating_mul(steps)
                .min(budget)
                .max(1)
        } else {
            1
        };
        let lazy =
            grid_stride && !crate::grid_stride::loop_may_wait(g.p, id as usize, from as usize);
        g.poll(&to, &y, cost, lazy);
        g.emit_label(&y);
        crate::lower::set_next(g, &sc::<W>(32, u64::from(id)));
        g.line("store i1 true, i1* %yielded");
        g.line(&format!(
            "store i32 {}, i32* %pick_max",
            u32::from(!earliest)
        ));
        g.line("br label %leave");
    }
    g.emit_label("cancelled");
    g.line("ret i32 3");
    if g.lean_barriers {
        // A whole warp at a plain barrier with nothing else pending: only
        // what `resume_bar` reads is saved.
        g.emit_label("leave_bar");
        let lv = g.load_scalar("live", "i32");
        let c = g.state_ptr(state::LIVE, "i32");
        g.line(&format!("store i32 {lv}, i32* {c}"));
        // A region saves what it wrote and a barrier's next block reads
        // (a first round also what it found zero), where it read them.
        let base = if region.is_some() { "%lr" } else { "%st" };
        store_saved_regs_where(g, ctx, base, |i| {
            region.is_none_or(|r| r.regs[i] && ctx.wrote(r, i) && ctx.after_bar[i])
        });
        let site = g.load_scalar("bar_me", "i32");
        let code = g.t();
        g.line(&format!("{code} = add i32 {site}, {BAR_CODE}"));
        g.line(&format!("ret i32 {code}"));
    }

    // Save state and return.
    g.emit_label("leave");
    {
        // A finished warp is never looked at again: nothing to save.
        let lv = g.load_scalar("live", "i32");
        let alldone = g.t();
        g.line(&format!("{alldone} = icmp eq i32 {lv}, 0"));
        g.line(&format!(
            "br i1 {alldone}, label %finished, label %unfinished"
        ));
        g.emit_label("finished");
        g.line("ret i32 0");
        g.emit_label("unfinished");
    }
    let nv = g.load_scalar("next", &vt::<W>(32));
    let np = g.state_ptr(state::NEXT, &vt::<W>(32));
    g.line(&format!(
        "store <{W} x i32> {nv}, <{W} x i32>* {np}, align 4"
    ));
    for (name, o) in [
        ("live", state::LIVE),
        ("wait_coll", state::WAIT_COLL),
        ("wait_bar", state::WAIT_BAR),
        ("bar_site", state::BAR_SITE),
        ("pick_max", state::PICK_MAX),
    ] {
        let v = g.load_scalar(name, "i32");
        let c = g.state_ptr(o, "i32");
        g.line(&format!("store i32 {v}, i32* {c}"));
    }
    store_saved_regs_where(g, ctx, "%st", |i| {
        region.is_none_or(|r| r.regs[i] && ctx.wrote(r, i))
    });
    g.line("br label %saved");
    g.emit_label("saved");
    let wb = g.load_scalar("wait_bar", "i32");
    let wc = g.load_scalar("wait_coll", "i32");
    let isb = g.t();
    let isc = g.t();
    let code1 = g.t();
    let code = g.t();
    g.line(&format!("{isb} = icmp ne i32 {wb}, 0"));
    g.line(&format!("{isc} = icmp ne i32 {wc}, 0"));
    g.line(&format!("{code1} = select i1 {isc}, i32 2, i32 0"));
    g.line(&format!("{code} = select i1 {isb}, i32 1, i32 {code1}"));
    let yl = g.load_scalar("yielded", "i1");
    let fin = g.t();
    g.line(&format!("{fin} = select i1 {yl}, i32 4, i32 {code}"));
    g.line(&format!("ret i32 {fin}"));
    g.out.push_str("}\n\n");
    let allocas = std::mem::take(&mut g.allocas);
    // The warp function is inlined into the round loop when small (saves a
    // call per warp); a large one stays a function of its own, where the
    // register allocator is much faster than inside the loop.
    let inline = if g.out.len() < INLINE_BELOW_BYTES || g.small_regions {
        "alwaysinline "
    } else {
        "noinline "
    };
    Ok(std::mem::take(&mut g.out)
        .replacen(";ALLOCAS\n", &allocas, 1)
        .replacen(";INLINE\n", inline, 1))
}

/// A line in the IR of kernels with unrolled rounds (see `jit::codegen`).
pub const UNROLLED_MARK: &str = "; warpfold: unrolled rounds";
/// Followed by the kernel's static shared bytes, where rounds are unrolled
/// (what `shared_regs` may keep in registers).
pub const SHARED_BYTES_MARK: &str = "; warpfold: shared bytes ";

/// A barrier site with a region function (see `cta_fn`).
#[derive(Clone, Copy, Debug)]
struct RegionSite {
    /// 1 + the barrier block's id.
    site: u32,
    /// The block after the barrier, where the region starts.
    succ: u32,
    /// Its lean rounds are unrolled over the warps (`unrolled_round`).
    unrolled: bool,
    /// The site of the only barrier the region reaches, if it reaches one.
    next: Option<u32>,
    /// The round loop runs it for two warps at once (see `warp_pairs`).
    pair: bool,
}

/// Bytes of a warp's state holding a register's value or its jump lane,
/// as type `ty`.
#[derive(Clone, Debug)]
struct Slot {
    off: usize,
    ty: String,
}

/// What unrolled rounds copy between a warp's state and its scratch copy
/// of the registers for a round starting at one barrier (see `cta_fn`).
#[derive(Clone, Debug, Default)]
struct ChainSlots {
    /// Live after the barrier: read from the state when a chain of
    /// unrolled rounds starts there.
    into: Vec<Slot>,
    /// Written back when the chain stops after a warp left the round at a
    /// barrier: what was live into it and what it saved for the next.
    lean: Vec<Slot>,
    /// Written back when the warp left the round otherwise: it saved what
    /// it wrote to the state itself, the rest of what was live into it
    /// is still only in the scratch.
    other: Vec<Slot>,
}

/// `ChainSlots` for each barrier site with unrolled rounds, and for the
/// unrolled first round (whose `into` is empty: nothing is live yet).
#[derive(Clone, Debug, Default)]
struct ChainCopies {
    sites: std::collections::HashMap<u32, ChainSlots>,
    fresh: ChainSlots,
}

/// The registers a region function keeps in `%lr` (see `warp_function`),
/// as slots of the warp state.
fn chain_copies<const W: u32>(g: &Gen<W>, ctx: &WarpCtx, sites: &[RegionSite]) -> ChainCopies {
    let p = g.p;
    let slots = |keep: &dyn Fn(usize) -> bool| -> Vec<Slot> {
        let mut v = Vec::new();
        for (i, &b) in ctx.reg_bits.iter().enumerate() {
            if !g.saved(i) || !keep(i) {
                continue;
            }
            let (ty, _) = g.saved_types(i, b);
            v.push(Slot {
                off: ctx.reg_offsets[i],
                ty,
            });
            if g.has_jump(i) {
                v.push(Slot {
                    off: ctx.jump_offsets[i],
                    ty: "i32".into(),
                });
            }
        }
        v
    };
    let of = |r: &Region, live: &[bool]| ChainSlots {
        into: slots(&|i| live[i]),
        lean: slots(&|i| live[i] || (ctx.wrote(r, i) && ctx.after_bar[i])),
        other: slots(&|i| live[i] && !ctx.wrote(r, i)),
    };
    let mut out = ChainCopies::default();
    for s in sites.iter().filter(|s| s.unrolled) {
        let r = Region::new(p, ctx.live_in, ctx.remat_insts, s.succ);
        let live = &ctx.live_in[p.order[s.succ as usize].0 as usize];
        out.sites.insert(s.site, of(&r, live));
    }
    let r = Region::fresh(p, ctx.live_in);
    out.fresh = of(&r, &vec![false; ctx.reg_bits.len()]);
    out
}

/// `slots` copied from the `i8*` value `from` to `to`; `tag` makes the
/// names unique.
fn copy_slots(out: &mut String, tag: &str, slots: &[Slot], from: &str, to: &str) {
    for (k, Slot { off, ty }) in slots.iter().enumerate() {
        let _ = write!(
            out,
            "  %{tag}_{k}a = getelementptr i8, i8* {from}, i64 {off}
  %{tag}_{k}b = bitcast i8* %{tag}_{k}a to {ty}*
  %{tag}_{k}v = load {ty}, {ty}* %{tag}_{k}b, align 4
  %{tag}_{k}c = getelementptr i8, i8* {to}, i64 {off}
  %{tag}_{k}d = bitcast i8* %{tag}_{k}c to {ty}*
  store {ty} %{tag}_{k}v, {ty}* %{tag}_{k}d, align 4
"
        );
    }
}

/// `slots` of each of `n` warps copied from `%{from}{w}` to `%{to}{w}`
/// (the warp's state or scratch pointer); `tag` makes the names unique.
fn copy_warps(out: &mut String, tag: &str, n: u32, slots: &[Slot], (from, to): (&str, &str)) {
    for w in 0..n {
        let (f, t) = (format!("%{from}{w}"), format!("%{to}{w}"));
        copy_slots(out, &format!("{tag}w{w}"), slots, &f, &t);
    }
}

/// For each of `n` warps whose code (`%{code}{w}`) says where it left a
/// round, the copy back to its state (`%{state}{w}`) from its scratch:
/// `lean` after a barrier exit, `other` after any other.
fn copy_back_by_code(
    out: &mut String,
    tag: &str,
    n: u32,
    (code, state): (&str, &str),
    slots: &ChainSlots,
) {
    for w in 0..n {
        let b = format!("{tag}w{w}");
        let _ = write!(
            out,
            "  %{b}is = icmp uge i32 %{code}{w}, {BAR_CODE}
  br i1 %{b}is, label %{b}l, label %{b}o
{b}l:
"
        );
        copy_slots(
            out,
            &format!("{b}l"),
            &slots.lean,
            &format!("%scrp{w}"),
            &format!("%{state}{w}"),
        );
        let _ = write!(out, "  br label %{b}j\n{b}o:\n");
        copy_slots(
            out,
            &format!("{b}o"),
            &slots.other,
            &format!("%scrp{w}"),
            &format!("%{state}{w}"),
        );
        let _ = write!(out, "  br label %{b}j\n{b}j:\n");
    }
}

/// How a warp's first call goes (see `cta_fn`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum FreshRound {
    /// Through the general warp function.
    None,
    /// Full warps through `@wf_fresh`, in the round loop.
    Loop,
    /// When every warp is full, `@wf_fresh` for each, unrolled over the
    /// warps like the lean rounds after it (`UnrolledRound`); `next`: the
    /// only barrier the region can end at.
    Unrolled { next: Option<u32> },
}

/// Whether the CTA's lean rounds will be unrolled, judged before any code
/// is generated (the same tests as in `emit`, on the regions' sizes).
fn unroll_planned<const W: u32>(p: &Prepared, shape: Shape) -> bool {
    let threads: u32 = shape.iter().product();
    let n = threads / W;
    let plain = p.barriers().all(|(k, _)| {
        !crate::prepare::counted_barrier(k)
            && !matches!(
                k,
                InstKind::Bar {
                    kind: BarKind::Red(_),
                    ..
                }
            )
    });
    if !threads.is_multiple_of(W)
        || n > UNROLL_WARPS_UP_TO
        || !unroll_enabled()
        || !crate::region::enabled()
        || p.barriers().next().is_none()
        || !plain
    {
        return false;
    }
    let mut total = 0;
    for (_, succ) in barrier_regions(p) {
        let size = insts_inside(p, &crate::region::blocks(p, succ));
        if size > UNROLL_REGION_INSTS {
            return false;
        }
        total += size * n as usize;
    }
    let fresh = insts_inside(p, &crate::region::blocks(p, 0));
    if fresh <= UNROLL_FRESH_INSTS {
        total += fresh * n as usize;
    }
    total <= UNROLL_TOTAL_INSTS
}

/// Whether `p` has barriers and every region after one is at most
/// `SMALL_REGION_INSTS` long, and the code before the first barrier too:
/// then regions pay for their code however large the general warp
/// function (see `INLINE_BELOW_BYTES`). A bitonic sort unrolled by NVRTC
/// is 55 such steps, a compare-exchange each: with the round loop running
/// each step for warp after warp it took 2.4 instead of 3.5 ms (256
/// segments, one worker; JIT 460 -> 510 ms), where a kernel of large
/// regions (a batched LU, a stencil's march) gets slower code and more of
/// it, and a large kernel ending in a small tree would get a cold general
/// function, inlined.
fn regions_all_small(p: &Prepared) -> bool {
    let small =
        |entry: u32| insts_inside(p, &crate::region::blocks(p, entry)) <= SMALL_REGION_INSTS;
    let mut regions = barrier_regions(p).peekable();
    regions.peek().is_some() && small(0) && regions.all(|(_, succ)| small(succ))
}

/// See `regions_all_small`: the bitonic sort's steps are 8 to 18 PTX
/// instructions (with their blocks' ends) after if-conversion, the
/// stencil's march 193, SGEMM's tile product 51.
const SMALL_REGION_INSTS: usize = 24;

/// Each barrier block's id in `p.order` and the id of the block its
/// region starts at (the block it jumps to). Reached blocks only: the
/// target of an unreachable barrier has no id.
fn barrier_regions(p: &Prepared) -> impl Iterator<Item = (usize, u32)> + '_ {
    p.order.iter().enumerate().filter_map(|(id, b)| {
        let block = &p.func.blocks[*b];
        match (block.insts.first(), &block.term) {
            (Some(first), Some(Terminator::Jump(t)))
                if matches!(first.kind, InstKind::Bar { .. }) =>
            {
                Some((id, p.id_of[t.0 as usize]))
            }
            _ => None,
        }
    })
}

/// PTX instructions (and terminators) of the blocks among `inside`.
fn insts_inside(p: &Prepared, inside: &[bool]) -> usize {
    p.order
        .iter()
        .enumerate()
        .filter(|(i, _)| inside[*i])
        .map(|(_, b)| p.func.blocks[*b].insts.len() + 1)
        .sum()
}

/// The site of the only barrier block among `inside` (by block id), if
/// exactly one and no lane can end its thread in between (so a warp that
/// started with all its lanes reaches it with all of them).
fn only_barrier(p: &Prepared, inside: &[bool]) -> Option<u32> {
    let exits = p.order.iter().enumerate().any(|(id, bid)| {
        inside[id]
            && !matches!(
                p.func.blocks[*bid].term,
                Some(Terminator::Jump(_) | Terminator::Branch { .. })
            )
    });
    if exits {
        return None;
    }
    let mut sites = p.order.iter().enumerate().filter(|(id, bid)| {
        inside[*id]
            && matches!(p.func.blocks[**bid].insts.first(),
                Some(i) if matches!(i.kind, InstKind::Bar { .. }))
    });
    match (sites.next(), sites.next()) {
        (Some((id, _)), None) => Some(id as u32 + 1),
        _ => None,
    }
}

/// Where each register lives in the warp state, where a register with a
/// jump keeps the jump's lane, and the end of the registers. Only
/// registers live into some block can be kept there (see `Gen::saved`);
/// those that are scalars (values kept as lane 0's, see `Gen::scalar`)
/// come first, 8 bytes each (16 for 128-bit ones, 16-aligned), so the
/// dozens a region function reads and writes on every call share a few
/// cache lines (one line each, the stencil's 20 of them on every warp's
/// call, crowded its rows out of L1); vectors follow, each on its own
/// 128-byte boundary. Dead registers, and the jumps of registers without
/// one, are never stored: they all point at one spare slot at the end, so
/// a slip would write nowhere that matters.
fn state_layout<const W: u32>(
    reg_bits: &[u32],
    forms: &[Option<crate::lanes::Lanes>],
    rows: &[Option<crate::lanes::Lanes>],
    row_count: u32,
    live: &[bool],
) -> (Vec<usize>, Vec<usize>, usize) {
    let n = reg_bits.len();
    let (mut offsets, mut jumps) = (vec![None; n], vec![None; n]);
    let vector_bytes = |b: u32| {
        if b == 1 {
            4
        } else {
            (b as usize / 8) * W as usize
        }
    };
    let mut off = state::REGS;
    for i in (0..n).filter(|&i| live[i]) {
        if let Some(l) = forms[i] {
            let bytes = (reg_bits[i] as usize).div_ceil(8).next_multiple_of(8);
            off = off.next_multiple_of(bytes.min(16));
            offsets[i] = Some(off);
            off += bytes;
            if l.jump != 0 {
                jumps[i] = Some(off);
                off += 8;
            }
        }
    }
    // Row registers: one scalar per row, together, aligned as their
    // vector type (LLVM's accesses to them assume it).
    for i in (0..n).filter(|&i| live[i] && forms[i].is_none() && rows[i].is_some()) {
        let bytes = (reg_bits[i] as usize / 8) * row_count as usize;
        off = off.next_multiple_of(bytes.next_power_of_two());
        offsets[i] = Some(off);
        off += bytes;
    }
    off = off.next_multiple_of(128);
    for i in (0..n).filter(|&i| live[i] && forms[i].is_none() && rows[i].is_none()) {
        offsets[i] = Some(off);
        off += vector_bytes(reg_bits[i]);
        off = off.next_multiple_of(128);
    }
    let spare = off;
    let widest = (0..n)
        .filter(|&i| !live[i])
        .map(|i| vector_bytes(reg_bits[i]));
    off = (spare + widest.max().unwrap_or(0).max(8)).next_multiple_of(128);
    let at = |v: Vec<Option<usize>>| v.into_iter().map(|o| o.unwrap_or(spare)).collect();
    (at(offsets), at(jumps), off)
}

/// Reads the registers kept in the warp state into their allocas.
fn load_saved_regs<const W: u32>(g: &mut Gen<W>, ctx: &WarpCtx) {
    load_saved_regs_where(g, ctx, "%st", |_| true)
}

/// `load_saved_regs` for the registers `want` picks, from the registers'
/// home at `base` (the warp state `%st`, or a region's `%lr`).
fn load_saved_regs_where<const W: u32>(
    g: &mut Gen<W>,
    ctx: &WarpCtx,
    base: &str,
    want: impl Fn(usize) -> bool,
) {
    let (reg_bits, reg_offsets) = (ctx.reg_bits, ctx.reg_offsets);
    for (i, b) in reg_bits.iter().enumerate() {
        if !g.saved(i) || g.regs_in_state || !want(i) {
            continue;
        }
        let (mem, val) = g.saved_types(i, *b);
        let p = g.ptr_in(base, reg_offsets[i], &mem);
        let v = g.t();
        g.line(&format!("{v} = load {mem}, {mem}* {p}, align 4"));
        let v = g.cast(&v, &mem, &val);
        g.line(&format!("store {val} {v}, {val}* %r{i}"));
        if g.has_jump(i) {
            let p = g.ptr_in(base, ctx.jump_offsets[i], "i32");
            let k = g.def(&format!("load i32, i32* {p}"));
            g.line(&format!("store i32 {k}, i32* %k{i}"));
        }
    }
}

/// Writes the registers kept in the warp state (those `want` picks) from
/// their allocas to their home at `base` (see `load_saved_regs_where`).
fn store_saved_regs_where<const W: u32>(
    g: &mut Gen<W>,
    ctx: &WarpCtx,
    base: &str,
    want: impl Fn(usize) -> bool,
) {
    let (reg_bits, reg_offsets) = (ctx.reg_bits, ctx.reg_offsets);
    for (i, b) in reg_bits.iter().enumerate() {
        if !g.saved(i) || g.regs_in_state || !want(i) {
            continue;
        }
        let (mem, val) = g.saved_types(i, *b);
        let v = g.load_scalar(&format!("r{i}"), &val);
        let v = g.cast(&v, &val, &mem);
        let p = g.ptr_in(base, reg_offsets[i], &mem);
        g.line(&format!("store {mem} {v}, {mem}* {p}, align 4"));
        if g.has_jump(i) {
            let k = g.load_scalar(&format!("k{i}"), "i32");
            let p = g.ptr_in(base, ctx.jump_offsets[i], "i32");
            g.line(&format!("store i32 {k}, i32* {p}"));
        }
    }
}

/// Values computed again rather than saved (`uniform::rematerialisable`),
/// for every lane.
fn recompute<const W: u32>(
    g: &mut Gen<W>,
    insts: &[Inst],
) -> Result<(), crate::prepare::Unsupported> {
    g.store_mask(&sc::<W>(1, 1), "-1");
    // Not at a position of the current block (see `indexed`).
    g.cur_inst = usize::MAX;
    for inst in insts {
        let mut waited = false;
        crate::lower::emit_inst(g, inst, false, &mut waited, None)?;
    }
    Ok(())
}

/// Warp functions smaller than this (bytes of LLVM IR text) are inlined
/// into `wf_cta`, and only they get region functions. The stencil march's
/// is 395 KB, 418 KB for wide CTAs (see `merge`), which ran 1.26x slower
/// without region functions.
const INLINE_BELOW_BYTES: usize = 450_000;

/// Region functions may always add this much code (bytes of LLVM IR text),
/// however small the general warp function: a site left without one stops
/// every round's unrolling. A block scan without bounds tests has a
/// general function of 149 KB (the tests' branches are most of what the
/// cold general code drops) and 340 KB of regions: twice the general
/// function left its last two sites out and it ran 2.4x slower than the
/// same scan with the tests (2.15 against 0.90 ms, 16384 CTAs).
const REGION_BYTES_FLOOR: usize = 400_000;

/// CTAs of at most this many warps have their lean rounds unrolled (see
/// `unrolled_round`).
const UNROLL_WARPS_UP_TO: u32 = 8;

fn unroll_enabled() -> bool {
    std::env::var("WARPFOLD_UNROLL").map_or(true, |v| v != "off")
}

/// `WARPFOLD_UNROLL_FRESH=off`: the first round stays a loop.
fn fresh_unroll_enabled() -> bool {
    std::env::var("WARPFOLD_UNROLL_FRESH").map_or(true, |v| v != "off")
}

/// `WARPFOLD_CHAIN=off`: unrolled rounds always go back to the round loop
/// (see `UnrolledRound::next`).
fn chain_enabled() -> bool {
    std::env::var("WARPFOLD_CHAIN").map_or(true, |v| v != "off")
}

/// Regions of at most this many instructions may be unrolled...
const UNROLL_REGION_INSTS: usize = 16;
/// The first round may be unrolled if its region is at most this large
/// (it runs once).
const UNROLL_FRESH_INSTS: usize = 32;
/// ...when all of a kernel's, times the warps, come to at most this many
/// (scan's 17 regions over 8 warps: 1080).
const UNROLL_TOTAL_INSTS: usize = 1280;

/// Warp functions smaller than this (bytes of LLVM IR text) get a
/// `@wf_fresh` (see `emit`).
const FRESH_BELOW_BYTES: usize = 100_000;

/// ...and barrier-free ones of whole warps smaller than this. The batched
/// LU kernels' unrolled factorisations (970-990 KB) need it: in their
/// general functions the lane conditions (`i > k`, `i == k` of a lane's
/// row) meet a run-time mask, so every select stays a blend whose mask
/// register spills, where with all lanes known live they are constants.
/// Zen 4, `scripts/ab.py`: batched LU 0.86 and its 16-thread-block form
/// 0.75 of the time (4 of 4 rounds each; 1.93x -> 2.03x and 2.15x ->
/// 3.10x OpenMP), their JIT 227 -> 251 and 222 -> 228 ms (the function
/// compiles as a module of its own, on the second core; on one core 215
/// -> 355 and 193 -> 320 ms); the FMA peak kernel (284 KB) the same speed
/// and JIT (46-56 ms). On an older build a 3-D stencil's (930 KB,
/// barrier-free then) JIT tripled for a gain within noise; much larger
/// kernels stay without it.
const FRESH_LOOP_BELOW_BYTES: usize = 1_250_000;

/// The round loop's next warp after barrier site `site`: the lowest of
/// the bit set `warps`, as `%lw{k}{site}` (its state `%ls{k}{site}`),
/// and whether all its lanes are live (`%lfull{k}{site}`; `all`: every
/// lane). `k` tells the pair's second warp apart (see `warp_pairs`).
pub(crate) fn next_warp(site: u32, k: &str, warps: &str, all: &str) -> String {
    format!(
        "  %lw{k}{site} = call i32 @llvm.cttz.i32(i32 {warps}, i1 true)
  %lw{k}64_{site} = zext i32 %lw{k}{site} to i64
  %lo{k}{site} = mul i64 %lw{k}64_{site}, %sb
  %ls{k}{site} = getelementptr i8, i8* %states, i64 %lo{k}{site}
  %llp{k}{site} = getelementptr i8, i8* %ls{k}{site}, i64 {live}
  %llpi{k}{site} = bitcast i8* %llp{k}{site} to i32*
  %llv{k}{site} = load i32, i32* %llpi{k}{site}
  %lfull{k}{site} = icmp eq i32 %llv{k}{site}, {all}
",
        live = state::LIVE
    )
}

/// The round loop's call of region `succ` after barrier site `site` for
/// the current warp: its code in `%lc{site}`, the warps left in
/// `%ln{site}`.
fn one_run(site: u32, succ: u32) -> String {
    format!(
        "lr{site}_run:
  %lc{site} = call i32 @wf_region{succ}(i8* %ls{site}, i64* %env, i32 %lw{site}, i32 0, i32 0, i8* %ls{site})
  %lcp{site} = getelementptr i32, i32* %codes, i64 %lw64_{site}
  store i32 %lc{site}, i32* %lcp{site}
  %lt1_{site} = sub i32 %lt{site}, 1
  %ln{site} = and i32 %lt{site}, %lt1_{site}
"
    )
}

/// `wf_cta(states, env, state_bytes, running, fresh, codes)`: rounds of a
/// CTA: each warp in the `*running` bit set runs until it finishes, waits
/// or yields (`fresh[w]` non-zero on its first call, then cleared; the
/// warp also gets its previous code); its status goes to `codes[w]`. One
/// call per round instead of one per warp, with the warp function inlined.
/// When `release` (plain `bar.sync` barriers), a round that leaves every
/// unfinished warp waiting with all its live lanes at one barrier releases
/// it here and runs the next round (finished warps leave `*running`); any
/// other outcome goes back to the driver with the round's codes, lean
/// barrier exits first turned into the general form; a round after which
/// every warp has finished returns with `*running` empty (the driver then
/// reads no codes). A round after a
/// release at a site with a region function (`regions`: site, block after
/// it) runs it for each full warp (see `region`). Returns 3 when the
/// launch is cancelled.
fn cta_fn<const W: u32>(
    release: bool,
    avx512: bool,
    regions: &[RegionSite],
    fresh: FreshRound,
    unrolled: Option<u32>,
    barrier_free_warps: Option<u32>,
    state_bytes: usize,
    chain: &ChainCopies,
) -> String {
    let all_lanes = full_bits::<W>();
    // A barrier-free kernel of whole warps runs its first (usually only)
    // round through a loop of its own (`fresh_loop`); the round loop then
    // only resumes warps, through the general function.
    let fresh_loop = barrier_free_warps.filter(|_| {
        fresh == FreshRound::Loop && regions.is_empty() && !release && fresh_loop_enabled()
    });
    let fresh_fn = fresh != FreshRound::None && fresh_loop.is_none();
    // The first round unrolled starts at `lean_sel` with this site.
    let fresh_unrolled = match (fresh, unrolled) {
        (FreshRound::Unrolled { next }, Some(n)) => Some((next, n)),
        _ => None,
    };
    // Unrolled rounds keep each warp's registers in a scratch copy on the
    // stack (`%lr` of the region functions), so that LLVM forwards them
    // from round to round as values and stores nothing: the state gets
    // them only when the rounds stop (scan: 128 vector stores a CTA).
    let mut scratch = String::new();
    let any_unrolled = regions.iter().any(|r| r.unrolled) || fresh_unrolled.is_some();
    if let Some(n) = unrolled.filter(|_| any_unrolled) {
        for w in 0..n {
            let _ = write!(
                scratch,
                "  %scr{w} = alloca [{state_bytes} x i8], align 64
  %scrp{w} = getelementptr inbounds [{state_bytes} x i8], [{state_bytes} x i8]* %scr{w}, i64 0, i64 0
"
            );
        }
    }
    // After a round that left every warp at barrier site s with all its
    // lanes (`%rsite` = s), the next round is a tight loop calling the
    // region function of the block after s for each warp (full warps only:
    // a partial one hands the rest of the round to the general loop).
    // Warps that come back with anything but one common lean code make the
    // round go back to the driver.
    let mut lean = String::new();
    let mut round_in = String::new();
    let mut rsite_in = String::new();
    let mut bail_in = [String::new(), String::new(), String::new(), String::new()];
    if let Some(n) = fresh_loop {
        fresh_loop_blocks::<W>(&mut lean, n);
    }
    if let (true, Some((_, n))) = (regions.is_empty(), fresh_unrolled) {
        // No barriers: the unrolled first round is the only lean round.
        unrolled_fresh::<W>(
            &mut lean,
            &mut round_in,
            &mut rsite_in,
            &mut bail_in,
            n,
            None,
            state_bytes,
            &chain.fresh,
        );
        let _ = writeln!(
            lean,
            "lean_sel:\n  switch i32 %rsite, label %loop [ i32 {FRESH_SITE}, label %uf_in ]"
        );
    }
    if !regions.is_empty() {
        let is_unrolled = |r: &RegionSite| r.unrolled && unrolled.is_some();
        let chains = |r: &RegionSite| {
            r.next
                .filter(|_| chain_enabled())
                .filter(|s| regions.iter().any(|o| o.site == *s && is_unrolled(o)))
        };
        // With the first round unrolled, the unrolled rounds it leads to
        // are entered only from the round before them: with one way in,
        // LLVM forwards each warp's state from round to round. The round
        // loop runs such a site through its loop instead.
        let chained_to: Vec<u32> = match fresh_unrolled {
            Some((next, _)) => regions
                .iter()
                .filter(|r| is_unrolled(r))
                .filter_map(chains)
                .chain(next)
                .collect(),
            None => Vec::new(),
        };
        let mut cases: Vec<String> = regions
            .iter()
            .map(|r| {
                let first = if is_unrolled(r) && !chained_to.contains(&r.site) {
                    "lu"
                } else {
                    "lr"
                };
                format!("i32 {}, label %{first}{}_in", r.site, r.site)
            })
            .collect();
        if let Some((next, n)) = fresh_unrolled {
            cases.push(format!("i32 {FRESH_SITE}, label %uf_in"));
            let next = chains(&RegionSite {
                site: FRESH_SITE,
                succ: 0,
                unrolled: true,
                next,
                pair: false,
            });
            unrolled_fresh::<W>(
                &mut lean,
                &mut round_in,
                &mut rsite_in,
                &mut bail_in,
                n,
                next,
                state_bytes,
                &chain.fresh,
            );
        }
        let _ = writeln!(
            lean,
            "lean_sel:\n  switch i32 %rsite, label %loop [ {} ]",
            cases.join(" ")
        );
        for r in regions {
            let (site, succ) = (&r.site, &r.succ);
            if let Some(n) = unrolled.filter(|_| r.unrolled) {
                // A region that can only end at one barrier whose rounds
                // are unrolled too goes straight on to that round: with no
                // loop between them LLVM sees each warp's registers saved
                // at the end of one region and loaded at the start of the
                // next, and forwards them (and what depends only on them).
                let next = chains(r);
                let round = UnrolledRound {
                    site: *site,
                    succ: *succ,
                    next,
                    warps: n,
                    state_bytes,
                };
                let slots = chain.sites.get(site).cloned().unwrap_or_default();
                round.emit::<W>(&mut lean, &mut round_in, &mut rsite_in, &slots);
            }
            let _ = write!(
                lean,
                "lr{site}_in:
  br label %lr{site}
lr{site}:
  %lt{site} = phi i32 [ %running, %lr{site}_in ], [ %ln{site}, %lr{site}_more ]
  %lk{site} = phi i32 [ -1, %lr{site}_in ], [ %lk1_{site}, %lr{site}_more ]
  %lok{site} = phi i1 [ true, %lr{site}_in ], [ %lok1_{site}, %lr{site}_more ]
{first}  br i1 %lfull{site}, label %lr{site}_run, label %lr{site}_bail
{run}  %lstop{site} = icmp eq i32 %lc{site}, 3
  br i1 %lstop{site}, label %cancelled, label %lr{site}_acc
lr{site}_acc:
  %lfirst{site} = icmp eq i32 %lk{site}, -1
  %lsame{site} = icmp eq i32 %lc{site}, %lk{site}
  %lmatch{site} = or i1 %lfirst{site}, %lsame{site}
  %lislean{site} = icmp uge i32 %lc{site}, {bar_code}
  %lgood{site} = and i1 %lmatch{site}, %lislean{site}
  %lok1_{site} = and i1 %lok{site}, %lgood{site}
  %lk1_{site} = select i1 %lgood{site}, i32 %lc{site}, i32 %lk{site}
  %lany{site} = icmp ne i32 %ln{site}, 0
  br i1 %lany{site}, label %lr{site}_more, label %lr{site}_end
lr{site}_more:
  br label %lr{site}
lr{site}_end:
  %lnext{site} = sub i32 %lk1_{site}, {bar_code}
  br i1 %lok1_{site}, label %round, label %back
lr{site}_bail:
  %lbk{site} = sub i32 %lk{site}, {bar_code}
  %lbfirst{site} = icmp eq i32 %lk{site}, -1
  %lbsite{site} = select i1 %lbfirst{site}, i32 0, i32 %lbk{site}
  br label %loop
",
                bar_code = BAR_CODE,
                first = next_warp(*site, "", &format!("%lt{site}"), &all_lanes),
                run = if r.pair {
                    crate::warp_pairs::pair_run(*site, *succ, &all_lanes)
                } else {
                    one_run(*site, *succ)
                },
            );
            let _ = write!(round_in, ", [ %running, %lr{site}_end ]");
            let _ = write!(rsite_in, ", [ %lnext{site}, %lr{site}_end ]");
            let _ = write!(bail_in[0], ", [ %lt{site}, %lr{site}_bail ]");
            let _ = write!(bail_in[1], ", [ %lok{site}, %lr{site}_bail ]");
            let _ = write!(bail_in[2], ", [ %lbsite{site}, %lr{site}_bail ]");
            let _ = write!(bail_in[3], ", [ 0, %lr{site}_bail ]");
        }
    }
    // The block after `round`, and the general loop's way in from it.
    let (first, from, rsite_release) = if regions.is_empty() && fresh_unrolled.is_none() {
        ("loop", "round", "0")
    } else {
        ("lean_sel", "lean_sel", "%site1")
    };
    let [bail_todo, bail_ok, bail_site, bail_fin] = bail_in;
    let (check, back) = if release {
        (
            format!(
                "  %is_lean = icmp uge i32 %code, {lean}
  br i1 %is_lean, label %chk_lean, label %chk_gen
chk_lean:
  %lme = sub i32 %code, {lean}
  br label %next
chk_gen:
  %lp = getelementptr i8, i8* %st, i64 {live}
  %lpi = bitcast i8* %lp to i32*
  %lv = load i32, i32* %lpi
  %wp = getelementptr i8, i8* %st, i64 {wait}
  %wpi = bitcast i8* %wp to i32*
  %wv = load i32, i32* %wpi
  %sp = getelementptr i8, i8* %st, i64 {site}
  %spi = bitcast i8* %sp to i32*
  %sv = load i32, i32* %spi
  %all_there = icmp eq i32 %wv, %lv
  %is_bar = icmp eq i32 %code, 1
  %gbar = and i1 %all_there, %is_bar
  %gme = select i1 %gbar, i32 %sv, i32 -1
  br label %next
next:
  %me = phi i32 [ %lme, %chk_lean ], [ %gme, %chk_gen ]
  %one_site = icmp ne i32 %me, -1
  %no_site_yet = icmp eq i32 %site, 0
  %same_site = icmp eq i32 %me, %site
  %site_ok = or i1 %no_site_yet, %same_site
  %bar_ok = and i1 %one_site, %site_ok
  %is_fin = icmp eq i32 %code, 0
  %fine = or i1 %bar_ok, %is_fin
  %ok1 = and i1 %ok, %fine
  %site1 = select i1 %bar_ok, i32 %me, i32 %site
  %finbit = shl i32 1, %w
  %fin_add = select i1 %is_fin, i32 %finbit, i32 0
  %fin1 = or i32 %fin, %fin_add
",
                lean = BAR_CODE,
                live = state::LIVE,
                wait = state::WAIT_BAR,
                site = state::BAR_SITE
            ),
            // Lean exits in the general form the driver reads: every live
            // lane waits at the barrier, its next block recorded.
            format!(
                "back:
  br label %conv
conv:
  %ctodo = phi i32 [ %running, %back ], [ %ctodo1, %conv_next ]
  %cnone = icmp eq i32 %ctodo, 0
  br i1 %cnone, label %back2, label %conv_body
conv_body:
  %cw = call i32 @llvm.cttz.i32(i32 %ctodo, i1 true)
  %cw64 = zext i32 %cw to i64
  %ccp = getelementptr i32, i32* %codes, i64 %cw64
  %cc = load i32, i32* %ccp
  %clean = icmp uge i32 %cc, {lean}
  br i1 %clean, label %conv_do, label %conv_next
conv_do:
  %coff = mul i64 %cw64, %sb
  %cst = getelementptr i8, i8* %states, i64 %coff
  %clp = getelementptr i8, i8* %cst, i64 {live}
  %clpi = bitcast i8* %clp to i32*
  %clv = load i32, i32* %clpi
  %crp = getelementptr i8, i8* %cst, i64 {resume}
  %crpi = bitcast i8* %crp to i32*
  %cra = load i32, i32* %crpi
  %cat = sub i32 %cra, 1
  %cati = insertelement <{W} x i32> undef, i32 %cat, i32 0
  %cats = shufflevector <{W} x i32> %cati, <{W} x i32> undef, <{W} x i32> zeroinitializer
{clm}
  %cnext = select <{W} x i1> %clm, <{W} x i32> %cats, <{W} x i32> {done}
  %cnp = bitcast i8* %cst to <{W} x i32>*
  store <{W} x i32> %cnext, <{W} x i32>* %cnp, align 4
  %cme = sub i32 %cc, {lean}
  %cwp = getelementptr i8, i8* %cst, i64 {wait}
  %cwpi = bitcast i8* %cwp to i32*
  store i32 %clv, i32* %cwpi
  %csp = getelementptr i8, i8* %cst, i64 {site}
  %cspi = bitcast i8* %csp to i32*
  store i32 %cme, i32* %cspi
  %ccl = getelementptr i8, i8* %cst, i64 {coll}
  %ccli = bitcast i8* %ccl to i32*
  store i32 0, i32* %ccli
  %cpm = getelementptr i8, i8* %cst, i64 {pick}
  %cpmi = bitcast i8* %cpm to i32*
  store i32 0, i32* %cpmi
  store i32 1, i32* %ccp
  br label %conv_next
conv_next:
  %cdec = sub i32 %ctodo, 1
  %ctodo1 = and i32 %ctodo, %cdec
  br label %conv
back2:
",
                lean = BAR_CODE,
                live = state::LIVE,
                resume = state::RESUME_AT,
                wait = state::WAIT_BAR,
                site = state::BAR_SITE,
                coll = state::WAIT_COLL,
                pick = state::PICK_MAX,
                done = sc::<W>(32, u64::from(DONE)),
                clm = if avx512 {
                    format!("  {}", mask_of_bits_ir::<W>("%clm", "%clv"))
                } else {
                    format!(
                        "  %clvi = insertelement <{W} x i32> undef, i32 %clv, i32 0
  %clvs = shufflevector <{W} x i32> %clvi, <{W} x i32> undef, <{W} x i32> zeroinitializer
  %clva = and <{W} x i32> %clvs, {}
  %clm = icmp ne <{W} x i32> %clva, zeroinitializer",
                        lane_bits::<W>()
                    )
                },
            ),
        )
    } else {
        (
            "  br label %next
next:
  %ok1 = and i1 %ok, false
  %site1 = add i32 %site, 0
  %is_fin = icmp eq i32 %code, 0
  %finbit = shl i32 1, %w
  %fin_add = select i1 %is_fin, i32 %finbit, i32 0
  %fin1 = or i32 %fin, %fin_add
"
            .to_string(),
            "back:\n".to_string(),
        )
    };
    format!(
        "define i32 @wf_cta(i8* noalias %states, i64* %env, i64 %sb, i32* noalias %runp, i32* noalias %fresh, i32* noalias %codes) #0 {{
entry:
{scratch}  %run0 = load i32, i32* %runp
  br label %{first_block}
round:
  %running = phi i32 [ %run0, %{entry_to} ], [ %left, %release ]{round_in}
  %rsite = phi i32 [ {rsite0}, %{entry_to} ], [ {rsite_release}, %release ]{rsite_in}
  %none = icmp eq i32 %running, 0
  br i1 %none, label %done, label %{first}
{lean}loop:
  %todo = phi i32 [ %running, %{from} ], [ %todo1, %next ]{bail_todo}
  %ok = phi i1 [ true, %{from} ], [ %ok1, %next ]{bail_ok}
  %site = phi i32 [ 0, %{from} ], [ %site1, %next ]{bail_site}
  %fin = phi i32 [ 0, %{from} ], [ %fin1, %next ]{bail_fin}
  %w = call i32 @llvm.cttz.i32(i32 %todo, i1 true)
  %w64 = zext i32 %w to i64
  %off = mul i64 %w64, %sb
  %st = getelementptr i8, i8* %states, i64 %off
  %fp = getelementptr i32, i32* %fresh, i64 %w64
  %fl = load i32, i32* %fp
  store i32 0, i32* %fp
  %cp = getelementptr i32, i32* %codes, i64 %w64
  %prev = load i32, i32* %cp
{call}
  store i32 %code, i32* %cp
  %stop = icmp eq i32 %code, 3
  br i1 %stop, label %cancelled, label %classify
classify:
{check}  %dec = sub i32 %todo, 1
  %todo1 = and i32 %todo, %dec
  %more = icmp ne i32 %todo1, 0
  br i1 %more, label %loop, label %after
after:
  %notfin = xor i32 %fin1, -1
  %left = and i32 %running, %notfin
  %some_wait = icmp ne i32 %left, 0
  br i1 %some_wait, label %after_wait, label %done
after_wait:
  br i1 %ok1, label %release, label %back
release:
  %rtodo = phi i32 [ %left, %after_wait ], [ %rtodo1, %release ]
  %rw = call i32 @llvm.cttz.i32(i32 %rtodo, i1 true)
  %rw64 = zext i32 %rw to i64
  %roff = mul i64 %rw64, %sb
  %rst = getelementptr i8, i8* %states, i64 %roff
  %rwp = getelementptr i8, i8* %rst, i64 {wait}
  %rwpi = bitcast i8* %rwp to i64*
  store i64 0, i64* %rwpi
  %rdec = sub i32 %rtodo, 1
  %rtodo1 = and i32 %rtodo, %rdec
  %rmore = icmp ne i32 %rtodo1, 0
  br i1 %rmore, label %release, label %round
{back}  store i32 %running, i32* %runp
  ret i32 0
cancelled:
  ret i32 3
done:
  store i32 0, i32* %runp
  ret i32 0
}}

declare i32 @llvm.cttz.i32(i32, i1)

",
        wait = state::WAIT_BAR,
        first_block = if fresh_loop.is_some() { "fl_chk" } else { "round" },
        entry_to = if fresh_loop.is_some() { "fl_chk" } else { "entry" },
        rsite0 = if fresh_unrolled.is_some() { FRESH_SITE as i32 } else { 0 },
        call = if fresh_fn {
            // Full warps start in `@wf_fresh`.
            format!("  %full = icmp eq i32 %fl, {full}
  br i1 %full, label %call_fresh, label %call_gen
call_fresh:
  %code_f = call i32 @wf_fresh(i8* %st, i64* %env, i32 %w, i32 %fl, i32 %prev, i8* %st)
  br label %called
call_gen:
  %code_g = call i32 @wf_warp(i8* %st, i64* %env, i32 %w, i32 %fl, i32 %prev)
  br label %called
called:
  %code = phi i32 [ %code_f, %call_fresh ], [ %code_g, %call_gen ]", full = full_bits::<W>())
        } else {
            "  %code = call i32 @wf_warp(i8* %st, i64* %env, i32 %w, i32 %fl, i32 %prev)".into()
        }
    )
}

/// In the IR of a CTA function with a first-round loop (`jit` hoists out
/// of it).
pub(crate) const FRESH_LOOP_MARK: &str = "fl_loop:";

/// `WARPFOLD_FRESH_LOOP=off`: barrier-free kernels start their warps in
/// the round loop, as others do (see `fresh_loop_blocks`).
fn fresh_loop_enabled() -> bool {
    std::env::var("WARPFOLD_FRESH_LOOP").map_or(true, |v| v != "off")
}

/// The first round of a barrier-free kernel of `n` whole warps: when the
/// driver has just started the CTA (every warp running and fresh), each
/// warp calls `@wf_fresh` in turn, in a loop with nothing else in it. The
/// call is inlined there and LICM hoists what every warp computes alike
/// (parameters, `%ctaid`, `%ntid` and what derives from them) out of the
/// loop; the round loop re-derived them per warp, behind a test of the
/// warp's fresh mark. Warps that do not finish go back to the driver,
/// which resumes them as after any first round (`*runp` then holds just
/// those warps, not every warp of the round: the driver drops finished
/// warps from it either way).
fn fresh_loop_blocks<const W: u32>(lean: &mut String, n: u32) {
    let all = low_bits(n);
    let _ = write!(
        lean,
        "fl_chk:
  %fla = icmp eq i32 %run0, {all}
  %flf0 = load i32, i32* %fresh
  %flf = icmp eq i32 %flf0, {full}
  %flok = and i1 %fla, %flf
  br i1 %flok, label %fl_loop, label %round
fl_loop:
  %flw = phi i32 [ 0, %fl_chk ], [ %flw1, %fl_next ]
  %fldone = phi i32 [ 0, %fl_chk ], [ %fldone1, %fl_next ]
  %flw64 = zext i32 %flw to i64
  %floff = mul i64 %flw64, %sb
  %flst = getelementptr i8, i8* %states, i64 %floff
  %flfp = getelementptr i32, i32* %fresh, i64 %flw64
  store i32 0, i32* %flfp
  %flcp = getelementptr i32, i32* %codes, i64 %flw64
  %flprev = load i32, i32* %flcp
  %flc = call i32 @wf_fresh(i8* %flst, i64* %env, i32 %flw, i32 {full}, i32 %flprev, i8* %flst)
  store i32 %flc, i32* %flcp
  %flx = icmp eq i32 %flc, 3
  br i1 %flx, label %cancelled, label %fl_next
fl_next:
  %flfin = icmp eq i32 %flc, 0
  %flbit = shl i32 1, %flw
  %fladd = select i1 %flfin, i32 %flbit, i32 0
  %fldone1 = or i32 %fldone, %fladd
  %flw1 = add i32 %flw, 1
  %flmore = icmp ult i32 %flw1, {n}
  br i1 %flmore, label %fl_loop, label %fl_end
fl_end:
  %flleft = xor i32 %fldone1, {all}
  %flnone = icmp eq i32 %flleft, 0
  br i1 %flnone, label %done, label %fl_back
fl_back:
  store i32 %flleft, i32* %runp
  ret i32 0
",
        full = full_bits::<W>()
    );
}

/// `%rsite` of the first round when it is unrolled (no barrier's site).
const FRESH_SITE: u32 = u32::MAX - 1;

/// The first round unrolled over the CTA's `n` warps (`FreshRound`): when
/// every warp is to start with all its lanes, each calls `@wf_fresh` with
/// its index a constant; a round that leaves them all at barrier `next`
/// goes straight on to its unrolled round. Else the round loop runs it.
fn unrolled_fresh<const W: u32>(
    lean: &mut String,
    round_in: &mut String,
    rsite_in: &mut String,
    bail_in: &mut [String; 4],
    n: u32,
    next: Option<u32>,
    state_bytes: usize,
    slots: &ChainSlots,
) {
    let all_lanes = full_bits::<W>();
    let all = low_bits(n);
    let _ = write!(
        lean,
        "uf_in:
  %ufa = icmp eq i32 %running, {all}
  br i1 %ufa, label %uf_chk, label %uf_bail
uf_chk:
"
    );
    // The driver marks every warp fresh before the CTA's first call and a
    // round calls every running warp, clearing its mark, before the CTA
    // returns: the marks are all set or all clear, and with whole warps
    // (`n` x W threads) a set one is all lanes. Warp 0's mark tells.
    for w in 0..n {
        let _ = writeln!(lean, "  %uffp{w} = getelementptr i32, i32* %fresh, i64 {w}");
    }
    let _ = write!(
        lean,
        "  %uffl0 = load i32, i32* %uffp0
  %ufall = icmp eq i32 %uffl0, {all_lanes}
  br i1 %ufall, label %uf_start, label %uf_bail
uf_start:
"
    );
    // Every warp starts now: their `fresh` entries cleared at once (in
    // one block the stores merge into a few vector stores).
    for w in 0..n {
        let _ = writeln!(lean, "  store i32 0, i32* %uffp{w}");
    }
    let _ = writeln!(lean, "  br label %uf_w0");
    let mut good = "true".to_string();
    for w in 0..n {
        let _ = write!(
            lean,
            "uf_w{w}:
  %ufcp{w} = getelementptr i32, i32* %codes, i64 {w}
  %ufprev{w} = load i32, i32* %ufcp{w}
  %ufp{w} = getelementptr i8, i8* %states, i64 {off}
  %ufc{w} = call i32 @wf_fresh(i8* %ufp{w}, i64* %env, i32 {w}, i32 {all_lanes}, i32 %ufprev{w}, i8* %scrp{w})
  store i32 %ufc{w}, i32* %ufcp{w}
  %ufeq{w} = icmp eq i32 %ufc{w}, %ufc0
  %ufg{w} = and i1 {good}, %ufeq{w}
  %ufx{w} = icmp eq i32 %ufc{w}, 3
  br i1 %ufx{w}, label %cancelled, label %uf_w{next}
",
            off = w as usize * state_bytes,
            next = w + 1
        );
        good = format!("%ufg{w}");
    }
    let _ = write!(
        lean,
        "uf_w{n}:
  %uflean = icmp uge i32 %ufc0, {bar}
  %ufok = and i1 {good}, %uflean
  %ufnext = sub i32 %ufc0, {bar}
  br i1 %ufok, label %uf_go, label %uf_out
uf_out:
  %uffin = icmp eq i32 %ufc0, 0
  %ufallfin = and i1 {good}, %uffin
  br i1 %ufallfin, label %done, label %uf_back
uf_back:
",
        bar = BAR_CODE
    );
    copy_back_by_code(lean, "ufb", n, ("ufc", "ufp"), slots);
    lean.push_str("  br label %back\nuf_go:\n");
    let from = match next {
        Some(to) => {
            let _ = write!(
                lean,
                "  %ufto = icmp eq i32 %ufnext, {to}
  br i1 %ufto, label %lu{to}_w0, label %uf_round
uf_round:
"
            );
            "uf_round"
        }
        None => "uf_go",
    };
    // Every warp left at the same barrier.
    copy_warps(lean, "ufr", n, &slots.lean, ("scrp", "ufp"));
    lean.push_str("  br label %round\n");
    // Not every warp full: the round loop runs the first round.
    lean.push_str(
        "uf_bail:
  br label %loop
",
    );
    let _ = write!(round_in, ", [ %running, %{from} ]");
    let _ = write!(rsite_in, ", [ %ufnext, %{from} ]");
    let _ = write!(bail_in[0], ", [ %running, %uf_bail ]");
    let _ = write!(bail_in[1], ", [ true, %uf_bail ]");
    let _ = write!(bail_in[2], ", [ 0, %uf_bail ]");
    let _ = write!(bail_in[3], ", [ 0, %uf_bail ]");
}

/// A lean round unrolled over the CTA's warps (see `cta_fn`): when every
/// warp runs with all its lanes, each calls the region function of block
/// `succ` with its index a constant, so LLVM folds what depends on it (a
/// warp's `%tid`, and the branches on it: in a tree reduction most warps
/// skip most steps at no cost). Else the round takes the loop at
/// `lr{site}`.
struct UnrolledRound {
    site: u32,
    succ: u32,
    /// The unrolled round to go on to when every warp stops at this site.
    next: Option<u32>,
    warps: u32,
    /// Constant offsets between warps' states let LLVM tell them apart.
    state_bytes: usize,
}

impl UnrolledRound {
    fn emit<const W: u32>(
        &self,
        lean: &mut String,
        round_in: &mut String,
        rsite_in: &mut String,
        slots: &ChainSlots,
    ) {
        let UnrolledRound {
            site,
            succ,
            next,
            warps: n,
            state_bytes,
        } = *self;
        let all_lanes = full_bits::<W>();
        let all = low_bits(n);
        let _ = write!(
            lean,
            "lu{site}_in:
  %ua{site} = icmp eq i32 %running, {all}
  br i1 %ua{site}, label %lu{site}_chk, label %lr{site}_in
lu{site}_chk:
"
        );
        let mut full = "true".to_string();
        for w in 0..n {
            let _ = write!(
                lean,
                "  %us{site}_{w} = getelementptr i8, i8* %states, i64 {off}
  %ulp{site}_{w} = getelementptr i8, i8* %us{site}_{w}, i64 {live}
  %ulpi{site}_{w} = bitcast i8* %ulp{site}_{w} to i32*
  %ulv{site}_{w} = load i32, i32* %ulpi{site}_{w}
  %ulf{site}_{w} = icmp eq i32 %ulv{site}_{w}, {all_lanes}
  %uf{site}_{w} = and i1 {full}, %ulf{site}_{w}
",
                off = w as usize * state_bytes,
                live = state::LIVE
            );
            full = format!("%uf{site}_{w}");
        }
        // The registers live here go to the warps' scratch copies.
        let _ = writeln!(
            lean,
            "  br i1 {full}, label %lu{site}_ci, label %lr{site}_in\nlu{site}_ci:"
        );
        let state = format!("us{site}_");
        copy_warps(lean, &format!("ci{site}"), n, &slots.into, (&state, "scrp"));
        let _ = writeln!(lean, "  br label %lu{site}_w0");
        let mut good = "true".to_string();
        for w in 0..n {
            let _ = write!(
                lean,
                "lu{site}_w{w}:
  %up{site}_{w} = getelementptr i8, i8* %states, i64 {off}
  %uc{site}_{w} = call i32 @wf_region{succ}(i8* %up{site}_{w}, i64* %env, i32 {w}, i32 0, i32 0, i8* %scrp{w})
  %ueq{site}_{w} = icmp eq i32 %uc{site}_{w}, %uc{site}_0
  %ug{site}_{w} = and i1 {good}, %ueq{site}_{w}
  %ux{site}_{w} = icmp eq i32 %uc{site}_{w}, 3
  br i1 %ux{site}_{w}, label %cancelled, label %lu{site}_w{next}
",
                next = w + 1,
                off = w as usize * state_bytes,
            );
            good = format!("%ug{site}_{w}");
        }
        // The warps' codes are stored only on the ways that read them
        // (the round loop and the driver): not when the round goes
        // straight on to the next unrolled one, nor when every warp has
        // finished (the CTA returns with none running).
        let store_codes = |lean: &mut String, way: &str| {
            for w in 0..n {
                let _ = write!(
                    lean,
                    "  %ucp{way}{site}_{w} = getelementptr i32, i32* %codes, i64 {w}
  store i32 %uc{site}_{w}, i32* %ucp{way}{site}_{w}
"
                );
            }
        };
        let _ = write!(
            lean,
            "lu{site}_w{n}:
  %ulean{site} = icmp uge i32 %uc{site}_0, {bar}
  %uok{site} = and i1 {good}, %ulean{site}
  %unext{site} = sub i32 %uc{site}_0, {bar}
  br i1 %uok{site}, label %lu{site}_go, label %lu{site}_out
lu{site}_out:
  %ufin{site} = icmp eq i32 %uc{site}_0, 0
  %uallfin{site} = and i1 {good}, %ufin{site}
  br i1 %uallfin{site}, label %done, label %lu{site}_back
lu{site}_back:
",
            bar = BAR_CODE
        );
        copy_back_by_code(
            lean,
            &format!("cb{site}"),
            n,
            (&format!("uc{site}_"), &format!("up{site}_")),
            slots,
        );
        store_codes(lean, "b");
        let _ = writeln!(lean, "  br label %back\nlu{site}_go:");
        if let Some(to) = next {
            // No check of the warps' lanes: they all started this round
            // with every lane and none can end on the way (`only_barrier`).
            let _ = write!(
                lean,
                "  %uto{site} = icmp eq i32 %unext{site}, {to}
  br i1 %uto{site}, label %lu{to}_w0, label %lu{site}_round
lu{site}_round:
"
            );
        }
        // Every warp left at the same barrier.
        let state = format!("up{site}_");
        copy_warps(lean, &format!("cr{site}"), n, &slots.lean, ("scrp", &state));
        store_codes(lean, "r");
        let _ = writeln!(lean, "  br label %round");
        // The block `round` is entered from.
        let from = if next.is_some() {
            format!("lu{site}_round")
        } else {
            format!("lu{site}_go")
        };
        let _ = write!(round_in, ", [ %running, %{from} ]");
        let _ = write!(rsite_in, ", [ %unext{site}, %{from} ]");
    }
}

/// Declarations of the runtime helpers and intrinsics the generated code
/// calls, the vector ones for warps of `W` lanes.
fn decls<const W: u32>() -> String {
    format!(
        "declare i64 @wf_int(i8*, i64, i64, i64, i64)
declare i64 @wf_float(i8*, i64, i64, i64)
declare i64 @wf_cvt(i8*, i64)
declare i64 @wf_testp(i8*, i64)
declare i64 @wf_atom(i8*, i64, i64, i64)
declare i64 @wf_clock()
declare i64 @wf_host(i8*, i64, i64, i64, i64, i64, i64, i64, i64)
declare i32 @llvm.ctpop.i32(i32)
declare i32 @llvm.ctlz.i32(i32, i1)
declare i32 @llvm.vector.reduce.umin.v{W}i32(<{W} x i32>)
declare i32 @llvm.vector.reduce.or.v{W}i32(<{W} x i32>)
declare i32 @llvm.vector.reduce.and.v{W}i32(<{W} x i32>)
declare i32 @llvm.vector.reduce.add.v{W}i32(<{W} x i32>)
declare i32 @llvm.vector.reduce.xor.v{W}i32(<{W} x i32>)
declare i32 @llvm.vector.reduce.umax.v{W}i32(<{W} x i32>)
declare i32 @llvm.vector.reduce.smin.v{W}i32(<{W} x i32>)
declare i32 @llvm.vector.reduce.smax.v{W}i32(<{W} x i32>)
declare i1 @llvm.vector.reduce.and.v{W}i1(<{W} x i1>)
declare <{W} x float> @llvm.fabs.v{W}f32(<{W} x float>)
declare <{W} x double> @llvm.fabs.v{W}f64(<{W} x double>)
declare <{W} x float> @llvm.copysign.v{W}f32(<{W} x float>, <{W} x float>)
declare <{W} x float> @llvm.fma.v{W}f32(<{W} x float>, <{W} x float>, <{W} x float>)
declare <{W} x double> @llvm.fma.v{W}f64(<{W} x double>, <{W} x double>, <{W} x double>)
declare <{W} x float> @llvm.sqrt.v{W}f32(<{W} x float>)
declare <{W} x double> @llvm.sqrt.v{W}f64(<{W} x double>)
declare <{W} x double> @llvm.exp2.v{W}f64(<{W} x double>)
declare <16 x i32> @llvm.x86.avx512.vpermi2var.d.512(<16 x i32>, <16 x i32>, <16 x i32>)
declare <8 x i32> @llvm.x86.avx2.permd(<8 x i32>, <8 x i32>)
declare <{W} x double> @llvm.log2.v{W}f64(<{W} x double>)
declare <{W} x double> @llvm.sin.v{W}f64(<{W} x double>)
declare <{W} x double> @llvm.cos.v{W}f64(<{W} x double>)
declare <{W} x float> @llvm.minnum.v{W}f32(<{W} x float>, <{W} x float>)
declare <{W} x double> @llvm.minnum.v{W}f64(<{W} x double>, <{W} x double>)
declare <{W} x float> @llvm.maxnum.v{W}f32(<{W} x float>, <{W} x float>)
declare <{W} x double> @llvm.maxnum.v{W}f64(<{W} x double>, <{W} x double>)
declare <{W} x i8> @llvm.ctpop.v{W}i8(<{W} x i8>)
declare <{W} x i16> @llvm.ctpop.v{W}i16(<{W} x i16>)
declare <{W} x i32> @llvm.ctpop.v{W}i32(<{W} x i32>)
declare <{W} x i64> @llvm.ctpop.v{W}i64(<{W} x i64>)
declare <{W} x i8> @llvm.ctlz.v{W}i8(<{W} x i8>, i1)
declare <{W} x i16> @llvm.ctlz.v{W}i16(<{W} x i16>, i1)
declare <{W} x i32> @llvm.ctlz.v{W}i32(<{W} x i32>, i1)
declare <{W} x i64> @llvm.ctlz.v{W}i64(<{W} x i64>, i1)
declare <{W} x i8> @llvm.bitreverse.v{W}i8(<{W} x i8>)
declare <{W} x i16> @llvm.bitreverse.v{W}i16(<{W} x i16>)
declare <{W} x i32> @llvm.bitreverse.v{W}i32(<{W} x i32>)
declare <{W} x i64> @llvm.bitreverse.v{W}i64(<{W} x i64>)
declare <{W} x i32> @llvm.fshl.v{W}i32(<{W} x i32>, <{W} x i32>, <{W} x i32>)
declare <{W} x i32> @llvm.fshr.v{W}i32(<{W} x i32>, <{W} x i32>, <{W} x i32>)
declare <{W} x i32> @llvm.fptosi.sat.v{W}i32.v{W}f32(<{W} x float>)
declare <{W} x i32> @llvm.fptoui.sat.v{W}i32.v{W}f32(<{W} x float>)
declare <{W} x i64> @llvm.fptosi.sat.v{W}i64.v{W}f32(<{W} x float>)
declare <{W} x i64> @llvm.fptoui.sat.v{W}i64.v{W}f32(<{W} x float>)
declare <{W} x i32> @llvm.fptosi.sat.v{W}i32.v{W}f64(<{W} x double>)
declare <{W} x i32> @llvm.fptoui.sat.v{W}i32.v{W}f64(<{W} x double>)
declare <{W} x i64> @llvm.fptosi.sat.v{W}i64.v{W}f64(<{W} x double>)
declare <{W} x i64> @llvm.fptoui.sat.v{W}i64.v{W}f64(<{W} x double>)
declare <{W} x float> @llvm.roundeven.v{W}f32(<{W} x float>)
declare <{W} x float> @llvm.floor.v{W}f32(<{W} x float>)
declare <{W} x float> @llvm.ceil.v{W}f32(<{W} x float>)
declare <{W} x float> @llvm.trunc.v{W}f32(<{W} x float>)
declare <{W} x double> @llvm.roundeven.v{W}f64(<{W} x double>)
declare <{W} x double> @llvm.floor.v{W}f64(<{W} x double>)
declare <{W} x double> @llvm.ceil.v{W}f64(<{W} x double>)
declare <{W} x double> @llvm.trunc.v{W}f64(<{W} x double>)
declare <{W} x i8> @llvm.masked.gather.v{W}i8.v{W}p0i8(<{W} x i8*>, i32, <{W} x i1>, <{W} x i8>)
declare <{W} x i16> @llvm.masked.gather.v{W}i16.v{W}p0i16(<{W} x i16*>, i32, <{W} x i1>, <{W} x i16>)
declare <{W} x i32> @llvm.masked.gather.v{W}i32.v{W}p0i32(<{W} x i32*>, i32, <{W} x i1>, <{W} x i32>)
declare <{W} x i64> @llvm.masked.gather.v{W}i64.v{W}p0i64(<{W} x i64*>, i32, <{W} x i1>, <{W} x i64>)
declare void @llvm.prefetch.p0i8(i8*, i32, i32, i32)
declare void @llvm.masked.scatter.v{W}i8.v{W}p0i8(<{W} x i8>, <{W} x i8*>, i32, <{W} x i1>)
declare void @llvm.masked.scatter.v{W}i16.v{W}p0i16(<{W} x i16>, <{W} x i16*>, i32, <{W} x i1>)
declare void @llvm.masked.scatter.v{W}i32.v{W}p0i32(<{W} x i32>, <{W} x i32*>, i32, <{W} x i1>)
declare void @llvm.masked.scatter.v{W}i64.v{W}p0i64(<{W} x i64>, <{W} x i64*>, i32, <{W} x i1>)
declare <2 x i8> @llvm.masked.load.v2i8.p0v2i8(<2 x i8>*, i32, <2 x i1>, <2 x i8>)
declare void @llvm.masked.store.v2i8.p0v2i8(<2 x i8>, <2 x i8>*, i32, <2 x i1>)
declare <2 x i16> @llvm.masked.load.v2i16.p0v2i16(<2 x i16>*, i32, <2 x i1>, <2 x i16>)
declare void @llvm.masked.store.v2i16.p0v2i16(<2 x i16>, <2 x i16>*, i32, <2 x i1>)
declare <2 x i32> @llvm.masked.load.v2i32.p0v2i32(<2 x i32>*, i32, <2 x i1>, <2 x i32>)
declare void @llvm.masked.store.v2i32.p0v2i32(<2 x i32>, <2 x i32>*, i32, <2 x i1>)
declare <2 x i64> @llvm.masked.load.v2i64.p0v2i64(<2 x i64>*, i32, <2 x i1>, <2 x i64>)
declare void @llvm.masked.store.v2i64.p0v2i64(<2 x i64>, <2 x i64>*, i32, <2 x i1>)
declare <4 x i8> @llvm.masked.load.v4i8.p0v4i8(<4 x i8>*, i32, <4 x i1>, <4 x i8>)
declare void @llvm.masked.store.v4i8.p0v4i8(<4 x i8>, <4 x i8>*, i32, <4 x i1>)
declare <4 x i16> @llvm.masked.load.v4i16.p0v4i16(<4 x i16>*, i32, <4 x i1>, <4 x i16>)
declare void @llvm.masked.store.v4i16.p0v4i16(<4 x i16>, <4 x i16>*, i32, <4 x i1>)
declare <4 x i32> @llvm.masked.load.v4i32.p0v4i32(<4 x i32>*, i32, <4 x i1>, <4 x i32>)
declare void @llvm.masked.store.v4i32.p0v4i32(<4 x i32>, <4 x i32>*, i32, <4 x i1>)
declare <4 x i64> @llvm.masked.load.v4i64.p0v4i64(<4 x i64>*, i32, <4 x i1>, <4 x i64>)
declare void @llvm.masked.store.v4i64.p0v4i64(<4 x i64>, <4 x i64>*, i32, <4 x i1>)
declare <8 x i8> @llvm.masked.load.v8i8.p0v8i8(<8 x i8>*, i32, <8 x i1>, <8 x i8>)
declare void @llvm.masked.store.v8i8.p0v8i8(<8 x i8>, <8 x i8>*, i32, <8 x i1>)
declare <8 x i16> @llvm.masked.load.v8i16.p0v8i16(<8 x i16>*, i32, <8 x i1>, <8 x i16>)
declare void @llvm.masked.store.v8i16.p0v8i16(<8 x i16>, <8 x i16>*, i32, <8 x i1>)
declare <8 x i32> @llvm.masked.load.v8i32.p0v8i32(<8 x i32>*, i32, <8 x i1>, <8 x i32>)
declare void @llvm.masked.store.v8i32.p0v8i32(<8 x i32>, <8 x i32>*, i32, <8 x i1>)
declare <8 x i64> @llvm.masked.load.v8i64.p0v8i64(<8 x i64>*, i32, <8 x i1>, <8 x i64>)
declare void @llvm.masked.store.v8i64.p0v8i64(<8 x i64>, <8 x i64>*, i32, <8 x i1>)
declare <16 x i8> @llvm.masked.load.v16i8.p0v16i8(<16 x i8>*, i32, <16 x i1>, <16 x i8>)
declare <16 x i16> @llvm.masked.load.v16i16.p0v16i16(<16 x i16>*, i32, <16 x i1>, <16 x i16>)
declare <16 x i32> @llvm.masked.load.v16i32.p0v16i32(<16 x i32>*, i32, <16 x i1>, <16 x i32>)
declare <16 x i64> @llvm.masked.load.v16i64.p0v16i64(<16 x i64>*, i32, <16 x i1>, <16 x i64>)
declare <{W} x i8> @llvm.masked.load.v{W}i8.p0v{W}i8(<{W} x i8>*, i32, <{W} x i1>, <{W} x i8>)
declare <{W} x i16> @llvm.masked.load.v{W}i16.p0v{W}i16(<{W} x i16>*, i32, <{W} x i1>, <{W} x i16>)
declare <{W} x i32> @llvm.masked.load.v{W}i32.p0v{W}i32(<{W} x i32>*, i32, <{W} x i1>, <{W} x i32>)
declare <{W} x i64> @llvm.masked.load.v{W}i64.p0v{W}i64(<{W} x i64>*, i32, <{W} x i1>, <{W} x i64>)
declare void @llvm.masked.store.v16i8.p0v16i8(<16 x i8>, <16 x i8>*, i32, <16 x i1>)
declare void @llvm.masked.store.v16i16.p0v16i16(<16 x i16>, <16 x i16>*, i32, <16 x i1>)
declare void @llvm.masked.store.v16i32.p0v16i32(<16 x i32>, <16 x i32>*, i32, <16 x i1>)
declare void @llvm.masked.store.v16i64.p0v16i64(<16 x i64>, <16 x i64>*, i32, <16 x i1>)
declare void @llvm.masked.store.v{W}i8.p0v{W}i8(<{W} x i8>, <{W} x i8>*, i32, <{W} x i1>)
declare void @llvm.masked.store.v{W}i16.p0v{W}i16(<{W} x i16>, <{W} x i16>*, i32, <{W} x i1>)
declare void @llvm.masked.store.v{W}i32.p0v{W}i32(<{W} x i32>, <{W} x i32>*, i32, <{W} x i1>)
declare void @llvm.masked.store.v{W}i64.p0v{W}i64(<{W} x i64>, <{W} x i64>*, i32, <{W} x i1>)

"
    )
}

use crate::lower::{emit_inst, emit_term};
pub(crate) use Gen as Emitter;

#[cfg(test)]
mod tests {
    use super::{
        blocks_in_loops, cta_fn, cta_stream, no_jump_test, reads_one_stream, split_modules, state,
        state_layout, ChainCopies, ChainSlots, FreshRound, NoJump, RegionSite, Slot,
        SPLIT_ABOVE_BYTES,
    };
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;

    /// Only a kernel with one global load and no loop reads one stream a
    /// CTA (and prefetches the next CTAs' data on any CPU): the suite's
    /// test kernels with one load (`stream`), seventeen (`rowloads`), and
    /// three in a grid-stride loop (`gridstride`).
    #[test]
    fn one_load_outside_loops_is_one_stream_a_cta() {
        let src = include_str!("../../runtime/tests/kernels/lane_forms.ptx");
        let one_stream = |name| {
            let p = crate::prepare::prepared(src, name);
            reads_one_stream(&p, &blocks_in_loops(&p))
        };
        assert!(one_stream("stream"));
        assert!(!one_stream("rowloads"));
        assert!(!one_stream("gridstride"));
    }

    /// A kernel reading one stream with a CTA barrier (`streambar`, a
    /// block reduction's shape) prefetches the next CTAs' data only in
    /// code without AVX-512; one without barriers (`stream`) in any.
    #[test]
    fn barriers_keep_the_cta_prefetch_only_without_avx512() {
        let src = include_str!("../../runtime/tests/kernels/lane_forms.ptx");
        let stream = |name, features| {
            let p = crate::prepare::prepared(src, name);
            cta_stream(&p, &blocks_in_loops(&p), features)
        };
        let (avx512, avx2) = ("+avx,+avx2,+fma,+avx512f", "+avx,+avx2,+fma,-avx512f");
        assert!(stream("stream", avx512));
        assert!(stream("stream", avx2));
        assert!(stream("streambar", avx2));
        assert!(!stream("streambar", avx512));
    }

    /// The compare that says an index leaves no lane past a jump agrees
    /// with counting the lanes, around its constant and at the ends of
    /// the index's range, for both signs, several strides, element and
    /// extended widths, and warp widths.
    #[test]
    fn no_jump_test_agrees_with_the_lanes_values() {
        fn check<const W: u32>() {
            for (bits, wide) in [(8u32, 64u32), (16, 64), (32, 64), (64, 128)] {
                for signed in [false, true] {
                    let (lo, hi): (i128, i128) = if signed {
                        (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
                    } else {
                        (0, (1 << bits) - 1)
                    };
                    for stride in [
                        1i64,
                        2,
                        3,
                        7,
                        4096,
                        1 << 40,
                        i64::MAX,
                        -1,
                        -2,
                        -5,
                        -4096,
                        -(1 << 40),
                        i64::MIN,
                    ] {
                        let test = no_jump_test::<W>(wide, bits, signed, stride);
                        let says = |a: i128| match test {
                            NoJump::Always(all) => all,
                            NoJump::AtMost(c) => a <= c,
                            NoJump::AtLeast(c) => a >= c,
                        };
                        let c = match test {
                            NoJump::AtMost(c) | NoJump::AtLeast(c) => c,
                            NoJump::Always(_) => lo,
                        };
                        let near = |x: i128| (x - 80..=x + 80).filter(|a| (lo..=hi).contains(a));
                        for a in near(c).chain(near(lo)).chain(near(hi)) {
                            let fits = (0..W).all(|i| {
                                (lo..=hi).contains(&(a + i128::from(i) * i128::from(stride)))
                            });
                            assert_eq!(
                                says(a),
                                fits,
                                "W {W} bits {bits} signed {signed} stride {stride} a {a}"
                            );
                        }
                    }
                }
            }
        }
        check::<32>();
        check::<16>();
        check::<8>();
    }

    /// A split module's halves are valid IR each: the general warp function
    /// exported (and no longer inlined) from one, declared in the other
    /// where the round loop calls it; helpers defined in both.
    #[test]
    fn split_modules_link_through_the_general_warp_function() {
        let pad = "; filler\n".repeat(SPLIT_ABOVE_BYTES / "; filler\n".len() + 1);
        let prelude = "declare void @wf_external()\n";
        let general = format!("define internal i32 @wf_warp(i8* noalias %st, i64* %env, i32 %warp, i32 %fresh_live, i32 %prev) alwaysinline #0 {{\nentry:\n{pad}  %r = call i32 @wf_helper()\n  ret i32 %r\n}}\n");
        let rest = format!("define i32 @wf_cta(i8* %st, i64* %env) #0 {{\nentry:\n{pad}  %r = call i32 @wf_warp(i8* %st, i64* %env, i32 0, i32 0, i32 0)\n  call void @wf_external()\n  ret i32 %r\n}}\n");
        let helpers =
            "define internal i32 @wf_helper() #0 {\n  ret i32 1\n}\nattributes #0 = { nounwind }\n";
        let ir = format!("{prelude}{general}{rest}{helpers}");
        let (a, b) = (prelude.len(), prelude.len() + general.len());
        let modules = split_modules(&ir, a, b, b + rest.len());
        if warpfold_interp::cores() < 2 {
            assert_eq!(modules, vec![ir]);
            return;
        }
        assert_eq!(modules.len(), 2);
        let context = Context::create();
        let parsed: Vec<_> = modules
            .iter()
            .map(|m| {
                let buf = MemoryBuffer::create_from_memory_range_copy(m.as_bytes(), "m");
                let module = context.create_module_from_ir(buf).expect("parses");
                module.verify().expect("valid");
                module
            })
            .collect();
        let warp = parsed[0].get_function("wf_warp").unwrap();
        assert_eq!(warp.get_linkage(), inkwell::module::Linkage::External);
        assert!(warp.count_basic_blocks() > 0);
        assert!(modules[0].contains(") noinline #0"));
        let called = parsed[1].get_function("wf_warp").unwrap();
        assert_eq!(called.count_basic_blocks(), 0, "declared only");
        assert!(parsed[1].get_function("wf_cta").is_some());
        assert!(parsed.iter().all(|m| m.get_function("wf_helper").is_some()));
        // Small kernels stay whole.
        let small = "define i32 @wf_cta() {\n  ret i32 0\n}\n";
        assert_eq!(
            split_modules(small, 0, 0, small.len()),
            vec![small.to_string()]
        );
    }

    /// The round loop is text put together from optional parts (region
    /// sites, unrolled rounds, `@wf_fresh`, lean releases): every
    /// combination must be IR LLVM accepts (phis naming exactly their
    /// predecessors, definitions dominating uses).
    #[test]
    fn round_loop_is_valid_ir_in_every_combination() {
        let sites = [(3u32, 4u32), (7, 8)];
        for release in [false, true] {
            for with_regions in [false, true] {
                for unroll_sites in [false, true] {
                    for unrolled in [None, Some(1), Some(4), Some(8)] {
                        for (fresh, chained) in [
                            (FreshRound::None, false),
                            (FreshRound::Loop, false),
                            (FreshRound::Loop, true),
                            (FreshRound::Unrolled { next: None }, false),
                            (FreshRound::Unrolled { next: Some(3) }, true),
                        ] {
                            // Chained: each region ends at the other's barrier.
                            let regions: Vec<RegionSite> = if with_regions && release {
                                sites
                                    .iter()
                                    .zip(sites.iter().rev())
                                    .map(|(&(site, succ), &(other, _))| RegionSite {
                                        site,
                                        succ,
                                        unrolled: unroll_sites,
                                        next: chained.then_some(other),
                                        pair: false,
                                    })
                                    .collect()
                            } else {
                                Vec::new()
                            };
                            let mut ir = String::from(
                                "declare i32 @wf_warp(i8*, i64*, i32, i32, i32)\n\
                                 declare i32 @wf_fresh(i8*, i64*, i32, i32, i32, i8*)\n",
                            );
                            for (_, b) in sites {
                                ir.push_str(&format!(
                                    "declare i32 @wf_region{b}(i8*, i64*, i32, i32, i32, i8*)\n"
                                ));
                            }
                            // Copies of a word and a vector for every
                            // unrolled site and the first round.
                            let slot = |off: usize, ty: &str| Slot { off, ty: ty.into() };
                            let slots = ChainSlots {
                                into: vec![slot(256, "i32")],
                                lean: vec![slot(256, "i32"), slot(384, "<8 x i32>")],
                                other: vec![slot(384, "<8 x i32>")],
                            };
                            let chain = ChainCopies {
                                sites: regions.iter().map(|r| (r.site, slots.clone())).collect(),
                                fresh: slots.clone(),
                            };
                            // Every warp width, with and without mask
                            // registers (the live mask's two forms).
                            // And CTAs of whole warps or not (the first
                            // round's own loop).
                            for (lanes, avx512, whole) in [8, 16, 32]
                                .into_iter()
                                .flat_map(|l| [(l, true), (l, false)])
                                .flat_map(|(l, a)| {
                                    [None, Some(1), Some(8), Some(32)].map(|w| (l, a, w))
                                })
                            {
                                let mut ir = ir.clone();
                                ir.push_str(&match lanes {
                                    8 => cta_fn::<8>(
                                        release, avx512, &regions, fresh, unrolled, whole, 4096,
                                        &chain,
                                    ),
                                    16 => cta_fn::<16>(
                                        release, avx512, &regions, fresh, unrolled, whole, 4096,
                                        &chain,
                                    ),
                                    _ => cta_fn::<32>(
                                        release, avx512, &regions, fresh, unrolled, whole, 4096,
                                        &chain,
                                    ),
                                });
                                ir.push_str("attributes #0 = { nounwind }\n");
                                let context = Context::create();
                                let buf =
                                    MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "t");
                                let what = format!(
                                    "{lanes} lanes, avx512 {avx512}, release {release}, regions {regions:?}, unrolled {unrolled:?}, fresh {fresh:?}, whole warps {whole:?}"
                                );
                                let module = context
                                    .create_module_from_ir(buf)
                                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                                if let Err(e) = module.verify() {
                                    panic!("{what}: {}", e.to_string_lossy());
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The warp state's register slots: live scalars packed together
    /// after the header and aligned to their size (16 at most), vectors on
    /// 128-byte boundaries with room for every lane; no slot or jump slot
    /// in the header or past the end; live registers' bytes (and their
    /// jumps') apart from each other's, and from where the dead registers
    /// and unused jumps point; at every warp width.
    #[test]
    fn register_slots_never_overlap_and_scalars_share_lines() {
        use crate::lanes::Lanes;
        let scalar = |jump: i64| {
            Some(Lanes {
                jump,
                ..Lanes::uniform(1)
            })
        };
        let bits = [32, 64, 1, 32, 128, 16, 8, 64, 32, 1, 64, 32, 128, 32];
        let forms = [
            scalar(0),
            None,
            scalar(0),
            scalar(4),
            None,
            scalar(0),
            None,
            scalar(-8),
            scalar(0),
            None,
            None,
            scalar(4),
            scalar(0),
            scalar(0),
        ];
        let live = [
            true, true, true, true, true, false, true, true, true, true, false, false, true, true,
        ];
        // Registers 1 (64 bits) and 10 (dead) kept per block row of 8.
        let mut rows = vec![None; bits.len()];
        rows[1] = Some(Lanes::uniform(1));
        rows[10] = Some(Lanes::uniform(1));
        let check_rows = |w: u32| {
            if w > 8 {
                rows.clone()
            } else {
                vec![None; bits.len()]
            }
        };
        fn check<const W: u32>(
            bits: &[u32],
            forms: &[Option<Lanes>],
            rows: &[Option<Lanes>],
            live: &[bool],
        ) {
            let per_row = (W / 8).max(1);
            let (offsets, jumps, end) = state_layout::<W>(bits, forms, rows, per_row, live);
            // Each slot as a byte range [start, end), and whether it is kept.
            let mut ranges = Vec::new();
            for (i, (&b, f)) in bits.iter().zip(forms).enumerate() {
                let len = match f {
                    Some(_) => (b as usize).div_ceil(8),
                    None if rows[i].is_some() => b as usize / 8 * per_row as usize,
                    None if b == 1 => 4,
                    None => b as usize / 8 * W as usize,
                };
                match f {
                    Some(_) if live[i] => {
                        let align = len.next_multiple_of(8).min(16);
                        assert_eq!(offsets[i] % align, 0, "scalar register {i} unaligned");
                    }
                    // A row register as aligned as its vector type.
                    None if live[i] && rows[i].is_some() => {
                        assert_eq!(offsets[i] % len.next_power_of_two(), 0, "row register {i}")
                    }
                    None if live[i] => assert_eq!(offsets[i] % 128, 0, "vector {i} unaligned"),
                    _ => {}
                }
                ranges.push((offsets[i], offsets[i] + len, live[i]));
                let jump = f.is_some_and(|l| l.jump != 0);
                ranges.push((jumps[i], jumps[i] + 4, live[i] && jump));
            }
            for (a, x) in ranges.iter().enumerate() {
                assert!(x.0 >= state::REGS, "slot {x:?} in the header");
                assert!(x.1 <= end, "slot {x:?} past the end");
                for y in ranges[a + 1..].iter().filter(|y| x.2 || y.2) {
                    assert!(x.1 <= y.0 || y.1 <= x.0, "slots {x:?} and {y:?} overlap");
                }
            }
            assert_eq!(end % 128, 0);
            // The live scalars and their jumps fit in two 128-byte lines.
            let scalars = (0..bits.len()).filter(|&i| live[i] && forms[i].is_some());
            let ends = scalars.map(|i| match forms[i] {
                Some(l) if l.jump != 0 => jumps[i] + 4,
                _ => offsets[i] + (bits[i] as usize).div_ceil(8),
            });
            let last = ends.max().unwrap();
            assert!(last <= state::REGS + 256, "scalars spread to {last}");
        }
        let no_rows = vec![None; bits.len()];
        check::<32>(&bits, &forms, &no_rows, &live);
        check::<16>(&bits, &forms, &no_rows, &live);
        check::<8>(&bits, &forms, &no_rows, &live);
        // With fewer scalars before them too (row registers start where
        // the scalars end).
        for drop in 0..8 {
            let mut live = live;
            for (bit, reg) in [0, 2, 13].into_iter().enumerate() {
                live[reg] &= drop & (1 << bit) == 0;
            }
            check::<32>(&bits, &forms, &check_rows(32), &live);
            check::<16>(&bits, &forms, &check_rows(16), &live);
        }
    }
}
