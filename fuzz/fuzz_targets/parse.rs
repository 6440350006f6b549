#![no_main]
//! Any bytes, read as lossy UTF-8, must parse or give diagnostics: never
//! panic, hang or overflow the stack.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    if let Err(d) = warpfold_ptx::parse(&src) {
        // Rendering diagnostics must be panic-free too.
        let _ = d.render("fuzz.ptx", &src);
    }
});
