# Writes runnable kernels for TileIR ops and attributes the cuTile corpus
# does not exercise (mulhii, fpowi, get_tensor_shape, globals, ordered
# loads and stores, f64 math functions, remf on f32, f16 and bf16, f64 to
# bf16, conversions to and from the f8, f8 scale and f4 types, pack and
# unpack of 4-bit tiles, print and ftoi of f8 tiles, ftoi to i1, itof to
# f8 and bf16 and from i1, tf32 rounding modes, f16/bf16 conversions, for
# loops over i16 and i8, integer ops on i1, i16 shifts, directed rounding
# of f16 and bf16 arithmetic, i1/i8/i16 iota, constants, view indices and
# extents, print of tf32, tokens through for and if, a 128x128x32 matmul
# through pointer tiles), with cuTile's own bytecode encoders. Run with the
# cuTile Python environment:
#   .tools/venv/bin/python tests/data/lower/ops/gen.py
# tests/lower_ops.rs, tests/lower_math_f64.rs, tests/lower_remf.rs,
# tests/lower_ftof_f8.rs, tests/lower_ftof_f8_scale.rs, tests/lower_f4.rs,
# tests/lower_f8_print.rs, tests/lower_ftoi_f8.rs, tests/lower_itof_f8.rs
# and tests/lower_convert_modes.rs compile each one and run it in the PTX
# emulator.
#
# Every kernel takes global pointers (and i32 scalars) only, works on one
# tile of N elements through pointer tiles (base + iota), and is launched
# with one tile block.
import os
from cuda.tile._bytecode.writer import write_bytecode
from cuda.tile._bytecode.version import BytecodeVersion
from cuda.tile._bytecode import encodings as E
from cuda.tile._bytecode.type import SimpleType
from cuda.tile._bytecode.type_base import PtrAttr, PaddingValue
from cuda.tile._bytecode.debug_info import MISSING_DEBUG_ATTR_ID
from cuda.tile._bytecode.attribute import Float, Integer, EntryHints

HERE = os.path.dirname(os.path.abspath(__file__))
N = 128


def kernel(name, version, params, body, globals_=(), hints=None):
    buf = bytearray()
    with write_bytecode(1, buf, version) as w:
        tt = w.type_table
        for g in globals_:
            g(w, tt)
        ps = [tt.tile(p(tt), []) for p in params]
        with w.function(name, ps, [], True, hints or {}, MISSING_DEBUG_ATTR_ID) as fb:
            body(fb.code_builder, tt, fb.parameters)
            E.encode_ReturnOp(fb.code_builder, [])
    with open(os.path.join(HERE, f"{name}.tileir"), "wb") as f:
        f.write(buf)


def ptr(elem):
    return lambda tt: tt.pointer(elem(tt), PtrAttr.Missing)


def i32(tt): return tt.I32
def i64(tt): return tt.I64
def i16(tt): return tt.simple(SimpleType.I16)
def f32(tt): return tt.simple(SimpleType.F32)
def f16(tt): return tt.simple(SimpleType.F16)
def f64(tt): return tt.simple(SimpleType.F64)
def bf16(tt): return tt.simple(SimpleType.BF16)
def e4m3(tt): return tt.simple(SimpleType.F8E4M3FN)
def e5m2(tt): return tt.simple(SimpleType.F8E5M2)
def tf32(tt): return tt.simple(SimpleType.TF32)
def e8m0(tt): return tt.simple(SimpleType.F8E8M0FNU)
def e5m3(tt): return tt.simple(SimpleType.FNV8E5M3FNU)
def i8(tt): return tt.simple(SimpleType.I8)
def f4(tt): return tt.simple(SimpleType.F4E2M1FN)
def i4(tt): return tt.simple(SimpleType.I4)


def ptrs(cb, tt, base, elem, n=N):
    """The pointer tile base + [0, n)."""
    P = tt.pointer(elem, PtrAttr.Missing)
    b = E.encode_BroadcastOp(cb, tt.tile(P, [n]), E.encode_ReshapeOp(cb, tt.tile(P, [1]), base))
    return E.encode_OffsetOp(cb, tt.tile(P, [n]), b, E.encode_IotaOp(cb, tt.tile(tt.I32, [n])))


def load(cb, tt, p, elem, n=N, order=E.MemoryOrderingSemantics.WEAK, scope=None, token=None, shape=None):
    """Loads through the pointer tile p: n elements, or a tile of `shape`."""
    shape = shape or [n]
    v, _ = E.encode_LoadPtrTkoOp(cb, tt.tile(elem, shape), tt.Token, p, None, None, token, order, scope, None)
    return v


def store(cb, tt, p, v, order=E.MemoryOrderingSemantics.WEAK, scope=None):
    """Stores v through the pointer tile p; returns the store's token."""
    return E.encode_StorePtrTkoOp(cb, tt.Token, p, v, None, None, order, scope, None)


def mulhi(name, elem):
    def body(cb, tt, p):
        e = elem(tt)
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        y = load(cb, tt, ptrs(cb, tt, p[1], e), e)
        store(cb, tt, ptrs(cb, tt, p[2], e), E.encode_MulhiIOp(cb, tt.tile(e, [N]), x, y))
    kernel(name, BytecodeVersion.V_13_3, [ptr(elem)] * 3, body)


def fpowi(name, elem, exp):
    def body(cb, tt, p):
        e, k = elem(tt), exp(tt)
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        n = load(cb, tt, ptrs(cb, tt, p[1], k), k)
        store(cb, tt, ptrs(cb, tt, p[2], e), E.encode_FPowIOp(cb, tt.tile(e, [N]), x, n))
    kernel(name, BytecodeVersion.V_13_4, [ptr(elem), ptr(exp), ptr(elem)], body)


def tensor_shape():
    """out[0..3] = the shape of a [m, 7, n] view, as i32, i64, i16."""
    def body(cb, tt, p):
        f = f32(tt)
        TV = tt.tensor_view(f, [-(1 << 63), 7, -(1 << 63)], [-(1 << 63), -(1 << 63), 1], PtrAttr.Missing)
        one = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (1).to_bytes(4, "little"))
        tv = E.encode_MakeTensorViewOp(cb, TV, p[0], [p[1], p[2]], [one, one])
        a, b, c = E.encode_GetTensorShapeOp(cb, [tt.tile(tt.I32, []), tt.tile(tt.I64, []), tt.tile(i16(tt), [])], tv)
        P32 = tt.pointer(tt.I32, PtrAttr.Missing)
        o = p[3]
        idx = lambda k: E.encode_ConstantOp(cb, tt.tile(tt.I32, []), k.to_bytes(4, "little"))
        at = lambda k: E.encode_OffsetOp(cb, tt.tile(P32, []), o, idx(k))
        store(cb, tt, at(0), a)
        store(cb, tt, at(1), E.encode_TruncIOp(cb, tt.tile(tt.I32, []), b, E.IntegerOverflow.NONE))
        store(cb, tt, at(2), E.encode_ExtIOp(cb, tt.tile(tt.I32, []), c, E.Signedness.Unsigned))
    kernel("tensor_shape_i32_i64_i16", BytecodeVersion.V_13_3, [ptr(f32), i32, i32, ptr(i32)], body)


def globals_table():
    """out[i] = table[i] * 2 + counter[0] for a constant private table and a public global."""
    def defs(w, tt):
        w.global_section.define_global("table", tt.tile(tt.I32, [N]),
                                       b"".join((3 * i - 50).to_bytes(4, "little", signed=True) for i in range(N)),
                                       16, True, E.SymbolVisibility.Private)
        w.global_section.define_global("counter", tt.tile(tt.I32, [1]), (1000).to_bytes(4, "little"), 4)

    def body(cb, tt, p):
        P = tt.pointer(tt.I32, PtrAttr.Missing)
        table = E.encode_GetGlobalOp(cb, tt.tile(P, []), "table")
        counter = E.encode_GetGlobalOp(cb, tt.tile(P, []), "counter")
        x = load(cb, tt, ptrs(cb, tt, table, tt.I32), tt.I32)
        c, _ = E.encode_LoadPtrTkoOp(cb, tt.tile(tt.I32, []), tt.Token, counter, None, None, None,
                                     E.MemoryOrderingSemantics.WEAK, None, None)
        T = tt.tile(tt.I32, [N])
        two = E.encode_ConstantOp(cb, T, (2).to_bytes(4, "little"))
        cb_ = E.encode_BroadcastOp(cb, T, E.encode_ReshapeOp(cb, tt.tile(tt.I32, [1]), c))
        y = E.encode_AddIOp(cb, T, E.encode_MulIOp(cb, T, x, two, E.IntegerOverflow.NONE), cb_, E.IntegerOverflow.NONE)
        store(cb, tt, ptrs(cb, tt, p[0], tt.I32), y)
    kernel("globals_i32", BytecodeVersion.V_13_3, [ptr(i32)], body, [defs])


def ordered():
    """out = relaxed/acquire loads of x (device, block, system scope) added, stored with release and relaxed."""
    O, S = E.MemoryOrderingSemantics, E.MemoryScope

    def body(cb, tt, p):
        e = tt.I32
        T = tt.tile(e, [N])
        a = load(cb, tt, ptrs(cb, tt, p[0], e), e, order=O.RELAXED, scope=S.DEVICE)
        b = load(cb, tt, ptrs(cb, tt, p[0], e), e, order=O.ACQUIRE, scope=S.TL_BLK)
        c = load(cb, tt, ptrs(cb, tt, p[0], e), e, order=O.ACQUIRE, scope=S.SYS)
        s = E.encode_AddIOp(cb, T, E.encode_AddIOp(cb, T, a, b, E.IntegerOverflow.NONE), c, E.IntegerOverflow.NONE)
        store(cb, tt, ptrs(cb, tt, p[1], e), s, order=O.RELEASE, scope=S.DEVICE)
        store(cb, tt, ptrs(cb, tt, p[2], e), a, order=O.RELAXED, scope=S.SYS)
    kernel("ordered_ptr_i32", BytecodeVersion.V_13_3, [ptr(i32)] * 3, body)


def int8_ops():
    """out[k*N + i] = op_k(x[i], y[i]) for the i8 ops listed in tests/lower_ops.rs."""
    OV, SG, RM = E.IntegerOverflow.NONE, E.Signedness, E.RoundingMode

    def body(cb, tt, p):
        e = tt.simple(SimpleType.I8)
        T = tt.tile(e, [N])
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        y = load(cb, tt, ptrs(cb, tt, p[1], e), e)
        three = E.encode_ConstantOp(cb, T, (3).to_bytes(1, "little"))
        amt = E.encode_AndIOp(cb, T, y, E.encode_ConstantOp(cb, T, (7).to_bytes(1, "little")))
        nz = E.encode_OrIOp(cb, T, y, E.encode_ConstantOp(cb, T, (1).to_bytes(1, "little")))
        lt = E.encode_CmpIOp(cb, tt.tile(tt.I1, [N]), x, y, E.ComparisonPredicate.LESS_THAN, SG.Signed)
        ltu = E.encode_CmpIOp(cb, tt.tile(tt.I1, [N]), x, y, E.ComparisonPredicate.LESS_THAN, SG.Unsigned)
        results = [
            E.encode_AddIOp(cb, T, x, y, OV),
            E.encode_SubIOp(cb, T, x, y, OV),
            E.encode_MulIOp(cb, T, x, y, OV),
            E.encode_ShLIOp(cb, T, x, amt, OV),
            E.encode_ShRIOp(cb, T, x, amt, SG.Signed),
            E.encode_ShRIOp(cb, T, x, amt, SG.Unsigned),
            E.encode_DivIOp(cb, T, x, nz, SG.Signed, RM.ZERO),
            E.encode_DivIOp(cb, T, x, nz, SG.Unsigned, RM.ZERO),
            E.encode_DivIOp(cb, T, x, nz, SG.Signed, RM.NEGATIVE_INF),
            E.encode_RemIOp(cb, T, x, nz, SG.Signed),
            E.encode_MaxIOp(cb, T, x, y, SG.Signed),
            E.encode_MinIOp(cb, T, x, y, SG.Unsigned),
            E.encode_MulhiIOp(cb, T, x, y),
            E.encode_NegIOp(cb, T, x, OV),
            E.encode_AbsIOp(cb, T, x),
            E.encode_SelectOp(cb, T, lt, x, y),
            E.encode_SelectOp(cb, T, ltu, x, y),
            E.encode_XOrIOp(cb, T, E.encode_AddIOp(cb, T, x, three, OV), y),
        ]
        P = tt.pointer(e, PtrAttr.Missing)
        for k, r in enumerate(results):
            off = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (k * N).to_bytes(4, "little"))
            store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, []), p[2], off), e), r)
    kernel("int8_ops", BytecodeVersion.V_13_3, [ptr(lambda tt: tt.simple(SimpleType.I8))] * 3, body)


