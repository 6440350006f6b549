//! Machine code of compiled kernels on disk, so later processes skip LLVM.
//!
//! The key is the SHA-256 of warpfold's version, the LLVM version, the CPU
//! name and features, the code-generation knobs, the source of the pipeline
//! from IR to machine code (see `jit::compile`) and the generated LLVM IR,
//! which names no addresses and says everything about the kernel and its
//! options. Entries are
//! written atomically (a temporary file renamed into place) and checked
//! when read (magic, length and SHA-256 of the payload): a damaged entry is
//! ignored and rebuilt.

use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"WFOBJ\x00\x00\x01";
const HEADER: usize = 8 + 8 + 32;

/// The default cache folder: `$WARPFOLD_CACHE_DIR` (`off` or empty
/// disables the cache), else `$XDG_CACHE_HOME/warpfold/kernels`, else
/// `~/.cache/warpfold/kernels`. `None` when it is off or cannot be made.
pub fn dir() -> Option<PathBuf> {
    let d = match std::env::var_os("WARPFOLD_CACHE_DIR") {
        Some(v) if v.is_empty() || v == "off" || v == "0" => return None,
        Some(v) => PathBuf::from(v),
        None => {
            let base = std::env::var_os("XDG_CACHE_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            base.join("warpfold").join("kernels")
        }
    };
    std::fs::create_dir_all(&d).ok()?;
    Some(d)
}

/// Hex SHA-256 over the version tags and `parts` (each length-prefixed).
pub fn key(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in [env!("CARGO_PKG_VERSION").as_bytes(), b"llvm-14"]
        .into_iter()
        .chain(parts.iter().copied())
    {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    hex(&h.finalize())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn entry(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.o"))
}

/// The object file stored under `key`, if present and intact.
pub fn read(dir: &Path, key: &str) -> Option<Vec<u8>> {
    let bytes = std::fs::read(entry(dir, key)).ok()?;
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return None;
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().ok()?) as usize;
    let payload = &bytes[HEADER..];
    if payload.len() != len || Sha256::digest(payload).as_slice() != &bytes[16..48] {
        return None;
    }
    Some(payload.to_vec())
}

/// Store `obj` under `key`; whether it was written. Readers see the old
/// entry or the whole new one, never a part.
pub fn write(dir: &Path, key: &str, obj: &[u8]) -> bool {
    let tmp = dir.join(format!(
        "{key}.tmp.{}.{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let ok = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(MAGIC)?;
        f.write_all(&(obj.len() as u64).to_le_bytes())?;
        f.write_all(&Sha256::digest(obj))?;
        f.write_all(obj)?;
        f.sync_all()?;
        std::fs::rename(&tmp, entry(dir, key))
    })();
    if ok.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    ok.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("warpfold-cache-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn entries_round_trip_and_damage_is_detected() {
        let d = scratch("rt");
        let k = key(&[b"ir"]);
        assert_ne!(k, key(&[b"ir2"]));
        assert_ne!(key(&[b"a", b"bc"]), key(&[b"ab", b"c"]));
        assert!(read(&d, &k).is_none());
        assert!(write(&d, &k, b"object bytes"));
        assert_eq!(read(&d, &k).as_deref(), Some(&b"object bytes"[..]));
        // Flip one payload byte, then truncate: both are refused.
        let p = entry(&d, &k);
        let mut b = std::fs::read(&p).unwrap();
        let last = b.len() - 1;
        b[last] ^= 1;
        std::fs::write(&p, &b).unwrap();
        assert!(read(&d, &k).is_none());
        std::fs::write(&p, &b[..20]).unwrap();
        assert!(read(&d, &k).is_none());
        // No temporary files are left behind.
        let names: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
