//! Integration tests of the PTX parser: real NVRTC output (tests/data),
//! handwritten snippets for each construct, malformed inputs
//! (tests/malformed) and a no-panic property test.

use proptest::prelude::*;
use std::path::Path;
use warpfold_ptx::ast::*;
use warpfold_ptx::{parse, Diagnostic};

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

fn ok(src: &str) -> Module {
    match parse(src) {
        Ok(m) => m,
        Err(d) => panic!("unexpected parse error:\n{}", d.render("input.ptx", src)),
    }
}

fn err(src: &str) -> Diagnostic {
    match parse(src) {
        Ok(m) => panic!("expected an error, parsed {m:#?}"),
        Err(d) => d.0.into_iter().next().expect("at least one diagnostic"),
    }
}

/// Parse `body` as the body of an entry `k` and return its statements.
fn body(stmts: &str) -> Vec<Statement> {
    let src = format!("{HEADER}.visible .entry k()\n{{\n{stmts}\n}}\n");
    let m = ok(&src);
    func(&m, "k").body.clone().expect("body")
}

fn func<'m>(m: &'m Module, name: &str) -> &'m Function {
    m.items
        .iter()
        .find_map(|i| match i {
            Item::Function(f) if f.name == name && f.body.is_some() => Some(f),
            _ => None,
        })
        .or_else(|| {
            m.items.iter().find_map(|i| match i {
                Item::Function(f) if f.name == name => Some(f),
                _ => None,
            })
        })
        .unwrap_or_else(|| panic!("no function {name}"))
}

fn vars(m: &Module) -> Vec<&VarDecl> {
    m.items
        .iter()
        .filter_map(|i| match i {
            Item::Var(v) => Some(v),
            _ => None,
        })
        .collect()
}

/// All instructions, looking inside nested blocks.
fn insts(stmts: &[Statement]) -> Vec<&Instruction> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            Statement::Inst(i) => out.push(i),
            Statement::Block(b) => out.extend(insts(b)),
            _ => {}
        }
    }
    out
}

fn labels(stmts: &[Statement]) -> Vec<&str> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            Statement::Label { name, .. } => out.push(name.as_str()),
            Statement::Block(b) => out.extend(labels(b)),
            _ => {}
        }
    }
    out
}

/// The single instruction of a one-instruction body.
fn inst(text: &str) -> Instruction {
    let b = body(text);
    let all = insts(&b);
    assert_eq!(all.len(), 1, "{text}");
    all[0].clone()
}

fn ops(text: &str) -> Vec<Operand> {
    inst(text).operands
}

/// Operand with spans erased, for compact comparisons.
fn strip(o: &Operand) -> String {
    match o {
        Operand::Reg(n, _) => format!("R({n})"),
        Operand::Symbol(n, _) => format!("S({n})"),
        Operand::Int(v, _) => format!("I({v})"),
        Operand::F32Bits(b, _) => format!("F32({b:#x})"),
        Operand::F64Bits(b, _) => format!("F64({b:#x})"),
        Operand::Address { base, offset, .. } => {
            format!(
                "[{}{offset:+}]",
                base.as_deref().map(strip).unwrap_or_default()
            )
        }
        Operand::Vector(v, _) => {
            format!("V({})", v.iter().map(strip).collect::<Vec<_>>().join(","))
        }
        Operand::Not(x, _) => format!("!{}", strip(x)),
        Operand::Neg(x, _) => format!("-{}", strip(x)),
        Operand::Pair(a, b, _) => format!("{}|{}", strip(a), strip(b)),
        Operand::List(v, _) => format!("L({})", v.iter().map(strip).collect::<Vec<_>>().join(",")),
        Operand::Sink(_) => "_".into(),
    }
}

fn sops(text: &str) -> Vec<String> {
    ops(text).iter().map(strip).collect()
}

// ---------------------------------------------------------------- real PTX

fn data(name: &str) -> (String, Module) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let src = std::fs::read_to_string(&path).unwrap();
    let m = ok(&src);
    (src, m)
}

#[test]
fn every_data_file_parses() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "ptx") {
            let src = std::fs::read_to_string(&p).unwrap();
            let m = ok(&src);
            assert_eq!(m.version, (8, 8), "{}", p.display());
            assert_eq!(m.address_size, 64);
            n += 1;
        }
    }
    assert!(n >= 10);
}

#[test]
fn nvrtc_shared_reduce() {
    let (_, m) = data("shared_reduce.ptx");
    assert_eq!(m.target, vec!["sm_80"]);
    let f = func(&m, "block_sum");
    assert_eq!(f.kind, FunctionKind::Entry);
    assert_eq!(f.linkage, Linkage::Visible);
    assert_eq!(f.params.len(), 3);
    assert_eq!(
        f.params.iter().map(|p| p.ty).collect::<Vec<_>>(),
        vec![Type::U64, Type::U64, Type::U32]
    );
    let b = f.body.as_ref().unwrap();
    let shared: Vec<_> = b
        .iter()
        .filter_map(|s| match s {
            Statement::Var(v) if v.space == StateSpace::Shared => Some(v),
            _ => None,
        })
        .collect();
    assert_eq!(shared.len(), 1);
    assert_eq!(shared[0].dims, vec![Some(1024)]);
    assert_eq!(shared[0].align, Some(4));
    let all = insts(b);
    assert!(all
        .iter()
        .any(|i| i.opcode == "bar" && i.modifiers == ["sync"]));
    assert!(all
        .iter()
        .any(|i| i.opcode == "ld" && i.modifiers == ["global", "nc", "f32"]));
    assert!(all
        .iter()
        .any(|i| i.opcode == "ret" && i.operands.is_empty()));
    assert!(!labels(b).is_empty());
    assert!(labels(b).iter().all(|l| l.starts_with("$L__BB0_")));
    // Guarded branches.
    assert!(all.iter().any(|i| i.opcode == "bra" && i.guard.is_some()));
}

