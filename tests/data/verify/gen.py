# Writes invalid TileIR modules, one per verifier rule family, with cuTile's
# own bytecode encoders (run with the cuTile Python venv:
# `.tools/venv/bin/python tests/data/verify/gen.py`). tests/verify_invalid.rs
# runs NVIDIA's tileirdisasm and our verifier on each and requires the same
# messages.
import os
from cuda.tile._bytecode.writer import write_bytecode
from cuda.tile._bytecode.version import BytecodeVersion
from cuda.tile._bytecode import encodings as E
from cuda.tile._bytecode.type import SimpleType
from cuda.tile._bytecode.type_base import PtrAttr
from cuda.tile._bytecode.attribute import Float
from cuda.tile._bytecode.debug_info import MISSING_DEBUG_ATTR_ID

HERE = os.path.dirname(os.path.abspath(__file__))


def make(name, body, ver=BytecodeVersion.V_13_4, params=lambda tt: [], ret=True):
    buf = bytearray()
    with write_bytecode(1, buf, ver) as w:
        tt = w.type_table
        with w.function(name, params(tt), [], True, {}, MISSING_DEBUG_ATTR_ID) as fb:
            cb = fb.code_builder
            body(cb, tt, fb.parameters)
            if ret:
                E.encode_ReturnOp(cb, [])
    with open(os.path.join(HERE, f'{name}.tileirbc'), 'wb') as f:
        f.write(buf)


def T(tt, elem, shape):
    return tt.tile(elem, shape)


def f32(tt):
    return tt.simple(SimpleType.F32)


def c_i32(cb, tt, v):
    return E.encode_ConstantOp(cb, T(tt, tt.I32, []), (v & 0xffffffff).to_bytes(4, 'little'))


def c_f32(cb, tt, shape):
    n = 1
    return E.encode_ConstantOp(cb, T(tt, f32(tt), shape), b'\0\0\x80\x3f' * n)


cases = {}


def case(fn):
    cases[fn.__name__] = fn
    return fn


@case
def if_yield_type(cb, tt, p):
    c = E.encode_CmpIOp(cb, T(tt, tt.I1, []), c_i32(cb, tt, 0), c_i32(cb, tt, 1), E.ComparisonPredicate.EQUAL, E.Signedness.Signed)
    nb = E.encode_IfOp(cb, [T(tt, tt.I64, [])], c)
    with nb.new_block([]):
        E.encode_YieldOp(cb, [c_i32(cb, tt, 1)])
    with nb.new_block([]):
        E.encode_YieldOp(cb, [c_i32(cb, tt, 2)])
    nb.done()


@case
def if_yields_without_results(cb, tt, p):
    c = E.encode_CmpIOp(cb, T(tt, tt.I1, []), c_i32(cb, tt, 0), c_i32(cb, tt, 1), E.ComparisonPredicate.EQUAL, E.Signedness.Signed)
    nb = E.encode_IfOp(cb, [], c)
    with nb.new_block([]):
        E.encode_YieldOp(cb, [c_i32(cb, tt, 1)])
    with nb.new_block([]):
        E.encode_YieldOp(cb, [])
    nb.done()


@case
def for_continue_types(cb, tt, p):
    z, one = c_i32(cb, tt, 0), c_i32(cb, tt, 1)
    nb = E.encode_ForOp(cb, [T(tt, tt.I32, [])], z, one, one, [z], False)
    with nb.new_block([T(tt, tt.I32, []), T(tt, tt.I32, [])]) as args:
        E.encode_ContinueOp(cb, [])
    nb.done()


@case
def for_induction_type(cb, tt, p):
    z, one = c_i32(cb, tt, 0), c_i32(cb, tt, 1)
    nb = E.encode_ForOp(cb, [], z, one, one, [], False)
    with nb.new_block([T(tt, tt.I64, [])]) as args:
        E.encode_ContinueOp(cb, [])
    nb.done()


@case
def for_iter_mismatch(cb, tt, p):
    z, one = c_i32(cb, tt, 0), c_i32(cb, tt, 1)
    nb = E.encode_ForOp(cb, [T(tt, tt.I32, [])], z, one, one, [z], False)
    with nb.new_block([T(tt, tt.I32, [])]) as args:
        E.encode_ContinueOp(cb, [])
    nb.done()


@case
def loop_break_types(cb, tt, p):
    nb = E.encode_LoopOp(cb, [T(tt, tt.I32, [])], [])
    with nb.new_block([]) as args:
        E.encode_BreakOp(cb, [])
    nb.done()