def alloca(name, is_global):
    """out[i] = x[N - 1 - i], through a buffer from alloca: x stored into it, read back
    reversed after the store (the load takes the store's token)."""
    def body(cb, tt, p):
        e = tt.I32
        P = tt.pointer(e, PtrAttr.Missing)
        buf = E.encode_AllocaOp(cb, tt.tile(P, []), N, 16, is_global)
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        done = store(cb, tt, ptrs(cb, tt, buf, e), x)
        T = tt.tile(e, [N])
        rev = E.encode_SubIOp(cb, T, E.encode_ConstantOp(cb, T, (N - 1).to_bytes(4, "little")),
                              E.encode_IotaOp(cb, T), E.IntegerOverflow.NONE)
        b = E.encode_BroadcastOp(cb, tt.tile(P, [N]), E.encode_ReshapeOp(cb, tt.tile(P, [1]), buf))
        y = load(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, [N]), b, rev), e, token=done)
        store(cb, tt, ptrs(cb, tt, p[1], e), y)
    kernel(name, BytecodeVersion.V_13_3, [ptr(i32)] * 2, body)


def constant_table():
    """out[i] = x[i] + table[i] for a constant with N distinct i32 elements (3i^2 - 7),
    and mask[i] = x[i] < 0 xor a constant bool pattern (i % 3 == 0)."""
    def body(cb, tt, p):
        e = tt.I32
        T = tt.tile(e, [N])
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        table = E.encode_ConstantOp(cb, T, b"".join((3 * i * i - 7).to_bytes(4, "little", signed=True)
                                                   for i in range(N)))
        store(cb, tt, ptrs(cb, tt, p[1], e), E.encode_AddIOp(cb, T, x, table, E.IntegerOverflow.NONE))
        B = tt.tile(tt.I1, [N])
        # i1 constants are packed bits, element i at bit i % 8 of byte i / 8.
        packed = bytes(sum(1 << b for b in range(8) if (8 * k + b) % 3 == 0) for k in range(N // 8))
        pattern = E.encode_ConstantOp(cb, B, packed)
        zero = E.encode_ConstantOp(cb, T, (0).to_bytes(4, "little"))
        neg = E.encode_CmpIOp(cb, B, x, zero, E.ComparisonPredicate.LESS_THAN, E.Signedness.Signed)
        m = E.encode_XOrIOp(cb, B, neg, pattern)
        one = E.encode_ConstantOp(cb, T, (1).to_bytes(4, "little"))
        store(cb, tt, ptrs(cb, tt, p[2], e), E.encode_SelectOp(cb, T, m, one, zero))
    kernel("constant_table_i32", BytecodeVersion.V_13_3, [ptr(i32)] * 3, body)


def scans():
    """On x: [4, 64] tiles (row-major in memory): out64 = inclusive i64 sum along dim 1;
    out16 = reverse inclusive i16 max along dim 1; last[i, j] = the last non-zero x32[k, j]
    with k <= i along dim 0 (0 if none): f(current, previous) = current != 0 ? current : previous,
    associative but not commutative (region arguments are [current, previous])."""
    R, C = 4, 64

    def ptrs2(cb, tt, base, elem):
        P = tt.pointer(elem, PtrAttr.Missing)
        b = E.encode_BroadcastOp(cb, tt.tile(P, [R, C]), E.encode_ReshapeOp(cb, tt.tile(P, [1, 1]), base))
        idx = E.encode_ReshapeOp(cb, tt.tile(tt.I32, [R, C]), E.encode_IotaOp(cb, tt.tile(tt.I32, [R * C])))
        return E.encode_OffsetOp(cb, tt.tile(P, [R, C]), b, idx)

    def scan(cb, tt, x, elem, dim, reverse, identity, combine):
        T = tt.tile(elem, [R, C])
        s = tt.tile(elem, [])
        nb = E.encode_ScanOp(cb, [T], [x], dim, reverse, [identity])
        with nb.new_block([s, s]) as (cur, prev):
            E.encode_YieldOp(cb, [combine(cb, s, cur, prev)])
        return nb.done()[0]

    def body(cb, tt, p):
        i64_, i16_, i32_ = tt.I64, tt.simple(SimpleType.I16), tt.I32
        x64 = load(cb, tt, ptrs2(cb, tt, p[0], i64_), i64_, shape=[R, C])
        x16 = load(cb, tt, ptrs2(cb, tt, p[1], i16_), i16_, shape=[R, C])
        x32 = load(cb, tt, ptrs2(cb, tt, p[2], i32_), i32_, shape=[R, C])
        ov = E.IntegerOverflow.NONE
        sums = scan(cb, tt, x64, i64_, 1, False, Integer(i64_, 64, 0),
                    lambda cb, s, a, b: E.encode_AddIOp(cb, s, a, b, ov))
        maxes = scan(cb, tt, x16, i16_, 1, True, Integer(i16_, 16, -32768),
                     lambda cb, s, a, b: E.encode_MaxIOp(cb, s, a, b, E.Signedness.Signed))

        def last_nonzero(cb, s, cur, prev):
            zero = E.encode_ConstantOp(cb, s, (0).to_bytes(4, "little"))
            nz = E.encode_CmpIOp(cb, tt.tile(tt.I1, []), cur, zero, E.ComparisonPredicate.NOT_EQUAL,
                                 E.Signedness.Signed)
            return E.encode_SelectOp(cb, s, nz, cur, prev)
        last = scan(cb, tt, x32, i32_, 0, False, Integer(i32_, 32, 0), last_nonzero)
        store(cb, tt, ptrs2(cb, tt, p[3], i64_), sums)
        store(cb, tt, ptrs2(cb, tt, p[4], i16_), maxes)
        store(cb, tt, ptrs2(cb, tt, p[5], i32_), last)
    kernel("scan_i64_i16_i32", BytecodeVersion.V_13_3,
           [ptr(i64), ptr(i16), ptr(i32), ptr(i64), ptr(i16), ptr(i32)], body)


def early_continue():
    """out[i] = sum over k in [0, K) with k % 3 != 1 of x[k*N + i] (i32): a `for` whose
    body skips some iterations with a `continue` inside an `if`; K is a parameter."""
    def body(cb, tt, p):
        e = tt.I32
        T, S = tt.tile(e, [N]), tt.tile(e, [])
        c = lambda v: E.encode_ConstantOp(cb, S, v.to_bytes(4, "little"))
        zero = E.encode_ConstantOp(cb, T, (0).to_bytes(4, "little"))
        P = tt.pointer(e, PtrAttr.Missing)
        nb = E.encode_ForOp(cb, [T], c(0), p[2], c(1), [zero], False)
        with nb.new_block([S, T]) as (k, acc):
            r = E.encode_RemIOp(cb, S, k, c(3), E.Signedness.Signed)
            skip = E.encode_CmpIOp(cb, tt.tile(tt.I1, []), r, c(1), E.ComparisonPredicate.EQUAL,
                                   E.Signedness.Signed)
            ib = E.encode_IfOp(cb, [], skip)
            with ib.new_block([]):
                E.encode_ContinueOp(cb, [acc])
            with ib.new_block([]):
                E.encode_YieldOp(cb, [])
            ib.done()
            off = E.encode_MulIOp(cb, S, k, c(N), E.IntegerOverflow.NONE)
            row = E.encode_OffsetOp(cb, tt.tile(P, []), p[0], off)
            x = load(cb, tt, ptrs(cb, tt, row, e), e)
            E.encode_ContinueOp(cb, [E.encode_AddIOp(cb, T, acc, x, E.IntegerOverflow.NONE)])
        (total,) = nb.done()
        store(cb, tt, ptrs(cb, tt, p[1], e), total)
    kernel("for_early_continue_i32", BytecodeVersion.V_13_3, [ptr(i32), ptr(i32), i32], body)


def atomic_add_16(name, elem):
    """acc[i % 8] += x[i] for i in [0, N) with atomic_rmw addf (old values discarded), and
    old[i] = the value each addition saw, on a 16-bit float type."""
    def body(cb, tt, p):
        e = elem(tt)
        T = tt.tile(e, [N])
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        P = tt.pointer(e, PtrAttr.Missing)
        b = E.encode_BroadcastOp(cb, tt.tile(P, [N]), E.encode_ReshapeOp(cb, tt.tile(P, [1]), p[1]))
        I = tt.tile(tt.I32, [N])
        slot = E.encode_RemIOp(cb, I, E.encode_IotaOp(cb, I), E.encode_ConstantOp(cb, I, (8).to_bytes(4, "little")),
                               E.Signedness.Signed)
        at = E.encode_OffsetOp(cb, tt.tile(P, [N]), b, slot)
        old, _ = E.encode_AtomicRMWTkoOp(cb, T, tt.Token, at, x, None, None, E.MemoryOrderingSemantics.RELAXED,
                                         E.MemoryScope.DEVICE, E.AtomicRMWMode.ADDF)
        store(cb, tt, ptrs(cb, tt, p[2], e), old)
    kernel(name, BytecodeVersion.V_13_3, [ptr(elem)] * 3, body)


def bool_memory():
    """i1 tiles in memory (one byte each, 0 or 1): out[i] = x[i] xor (i % 3 == 0) through
    pointer tiles; vout[i] = !vx[i] through views of n elements (tile N, ragged: the
    load pads with false and the store writes only i < n)."""
    def body(cb, tt, p):
        b1 = tt.I1
        B = tt.tile(b1, [N])
        x = load(cb, tt, ptrs(cb, tt, p[0], b1), b1)
        packed = bytes(sum(1 << b for b in range(8) if (8 * k + b) % 3 == 0) for k in range(N // 8))
        pattern = E.encode_ConstantOp(cb, B, packed)
        store(cb, tt, ptrs(cb, tt, p[1], b1), E.encode_XOrIOp(cb, B, x, pattern))
        TV = tt.tensor_view(b1, [-(1 << 63)], [1], PtrAttr.Missing)
        PV = tt.partition_view([N], TV, [0], PaddingValue.Zero)
        zero = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (0).to_bytes(4, "little"))
        views = [E.encode_MakePartitionViewOp(cb, PV, E.encode_MakeTensorViewOp(cb, TV, p[k], [p[4]], []))
                 for k in (2, 3)]
        v, _ = E.encode_LoadViewTkoOp(cb, B, tt.Token, views[0], [zero], None,
                                      E.MemoryOrderingSemantics.WEAK, None, None, [False])
        ones = E.encode_ConstantOp(cb, B, b"\xff")
        E.encode_StoreViewTkoOp(cb, tt.Token, E.encode_XOrIOp(cb, B, v, ones), views[1], [zero], None,
                                E.MemoryOrderingSemantics.WEAK, None, None, [False])
    kernel("bool_memory_i1", BytecodeVersion.V_13_3,
           [ptr(lambda tt: tt.I1)] * 4 + [i32], body)


bool_memory()
atomic_add_16("atomic_add_f16", f16)
atomic_add_16("atomic_add_bf16", lambda tt: tt.simple(SimpleType.BF16))
early_continue()
scans()
constant_table()
def alloca_in_loop():
    """out[i] = sum over k in [0, K) of x[k*N + N - 1 - i]: each iteration stores row k into
    a buffer from an alloca inside the loop body and reads it back reversed (token-ordered)."""
    def body(cb, tt, p):
        e = tt.I32
        T, S = tt.tile(e, [N]), tt.tile(e, [])
        P = tt.pointer(e, PtrAttr.Missing)
        c = lambda v: E.encode_ConstantOp(cb, S, v.to_bytes(4, "little"))
        zero = E.encode_ConstantOp(cb, T, (0).to_bytes(4, "little"))
        nb = E.encode_ForOp(cb, [T], c(0), p[2], c(1), [zero], False)
        with nb.new_block([S, T]) as (k, acc):
            buf = E.encode_AllocaOp(cb, tt.tile(P, []), N, 16, False)
            row = E.encode_OffsetOp(cb, tt.tile(P, []), p[0], E.encode_MulIOp(cb, S, k, c(N), E.IntegerOverflow.NONE))
            done = store(cb, tt, ptrs(cb, tt, buf, e), load(cb, tt, ptrs(cb, tt, row, e), e))
            rev = E.encode_SubIOp(cb, T, E.encode_ConstantOp(cb, T, (N - 1).to_bytes(4, "little")),
                                  E.encode_IotaOp(cb, T), E.IntegerOverflow.NONE)
            b = E.encode_BroadcastOp(cb, tt.tile(P, [N]), E.encode_ReshapeOp(cb, tt.tile(P, [1]), buf))
            y = load(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, [N]), b, rev), e, token=done)
            E.encode_ContinueOp(cb, [E.encode_AddIOp(cb, T, acc, y, E.IntegerOverflow.NONE)])
        (total,) = nb.done()
        store(cb, tt, ptrs(cb, tt, p[1], e), total)
    kernel("alloca_in_loop_i32", BytecodeVersion.V_13_3, [ptr(i32), ptr(i32), i32], body)


alloca_in_loop()
alloca("alloca_i32", False)
alloca("alloca_global_i32", True)
def store_rows(cb, tt, base, elem, results):
    """out[k*N + i] = results[k][i]."""
    P = tt.pointer(elem, PtrAttr.Missing)
    for k, r in enumerate(results):
        off = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (k * N).to_bytes(4, "little"))
        store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, []), base, off), elem), r)


