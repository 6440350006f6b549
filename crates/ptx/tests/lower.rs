//! Lowering: names resolve, instructions get their meaning, and everything
//! that cannot be lowered is a diagnostic at the right place.

use warpfold_ir::{InstKind, Space};
use warpfold_ptx::load;

fn module(body: &str) -> String {
    format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{{\n{body}\n}}\n")
}

/// The first diagnostic's (line, col, message).
fn error(src: &str) -> (u32, u32, String) {
    let d = load(src).expect_err("should not load");
    let first = &d.0[0];
    (first.span.line, first.span.col, first.message.clone())
}

#[test]
fn loads_a_kernel_with_every_common_class() {
    let src = module(
        "  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n  .reg .f32 %f<4>;\n  .reg .pred %p<3>;\n  .shared .align 4 .b8 sm[128];\n\
         ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [n];\n  cvta.to.global.u64 %rd2, %rd1;\n  mov.u32 %r2, %tid.x;\n\
         setp.ge.u32 %p1, %r2, %r1;\n  @%p1 bra $L_end;\n  mul.wide.u32 %rd3, %r2, 4;\n  add.s64 %rd3, %rd2, %rd3;\n\
         ld.global.f32 %f1, [%rd3];\n  fma.rn.ftz.f32 %f2, %f1, 0f40000000, %f1;\n  shfl.sync.bfly.b32 %r3|%p2, %r2, 1, 31, -1;\n\
         vote.sync.ballot.b32 %r4, %p2, -1;\n  bar.sync 0;\n  atom.shared.add.u32 %r5, [sm], 1;\n  st.global.f32 [%rd3], %f2;\n$L_end:\n  ret;",
    );
    let m = load(&src).unwrap_or_else(|d| panic!("{}", d.render("t.ptx", &src)));
    let (_, k) = m.kernel("k").unwrap();
    let kinds: Vec<&InstKind> = k
        .blocks
        .values()
        .flat_map(|b| b.insts.iter().map(|i| &i.kind))
        .collect();
    assert!(kinds.iter().any(|k| matches!(
        k,
        InstKind::Shfl {
            pred_dst: Some(_),
            ..
        }
    )));
    assert!(kinds.iter().any(|k| matches!(
        k,
        InstKind::Atom {
            space: Space::Shared,
            ..
        }
    )));
    assert!(kinds.iter().any(|k| matches!(
        k,
        InstKind::Ld {
            space: Space::Param,
            ..
        }
    )));
    // The guarded branch split the code into blocks; the label has its own.
    assert!(k
        .blocks
        .values()
        .any(|b| b.name.as_deref() == Some("$L_end")));
    // Source lines survive for error messages.
    assert!(k
        .blocks
        .values()
        .flat_map(|b| &b.insts)
        .all(|i| i.loc.line >= 6));
}

#[test]
fn unsupported_instruction_is_named_with_its_location() {
    let (line, col, msg) = error(&module(
        "  .reg .b32 %r<2>;\n  tex.1d.v4.f32.s32 {%r1,%r1,%r1,%r1}, [tex0, {%r1}];",
    ));
    assert_eq!(line, 7);
    assert!(col >= 3, "{col}");
    assert!(msg.contains("tex") || msg.contains("unexpected"), "{msg}");
    let (line, _, msg) = error(&module(
        "  .reg .b32 %r<2>;\n  wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r1}, [%r1];",
    ));
    assert_eq!(line, 7);
    assert!(msg.contains("unsupported instruction `wmma.load"), "{msg}");
}

#[test]
fn unknown_names_and_labels() {
    let (line, col, msg) = error(&module("  .reg .b32 %r<2>;\n  add.u32 %r1, %r7, 1;"));
    assert_eq!((line, col), (7, 16));
    assert!(msg.contains("unknown register `%r7`"), "{msg}");
    let (line, _, msg) = error(&module("  bra $nowhere;"));
    assert_eq!(line, 6);
    assert!(msg.contains("unknown label `$nowhere`"), "{msg}");
    let (_, _, msg) = error(&module("  .reg .b32 %r<2>;\n  add.u32 %r1, %r1;"));
    assert!(msg.contains("takes 3 operands, found 2"), "{msg}");
    let (_, _, msg) = error(&module("  .reg .b32 %r<2>;\n  add.bogus.u32 %r1, %r1, 1;"));
    assert!(msg.contains("unknown modifier `.bogus`"), "{msg}");
    let (_, _, msg) = error(&module("  .reg .b32 %r<2>;\n  mov.u32 %tid.x, 1;"));
    assert!(msg.contains("read-only"), "{msg}");
}

