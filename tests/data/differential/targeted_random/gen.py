"""Writes random variants of the targeted kernels (`../targeted/gen.py`) as
differential cases (`tests/differential.rs`): early returns at a random depth
of nested ifs and loops, masked raw-memory atomics of a random mode with a
random mask, grid-stride loops over ct.num_blocks with 1- or 2-CTA tile
blocks, and unpadded loads of ragged shapes feeding an MMA or a reduction,
each with random tile sizes, shapes, grids and scalar values.

Run with the cuTile Python venv:
`.tools/venv/bin/python tests/data/differential/targeted_random/gen.py`
(`--count N --seed S --out DIR` for a larger sweep; then run the test with
`DIFFERENTIAL_DIRS=DIR`). Case names start with the template: `exit_`,
`atomic_<mode>_`, `stride_c1_`/`stride_c2_`, `unpadded_mma_`,
`unpadded_sum_`.
"""
import argparse
import json
import linecache
import os
import random
import types

import cuda.tile as ct
from cuda.tile.compilation import (ArrayConstraint, CallingConvention,
                                   KernelSignature, ScalarConstraint,
                                   export_kernel)

HERE = os.path.dirname(os.path.abspath(__file__))
CT = {"f16": ct.float16, "bf16": ct.bfloat16, "f32": ct.float32, "i32": ct.int32}
SIZE = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4}


def C(dt, ndim):
    """C-contiguous, 16-byte aligned array (int32 shapes and strides)."""
    e = CT[dt]
    elems16 = 16 // SIZE[dt]
    return ArrayConstraint(e, ndim, index_dtype=ct.int32, stride_lower_bound_incl=0,
                           alias_groups=(), may_alias_internally=False,
                           stride_constant=(None,) * (ndim - 1) + (1,),
                           stride_divisible_by=(elems16,) * (ndim - 1) + (1,),
                           base_addr_divisible_by=16)


