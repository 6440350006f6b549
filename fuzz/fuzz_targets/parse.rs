#![no_main]
//! Any bytes, read as lossy UTF-8, must load (parse, lower to IR, verify) or
//! give diagnostics: never panic, hang or overflow the stack.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    match warpfold_ptx::load(&src) {
        Ok(module) => {
            // Printing the IR of anything that loads must work too.
            let _ = warpfold_ptx_ir_print(&module);
        }
        Err(d) => {
            // Rendering diagnostics must be panic-free too.
            let _ = d.render("fuzz.ptx", &src);
        }
    }
});

fn warpfold_ptx_ir_print(m: &warpfold_ir::Module) -> String {
    warpfold_ir::print::print_module(m)
}