def math_f64_unary():
    """out[k*N + i] = f_k(x[i]) for the f64 functions listed in tests/lower_math_f64.rs."""
    RM = E.RoundingMode

    def body(cb, tt, p):
        e = f64(tt)
        T = tt.tile(e, [N])
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        results = [
            E.encode_Exp2Op(cb, T, x, False),
            E.encode_ExpOp(cb, T, x, RM.FULL),
            E.encode_LogOp(cb, T, x),
            E.encode_Log2Op(cb, T, x),
            E.encode_SinOp(cb, T, x),
            E.encode_CosOp(cb, T, x),
            E.encode_TanOp(cb, T, x),
            E.encode_SinHOp(cb, T, x),
            E.encode_CosHOp(cb, T, x),
            E.encode_TanHOp(cb, T, x, RM.FULL),
        ]
        store_rows(cb, tt, p[1], e, results)
    kernel("math_f64_unary", BytecodeVersion.V_13_3, [ptr(f64)] * 2, body)


def math_f64_binary():
    """out[k*N + i] = pow, atan2, remf, maxf and minf (propagating NaN) of x[i], y[i]."""
    def body(cb, tt, p):
        e = f64(tt)
        T = tt.tile(e, [N])
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        y = load(cb, tt, ptrs(cb, tt, p[1], e), e)
        results = [
            E.encode_FPowFOp(cb, T, x, y),
            E.encode_Atan2Op(cb, T, x, y),
            E.encode_RemFOp(cb, T, x, y),
            E.encode_MaxFOp(cb, T, x, y, True, False),
            E.encode_MinFOp(cb, T, x, y, True, False),
        ]
        store_rows(cb, tt, p[2], e, results)
    kernel("math_f64_binary", BytecodeVersion.V_13_3, [ptr(f64)] * 3, body)


def remf(name, elem):
    """out[i] = remf(x[i], y[i]) (C fmod: the sign of x) in elem."""
    def body(cb, tt, p):
        e = elem(tt)
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        y = load(cb, tt, ptrs(cb, tt, p[1], e), e)
        store(cb, tt, ptrs(cb, tt, p[2], e), E.encode_RemFOp(cb, tt.tile(e, [N]), x, y))
    kernel(name, BytecodeVersion.V_13_3, [ptr(elem)] * 3, body)


def ftof_f64_bf16():
    """out[k*N + i] = x[i] as bf16, rounded to nearest and to zero (the modes
    the spec allows for narrowing)."""
    RM = E.RoundingMode

    def body(cb, tt, p):
        e, b = f64(tt), bf16(tt)
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        T = tt.tile(b, [N])
        modes = [RM.NEAREST_EVEN, RM.ZERO]
        store_rows(cb, tt, p[1], b, [E.encode_FToFOp(cb, T, x, m) for m in modes])
    kernel("ftof_f64_bf16", BytecodeVersion.V_13_3, [ptr(f64), ptr(bf16)], body)


def ftof_f8():
    """Conversions to and from the f8 types (rounded to nearest even):
    e4m3[k*N + i] and e5m2[k*N + i] = x_k[i] as f8E4M3FN and f8E5M2 for the
    sources x_0..x_3 (f32, f16, bf16, f64); and out_t[k*N + i] = y_k[i] as
    t for t in f32, f16, bf16, f64, where y_0 = e4m3[i] and y_1 = e5m2[i]
    (the rows converted from f32)."""
    RM = E.RoundingMode

    def body(cb, tt, p):
        srcs = [f32, f16, bf16, f64]
        xs = [load(cb, tt, ptrs(cb, tt, p[k], t(tt)), t(tt)) for k, t in enumerate(srcs)]
        f8s = []
        for j, f8 in enumerate([e4m3, e5m2]):
            T = tt.tile(f8(tt), [N])
            rows = [E.encode_FToFOp(cb, T, x, RM.NEAREST_EVEN) for x in xs]
            store_rows(cb, tt, p[4 + j], f8(tt), rows)
            f8s.append(rows[0])
        for k, t in enumerate(srcs):
            T = tt.tile(t(tt), [N])
            rows = [E.encode_FToFOp(cb, T, y, RM.NEAREST_EVEN) for y in f8s]
            store_rows(cb, tt, p[6 + k], t(tt), rows)
    params = [ptr(f32), ptr(f16), ptr(bf16), ptr(f64), ptr(e4m3), ptr(e5m2),
              ptr(f32), ptr(f16), ptr(bf16), ptr(f64)]
    kernel("ftof_f8", BytecodeVersion.V_13_3, params, body)


def ftof_f8_scale():
    """Conversions to and from the scale formats f8E8M0FNU and f8E5M3FNU.
    Sources: x (f32), h (f16), b (bf16), d (f64), x again as tf32, and one
    byte array c read as e4m3, e5m2, e8m0 and e5m3. Rows (out[k*N + i]):
    e8m0 = [rz, then rp] of [x, h, b, d, x as tf32, c as e4m3, c as e5m2,
    c as e5m3]; e5m3 = [x, h, b, d, x as tf32, c as e4m3, c as e5m2, c as
    e8m0] (nearest even); f16 = [c as e8m0 rn, rz, c as e5m3 rn, rz]; and
    bf16, f32, tf32, f64, e4m3, e5m2 = [c as e8m0, c as e5m3]."""
    RM = E.RoundingMode

    def body(cb, tt, p):
        srcs = [f32, f16, bf16, f64, tf32]
        xs = [load(cb, tt, ptrs(cb, tt, p[k], t(tt)), t(tt)) for k, t in enumerate(srcs)]
        c4, c5, c8, c53 = [load(cb, tt, ptrs(cb, tt, p[5 + k], t(tt)), t(tt))
                           for k, t in enumerate([e4m3, e5m2, e8m0, e5m3])]
        cvt = lambda t, v, rm=RM.NEAREST_EVEN: E.encode_FToFOp(cb, tt.tile(t(tt), [N]), v, rm)
        rows = [cvt(e8m0, v, rm) for rm in [RM.ZERO, RM.POSITIVE_INF] for v in xs + [c4, c5, c53]]
        store_rows(cb, tt, p[9], e8m0(tt), rows)
        store_rows(cb, tt, p[10], e5m3(tt), [cvt(e5m3, v) for v in xs + [c4, c5, c8]])
        f16s = [cvt(f16, v, rm) for v in [c8, c53] for rm in [RM.NEAREST_EVEN, RM.ZERO]]
        store_rows(cb, tt, p[11], f16(tt), f16s)
        for k, t in enumerate([bf16, f32, tf32, f64, e4m3, e5m2]):
            store_rows(cb, tt, p[12 + k], t(tt), [cvt(t, c8), cvt(t, c53)])
    params = [ptr(f32), ptr(f16), ptr(bf16), ptr(f64), ptr(tf32), ptr(e4m3), ptr(e5m2),
              ptr(e8m0), ptr(e5m3), ptr(e8m0), ptr(e5m3), ptr(f16), ptr(bf16), ptr(f32),
              ptr(tf32), ptr(f64), ptr(e4m3), ptr(e5m2)]
    kernel("ftof_f8_scale", BytecodeVersion.V_13_4, params, body)