#[test]
fn nvrtc_recursion_and_calls() {
    let (src, m) = data("recursion.ptx");
    let fib = func(&m, "_Z3fibi");
    assert_eq!(fib.kind, FunctionKind::Func);
    assert_eq!(fib.returns.len(), 1);
    assert_eq!(fib.returns[0].name, "func_retval0");
    assert_eq!(fib.params.len(), 1);
    let b = fib.body.as_ref().unwrap();
    assert!(
        b.iter().any(|s| matches!(s, Statement::Block(_))),
        "callseq blocks"
    );
    let calls: Vec<_> = insts(b)
        .into_iter()
        .filter(|i| i.opcode == "call")
        .collect();
    assert_eq!(calls.len(), 2);
    let c = calls[0];
    assert_eq!(c.modifiers, ["uni"]);
    assert_eq!(
        c.operands.iter().map(strip).collect::<Vec<_>>(),
        ["L(S(retval0))", "S(_Z3fibi)", "L(S(param0))"]
    );
    // Spans point into the source.
    assert_eq!(
        &src[c.opcode_span.start as usize..c.opcode_span.end as usize],
        "call.uni"
    );
    let store = func(&m, "_Z5storePii");
    assert!(store.returns.is_empty());
    let k = func(&m, "fib_kernel");
    let calls: Vec<_> = insts(k.body.as_ref().unwrap())
        .into_iter()
        .filter(|i| i.opcode == "call")
        .collect();
    assert_eq!(strip(&calls[1].operands[0]), "S(_Z5storePii)");
    assert_eq!(strip(&calls[1].operands[1]), "L(S(param0),S(param1))");
}

#[test]
fn nvrtc_shuffle_and_atomics() {
    let (_, m) = data("shuffle_atomics.ptx");
    let f = func(&m, "warp_sum");
    let all = insts(f.body.as_ref().unwrap());
    let shfl = all.iter().find(|i| i.opcode == "shfl").unwrap();
    assert_eq!(shfl.modifiers, ["sync", "down", "b32"]);
    assert_eq!(shfl.operands.len(), 5);
    assert!(
        matches!(&shfl.operands[0], Operand::Pair(..))
            || matches!(&shfl.operands[0], Operand::Reg(..))
    );
    assert!(all
        .iter()
        .any(|i| i.opcode == "atom" && i.modifiers.contains(&"add".to_string())));
    assert!(all
        .iter()
        .any(|i| i.opcode == "atom" && i.modifiers.contains(&"inc".to_string())));
    assert!(all
        .iter()
        .any(|i| i.opcode == "atom" && i.modifiers.contains(&"cas".to_string())));
    assert!(all
        .iter()
        .any(|i| i.opcode == "vote" || i.opcode == "activemask"));
}

#[test]
fn nvrtc_struct_by_value() {
    let (_, m) = data("struct_byval.ptx");
    let k = func(&m, "saxpy_struct");
    let p = &k.params[0];
    assert_eq!((p.ty, p.align, p.array), (Type::B8, Some(8), Some(32)));
    let apply = func(&m, "_Z5apply6Paramsf");
    assert_eq!(apply.params[0].array, Some(32));
    let b = apply.body.as_ref().unwrap();
    assert!(b.iter().any(|s| matches!(s, Statement::Var(v) if v.space == StateSpace::Local && v.name == "__local_depot0")));
    let all = insts(b);
    let ld = all
        .iter()
        .find(|i| i.opcode == "ld" && i.modifiers == ["param", "v2", "f32"])
        .unwrap();
    assert_eq!(strip(&ld.operands[0]), "V(R(%f3),R(%f4))");
    assert_eq!(strip(&ld.operands[1]), "[S(_Z5apply6Paramsf_param_0)+16]");
}

