//! `bind_threads` (called by the command-line tool): a launching thread is
//! bound to the first CPU the process may use, and children started with
//! `unbind_child` run on all of them again. In a test binary of its own:
//! binding would put every other test's launching thread on one CPU.

use warpfold::{Arg, Device};

const PTX: &str = r#".version 7.0
.target sm_80
.address_size 64
.visible .entry ids(.param .u64 out)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.s32 %r4, %r1, %r2, %r3;
    mul.wide.s32 %rd2, %r4, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
    ret;
}
"#;

/// Worker 1's thread name (see `pool.rs`; Linux keeps 15 bytes of it).
const THREAD_1: &str = "wf-worker-1";

/// The CPUs of a list such as `0-3,8`.
fn expand(list: &str) -> Vec<usize> {
    list.split(',')
        .flat_map(|part| {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
            a..=b
        })
        .collect()
}

/// The `Cpus_allowed_list` line of a `/proc/.../status` text.
fn allowed(status: &str) -> String {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|l| l.trim().to_string())
        .expect("Cpus_allowed_list")
}

#[test]
fn launching_threads_bind_and_children_do_not() {
    let Ok(before) = std::fs::read_to_string("/proc/thread-self/status") else {
        return; // not Linux
    };
    let before = allowed(&before);
    warpfold::bind_threads();
    let dev = Device::new().with_disk_cache(None);
    let m = dev.load_ptx_named(PTX, "ids.ptx").expect("loads");
    let out = dev.buffer_zeroed(64 * 128 * 4).unwrap();
    m.kernel("ids")
        .unwrap()
        .launch([64, 1, 1], [128, 1, 1], 0, &[Arg::Buffer(&out)])
        .unwrap();
    let want: Vec<u32> = (0..64 * 128).collect();
    assert_eq!(out.to_vec::<u32>().unwrap(), want);
    let after = allowed(&std::fs::read_to_string("/proc/thread-self/status").unwrap());
    let first = before.split([',', '-']).next().expect("a CPU").to_string();
    // The process's CPUs (this thread's count is 1 once it is bound).
    let cpus = expand(&before).len();
    if cpus > 1 {
        assert_eq!(after, first, "the launching thread is bound (was {before})");
        // Worker 1 (it ran a share of the launch) on the second CPU.
        let second = expand(&before)[1].to_string();
        let worker = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| t.ok())
            .find(|t| {
                std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == THREAD_1)
            })
            .expect("worker 1 runs");
        let status = std::fs::read_to_string(worker.path().join("status")).unwrap();
        assert_eq!(allowed(&status), second, "worker 1 is bound");
    }
    let mut child = std::process::Command::new("cat");
    child.arg("/proc/self/status");
    warpfold::unbind_child(&mut child);
    let status = String::from_utf8(child.output().expect("cat runs").stdout).unwrap();
    assert_eq!(
        allowed(&status),
        before,
        "the child runs on every CPU again"
    );
}
