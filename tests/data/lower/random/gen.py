"""Writes random cuTile kernels for tests/lower_random.rs (run with the cuTile
Python venv: `.tools/venv/bin/python tests/data/lower/random/gen.py`; with
`--count N --seed S --out DIR` for a larger search, then run the test with
`LOWER_RANDOM_DIR=DIR`)."""
#
# Each program loads 1-3 input tiles (2-D, or 1-D: shapes [1, T] in the JSON;
# ragged arrays, some padding value), applies a random DAG of ops with exact
# semantics and stores the last value. The generator is deterministic (fixed
# seed). It writes `pNNN.tileirbc` (TileIR bytecode 13.3) per program and
# `programs.json`, which spells out every op (name, operands, attributes,
# dtype, shape) so that the Rust test evaluates the program independently of
# cuTile and of the compiler, and each program's launch: array shape, tile,
# grid, rank, input and output types, layout (`contiguous`, `index` type of
# shapes and strides), the trip count parameter `trips` and the scalar
# parameter's type and value.
#
# Element types: f16 bf16 f32 f64 i16 i32 u32 i64 (and bool from cmp).
# Node ops (operands are earlier node indices, `args`, in order):
#   load(input, padding)      input tile; elements past the array are the
#                             padding: zero neg_zero nan pos_inf neg_inf
#   const(value)              tile filled with value
#   add sub mul div min max   elementwise, numpy broadcasting of [T,1]/[1,T];
#                             min/max ignore a NaN operand, -0 < +0
#   and or xor not            integers only
#   shl shr (amount)          by a constant in [0, bits); shr is arithmetic
#                             for signed types, logical for u32
#   neg abs                   integers wrap (abs(MIN) = MIN)
#   cmp (pred) -> bool        lt le gt ge eq (ordered for floats), ne
#                             (unordered for floats); unsigned for u32
#   where(c, x, y)            select
#   cast (dtype)              round to nearest even; float -> int truncates
#                             (from a value clamped to [-1000, 1000], or
#                             [0, 1000] for u32); ints sign/zero-extend or wrap
#   floordiv mod              integers, rounding to -inf; mod takes the sign of
#                             the divisor (never 0 or -1)
#   sqrt                      floats, correctly rounded
#   exp                       f16 bf16 f32, within 4 ulp of f32
#   floor ceil                floats, exact
#   cat (axis)                two tiles concatenated along axis
#   iota (axis)               the index along axis ([T,1] or [1,T] tile)
#   sum max min (axis)        reduction keeping the axis (size 1)
#   broadcast                 to the full tile shape
#   transpose                 swaps the two axes
#   reshape (shape)           row-major reinterpretation
#   loop(trips param, step)   acc = init; repeat n times: acc = step(acc, v),
#                             step add max xor, or fma: acc * c + v (cuTile
#                             fuses it: one rounding)
#   param                     the scalar parameter s ([1, 1]; its value is the
#                             program's "scalar")
#   if(above, else)           -a if the trip count parameter n > above,
#                             else a + b or max(a, b)
#   loop_load(input, axis, padding, step)
#                             the same with v = tile t (t = 0, 1, ...) along
#                             axis of the input (block (t, b1) or (b0, t)),
#                             cast to the node's type; from a float input to
#                             an int type v = isnan(tile) and the step is max
# Float add/sub never take a mul result directly (cuTile would fuse them,
# even into a loop body or a branch).
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
COUNT = 120
SEED = 20261121

FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["i32", "i64", "u32", "i16"]
CT = {"f16": "ct.float16", "bf16": "ct.bfloat16", "f32": "ct.float32",
      "f64": "ct.float64", "i32": "ct.int32", "i64": "ct.int64",
      "u32": "ct.uint32", "i16": "ct.int16"}