#[test]
fn nvrtc_math_and_3d() {
    for f in ["math_precise.ptx", "math_fast.ptx"] {
        let (_, m) = data(f);
        let k = func(&m, "mathk");
        assert_eq!(k.params.len(), 4);
        let all = insts(k.body.as_ref().unwrap());
        assert!(all.iter().any(|i| i.opcode == "fma"));
        assert!(all
            .iter()
            .any(|i| i.operands.iter().any(|o| matches!(o, Operand::F32Bits(..)))));
    }
    let (_, m) = data("math_fast.ptx");
    let all = insts(func(&m, "mathk").body.as_ref().unwrap());
    assert!(all
        .iter()
        .any(|i| i.modifiers.contains(&"approx".to_string())));
    let (_, m) = data("indexing3d.ptx");
    let all = insts(func(&m, "stencil3d").body.as_ref().unwrap());
    for r in ["%tid.x", "%tid.y", "%tid.z", "%ctaid.z", "%ntid.y"] {
        assert!(
            all.iter().any(|i| i
                .operands
                .iter()
                .any(|o| matches!(o, Operand::Reg(n, _) if n == r))),
            "{r}"
        );
    }
    assert!(all
        .iter()
        .any(|i| i.operands.iter().any(|o| strip(o) == "[R(%rd13)-4]")));
}

#[test]
fn nvrtc_globals_with_initialisers() {
    let (_, m) = data("global_init.ptx");
    let v = vars(&m);
    let table = v.iter().find(|v| v.name == "table").unwrap();
    assert_eq!(
        (table.space, table.ty, table.dims.clone()),
        (StateSpace::Global, Type::B8, vec![Some(32)])
    );
    let Some(Initializer::List(items)) = &table.init else {
        panic!()
    };
    assert_eq!(items.len(), 32);
    assert_eq!(items[4], Initializer::Int(254));
    let coef = v.iter().find(|v| v.name == "coef").unwrap();
    assert_eq!(coef.space, StateSpace::Const);
    let ptr = v.iter().find(|v| v.name == "ptr").unwrap();
    assert_eq!(
        ptr.init,
        Some(Initializer::Symbol {
            name: "table".into(),
            offset: 8,
            generic: true
        })
    );
}

#[test]
fn nvrtc_extern_shared() {
    let (_, m) = data("extern_shared.ptx");
    let buf = vars(&m).into_iter().find(|v| v.name == "buf").unwrap();
    assert_eq!(
        (buf.linkage, buf.space, buf.align, buf.dims.clone()),
        (Linkage::Extern, StateSpace::Shared, Some(16), vec![None])
    );
    let all = insts(func(&m, "dyn_smem").body.as_ref().unwrap());
    let ld = all
        .iter()
        .find(|i| i.opcode == "ld" && i.modifiers[0] == "global")
        .unwrap();
    assert_eq!(ld.modifiers, ["global", "nc", "v4", "u32"]);
    assert_eq!(strip(&ld.operands[0]), "V(R(%r7),R(%r8),R(%r9),R(%r10))");
}

#[test]
fn nvrtc_misc_features() {
    let (_, m) = data("misc_features.ptx");
    let assertfail = func(&m, "__assertfail");
    assert!(assertfail.body.is_none());
    assert_eq!(assertfail.linkage, Linkage::Extern);
    assert_eq!(
        assertfail
            .directives
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        ["noreturn"]
    );
    let vprintf = func(&m, "vprintf");
    assert_eq!(vprintf.returns.len(), 1);
    let k = func(&m, "misc");
    let d: Vec<_> = k
        .directives
        .iter()
        .map(|d| (d.name.as_str(), d.values.clone()))
        .collect();
    assert_eq!(d, [("maxntid", vec![256, 1, 1]), ("minnctapersm", vec![2])]);
    let b = k.body.as_ref().unwrap();
    let mut found_pragma = false;
    let mut found_proto = false;
    fn walk(s: &[Statement], pragma: &mut bool, proto: &mut bool) {
        for s in s {
            match s {
                Statement::Directive(d) if d.name == "pragma" => {
                    *pragma |= d.strings == ["nounroll"]
                }
                Statement::Directive(d) if d.name == "callprototype" => *proto = true,
                Statement::Block(b) => walk(b, pragma, proto),
                _ => {}
            }
        }
    }
    walk(b, &mut found_pragma, &mut found_proto);
    assert!(found_pragma && found_proto);
    assert!(labels(b).contains(&"prototype_0"));
    let indirect = insts(b)
        .into_iter()
        .find(|i| i.opcode == "call" && i.modifiers.is_empty())
        .unwrap();
    assert_eq!(
        indirect.operands.iter().map(strip).collect::<Vec<_>>(),
        ["L(S(retval0))", "R(%rd9)", "L(S(param0))", "S(prototype_0)"]
    );
    let ops = vars(&m).into_iter().find(|v| v.name == "ops").unwrap();
    let Some(Initializer::List(l)) = &ops.init else {
        panic!()
    };
    assert_eq!(
        l[1],
        Initializer::Symbol {
            name: "_Z6thricei".into(),
            offset: 0,
            generic: false
        }
    );
    assert!(vars(&m).iter().any(|v| v.name == "$str$1"));
}

#[test]
fn nvrtc_debug_info_and_cache_hints() {
    let (_, m) = data("mma_debug.ptx");
    let k = func(&m, "mma_debug");
    let all = insts(k.body.as_ref().unwrap());
    let mma = all.iter().find(|i| i.opcode == "mma").unwrap();
    assert_eq!(
        mma.modifiers,
        ["sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32"]
    );
    assert_eq!(mma.operands.len(), 4);
    let ld = all
        .iter()
        .find(|i| i.modifiers.contains(&"L1::no_allocate".to_string()))
        .unwrap();
    assert_eq!(ld.modifiers, ["global", "L1::no_allocate", "f32"]);
}

