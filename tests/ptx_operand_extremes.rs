//! Every operand form the PTX writer prints, with the most extreme
//! immediates the operand range check (`ptx::check`) lets through, must
//! assemble with NVIDIA's ptxas; one step beyond, the check refuses.
mod common;

use tileiras::options::{Gpu, Options};
use tileiras::ptx::{
    self, check, Entry, Inst, Item, Line, Opc, Operand, Param, ParamTy, Reg, RegClass, Ty,
};

fn r(class: RegClass, id: u32) -> Reg {
    Reg { class, id }
}

/// Register names used below: `%rd1` the global pointer, `%r1` the shared
/// scratch address, `%r2`, `%rs1`, `%rd2`, `%p1` values.
fn rd(id: u32) -> Operand {
    Operand::Reg(r(RegClass::B64, id))
}
fn r32(id: u32) -> Operand {
    Operand::Reg(r(RegClass::B32, id))
}
fn rs(id: u32) -> Operand {
    Operand::Reg(r(RegClass::B16, id))
}
fn imm(v: i64) -> Operand {
    Operand::Imm(v)
}
fn global(off: i64) -> Operand {
    Operand::Addr(r(RegClass::B64, 1), off)
}
fn shared(off: i64) -> Operand {
    Operand::Addr(r(RegClass::B32, 1), off)
}
fn i(opc: Opc, mods: &[&'static str], tys: &[Ty], d: Vec<Operand>, s: Vec<Operand>) -> Inst {
    Inst::new(opc, mods, tys, d, s)
}

/// The instructions: one per operand form, at the ends of its range.
fn extremes() -> Vec<Inst> {
    use Opc::*;
    let v4 = Operand::Vec((3..7).map(|k| r(RegClass::B32, k)).collect());
    let p1 = Operand::Reg(r(RegClass::Pred, 1));
    vec![
        i(
            Ld,
            &["param"],
            &[Ty::B64],
            vec![rd(1)],
            vec![Operand::Param("k_param_0".into())],
        ),
        i(
            Mov,
            &[],
            &[Ty::U32],
            vec![r32(1)],
            vec![Operand::Symbol(ptx::SHARED_SYMBOL)],
        ),
        i(Ld, &["global"], &[Ty::B16], vec![rs(1)], vec![global(-8)]),
        i(Ld, &["global"], &[Ty::B16], vec![rs(2)], vec![global(-1)]),
        i(
            Ld,
            &["global"],
            &[Ty::B16],
            vec![rs(2)],
            vec![global(i64::MIN)],
        ),
        i(
            Ld,
            &["global"],
            &[Ty::B16],
            vec![rs(2)],
            vec![global(i64::MAX)],
        ),
        i(
            Ld,
            &["global", "v4"],
            &[Ty::B32],
            vec![v4.clone()],
            vec![global(-16)],
        ),
        i(
            St,
            &["global", "v4"],
            &[Ty::B32],
            vec![],
            vec![global(-16), v4],
        ),
        i(Ld, &["shared"], &[Ty::B32], vec![r32(2)], vec![shared(-8)]),
        i(
            Ld,
            &["shared"],
            &[Ty::B32],
            vec![r32(2)],
            vec![shared(-2147483648)],
        ),
        i(
            Ld,
            &["shared"],
            &[Ty::B32],
            vec![r32(2)],
            vec![shared(4294967295)],
        ),
        i(
            St,
            &["shared"],
            &[Ty::B32],
            vec![],
            vec![shared(-4), r32(2)],
        ),
        i(
            Add,
            &[],
            &[Ty::S32],
            vec![r32(2)],
            vec![r32(2), imm(4294967295)],
        ),
        i(
            Add,
            &[],
            &[Ty::S32],
            vec![r32(2)],
            vec![r32(2), imm(-2147483648)],
        ),
        i(Add, &[], &[Ty::S16], vec![rs(1)], vec![rs(1), imm(65535)]),
        i(Add, &[], &[Ty::S16], vec![rs(1)], vec![rs(1), imm(-32768)]),
        i(
            Add,
            &[],
            &[Ty::S64],
            vec![rd(2)],
            vec![rd(1), imm(i64::MIN)],
        ),
        i(
            Add,
            &[],
            &[Ty::S64],
            vec![rd(2)],
            vec![rd(2), imm(i64::MAX)],
        ),
        i(Mov, &[], &[Ty::B16], vec![rs(2)], vec![imm(65535)]),
        i(Mov, &[], &[Ty::B64], vec![rd(3)], vec![imm(i64::MIN)]),
        i(
            Shl,
            &[],
            &[Ty::B32],
            vec![r32(2)],
            vec![r32(2), imm(4294967295)],
        ),
        i(
            Shr,
            &[],
            &[Ty::U64],
            vec![rd(2)],
            vec![rd(2), imm(-2147483648)],
        ),
        i(
            Bfe,
            &[],
            &[Ty::U32],
            vec![r32(2)],
            vec![r32(2), imm(255), imm(255)],
        ),
        i(
            Mul,
            &["wide"],
            &[Ty::S32],
            vec![rd(3)],
            vec![r32(2), imm(4294967295)],
        ),
        i(
            Mad,
            &["wide"],
            &[Ty::U32],
            vec![rd(3)],
            vec![r32(2), imm(-2147483648), imm(i64::MIN)],
        ),
        i(
            Setp,
            &["lt"],
            &[Ty::S32],
            vec![p1.clone()],
            vec![r32(2), imm(-2147483648)],
        ),
        i(
            Selp,
            &[],
            &[Ty::B32],
            vec![r32(2)],
            vec![imm(4294967295), imm(-2147483648), p1],
        ),
        i(Bar, &["sync"], &[], vec![], vec![imm(15)]),
        i(Bar, &["sync"], &[], vec![], vec![imm(0), imm(1024)]),
        i(
            CpAsync,
            &["ca", "shared", "global"],
            &[],
            vec![],
            vec![shared(-16), global(-16), imm(16), imm(16)],
        ),
        i(
            CpAsync,
            &["ca", "shared", "global"],
            &[],
            vec![],
            vec![shared(-4), global(-4), imm(4), imm(0)],
        ),
        i(CpAsync, &["commit_group"], &[], vec![], vec![]),
        i(
            CpAsync,
            &["wait_group"],
            &[],
            vec![],
            vec![imm(i64::from(i32::MAX))],
        ),
        i(
            St,
            &["global"],
            &[Ty::B8],
            vec![],
            vec![global(-1), imm(255)],
        ),
        i(St, &["global"], &[Ty::B16], vec![], vec![global(-2), rs(1)]),
        i(St, &["global"], &[Ty::B16], vec![], vec![global(-4), rs(2)]),
        i(
            St,
            &["global"],
            &[Ty::B32],
            vec![],
            vec![global(-2147483648), r32(2)],
        ),
        i(
            St,
            &["global"],
            &[Ty::B64],
            vec![],
            vec![global(i64::MIN), rd(2)],
        ),
        i(St, &["global"], &[Ty::B64], vec![], vec![global(0), rd(3)]),
        i(Ret, &[], &[], vec![], vec![]),
    ]
}

/// A module of one entry whose body is `body`.
fn module(gpu: Gpu, body: Vec<Inst>) -> ptx::Module {
    let mut m = ptx::Module::new(&Options {
        gpu,
        ..Options::default()
    });
    m.items.push(Item::Entry(Entry {
        name: "k".into(),
        params: vec![Param {
            name: "k_param_0".into(),
            ty: ParamTy::GlobalPtr,
        }],
        reqntid: 1024,
        launch: Box::default(),
        reg_counts: vec![
            (RegClass::Pred, 1),
            (RegClass::B16, 2),
            (RegClass::B32, 6),
            (RegClass::B64, 3),
        ],
        shared_bytes: 64,
        acc_regs: 0,
        local_bytes: 0,
        strings: Vec::new(),
        body: body.into_iter().map(|i| Line::Inst(Box::new(i))).collect(),
        decl: None,
        tensor_maps: Vec::new(),
    }));
    m
}

#[test]
fn extreme_immediates_pass_the_check_and_assemble() {
    for (gpu, arch) in [
        (Gpu::Sm80, "sm_80"),
        (Gpu::Sm90, "sm_90a"),
        (Gpu::Sm120, "sm_120a"),
    ] {
        let m = module(gpu, extremes());
        check::module(&m).unwrap_or_else(|e| panic!("{e}"));
        let text = m.to_text();
        for written in [
            "[%rd1+-8]",
            "[%rd1+-9223372036854775808]",
            "[%rd1+9223372036854775807]",
            "[%r1+-2147483648]",
            "[%r1+-16], [%rd1+-16], 16, 16",
            "bar.sync \t0, 1024",
        ] {
            assert!(text.contains(written), "{written} not in\n{text}");
        }
        assert!(!text.contains("[%rd1-"), "{text}");
        common::assemble(&text, &[&format!("-arch={arch}")]);
    }
}

#[test]
fn one_step_beyond_is_refused() {
    use Opc::*;
    let beyond = [
        i(
            Add,
            &[],
            &[Ty::S32],
            vec![r32(2)],
            vec![r32(2), imm(4294967296)],
        ),
        i(
            Add,
            &[],
            &[Ty::S32],
            vec![r32(2)],
            vec![r32(2), imm(-2147483649)],
        ),
        i(Add, &[], &[Ty::S16], vec![rs(1)], vec![rs(1), imm(65536)]),
        i(Mov, &[], &[Ty::B16], vec![rs(2)], vec![imm(-32769)]),
        i(
            Shl,
            &[],
            &[Ty::B32],
            vec![r32(2)],
            vec![r32(2), imm(4294967296)],
        ),
        i(
            Bfe,
            &[],
            &[Ty::U32],
            vec![r32(2)],
            vec![r32(2), imm(256), imm(1)],
        ),
        i(
            Bfe,
            &[],
            &[Ty::U32],
            vec![r32(2)],
            vec![r32(2), imm(0), imm(-1)],
        ),
        i(Bar, &["sync"], &[], vec![], vec![imm(16)]),
        i(Bar, &["sync"], &[], vec![], vec![imm(0), imm(1056)]),
        i(Bar, &["sync"], &[], vec![], vec![imm(0), imm(1000)]),
        i(
            CpAsync,
            &["ca", "shared", "global"],
            &[],
            vec![],
            vec![shared(0), global(0), imm(16), imm(17)],
        ),
        i(CpAsync, &["wait_group"], &[], vec![], vec![imm(-1)]),
        i(
            Ld,
            &["shared"],
            &[Ty::B32],
            vec![r32(2)],
            vec![shared(4294967296)],
        ),
        i(
            Ld,
            &["shared"],
            &[Ty::B32],
            vec![r32(2)],
            vec![shared(-2147483649)],
        ),
        i(
            St,
            &["global"],
            &[Ty::B8],
            vec![],
            vec![global(0), imm(256)],
        ),
        i(
            Ld,
            &["global", "v4"],
            &[Ty::B32],
            vec![Operand::Vec((3..6).map(|k| r(RegClass::B32, k)).collect())],
            vec![global(0)],
        ),
    ];
    for bad in beyond {
        let mut body = extremes();
        body.insert(2, bad.clone());
        let m = module(Gpu::Sm90, body);
        let e = check::module(&m).expect_err("out of range");
        assert!(e.starts_with("in kernel 'k': "), "{e}");
        assert_eq!(
            check::inst(&bad).err().as_deref(),
            e.strip_prefix("in kernel 'k': ")
        );
    }
}