@case
def loop_continue_types(cb, tt, p):
    z = c_i32(cb, tt, 0)
    nb = E.encode_LoopOp(cb, [], [z])
    with nb.new_block([T(tt, tt.I32, [])]) as args:
        E.encode_ContinueOp(cb, [])
    nb.done()


def if_eq(cb, tt, a, b, then, other):
    """`if a == b { then() } else { other() }` over i32 scalars, no results."""
    c = E.encode_CmpIOp(cb, T(tt, tt.I1, []), a, b, E.ComparisonPredicate.EQUAL, E.Signedness.Signed)
    ib = E.encode_IfOp(cb, [], c)
    with ib.new_block([]):
        then()
    with ib.new_block([]):
        other()
    ib.done()


@case
def break_in_for(cb, tt, p):
    z, one = c_i32(cb, tt, 0), c_i32(cb, tt, 1)
    nb = E.encode_ForOp(cb, [], z, one, one, [], False)
    with nb.new_block([T(tt, tt.I32, [])]) as args:
        if_eq(cb, tt, args[0], one, lambda: E.encode_BreakOp(cb, []), lambda: E.encode_YieldOp(cb, []))
        E.encode_ContinueOp(cb, [])
    nb.done()


@case
def return_in_for(cb, tt, p):
    z, one = c_i32(cb, tt, 0), c_i32(cb, tt, 1)
    nb = E.encode_ForOp(cb, [], z, one, one, [], False)
    with nb.new_block([T(tt, tt.I32, [])]) as args:
        if_eq(cb, tt, args[0], one, lambda: E.encode_ReturnOp(cb, []), lambda: E.encode_YieldOp(cb, []))
        E.encode_ContinueOp(cb, [])
    nb.done()


@case
def return_in_loop(cb, tt, p):
    nb = E.encode_LoopOp(cb, [], [])
    with nb.new_block([]) as args:
        E.encode_ReturnOp(cb, [])
    nb.done()


@case
def yield_in_loop(cb, tt, p):
    nb = E.encode_LoopOp(cb, [], [])
    with nb.new_block([]) as args:
        E.encode_YieldOp(cb, [])
    nb.done()


def reduce_case(shape, dim, ident_ty, arg_tys, yield_vals, res_shape=None):
    def body(cb, tt, p):
        x = E.encode_ConstantOp(cb, T(tt, f32(tt), shape), b'\0\0\x80\x3f')
        rs = res_shape if res_shape is not None else [d for i, d in enumerate(shape) if i != dim]
        nb = E.encode_ReduceOp(cb, [T(tt, f32(tt), rs)], [x], dim, [Float(0.0, ident_ty, tt)])
        with nb.new_block([T(tt, tt.simple(a), s) for a, s in arg_tys]) as args:
            E.encode_YieldOp(cb, yield_vals(cb, tt, args))
        nb.done()
    return body


cases['reduce_dim'] = reduce_case([8], 1, SimpleType.F32, [(SimpleType.F32, []), (SimpleType.F32, [])], lambda cb, tt, a: [a[0]], res_shape=[])
cases['reduce_identity_type'] = reduce_case([8], 0, SimpleType.F64, [(SimpleType.F32, []), (SimpleType.F32, [])], lambda cb, tt, a: [a[0]])
cases['reduce_block_args'] = reduce_case([8], 0, SimpleType.F32, [(SimpleType.F32, [])], lambda cb, tt, a: [a[0]])
cases['reduce_block_arg_rank'] = reduce_case([8], 0, SimpleType.F32, [(SimpleType.F32, [1]), (SimpleType.F32, [1])], lambda cb, tt, a: [a[0]])
cases['reduce_yield_count'] = reduce_case([8], 0, SimpleType.F32, [(SimpleType.F32, []), (SimpleType.F32, [])], lambda cb, tt, a: [])
cases['reduce_result_shape'] = reduce_case([8, 4], 0, SimpleType.F32, [(SimpleType.F32, []), (SimpleType.F32, [])], lambda cb, tt, a: [a[0]], res_shape=[8])


@case
def cat_shapes(cb, tt, p):
    a = c_f32(cb, tt, [4, 8])
    b = c_f32(cb, tt, [4, 4])
    E.encode_CatOp(cb, T(tt, f32(tt), [8, 8]), a, b, 0)


@case
def cat_dim(cb, tt, p):
    a = c_f32(cb, tt, [4, 8])
    E.encode_CatOp(cb, T(tt, f32(tt), [8, 8]), a, a, 2)