// ---------------------------------------------------------------- snippets

#[test]
fn module_directives_and_comments() {
    let m = ok("// leading comment\n/* block\n comment */ .version 7.8 // x\n.target sm_90a, texmode_independent, debug\n.address_size 32\n");
    assert_eq!(m.version, (7, 8));
    assert_eq!(m.target, ["sm_90a", "texmode_independent", "debug"]);
    assert_eq!(m.address_size, 32);
    assert!(m.items.is_empty());
    let m = ok(".version 6.0\n.target sm_60\n");
    assert_eq!((m.version, m.address_size), ((6, 0), 64));
}

#[test]
fn clang_style_ptx() {
    let src = r#"//
// Generated by LLVM NVPTX Back-End
//

.version 7.0
.target sm_70
.address_size 64

	// .globl	foo                     // -- Begin function foo
.visible .entry foo(
	.param .u64 .ptr .global .align 4 foo_param_0,
	.param .u32 foo_param_1
)
.reqntid 128, 1, 1
.maxnreg 32
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<6>;
	.reg .f32 	%f<3>;
	.reg .b64 	%rd<5>;

// %bb.0:                               // %entry
	ld.param.u64 	%rd1, [foo_param_0];
	mov.u32 	%r1, %tid.x;
	setp.gt.s32 	%p1, %r2, 0;
	@%p1 bra 	LBB0_1;
	bra.uni 	LBB0_2;
LBB0_1:                                 // %loop
	ld.global.f32 	%f1, [%rd1];
	add.rn.f32 	%f2, %f1, 0f3F800000;
	st.global.f32 	[%rd1], %f2;
	@!%p1 bra 	LBB0_1;
LBB0_2:
	ret;
                                        // -- End function
}
"#;
    let m = ok(src);
    let f = func(&m, "foo");
    let p = &f.params[0];
    assert_eq!(
        (p.ty, p.ptr_space, p.ptr_align, p.align),
        (Type::U64, Some(StateSpace::Global), Some(4), None)
    );
    assert_eq!(
        f.directives
            .iter()
            .map(|d| (d.name.as_str(), d.values.clone()))
            .collect::<Vec<_>>(),
        [("reqntid", vec![128, 1, 1]), ("maxnreg", vec![32])]
    );
    let b = f.body.as_ref().unwrap();
    assert_eq!(labels(b), ["LBB0_1", "LBB0_2"]);
    let regs: Vec<_> = b
        .iter()
        .filter_map(|s| match s {
            Statement::Reg {
                ty, name, count, ..
            } => Some((*ty, name.as_str(), *count)),
            _ => None,
        })
        .collect();
    assert_eq!(
        regs,
        [
            (Type::Pred, "%p", Some(3)),
            (Type::B32, "%r", Some(6)),
            (Type::F32, "%f", Some(3)),
            (Type::B64, "%rd", Some(5))
        ]
    );
    let all = insts(b);
    assert_eq!(all[3].guard, Some(("%p1".to_string(), false)));
    assert_eq!(all[8].guard, Some(("%p1".to_string(), true)));
    assert_eq!(strip(&all[6].operands[2]), "F32(0x3f800000)");
    // Spans: `ld.param` is on line 23, column 2 (after a tab).
    assert_eq!((all[0].span.line, all[0].span.col), (23, 2));
    assert_eq!((f.name_span.line, f.name_span.col), (10, 17));
}

#[test]
fn function_headers() {
    let m = ok(&format!(
        "{HEADER}
.weak .func (.param .b32 retval) f(.reg .b32 a, .param .align 8 .b8 s[40]) {{ ret; }}
.extern .func g(.param .b64 p);
.common .global .u32 c;
.func h {{ }}
.visible .entry e .maxntid 256,1,1 .minnctapersm 2 .maxnctapersm 4 {{ ret; }}
.entry nop() .pragma \"nounroll\"; {{ }}
.func .attribute(.unified(0x1, 0x2)) u() {{ }}
.entry vec(.param .v2 .f32 v, .param .u64 .ptr .shared p) {{ }}
"
    ));
    let f = func(&m, "f");
    assert_eq!(
        (f.linkage, f.returns.len(), f.params.len()),
        (Linkage::Weak, 1, 2)
    );
    assert_eq!(
        (f.params[0].space, f.params[0].ty),
        (StateSpace::Reg, Type::B32)
    );
    assert_eq!((f.params[1].align, f.params[1].array), (Some(8), Some(40)));
    let g = func(&m, "g");
    assert_eq!((g.linkage, g.body.is_none()), (Linkage::Extern, true));
    assert_eq!(vars(&m)[0].linkage, Linkage::Common);
    assert!(func(&m, "h").params.is_empty());
    let e = func(&m, "e");
    assert_eq!(e.directives.len(), 3);
    assert_eq!(e.directives[0].values, [256, 1, 1]);
    assert_eq!(func(&m, "nop").directives[0].strings, ["nounroll"]);
    assert!(func(&m, "u").body.is_some());
    let v = func(&m, "vec");
    assert_eq!(
        (v.params[0].vector, v.params[1].ptr_space),
        (Some(2), Some(StateSpace::Shared))
    );
}