BITS = {"i32": 32, "i64": 64, "u32": 32, "i16": 16}
INT_CONSTS = {"i32": [0, 1, -1, 7, 255, -123456, 0x12345678],
              "i64": [0, 1, -1, 7, 255, -123456, 0x123456789],
              "u32": [0, 1, 7, 255, 0x80000000, 0xfffffff0],
              "i16": [0, 1, -1, 7, 255, -32768, 0x1234]}
TILES = [(8, 16), (16, 16), (4, 32), (16, 8), (8, 8), (32, 4), (32, 32), (1, 64),
         (64, 2), (2, 32), (64, 32), (2, 2), (4, 4), (1, 8), (8, 1), (128, 2), (2, 128)]
PADDING = {"zero": "ZERO", "neg_zero": "NEG_ZERO", "nan": "NAN", "pos_inf": "POS_INF",
           "neg_inf": "NEG_INF"}
PY_BIN = {"add": "({a} + {b})", "sub": "({a} - {b})", "mul": "({a} * {b})",
          "div": "({a} / {b})", "min": "ct.minimum({a}, {b})",
          "max": "ct.maximum({a}, {b})", "and": "({a} & {b})",
          "or": "({a} | {b})", "xor": "({a} ^ {b})"}
PY_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
FLOAT_CONSTS = [0.5, -1.0, 1.5, 2.0, -0.25, 3.0, 0.0]