def arr(dt, shape, init="random"):
    """A C-contiguous array's arguments (rows padded to 16 bytes)."""
    strides, acc = [], 1
    for k in reversed(range(len(shape))):
        if k < len(shape) - 1:
            acc = -(-acc // (16 // SIZE[dt])) * (16 // SIZE[dt])
        strides.insert(0, acc)
        acc *= shape[k]
    length = 1 + sum((d - 1) * s for d, s in zip(shape, strides))
    return [{"buffer": {"elem": dt, "len": length, "init": init}}] + [
        {"scalar": {"ty": "i32", "value": v}} for v in shape + strides]


def i32s(v):
    return {"scalar": {"ty": "i32", "value": v}}


def cdiv(a, b):
    return -(-a // b)


def early_exit(rng, k):
    """A return inside the innermost of 1-3 nested ifs/loops."""
    t = rng.choice([32, 64, 128])
    blocks = rng.randint(3, 9)
    n = rng.randint(1, blocks)
    depth = rng.randint(1, 3)
    trips = rng.randint(2, 4)
    lines, ind = [], "    "
    conds = ["b % n == {}".format(rng.randint(0, 2)), "b >= n", "b < n",
             "(b + k) % 3 == 0", "k == n % 3"]
    in_loop = False
    for d in range(depth):
        if rng.random() < 0.5 and not in_loop:
            lines.append(f"{ind}for k in range({trips}):")
            ind += "    "
            lines.append(f"{ind}acc = acc + 1.0")
            in_loop = True
        c = rng.choice([c for c in conds if in_loop or "k" not in c])
        lines.append(f"{ind}if {c}:")
        ind += "    "
    lines.append(f"{ind}ct.store(out, index=(b,), tile=acc * 2.0)")
    lines.append(f"{ind}return")
    body = "\n".join(lines)
    src = f"""
def K(x, out, n):
    b = ct.bid(0)
    acc = ct.load(x, index=(b,), shape=({t},), padding_mode=ct.PaddingMode.ZERO)
{body}
    ct.store(out, index=(b,), tile=acc - 3.0)
"""
    size = blocks * t - rng.randint(0, t - 1)
    return ("exit", src, [C("f32", 1), C("f32", 1), ScalarConstraint(ct.int32)],
            dict(grid=[blocks, 1, 1],
                 args=arr("f32", [size]) + arr("f32", [size]) + [i32s(n)]))


ATOMIC = {"cas": "atomic_cas_offset(i, {e}, w, mask=m)", "xchg": "atomic_xchg_offset(i, w, mask=m)",
          "add": "atomic_add_offset(i, w, mask=m)", "max": "atomic_max_offset(i, w, mask=m)",
          "min": "atomic_min_offset(i, w, mask=m)", "and": "atomic_and_offset(i, w, mask=m)",
          "or": "atomic_or_offset(i, w, mask=m)", "xor": "atomic_xor_offset(i, w, mask=m)"}


def masked_atomic(rng, k):
    """A masked atomic (the modes in turn); its returned tile (masked-off
    lanes too) is stored."""
    mode = sorted(ATOMIC)[k // len(TEMPLATES) % len(ATOMIC)]
    t = rng.choice([32, 64, 128, 256])
    blocks = rng.randint(2, 6)
    n = blocks * t - rng.randint(0, t)
    p, q = rng.randint(2, 5), rng.randint(0, 1)
    op = ATOMIC[mode].format(e=rng.randint(0, 9))
    src = f"""
def K(v, dst, old, n):
    b = ct.bid(0)
    i = ct.arange({t}, dtype=ct.int32) + b * {t}
    w = ct.load(v, index=(b,), shape=({t},), padding_mode=ct.PaddingMode.ZERO)
    m = (i < n) & ((w % {p}) != {q})
    r = dst.get_raw_memory().{op}
    ct.store(old, index=(b,), tile=r)
"""
    size = blocks * t
    return (f"atomic_{mode}", src, [C("i32", 1)] * 3 + [ScalarConstraint(ct.int32)],
            dict(grid=[blocks, 1, 1],
                 args=arr("i32", [size], "range:-20:20") + arr("i32", [size], "range:0:10")
                 + arr("i32", [size]) + [i32s(n)]))


def grid_stride(rng, k):
    """A grid-stride loop over the tiles with ct.num_blocks(0)."""
    ctas = rng.choice([1, 2])
    t = rng.choice([64, 128, 256])
    g = rng.randint(1, 5)
    size = rng.randint(3, 12) * t - rng.randint(0, t - 1)
    deco = "@ct.kernel(num_ctas=2)" if ctas == 2 else "@ct.kernel"
    src = f"""
def K(x, out, nb):
    b = ct.bid(0)
    for s in range(b, ct.num_tiles(x, 0, shape=({t},)), ct.num_blocks(0)):
        v = ct.load(x, index=(s,), shape=({t},), padding_mode=ct.PaddingMode.ZERO)
        ct.store(out, index=(s,), tile=v * 3.0 + 1.0)
    ct.store(nb, index=(b,), tile=ct.full((1,), ct.num_blocks(0), dtype=ct.int32))
"""
    return (f"stride_c{ctas}", src, [C("f32", 1), C("f32", 1), C("i32", 1)],
            dict(grid=[g, 1, 1], args=arr("f32", [size]) + arr("f32", [size]) + arr("i32", [g]),
                 decorator=deco))


def unpadded_mma(rng, k):
    """c = a @ b with unpadded loads of ragged M, N, K."""
    dt = rng.choice(["f16", "bf16"])
    tm, tn, tk = rng.choice([32, 64]), rng.choice([32, 64]), rng.choice([16, 32])
    m, n = rng.randint(1, 3) * tm - rng.randint(0, tm - 1), rng.randint(1, 3) * tn - rng.randint(0, tn - 1)
    k = rng.randint(1, 4) * tk - rng.randint(1, tk - 1)
    src = f"""
def K(a, b, c):
    acc = ct.full(({tm}, {tn}), 0.0, dtype=ct.float32)
    for s in range(ct.num_tiles(a, 1, shape=({tm}, {tk}))):
        x = ct.load(a, index=(ct.bid(0), s), shape=({tm}, {tk}))
        y = ct.load(b, index=(s, ct.bid(1)), shape=({tk}, {tn}))
        acc = ct.mma(x, y, acc)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc)
"""
    return ("unpadded_mma", src, [C(dt, 2), C(dt, 2), C("f32", 2)],
            dict(grid=[cdiv(m, tm), cdiv(n, tn), 1],
                 args=arr(dt, [m, k], "range:-3:4") + arr(dt, [k, n], "range:-3:4")
                 + arr("f32", [m, n])))


def unpadded_sum(rng, k):
    """A row reduction of unpadded loads of a ragged column count."""
    red = rng.choice(["sum", "max", "min"])
    tm, tn = rng.choice([8, 16, 32]), rng.choice([32, 64, 128])
    m, n = rng.randint(1, 4) * tm, rng.randint(1, 4) * tn - rng.randint(1, tn - 1)
    src = f"""
def K(x, out):
    acc = ct.load(x, index=(ct.bid(0), 0), shape=({tm}, {tn}))
    for j in range(1, ct.num_tiles(x, 1, shape=({tm}, {tn}))):
        acc = acc + ct.load(x, index=(ct.bid(0), j), shape=({tm}, {tn}))
    ct.store(out, index=(ct.bid(0),), tile=ct.{red}(acc, axis=1))
"""
    return ("unpadded_sum", src, [C("f32", 2), C("f32", 1)],
            dict(grid=[cdiv(m, tm), 1, 1],
                 args=arr("f32", [m, n], "range:-3:4") + arr("f32", [m])))


TEMPLATES = [early_exit, masked_atomic, grid_stride, unpadded_mma, unpadded_sum]


def export(name, src, deco, params, path):
    fname = f"{name}.py"
    src = "import cuda.tile as ct\n" + deco + src
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    mod = types.ModuleType(name)
    mod.__file__ = fname
    exec(compile(src, fname, "exec"), mod.__dict__)
    sig = KernelSignature(params, CallingConvention.cutile_python_v1(), symbol=name)
    export_kernel(mod.K, [sig], path, output_format="tileir_bytecode", bytecode_version="13.3")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--out", default=HERE)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    for f in os.listdir(args.out):
        if f.endswith((".tileir", ".json")):
            os.remove(os.path.join(args.out, f))
    for k in range(args.count):
        kind, src, params, case = TEMPLATES[k % len(TEMPLATES)](rng, k)
        name = f"{kind}_{k:03d}"
        deco = case.pop("decorator", "@ct.kernel")
        export(name, src, deco, params, os.path.join(args.out, name + ".tileir"))
        lines = ["{", ' "entry": %s,' % json.dumps(name),
                 ' "grid": %s,' % json.dumps(case["grid"]),
                 ' "args": [\n  ' + ",\n  ".join(json.dumps(a) for a in case["args"]) + "\n ],",
                 ' "note": %s' % json.dumps(src.strip().replace("\n", " | ")[:2000]), "}"]
        with open(os.path.join(args.out, name + ".json"), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