#[test]
fn variables_and_initialisers() {
    let m = ok(&format!(
        "{HEADER}
.global .align 16 .v4 .f32 vv[2][3];
.const .f32 fl[4] = {{0f3F800000, 1.5, -2.0, 0d4000000000000000}};
.global .s32 ints[3] = {{-1, 0x10, 010}};
.global .u32 nested[2][2] = {{{{1, 2}}, {{3, 4}}}};
.global .u64 addrs[4] = {{ints, ints+8, generic(fl), generic(fl)+4}};
.shared .u8 a, b[4];
.local .b32 loc;
.global .u32 scalar = 7;
.global .u8 open[] = {{1, 2, 3}};
.global .texref tr;
"
    ));
    let v = vars(&m);
    assert_eq!(
        (v[0].align, v[0].vector, v[0].dims.clone()),
        (Some(16), Some(4), vec![Some(2), Some(3)])
    );
    assert_eq!(
        v[1].init,
        Some(Initializer::List(vec![
            Initializer::Float(1.0),
            Initializer::Float(1.5),
            Initializer::Float(-2.0),
            Initializer::Float(2.0)
        ]))
    );
    assert_eq!(
        v[2].init,
        Some(Initializer::List(vec![
            Initializer::Int(-1),
            Initializer::Int(16),
            Initializer::Int(8)
        ]))
    );
    let Some(Initializer::List(outer)) = &v[3].init else {
        panic!()
    };
    assert_eq!(
        outer[1],
        Initializer::List(vec![Initializer::Int(3), Initializer::Int(4)])
    );
    let Some(Initializer::List(a)) = &v[4].init else {
        panic!()
    };
    assert_eq!(
        a[1],
        Initializer::Symbol {
            name: "ints".into(),
            offset: 8,
            generic: false
        }
    );
    assert_eq!(
        a[3],
        Initializer::Symbol {
            name: "fl".into(),
            offset: 4,
            generic: true
        }
    );
    assert_eq!(
        (v[5].name.as_str(), v[6].name.as_str(), v[6].dims.clone()),
        ("a", "b", vec![Some(4)])
    );
    assert_eq!(v[7].space, StateSpace::Local);
    assert_eq!(v[8].init, Some(Initializer::Int(7)));
    assert_eq!(v[9].dims, vec![None]);
    assert_eq!(v[10].ty, Type::Opaque);
}

#[test]
fn register_declarations() {
    let b = body(".reg .b32 %r<10>;\n.reg .pred %p;\n.reg .f32 %f1, %f2;\n.reg .v4 .b32 %v;\n.reg .b32 temp_param_reg;");
    let regs: Vec<_> = b
        .iter()
        .map(|s| match s {
            Statement::Reg {
                ty,
                vector,
                name,
                count,
                ..
            } => (*ty, *vector, name.as_str(), *count),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        regs,
        [
            (Type::B32, None, "%r", Some(10)),
            (Type::Pred, None, "%p", None),
            (Type::F32, None, "%f1", None),
            (Type::F32, None, "%f2", None),
            (Type::B32, Some(4), "%v", None),
            (Type::B32, None, "temp_param_reg", None)
        ]
    );
}

#[test]
fn debug_directives_are_ignored() {
    let src = format!(
        "{HEADER}.file 1 \"a.cu\"\n.file 2 \"/x/b.h\", 1700000000, 1234\n.entry k()\n{{\n.loc 1 2 3\nret;\n.loc 2 5 7, function_name $L__info_string0, inlined_at 1 6 3\nret;\n}}\n\
.section .debug_str\n{{\n$L__info_string0:\n.b8 95,90,0\n.b32 .debug_abbrev\n.b64 $L__func_begin0+5\n\"str\" {{ }} \n}}\n.section .debug_info {{ }}\n"
    );
    let m = ok(&src);
    assert_eq!(insts(func(&m, "k").body.as_ref().unwrap()).len(), 2);
    assert_eq!(m.items.len(), 1);
}

#[test]
fn opcodes_and_modifiers() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "ld.global.nc.v4.f32 {%f1,%f2,%f3,%f4}, [%rd1];",
            "ld",
            &["global", "nc", "v4", "f32"],
        ),
        (
            "shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;",
            "shfl",
            &["sync", "bfly", "b32"],
        ),
        ("cvt.rn.f32.s32 %f1, %r1;", "cvt", &["rn", "f32", "s32"]),
        (
            "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f1}, {%r1}, {%r2}, {%f1};",
            "mma",
            &[
                "sync", "aligned", "m8n8k4", "row", "col", "f32", "f16", "f16", "f32",
            ],
        ),
        ("setp.ne.s32 %p1, %r1, 0;", "setp", &["ne", "s32"]),
        (
            "atom.global.add.f32 %f1, [%rd1], %f2;",
            "atom",
            &["global", "add", "f32"],
        ),
        ("bar.sync 0;", "bar", &["sync"]),
        ("barrier.sync.aligned 0;", "barrier", &["sync", "aligned"]),
        (
            "cp.async.ca.shared.global [%r1], [%rd1], 16;",
            "cp",
            &["async", "ca", "shared", "global"],
        ),
        (
            "ld.global.L2::128B.f32 %f1, [%rd1];",
            "ld",
            &["global", "L2::128B", "f32"],
        ),
        (
            "ld.global.L1::no_allocate.L2::cache_hint.f32 %f1, [%rd1], %rd2;",
            "ld",
            &["global", "L1::no_allocate", "L2::cache_hint", "f32"],
        ),
        (
            "tex.2d.v4.f32.s32 {%f1,%f2,%f3,%f4}, %rd1;",
            "tex",
            &["2d", "v4", "f32", "s32"],
        ),
        ("ret;", "ret", &[]),
        ("exit;", "exit", &[]),
        ("frobnicate.wibble %r1;", "frobnicate", &[]),
    ];
    for (text, opcode, mods) in cases {
        let i = inst(text);
        assert_eq!(&i.opcode, opcode, "{text}");
        if *opcode != "frobnicate" {
            assert_eq!(&i.modifiers, mods, "{text}");
        }
    }
    assert_eq!(inst("frobnicate.wibble %r1;").modifiers, ["wibble"]);
}