def scale_ops(name, elem, pads):
    """The other ops on a scale format (f8E8M0FNU or f8E5M3FNU) tile, over bytes c (read as
    i8 and as the format, x): rows of out (out[k*N + i]) are c bitcast to the format; x
    where i < 40, else a constant (3i mod 256); x transposed as [8, 16] ([16, 8] row-major);
    x[i mod 64] (cat of two halves); x[16 + i mod 16] (row 1 extracted and broadcast);
    then x through views of n elements padded with each of `pads`; then the largest code of
    x (a reduce comparing the bits) in every element. Also bits = x bitcast
    to i8, ints = ftoi(x) (i32, to zero) and, for f8E5M3FNU, back = itof(k) for i32 k."""
    def body(cb, tt, p):
        s, i8 = elem(tt), tt.simple(SimpleType.I8)
        X = tt.tile(s, [N])
        c = load(cb, tt, ptrs(cb, tt, p[0], i8), i8)
        x = load(cb, tt, ptrs(cb, tt, p[1], s), s)
        I = tt.tile(tt.I32, [N])
        io = E.encode_IotaOp(cb, I)
        lt = E.encode_CmpIOp(cb, tt.tile(tt.I1, [N]), io, E.encode_ConstantOp(cb, I, (40).to_bytes(4, "little")),
                             E.ComparisonPredicate.LESS_THAN, E.Signedness.Signed)
        k = E.encode_ConstantOp(cb, X, bytes((3 * i) % 256 for i in range(N)))
        a = E.encode_ReshapeOp(cb, tt.tile(s, [8, 16]), x)
        t = E.encode_ReshapeOp(cb, X, E.encode_PermuteOp(cb, tt.tile(s, [16, 8]), a, [1, 0]))
        h = load(cb, tt, ptrs(cb, tt, p[1], s, N // 2), s, N // 2)
        cat = E.encode_CatOp(cb, X, h, h, 0)
        z = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (0).to_bytes(4, "little"))
        one = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (1).to_bytes(4, "little"))
        row = E.encode_ExtractOp(cb, tt.tile(s, [1, 16]), a, [one, z])
        bc = E.encode_ReshapeOp(cb, X, E.encode_BroadcastOp(cb, tt.tile(s, [8, 16]), row))
        rows = [E.encode_BitcastOp(cb, X, c), E.encode_SelectOp(cb, X, lt, x, k), t, cat, bc]
        TV = tt.tensor_view(s, [-(1 << 63)], [1], PtrAttr.Missing)
        tv = E.encode_MakeTensorViewOp(cb, TV, p[1], [p[2]], [])
        for pad in pads:
            pv = E.encode_MakePartitionViewOp(cb, tt.partition_view([N], TV, [0], pad), tv)
            v, _ = E.encode_LoadViewTkoOp(cb, X, tt.Token, pv, [z], None, E.MemoryOrderingSemantics.WEAK,
                                          None, None, [False])
            rows.append(v)
        # The largest code (unsigned on the bits): a reduce whose body compares bitcasts
        # (NVIDIA's tileiras 13.5 fails to compile this reduce; the rest it compiles).
        zero = Float.__new__(Float)
        zero.type_id, zero.value_bits, zero.bit_size = s, 0, 8
        sc = tt.tile(s, [])
        nb = E.encode_ReduceOp(cb, [sc], [x], 0, [zero])
        with nb.new_block([sc, sc]) as (u, v):
            ui, vi = (E.encode_BitcastOp(cb, tt.tile(i8, []), w) for w in (u, v))
            gt = E.encode_CmpIOp(cb, tt.tile(tt.I1, []), ui, vi, E.ComparisonPredicate.GREATER_THAN,
                                 E.Signedness.Unsigned)
            E.encode_YieldOp(cb, [E.encode_SelectOp(cb, sc, gt, u, v)])
        top = nb.done()[0]
        rows.append(E.encode_BroadcastOp(cb, X, E.encode_ReshapeOp(cb, tt.tile(s, [1]), top)))
        store_rows(cb, tt, p[3], s, rows)
        store(cb, tt, ptrs(cb, tt, p[4], i8), E.encode_BitcastOp(cb, tt.tile(i8, [N]), x))
        ints = E.encode_FToIOp(cb, I, x, E.Signedness.Signed, E.RoundingMode.NEAREST_INT_TO_ZERO, False)
        store(cb, tt, ptrs(cb, tt, p[5], tt.I32), ints)
        if elem is e5m3:
            kk = load(cb, tt, ptrs(cb, tt, p[6], tt.I32), tt.I32)
            back = E.encode_IToFOp(cb, X, kk, E.Signedness.Signed, E.RoundingMode.NEAREST_EVEN)
            store(cb, tt, ptrs(cb, tt, p[7], s), back)
    params = [ptr(lambda tt: tt.simple(SimpleType.I8)), ptr(elem), i32, ptr(elem),
              ptr(lambda tt: tt.simple(SimpleType.I8)), ptr(i32), ptr(i32), ptr(elem)]
    kernel(name, BytecodeVersion.V_13_4, params, body)


def print_scale():
    """Prints four f8E8M0FNU and four f8E5M3FNU values loaded from a and b."""
    def body(cb, tt, p):
        for k, (t, f) in enumerate([(e8m0, "e8m0 %f\n"), (e5m3, "e5m3 %f\n")]):
            x = load(cb, tt, ptrs(cb, tt, p[k], t(tt), 4), t(tt), 4)
            E.encode_PrintTkoOp(cb, tt.Token, [x], None, f)
    kernel("print_scale", BytecodeVersion.V_13_4, [ptr(e8m0), ptr(e5m3)], body)
def store_bytes(cb, tt, base, rows):
    """out[k*N/2 + i] = rows[k][i] for i8 tiles of N/2 bytes."""
    P = tt.pointer(i8(tt), PtrAttr.Missing)
    for k, r in enumerate(rows):
        off = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (k * N // 2).to_bytes(4, "little"))
        p = ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, []), base, off), i8(tt), N // 2)
        store(cb, tt, p, r)


