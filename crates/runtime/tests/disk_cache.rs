//! The disk cache of compiled machine code: a second process (here: a
//! second device) loads the code instead of compiling it, gets the same
//! results, and a damaged entry is rebuilt.

use warpfold::{Arg, CacheUse, Device};

// Per-lane helpers (atom.inc), a libm call (ex2.approx) and plain code: the
// loaded object must find all of them.
const PTX: &str = "
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 pout, .param .u64 pcount)
{
  .reg .b32 %r<4>;
  .reg .f32 %f<3>;
  .reg .b64 %d<5>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %d1, [pout];
  ld.param.u64 %d2, [pcount];
  atom.global.inc.u32 %r2, [%d2], 1000;
  cvt.rn.f32.u32 %f1, %r1;
  mul.rn.f32 %f1, %f1, 0f3DCCCCCD;
  ex2.approx.f32 %f2, %f1;
  mul.wide.u32 %d3, %r1, 4;
  add.s64 %d4, %d1, %d3;
  st.global.f32 [%d4], %f2;
  ret;
}
";

fn run(dev: &Device) -> (CacheUse, Vec<u8>, Vec<u8>) {
    let m = dev.load_ptx(PTX).unwrap();
    let k = m.kernel("k").unwrap();
    let used = match &*k.compiled([64, 1, 1]) {
        Ok(c) => c.cache,
        Err(e) => panic!("does not compile: {e}"),
    };
    let out = dev.buffer_zeroed(64 * 4).unwrap();
    let count = dev.buffer_zeroed(4).unwrap();
    k.launch(
        [1, 1, 1],
        [64, 1, 1],
        0,
        &[Arg::Buffer(&out), Arg::Buffer(&count)],
    )
    .unwrap();
    (used, out.to_bytes(), count.to_bytes())
}

#[test]
fn machine_code_is_reused_across_devices_and_damaged_entries_are_rebuilt() {
    let dir = std::env::temp_dir().join(format!("warpfold-disk-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dev = || Device::new().with_disk_cache(Some(dir.clone()));

    let (first, out1, count1) = run(&dev());
    assert_eq!(first, CacheUse::Stored);
    assert_eq!(count1, 64u32.to_le_bytes());
    let want: Vec<u8> = (0..64)
        .flat_map(|i| {
            let x = (i as f32) * f32::from_bits(0x3DCC_CCCD);
            ((x as f64).exp2() as f32).to_le_bytes()
        })
        .collect();
    assert_eq!(out1, want);

    let (second, out2, count2) = run(&dev());
    assert_eq!(second, CacheUse::Loaded);
    assert_eq!((out2, count2), (out1.clone(), count1.clone()));

    // Damage every entry: it is ignored, compiled again and replaced.
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let mut b = std::fs::read(&p).unwrap();
        let mid = b.len() / 2;
        b[mid] ^= 0xff;
        std::fs::write(&p, b).unwrap();
    }
    let (third, out3, _) = run(&dev());
    assert_eq!(third, CacheUse::Stored);
    assert_eq!(out3, out1);
    assert_eq!(run(&dev()).0, CacheUse::Loaded);

    let (off, out4, _) = run(&Device::new().with_disk_cache(None));
    assert_eq!(off, CacheUse::Off);
    assert_eq!(out4, out1);
    let _ = std::fs::remove_dir_all(&dir);
}