#[test]
fn operands() {
    assert_eq!(
        sops("mov.u32 %r1, %tid.x, %ntid.y, %ctaid.z, %nctaid.x, %laneid, %warpid, %clock64, %lanemask_lt, %envreg3, %dynamic_smem_size;"),
        ["R(%r1)", "R(%tid.x)", "R(%ntid.y)", "R(%ctaid.z)", "R(%nctaid.x)", "R(%laneid)", "R(%warpid)", "R(%clock64)", "R(%lanemask_lt)", "R(%envreg3)", "R(%dynamic_smem_size)"]
    );
    assert_eq!(
        sops("x foo, $L__BB0_3, __cudart_i2opi_f, _Z3fooPf, param0, _;"),
        [
            "S(foo)",
            "S($L__BB0_3)",
            "S(__cudart_i2opi_f)",
            "S(_Z3fooPf)",
            "S(param0)",
            "_"
        ]
    );
    assert_eq!(
        sops("x 42, 0x1F, 017, 0b101, 7U, -5, -0x10, 18446744073709551615;"),
        [
            "I(42)",
            "I(31)",
            "I(15)",
            "I(5)",
            "I(7)",
            "I(-5)",
            "I(-16)",
            "I(18446744073709551615)"
        ]
    );
    assert_eq!(
        sops("x 0f3F800000, 0d3FF0000000000000, 1.5, 1e10, -0f3F800000;"),
        [
            "F32(0x3f800000)".to_string(),
            "F64(0x3ff0000000000000)".to_string(),
            format!("F64({:#x})", 1.5f64.to_bits()),
            format!("F64({:#x})", 1e10f64.to_bits()),
            "F32(0xbf800000)".to_string()
        ]
    );
    assert_eq!(
        sops("x [%rd1], [%rd1+4], [%rd1+-4], [%rd1-4], [sym], [sym+8], [0x100], [%r1];"),
        [
            "[R(%rd1)+0]",
            "[R(%rd1)+4]",
            "[R(%rd1)-4]",
            "[R(%rd1)-4]",
            "[S(sym)+0]",
            "[S(sym)+8]",
            "[+256]",
            "[R(%r1)+0]"
        ]
    );
    assert_eq!(
        sops("x {%f1, %f2, _, %f4}, !%p1, -%r1, %p1|%p2;"),
        [
            "V(R(%f1),R(%f2),_,R(%f4))",
            "!R(%p1)",
            "-R(%r1)",
            "R(%p1)|R(%p2)"
        ]
    );
    assert_eq!(
        sops("call.uni (retval0), _Z3fooi, (param0, param1);"),
        ["L(S(retval0))", "S(_Z3fooi)", "L(S(param0),S(param1))"]
    );
    assert_eq!(sops("call.uni _Z3barv, ();"), ["S(_Z3barv)", "L()"]);
    assert_eq!(
        sops("call (retval0), %rd5, (param0), prototype_0;"),
        ["L(S(retval0))", "R(%rd5)", "L(S(param0))", "S(prototype_0)"]
    );
    assert_eq!(sops("call.uni (_), f, (a);"), ["L(_)", "S(f)", "L(S(a))"]);
}

#[test]
fn operand_spans() {
    let src = format!("{HEADER}.entry k()\n{{\n\tadd.s32 %r1, %r2, [%rd1+4];\n}}\n");
    let m = ok(&src);
    let b = func(&m, "k").body.clone().unwrap();
    let i = insts(&b)[0].clone();
    let text = |s: Span| &src[s.start as usize..s.end as usize];
    assert_eq!(text(i.span), "add.s32 %r1, %r2, [%rd1+4]");
    assert_eq!(text(i.opcode_span), "add.s32");
    assert_eq!(text(i.operands[2].span()), "[%rd1+4]");
    assert_eq!(
        (i.operands[1].span().line, i.operands[1].span().col),
        (6, 15)
    );
}

