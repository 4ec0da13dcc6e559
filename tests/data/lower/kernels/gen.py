# Exports the kernels of kernels.py to TileIR bytecode 13.3 with cuTile
# Python (no GPU needed):  .tools/venv/bin/python tests/data/lower/kernels/gen.py
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kernels  # noqa: E402
from cuda.tile.compilation import export_kernel, KernelSignature, CallingConvention  # noqa: E402

for spec in kernels.KERNELS:
    name = spec["name"]
    sig = KernelSignature(spec["params"], CallingConvention.cutile_python_v1(), symbol=name)
    out = os.path.join(HERE, f"{name}.tileir")
    export_kernel(spec["kernel"], [sig], out, output_format="tileir_bytecode", bytecode_version="13.3")
    print(name, os.path.getsize(out))
