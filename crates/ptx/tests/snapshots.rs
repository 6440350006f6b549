//! Snapshots of the printed IR: a change in lowering shows up as a diff to
//! review (`cargo insta review`, or INSTA_UPDATE=always to rewrite).

fn ir_of(src: &str) -> String {
    let m = warpfold_ptx::load(src).unwrap_or_else(|d| panic!("{}", d.render("snapshot.ptx", src)));
    warpfold_ir::print::print_module(&m)
}

#[test]
fn saxpy_ir() {
    insta::assert_snapshot!(ir_of(include_str!("../../../examples/saxpy/saxpy.ptx")));
}

#[test]
fn block_reduce_ir() {
    insta::assert_snapshot!(ir_of(include_str!(
        "../../../tests/corpus/block_reduce/kernel.sm80.ptx"
    )));
}

#[test]
fn noinline_struct_calls_ir() {
    insta::assert_snapshot!(ir_of(include_str!(
        "../../../tests/corpus/noinline_struct/kernel.sm80.ptx"
    )));
}