@case
def broadcast_shape(cb, tt, p):
    a = c_f32(cb, tt, [2, 8])
    E.encode_BroadcastOp(cb, T(tt, f32(tt), [4, 8]), a)


@case
def reshape_count(cb, tt, p):
    a = c_f32(cb, tt, [2, 8])
    E.encode_ReshapeOp(cb, T(tt, f32(tt), [8]), a)


@case
def extract_divisible(cb, tt, p):
    a = c_f32(cb, tt, [4, 8])
    z = c_i32(cb, tt, 0)
    E.encode_ExtractOp(cb, T(tt, f32(tt), [4, 16]), a, [z, z])


@case
def extract_indices(cb, tt, p):
    a = c_f32(cb, tt, [4, 8])
    z = c_i32(cb, tt, 0)
    E.encode_ExtractOp(cb, T(tt, f32(tt), [2, 8]), a, [z])


@case
def permute_shape(cb, tt, p):
    a = c_f32(cb, tt, [4, 8])
    E.encode_PermuteOp(cb, T(tt, f32(tt), [4, 8]), a, [1, 0])


@case
def permute_rank1(cb, tt, p):
    a = c_f32(cb, tt, [8])
    E.encode_PermuteOp(cb, T(tt, f32(tt), [8]), a, [0])


@case
def iota_too_many(cb, tt, p):
    E.encode_IotaOp(cb, T(tt, tt.simple(SimpleType.I8), [512]))


@case
def iota_rank(cb, tt, p):
    E.encode_IotaOp(cb, T(tt, tt.I32, [2, 4]))


@case
def mmaf_shapes(cb, tt, p):
    a = c_f32(cb, tt, [16, 8])
    b = c_f32(cb, tt, [16, 16])
    c = c_f32(cb, tt, [16, 16])
    E.encode_MmaFOp(cb, T(tt, f32(tt), [16, 16]), a, b, c, False)


@case
def mmaf_acc_type(cb, tt, p):
    bf = tt.simple(SimpleType.BF16)
    a = E.encode_ConstantOp(cb, T(tt, bf, [16, 16]), b'\0\0')
    c = E.encode_ConstantOp(cb, T(tt, tt.simple(SimpleType.F16), [16, 16]), b'\0\0')
    E.encode_MmaFOp(cb, T(tt, tt.simple(SimpleType.F16), [16, 16]), a, a, c, False)


@case
def exti_narrow(cb, tt, p):
    E.encode_ExtIOp(cb, T(tt, tt.simple(SimpleType.I16), [8]), E.encode_IotaOp(cb, T(tt, tt.I32, [8])), E.Signedness.Signed)


@case
def trunci_wide(cb, tt, p):
    E.encode_TruncIOp(cb, T(tt, tt.I64, [8]), E.encode_IotaOp(cb, T(tt, tt.I32, [8])), E.IntegerOverflow.NONE)


@case
def bitcast_width(cb, tt, p):
    E.encode_BitcastOp(cb, T(tt, tt.I64, [8]), E.encode_IotaOp(cb, T(tt, tt.I32, [8])))


@case
def join_one_token(cb, tt, p):
    tok = E.encode_MakeTokenOp(cb, tt.Token)
    E.encode_JoinTokensOp(cb, tt.Token, [tok])


@case
def print_format(cb, tt, p):
    E.encode_PrintTkoOp(cb, tt.Token, [c_i32(cb, tt, 1)], None, 'value %d and %d')


@case
def print_unterminated(cb, tt, p):
    E.encode_PrintTkoOp(cb, tt.Token, [c_i32(cb, tt, 1)], None, 'value %')


@case
def select_types(cb, tt, p):
    c = E.encode_CmpIOp(cb, T(tt, tt.I1, []), c_i32(cb, tt, 0), c_i32(cb, tt, 1), E.ComparisonPredicate.EQUAL, E.Signedness.Signed)
    E.encode_SelectOp(cb, T(tt, tt.I32, []), c, c_i32(cb, tt, 0), E.encode_ConstantOp(cb, T(tt, tt.I64, []), b'\0' * 8))


from cuda.tile._bytecode.type_base import PtrAttr, PaddingValue


def base_ptr(cb, tt, elem):
    P = tt.pointer(elem, PtrAttr.Missing)
    return E.encode_IntToPtrOp(cb, T(tt, P, []), E.encode_ConstantOp(cb, T(tt, tt.I64, []), (4096).to_bytes(8, 'little')))