def load_bytes(cb, tt, base):
    """The i8 tile of N/2 bytes at base."""
    return load(cb, tt, ptrs(cb, tt, base, i8(tt), N // 2), i8(tt), N // 2)


def ftof_f4():
    """Conversions to and from f4E2M1FN (rounded to nearest even), through
    pack and unpack (parameters x_0..x_3, codes, ints, then the outputs):
    packed[k*N/2 + i] = pack(x_k as f4E2M1FN)[i] for the sources x_0..x_3
    (f32, f16, bf16, f64) and for k = 4 the i32 tile ints (itof); out_t[i]
    = unpack(codes)[i] as t for t in f32, f16, bf16, f64 (codes: N/2
    bytes, two f4 a byte); trunc[i] = unpack(codes)[i] as i32 (ftoi,
    rounded toward zero)."""
    RM = E.RoundingMode

    def body(cb, tt, p):
        srcs = [f32, f16, bf16, f64]
        xs = [load(cb, tt, ptrs(cb, tt, p[k], t(tt)), t(tt)) for k, t in enumerate(srcs)]
        T4 = tt.tile(f4(tt), [N])
        fs = [E.encode_FToFOp(cb, T4, x, RM.NEAREST_EVEN) for x in xs]
        ints = load(cb, tt, ptrs(cb, tt, p[5], tt.I32), tt.I32)
        fs.append(E.encode_IToFOp(cb, T4, ints, E.Signedness.Signed, RM.NEAREST_EVEN))
        rows = [E.encode_PackOp(cb, tt.tile(i8(tt), [N // 2]), f) for f in fs]
        store_bytes(cb, tt, p[6], rows)
        codes = E.encode_UnpackOp(cb, T4, load_bytes(cb, tt, p[4]))
        for k, t in enumerate(srcs):
            y = E.encode_FToFOp(cb, tt.tile(t(tt), [N]), codes, RM.NEAREST_EVEN)
            store(cb, tt, ptrs(cb, tt, p[7 + k], t(tt)), y)
        trunc = E.encode_FToIOp(cb, tt.tile(tt.I32, [N]), codes, E.Signedness.Signed,
                                RM.NEAREST_INT_TO_ZERO, False)
        store(cb, tt, ptrs(cb, tt, p[11], tt.I32), trunc)
    params = [ptr(f32), ptr(f16), ptr(bf16), ptr(f64), ptr(i8), ptr(i32), ptr(i8),
              ptr(f32), ptr(f16), ptr(bf16), ptr(f64), ptr(i32)]
    kernel("ftof_f4", BytecodeVersion.V_13_3, params, body)


def int4_pack():
    """i4 through pack and unpack (parameters codes, x, sext, zext, sext8,
    packed, ones, sel): with v = unpack(codes) (N i4 from N/2 bytes), sext[i] = v[i]
    sign-extended to i32, zext[i] = v[i] zero-extended to i16, sext8[i] =
    v[i] sign-extended to i8; packed = pack(x truncated to i4) for the
    i32 tile x; with bit = v truncated to i1: ones = pack(bit sign-extended
    to i4) and sel = pack(select(bit, v, bit zero-extended to i4))."""
    S = E.Signedness

    def body(cb, tt, p):
        v = E.encode_UnpackOp(cb, tt.tile(i4(tt), [N]), load_bytes(cb, tt, p[0]))
        for k, (t, sg) in enumerate([(i32, S.Signed), (i16, S.Unsigned), (i8, S.Signed)]):
            y = E.encode_ExtIOp(cb, tt.tile(t(tt), [N]), v, sg)
            store(cb, tt, ptrs(cb, tt, p[2 + k], t(tt)), y)
        x = load(cb, tt, ptrs(cb, tt, p[1], tt.I32), tt.I32)
        q = E.encode_TruncIOp(cb, tt.tile(i4(tt), [N]), x, E.IntegerOverflow.NONE)
        store_bytes(cb, tt, p[5], [E.encode_PackOp(cb, tt.tile(i8(tt), [N // 2]), q)])
        T4 = tt.tile(i4(tt), [N])
        bit = E.encode_TruncIOp(cb, tt.tile(tt.I1, [N]), v, E.IntegerOverflow.NONE)
        w = E.encode_ExtIOp(cb, T4, bit, S.Signed)
        z = E.encode_SelectOp(cb, T4, bit, v, E.encode_ExtIOp(cb, T4, bit, S.Unsigned))
        for k, r in enumerate([w, z]):
            store_bytes(cb, tt, p[6 + k], [E.encode_PackOp(cb, tt.tile(i8(tt), [N // 2]), r)])
    params = [ptr(i8), ptr(i32), ptr(i32), ptr(i16), ptr(i8), ptr(i8), ptr(i8), ptr(i8)]
    kernel("int4_pack", BytecodeVersion.V_13_3, params, body)


def f4_permute():
    """f4E2M1FN tiles through the movement ops: v = unpack(codes) (N f4
    from N/2 bytes) reshaped to 8 x N/8, permuted to N/8 x 8 and flattened,
    packed back: out = pack(flat(transpose(v as 8 x N/8)))."""
    def body(cb, tt, p):
        T = lambda shape: tt.tile(f4(tt), shape)
        v = E.encode_UnpackOp(cb, T([N]), load_bytes(cb, tt, p[0]))
        m = E.encode_ReshapeOp(cb, T([8, N // 8]), v)
        t = E.encode_PermuteOp(cb, T([N // 8, 8]), m, [1, 0])
        f = E.encode_ReshapeOp(cb, T([N]), t)
        store_bytes(cb, tt, p[1], [E.encode_PackOp(cb, tt.tile(i8(tt), [N // 2]), f)])
    kernel("f4_permute", BytecodeVersion.V_13_3, [ptr(i8), ptr(i8)], body)



def f4_constant():
    """f4E2M1FN constants (one code a byte in the bytecode) joined by cat:
    out = pack(cat(a, b)) with a[i] = 3i mod 16 and b[i] = 5i + 1 mod 16
    (N/2 codes each)."""
    def body(cb, tt, p):
        T = lambda n: tt.tile(f4(tt), [n])
        a = E.encode_ConstantOp(cb, T(N // 2), bytes((3 * i) % 16 for i in range(N // 2)))
        b = E.encode_ConstantOp(cb, T(N // 2), bytes((5 * i + 1) % 16 for i in range(N // 2)))
        v = E.encode_CatOp(cb, T(N), a, b, 0)
        store_bytes(cb, tt, p[0], [E.encode_PackOp(cb, tt.tile(i8(tt), [N // 2]), v)])
    kernel("f4_constant", BytecodeVersion.V_13_3, [ptr(i8)], body)



def print_f4_i4():
    """Prints 16 f4E2M1FN and 16 i4 values unpacked from codes (8 bytes):
    "f4 %f\\n" of the f4 tile, then "i4 %d %u\\n" of the i4 tile twice."""
    def body(cb, tt, p):
        b = load(cb, tt, ptrs(cb, tt, p[0], i8(tt), 8), i8(tt), 8)
        x = E.encode_UnpackOp(cb, tt.tile(f4(tt), [16]), b)
        y = E.encode_UnpackOp(cb, tt.tile(i4(tt), [16]), b)
        t = E.encode_PrintTkoOp(cb, tt.Token, [x], None, "f4 %f\n")
        E.encode_PrintTkoOp(cb, tt.Token, [y, y], t, "i4 %d %u\n")
    kernel("print_f4_i4", BytecodeVersion.V_13_3, [ptr(i8)], body)


def print_f8():
    """Prints the 256 codes c (bytes) read as f8E4M3FN ("e4m3 %.9f\\n") and
    as f8E5M2 ("e5m2 %.16f\\n"), enough digits for each value exactly."""
    def body(cb, tt, p):
        c = load(cb, tt, ptrs(cb, tt, p[0], i8(tt), 256), i8(tt), 256)
        t = None
        for f8, fmt in [(e4m3, "e4m3 %.9f\n"), (e5m2, "e5m2 %.16f\n")]:
            x = E.encode_BitcastOp(cb, tt.tile(f8(tt), [256]), c)
            t = E.encode_PrintTkoOp(cb, tt.Token, [x], t, fmt)
    kernel("print_f8", BytecodeVersion.V_13_3, [ptr(i8)], body)


def ftoi_f8():
    """ftoi (nearest_int_to_zero, saturating) of the 256 codes c (bytes) read
    as f8E4M3FN and as f8E5M2: out_t[k*256 + i] = row k at i for t in i8,
    i16, i32, i64, rows [e4m3 signed, e4m3 unsigned, e5m2 signed, e5m2
    unsigned]."""
    S = E.Signedness

    def body(cb, tt, p):
        c = load(cb, tt, ptrs(cb, tt, p[0], i8(tt), 256), i8(tt), 256)
        xs = [E.encode_BitcastOp(cb, tt.tile(f8(tt), [256]), c) for f8 in [e4m3, e5m2]]
        for j, t in enumerate([i8, i16, i32, i64]):
            P = tt.pointer(t(tt), PtrAttr.Missing)
            k = 0
            for x in xs:
                for sg in [S.Signed, S.Unsigned]:
                    y = E.encode_FToIOp(cb, tt.tile(t(tt), [256]), x, sg,
                                        E.RoundingMode.NEAREST_INT_TO_ZERO, True)
                    off = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (k * 256).to_bytes(4, "little"))
                    base = E.encode_OffsetOp(cb, tt.tile(P, []), p[1 + j], off)
                    store(cb, tt, ptrs(cb, tt, base, t(tt), 256), y)
                    k += 1
    kernel("ftoi_f8", BytecodeVersion.V_13_4, [ptr(i8), ptr(i8), ptr(i16), ptr(i32), ptr(i64)], body)


def ftoi_i1():
    """ftoi to i1 of f32, f16, bf16, f64 and f8E4M3FN tiles (the f8 read as bytes):
    out[r*N + i] = (x != 0, NaN true; NVIDIA's tileiras reading, whatever the
    signedness or saturation) for rows r = [f32 signed, f32 unsigned saturating,
    f16 unsigned, bf16 signed, f64 unsigned, e4m3 signed saturating]."""
    S = E.Signedness
    rows = [(0, f32, S.Signed, False), (0, f32, S.Unsigned, True), (1, f16, S.Unsigned, False),
            (2, bf16, S.Signed, False), (3, f64, S.Unsigned, False), (4, e4m3, S.Signed, True)]

    def body(cb, tt, p):
        b1 = tt.I1
        P = tt.pointer(b1, PtrAttr.Missing)
        for r, (j, elem, sg, sat) in enumerate(rows):
            if elem is e4m3:
                x = E.encode_BitcastOp(cb, tt.tile(e4m3(tt), [N]), load(cb, tt, ptrs(cb, tt, p[j], i8(tt)), i8(tt)))
            else:
                x = load(cb, tt, ptrs(cb, tt, p[j], elem(tt)), elem(tt))
            y = E.encode_FToIOp(cb, tt.tile(b1, [N]), x, sg, E.RoundingMode.NEAREST_INT_TO_ZERO, sat)
            off = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (r * N).to_bytes(4, "little"))
            store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, []), p[5], off), b1), y)
    kernel("ftoi_i1", BytecodeVersion.V_13_4, [ptr(f32), ptr(f16), ptr(bf16), ptr(f64), ptr(i8), ptr(lambda tt: tt.I1)], body)


def for_narrow():
    """out_t[i] = sum over k in range(b[0], b[1], b[2]) of x[i] * k (i32), with k an
    induction variable of type t: i16 compared signed (bounds b16) and i8 compared
    unsigned (bounds b8); the bounds are read from memory."""
    def body(cb, tt, p):
        e = tt.I32
        T = tt.tile(e, [N])
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        for t, bounds, uns, out in [(i16, p[1], False, p[2]), (i8, p[3], True, p[4])]:
            s = tt.tile(t(tt), [])
            P = tt.pointer(t(tt), PtrAttr.Missing)
            at = lambda k: E.encode_OffsetOp(cb, tt.tile(P, []), bounds,
                                             E.encode_ConstantOp(cb, tt.tile(tt.I32, []), k.to_bytes(4, "little")))
            lb, ub, st = [E.encode_LoadPtrTkoOp(cb, s, tt.Token, at(k), None, None, None,
                                                E.MemoryOrderingSemantics.WEAK, None, None)[0] for k in range(3)]
            zero = E.encode_ConstantOp(cb, T, (0).to_bytes(4, "little"))
            nb = E.encode_ForOp(cb, [T], lb, ub, st, [zero], uns)
            with nb.new_block([s, T]) as (k, acc):
                k32 = E.encode_ExtIOp(cb, tt.tile(e, []), k, E.Signedness.Unsigned if uns else E.Signedness.Signed)
                kb = E.encode_BroadcastOp(cb, T, E.encode_ReshapeOp(cb, tt.tile(e, [1]), k32))
                E.encode_ContinueOp(cb, [E.encode_AddIOp(cb, T, acc, E.encode_MulIOp(cb, T, x, kb, E.IntegerOverflow.NONE),
                                                         E.IntegerOverflow.NONE)])
            (total,) = nb.done()
            store(cb, tt, ptrs(cb, tt, out, e), total)
    kernel("for_i16_i8", BytecodeVersion.V_13_3, [ptr(i32), ptr(i16), ptr(i32), ptr(i8), ptr(i32)], body)


def itof_f8():
    """itof (nearest_even) to f8E4M3FN and f8E5M2, stored as bytes: out[r*N + i]
    for rows r = [i32 signed to e4m3, i32 unsigned to e4m3, i32 signed to e5m2,
    i32 unsigned to e5m2, i16 signed to e4m3, i64 signed to e5m2, i16 unsigned
    to e5m2] of x32, x32, x32, x32, x16, x64, x16."""
    S = E.Signedness
    rows = [(0, i32, S.Signed, e4m3), (0, i32, S.Unsigned, e4m3), (0, i32, S.Signed, e5m2),
            (0, i32, S.Unsigned, e5m2), (1, i16, S.Signed, e4m3), (2, i64, S.Signed, e5m2),
            (1, i16, S.Unsigned, e5m2)]

    def body(cb, tt, p):
        P8 = tt.pointer(i8(tt), PtrAttr.Missing)
        for r, (j, elem, sg, f8) in enumerate(rows):
            x = load(cb, tt, ptrs(cb, tt, p[j], elem(tt)), elem(tt))
            y = E.encode_IToFOp(cb, tt.tile(f8(tt), [N]), x, sg, E.RoundingMode.NEAREST_EVEN)
            b = E.encode_BitcastOp(cb, tt.tile(i8(tt), [N]), y)
            off = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (r * N).to_bytes(4, "little"))
            store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P8, []), p[3], off), i8(tt)), b)
    kernel("itof_f8", BytecodeVersion.V_13_3, [ptr(i32), ptr(i16), ptr(i64), ptr(i8)], body)


def ftof_tf32_modes():
    """ftof to tf32 under each rounding mode, widened back to f32 for storing:
    out[r*N + i] for rows r = [f32 nearest_even, f32 zero, f32 nearest_away, f64
    nearest_even, f64 zero, f16 nearest_away, bf16 zero, f16 to f32 nearest_away];
    out64[i] = f32 to f64 with nearest_away."""
    R = E.RoundingMode
    rows = [(0, f32, R.NEAREST_EVEN), (0, f32, R.ZERO), (0, f32, R.NEAREST_AWAY),
            (1, f64, R.NEAREST_EVEN), (1, f64, R.ZERO), (2, f16, R.NEAREST_AWAY), (3, bf16, R.ZERO)]

    def body(cb, tt, p):
        F = tt.tile(f32(tt), [N])
        P = tt.pointer(f32(tt), PtrAttr.Missing)
        xs = [load(cb, tt, ptrs(cb, tt, p[j], e(tt)), e(tt)) for j, e in enumerate([f32, f64, f16, bf16])]
        outs = []
        for j, _, rm in rows:
            t = E.encode_FToFOp(cb, tt.tile(tf32(tt), [N]), xs[j], rm)
            outs.append(E.encode_FToFOp(cb, F, t, R.NEAREST_EVEN))
        outs.append(E.encode_FToFOp(cb, F, xs[2], R.NEAREST_AWAY))
        for r, v in enumerate(outs):
            off = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (r * N).to_bytes(4, "little"))
            store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, []), p[4], off), f32(tt)), v)
        store(cb, tt, ptrs(cb, tt, p[5], f64(tt)), E.encode_FToFOp(cb, tt.tile(f64(tt), [N]), xs[0], R.NEAREST_AWAY))
    kernel("ftof_tf32_modes", BytecodeVersion.V_13_4, [ptr(f32), ptr(f64), ptr(f16), ptr(bf16), ptr(f32), ptr(f64)], body)


def itof_bf16_i1():
    """itof (nearest_even) to bf16 of every integer width: out[r*N + i] for rows
    r = [i8 signed, i8 unsigned, i16 signed, i32 signed, i32 unsigned, i64 signed,
    i64 unsigned]; and itof of i1 tiles b: f32s[i] = signed, f32s[N + i] = unsigned,
    f16s[i] = signed, e4m3[i] = unsigned (as a byte), f64s[i] = unsigned."""
    S = E.Signedness
    rows = [(0, i8, S.Signed), (0, i8, S.Unsigned), (1, i16, S.Signed), (2, i32, S.Signed),
            (2, i32, S.Unsigned), (3, i64, S.Signed), (3, i64, S.Unsigned)]

    def body(cb, tt, p):
        xs = [load(cb, tt, ptrs(cb, tt, p[j], e(tt)), e(tt)) for j, e in enumerate([i8, i16, i32, i64])]
        B = tt.pointer(bf16(tt), PtrAttr.Missing)
        for r, (j, _, sg) in enumerate(rows):
            v = E.encode_IToFOp(cb, tt.tile(bf16(tt), [N]), xs[j], sg, E.RoundingMode.NEAREST_EVEN)
            off = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (r * N).to_bytes(4, "little"))
            store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(B, []), p[5], off), bf16(tt)), v)
        b1 = tt.I1
        b = load(cb, tt, ptrs(cb, tt, p[4], b1), b1)
        itof = lambda e, sg: E.encode_IToFOp(cb, tt.tile(e(tt), [N]), b, sg, E.RoundingMode.NEAREST_EVEN)
        P32 = tt.pointer(f32(tt), PtrAttr.Missing)
        n = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), N.to_bytes(4, "little"))
        store(cb, tt, ptrs(cb, tt, p[6], f32(tt)), itof(f32, S.Signed))
        store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P32, []), p[6], n), f32(tt)), itof(f32, S.Unsigned))
        store(cb, tt, ptrs(cb, tt, p[7], f16(tt)), itof(f16, S.Signed))
        store(cb, tt, ptrs(cb, tt, p[8], i8(tt)), E.encode_BitcastOp(cb, tt.tile(i8(tt), [N]), itof(e4m3, S.Unsigned)))
        store(cb, tt, ptrs(cb, tt, p[9], f64(tt)), itof(f64, S.Unsigned))
    kernel("itof_bf16_i1", BytecodeVersion.V_13_3,
           [ptr(i8), ptr(i16), ptr(i32), ptr(i64), ptr(lambda tt: tt.I1), ptr(bf16), ptr(f32), ptr(f16), ptr(i8),
            ptr(f64)], body)


def ftof_f16_bf16():
    """ftof between f16 and bf16 (a cvt only from sm_90): outb[r*N + i] for rows
    r = [f16 to bf16 nearest_even, f16 to bf16 zero] of h (f16), outh[r*N + i] for
    rows r = [bf16 to f16 nearest_even, bf16 to f16 zero] of b (bf16)."""
    R = E.RoundingMode
    rows = [(0, bf16, R.NEAREST_EVEN), (0, bf16, R.ZERO), (1, f16, R.NEAREST_EVEN), (1, f16, R.ZERO)]

    def body(cb, tt, p):
        xs = [load(cb, tt, ptrs(cb, tt, p[j], e(tt)), e(tt)) for j, e in enumerate([f16, bf16])]
        for r, (j, to, rm) in enumerate(rows):
            y = E.encode_FToFOp(cb, tt.tile(to(tt), [N]), xs[j], rm)
            P = tt.pointer(to(tt), PtrAttr.Missing)
            off = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (r % 2 * N).to_bytes(4, "little"))
            store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, []), p[2 + r // 2], off), to(tt)), y)
    kernel("ftof_f16_bf16", BytecodeVersion.V_13_3, [ptr(f16), ptr(bf16), ptr(bf16), ptr(f16)], body)


def i1_int_ops():
    """Integer ops on i1 tiles a, b (0/1 unsigned, 0/-1 signed), one i1 row each:
    out[r*N + i] for r = [addi, subi, muli, shli, shri signed, shri unsigned, maxi
    signed, maxi unsigned, mini signed, mini unsigned, divi signed by true, divi
    unsigned by true, remi signed by true, mulhii, negi a, absi a, bitcast a];
    and fpowi of the f32 x by the i1 exponent a: pw[i]."""
    S = E.Signedness
    ov = E.IntegerOverflow.NONE

    def body(cb, tt, p):
        b1 = tt.I1
        B = tt.tile(b1, [N])
        a = load(cb, tt, ptrs(cb, tt, p[0], b1), b1)
        b = load(cb, tt, ptrs(cb, tt, p[1], b1), b1)
        one = E.encode_ConstantOp(cb, B, b"\xff" * (N // 8))
        rows = [
            E.encode_AddIOp(cb, B, a, b, ov), E.encode_SubIOp(cb, B, a, b, ov), E.encode_MulIOp(cb, B, a, b, ov),
            E.encode_ShLIOp(cb, B, a, b, ov), E.encode_ShRIOp(cb, B, a, b, S.Signed),
            E.encode_ShRIOp(cb, B, a, b, S.Unsigned), E.encode_MaxIOp(cb, B, a, b, S.Signed),
            E.encode_MaxIOp(cb, B, a, b, S.Unsigned), E.encode_MinIOp(cb, B, a, b, S.Signed),
            E.encode_MinIOp(cb, B, a, b, S.Unsigned),
            E.encode_DivIOp(cb, B, a, one, S.Signed, E.RoundingMode.ZERO),
            E.encode_DivIOp(cb, B, a, one, S.Unsigned, E.RoundingMode.ZERO),
            E.encode_RemIOp(cb, B, a, one, S.Signed), E.encode_MulhiIOp(cb, B, a, b),
            E.encode_NegIOp(cb, B, a, ov), E.encode_AbsIOp(cb, B, a), E.encode_BitcastOp(cb, B, a),
        ]
        P = tt.pointer(b1, PtrAttr.Missing)
        for r, v in enumerate(rows):
            off = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (r * N).to_bytes(4, "little"))
            store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, []), p[2], off), b1), v)
        x = load(cb, tt, ptrs(cb, tt, p[3], f32(tt)), f32(tt))
        store(cb, tt, ptrs(cb, tt, p[4], f32(tt)), E.encode_FPowIOp(cb, tt.tile(f32(tt), [N]), x, a))
    kernel("i1_int_ops", BytecodeVersion.V_13_4,
           [ptr(lambda tt: tt.I1), ptr(lambda tt: tt.I1), ptr(lambda tt: tt.I1), ptr(f32), ptr(f32)], body)


def i16_shifts():
    """i16 shifts by i16 amounts and i8 truncated to i1: out[r*N + i] for r =
    [x << k, x >> k signed, x >> k unsigned]; bits[i] = trunci(y[i]) (i8 to i1)."""
    S = E.Signedness

    def body(cb, tt, p):
        e = i16(tt)
        T = tt.tile(e, [N])
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        k = load(cb, tt, ptrs(cb, tt, p[1], e), e)
        rows = [E.encode_ShLIOp(cb, T, x, k, E.IntegerOverflow.NONE), E.encode_ShRIOp(cb, T, x, k, S.Signed),
                E.encode_ShRIOp(cb, T, x, k, S.Unsigned)]
        P = tt.pointer(e, PtrAttr.Missing)
        for r, v in enumerate(rows):
            off = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (r * N).to_bytes(4, "little"))
            store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, []), p[2], off), e), v)
        y = load(cb, tt, ptrs(cb, tt, p[3], i8(tt)), i8(tt))
        t = E.encode_TruncIOp(cb, tt.tile(tt.I1, [N]), y, E.IntegerOverflow.NONE)
        store(cb, tt, ptrs(cb, tt, p[4], tt.I1), t)
    kernel("i16_shifts", BytecodeVersion.V_13_3, [ptr(i16), ptr(i16), ptr(i16), ptr(i8), ptr(lambda tt: tt.I1)], body)


def directed_16():
    """addf, subf, mulf, fma and divf on f16 and on bf16 under zero, negative_inf
    and positive_inf rounding: out_t[(3*o + m)*N + i] for o = [add, sub, mul, fma,
    div] and m = [zero, negative_inf, positive_inf] of a, b, c of type t."""
    R = E.RoundingMode
    modes = [R.ZERO, R.NEGATIVE_INF, R.POSITIVE_INF]

    def body(cb, tt, p):
        for j, e in enumerate([f16, bf16]):
            ty = e(tt)
            T = tt.tile(ty, [N])
            a, b, c = [load(cb, tt, ptrs(cb, tt, p[3 * j + k], ty), ty) for k in range(3)]
            P = tt.pointer(ty, PtrAttr.Missing)
            r = 0
            for make in [lambda m: E.encode_AddFOp(cb, T, a, b, m, False), lambda m: E.encode_SubFOp(cb, T, a, b, m, False),
                         lambda m: E.encode_MulFOp(cb, T, a, b, m, False), lambda m: E.encode_FmaOp(cb, T, a, b, c, m, False),
                         lambda m: E.encode_DivFOp(cb, T, a, b, m, False)]:
                for m in modes:
                    off = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (r * N).to_bytes(4, "little"))
                    store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, []), p[6 + j], off), ty), make(m))
                    r += 1
    kernel("directed_16", BytecodeVersion.V_13_3, [ptr(f16)] * 3 + [ptr(bf16)] * 3 + [ptr(f16), ptr(bf16)], body)


