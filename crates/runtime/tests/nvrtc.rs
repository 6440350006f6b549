//! CUDA source through NVRTC: the front door for `.cu` files. NVRTC comes
//! from the pip package the test script installs; set
//! WARPFOLD_SKIP_NVRTC=1 to skip where it cannot be installed.

use warpfold::host::{ArgSpec, HostArray, Prepared};
use warpfold::{nvrtc, Arg, Backend, Device};
use warpfold_corpus::{cases, compare, dims, expectation};

fn skip() -> bool {
    std::env::var_os("WARPFOLD_SKIP_NVRTC").is_some()
}

#[test]
fn saxpy_from_cuda_source() {
    if skip() {
        return;
    }
    let src = include_str!("../../../examples/saxpy/saxpy.cu");
    let dev = Device::new();
    let (module, ptx) = dev
        .load_cuda(src, "saxpy.cu", &nvrtc::Options::default())
        .expect("NVRTC compiles saxpy (pip install nvidia-cuda-nvrtc-cu12)");
    assert!(ptx.contains(".entry saxpy"));
    let x: Vec<f32> = (0..300).map(|i| i as f32).collect();
    let dx = dev.buffer_from(&x).unwrap();
    let dy = dev.buffer_from(&vec![0.5f32; 300]).unwrap();
    module
        .kernel("saxpy")
        .unwrap()
        .launch(
            [3, 1, 1],
            [128, 1, 1],
            0,
            &[
                Arg::I32(300),
                Arg::F32(-2.0),
                Arg::Buffer(&dx),
                Arg::Buffer(&dy),
            ],
        )
        .unwrap();
    let y: Vec<f32> = dy.to_vec().unwrap();
    assert!(y.iter().zip(&x).all(|(y, x)| *y == -2.0 * x + 0.5));
}

#[test]
fn compile_errors_are_reported() {
    if skip() {
        return;
    }
    let err = Device::new()
        .load_cuda(
            "__global__ void k() { undefined_thing(); }",
            "bad.cu",
            &nvrtc::Options::default(),
        )
        .err()
        .expect("fails");
    let msg = err.to_string();
    assert!(
        msg.contains("bad.cu") && msg.contains("undefined_thing"),
        "{msg}"
    );
}