def view(cb, tt, shape=(64, 32), strides=(32, 1), tile=(8, 8), dim_map=(0, 1), pad=PaddingValue.Missing):
    f = f32(tt)
    TV = tt.tensor_view(f, list(shape), list(strides), PtrAttr.Missing)
    tv = E.encode_MakeTensorViewOp(cb, TV, base_ptr(cb, tt, f), [], [])
    PV = tt.partition_view(list(tile), TV, list(dim_map), pad)
    return tv, E.encode_MakePartitionViewOp(cb, PV, tv)


@case
def tensor_view_pointee(cb, tt, p):
    TV = tt.tensor_view(tt.simple(SimpleType.F64), [64], [1], PtrAttr.Missing)
    E.encode_MakeTensorViewOp(cb, TV, base_ptr(cb, tt, f32(tt)), [], [])


@case
def tensor_view_dynamic_count(cb, tt, p):
    TV = tt.tensor_view(f32(tt), [-(2**63), 32], [32, 1], PtrAttr.Missing)
    E.encode_MakeTensorViewOp(cb, TV, base_ptr(cb, tt, f32(tt)), [], [])


@case
def partition_view_tensor_type(cb, tt, p):
    f = f32(tt)
    TV = tt.tensor_view(f, [64, 32], [32, 1], PtrAttr.Missing)
    TV2 = tt.tensor_view(f, [64, 64], [64, 1], PtrAttr.Missing)
    tv = E.encode_MakeTensorViewOp(cb, TV, base_ptr(cb, tt, f), [], [])
    E.encode_MakePartitionViewOp(cb, tt.partition_view([8, 8], TV2, [0, 1], PaddingValue.Missing), tv)


@case
def load_view_index_count(cb, tt, p):
    tv, pv = view(cb, tt)
    z = c_i32(cb, tt, 0)
    E.encode_LoadViewTkoOp(cb, T(tt, f32(tt), [8, 8]), tt.Token, pv, [z], None, E.MemoryOrderingSemantics.WEAK, None, None, [False])


@case
def load_view_tile_type(cb, tt, p):
    tv, pv = view(cb, tt)
    z = c_i32(cb, tt, 0)
    E.encode_LoadViewTkoOp(cb, T(tt, f32(tt), [8, 4]), tt.Token, pv, [z, z], None, E.MemoryOrderingSemantics.WEAK, None, None, [False, False])


@case
def load_view_index_types(cb, tt, p):
    tv, pv = view(cb, tt)
    z = c_i32(cb, tt, 0)
    z64 = E.encode_ConstantOp(cb, T(tt, tt.I64, []), b'\0' * 8)
    E.encode_LoadViewTkoOp(cb, T(tt, f32(tt), [8, 8]), tt.Token, pv, [z, z64], None, E.MemoryOrderingSemantics.WEAK, None, None, [False, False])


@case
def store_view_weak_scope(cb, tt, p):
    tv, pv = view(cb, tt)
    z = c_i32(cb, tt, 0)
    x = E.encode_ConstantOp(cb, T(tt, f32(tt), [8, 8]), b'\0' * 4)
    E.encode_StoreViewTkoOp(cb, tt.Token, x, pv, [z, z], None, E.MemoryOrderingSemantics.WEAK, E.MemoryScope.DEVICE, None, [False, False])


@case
def tensor_shape_count(cb, tt, p):
    tv, pv = view(cb, tt)
    E.encode_GetTensorShapeOp(cb, [T(tt, tt.I32, [])] * 3, tv)


@case
def index_space_count(cb, tt, p):
    tv, pv = view(cb, tt)
    E.encode_GetIndexSpaceShapeOp(cb, [T(tt, tt.I32, [])], pv)


@case
def view_dim_map_twice(cb, tt, p):
    view(cb, tt, dim_map=(0, 0))


@case
def view_tile_not_pow2(cb, tt, p):
    view(cb, tt, tile=(8, 6))


@case
def view_padding_int(cb, tt, p):
    i = tt.I32
    TV = tt.tensor_view(i, [64], [1], PtrAttr.Missing)
    tv = E.encode_MakeTensorViewOp(cb, TV, base_ptr(cb, tt, i), [], [])
    E.encode_MakePartitionViewOp(cb, tt.partition_view([8], TV, [0], PaddingValue.Nan), tv)


@case
def tile_not_pow2(cb, tt, p):
    E.encode_IotaOp(cb, T(tt, tt.I32, [6]))


def ptrs8(cb, tt, elem):
    P = tt.pointer(elem, PtrAttr.Missing)
    return E.encode_BroadcastOp(cb, T(tt, P, [8]), E.encode_ReshapeOp(cb, T(tt, P, [1]), base_ptr(cb, tt, elem)))