#[test]
fn body_structure() {
    let b = body(
        "$L__BB0_1:\n{\n.reg .b32 t;\n{ { add.s32 %r1, %r1, 1; } }\n}\n.pragma \"nounroll\";\n.local .align 8 .b8 __local_depot0[32];\n.param .b32 param0;\n.shared .align 4 .f32 tile[16][16];\nFtgt: .calltargets f, g;\nTbl: .branchtargets L1, L2;\nprototype_1 : .callprototype (.param .b32 _) _ (.param .b64 _, .param .align 8 .b8 _[16]);\n@%p1 bra LBB0_2;\nLBB0_2:\n",
    );
    assert_eq!(
        labels(&b),
        ["$L__BB0_1", "Ftgt", "Tbl", "prototype_1", "LBB0_2"]
    );
    assert!(matches!(&b[1], Statement::Block(inner) if inner.len() == 2));
    assert_eq!(insts(&b).len(), 2);
    let dirs: Vec<_> = b
        .iter()
        .filter_map(|s| match s {
            Statement::Directive(d) => Some((d.name.as_str(), d.strings.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        dirs,
        [
            ("pragma", vec!["nounroll".to_string()]),
            ("calltargets", vec!["f".to_string(), "g".to_string()]),
            ("branchtargets", vec!["L1".to_string(), "L2".to_string()]),
            ("callprototype", vec![])
        ]
    );
    let vs: Vec<_> = b
        .iter()
        .filter_map(|s| match s {
            Statement::Var(v) => Some((v.space, v.name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        vs,
        [
            (StateSpace::Local, "__local_depot0"),
            (StateSpace::Param, "param0"),
            (StateSpace::Shared, "tile")
        ]
    );
}

#[test]
fn non_ascii_in_comments_and_strings() {
    let m = ok(&format!(
        "{HEADER}// héllo → ünïcode\n/* ∑ */\n.entry k() {{ .pragma \"ñ\"; ret; }}\n"
    ));
    assert_eq!(m.items.len(), 1);
}

#[test]
fn nesting_limits() {
    let deep_ok = format!(
        "{HEADER}.entry k() {{ {} {} }}",
        "{".repeat(200),
        "}".repeat(200)
    );
    ok(&deep_ok);
    let too_deep = format!(
        "{HEADER}.entry k() {{ {} {} }}",
        "{".repeat(10_000),
        "}".repeat(10_000)
    );
    assert!(err(&too_deep).message.contains("nesting"));
    let init = format!(
        "{HEADER}.global .u32 x[1] = {}1{};",
        "{".repeat(10_000),
        "}".repeat(10_000)
    );
    assert!(err(&init).message.contains("nesting"));
    let vec = format!(
        "{HEADER}.entry k() {{ mov.b32 {}%r1{}; }}",
        "{".repeat(10_000),
        "}".repeat(10_000)
    );
    assert!(err(&vec).message.contains("nesting"));
    let neg = format!(
        "{HEADER}.entry k() {{ mov.b32 %r1, {}%r2; }}",
        "-!".repeat(10_000)
    );
    assert!(err(&neg).message.contains("nesting"));
    // Just under the limit: must not overflow the stack (the result itself may be either).
    for n in [250, 255, 256] {
        let _ = parse(&format!(
            "{HEADER}.entry k() {{ {} {} }}",
            "{".repeat(n),
            "}".repeat(n)
        ));
        let _ = parse(&format!(
            "{HEADER}.global .u32 x[1] = {}1{};",
            "{".repeat(n),
            "}".repeat(n)
        ));
        let _ = parse(&format!(
            "{HEADER}.entry k() {{ mov.b32 {}%r1{}; }}",
            "{".repeat(n),
            "}".repeat(n)
        ));
        let _ = parse(&format!(
            "{HEADER}.entry k() {{ mov.b32 {}%r1{}; }}",
            "(".repeat(n),
            ")".repeat(n)
        ));
        let _ = parse(&format!(
            "{HEADER}.entry k() {{ mov.b32 %r1, {}%r2; }}",
            "-".repeat(n)
        ));
    }
}

#[test]
fn large_input_is_fast() {
    let mut src = String::from(HEADER);
    src.push_str(".visible .entry big(.param .u64 p)\n{\n.reg .b32 %r<100>;\n.reg .b64 %rd<10>;\n");
    let line = "\tld.global.nc.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd1+16]; // comment\n\t@%p1 bra $L__BB0_3;\n$L__BB0_3:\n\tfma.rn.f32 %f1, %f2, 0f3F800000, %f3;\n";
    while src.len() < 2_000_000 {
        src.push_str(line);
    }
    src.push_str("}\n");
    let t = std::time::Instant::now();
    let m = ok(&src);
    // Generous even for an unoptimised build; release parses 10 MB in well under a second.
    assert!(t.elapsed().as_secs_f64() < 10.0, "{:?}", t.elapsed());
    assert!(insts(func(&m, "big").body.as_ref().unwrap()).len() > 40_000);
}

// ---------------------------------------------------------------- errors

#[test]
fn error_positions() {
    let missing_semi = format!("{HEADER}.entry k()\n{{\n\tmov.u32 %r1, %r2\n\tret;\n}}\n");
    let d = err(&missing_semi);
    assert_eq!((d.span.line, d.span.col), (7, 2));
    assert_eq!(d.found, "ret");
    assert_eq!(d.expected.as_deref(), Some("`,` or `;`"));

    let d = err(&format!("{HEADER}.entry k() {{\n\tmov.f32 %f1, 0fZZ;\n}}"));
    assert_eq!((d.span.line, d.span.col, d.found.as_str()), (5, 15, "0fZZ"));

    let d = err(&format!("{HEADER}.frob 1;\n"));
    assert_eq!((d.span.line, d.span.col), (4, 1));
    assert!(d.message.contains(".frob"), "{}", d.message);

    let d = err(&format!("{HEADER}.entry k(.param p) {{ }}"));
    assert_eq!(d.expected.as_deref(), Some("a type such as `.u32`"));
    assert_eq!(d.found, "p");

    let d = err(&format!("{HEADER}.entry k() {{ ret;"));
    assert!(d.message.contains("end of input"));
    assert_eq!(d.expected.as_deref(), Some("`}`"));

    let d = err(&format!(
        "{HEADER}.global .u32 x = 99999999999999999999999;"
    ));
    assert!(d.message.contains("64 bits"));
    let d = err(&format!("{HEADER}.global .u8 x[4294967296][4294967296];"));
    assert!(d.message.contains("overflows"));
    let d = err(&format!(
        "{HEADER}.entry k() {{ ld.u32 %r1, [%rd1+99999999999999999999]; }}"
    ));
    assert!(d.message.contains("64 bits"));
    let d = err(&format!(
        "{HEADER}.entry k() {{ ld.u32 %r1, [%rd1+18446744073709551615]; }}"
    ));
    assert!(d.message.contains("offset"));
}

#[test]
fn malformed_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/malformed");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "ptx") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        let src = String::from_utf8_lossy(&bytes);
        let d = match parse(&src) {
            Ok(_) => panic!("{} parsed but should not", p.display()),
            Err(d) => d,
        };
        let first = &d.0[0];
        assert!(first.span.line >= 1, "{}", p.display());
        assert!(!first.message.is_empty(), "{}", p.display());
        // Rendering must not panic either.
        let _ = d.render("x.ptx", &src);
        n += 1;
    }
    assert!(n >= 15, "only {n} malformed inputs");
}

fn malformed(name: &str) -> Diagnostic {
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/malformed")
            .join(name),
    )
    .unwrap();
    err(&String::from_utf8_lossy(&bytes))
}

#[test]
fn malformed_positions() {
    let at = |name: &str| {
        let d = malformed(name);
        (d.span.line, d.span.col)
    };
    assert_eq!(at("missing_semicolon.ptx"), (9, 2));
    assert_eq!(at("bad_float_literal.ptx"), (7, 15));
    assert_eq!(at("unterminated_comment.ptx"), (6, 1));
    assert_eq!(at("unterminated_string.ptx"), (6, 9));
    assert_eq!(at("lone_at.ptx"), (7, 3));
    assert_eq!(at("bad_vector.ptx"), (7, 21));
    assert_eq!(at("empty_offset.ptx"), (7, 19));
    assert_eq!(at("reg_without_name.ptx"), (6, 11));
    assert_eq!(
        malformed("huge_integer.ptx").found,
        "123456789012345678901234567890"
    );
}

// ---------------------------------------------------------------- no panics

const SEED: &str = include_str!("data/recursion.ptx");

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_strings_do_not_panic(s in "\\PC{0,200}") {
        let _ = parse(&s);
    }

    #[test]
    fn ptx_like_tokens_do_not_panic(parts in prop::collection::vec(prop::sample::select(vec![
        ".entry", ".func", "k", "(", ")", "{", "}", "[", "]", ",", ";", ":", "%r1", "%tid.x", ".reg", ".b32", ".param",
        ".global", "=", "0f3F800000", "-", "+", "!", "@", "|", "_", "ld.global.f32", "<", ">", "1", "0x", "\"s", "/*", "\n",
        ".section", ".loc", ".pragma", "\"x\"", ".callprototype", "generic", ".align", "é",
    ]), 0..80)) {
        let src = parts.join(" ");
        let _ = parse(&src);
    }

    #[test]
    fn mutated_ptx_does_not_panic(
        edits in prop::collection::vec((0usize..SEED.len(), 0u8..4, any::<u8>(), "\\PC{0,8}"), 1..8),
        cut in 0usize..=SEED.len(),
    ) {
        let mut bytes = SEED.as_bytes().to_vec();
        for (pos, kind, byte, ins) in edits {
            let pos = pos.min(bytes.len());
            match kind {
                0 if pos < bytes.len() => bytes[pos] ^= byte | 1,
                1 => bytes.splice(pos..pos, ins.bytes()).for_each(drop),
                2 if pos < bytes.len() => { bytes.remove(pos); }
                _ => bytes.insert(pos, byte),
            }
        }
        bytes.truncate(cut.min(bytes.len()));
        let src = String::from_utf8_lossy(&bytes);
        let _ = parse(&src);
    }
}