def narrow_ints():
    """Narrow integers where wider ones are usual: iota of i8 (256), i16 (128)
    and i1 (2) into o8, o16 and ob[0..2]; a dense i1 constant of 16 into
    ob[2..18]; a view of x (f32) whose extent is the i16 n[0], read at the i8
    tile index n8[0] (16-element tiles, zero padding) into of; its index-space
    extent as i16 and i8 into o16[128] and o8[256]; and print of the tf32
    tile t (4 elements, "%f ")."""
    def body(cb, tt, p):
        s8, s16, b1 = i8(tt), i16(tt), tt.I1
        store(cb, tt, ptrs(cb, tt, p[0], s8, 256), E.encode_IotaOp(cb, tt.tile(s8, [256])), )
        store(cb, tt, ptrs(cb, tt, p[1], s16), E.encode_IotaOp(cb, tt.tile(s16, [N])))
        store(cb, tt, ptrs(cb, tt, p[2], b1, 2), E.encode_IotaOp(cb, tt.tile(b1, [2])))
        P1 = tt.pointer(b1, PtrAttr.Missing)
        two = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (2).to_bytes(4, "little"))
        pattern = (0b1011001110001101).to_bytes(2, "little")
        store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P1, []), p[2], two), b1, 16),
              E.encode_ConstantOp(cb, tt.tile(b1, [16]), pattern))
        n16 = E.encode_LoadPtrTkoOp(cb, tt.tile(s16, []), tt.Token, p[3], None, None, None,
                                    E.MemoryOrderingSemantics.WEAK, None, None)[0]
        n8 = E.encode_LoadPtrTkoOp(cb, tt.tile(s8, []), tt.Token, p[4], None, None, None,
                                   E.MemoryOrderingSemantics.WEAK, None, None)[0]
        f = f32(tt)
        TV = tt.tensor_view(f, [-(1 << 63)], [1], PtrAttr.Missing)
        PV = tt.partition_view([16], TV, [0], PaddingValue.Zero)
        v = E.encode_MakePartitionViewOp(cb, PV, E.encode_MakeTensorViewOp(cb, TV, p[5], [n16], []))
        x, _ = E.encode_LoadViewTkoOp(cb, tt.tile(f, [16]), tt.Token, v, [n8], None,
                                      E.MemoryOrderingSemantics.WEAK, None, None, [False])
        store(cb, tt, ptrs(cb, tt, p[6], f, 16), x)
        (e16,) = E.encode_GetIndexSpaceShapeOp(cb, [tt.tile(s16, [])], v)
        (e8,) = E.encode_GetIndexSpaceShapeOp(cb, [tt.tile(s8, [])], v)
        P16, P8 = tt.pointer(s16, PtrAttr.Missing), tt.pointer(s8, PtrAttr.Missing)
        at = lambda base, P, k: E.encode_OffsetOp(cb, tt.tile(P, []), base,
                                                  E.encode_ConstantOp(cb, tt.tile(tt.I32, []), k.to_bytes(4, "little")))
        store(cb, tt, at(p[1], P16, N), e16)
        store(cb, tt, at(p[0], P8, 256), e8)
        t = load(cb, tt, ptrs(cb, tt, p[7], tf32(tt), 4), tf32(tt), 4)
        E.encode_PrintTkoOp(cb, tt.Token, [t], None, "%f ")
    kernel("narrow_ints", BytecodeVersion.V_13_4,
           [ptr(i8), ptr(i16), ptr(lambda tt: tt.I1), ptr(i16), ptr(i8), ptr(f32), ptr(f32), ptr(tf32)], body)


def token_flow():
    """Tokens through control flow: a `for` over k in [0, K) carries the token
    of its store out[k*N + i] = x[i] + k; an `if` (K > 1) yields either the
    token of out2[i] = 2 * x[i] or the loop's; a load of out[0..N) ordered
    after that token gives out3[i] = out[i] + 1."""
    def body(cb, tt, p):
        e = tt.I32
        T, S = tt.tile(e, [N]), tt.tile(e, [])
        c = lambda v: E.encode_ConstantOp(cb, S, v.to_bytes(4, "little"))
        P = tt.pointer(e, PtrAttr.Missing)
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        t0 = E.encode_MakeTokenOp(cb, tt.Token)
        nb = E.encode_ForOp(cb, [tt.Token], c(0), p[4], c(1), [t0], False)
        with nb.new_block([S, tt.Token]) as (k, t):
            row = E.encode_OffsetOp(cb, tt.tile(P, []), p[1], E.encode_MulIOp(cb, S, k, c(N), E.IntegerOverflow.NONE))
            kb = E.encode_BroadcastOp(cb, T, E.encode_ReshapeOp(cb, tt.tile(e, [1]), k))
            v = E.encode_AddIOp(cb, T, x, kb, E.IntegerOverflow.NONE)
            t2 = E.encode_StorePtrTkoOp(cb, tt.Token, ptrs(cb, tt, row, e), v, None, t, E.MemoryOrderingSemantics.WEAK, None, None)
            E.encode_ContinueOp(cb, [t2])
        (tf,) = nb.done()
        more = E.encode_CmpIOp(cb, tt.tile(tt.I1, []), p[4], c(1), E.ComparisonPredicate.GREATER_THAN, E.Signedness.Signed)
        ib = E.encode_IfOp(cb, [tt.Token], more)
        with ib.new_block([]):
            two = E.encode_AddIOp(cb, T, x, x, E.IntegerOverflow.NONE)
            E.encode_YieldOp(cb, [E.encode_StorePtrTkoOp(cb, tt.Token, ptrs(cb, tt, p[2], e), two, None, tf,
                                                          E.MemoryOrderingSemantics.WEAK, None, None)])
        with ib.new_block([]):
            E.encode_YieldOp(cb, [tf])
        (ti,) = ib.done()
        y, _ = E.encode_LoadPtrTkoOp(cb, T, tt.Token, ptrs(cb, tt, p[1], e), None, None, ti,
                                     E.MemoryOrderingSemantics.WEAK, None, None)
        one = E.encode_ConstantOp(cb, T, (1).to_bytes(4, "little"))
        store(cb, tt, ptrs(cb, tt, p[3], e), E.encode_AddIOp(cb, T, y, one, E.IntegerOverflow.NONE))
    kernel("token_flow", BytecodeVersion.V_13_3, [ptr(i32), ptr(i32), ptr(i32), ptr(i32), i32], body)