class Program:
    def __init__(self, rng, index):
        self.rng = rng
        self.name = f"p{index:03d}"
        # a quarter of the programs work on 1-D arrays: shapes [1, T] here
        self.rank = 1 if rng.random() < 0.25 else 2
        if self.rank == 1:
            self.tile = [1, rng.choice([4, 16, 32, 64, 128, 256])]
        else:
            self.tile = list(rng.choice(TILES))
        # array shapes and strides as i32 or i64 parameters; generic or contiguous arrays
        self.index_dt = "i64" if rng.random() < 0.25 else "i32"
        self.contiguous = rng.random() < 0.5
        self.nodes = []
        self.lines = []
        self.has_loop = False
        self.used = set()
        self.scalar = None
        self.scalars = set()
        r = rng.random()
        self.dtype = ("f32" if r < 0.35 else "i32" if r < 0.55 else
                      rng.choice(["f16", "bf16", "f64", "i64", "u32", "i16"]))
        self.inputs = []
        for _ in range(rng.randint(1, 3)):
            other = rng.choice(["i32", "f32", "f16", "i64", "u32"])
            self.inputs.append(self.dtype if rng.random() < 0.75 else other)

    # -- building ------------------------------------------------------------

    def add(self, py, **node):
        node.setdefault("shape", self.tile)
        for a in node.get("args", []):
            self.used.add(a)
        self.nodes.append(node)
        i = len(self.nodes) - 1
        self.note_scalar(i)
        self.lines.append(f"v{i} = {py}")
        return i

    def full(self, i):
        return self.nodes[i]["shape"] == self.tile

    def note_scalar(self, i):
        """Tracks 0-d values (the scalar parameter and what only it feeds),
        which cuTile types apart from [1, 1] tiles."""
        n = self.nodes[i]
        if n["op"] == "param" or (n.get("args") and n["op"] not in ("broadcast", "iota")
                                  and all(a in self.scalars for a in n["args"])):
            self.scalars.add(i)

    def ps(self, shape):
        """The cuTile shape of a node shape (1-D programs drop the leading 1)."""
        if self.rank == 1 and shape[0] == 1:
            return f"({shape[1]},)"
        return f"({shape[0]}, {shape[1]})"

    def fits(self, i):
        """Whether node i broadcasts to the tile shape."""
        return all(x in (1, t) for x, t in zip(self.nodes[i]["shape"], self.tile))

    def dt(self, i):
        return self.nodes[i]["dtype"]

    def pick(self, dtype=None, full=False, avoid=None):
        cands = [i for i, n in enumerate(self.nodes)
                 if n["dtype"] != "bool" and (dtype is None or n["dtype"] == dtype)
                 and self.fits(i)
                 and (not full or self.full(i)) and i != avoid]
        if not cands:
            return None
        # prefer unused values, then recent ones, so the DAG gets deep and live
        fresh = [i for i in cands if i not in self.used]
        if fresh and self.rng.random() < 0.7:
            return self.rng.choice(fresh)
        return cands[-1] if self.rng.random() < 0.5 else self.rng.choice(cands)

    def value(self, dtype, avoid=None):
        """Any value of dtype: an existing one, else a cast or a constant."""
        i = self.pick(dtype, avoid=avoid)
        if i is not None:
            return i
        j = self.pick(full=True)
        if j is not None and self.rng.random() < 0.7:
            return self.cast(j, dtype)
        return self.const(dtype)

    def const(self, dtype, shape=None):
        rng = self.rng
        if dtype in FLOATS:
            v = rng.choice(FLOAT_CONSTS)
        else:
            v = rng.choice(INT_CONSTS[dtype])
        return self.const_value(dtype, v)

    def cast(self, i, dtype):
        if self.dt(i) == dtype:
            return i
        if self.dt(i) in FLOATS and dtype in INTS:
            # float -> int only from a clamped value (no NaN: inputs are finite
            # and a safe division never makes one)
            low = 0.0 if dtype == "u32" else -1000.0
            lo = self.binop("max", i, self.const_value(self.dt(i), low))
            i = self.binop("min", lo, self.const_value(self.dt(i), 1000.0))
        return self.add(f"ct.astype(v{i}, {CT[dtype]})", op="cast", args=[i],
                        dtype=dtype, shape=self.nodes[i]["shape"])

    def const_value(self, dtype, v):
        return self.add(f"ct.full({self.ps(self.tile)}, {v!r}, {CT[dtype]})",
                        op="const", value=v, dtype=dtype)

    def fuses(self, a, b):
        """Whether a float add of a and b would take a mul result (which
        cuTile fuses into one fma)."""
        return self.dt(a) in FLOATS and "mul" in (self.nodes[a]["op"], self.nodes[b]["op"])

    def binop(self, op, a, b):
        sa, sb = self.nodes[a]["shape"], self.nodes[b]["shape"]
        shape = [max(x, y) for x, y in zip(sa, sb)]
        if op in ("add", "sub") and self.fuses(a, b):
            # cuTile would fuse the two into one fma (one rounding)
            op = "max"
        return self.add(PY_BIN[op].format(a=f"v{a}", b=f"v{b}"), op=op, args=[a, b],
                        dtype=self.dt(a), shape=shape)

    def step(self):
        rng = self.rng
        d = self.dtype if rng.random() < 0.8 else rng.choice(FLOATS + INTS)
        is_float = d in FLOATS
        kind = rng.choices(
            ["bin", "unary", "bits", "shift", "select", "cast", "reduce", "perm", "loop", "const",
             "divmod", "sqrt", "iota", "exp", "if", "param", "round", "cat"],
            [30, 8, 10 if not is_float else 0, 6 if not is_float else 0, 8, 6, 6, 8, 4, 2,
             4 if not is_float else 0, 3 if is_float else 0, 3, 3 if is_float else 0, 3, 3, 3 if is_float else 0, 4])[0]
        if kind == "round":
            a = self.value(d)
            op = rng.choice(["floor", "ceil"])
            return self.add(f"ct.{op}(v{a})", op=op, args=[a], dtype=d,
                            shape=self.nodes[a]["shape"])
        if kind == "cat":
            # two full tiles concatenated along an axis, reduced along it
            a = self.pick(d, full=True)
            b = self.pick(d, full=True, avoid=a)
            if a is None:
                return self.value(d)
            b = a if b is None else b
            axis = 1 if self.rank == 1 else rng.randrange(2)
            shape = list(self.tile)
            shape[axis] *= 2
            c = self.add(f"ct.cat((v{a}, v{b}), {axis + self.rank - 2})", op="cat",
                         args=[a, b], axis=axis, dtype=d, shape=shape)
            op = rng.choice(["sum", "max", "min"])
            shape = list(self.tile)
            shape[axis] = 1
            return self.add(f"ct.{op}(v{c}, axis={axis + self.rank - 2}, keepdims=True)",
                            op=op, args=[c], axis=axis, dtype=d, shape=shape)
        if kind == "param":
            # the scalar parameter s (one per program), a [1, 1] value here
            if self.scalar is not None:
                return self.value(d)
            self.scalar = d
            return self.add("s", op="param", dtype=d, shape=[1, 1])
        if kind == "if":
            # a runtime branch on the trip count parameter: neg(a) or a + b
            # (max(a, b) where a float add would take a mul result: cuTile
            # fuses them even across the branch)
            a = self.value(d)
            b = self.value(d, avoid=a)
            shape = self.nodes[a]["shape"]
            if self.nodes[b]["shape"] != shape or (a in self.scalars) != (b in self.scalars):
                b = a
            other = "max" if self.fuses(a, b) else "add"
            k = rng.randrange(4)
            self.has_loop = True
            i = len(self.nodes)
            self.nodes.append({"op": "if", "args": [a, b], "above": k, "else": other,
                               "dtype": d, "shape": shape})
            self.note_scalar(i)
            self.lines += [f"if n > {k}:", f"    v{i} = -v{a}", "else:",
                           f"    v{i} = " + PY_BIN[other].format(a=f"v{a}", b=f"v{b}")]
            self.used.update([a, b])
            return i
        if kind == "exp":
            a = self.value(d)
            return self.add(f"ct.exp(v{a})", op="exp", args=[a], dtype=d,
                            shape=self.nodes[a]["shape"])
        if kind == "divmod":
            a = self.value(d)
            b = self.value(d, avoid=a)
            # a divisor in [2, 127], negated for signed types half the time
            m = self.binop("and", b, self.const_value(d, 0x7f))
            q = self.binop("or", m, self.const_value(d, 2))
            if d != "u32" and rng.random() < 0.5:
                q = self.add(f"(-v{q})", op="neg", args=[q], dtype=d, shape=self.nodes[q]["shape"])
            op = rng.choice(["floordiv", "mod"])
            sym = "//" if op == "floordiv" else "%"
            shape = [max(x, y) for x, y in zip(self.nodes[a]["shape"], self.nodes[q]["shape"])]
            return self.add(f"(v{a} {sym} v{q})", op=op, args=[a, q], dtype=d, shape=shape)
        if kind == "sqrt":
            a = self.value(d)
            return self.add(f"ct.sqrt(v{a})", op="sqrt", args=[a], dtype=d,
                            shape=self.nodes[a]["shape"])
        if kind == "iota":
            axis = 1 if self.rank == 1 else rng.randrange(2)
            shape = [1, 1]
            shape[axis] = self.tile[axis]
            it = d if d in ("i32", "i64") else "i32"
            i = self.add(f"ct.reshape(ct.arange({self.tile[axis]}, dtype={CT[it]}), "
                         f"{self.ps(shape)})", op="iota", axis=axis, dtype=it, shape=shape)
            return self.cast(i, d) if rng.random() < 0.5 else i
        if kind == "bin":
            op = rng.choice(["add", "sub", "mul", "div", "min", "max"] if is_float else
                            ["add", "sub", "mul", "min", "max"])
            a = self.value(d)
            b = self.value(d, avoid=a)
            if not (self.full(a) or self.full(b)) and self.nodes[a]["shape"] != self.nodes[b]["shape"]:
                b = self.pick(d, full=True)
                b = self.const(d) if b is None else b
            if op == "div":
                # a / (|b| + 1): never 0/0
                ab = self.add(f"ct.abs(v{b})", op="abs", args=[b], dtype=d,
                              shape=self.nodes[b]["shape"])
                one = self.const_value(d, 1.0)
                b = self.binop("add", ab, one)
            return self.binop(op, a, b)
        if kind == "unary":
            a = self.value(d)
            if d in INTS and rng.random() < 0.3:
                return self.add(f"(~v{a})", op="not", args=[a], dtype=d,
                                shape=self.nodes[a]["shape"])
            if rng.random() < 0.5 or d == "u32":
                return self.add(f"(-v{a})", op="neg", args=[a], dtype=d, shape=self.nodes[a]["shape"])
            return self.add(f"ct.abs(v{a})", op="abs", args=[a], dtype=d, shape=self.nodes[a]["shape"])
        if kind == "bits":
            a = self.value(d)
            return self.binop(rng.choice(["and", "or", "xor"]), a, self.value(d, avoid=a))
        if kind == "shift":
            a = self.value(d)
            amt = rng.randrange(BITS[d])
            op = rng.choice(["shl", "shr"])
            sym = "<<" if op == "shl" else ">>"
            return self.add(f"(v{a} {sym} {amt})", op=op, args=[a], amount=amt, dtype=d,
                            shape=self.nodes[a]["shape"])
        if kind == "select":
            cd = rng.choice([d, d, rng.choice(FLOATS + INTS)])
            pred = rng.choice(["lt", "le", "gt", "ge", "eq", "ne"])
            x = self.value(cd)
            y = self.value(cd, avoid=x)
            if not self.full(x):
                x, y = y, x
            if not self.full(x):
                x = self.pick(cd, full=True)
                x = self.const(cd) if x is None else x
            c = self.add(f"(v{x} {PY_CMP[pred]} v{y})", op="cmp", pred=pred, args=[x, y],
                         dtype="bool")
            t = self.pick(d, full=True)
            if t is None:
                t = self.const(d)
            f = self.value(d, avoid=t)
            return self.add(f"ct.where(v{c}, v{t}, v{f})", op="where", args=[c, t, f], dtype=d)
        if kind == "cast":
            a = self.pick(full=True)
            if a is None:
                return self.value(d)
            if d == self.dt(a):
                d = rng.choice([x for x in FLOATS + INTS if x != d])
            return self.cast(a, d)
        if kind == "reduce":
            a = self.pick(d, full=True)
            if a is None:
                return self.value(d)
            op = rng.choice(["sum", "max", "min"])
            axis = 1 if self.rank == 1 else rng.randrange(2)
            shape = list(self.tile)
            shape[axis] = 1
            return self.add(f"ct.{op}(v{a}, axis={axis + self.rank - 2}, keepdims=True)",
                            op=op, args=[a],
                            axis=axis, dtype=d, shape=shape)
        if kind == "perm":
            a = self.pick(full=True)
            if a is None:
                return self.value(d)
            dd = self.dt(a)
            tm, tn = self.tile
            if rng.random() < 0.4 or self.rank == 1:
                # a general permutation: reshape to (p, q), transpose, reshape back
                q = rng.choice([k for k in (1, 2, 4, 8, 16)
                                if (tm * tn) % k == 0 and (self.rank == 2 or 1 < k < tm * tn)])
                p = tm * tn // q
                r = self.add(f"ct.reshape(v{a}, ({p}, {q}))", op="reshape", args=[a],
                             dtype=dd, shape=[p, q])
                t = self.add(f"ct.transpose(v{r})", op="transpose", args=[r], dtype=dd,
                             shape=[q, p])
                if rng.random() < 0.5:
                    u = "not" if dd in INTS else "neg"
                    t = self.add(f"({'~' if u == 'not' else '-'}v{t})", op=u, args=[t],
                                 dtype=dd, shape=[q, p])
                return self.add(f"ct.reshape(v{t}, {self.ps(self.tile)})", op="reshape", args=[t],
                                dtype=dd)
            if tm == tn and rng.random() < 0.5:
                return self.add(f"ct.transpose(v{a})", op="transpose", args=[a], dtype=dd)
            r = self.add(f"ct.reshape(v{a}, ({tn}, {tm}))", op="reshape", args=[a],
                         dtype=dd, shape=[tn, tm])
            return self.add(f"ct.transpose(v{r})", op="transpose", args=[r], dtype=dd)
        if kind == "loop":
            # the loop-carried value may be a row or column ([T, 1] or [1, T])
            a = self.pick(d)
            v = self.value(d)
            if a is None:
                a = self.const(d)
            shape = self.nodes[a]["shape"]
            if (any(x not in (1, y) for x, y in zip(self.nodes[v]["shape"], shape))
                    or (a in self.scalars and v not in self.scalars)):
                v = a
            step = rng.choice(["add", "max", "fma"] + (["xor"] if not is_float else []))
            if step == "add" and self.fuses(v, v):
                step = "max"
            self.has_loop = True
            i = len(self.nodes)
            c = 0.5 if is_float else 3
            node = {"op": "loop", "args": [a, v], "step": step, "c": c, "dtype": d,
                    "shape": shape}
            operand = f"v{v}"
            k = rng.randrange(len(self.inputs))
            if rng.random() < 0.5 and shape == self.tile:
                # load tile t of an input along an axis: block (b0, t), (t, b1) or (t,)
                axis = 1 if self.rank == 1 else rng.randrange(2)
                index = "(t,)" if self.rank == 1 else ["(t, b1)", "(b0, t)"][axis]
                pad = rng.choice(list(PADDING)) if self.inputs[k] in FLOATS else "zero"
                operand = (f"ct.load(x{k}, index={index}, shape={self.ps(self.tile)}, "
                           f"padding_mode=ct.PaddingMode.{PADDING[pad]})")
                if self.inputs[k] != d:
                    operand = f"ct.astype({operand}, {CT[d]})"
                node.update(op="loop_load", args=[a], input=k, axis=axis, padding=pad)
                if d in INTS and self.inputs[k] in FLOATS:
                    # float -> int only from a clamped value
                    node["step"] = step = "max"
                    operand = f"ct.astype(ct.isnan(ct.load(x{k}, index={index}, shape={self.ps(self.tile)}, padding_mode=ct.PaddingMode.{PADDING[pad]})), {CT[d]})"
                    node["isnan"] = True
            self.nodes.append(node)
            self.note_scalar(i)
            self.lines.append(f"acc = v{a}")
            self.lines.append("for t in range(n):")
            self.lines.append("    acc = " + {"add": "acc + {v}", "max": "ct.maximum(acc, {v})",
                                              "xor": "acc ^ {v}", "fma": "acc * {c} + {v}"}[step]
                              .format(v=operand, c=c))
            self.lines.append(f"v{i} = acc")
            return i
        return self.const(d)

    def build(self):
        tm, tn = self.tile
        for k, d in enumerate(self.inputs):
            pad = self.rng.choice(list(PADDING)) if d in FLOATS else "zero"
            self.add(f"ct.load(x{k}, index={self.index()}, shape={self.ps(self.tile)}, "
                     f"padding_mode=ct.PaddingMode.{PADDING[pad]})",
                     op="load", input=k, padding=pad, dtype=d)
        for _ in range(self.rng.randint(3, 12)):
            self.step()
        last = len(self.nodes) - 1
        # fold every unused value into the result so that nothing is dead
        for r in range(len(self.nodes) - 1):
            n = self.nodes[r]
            if r in self.used or n["dtype"] == "bool" or not self.fits(r):
                continue
            if self.dt(r) != self.dt(last):
                if not self.full(r):
                    continue
                r = self.cast(r, self.dt(last))
            op = self.rng.choice(["add", "sub"] if self.dt(last) in FLOATS else ["add", "xor"])
            if self.full(last) or self.full(r) or self.nodes[r]["shape"] == self.nodes[last]["shape"]:
                last = self.binop(op, last, r)
        if not self.full(last):
            full = self.pick(self.dt(last), full=True)
            if full is not None and self.rng.random() < 0.5:
                last = self.binop("add", full, last)
            else:
                last = self.add(f"ct.broadcast_to(v{last}, {self.ps(self.tile)})", op="broadcast",
                                args=[last], dtype=self.dt(last))
        self.out = last

    def index(self):
        return "(b0,)" if self.rank == 1 else "(b0, b1)"

    def source(self):
        params = [f"x{k}" for k in range(len(self.inputs))] + ["out"]
        if self.has_loop:
            params.append("n")
        if self.scalar:
            params.append("s")
        body = ["b0 = ct.bid(0)", "b1 = ct.bid(1)"][:self.rank] + self.lines
        body.append(f"ct.store(out, index={self.index()}, tile=v{self.out})")
        return (f"@ct.kernel\ndef {self.name}({', '.join(params)}):\n"
                + "".join(f"    {ln}\n" for ln in body))

    def describe(self):
        rng = self.rng
        tm, tn = self.tile
        m = 1 if self.rank == 1 else tm * rng.randint(1, 3) - rng.randrange(tm)
        n = tn * rng.randint(1, 3) - rng.randrange(tn)
        grid = [-(-n // tn), 1, 1] if self.rank == 1 else [-(-m // tm), -(-n // tn), 1]
        return {"name": self.name, "rank": self.rank, "index": self.index_dt,
                "contiguous": self.contiguous, "tile": self.tile, "shape": [m, n],
                "grid": grid, "inputs": self.inputs,
                "output": self.dt(self.out), "trips": rng.randint(0, 4) if self.has_loop else None,
                "scalar_dtype": self.scalar,
                "scalar": self.scalar and (rng.choice(FLOAT_CONSTS) if self.scalar in FLOATS
                                           else rng.choice(INT_CONSTS[self.scalar])),
                "nodes": self.nodes, "out": self.out}


def array(dtype, prog):
    """A generic strided array, or a C-contiguous one (unit last stride, other
    strides a multiple of 16 bytes, 16-byte aligned base)."""
    rank = prog.rank
    index = ct.int64 if prog.index_dt == "i64" else ct.int32
    if not prog.contiguous:
        return ArrayConstraint(dtype, rank, index_dtype=index, stride_lower_bound_incl=0,
                               alias_groups=(), may_alias_internally=False)
    elems16 = 128 // dtype.bitwidth
    return ArrayConstraint(dtype, rank, index_dtype=index, stride_lower_bound_incl=0,
                           alias_groups=(), may_alias_internally=False,
                           stride_constant=(None,) * (rank - 1) + (1,),
                           stride_divisible_by=(elems16,) * (rank - 1) + (1,),
                           base_addr_divisible_by=16)


def export(prog, src):
    fname = f"{prog.name}.py"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    mod = types.ModuleType(prog.name)
    mod.__file__ = fname
    exec(compile("import cuda.tile as ct\n" + src, fname, "exec"),
         mod.__dict__)
    consts = [array(eval(CT[d]), prog) for d in prog.inputs + [prog.dt(prog.out)]]
    if prog.has_loop:
        consts.append(ScalarConstraint(ct.int32))
    if prog.scalar:
        consts.append(ScalarConstraint(eval(CT[prog.scalar])))
    sig = KernelSignature(consts, CallingConvention.cutile_python_v1(), symbol=prog.name)
    export_kernel(getattr(mod, prog.name), [sig], f"{prog.name}.tileirbc",
                  output_format="tileir_bytecode", bytecode_version="13.3")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=COUNT)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--out", default=HERE, help="output folder (default: this one)")
    ap.add_argument("--show", action="store_true", help="print each kernel's source")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    os.chdir(args.out)
    for f in os.listdir("."):
        if f.endswith(".tileirbc"):
            os.remove(f)
    programs = []
    while len(programs) < args.count:
        prog = Program(rng, len(programs))
        prog.build()
        src = prog.source()
        if args.show:
            print(src)
        export(prog, src)
        programs.append(prog.describe())
    with open("programs.json", "w") as f:
        json.dump(programs, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