@case
def cas_width(cb, tt, p):
    i16 = tt.simple(SimpleType.I16)
    ptrs = ptrs8(cb, tt, i16)
    v = E.encode_TruncIOp(cb, T(tt, i16, [8]), E.encode_IotaOp(cb, T(tt, tt.I32, [8])), E.IntegerOverflow.NONE)
    E.encode_AtomicCASTkoOp(cb, T(tt, i16, [8]), tt.Token, ptrs, v, v, None, None, E.MemoryOrderingSemantics.RELAXED, E.MemoryScope.DEVICE)


@case
def rmw_pointee(cb, tt, p):
    ptrs = ptrs8(cb, tt, f32(tt))
    v = E.encode_IotaOp(cb, T(tt, tt.I32, [8]))
    E.encode_AtomicRMWTkoOp(cb, T(tt, tt.I32, [8]), tt.Token, ptrs, v, None, None, E.MemoryOrderingSemantics.RELAXED, E.MemoryScope.DEVICE, E.AtomicRMWMode.ADD)


@case
def rmw_xchg_i16(cb, tt, p):
    i16 = tt.simple(SimpleType.I16)
    ptrs = ptrs8(cb, tt, i16)
    v = E.encode_TruncIOp(cb, T(tt, i16, [8]), E.encode_IotaOp(cb, T(tt, tt.I32, [8])), E.IntegerOverflow.NONE)
    E.encode_AtomicRMWTkoOp(cb, T(tt, i16, [8]), tt.Token, ptrs, v, None, None, E.MemoryOrderingSemantics.RELAXED, E.MemoryScope.DEVICE, E.AtomicRMWMode.XCHG)


@case
def load_ptr_result(cb, tt, p):
    ptrs = ptrs8(cb, tt, f32(tt))
    E.encode_LoadPtrTkoOp(cb, T(tt, tt.I32, [8]), tt.Token, ptrs, None, None, None, E.MemoryOrderingSemantics.WEAK, None, None)


@case
def load_ptr_relaxed_no_scope(cb, tt, p):
    ptrs = ptrs8(cb, tt, f32(tt))
    E.encode_LoadPtrTkoOp(cb, T(tt, f32(tt), [8]), tt.Token, ptrs, None, None, None, E.MemoryOrderingSemantics.RELAXED, None, None)


@case
def ftoi_rounding(cb, tt, p):
    x = E.encode_IToFOp(cb, T(tt, f32(tt), [8]), E.encode_IotaOp(cb, T(tt, tt.I32, [8])), E.Signedness.Signed, E.RoundingMode.NEAREST_EVEN)
    E.encode_FToIOp(cb, T(tt, tt.I32, [8]), x, E.Signedness.Signed, E.RoundingMode.ZERO, False)


@case
def itof_rounding(cb, tt, p):
    E.encode_IToFOp(cb, T(tt, f32(tt), [8]), E.encode_IotaOp(cb, T(tt, tt.I32, [8])), E.Signedness.Signed, E.RoundingMode.ZERO)


@case
def itof_e8m0(cb, tt, p):
    E.encode_IToFOp(cb, T(tt, tt.simple(SimpleType.F8E8M0FNU), [8]), E.encode_IotaOp(cb, T(tt, tt.I32, [8])), E.Signedness.Signed, E.RoundingMode.NEAREST_EVEN)


def f16_tile(cb, tt):
    return E.encode_IToFOp(cb, T(tt, tt.simple(SimpleType.F16), [8]), E.encode_IotaOp(cb, T(tt, tt.I32, [8])), E.Signedness.Signed, E.RoundingMode.NEAREST_EVEN)


@case
def sqrt_approx_f16(cb, tt, p):
    E.encode_SqrtOp(cb, T(tt, tt.simple(SimpleType.F16), [8]), f16_tile(cb, tt), E.RoundingMode.APPROX, False)


@case
def exp_approx_f16(cb, tt, p):
    E.encode_ExpOp(cb, T(tt, tt.simple(SimpleType.F16), [8]), f16_tile(cb, tt), E.RoundingMode.APPROX)


@case
def exp_ieee(cb, tt, p):
    E.encode_ExpOp(cb, T(tt, tt.simple(SimpleType.F16), [8]), f16_tile(cb, tt), E.RoundingMode.ZERO)