def mma_large(name, m, n, k, ab=f16, cd=f32, via=None, batch=None, keep_a=False):
    """d = a @ b + c (mmai, signed, when `cd` is i32) for a [m, k] and b
    [k, n] of element type `ab` (loaded as `via` and converted to nearest
    when given), c and d [m, n] of `cd`
    (each with a leading `batch` dimension when given), all row-major
    through pointer tiles (base + iota): tiles large enough that moving
    their pointer tiles between layouts, or staging the operands whole,
    would not fit in shared memory; or small ones, for the FMA engine's
    register path. With `keep_a`, a fifth parameter receives a copy of A,
    stored through a view after the product (so A's layout is the store's)."""
    lead = [batch] if batch else []

    def body(cb, tt, p):
        e, acc = ab(tt), cd(tt)
        mem = via(tt) if via else e

        def ptrs2(base, e, shape):
            shape = lead + shape
            count = 1
            for s in shape:
                count *= s
            P = tt.pointer(e, PtrAttr.Missing)
            b = E.encode_BroadcastOp(cb, tt.tile(P, shape), E.encode_ReshapeOp(cb, tt.tile(P, [1] * len(shape)), base))
            idx = E.encode_ReshapeOp(cb, tt.tile(tt.I32, shape), E.encode_IotaOp(cb, tt.tile(tt.I32, [count])))
            return E.encode_OffsetOp(cb, tt.tile(P, shape), b, idx)

        def operand(base, shape):
            x = load(cb, tt, ptrs2(base, mem, shape), mem, shape=lead + shape)
            if via:
                x = E.encode_FToFOp(cb, tt.tile(e, lead + shape), x, E.RoundingMode.NEAREST_EVEN)
            return x
        a = operand(p[0], [m, k])
        b = operand(p[1], [k, n])
        a_loaded = a
        c = load(cb, tt, ptrs2(p[2], acc, [m, n]), acc, shape=lead + [m, n])
        if cd is i32:
            S = E.Signedness.Signed
            d = E.encode_MmaIOp(cb, tt.tile(acc, lead + [m, n]), a, b, c, S, S)
        else:
            d = E.encode_MmaFOp(cb, tt.tile(acc, lead + [m, n]), a, b, c, False)
        store(cb, tt, ptrs2(p[3], acc, [m, n]), d)
        if keep_a:
            # Through a view, whose store asks for its own layout.
            TV = tt.tensor_view(e, [m, k], [k, 1], PtrAttr.Missing)
            PV = tt.partition_view([m, k], TV, [0, 1], PaddingValue.Zero)
            view = E.encode_MakePartitionViewOp(cb, PV, E.encode_MakeTensorViewOp(cb, TV, p[4], [], []))
            zero = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (0).to_bytes(4, "little"))
            E.encode_StoreViewTkoOp(cb, tt.Token, a_loaded, view, [zero, zero], None,
                                    E.MemoryOrderingSemantics.WEAK, None, None, [False, False])
    mem = via or ab
    params = [ptr(mem), ptr(mem), ptr(cd), ptr(cd)] + ([ptr(ab)] if keep_a else [])
    kernel(name, BytecodeVersion.V_13_3, params, body)


def view_transposes():
    """Views whose dimension contiguous in memory is not the tile's last:
    `view_colmajor_copy_f32`: y = x for x, y column-major [40, 24] f32
    (strides [1, 40]) through [32, 16] tiles at index (1, 1), zero padded
    (ragged: rows 32..39, columns 16..23 in bounds);
    `view_row_to_colmajor_f16`: y[i, j] = x[i, j] for x row-major [48, 72]
    (strides [72, 1]) and y column-major (strides [1, 48]) through [32, 64]
    tiles at index (1, 1) (rows 32..47, columns 64..71 in bounds);
    `view_row_to_colmajor_big_f32`: the same for f32 [200, 300] through
    [128, 256] tiles (rows 128..199, columns 256..299 in bounds)."""
    def copy(name, e, shape, x_strides, y_strides, tile):
        def body(cb, tt, p):
            el = e(tt)
            one = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (1).to_bytes(4, "little"))
            views = []
            for base, strides in ((p[0], x_strides), (p[1], y_strides)):
                TV = tt.tensor_view(el, shape, strides, PtrAttr.Missing)
                PV = tt.partition_view(tile, TV, [0, 1], PaddingValue.Zero)
                views.append(E.encode_MakePartitionViewOp(cb, PV, E.encode_MakeTensorViewOp(cb, TV, base, [], [])))
            x, _ = E.encode_LoadViewTkoOp(cb, tt.tile(el, tile), tt.Token, views[0], [one, one], None,
                                          E.MemoryOrderingSemantics.WEAK, None, None, [False, False])
            E.encode_StoreViewTkoOp(cb, tt.Token, x, views[1], [one, one], None,
                                    E.MemoryOrderingSemantics.WEAK, None, None, [False, False])
        kernel(name, BytecodeVersion.V_13_3, [ptr(e), ptr(e)], body)
    copy("view_colmajor_copy_f32", f32, [40, 24], [1, 40], [1, 40], [32, 16])
    copy("view_row_to_colmajor_f16", f16, [48, 72], [72, 1], [1, 48], [32, 64])
    # 128 KiB a tile: more than sm_120's shared memory, so read as stored.
    copy("view_row_to_colmajor_big_f32", f32, [200, 300], [300, 1], [1, 200], [128, 256])


math_f64_unary()
math_f64_binary()
remf("remf_f32", f32)
remf("remf_f16", f16)
remf("remf_bf16", bf16)
ftof_f64_bf16()
ftof_f8()
ftof_f8_scale()
scale_ops("scale_ops_e8m0", e8m0, [PaddingValue.Zero, PaddingValue.Nan])
scale_ops("scale_ops_e5m3", e5m3, [PaddingValue.NegZero, PaddingValue.PosInf])
print_scale()
ftof_f4()
int4_pack()
f4_permute()
f4_constant()
print_f4_i4()
print_f8()
ftoi_f8()
ftoi_i1()
for_narrow()
itof_f8()
ftof_tf32_modes()
itof_bf16_i1()
ftof_f16_bf16()
i1_int_ops()
i16_shifts()
directed_16()
narrow_ints()
token_flow()
mma_large("mma_128x128x32_f16", 128, 128, 32)
view_transposes()
mma_large("mma_64x64x256_f64", 64, 64, 256, ab=f64, cd=f64)
mma_large("mma_128x128x128_tf32", 128, 128, 128, ab=tf32, via=f32)
mma_large("mma_64x64x256_f32", 64, 64, 256, ab=f32)
mma_large("mma_b4_32x32x256_f64", 32, 32, 256, ab=f64, cd=f64, batch=4)
mma_large("mma_b2_128x128x256_i8", 128, 128, 256, ab=i8, cd=i32, batch=2)
# A also stored through a view, whose layout (warps along K) A keeps: the
# slices' stores are guarded per thread.
mma_large("mma_64x64x256_keep_a_f64", 64, 64, 256, ab=f64, cd=f64, keep_a=True)
# f8 operands into an f16 accumulator (m16n8k32 .f16.e4m3.e4m3.f16 on sm_89+).
mma_large("mma_64x32x64_e4m3_f16", 64, 32, 64, ab=e4m3, cd=f16, via=f32)
mma_large("mma_b2_32x32x64_e4m3_f16", 32, 32, 64, ab=e4m3, cd=f16, via=f32, batch=2)
# Small enough for the FMA engine's register path (operands read straight
# into registers, no shared memory).
mma_large("mma_8x8x8_f32", 8, 8, 8, ab=f32)
mma_large("mma_16x8x8_f16", 16, 8, 8)
mma_large("mma_2x2x2_f64", 2, 2, 2, ab=f64, cd=f64)
mma_large("mma_32x32x1_f32", 32, 32, 1, ab=f32)
mma_large("mma_64x32x2_f16", 64, 32, 2, cd=f16)
mma_large("mma_b2_4x8x4_i8", 4, 8, 4, ab=i8, cd=i32, batch=2)
mma_large("mma_8x16x8_e4m3", 8, 16, 8, ab=e4m3, via=f32)
mma_large("mma_8x8x8_keep_a_f32", 8, 8, 8, ab=f32, keep_a=True)
# f64 on mma.sync with A and B staged through shared memory by every thread.
mma_large("mma_8x8x8_f64", 8, 8, 8, ab=f64, cd=f64)
int8_ops()
mulhi("mulhii_i32", i32)
mulhi("mulhii_i64", i64)
mulhi("mulhii_i16", i16)
fpowi("fpowi_f32_i32", f32, i32)
fpowi("fpowi_f16_i16", f16, i16)
tensor_shape()
globals_table()
ordered()


def masked_atomics():
    """old[i] = atomic_rmw(acc + i, x[i]) (or atomic_cas(acc + i, c[i], x[i])) under the
    mask i % 3 != 0, for every rmw mode and cas; masked-off elements keep acc[i] and
    return what NVIDIA's tileiras returns there (cmp for cas). Also a masked load_ptr
    without a padding value. Parameters: x, c, acc, old."""
    modes = [("and", E.AtomicRMWMode.AND, i32), ("or", E.AtomicRMWMode.OR, i32),
             ("xor", E.AtomicRMWMode.XOR, i32), ("add", E.AtomicRMWMode.ADD, i32),
             ("addf", E.AtomicRMWMode.ADDF, f32), ("max", E.AtomicRMWMode.MAX, i32),
             ("min", E.AtomicRMWMode.MIN, i32), ("umax", E.AtomicRMWMode.UMAX, i32),
             ("umin", E.AtomicRMWMode.UMIN, i32), ("xchg", E.AtomicRMWMode.XCHG, i32),
             ("cas", None, i32), ("cas_f32", None, f32), ("load", None, i32)]
    for name, mode, elem in modes:
        def body(cb, tt, p, mode=mode, elem=elem, name=name):
            e = elem(tt)
            T, I = tt.tile(e, [N]), tt.tile(tt.I32, [N])
            B = tt.tile(tt.I1, [N])
            i = E.encode_IotaOp(cb, I)
            r = E.encode_RemIOp(cb, I, i, E.encode_ConstantOp(cb, I, (3).to_bytes(4, "little")),
                                E.Signedness.Signed)
            mask = E.encode_CmpIOp(cb, B, r, E.encode_ConstantOp(cb, I, (0).to_bytes(4, "little")),
                                   E.ComparisonPredicate.NOT_EQUAL, E.Signedness.Signed)
            x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
            at = ptrs(cb, tt, p[2], e)
            if name == "load":
                old, _ = E.encode_LoadPtrTkoOp(cb, T, tt.Token, at, mask, None, None,
                                               E.MemoryOrderingSemantics.WEAK, None, None)
            elif mode is None:
                c = load(cb, tt, ptrs(cb, tt, p[1], e), e)
                old, _ = E.encode_AtomicCASTkoOp(cb, T, tt.Token, at, c, x, mask, None,
                                                 E.MemoryOrderingSemantics.ACQ_REL, E.MemoryScope.DEVICE)
            else:
                old, _ = E.encode_AtomicRMWTkoOp(cb, T, tt.Token, at, x, mask, None,
                                                 E.MemoryOrderingSemantics.RELAXED, E.MemoryScope.DEVICE, mode)
            store(cb, tt, ptrs(cb, tt, p[3], e), old)
        kernel(f"masked_{name}", BytecodeVersion.V_13_3, [ptr(elem)] * 4, body)


