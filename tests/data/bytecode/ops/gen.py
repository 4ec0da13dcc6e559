# Writes the op-coverage bytecode files in this directory with cuTile's own
# bytecode encoders (run with the cuTile Python venv). Each file is checked
# against NVIDIA's tileirdisasm by tests/golden_disasm.rs.
import os
import sys
from cuda.tile._bytecode.writer import write_bytecode
from cuda.tile._bytecode.version import BytecodeVersion
from cuda.tile._bytecode import encodings as E
from cuda.tile._bytecode.type import SimpleType
from cuda.tile._bytecode.type_base import PtrAttr, PaddingValue
from cuda.tile._bytecode.attribute import Integer, Float, DivBy, Bounded, make_load_store_hints, LoadStoreHints, EntryHints
from cuda.tile._bytecode.debug_info import MISSING_DEBUG_ATTR_ID

V = {'13.1': BytecodeVersion.V_13_1, '13.2': BytecodeVersion.V_13_2, '13.3': BytecodeVersion.V_13_3, '13.4': BytecodeVersion.V_13_4}

def make(name, ver, body, params=lambda tt: [], hints=None):
    buf = bytearray()
    with write_bytecode(1, buf, V[ver]) as w:
        tt = w.type_table
        ps = params(tt)
        with w.function(name, ps, [], True, hints or {}, MISSING_DEBUG_ATTR_ID) as fb:
            cb = fb.code_builder
            body(cb, tt, fb.parameters, w)
            E.encode_ReturnOp(cb, [])
    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), f'{name}_{ver.replace(".","_")}.tileirbc'), 'wb').write(buf)

def t_i32(tt): return tt.tile(tt.I32, [])
def t(tt, elem, shape): return tt.tile(elem, shape)

cases = {}
def case(fn): cases[fn.__name__] = fn; return fn

@case
def unary_float(cb, tt, p, w):
    f = tt.simple(SimpleType.F32); T = t(tt, f, [8])
    x = E.encode_IotaOp(cb, t(tt, tt.I32, [8]))
    y = E.encode_IToFOp(cb, T, x, E.Signedness.Signed, E.RoundingMode.NEAREST_EVEN)
    y2 = E.encode_IToFOp(cb, T, x, E.Signedness.Unsigned, E.RoundingMode.NEAREST_EVEN)
    E.encode_AddFOp(cb, T, y, y2, E.RoundingMode.ZERO, True)
    E.encode_MulFOp(cb, T, y, y2, E.RoundingMode.NEAREST_EVEN, True)
    E.encode_DivFOp(cb, T, y, y2, E.RoundingMode.APPROX, False)
    E.encode_DivFOp(cb, T, y, y2, E.RoundingMode.FULL, True)
    E.encode_SqrtOp(cb, T, y, E.RoundingMode.APPROX, True)
    E.encode_RsqrtOp(cb, T, y, True)
    E.encode_Exp2Op(cb, T, y, True)
    E.encode_ExpOp(cb, T, y, E.RoundingMode.APPROX)
    E.encode_TanHOp(cb, T, y, E.RoundingMode.APPROX)
    E.encode_MaxFOp(cb, T, y, y2, True, True)
    E.encode_MinFOp(cb, T, y, y2, False, True)
    E.encode_FmaOp(cb, T, y, y2, y, E.RoundingMode.POSITIVE_INF, True)
    E.encode_FToIOp(cb, t(tt, tt.I32, [8]), y, E.Signedness.Unsigned, E.RoundingMode.NEAREST_INT_TO_ZERO, False)
    E.encode_FToFOp(cb, t(tt, tt.simple(SimpleType.F16), [8]), y, E.RoundingMode.ZERO)
    E.encode_FPowFOp(cb, T, y, y2)
    E.encode_RemFOp(cb, T, y, y2)