@case
def divf_full_ftz_f16(cb, tt, p):
    x = f16_tile(cb, tt)
    E.encode_DivFOp(cb, T(tt, tt.simple(SimpleType.F16), [8]), x, x, E.RoundingMode.FULL, False)


@case
def negi_nuw(cb, tt, p):
    x = E.encode_IotaOp(cb, T(tt, tt.I32, [8]))
    E.encode_NegIOp(cb, T(tt, tt.I32, [8]), x, E.IntegerOverflow.NUW)


@case
def cmpf_shape(cb, tt, p):
    x = f16_tile(cb, tt)
    E.encode_CmpFOp(cb, T(tt, tt.I1, [4]), x, x, E.ComparisonPredicate.EQUAL, E.ComparisonOrdering.ORDERED)


@case
def mmai_shapes(cb, tt, p):
    i8 = tt.simple(SimpleType.I8)
    a = E.encode_ConstantOp(cb, T(tt, i8, [16, 32]), b'\0')
    b = E.encode_ConstantOp(cb, T(tt, i8, [16, 16]), b'\0')
    c = E.encode_ConstantOp(cb, T(tt, tt.I32, [16, 16]), b'\0' * 4)
    E.encode_MmaIOp(cb, T(tt, tt.I32, [16, 16]), a, b, c, E.Signedness.Signed, E.Signedness.Signed)


@case
def alloca_alignment(cb, tt, p):
    E.encode_AllocaOp(cb, T(tt, tt.pointer(f32(tt), PtrAttr.Missing), []), 16, 2, False)


@case
def alloca_alignment_pow2(cb, tt, p):
    E.encode_AllocaOp(cb, T(tt, tt.pointer(f32(tt), PtrAttr.Missing), []), 16, 12, False)


@case
def unpack_size(cb, tt, p):
    i8 = tt.simple(SimpleType.I8)
    x = E.encode_ConstantOp(cb, T(tt, i8, [8]), b'\0')
    E.encode_UnpackOp(cb, T(tt, tt.I32, [4]), x)


@case
def scan_result_type(cb, tt, p):
    x = E.encode_ConstantOp(cb, T(tt, f32(tt), [8]), b'\0\0\x80\x3f')
    nb = E.encode_ScanOp(cb, [T(tt, f32(tt), [4])], [x], 0, False, [Float(0.0, SimpleType.F32, tt)])
    with nb.new_block([T(tt, f32(tt), []), T(tt, f32(tt), [])]) as args:
        E.encode_YieldOp(cb, [args[0]])
    nb.done()


@case
def reduce_impure_body(cb, tt, p):
    x = E.encode_ConstantOp(cb, T(tt, f32(tt), [8]), b'\0\0\x80\x3f')
    nb = E.encode_ReduceOp(cb, [T(tt, f32(tt), [])], [x], 0, [Float(0.0, SimpleType.F32, tt)])
    with nb.new_block([T(tt, f32(tt), []), T(tt, f32(tt), [])]) as args:
        # Token ops are memory-effect-free; an if that prints is not.
        E.encode_MakeTokenOp(cb, tt.Token)
        def prints():
            E.encode_PrintTkoOp(cb, tt.Token, [], None, 'x')
            E.encode_YieldOp(cb, [])
        if_eq(cb, tt, c_i32(cb, tt, 0), c_i32(cb, tt, 1), prints, lambda: E.encode_YieldOp(cb, []))
        E.encode_YieldOp(cb, [args[0]])
    nb.done()



@case
def load_view_inbounds_size(cb, tt, p):
    tv, pv = view(cb, tt)
    z = c_i32(cb, tt, 0)
    E.encode_LoadViewTkoOp(cb, T(tt, f32(tt), [8, 8]), tt.Token, pv, [z, z], None, E.MemoryOrderingSemantics.WEAK, None, None, [False, False, True])


@case
def tensor_view_ptr_attr(cb, tt, p):
    f = f32(tt)
    TV = tt.tensor_view(f, [64], [1], PtrAttr.Default)
    E.encode_MakeTensorViewOp(cb, TV, base_ptr(cb, tt, f), [], [])


@case
def tensor_view_ptr_attr_lost(cb, tt, p):
    f = f32(tt)
    P = tt.pointer(f, PtrAttr.Default)
    base = E.encode_IntToPtrOp(cb, T(tt, P, []), E.encode_ConstantOp(cb, T(tt, tt.I64, []), (4096).to_bytes(8, 'little')))
    TV = tt.tensor_view(f, [64], [1], PtrAttr.Missing)
    E.encode_MakeTensorViewOp(cb, TV, base, [], [])