/// Every corpus kernel compiled fresh from its .cu gives the expected results
/// (catches PTX committed stale relative to its source).
#[test]
fn corpus_sources_compile_and_match() {
    if skip() {
        return;
    }
    let mut failures = Vec::new();
    for case in cases() {
        let src = std::fs::read_to_string(case.dir.join("kernel.cu")).unwrap();
        let arch = case
            .file
            .archs
            .as_ref()
            .and_then(|a| a.last())
            .and_then(|a| a.parse().ok())
            .unwrap_or(80);
        for l in &case.file.launches {
            // The interpreter: the corpus's error cases need its checks.
            let dev = Device::new().with_backend(Backend::Interp);
            let opts = nvrtc::Options {
                arch,
                ..Default::default()
            };
            let module = match dev.load_cuda(&src, &format!("{}/kernel.cu", case.name), &opts) {
                Ok((m, _)) => m,
                Err(e) => {
                    failures.push(format!("{}: {e}", case.name));
                    break;
                }
            };
            let prepared: Vec<Prepared> = l
                .args
                .iter()
                .map(|s| ArgSpec::parse(s).unwrap().prepare(&dev, &case.dir).unwrap())
                .collect();
            let args: Vec<_> = prepared.iter().map(|p| p.as_arg()).collect();
            let r = module.kernel(&l.kernel).unwrap().launch(
                dims(&l.grid),
                dims(&l.block),
                l.shared_bytes,
                &args,
            );
            if l.expect_error.is_some() {
                if r.is_ok() {
                    failures.push(format!("{}: expected an error", case.name));
                }
                continue;
            }
            if let Err(e) = r {
                failures.push(format!("{}: {e}", case.name));
                continue;
            }
            for c in &l.checks {
                if let Prepared::Buffer {
                    buffer,
                    dtype,
                    shape,
                    ..
                } = &prepared[c.arg]
                {
                    let got = HostArray {
                        dtype: *dtype,
                        shape: shape.clone(),
                        bytes: buffer.to_bytes(),
                    };
                    if let Err(e) =
                        expectation(&case, c, false).and_then(|(w, t)| compare(&got, &w, t))
                    {
                        failures.push(format!("{} arg {}: {e}", case.name, c.arg));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// CTAs of a few whole warps whose barrier regions are tiny run their
/// first round and every round after it unrolled over the warps, each
/// round going straight on to the next (`emit::UnrolledRound`): a tree
/// reduction and a Hillis-Steele scan, with a partial last block (its
/// first round leaves the unrolled chain) and block sizes of 1 to 8 warps,
/// against the interpreter bit for bit (the same additions in the same
/// order).
#[test]
fn unrolled_barrier_rounds_match_the_interpreter() {
    if skip() {
        return;
    }
    let src = r#"
extern "C" __global__ void tree(const float* in, float* out, int n)
{
    extern __shared__ float s[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int d = blockDim.x / 2; d > 0; d >>= 1) {
        if (t < d) s[t] += s[t + d];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
#define B 256
extern "C" __global__ void scan(const float* in, float* out, int n)
{
    __shared__ float s[B];
    int t = threadIdx.x, i = blockIdx.x * B + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int d = 1; d < B; d <<= 1) {
        float v = t >= d ? s[t - d] : 0.0f;
        __syncthreads();
        s[t] += v;
        __syncthreads();
    }
    if (i < n) out[i] = s[t];
}
"#;
    let n = 256 * 5 + 77;
    let x: Vec<f32> = (0..n)
        .map(|i| ((i * 37 % 101) as f32) * 0.37 - 9.0)
        .collect();
    let mut results = Vec::new();
    for backend in [Backend::Cpu, Backend::Interp] {
        let dev = Device::new().with_backend(backend);
        let (module, _) = dev
            .load_cuda(src, "rounds.cu", &nvrtc::Options::default())
            .expect("NVRTC compiles");
        let din = dev.buffer_from(&x).unwrap();
        let mut got: Vec<Vec<f32>> = Vec::new();
        for block in [32u32, 64, 128, 256] {
            let grid = (n as u32).div_ceil(block);
            let (ran, why) = module
                .kernel("tree")
                .unwrap()
                .effective_backend([block, 1, 1]);
            assert_eq!(ran, backend, "{why:?}");
            let out = dev.buffer_zeroed(grid as usize * 4).unwrap();
            module
                .kernel("tree")
                .unwrap()
                .launch(
                    [grid, 1, 1],
                    [block, 1, 1],
                    block * 4,
                    &[Arg::Buffer(&din), Arg::Buffer(&out), Arg::I32(n as i32)],
                )
                .unwrap();
            got.push(out.to_vec().unwrap());
        }
        let out = dev.buffer_zeroed(n * 4).unwrap();
        let (ran, why) = module
            .kernel("scan")
            .unwrap()
            .effective_backend([256, 1, 1]);
        assert_eq!(ran, backend, "{why:?}");
        module
            .kernel("scan")
            .unwrap()
            .launch(
                [(n as u32).div_ceil(256), 1, 1],
                [256, 1, 1],
                0,
                &[Arg::Buffer(&din), Arg::Buffer(&out), Arg::I32(n as i32)],
            )
            .unwrap();
        got.push(out.to_vec().unwrap());
        results.push(got);
    }
    let bits = |v: &Vec<Vec<f32>>| -> Vec<Vec<u32>> {
        v.iter()
            .map(|r| r.iter().map(|f| f.to_bits()).collect())
            .collect()
    };
    assert_eq!(bits(&results[0]), bits(&results[1]));
    // The scan really scanned: block 0's last sum is its inputs' sum in
    // the interpreter too, not zeros on both sides.
    assert!(results[1][4][255] != 0.0);
}

/// A kernel with barriers whose heavy loop has none inside (the n-body
/// benchmark: three sums over a shared tile, in a loop that holds the
/// barriers) gets narrower warps where its loop would spill at 32 lanes
/// (without AVX-512), and computes what the interpreter does. A tree
/// reduction, whose loop holds its barriers, keeps 32 lanes everywhere;
/// so does the same heavy loop followed by a tree reduction (whose rounds
/// would each cost the narrow warps more).
#[test]
fn barrier_kernels_narrow_only_for_heavy_loops_between_barriers() {
    if skip() {
        return;
    }
    let more = r#"
extern "C" __global__ void tree(const float* in, float* out)
{
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (int d = 128; d > 0; d >>= 1) {
        if (t < d) s[t] += s[t + d];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

extern "C" __global__ void heavy_then_tree(const float4* pos, float* out, int n)
{
    __shared__ float s[256];
    int t = threadIdx.x, i = blockIdx.x * 256 + t;
    float4 p = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; j++) {
        float4 q = pos[j];
        float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        float inv = rsqrtf(dx * dx + dy * dy + dz * dz + 0.01f);
        float w = q.w * inv * inv * inv;
        ax += w * dx; ay += w * dy; az += w * dz;
    }
    s[t] = ax + ay + az;
    __syncthreads();
    for (int d = 128; d > 0; d >>= 1) {
        if (t < d) s[t] += s[t + d];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
"#;
    let src = format!("{}\n{more}", include_str!("../../../bench/nbody/kernel.cu"));
    let n = 512usize;
    let pos: Vec<f32> = (0..4 * n)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 22) as f32 / 1024.0)
        .collect();
    let run = |backend: Backend| {
        let dev = Device::new().with_backend(backend).with_disk_cache(None);
        let (m, _) = dev
            .load_cuda(&src, "nbody.cu", &nvrtc::Options::default())
            .expect("NVRTC compiles the n-body kernel");
        let k = m.kernel("nbody").unwrap();
        let lanes = |name: &str| match &*m.kernel(name).unwrap().compiled([256, 1, 1]) {
            Ok(c) => c.warp_lanes(),
            Err(e) => panic!("{name} does not compile: {e}"),
        };
        let widths = (backend == Backend::Cpu)
            .then(|| [lanes("nbody"), lanes("tree"), lanes("heavy_then_tree")]);
        let acc = dev.buffer_from(&vec![0f32; 4 * n]).unwrap();
        let p = dev.buffer_from(&pos).unwrap();
        let args = [
            Arg::Buffer(&acc),
            Arg::Buffer(&p),
            Arg::I32(n as i32),
            Arg::F32(0.01),
        ];
        k.launch([(n / 256) as u32, 1, 1], [256, 1, 1], 0, &args)
            .unwrap();
        (acc.to_vec::<f32>().unwrap(), widths)
    };
    let (want, _) = run(Backend::Interp);
    let (got, widths) = run(Backend::Cpu);
    let [nbody, tree, heavy_then_tree] = widths.unwrap();
    let target = warpfold::code_target();
    if std::env::var_os("WARPFOLD_WARP_WIDTH").is_none() {
        // 24 bytes a lane live round the tile loop: they fit three
        // quarters of AVX-512's registers at 32 lanes, not those of AVX
        // or SSE (sixteen ymm or xmm registers).
        if target.contains(", AVX-512,") {
            assert_eq!(nbody, 32, "n-body warps on {target}");
        } else {
            assert!(nbody < 32, "n-body warps on {target}: {nbody} lanes");
        }
        assert_eq!(tree, 32, "tree reduction warps on {target}");
        assert_eq!(heavy_then_tree, 32, "heavy loop, then a tree, on {target}");
    }
    assert!(got.iter().any(|&a| a != 0.0));
    assert_eq!(got, want, "n-body at {nbody} lanes against the interpreter");
}