@case
def int_ops(cb, tt, p, w):
    T = t(tt, tt.I32, [8])
    x = E.encode_IotaOp(cb, T)
    E.encode_AddIOp(cb, T, x, x, E.IntegerOverflow.NSW)
    E.encode_SubIOp(cb, T, x, x, E.IntegerOverflow.NUW)
    E.encode_MulIOp(cb, T, x, x, E.IntegerOverflow.NW)
    E.encode_ShLIOp(cb, T, x, x, E.IntegerOverflow.NSW)
    E.encode_NegIOp(cb, T, x, E.IntegerOverflow.NSW)
    E.encode_MulhiIOp(cb, T, x, x)
    E.encode_DivIOp(cb, T, x, x, E.Signedness.Unsigned, E.RoundingMode.ZERO)
    E.encode_DivIOp(cb, T, x, x, E.Signedness.Signed, E.RoundingMode.POSITIVE_INF)
    E.encode_TruncIOp(cb, t(tt, tt.simple(SimpleType.I16), [8]), x, E.IntegerOverflow.NUW)
    E.encode_CmpIOp(cb, t(tt, tt.I1, [8]), x, x, E.ComparisonPredicate.LESS_THAN_OR_EQUAL, E.Signedness.Unsigned)

@case
def ptrs(cb, tt, p, w):
    P = tt.pointer(tt.simple(SimpleType.F32), PtrAttr.Missing)
    TP = t(tt, P, [])
    i64 = t(tt, tt.I64, [])
    pp = E.encode_IntToPtrOp(cb, TP, E.encode_ExtIOp(cb, i64, E.encode_ConstantOp(cb, t_i32(tt), (5).to_bytes(4,'little')), E.Signedness.Signed))
    E.encode_PtrToIntOp(cb, i64, pp)
    P2 = tt.pointer(tt.simple(SimpleType.F16), PtrAttr.Missing)
    E.encode_PtrToPtrOp(cb, t(tt, P2, []), pp)
    E.encode_AssumeOp(cb, TP, pp, DivBy(32))
    E.encode_AssumeOp(cb, TP, pp, DivBy(8))
    E.encode_AssumeOp(cb, t_i32(tt), E.encode_ConstantOp(cb, t_i32(tt), (7).to_bytes(4,'little')), Bounded(None, 10))

@case
def views(cb, tt, p, w):
    f = tt.simple(SimpleType.F32)
    P = tt.pointer(f, PtrAttr.Missing)
    base = E.encode_IntToPtrOp(cb, t(tt, P, []), E.encode_ConstantOp(cb, t(tt, tt.I64, []), (4096).to_bytes(8,'little')))
    TV = tt.tensor_view(f, [64, 32], [32, 1], PtrAttr.Missing)
    tv = E.encode_MakeTensorViewOp(cb, TV, base, [], [])
    PV = tt.partition_view([8, 8], TV, [1, 0], PaddingValue.Nan)
    pv = E.encode_MakePartitionViewOp(cb, PV, tv)
    shp = E.encode_GetTensorShapeOp(cb, [t_i32(tt), t_i32(tt)], tv)
    ish = E.encode_GetIndexSpaceShapeOp(cb, [t_i32(tt), t_i32(tt)], pv)
    tok = E.encode_MakeTokenOp(cb, tt.Token)
    z = E.encode_ConstantOp(cb, t_i32(tt), (0).to_bytes(4,'little'))
    tile, tk = E.encode_LoadViewTkoOp(cb, t(tt, f, [8, 8]), tt.Token, pv, [z, z], tok, E.MemoryOrderingSemantics.ACQUIRE, E.MemoryScope.DEVICE, make_load_store_hints({'sm_100': LoadStoreHints(latency=3, allow_tma=False)}), [False, False])
    E.encode_StoreViewTkoOp(cb, tt.Token, tile, pv, [z, z], tk, E.MemoryOrderingSemantics.RELEASE, E.MemoryScope.SYS, None, [False, False])
    E.encode_JoinTokensOp(cb, tt.Token, [tok, tk])

