# Writes differential cases for the cuTile attention kernels that an H100
# run found this compiler refusing (status 4, their operands' scratch did not
# fit shared memory side by side): the bytecode cuTile Python wrote there
# (tests/data/repro/) with arguments for one or two tile
# blocks of head 0. Run from this folder: python3 gen.py
# (The decode kernel, 64x256 tiles, is left out: the emulator stops NVIDIA's
# sm_80 PTX of it at a read of shared memory nothing wrote.)
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
REPRO = os.path.join(HERE, "../../repro")


def array(init, b, h, s, d):
    """A [b, h, s, d] f16/bf16 array: pointer, shape, strides (in elements)."""
    return ([{"buffer": {"elem": ELEM, "len": b * h * s * d, "init": init}}]
            + [{"scalar": {"ty": "i32", "value": v}} for v in (b, h, s, d)]
            + [{"scalar": {"ty": "i32", "value": v}} for v in (h * s * d, s * d, d, 1)])


def case(name, src, grid, q, kv, note):
    # tests/data/repro names no folder of the machine that ran cuTile
    shutil.copyfile(os.path.join(REPRO, f"{src}.tileir"), os.path.join(HERE, f"{name}.tileir"))
    args = (array("range:-2:3", *q) + array("range:-2:3", *kv) + array("range:-2:3", *kv)
            + array("zeros", *q)
            + [{"scalar": {"ty": "f32", "value": 0.08838834764831845}},
               {"scalar": {"ty": "i32", "value": 0}}])
    with open(os.path.join(HERE, f"{name}.json"), "w") as f:
        json.dump({"grid": grid, "args": args, "ulp": 8,
                   "note": f"cuTile's fmha_kernel (kernels/attention.py), head dim 128, {note}"},
                  f, indent=1)


ELEM = "f16"
case("fmha_d128_causal_128x128", "fmha_d128_causal8k_128x128", [2, 1, 1],
     (1, 32, 256, 128), (1, 32, 256, 128), "causal, 128x128 tiles, query and key length 256")
ELEM = "bf16"
case("fmha_d128_bf16_gqa_128x128", "fmha_d128_bf16_gqa_128x128", [2, 1, 1],
     (1, 32, 256, 128), (1, 8, 256, 128), "bf16, 4 query heads per key head, causal, 128x128 tiles")


def matmul_array(init, rows, cols, output=False):
    """A [rows, cols] f16 array: pointer, shape, strides (in elements)."""
    return ([{"buffer": {"elem": "f16", "len": rows * cols, "init": init, "output": output}}]
            + [{"scalar": {"ty": "i32", "value": v}} for v in (rows, cols, cols, 1)])


# cuTile's persistent matmul as the H100 run compiled it (256x256x64 tiles,
# 2-CTA tile blocks): one tile block, K = 160 (three steps, the last one
# ragged, so the two-stage rings wrap). Integers in [-4, 4): exact sums.
M, N, K = 256, 256, 160
shutil.copyfile(os.path.join(REPRO, "persistent_matmul_kernel.tileir"),
                os.path.join(HERE, "persistent_matmul_256x256x64.tileir"))
with open(os.path.join(HERE, "persistent_matmul_256x256x64.json"), "w") as f:
    json.dump({"grid": [2, 1, 1],
               "args": (matmul_array("range:-4:4", M, K) + matmul_array("range:-4:4", K, N)
                        + matmul_array("zeros", M, N, True)),
               "ulp": 0,
               "note": "cuTile's persistent_matmul_kernel (kernels/matmul.py), f16, 256x256x64 "
                       "tiles, 2-CTA tile blocks: 256x256x160, one tile block, the last K step "
                       "ragged"},
              f, indent=1)