def early_exits():
    """`return` in nested regions. Parameters x, out (i32, N each) and scalars a, b; each
    kernel stores to out only on the paths that do not return first:
    exit_nested_if: if a > 0 { if b > 0 { return } }; out = x.
    exit_in_else: if a > 0 { } else { return }; out = x.
    exit_if_results: v = if a > 0 { return } else { yield x + 1 }; out = v.
    exit_in_loop: acc = 0, k = 0; loop { if k == b { out = acc; return }; if k >= a { break };
      acc += x; k += 1 }; out = acc - 1."""
    def scalars(cb, tt):
        S = tt.tile(tt.I32, [])
        return S, (lambda v: E.encode_ConstantOp(cb, S, (v & 0xffffffff).to_bytes(4, "little")))

    def gt0(cb, tt, v):
        S, c = scalars(cb, tt)
        return E.encode_CmpIOp(cb, tt.tile(tt.I1, []), v, c(0), E.ComparisonPredicate.GREATER_THAN,
                               E.Signedness.Signed)

    def eq(cb, tt, u, v):
        return E.encode_CmpIOp(cb, tt.tile(tt.I1, []), u, v, E.ComparisonPredicate.EQUAL, E.Signedness.Signed)

    def splat(cb, tt, s):
        T = tt.tile(tt.I32, [N])
        return E.encode_BroadcastOp(cb, T, E.encode_ReshapeOp(cb, tt.tile(tt.I32, [1]), s))

    def nested_if(cb, tt, p):
        e = tt.I32
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        outer = E.encode_IfOp(cb, [], gt0(cb, tt, p[2]))
        with outer.new_block([]):
            inner = E.encode_IfOp(cb, [], gt0(cb, tt, p[3]))
            with inner.new_block([]):
                E.encode_ReturnOp(cb, [])
            with inner.new_block([]):
                E.encode_YieldOp(cb, [])
            inner.done()
            E.encode_YieldOp(cb, [])
        with outer.new_block([]):
            E.encode_YieldOp(cb, [])
        outer.done()
        store(cb, tt, ptrs(cb, tt, p[1], e), x)

    def in_else(cb, tt, p):
        e = tt.I32
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        ib = E.encode_IfOp(cb, [], gt0(cb, tt, p[2]))
        with ib.new_block([]):
            E.encode_YieldOp(cb, [])
        with ib.new_block([]):
            E.encode_ReturnOp(cb, [])
        ib.done()
        store(cb, tt, ptrs(cb, tt, p[1], e), x)

    def if_results(cb, tt, p):
        e = tt.I32
        T = tt.tile(e, [N])
        S, c = scalars(cb, tt)
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        ib = E.encode_IfOp(cb, [T], gt0(cb, tt, p[2]))
        with ib.new_block([]):
            E.encode_ReturnOp(cb, [])
        with ib.new_block([]):
            E.encode_YieldOp(cb, [E.encode_AddIOp(cb, T, x, splat(cb, tt, c(1)), E.IntegerOverflow.NONE)])
        (v,) = ib.done()
        store(cb, tt, ptrs(cb, tt, p[1], e), v)

    def in_loop(cb, tt, p):
        e = tt.I32
        T = tt.tile(e, [N])
        S, c = scalars(cb, tt)
        x = load(cb, tt, ptrs(cb, tt, p[0], e), e)
        zero = E.encode_ConstantOp(cb, T, (0).to_bytes(4, "little"))
        lb = E.encode_LoopOp(cb, [T], [c(0), zero])
        with lb.new_block([S, T]) as (k, acc):
            ib = E.encode_IfOp(cb, [], eq(cb, tt, k, p[3]))
            with ib.new_block([]):
                store(cb, tt, ptrs(cb, tt, p[1], e), acc)
                E.encode_ReturnOp(cb, [])
            with ib.new_block([]):
                E.encode_YieldOp(cb, [])
            ib.done()
            done = E.encode_CmpIOp(cb, tt.tile(tt.I1, []), k, p[2], E.ComparisonPredicate.GREATER_THAN_OR_EQUAL,
                                   E.Signedness.Signed)
            bb = E.encode_IfOp(cb, [], done)
            with bb.new_block([]):
                E.encode_BreakOp(cb, [acc])
            with bb.new_block([]):
                E.encode_YieldOp(cb, [])
            bb.done()
            k1 = E.encode_AddIOp(cb, S, k, c(1), E.IntegerOverflow.NONE)
            E.encode_ContinueOp(cb, [k1, E.encode_AddIOp(cb, T, acc, x, E.IntegerOverflow.NONE)])
        (total,) = lb.done()
        store(cb, tt, ptrs(cb, tt, p[1], e),
              E.encode_SubIOp(cb, T, total, splat(cb, tt, c(1)), E.IntegerOverflow.NONE))

    for name, body in [("exit_nested_if", nested_if), ("exit_in_else", in_else),
                       ("exit_if_results", if_results), ("exit_in_loop", in_loop)]:
        kernel(name, BytecodeVersion.V_13_3, [ptr(i32), ptr(i32), i32, i32], body)


masked_atomics()
early_exits()


def grid_stride():
    """A grid-stride loop over tiles: for t = block id; t < T; t += num_tile_blocks:
    out[t*N + i] = x[t*N + i] + 1000 * num_tile_blocks + block id, with tile blocks of
    1, 2 and 4 CTAs (`num_cta_in_cga`): the block id and count are of tile blocks, not
    CTAs. Parameters x, out and T."""
    for cga in (1, 2, 4):
        def body(cb, tt, p):
            e = tt.I32
            T, S = tt.tile(e, [N]), tt.tile(e, [])
            c = lambda v: E.encode_ConstantOp(cb, S, v.to_bytes(4, "little"))
            bx, _, _ = E.encode_GetTileBlockIdOp(cb, S, S, S)
            nb, _, _ = E.encode_GetNumTileBlocksOp(cb, S, S, S)
            tag = E.encode_AddIOp(cb, S, E.encode_MulIOp(cb, S, nb, c(1000), E.IntegerOverflow.NONE), bx,
                                  E.IntegerOverflow.NONE)
            P = tt.pointer(e, PtrAttr.Missing)
            fb = E.encode_ForOp(cb, [], bx, p[2], nb, [], False)
            with fb.new_block([S]) as (t,):
                off = E.encode_MulIOp(cb, S, t, c(N), E.IntegerOverflow.NONE)
                x = load(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, []), p[0], off), e), e)
                y = E.encode_AddIOp(cb, T, x, E.encode_BroadcastOp(cb, T, E.encode_ReshapeOp(
                    cb, tt.tile(e, [1]), tag)), E.IntegerOverflow.NONE)
                store(cb, tt, ptrs(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, []), p[1], off), e), y)
                E.encode_ContinueOp(cb, [])
            fb.done()
        kernel(f"grid_stride_cga{cga}", BytecodeVersion.V_13_3, [ptr(i32), ptr(i32), i32], body,
               hints={"default": EntryHints(num_cta_in_cga=cga)})


grid_stride()


def mma_unpadded():
    """d = a @ b (f16 into f32) for a [32, k] and b [k, 32] row-major, k a parameter
    (ragged: not a multiple of the K tile), read through views that declare no padding
    value: what lies past k must read as zero, as NVIDIA's staged copies give.
    mma_unpadded_f16: one 32x32x32 product; a's view does declare zero padding.
    mma_unpadded_loop_f16: a `for` over K tiles of 16, neither view padded.
    Parameters a, b, d and k."""
    def views(cb, tt, p, kt, pad_a):
        e = f16(tt)
        D = -(1 << 63)
        TA = tt.tensor_view(e, [32, D], [D, 1], PtrAttr.Missing)
        TB = tt.tensor_view(e, [D, 32], [32, 1], PtrAttr.Missing)
        PA = tt.partition_view([32, kt], TA, [0, 1], pad_a)
        PB = tt.partition_view([kt, 32], TB, [0, 1], PaddingValue.Missing)
        va = E.encode_MakePartitionViewOp(cb, PA, E.encode_MakeTensorViewOp(cb, TA, p[0], [p[3]], [p[3]]))
        vb = E.encode_MakePartitionViewOp(cb, PB, E.encode_MakeTensorViewOp(cb, TB, p[1], [p[3]], []))
        return va, vb

    def tile_load(cb, tt, view, shape, i, j):
        v, _ = E.encode_LoadViewTkoOp(cb, tt.tile(f16(tt), shape), tt.Token, view, [i, j], None,
                                      E.MemoryOrderingSemantics.WEAK, None, None, [False, False])
        return v

    def out(cb, tt, p, d):
        P = tt.pointer(f32(tt), PtrAttr.Missing)
        b = E.encode_BroadcastOp(cb, tt.tile(P, [32, 32]), E.encode_ReshapeOp(cb, tt.tile(P, [1, 1]), p[2]))
        idx = E.encode_ReshapeOp(cb, tt.tile(tt.I32, [32, 32]), E.encode_IotaOp(cb, tt.tile(tt.I32, [1024])))
        store(cb, tt, E.encode_OffsetOp(cb, tt.tile(P, [32, 32]), b, idx), d)

    def single(cb, tt, p):
        va, vb = views(cb, tt, p, 32, PaddingValue.Zero)
        zero = E.encode_ConstantOp(cb, tt.tile(tt.I32, []), (0).to_bytes(4, "little"))
        a = tile_load(cb, tt, va, [32, 32], zero, zero)
        b = tile_load(cb, tt, vb, [32, 32], zero, zero)
        c = E.encode_ConstantOp(cb, tt.tile(f32(tt), [32, 32]), (0).to_bytes(4, "little"))
        out(cb, tt, p, E.encode_MmaFOp(cb, tt.tile(f32(tt), [32, 32]), a, b, c, False))

    def looped(cb, tt, p):
        va, vb = views(cb, tt, p, 16, PaddingValue.Missing)
        S = tt.tile(tt.I32, [])
        c = lambda v: E.encode_ConstantOp(cb, S, v.to_bytes(4, "little"))
        C = tt.tile(f32(tt), [32, 32])
        n = E.encode_DivIOp(cb, S, E.encode_AddIOp(cb, S, p[3], c(15), E.IntegerOverflow.NONE), c(16),
                            E.Signedness.Signed, E.RoundingMode.ZERO)
        nb = E.encode_ForOp(cb, [C], c(0), n, c(1), [E.encode_ConstantOp(cb, C, (0).to_bytes(4, "little"))], False)
        with nb.new_block([S, C]) as (kt, acc):
            a = tile_load(cb, tt, va, [32, 16], c(0), kt)
            b = tile_load(cb, tt, vb, [16, 32], kt, c(0))
            E.encode_ContinueOp(cb, [E.encode_MmaFOp(cb, C, a, b, acc, False)])
        (d,) = nb.done()
        out(cb, tt, p, d)

    params = [ptr(f16), ptr(f16), ptr(f32), i32]
    kernel("mma_unpadded_f16", BytecodeVersion.V_13_3, params, single)
    kernel("mma_unpadded_loop_f16", BytecodeVersion.V_13_3, params, looped)


mma_unpadded()


def permute_huge():
    """y = permute(x, [1, 0]) of a 256x512 f32 tile: 512 KiB through shared memory,
    more than any target has (status 4, naming the op and the bytes)."""
    def body(cb, tt, p):
        e = f32(tt)
        n = 256 * 512
        x = E.encode_ReshapeOp(cb, tt.tile(e, [256, 512]), load(cb, tt, ptrs(cb, tt, p[0], e, n=n), e, shape=[n]))
        y = E.encode_PermuteOp(cb, tt.tile(e, [512, 256]), x, [1, 0])
        store(cb, tt, ptrs(cb, tt, p[1], e, n=n), E.encode_ReshapeOp(cb, tt.tile(e, [n]), y))
    kernel("permute_huge_f32", BytecodeVersion.V_13_3, [ptr(f32)] * 2, body)


permute_huge()