@case
def atomics(cb, tt, p, w):
    i32 = tt.I32
    P = tt.pointer(i32, PtrAttr.Missing)
    TP = t(tt, P, [8])
    base = E.encode_IntToPtrOp(cb, t(tt, P, []), E.encode_ConstantOp(cb, t(tt, tt.I64, []), (4096).to_bytes(8,'little')))
    ptrs = E.encode_BroadcastOp(cb, TP, E.encode_ReshapeOp(cb, t(tt, P, [1]), base))
    v = E.encode_IotaOp(cb, t(tt, i32, [8]))
    E.encode_AtomicRMWTkoOp(cb, t(tt, i32, [8]), tt.Token, ptrs, v, None, None, E.MemoryOrderingSemantics.RELAXED, E.MemoryScope.TL_BLK, E.AtomicRMWMode.UMAX)
    E.encode_AtomicCASTkoOp(cb, t(tt, i32, [8]), tt.Token, ptrs, v, v, None, None, E.MemoryOrderingSemantics.ACQUIRE, E.MemoryScope.SYS)
    r, tk = E.encode_LoadPtrTkoOp(cb, t(tt, i32, [8]), tt.Token, ptrs, None, None, None, E.MemoryOrderingSemantics.WEAK, None, None)
    r, tk = E.encode_LoadPtrTkoOp(cb, t(tt, i32, [8]), tt.Token, ptrs, None, None, tk, E.MemoryOrderingSemantics.RELAXED, E.MemoryScope.DEVICE, make_load_store_hints({'sm_90': LoadStoreHints(latency=1)}))
    E.encode_StorePtrTkoOp(cb, tt.Token, ptrs, r, None, tk, E.MemoryOrderingSemantics.RELEASE, E.MemoryScope.DEVICE, make_load_store_hints({'sm_90': LoadStoreHints(allow_tma=False)}))

@case
def control(cb, tt, p, w):
    i32 = t_i32(tt)
    z = E.encode_ConstantOp(cb, i32, (0).to_bytes(4,'little'))
    one = E.encode_ConstantOp(cb, i32, (1).to_bytes(4,'little'))
    nb = E.encode_LoopOp(cb, [], [])
    with nb.new_block([]) as args:
        E.encode_BreakOp(cb, [])
    nb.done()
    nb = E.encode_LoopOp(cb, [i32], [])
    with nb.new_block([]) as args:
        E.encode_BreakOp(cb, [z])
    nb.done()
    nb = E.encode_ForOp(cb, [], z, one, one, [], True)
    with nb.new_block([i32]) as args:
        E.encode_ContinueOp(cb, [])
    nb.done()
    c = E.encode_CmpIOp(cb, t(tt, tt.I1, []), z, one, E.ComparisonPredicate.EQUAL, E.Signedness.Signed)
    nb = E.encode_IfOp(cb, [], c)
    with nb.new_block([]):
        E.encode_YieldOp(cb, [])
    with nb.new_block([]):
        E.encode_YieldOp(cb, [])
    nb.done()
    E.encode_AssertOp(cb, c, 'quote " and \\ tab\t')
    E.encode_PrintTkoOp(cb, tt.Token, [], None, 'hello')

@case
def v134(cb, tt, p, w):
    f = tt.simple(SimpleType.F32); T = t(tt, f, [8])
    x = E.encode_IToFOp(cb, T, E.encode_IotaOp(cb, t(tt, tt.I32, [8])), E.Signedness.Signed, E.RoundingMode.NEAREST_EVEN)
    E.encode_FPowIOp(cb, T, x, E.encode_IotaOp(cb, t(tt, tt.I32, [8])))
    tok = E.encode_MakeTokenOp(cb, tt.Token)
    t1 = E.encode_GdcLaunchDependentsTkoOp(cb, tt.Token, None)
    t2 = E.encode_GdcWaitTkoOp(cb, tt.Token, tok)
    E.encode_MemoryFenceAliasTkoOp(cb, tt.Token, t2)
    E.encode_FToIOp(cb, t(tt, tt.I32, [8]), x, E.Signedness.Signed, E.RoundingMode.NEAREST_INT_TO_ZERO, True)
    E.encode_AllocaOp(cb, t(tt, tt.pointer(f, PtrAttr.Missing), []), 16, 8, True)
    E.encode_MmaFOp(cb, t(tt, f, [16,16]), E.encode_ConstantOp(cb, t(tt, f, [16,16]), b'\0\0\0\0'), E.encode_ConstantOp(cb, t(tt, f, [16,16]), b'\0\0\x80\x3f'), E.encode_ConstantOp(cb, t(tt, f, [16,16]), b'\0\0\0\0'), True)

