# Exports the kernels of kernels.py to TileIR bytecode (13.3 unless a kernel asks for
# a later version) with cuTile Python (no GPU needed):
#   .tools/venv/bin/python tests/data/lower/kernels/gen.py
import linecache
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def load_kernels():
    """Imports kernels.py under the relative name "kernels.py", so the debug
    info cuTile writes into the bytecode names no absolute path."""
    os.chdir(HERE)
    src = open(os.path.join(HERE, "kernels.py")).read()
    linecache.cache["kernels.py"] = (len(src), None, src.splitlines(True), "kernels.py")
    mod = types.ModuleType("kernels")
    mod.__file__ = "kernels.py"
    sys.modules["kernels"] = mod
    exec(compile(src, "kernels.py", "exec"), mod.__dict__)
    return mod


kernels = load_kernels()
from cuda.tile.compilation import export_kernel, KernelSignature, CallingConvention  # noqa: E402

for spec in kernels.KERNELS:
    name = spec["name"]
    sig = KernelSignature(spec["params"], CallingConvention.cutile_python_v1(), symbol=name)
    out = os.path.join(HERE, f"{name}.tileir")
    export_kernel(spec["kernel"], [sig], out, output_format="tileir_bytecode", bytecode_version=spec["version"])
    print(name, os.path.getsize(out))
