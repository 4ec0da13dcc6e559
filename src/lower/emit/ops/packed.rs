//! Sub-word elements packed into 32-bit words for vector global accesses:
//! two 16-bit or four 8-bit elements per word, so that a 128-bit access
//! moves eight or sixteen of them. Elements live in 16-bit registers (an
//! 8-bit one in the low byte, the high byte unspecified), words in 32-bit
//! registers with element `j` at bits `[j * bits, (j + 1) * bits)`.
use crate::lower::emit::context::Lowerer;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};
use smallvec::smallvec;

/// How many 32-bit words carry `vec` elements of `bits` bits in one access,
/// or `None` when they move as themselves (32-bit and wider elements, or
/// too few sub-word elements to fill a word).
pub fn words(bits: u32, vec: usize) -> Option<usize> {
    let packs = bits == 8 || bits == 16;
    let total = bits as usize * vec;
    (packs && total >= 32 && total % 32 == 0).then_some(total / 32)
}

/// A padding value's bits repeated for every element of a word.
pub fn splat(pad: u64, bits: u32) -> i64 {
    let mask = (1u64 << bits) - 1;
    let one = pad & mask;
    let mut w = 0u64;
    for j in 0..32 / bits {
        w |= one << (j * bits);
    }
    w as i64
}

/// The elements of word `w`, lowest first, each in its own 16-bit
/// register: `mov.b32 {lo, hi}` splits the halves; bytes move down with
/// 32-bit shifts and keep the low half (`cvt.u16.u32`, free in SASS).
pub fn unpack(l: &mut Lowerer, w: Reg, bits: u32) -> Vec<Reg> {
    if bits == 16 {
        let halves = vec![l.b.reg(RegClass::B16), l.b.reg(RegClass::B16)];
        l.b.push(Inst::new(
            Opc::Mov,
            &[],
            &[Ty::B32],
            smallvec![Operand::Vec(halves.clone())],
            smallvec![Operand::Reg(w)],
        ));
        return halves;
    }
    (0..4)
        .map(|k| {
            let x = if k == 0 {
                w
            } else {
                l.b.op(
                    Opc::Shr,
                    &[],
                    &[Ty::B32],
                    Ty::B32,
                    smallvec![Operand::Reg(w), Operand::Imm(8 * k)],
                )
            };
            l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U16, Ty::U32],
                Ty::U16,
                smallvec![Operand::Reg(x)],
            )
        })
        .collect()
}

/// One word holding `elems` (two 16-bit or four 8-bit elements, lowest
/// first): halves join with `mov.b32 d, {lo, hi}`; for bytes, `prmt`
/// then picks the low byte of each of the four halves.
pub fn pack(l: &mut Lowerer, elems: &[Reg], bits: u32) -> Reg {
    let join = |l: &mut Lowerer, lo: Reg, hi: Reg| l.b.join(lo, hi);
    if bits == 16 {
        return join(l, elems[0], elems[1]);
    }
    let a = join(l, elems[0], elems[1]);
    let b = join(l, elems[2], elems[3]);
    // Bytes 0 and 2 of `a`, then bytes 0 and 2 of `b` (selectors 4 and 6).
    l.b.op(
        Opc::Prmt,
        &[],
        &[Ty::B32],
        Ty::B32,
        smallvec![Operand::Reg(a), Operand::Reg(b), Operand::Imm(0x6420)],
    )
}

#[cfg(test)]
mod tests {
    use crate::lower::emit::ops::packed::*;

    #[test]
    fn words_per_access() {
        assert_eq!(words(8, 16), Some(4));
        assert_eq!(words(8, 8), Some(2));
        assert_eq!(words(8, 4), Some(1));
        assert_eq!(words(8, 2), None);
        assert_eq!(words(16, 8), Some(4));
        assert_eq!(words(16, 2), Some(1));
        assert_eq!(words(16, 1), None);
        assert_eq!(words(32, 4), None);
    }

    #[test]
    fn padding_repeats_per_element() {
        assert_eq!(splat(0x7e, 8), 0x7e7e_7e7e);
        assert_eq!(splat(0x7e00, 16), 0x7e00_7e00);
        assert_eq!(splat(0, 8), 0);
    }
}
