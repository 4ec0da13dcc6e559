#!/usr/bin/env bash
# Installs everything the build and the tests need that cargo does not bring:
# NVIDIA's ptxas and nvdisasm (the back end runs them), NVIDIA's tileiras,
# tileirdisasm and cuTile Python (reference tools for comparison tests), and
# CMake (the C API tests build with it). All of it goes into `.tools/` at the
# repository root; nothing outside the checkout is touched. Safe to run again:
# it does nothing when the pinned versions are already there.
#
# Afterwards `.tools/cuda` is a CUDA root (bin/ptxas, bin/nvdisasm, ...) and
# `.tools/venv/bin` holds cmake and python.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
stamp="$tools/.installed-v2"
cuda_version=13.5.37
packages=(
  "nvidia-cuda-nvcc==$cuda_version"
  "nvidia-cuda-nvdisasm==$cuda_version"
  "nvidia-cuda-tileiras==$cuda_version"
  "nvidia-nvvm==$cuda_version"
  "cuda-tile==1.7.0"
  "cmake>=3.24,<5"
  "pkgconf>=2,<4"
)
if [ -f "$stamp" ] && [ -x "$tools/cuda/bin/ptxas" ]; then
  exit 0
fi
mkdir -p "$tools"
python3 -m venv "$tools/venv"
# On a terminal pip shows what it fetches and its progress (about 660 MB);
# in CI, or with the output going elsewhere, it stays quiet.
if [ -t 1 ] && [ -z "${CI:-}" ]; then
  echo "setup: installing NVIDIA's ptxas, nvdisasm, tileiras and libNVVM, cuTile Python and CMake into .tools/ (about 660 MB)"
  quiet=(--progress-bar on)
else
  quiet=(--quiet)
fi
"$tools/venv/bin/python" -m pip install "${quiet[@]}" --disable-pip-version-check "${packages[@]}"
site="$("$tools/venv/bin/python" -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')"
ln -sfn "$site" "$tools/cuda"
for tool in ptxas nvdisasm tileiras tileirdisasm; do
  [ -x "$tools/cuda/bin/$tool" ] || { echo "setup: $tool missing after install" >&2; exit 1; }
done
touch "$stamp"
echo "setup: tools installed under .tools/ (CUDA root .tools/cuda)"
