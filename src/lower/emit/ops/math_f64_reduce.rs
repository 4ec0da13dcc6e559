//! Payne-Hanek reduction of a huge f64 argument by pi/2: the 53-bit
//! mantissa times a 192-bit window of the bits of 2/pi (chosen by the
//! exponent from a table held in selects), in 64-bit integer words.
use crate::lower::emit::context::Lowerer;
use crate::ptx::{Opc, Operand, Reg, Ty};
use smallvec::smallvec;

/// 2/pi in 64-bit words after 64 leading zero bits (bit 1 of 2/pi is the
/// top bit of word 1).
const TWO_OVER_PI: [u64; 20] = [
    0x0000_0000_0000_0000,
    0xa2f9_836e_4e44_1529,
    0xfc27_57d1_f534_ddc0,
    0xdb62_9599_3c43_9041,
    0xfe51_63ab_debb_c561,
    0xb724_6e3a_424d_d2e0,
    0x0649_2eea_09d1_921c,
    0xfe1d_eb1c_b129_a73e,
    0xe882_35f5_2ebb_4484,
    0xe99c_7026_b45f_7e41,
    0x3991_d639_8353_39f4,
    0x9c84_5f8b_bdf9_283b,
    0x1ff8_97ff_de05_980f,
    0xef2f_118b_5a0a_6d1f,
    0x6d36_7ecf_27cb_09b7,
    0x4f46_3f66_9e5f_ea2d,
    0x7527_bac7_ebe5_f17b,
    0x3d07_39f7_8a52_92ea,
    0x6bfb_5fb1_1f8d_5d08,
    0x5603_3046_fc7b_6bab,
];

fn r(x: Reg) -> Operand {
    Operand::Reg(x)
}

fn imm(v: u64) -> Operand {
    Operand::Imm(v as i64)
}

fn u64op(l: &mut Lowerer, opc: Opc, mods: &[&'static str], a: Operand, b: Operand) -> Reg {
    l.b.op(opc, mods, &[Ty::U64], Ty::U64, vec![a, b])
}

fn b64op(l: &mut Lowerer, opc: Opc, a: Operand, b: Operand) -> Reg {
    l.b.op(opc, &[], &[Ty::B64], Ty::B64, vec![a, b])
}

/// `a + b` and its carry (0 or 1) as u64.
fn add_carry(l: &mut Lowerer, a: Reg, b: Reg) -> (Reg, Reg) {
    let s = u64op(l, Opc::Add, &[], r(a), r(b));
    let c =
        l.b.op(Opc::Setp, &["lt"], &[Ty::U64], Ty::Pred, vec![r(s), r(a)]);
    let c = l.b.op(
        Opc::Selp,
        &[],
        &[Ty::U64],
        Ty::U64,
        vec![imm(1), imm(0), r(c)],
    );
    (s, c)
}

/// `|x| - n pi/2` in double-double and `n mod 4` (u32) for `|x| >= 2^50`
/// finite (the caller restores the sign).
pub fn payne_hanek(l: &mut Lowerer, ax: Reg) -> (Reg, Reg, Reg) {
    let bits = l.b.op(Opc::Mov, &[], &[Ty::B64], Ty::B64, vec![r(ax)]);
    let field = u64op(l, Opc::Shr, &[], r(bits), Operand::Imm(52));
    let mant = b64op(l, Opc::And, r(bits), imm(0x000f_ffff_ffff_ffff));
    let m = b64op(l, Opc::Or, r(mant), imm(1 << 52));
    let win = window(l, field);
    let (a, b, q) = quadrant_and_fraction(l, m, win);
    let (rh, rl) = fraction_times_half_pi(l, a, b);
    (rh, rl, q)
}

/// The 192-bit window `[w2, w1, w0]` (w2 most significant) of the bits of
/// 2/pi that the mantissa of an f64 with exponent field `field` (u64)
/// multiplies.
fn window(l: &mut Lowerer, field: Reg) -> [Reg; 3] {
    // |x| = m 2^e with e = field - 1075; the window starts at bit
    // e - 1 of 2/pi (weight 2 after scaling), table bit g = e + 62.
    let field =
        l.b.op(Opc::Cvt, &[], &[Ty::U32, Ty::U64], Ty::U32, vec![r(field)]);
    let g = l.b.op(
        Opc::Sub,
        &[],
        &[Ty::S32],
        Ty::S32,
        vec![r(field), Operand::Imm(1075 - 62)],
    );
    let g = l.b.op(
        Opc::Max,
        &[],
        &[Ty::S32],
        Ty::S32,
        vec![r(g), Operand::Imm(0)],
    );
    let wi = l.b.op(
        Opc::Shr,
        &[],
        &[Ty::U32],
        Ty::U32,
        vec![r(g), Operand::Imm(6)],
    );
    let o = l.b.op(
        Opc::And,
        &[],
        &[Ty::B32],
        Ty::B32,
        vec![r(g), Operand::Imm(63)],
    );
    let no = l.b.op(
        Opc::Sub,
        &[],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Imm(64), r(o)],
    );
    let words = table_words(l, wi);
    // The window (w2, w1, w0), w2 most significant.
    let win: Vec<Reg> = (0..3)
        .map(|j| {
            let a =
                l.b.op(Opc::Shl, &[], &[Ty::B64], Ty::B64, vec![r(words[j]), r(o)]);
            let b = l.b.op(
                Opc::Shr,
                &[],
                &[Ty::B64],
                Ty::B64,
                vec![r(words[j + 1]), r(no)],
            );
            b64op(l, Opc::Or, r(a), r(b))
        })
        .collect();
    [win[0], win[1], win[2]]
}