@case
def consts(cb, tt, p, w):
    import struct
    for st, vals, fmt in [(SimpleType.F32, [0.1, -0.0, 1e10, 3.5e-40, float('nan'), 65504.0, 123456789.0, 1e-7], '<f'), (SimpleType.F32, [float('inf'), 2.0**70, 0.3, 1.5], '<f'), (SimpleType.F32, [-0.0], '<f'), (SimpleType.F32, [1e-5], '<f'), (SimpleType.F64, [0.1, 1.0/3, 1e300, -2.5], '<d'), (SimpleType.F64, [5e-324], '<d'), (SimpleType.F16, [0x3555, 0x7bff, 0x0001, 0x7c00], '<H'), (SimpleType.BF16, [0x3dcd, 0x4049], '<H'), (SimpleType.I8, [-3, 127], '<b'), (SimpleType.I64, [-1, 2**40], '<q'), (SimpleType.F8E4M3FN, [0x38, 0x7e, 0x01, 0x7f], '<B'), (SimpleType.F8E5M2, [0x3c, 0x7b, 0x7c, 0x01], '<B'), (SimpleType.TF32, [0x3dcccccd>>13, 0x3f800000>>13, 0x3fc00000>>13, 0], 'tf32')]:
        el = tt.simple(st)
        data = b''.join((v.to_bytes(3,'little') if fmt=='tf32' else struct.pack(fmt, v)) for v in vals)
        E.encode_ConstantOp(cb, t(tt, el, [len(vals)]), data)
        E.encode_ConstantOp(cb, t(tt, el, []), (vals[0].to_bytes(3,'little') if fmt=='tf32' else struct.pack(fmt, vals[0])))
    for b in [b'\x0d', b'\x01', b'\xff', b'\x00']:
        E.encode_ConstantOp(cb, t(tt, tt.I1, [4]), b)
    E.encode_ConstantOp(cb, t(tt, tt.I1, [16]), b'\x0d\x80')
    E.encode_ConstantOp(cb, t(tt, tt.I32, [2, 4]), b''.join(struct.pack('<i', v) for v in range(8)))

names = sys.argv[1:] or list(cases)
for n in names:
    for ver in ['13.1', '13.2', '13.3', '13.4']:
        try:
            make(n, ver, cases[n])
        except Exception as ex:
            print(n, ver, 'skip:', type(ex).__name__, str(ex)[:100])


def make_debug(ver):
    """Debug info: lexical blocks, call sites, several files, and a global."""
    buf = bytearray()
    with write_bytecode(1, buf, V[ver]) as w:
        tt = w.type_table
        dt = w.debug_attr_table
        f1 = dt.file('kernels.py', '/src')
        f2 = dt.file('helpers.py', '/src/lib')
        cu = dt.compile_unit(f1)
        sp = dt.subprogram(f1, 10, 'dbg', 'dbg', cu, 11)
        sp2 = dt.subprogram(f2, 3, 'helper', 'helper', cu, 3)
        lb = dt.lexical_block(sp, f1, 12, 4)
        l0 = dt.loc(sp, 'kernels.py', 10, 0)
        l1 = dt.loc(lb, 'kernels.py', 13, 8)
        l2 = dt.loc(sp2, 'helpers.py', 5, 2)
        cs = dt.call_site(l2, l1)
        cs2 = dt.call_site(cs, l0)
        i32 = tt.tile(tt.I32, [])
        w.global_section.define_global('g_const', tt.tile(tt.I32, [2]), (7).to_bytes(4, 'little') * 2, 8, True,
                                       E.SymbolVisibility.Private) if V[ver] >= BytecodeVersion.V_13_3 else \
            w.global_section.define_global('g_plain', tt.tile(tt.I32, [2]), (7).to_bytes(4, 'little') * 2, 8)
        hints = {'sm_90': EntryHints(num_cta_in_cga=2, occupancy=3), 'sm_100': EntryHints(num_worker_warps_per_cta=4)}
        with w.function('dbg', [i32], [], True, hints, l0) as fb:
            cb = fb.code_builder
            with cb.debug_attr(l1):
                a = E.encode_AddIOp(cb, i32, fb.parameters[0], fb.parameters[0], E.IntegerOverflow.NONE)
            with cb.debug_attr(cs):
                b = E.encode_MulIOp(cb, i32, a, a, E.IntegerOverflow.NONE)
            with cb.debug_attr(cs2):
                E.encode_SubIOp(cb, i32, b, a, E.IntegerOverflow.NONE)
            with cb.debug_attr(l0):
                E.encode_ReturnOp(cb, [])
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), f'debug_{ver.replace(".", "_")}.tileirbc')
    open(out, 'wb').write(buf)


for ver in ['13.1', '13.3', '13.4']:
    make_debug(ver)