#[test]
fn registers_of_another_size_or_class_are_rejected_as_ptxas_does() {
    let regs = "  .reg .b16 %rs<2>;\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<3>;\n  .reg .f32 %f<2>;\n  .reg .pred %p<2>;\n";
    let at = |line: &str| error(&module(&format!("{regs}  {line}")));
    // (column of the operand, its name) for each mismatch on line 11.
    for (line, col, name) in [
        ("div.s16 %r2, %r1, %r1;", 11, "%r2"),
        ("add.s32 %rd1, %r1, %r2;", 11, "%rd1"),
        ("add.u64 %rd1, %rd2, %r1;", 23, "%r1"),
        ("sub.s32 %r1, %r2, %rs1;", 21, "%rs1"),
        ("mul.lo.s32 %r1, %rd1, %r2;", 19, "%rd1"),
        ("selp.b32 %r1, %rd1, %r2, %p1;", 17, "%rd1"),
        ("setp.lt.s32 %p1, %rd1, 0;", 20, "%rd1"),
        ("add.f32 %f1, %f1, %rd1;", 21, "%rd1"),
        ("add.s32 %r1, %r2, %f1;", 21, "%f1"),
        ("mul.wide.s32 %r1, %r2, %r2;", 16, "%r1"),
    ] {
        let (l, c, msg) = at(line);
        assert_eq!((l, c), (11, col), "{line}: {msg}");
        assert!(
            msg.starts_with(&format!("`{name}` is a .")),
            "{line}: {msg}"
        );
    }
    // A special register keeps its class check (it is a 32-bit integer).
    let (_, _, msg) = at("add.f32 %f1, %f1, %tid.x;");
    assert!(msg.contains("needs .f32"), "{msg}");
    // What ptxas accepts (each checked with ptxas 12): `.b` registers of
    // the right size anywhere (half precision on .b16 and .b32), the wide
    // forms' double-width destinations and addends, a 32-bit shift amount,
    // and ld/st/cvt data registers wider than the type. A special
    // register as an operand of an integer `add` ptxas rejects; we let it
    // pass, as before.
    let fine = module(&format!(
        "{regs}  add.f32 %f1, %f1, %r1;\n  mul.wide.u32 %rd1, %r1, %r2;\n  mad.wide.s32 %rd1, %r1, %r2, %rd2;\n  add.u32 %r1, %r1, %tid.x;\n  ld.param.u64 %rd1, [p];\n  ld.global.u8 %r1, [%rd1];\n  cvt.u16.u32 %rs1, %r1;\n  selp.f32 %f1, %f1, %r1, %p1;\n  add.f16 %rs1, %rs1, %rs1;\n  fma.rn.f16x2 %r1, %r1, %r2, %r1;\n  setp.lt.f16 %p1, %rs1, %rs1;\n  abs.bf16 %rs1, %rs1;\n  min.f16x2 %r1, %r1, %r2;\n  shl.b64 %rd1, %rd1, %r1;"
    ));
    load(&fine).expect("loads");
}

#[test]
fn calls_to_undefined_functions_say_so() {
    let src = ".version 8.0\n.target sm_80\n.address_size 64\n.extern .func (.param .b32 r) vprintf2(.param .b64 a);\n\
               .visible .entry k()\n{\n  .param .b64 a;\n  .param .b32 r;\n  call.uni (r), vprintf2, (a);\n  ret;\n}\n";
    let (line, _, msg) = error(src);
    assert_eq!(line, 9);
    assert!(msg.contains("declared but not defined"), "{msg}");
}

#[test]
fn recursion_and_register_params() {
    let src = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .func (.reg .b32 r) f(.reg .b32 a)\n{\n  .reg .pred %p;\n  .reg .b32 t;\n  setp.eq.u32 %p, a, 0;\n  @%p bra $done;\n\
        sub.u32 t, a, 1;\n  call.uni (t), f, (t);\n  add.u32 r, t, a;\n  ret;\n$done:\n  mov.u32 r, 0;\n  ret;\n}\n\
        .visible .entry k(.param .u32 n)\n{\n  .reg .b32 %r<3>;\n  ld.param.u32 %r1, [n];\n  call.uni (%r2), f, (%r1);\n  ret;\n}\n";
    let m = load(src).unwrap_or_else(|d| panic!("{}", d.render("t.ptx", src)));
    assert_eq!(m.functions.len(), 2);
}

#[test]
fn diagnostics_render_with_file_line_and_caret() {
    let src = module("  .reg .b32 %r<2>;\n  frob.u32 %r1;");
    let d = load(&src).unwrap_err();
    let r = d.render("k.ptx", &src);
    assert!(r.starts_with("k.ptx:7:3: error:"), "{r}");
    assert!(r.contains("frob.u32 %r1;") && r.contains('^'), "{r}");
}
