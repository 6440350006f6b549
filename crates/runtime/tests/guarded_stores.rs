//! Stores in the arms of divergent ifs, which the compiled backend runs as
//! guarded (masked) stores after if-conversion: to shared, global, local
//! and generic memory, vector stores, stores in an if inside an if. Both
//! backends, warps of 32, 16 and 8 lanes, against values computed on the
//! host. (One test a file: the count of converted branches is a process's.)

mod common;

/// One compare-exchange step on 64 keys in shared memory, swapping where
/// the keys are out of order (a data-dependent triangle of two stores), a
/// diamond storing different values to global memory in its two arms, a
/// triangle storing twice to one word (the second store wins), an if in
/// an if storing in both, a two-word vector store, a store to a local
/// word read back after the join, and a store through a generic address.
const STEP: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry step(.param .u64 out, .param .u64 keys)
{
  .reg .pred %p<8>;
  .reg .f32 %f<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  .shared .align 4 .b8 s[256];
  .local .align 4 .b8 word[4];
  ld.param.u64 %rd0, [out];
  ld.param.u64 %rd1, [keys];
  cvta.to.global.u64 %rd0, %rd0;
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd2, %r0, 8;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f0, [%rd3];
  ld.global.f32 %f1, [%rd3+4];
  mov.u64 %rd4, s;
  add.s64 %rd5, %rd4, %rd2;
  st.shared.f32 [%rd5], %f0;
  st.shared.f32 [%rd5+4], %f1;
  bar.sync 0;
  // pos = 2t - (t & 1): pairs (0, 2), (1, 3), (4, 6), ...
  and.b32 %r1, %r0, 1;
  shl.b32 %r2, %r0, 1;
  sub.s32 %r3, %r2, %r1;
  mul.wide.s32 %rd6, %r3, 4;
  add.s64 %rd7, %rd4, %rd6;
  ld.shared.f32 %f2, [%rd7];
  ld.shared.f32 %f3, [%rd7+8];
  setp.gt.f32 %p0, %f2, %f3;
  @!%p0 bra KEEP;
  st.shared.f32 [%rd7], %f3;
  st.shared.f32 [%rd7+8], %f2;
KEEP:
  bar.sync 0;
  ld.shared.f32 %f0, [%rd5];
  ld.shared.f32 %f1, [%rd5+4];
  add.s64 %rd8, %rd0, %rd2;
  st.global.f32 [%rd8], %f0;
  st.global.f32 [%rd8+4], %f1;
  // out[64 + t]: 3t where t % 3 == 0, else t + 100
  mul.wide.u32 %rd9, %r0, 4;
  add.s64 %rd10, %rd0, %rd9;
  rem.u32 %r4, %r0, 3;
  setp.eq.u32 %p1, %r4, 0;
  @%p1 bra THREE;
  add.u32 %r5, %r0, 100;
  st.global.u32 [%rd10+256], %r5;
  bra.uni JOIN;
THREE:
  mul.lo.u32 %r5, %r0, 3;
  st.global.u32 [%rd10+256], %r5;
JOIN:
  // out[96 + t]: 7 where t & 4, else untouched (0); two stores, the last 7
  and.b32 %r6, %r0, 4;
  setp.eq.u32 %p2, %r6, 0;
  @%p2 bra DONE;
  st.global.u32 [%rd10+384], %r6;
  st.global.u32 [%rd10+384], 7;
DONE:
  // out[128 + t]: t odd: 1, and 2 where t & 2 as well
  and.b32 %r7, %r0, 1;
  setp.eq.u32 %p3, %r7, 0;
  @%p3 bra EVEN;
  st.global.u32 [%rd10+512], 1;
  and.b32 %r8, %r0, 2;
  setp.eq.u32 %p4, %r8, 0;
  @%p4 bra EVEN;
  st.global.u32 [%rd10+512], 2;
EVEN:
  // out[160 + 2t], out[161 + 2t]: t, t + 1 where t < 20
  setp.ge.u32 %p5, %r0, 20;
  @%p5 bra PAIR;
  add.u32 %r9, %r0, 1;
  add.s64 %rd11, %rd0, %rd2;
  st.global.v2.u32 [%rd11+640], {%r0, %r9};
PAIR:
  // out[224 + t]: t where t % 5 == 0, else 5, through a local word
  st.local.u32 [word], 5;
  rem.u32 %r10, %r0, 5;
  setp.ne.u32 %p6, %r10, 0;
  @%p6 bra FIVE;
  st.local.u32 [word], %r0;
FIVE:
  ld.local.u32 %r11, [word];
  st.global.u32 [%rd10+896], %r11;
  // out[256 + t]: t + 7 where t > 24, through a generic address
  ld.param.u64 %rd12, [out];
  add.s64 %rd13, %rd12, %rd9;
  setp.le.u32 %p7, %r0, 24;
  @%p7 bra END;
  add.u32 %r12, %r0, 7;
  st.u32 [%rd13+1024], %r12;
END:
  ret;
}
"#;

/// What `STEP` writes for `keys` (64 of them).
fn step_on_host(keys: &[f32]) -> Vec<u32> {
    let mut s = keys.to_vec();
    for t in 0..32usize {
        let pos = 2 * t - (t & 1);
        if s[pos] > s[pos + 2] {
            s.swap(pos, pos + 2);
        }
    }
    let mut out: Vec<u32> = s.iter().map(|x| x.to_bits()).collect();
    out.extend((0..32u32).map(|t| if t % 3 == 0 { 3 * t } else { t + 100 }));
    out.extend((0..32u32).map(|t| if t & 4 != 0 { 7 } else { 0 }));
    out.extend((0..32u32).map(|t| match (t & 1, t & 2) {
        (0, _) => 0,
        (_, 0) => 1,
        _ => 2,
    }));
    out.extend((0..64u32).map(|k| if k / 2 < 20 { k / 2 + k % 2 } else { 0 }));
    out.extend((0..32u32).map(|t| if t % 5 == 0 { t } else { 5 }));
    out.extend((0..32u32).map(|t| if t > 24 { t + 7 } else { 0 }));
    out
}

#[test]
fn stores_in_divergent_arms_agree_with_the_host_on_both_backends() {
    let keys = common::scrambled_keys(64, 7);
    let want = step_on_host(&keys);
    let bytes: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()).collect();
    let before = warpfold_cpu::if_converted_branches();
    for (backend, width) in common::BACKENDS {
        let got = common::words(&common::one_cta(
            STEP,
            "step",
            backend,
            width,
            &[&bytes],
            288 * 4,
        ));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g, w,
                "{backend:?} {width:?}: word {i}: {g:#x} instead of {w:#x}"
            );
        }
    }
    // The swap, the diamond, the double store's triangle, the two nested
    // ifs, the vector store's, the local store's and the generic store's
    // triangles: 8 at each width (the kernel is prepared twice a
    // compilation).
    if std::env::var("WARPFOLD_IF_CONVERT").map_or(true, |v| v != "off") {
        assert!(warpfold_cpu::if_converted_branches() - before >= 8 * 2 * 3);
    }
}