@case
def fpowi_exponent_type(cb, tt, p):
    x = c_f32(cb, tt, [8])
    e = E.encode_IotaOp(cb, T(tt, tt.I64, [8]))
    E.encode_FPowIOp(cb, T(tt, f32(tt), [8]), x, e)


@case
def fpowi_exponent_shape(cb, tt, p):
    x = c_f32(cb, tt, [8])
    e = E.encode_IotaOp(cb, T(tt, tt.I32, [4]))
    E.encode_FPowIOp(cb, T(tt, f32(tt), [8]), x, e)


@case
def fpowi_result_type(cb, tt, p):
    x = c_f32(cb, tt, [8])
    e = E.encode_IotaOp(cb, T(tt, tt.I32, [8]))
    E.encode_FPowIOp(cb, T(tt, tt.simple(SimpleType.F64), [8]), x, e)


@case
def gdc_wait_token_type(cb, tt, p):
    E.encode_GdcWaitTkoOp(cb, tt.Token, c_i32(cb, tt, 0))



@case
def entry_no_terminator(cb, tt, p):
    c_i32(cb, tt, 3)
    E.encode_MakeTokenOp(cb, tt.Token)


@case
def entry_no_terminator_view(cb, tt, p):
    f = f32(tt)
    TV = tt.tensor_view(f, [64], [1], PtrAttr.Missing)
    tv = E.encode_MakeTensorViewOp(cb, TV, base_ptr(cb, tt, f), [], [])
    E.encode_MakePartitionViewOp(cb, tt.partition_view([8], TV, [0], PaddingValue.Missing), tv)


@case
def entry_no_terminator_constant(cb, tt, p):
    c_i32(cb, tt, -7)


def entry_no_terminator_assume(cb, tt, p):
    E.encode_AssumeOp(cb, T(tt, tt.I32, []), c_i32(cb, tt, 4), Bounded(0, None))


def entry_no_terminator_div_by(cb, tt, p):
    E.encode_AssumeOp(cb, T(tt, tt.I32, [8]), E.encode_IotaOp(cb, T(tt, tt.I32, [8])), DivBy(4, 2, 0))


@case
def entry_ends_in_if(cb, tt, p):
    ret = lambda: E.encode_ReturnOp(cb, [])
    if_eq(cb, tt, c_i32(cb, tt, 2), c_i32(cb, tt, 3), ret, ret)


@case
def entry_ends_in_yield(cb, tt, p):
    E.encode_YieldOp(cb, [])


from cuda.tile._bytecode.attribute import DivBy, Bounded


def assume_case(make_value, pred):
    def body(cb, tt, p):
        E.encode_AssumeOp(cb, *make_value(cb, tt), pred)
    return body


def iota8(cb, tt):
    return T(tt, tt.I32, [8]), E.encode_IotaOp(cb, T(tt, tt.I32, [8]))


def float8(cb, tt):
    return T(tt, f32(tt), [8]), c_f32(cb, tt, [8])


cases['assume_div_by_not_pow2'] = assume_case(iota8, DivBy(3))
cases['assume_div_by_every_alone'] = assume_case(iota8, DivBy(4, 2, None))
cases['assume_div_by_float'] = assume_case(float8, DivBy(4))
cases['assume_div_by_along'] = assume_case(iota8, DivBy(4, 2, 1))
cases['assume_div_by_every'] = assume_case(iota8, DivBy(4, 16, 0))
cases['assume_div_by_scalar_every'] = assume_case(lambda cb, tt: (T(tt, tt.I32, []), c_i32(cb, tt, 4)), DivBy(4, 1, 0))
cases['assume_bounded_order'] = assume_case(iota8, Bounded(5, 2))
cases['assume_bounded_range'] = assume_case(lambda cb, tt: (T(tt, tt.simple(SimpleType.I8), [8]), E.encode_IotaOp(cb, T(tt, tt.simple(SimpleType.I8), [8]))), Bounded(0, 300))
cases['assume_bounded_float'] = assume_case(float8, Bounded(0, 3))


@case
def entry_tile_param(cb, tt, p):
    pass


@case
def ptr_i4_param(cb, tt, p):
    pass


@case
def ptr_f4_tile(cb, tt, p):
    # A pointer to f4E2M1FN is a valid scalar; a tile of them is not.
    P = tt.pointer(tt.simple(SimpleType.F4E2M1FN), PtrAttr.Missing)
    E.encode_ReshapeOp(cb, T(tt, P, [1]), p[0])


