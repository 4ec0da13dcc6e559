"""Writes the differential cases of the corpus kernels (`tests/differential.rs`):
for every kernel of the corpus (`tests/data/corpus`, or the folder given
as the only argument) `NAME.tileir` (its
primary bytecode) and `NAME.json` (arguments and grid), plus extra launches
of some kernels (`NAME_VARIANT.json` naming the same bytecode).

Run from anywhere with any Python 3: `python3 tests/data/differential/corpus/gen.py`.

Every kernel's parameters follow its `meta.json` signature (cuTile flattens
an array into pointer, shape..., strides...; the index type of shapes and
strides is the array's `index_dtype`); the shapes below are ragged (not
tile multiples) wherever the kernel allows it. Inputs whose order of
accumulation is unspecified (matmuls, sums, scans, float atomics) are small
integers so that every order gives the same bits; approximate functions get
an ulp bound on their output.
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = (sys.argv[1] if len(sys.argv) > 1
          else os.path.join(HERE, "../../corpus"))

ELEM = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
        "int32": "i32", "int64": "i64", "int16": "i16", "int8": "i8", "uint8": "u8",
        "uint32": "u32", "bool_": "i1", "float8_e4m3fn": "f8e4m3",
        "float8_e5m2": "f8e5m2", "float8_e8m0fnu": "u8"}

SMALL = "range:-3:4"   # exact under any summation order

def mm(m, k, n, ragged_n, tm, tn, init=SMALL, note=None):
    """A matmul c[m, n] = a[m, k] @ b[k, n] with tm x tn tiles; the
    variant `ragged_n` has n = ragged_n, whose last 16-byte chunk of a row
    of b is partly past the row's end."""
    def spec(n):
        return dict(dims={"a": [m, k], "b": [k, n], "c": [m, n]},
                    init={"a": init, "b": init},
                    grid=[-(-m // tm), -(-n // tn), 1],
                    note=note or "small integers: exact in any summation order")
    return dict(spec(n), variants={"ragged_n": spec(ragged_n)})


# Per kernel: "dims" (shape per array parameter, default [N]), "strides"
# (per array, default row-major contiguous), "init" (per array, default
# "random"), "ulp" (per array, or "*" for the case), "scalars" (per scalar
# parameter), "grid", "note", and "variants" (name suffix -> overrides).
N = 1000
K = {
    "adv_index_rows_f32": dict(
        dims={"x": [30, 40], "rows": [24], "out": [24, 16]},
        init={"rows": "range:-2:33"}, scalars={"c0": 30}, grid=[3, 1, 1],
        note="rows out of [0, 30) and columns past 40 read the zero padding"),
    "assert_nonneg_i32": dict(
        dims={"x": [1024], "out": [1024]}, init={"x": "range:0:1000000"},
        grid=[8, 1, 1], note="no element negative: the assert holds",
        variants={"traps": dict(init={"x": "random"},
                                note="random signs: every block's assert fails")}),
    "atomic_hist_i32": dict(
        dims={"keys": [N], "hist": [64]}, init={"keys": "range:-5:70", "hist": "range:0:100"},
        grid=[4, 1, 1], note="keys out of [0, 64) are skipped"),
    "atomic_ops_i32": dict(init={"flags": "range:0:3"}, grid=[8, 1, 1]),
    "atomic_red_view_f32": dict(
        dims={"x": [640], "k": [640], "acc": [64], "kmax": [64]},
        init={"x": SMALL, "acc": SMALL}, grid=[10, 1, 1],
        note="small integers: the f32 atomic sums are exact in any order"),
    "batched_matmul_f16": dict(
        dims={"a": [2, 70, 72], "b": [2, 72, 80], "c": [2, 70, 80]},
        init={"a": SMALL, "b": SMALL}, grid=[2, 2, 2]),
    "bitcast_pack_f32": dict(dims={"o_halves": [2 * N]}, grid=[8, 1, 1]),
    "broadcast_2d_f32": dict(
        dims={"x": [70, 100], "row": [100], "col": [70], "out": [70, 100]}, grid=[3, 2, 1]),
    "cat_extract_f32": dict(
        dims={"a": [160], "b": [160], "o_cat": [320], "o_ext": [80]}, grid=[10, 1, 1]),
    "copy_3d_index_offset": dict(
        dims={"x": [5, 20, 40], "out": [5, 20, 40]},
        strides={"x": [20 * 43 + 5, 43, 1], "out": [800, 40, 1]}, grid=[2, 2, 2],
        note="x has padded rows and planes"),
    "custom_reduce_scan_f32": dict(
        dims={"x": [40, 50], "o_absmax": [40], "o_sum": [40], "o_cnt": [40],
              "o_runmax": [40, 50]},
        init={"x": "range:-50:50"}, grid=[3, 1, 1]),
    "dot_1d_f32": dict(dims={"out": [4]}, init={"x": SMALL, "y": SMALL}, grid=[4, 1, 1]),
    "for_loop_carried_f32": dict(
        dims={"x": [40, 150], "o_sum": [40, 64], "o_max": [40, 64]}, grid=[3, 1, 1],
        note="the loop sums tiles in a fixed order: random floats"),
    "gather_2d_rows_f32": dict(
        dims={"x": [30, 70], "rows": [22], "out": [22, 60]},
        init={"rows": "range:-2:33"}, grid=[6, 2, 1]),
    "gather_scatter_mask_f32": dict(
        dims={"x": [300], "idx": [N], "o_gather": [N], "o_scatter": [N]},
        init={"idx": "range:-5:305"}, grid=[8, 1, 1]),
    "gelu_tanh_f16": dict(dims={"x": [40, 300], "out": [40, 300]}, grid=[3, 3, 1]),
    "global_sum_atomic_f32": dict(
        dims={"x": [5000], "total": [1]}, init={"x": SMALL, "total": SMALL}, grid=[5, 1, 1]),
    "if_else_runtime_f32": dict(
        scalars={"mode": 1}, grid=[4, 1, 1],
        variants={"mode0": dict(scalars={"mode": 0}), "mode2": dict(scalars={"mode": 2})}),
    "insert_subtile_f32": dict(dims={"a": [320], "out": [320]}, grid=[10, 1, 1]),
    "int_arith_i64": dict(init={"b": "nonzero:-1000:1000"}, grid=[8, 1, 1]),
    "int_divmod_i32": dict(init={"b": "nonzero:-1000:1000"}, grid=[4, 1, 1],
                           note="divisors nonzero (division by zero is undefined)"),
    "iota_full_fill": dict(grid=[8, 1, 1]),
    "layernorm_rows_f32": dict(
        dims={"x": [20, 200], "w": [200], "bias": [200], "out": [20, 200]},
        init={"x": "range:-50:50", "w": SMALL, "bias": "zeros"}, ulp={"out": 8}, grid=[3, 1, 1],
        note="x small integers, bias 0: the row sums' order moves the output by a few ulps"),
    "list_of_arrays_f32": dict(
        dims={"out": [N]}, grid=[16, 1, 1],
        list_arrays=3, note="three arrays of length 1000 in the table"),
    "matmul_bf16_tma": mm(150, 100, 144, 140, 128, 128),
    "matmul_f16_cluster2": mm(150, 100, 144, 140, 128, 128),
    "matmul_f16_divisible": dict(
        dims={"a": [128, 256], "b": [256, 128], "c": [128, 128]},
        init={"a": SMALL, "b": SMALL}, grid=[1, 1, 1]),
    "matmul_f16_f16acc": mm(150, 100, 144, 140, 128, 64,
                            note="partial sums below 2048: exact in f16"),
    "matmul_f16_strided": dict(
        dims={"a": [70, 50], "b": [50, 90], "c": [70, 90]},
        strides={"a": [53, 1], "b": [1, 51], "c": [91, 1]},
        init={"a": SMALL, "b": SMALL}, grid=[2, 2, 1], note="b is column-major"),
    "matmul_f16_tma": mm(150, 100, 144, 140, 128, 128),
    "matmul_f32": mm(70, 50, 92, 90, 64, 64),
    "matmul_f64_operator": dict(
        dims={"a": [40, 20], "b": [20, 50], "c": [40, 50]},
        init={"a": SMALL, "b": SMALL}, grid=[2, 2, 1]),
    "matmul_fp8_e4m3": dict(
        dims={"a": [70, 80], "b": [80, 90], "c": [70, 90]},
        init={"a": SMALL, "b": SMALL}, grid=[2, 2, 1]),
    "matmul_i8_i32": mm(70, 80, 96, 90, 64, 64, init="random",
                        note="int32 accumulation wraps: any order"),
    "matmul_tf32": mm(70, 50, 92, 90, 64, 64),
    "mma_scaled_mxfp8": dict(
        dims={"a": [128, 128], "a_scale": [128, 4], "b": [128, 128], "b_scale": [4, 128],
              "c": [128, 128]},
        init={"a": SMALL, "b": SMALL, "a_scale": "range:120:130", "b_scale": "range:120:130"},
        grid=[1, 1, 1]),
    "nobounds_copy_f32": dict(dims={"x": [1024], "out": [1024]}, grid=[4, 1, 1]),
    "permute_3d_f32": dict(dims={"x": [5, 20, 40], "out": [40, 5, 20]}, grid=[3, 3, 3]),
    "persistent_grid_stride_f32": dict(dims={"x": [5000], "out": [5000]}, grid=[3, 1, 1]),
    "print_debug_i32": dict(dims={"x": [20], "out": [20]}, init={"x": "range:-100:100"},
                            grid=[3, 1, 1]),
    "raw_offset_f32": dict(dims={"x": [600], "y": [300]}, scalars={"n": 300}, grid=[5, 1, 1]),
    "reshape_1d_to_2d_f32": dict(dims={"x": [1008], "out": [63, 16]}, grid=[4, 1, 1],
                                 note="elements read past N land in rows past R (not written)"),
    "row_max_min_argmax_f32": dict(
        dims={"x": [30, 50], "o_max": [30], "o_min": [30], "o_argmax": [30],
              "o_argmin": [30], "o_prod": [30]},
        init={"x": "range:-2:3"}, grid=[4, 1, 1],
        note="no NaNs; products of -2..2 are exact"),
    "row_sum_f32": dict(dims={"x": [40, 300], "out": [40]}, init={"x": SMALL}, grid=[3, 1, 1]),
    "scalar_params_axpy": dict(scalars={"alpha": 1.5, "shift": -3}, grid=[4, 1, 1]),
    "scan_rows": dict(
        dims={"x": [20, 150], "y": [20, 150], "o_cumsum": [20, 150], "o_rcumsum": [20, 150],
              "o_cumprod": [20, 150]},
        init={"x": "range:-2:3"}, grid=[3, 3, 1],
        note="x in -2..2: sums and products exact in any order"),
    "slice_dynamic_f32": dict(dims={"x": [500], "out": [300]},
                              scalars={"off": 37, "n": 300}, grid=[3, 1, 1]),
    "softmax_rows_f32": dict(
        dims={"x": [10, 200], "out": [10, 200]}, init={"x": "finite"}, ulp={"out": 399},
        grid=[3, 1, 1],
        note="the row's sum of N = 200 positive exponentials runs in an order each compiler "
        "chooses: each side within (N-1)u of the exact sum, the two within 2(N-1) = 398 ulp, "
        "then one division (399)"),
    "strided_window_f32": dict(dims={"x": [100], "out": [25, 8]}, grid=[25, 1, 1]),
    "exp_log_f32": dict(
        ulp={"o_log": 2, "o_log2": 2}, grid=[4, 1, 1],
        note="log and log2 within 2 ulp of NVIDIA's",
        variants={"normal": dict(init={"x": "normal:5"},
                                 note="|x| below 64: exp(x) stays normal; log and log2 within "
                                 "2 ulp of NVIDIA's")}),
    "trig_f32": dict(
        ulp={"o_sin": 2, "o_cos": 2, "o_tan": 4, "o_sinh": 2, "o_cosh": 2}, grid=[4, 1, 1],
        note="sin, cos, sinh, cosh within 2 ulp of NVIDIA's, tan within 4",
        variants={"normal": dict(init={"x": "normal"})}),
    "pow_atan2_floor_ceil_f32": dict(
        ulp={"o_pow": 4, "o_atan2": 2}, grid=[4, 1, 1],
        note="pow within 4 ulp of NVIDIA's, atan2 within 2",
        variants={"normal": dict(init={"a": "normal", "b": "normal"})}),
    "transpose_2d_f32": dict(dims={"x": [70, 100], "out": [100, 70]}, grid=[3, 2, 1]),
    "transpose_load_order_f16": dict(dims={"x": [70, 100], "out": [100, 70]}, grid=[3, 2, 1]),
    "uint_ops_u32": dict(init={"b": "nonzero:1:100000"}, grid=[4, 1, 1]),
    "uint_floordiv_u32": dict(init={"b": "nonzero:1:100000"}, grid=[4, 1, 1]),
    "vadd_f32_divisible": dict(dims={"a": [4096], "b": [4096], "c": [4096]}, grid=[4, 1, 1]),
    "vadd_f32_strided": dict(strides={"a": [2], "b": [3], "c": [2]}, grid=[4, 1, 1],
                             note="strided arrays: the gaps must stay untouched"),
    "while_break_continue_i32": dict(
        dims={"x": [200], "out": [48]}, init={"x": "range:-10:20"},
        scalars={"n": 11, "limit": 100}, grid=[3, 1, 1]),
}


def grid_1d(meta, tile):
    return [-(-N // tile), 1, 1]


def write(name, kernel, meta, spec):
    args = []
    sig = meta["signature"]
    dims = spec.get("dims", {})
    strides = spec.get("strides", {})
    init = spec.get("init", {})
    scalars = spec.get("scalars", {})
    for p in sig:
        kind = p["kind"]
        if kind == "ArrayConstraint":
            shape = dims.get(p["param"], [N] * p["ndim"])
            assert len(shape) == p["ndim"], (name, p["param"])
            st = strides.get(p["param"])
            div = p["stride_divisible_by"]
            if st is None:
                # row-major, each stride rounded up to the signature's divisor
                st, acc = [], 1
                for k in reversed(range(len(shape))):
                    acc = -(-acc // div[k]) * div[k]
                    st.insert(0, acc)
                    acc *= shape[k]
            for k, c in enumerate(p["stride_constant"]):
                assert c is None or c == st[k], (name, p["param"], st)
                assert st[k] % div[k] == 0, (name, p["param"], st)
                assert shape[k] % p["shape_divisible_by"][k] == 0, (name, p["param"], shape)
            length = 1 + sum((d - 1) * s for d, s in zip(shape, st))
            buf = {"elem": ELEM[p["dtype"]], "len": length,
                   "init": init.get(p["param"], "random")}
            if isinstance(spec.get("ulp"), dict) and p["param"] in spec["ulp"]:
                buf["ulp"] = spec["ulp"][p["param"]]
            args.append({"buffer": buf})
            ix = ELEM[p["index_dtype"]]
            args += [{"scalar": {"ty": ix, "value": v}} for v in shape + st]
        elif kind == "ScalarConstraint":
            args.append({"scalar": {"ty": ELEM[p["dtype"]], "value": scalars[p["param"]]}})
        elif kind == "ListConstraint":
            # a pointer to an int64 table (base, shape[0], stride[0]) per
            # array, then the list's length
            count = spec["list_arrays"]
            args.append({"buffer": {"elem": "i64", "len": 3 * count,
                                    "init": "arrays:f32:%d:%d" % (count, N)}})
            args.append({"scalar": {"ty": "i32", "value": count}})
        elif kind == "ConstantConstraint":
            pass  # embedded in the bytecode
        else:
            raise SystemExit("%s: parameter kind %s" % (name, kind))
    case = {"entry": kernel, "grid": spec["grid"], "args": args}
    if isinstance(spec.get("ulp"), int):
        case["ulp"] = spec["ulp"]
    case["note"] = spec.get("note", meta["docstring"].strip().splitlines()[0])
    if name != kernel:
        case["bytecode"] = kernel + ".tileir"
    # one argument a line
    lines = ["{"]
    for k, v in case.items():
        if k == "args":
            items = [json.dumps(a) for a in v]
            lines.append(' "args": [\n  ' + ",\n  ".join(items) + "\n ],")
        else:
            lines.append(" %s: %s," % (json.dumps(k), json.dumps(v)))
    lines[-1] = lines[-1].rstrip(",")
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        f.write("\n".join(lines) + "\n}\n")


def main():
    for kernel in sorted(os.listdir(CORPUS)):
        d = os.path.join(CORPUS, kernel)
        if not os.path.isdir(d):
            continue
        meta = json.load(open(os.path.join(d, "meta.json")))
        src = os.path.join(d, "%s.%s.tileir" % (kernel, meta["primary_bytecode"]))
        shutil.copyfile(src, os.path.join(HERE, kernel + ".tileir"))
        spec = dict(K.get(kernel, {}))
        if "grid" not in spec:
            tile = list(meta["tile_sizes"].values())[0]
            spec["grid"] = grid_1d(meta, tile)
        variants = spec.pop("variants", {})
        write(kernel, kernel, meta, spec)
        for suffix, over in variants.items():
            write(kernel + "_" + suffix, kernel, meta, dict(spec, **over))


main()