/// The table words `t[wi + j]` for j in 0..4 (wi: u32), each by a chain of
/// selects.
fn table_words(l: &mut Lowerer, wi: Reg) -> Vec<Reg> {
    let hits: Vec<Reg> = (0..17)
        .map(|kk| {
            l.b.op(
                Opc::Setp,
                &["eq"],
                &[Ty::U32],
                Ty::Pred,
                vec![r(wi), Operand::Imm(kk)],
            )
        })
        .collect();
    (0..4)
        .map(|j| {
            let mut v = l.b.op(
                Opc::Mov,
                &[],
                &[Ty::B64],
                Ty::B64,
                vec![imm(TWO_OVER_PI[j])],
            );
            for (kk, &hit) in hits.iter().enumerate().skip(1) {
                v = l.b.op(
                    Opc::Selp,
                    &[],
                    &[Ty::B64],
                    Ty::B64,
                    vec![imm(TWO_OVER_PI[kk + j]), r(v), r(hit)],
                );
            }
            v
        })
        .collect()
}

/// The product `p = m w mod 2^192` of mantissa `m` and window `win`, split
/// into the fraction below its top two bits, 128 bits `a:b` taken as
/// signed, and the quadrant `n` (u32): those two bits, plus one when the
/// fraction is at least one half. Returns `(a, b, n)`.
fn quadrant_and_fraction(l: &mut Lowerer, m: Reg, win: [Reg; 3]) -> (Reg, Reg, Reg) {
    let [w2, w1, w0] = win;
    // p = m w mod 2^192.
    let p0 = u64op(l, Opc::Mul, &["lo"], r(m), r(w0));
    let c0 = u64op(l, Opc::Mul, &["hi"], r(m), r(w0));
    let l1 = u64op(l, Opc::Mul, &["lo"], r(m), r(w1));
    let h1 = u64op(l, Opc::Mul, &["hi"], r(m), r(w1));
    let (p1, carry) = add_carry(l, l1, c0);
    let l2 = u64op(l, Opc::Mul, &["lo"], r(m), r(w2));
    let p2 = u64op(l, Opc::Add, &[], r(l2), r(h1));
    let p2 = u64op(l, Opc::Add, &[], r(p2), r(carry));
    // n = the top two bits; the fraction a:b (128 bits) below them, taken
    // as signed (n + 1 when it is at least one half).
    let n = u64op(l, Opc::Shr, &[], r(p2), Operand::Imm(62));
    let a = b64op(l, Opc::Shl, r(p2), Operand::Imm(2));
    let a1 = u64op(l, Opc::Shr, &[], r(p1), Operand::Imm(62));
    let a = b64op(l, Opc::Or, r(a), r(a1));
    let b = b64op(l, Opc::Shl, r(p1), Operand::Imm(2));
    let b1 = u64op(l, Opc::Shr, &[], r(p0), Operand::Imm(62));
    let b = b64op(l, Opc::Or, r(b), r(b1));
    let half = u64op(l, Opc::Shr, &[], r(a), Operand::Imm(63));
    let n = u64op(l, Opc::Add, &[], r(n), r(half));
    let q =
        l.b.op(Opc::Cvt, &[], &[Ty::U32, Ty::U64], Ty::U32, vec![r(n)]);
    (a, b, q)
}

/// The signed 128-bit fraction `a:b` of a quadrant (from
/// [`quadrant_and_fraction`]) times pi/2, in double-double `(rh, rl)`.
fn fraction_times_half_pi(l: &mut Lowerer, a: Reg, b: Reg) -> (Reg, Reg) {
    let f64op = |l: &mut Lowerer, opc: Opc, mods: &[&'static str], srcs: Vec<Operand>| {
        l.b.op(opc, mods, &[Ty::F64], Ty::F64, srcs)
    };
    let dh =
        l.b.op(Opc::Cvt, &["rn"], &[Ty::F64, Ty::S64], Ty::F64, vec![r(a)]);
    let di = l.b.op(
        Opc::Cvt,
        &["rzi"],
        &[Ty::S64, Ty::F64],
        Ty::S64,
        vec![r(dh)],
    );
    let rem =
        l.b.op(Opc::Sub, &[], &[Ty::S64], Ty::S64, vec![r(a), r(di)]);
    let remf = l.b.op(
        Opc::Cvt,
        &["rn"],
        &[Ty::F64, Ty::S64],
        Ty::F64,
        vec![r(rem)],
    );
    let bf =
        l.b.op(Opc::Cvt, &["rn"], &[Ty::F64, Ty::U64], Ty::F64, vec![r(b)]);
    let p64 = Operand::F64((2f64).powi(-64).to_bits());
    let fl = f64op(l, Opc::Fma, &["rn"], vec![r(bf), p64.clone(), r(remf)]);
    let fh = f64op(l, Opc::Mul, &["rn"], vec![r(dh), p64.clone()]);
    let fl = f64op(l, Opc::Mul, &["rn"], vec![r(fl), p64]);
    // r = f pi/2.
    let c1 = Operand::F64(std::f64::consts::FRAC_PI_2.to_bits());
    let c2 = Operand::F64(6.123_233_995_736_766e-17f64.to_bits());
    let rh = f64op(l, Opc::Mul, &["rn"], vec![r(fh), c1.clone()]);
    let nrh = f64op(l, Opc::Neg, &[], vec![r(rh)]);
    let rl = f64op(l, Opc::Fma, &["rn"], vec![r(fh), c1.clone(), r(nrh)]);
    let rl = f64op(l, Opc::Fma, &["rn"], vec![r(fh), c2, r(rl)]);
    let rl = f64op(l, Opc::Fma, &["rn"], vec![r(fl), c1, r(rl)]);
    (rh, rl)
}