def ptr_tile(elem):
    return lambda tt: [tt.tile(tt.pointer(tt.simple(elem), PtrAttr.Missing), [])]


@case
def entry_arg_tensor_view(cb, tt, p):
    pass


@case
def entry_arg_token(cb, tt, p):
    pass


@case
def entry_arg_rank1_then_token(cb, tt, p):
    pass


def for_0_to_4(cb, tt, body):
    """A `for` over i32 0..4 step 1 with no carried values; `body(i)` fills it."""
    nb = E.encode_ForOp(cb, [], c_i32(cb, tt, 0), c_i32(cb, tt, 4), c_i32(cb, tt, 1), [], False)
    with nb.new_block([T(tt, tt.I32, [])]) as (i,):
        body(i)
    nb.done()


@case
def for_ends_in_yield(cb, tt, p):
    for_0_to_4(cb, tt, lambda i: E.encode_YieldOp(cb, []))


@case
def for_ends_in_return(cb, tt, p):
    for_0_to_4(cb, tt, lambda i: E.encode_ReturnOp(cb, []))


@case
def return_in_if_in_for(cb, tt, p):
    def body(i):
        if_eq(cb, tt, i, c_i32(cb, tt, 1), lambda: E.encode_ReturnOp(cb, []), lambda: E.encode_YieldOp(cb, []))
        E.encode_ContinueOp(cb, [])
    for_0_to_4(cb, tt, body)


cases_params = {
    'entry_arg_tensor_view': lambda tt: [tt.tile(tt.I32, []), tt.tensor_view(f32(tt), [64], [1], PtrAttr.Missing)],
    'entry_arg_token': lambda tt: [tt.simple(SimpleType.Token)],
    'entry_arg_rank1_then_token': lambda tt: [tt.tile(tt.I32, [4]), tt.simple(SimpleType.Token)],
    'entry_tile_param': lambda tt: [tt.tile(tt.I32, [4])],
    'ptr_i4_param': ptr_tile(SimpleType.I4),
    'ptr_f4_tile': ptr_tile(SimpleType.F4E2M1FN),
}

cases['entry_no_terminator_assume'] = entry_no_terminator_assume
cases['entry_no_terminator_div_by'] = entry_no_terminator_div_by
no_return = {'entry_no_terminator', 'entry_ends_in_if', 'entry_no_terminator_view', 'entry_no_terminator_constant', 'entry_ends_in_yield', 'entry_no_terminator_assume', 'entry_no_terminator_div_by'}
for name, body in cases.items():
    make(name, body, params=cases_params.get(name, lambda tt: []), ret=name not in no_return)


def make_debug(name, fn_loc, op_loc, linkage=None):
    """A module with debug info: `fn_loc`/`op_loc` pick the function's and an
    op's locations among the attributes built here."""
    buf = bytearray()
    with write_bytecode(1, buf, BytecodeVersion.V_13_4) as w:
        tt = w.type_table
        dt = w.debug_attr_table
        f1 = dt.file('kernels.py', '/src')
        cu = dt.compile_unit(f1)
        sp = dt.subprogram(f1, 10, name, linkage or name, cu, 11)
        sp2 = dt.subprogram(f1, 30, 'other', 'other', cu, 31)
        lb = dt.lexical_block(sp, f1, 12, 4)
        locs = {
            'none': MISSING_DEBUG_ATTR_ID,
            'sp': dt.loc(sp, 'kernels.py', 10, 0),
            'lb': dt.loc(lb, 'kernels.py', 13, 8),
            'sp2': dt.loc(sp2, 'kernels.py', 33, 2),
        }
        locs['cs'] = dt.call_site(locs['sp2'], locs['sp'])
        i32 = tt.tile(tt.I32, [])
        with w.function(name, [i32], [], True, {}, locs[fn_loc]) as fb:
            cb = fb.code_builder
            with cb.debug_attr(locs[op_loc]):
                E.encode_AddIOp(cb, i32, fb.parameters[0], fb.parameters[0], E.IntegerOverflow.NONE)
            E.encode_ReturnOp(cb, [])
    with open(os.path.join(HERE, f'{name}.tileirbc'), 'wb') as f:
        f.write(buf)


make_debug('dbg_linkage', 'sp', 'sp', linkage='renamed')
make_debug('dbg_op_scope', 'sp', 'sp2')
make_debug('dbg_fn_lexical', 'lb', 'lb')
make_debug('dbg_fn_callsite', 'cs', 'sp')
make_debug('dbg_no_fn_scope', 'none', 'lb')
make_debug('dbg_valid', 'sp', 'cs')
