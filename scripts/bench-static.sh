#!/usr/bin/env bash
# Static benchmark of large-tile kernels, ours against NVIDIA's (not a timed test: nothing
# runs on a GPU). For each kernel of tests/data/differential/bench (cuTile's benchmark
# kernels at their benchmark tiles) and each tests/data/repro/fmha_*.tileir, and for each target sm_80, sm_90, sm_100, sm_120, it
# compiles the bytecode with our tileiras (--emit=ptx) and with NVIDIA's (its PTX captured
# by a ptxas wrapper beside a copy of it), assembles both PTX files with the same ptxas
# flags (`--opt-level 3 --enable-extended-smem=true -v`, arch sm_80/sm_90a/sm_100a/
# sm_120a, as scripts/bench-codegen.sh; NVIDIA's tileiras gives its ptxas these too, plus
# its host-object options), and prints one markdown table row per
# (kernel, target), each cell "ours / NVIDIA's":
#   status      ok, or the exit status and the first words of the error
#   regs        registers ptxas reports for the entry (at launch: a kernel that raises
#               its warps' registers with setmaxnreg uses more later)
#   spill st/ld spill store and spill load bytes
#   smem        shared memory bytes (ptxas' static smem; both compilers declare it static)
#   threads     .reqntid (or "<=" .maxntid), "c2" for a 2-CTA cluster
#   loop        instructions in the largest loop of the SASS (nvdisasm -c of the cubin:
#               from a backward branch's target to the branch, NOPs included)
#   TC, BAR     tensor-core instructions (HMMA, HGMMA, IMMA, QMMA, OMMA, UTC*) and
#               barriers (BAR.*) in that loop
#   TMA         TMA copies in the PTX (cp.async.bulk.tensor)
#   mbar        mbarrier operations in the PTX
#   maxnreg     setmaxnreg instructions in the PTX
#   MMA         tensor-core instructions in the PTX (wgmma.mma_async, mma.sync, tcgen05.mma)
#   cp.async    cp.async copies in the PTX (not their commits and waits)
#   maps        hidden tensor-map parameters of the entry
#   spill-free  whether our code has no spill stores or loads
# Needs scripts/setup.sh (.tools/cuda: ptxas, nvdisasm, NVIDIA's tileiras and libnvvm).
#   scripts/bench-static.sh [--gpu sm_90] [--ours-only] [name-filter ...]
# --gpu may be repeated or comma-separated; a filter keeps the kernels whose name
# (e.g. bench/matmul_f16_128x256x64, repro/fmha_d128_decode_64x256) contains it.
# --ours-only leaves NVIDIA's side out (its cells read "-"): a before/after comparison of
# our code alone takes seconds a row, not a minute. TILEIRAS names another build of our
# tileiras to measure (default: this checkout's, built first).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cuda="${CUDA_ROOT:-$here/.tools/cuda}"
repro="${REPRO:-$here/tests/data/repro}"
gpus=()
filters=()
ours_only=
while [ $# -gt 0 ]; do
  case "$1" in
    --ours-only) ours_only=1; shift ;;
    --gpu) IFS=, read -ra g <<<"$2"; gpus+=("${g[@]}"); shift 2 ;;
    --gpu=*) IFS=, read -ra g <<<"${1#--gpu=}"; gpus+=("${g[@]}"); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d;s/^# \{0,1\}//'; exit 0 ;;
    *) filters+=("$1"); shift ;;
  esac
done
[ ${#gpus[@]} -gt 0 ] || gpus=(sm_80 sm_90 sm_100 sm_120)
for t in ptxas nvdisasm tileiras; do
  [ -x "$cuda/bin/$t" ] || { echo "bench-static: $cuda/bin/$t missing (run scripts/setup.sh)" >&2; exit 1; }
done

kernels=()
for f in "$here"/tests/data/differential/bench/*.tileir; do kernels+=("bench/$(basename "$f" .tileir)=$f"); done
if [ -d "$repro" ]; then
  for f in "$repro"/fmha_*.tileir; do [ -f "$f" ] && kernels+=("repro/$(basename "$f" .tileir)=$f"); done
fi
if [ ${#filters[@]} -gt 0 ]; then
  kept=()
  for k in "${kernels[@]}"; do
    for p in "${filters[@]}"; do [[ "${k%%=*}" == *"$p"* ]] && { kept+=("$k"); break; }; done
  done
  kernels=("${kept[@]+"${kept[@]}"}")
fi
[ ${#kernels[@]} -gt 0 ] || { echo "bench-static: no kernel matches" >&2; exit 1; }

if [ -n "${TILEIRAS:-}" ]; then
  ours="$TILEIRAS"
  [ -x "$ours" ] || { echo "bench-static: TILEIRAS=$ours is not an executable" >&2; exit 1; }
else
  cargo build --release --quiet --bin tileiras --manifest-path "$here/Cargo.toml"
  ours="${CARGO_TARGET_DIR:-$here/target}/release/tileiras"
fi
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

# NVIDIA's tileiras runs the ptxas beside its resolved path (so a hard link or a copy, not
# a symbolic link) and loads ../lib/libnvvm.so.4: a shadow tree whose ptxas saves the .ptx
# it is given and then runs the real one.
mkdir -p "$tmp/nv/bin" "$tmp/nv/lib"
ln "$cuda/bin/tileiras" "$tmp/nv/bin/tileiras" 2>/dev/null || cp "$cuda/bin/tileiras" "$tmp/nv/bin/tileiras"
ln -s "$(readlink -f "$cuda/lib/libnvvm.so.4")" "$tmp/nv/lib/libnvvm.so.4"
cat >"$tmp/nv/bin/ptxas" <<EOF
#!/bin/sh
for a in "\$@"; do
  case "\$a" in *.ptx) cp "\$a" "\$BENCH_STATIC_PTX" ;; esac
done
exec "$(readlink -f "$cuda/bin/ptxas")" "\$@"
EOF
chmod +x "$tmp/nv/bin/ptxas"

# One side's cells from its PTX, ptxas log and SASS: regs st ld smem threads loop tc bar.
cat >"$tmp/facts.py" <<'EOF'
import re, sys
ptx, log, sass = (open(p, errors="replace").read() for p in sys.argv[1:4])
m = re.search(r"Compiling entry function '([^']+)'(.*?)(?=Compiling entry function|\Z)", log, re.S)
body = m.group(2) if m else log
def num(pat):
    m = re.search(pat, body)
    return m.group(1) if m else "-"
regs = num(r"Used (\d+) registers")
st = num(r"(\d+) bytes spill stores")
ld = num(r"(\d+) bytes spill loads")
smem = num(r"(\d+) bytes smem")
if smem == "-" and regs != "-":
    smem = "0"
m = re.search(r"\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", ptx)
threads = "-"
if m:
    n = 1
    for g in m.groups():
        n *= int(g or 1)
    threads = str(n)
else:
    m = re.search(r"\.maxntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", ptx)
    if m:
        n = 1
        for g in m.groups():
            n *= int(g or 1)
        threads = "<=%d" % n
m = re.search(r"\.reqnctapercluster\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", ptx)
if m:
    n = 1
    for g in m.groups():
        n *= int(g or 1)
    if n > 1:
        threads += " c%d" % n
# The largest loop: the longest span from a backward branch's target to the branch.
lines, at, pending, loops = [], {}, [], []
for line in sass.splitlines():
    m = re.match(r"^(\.L_x_\d+):", line)
    if m:
        pending.append(m.group(1))
        continue
    m = re.match(r"^\s+/\*([0-9a-f]{4,})\*/\s*(.*)", line)
    if not m:
        continue
    a = int(m.group(1), 16)
    for l in pending:
        at[l] = len(lines)
    pending = []
    lines.append(m.group(2))
    # "@P0 BRA `(.L_x_1)", "BRA.U !UP0, `(.L_x_1)"
    b = re.search(r"\bBRA\S*\s+(?:!?U?P\w+\s*,\s*)?`\((\.L_x_\d+)\)", m.group(2))
    if b and at.get(b.group(1), len(lines)) < len(lines) - 1:
        loops.append((at[b.group(1)], len(lines) - 1))
loop = tc = bar = "-"
if sass.strip():
    loop = tc = bar = 0
    if loops:
        lo, hi = max(loops, key=lambda l: l[1] - l[0])
        body = [re.sub(r"^@!?U?P\w+\s+", "", l) for l in lines[lo:hi + 1]]
        ops = [l.split()[0] if l.split() else "" for l in body]
        loop = hi - lo + 1
        tc = sum(1 for o in ops if re.match(r"(HMMA|HGMMA|IMMA|IGMMA|QMMA|QGMMA|OMMA|UTC\w*MMA|UTC)", o))
        bar = sum(1 for o in ops if re.match(r"BAR(\.|$)", o))
# what the PTX issues: TMA copies, mbarrier operations, setmaxnreg,
# tensor-core instructions, cp.async copies, hidden tensor maps
def insts(pat):
    return str(len(re.findall(r"^\s*(?:@!?%p\d+\s+)?" + pat, ptx, re.M)))
ptx_counts = [
    insts(r"cp\.async\.bulk\.tensor"),
    insts(r"(?:cp\.async\.)?mbarrier\."),
    insts(r"setmaxnreg\."),
    insts(r"(?:wgmma\.mma_async|mma\.sync|tcgen05\.mma)"),
    insts(r"cp\.async\.c[ag]\b"),
    str(len(re.findall(r"\.hidden\s+\.param\s+\.align\s+64\s+\.b8\s+\w+\[128\]", ptx))),
]
print(regs, st, ld, smem, threads.replace(" ", "_"), loop, tc, bar, *ptx_counts)
EOF

# The first words of a failed compile's message.
first_error() {
  local m
  m=$(grep -m1 -oE 'error *: .*' "$1" 2>/dev/null || true)
  [ -n "$m" ] || m=$(grep -m1 -v '^\s*$' "$1" 2>/dev/null || true)
  m=${m#error*: }
  m=${m//|/\\|}
  if [ ${#m} -gt 80 ]; then m="${m:0:80}"; m="${m% *} ..."; fi
  printf '%s' "$m"
}

# compile SIDE GPU FILE: leaves $tmp/SIDE.ptx (when there is one) and sets status.
compile() {
  local side=$1 gpu=$2 f=$3 rc=0
  rm -f "$tmp/$side.ptx" "$tmp/$side.err"
  if [ "$side" = ours ]; then
    CUDA_ROOT="$cuda" timeout 900 "$ours" --gpu-name="$gpu" --emit=ptx "$f" -o "$tmp/$side.ptx" \
      2>"$tmp/$side.err" >/dev/null || rc=$?
  else
    env -u CUDA_ROOT -u CUDA_HOME -u CUDA_PATH BENCH_STATIC_PTX="$tmp/$side.ptx" timeout 900 \
      "$tmp/nv/bin/tileiras" --gpu-name "$gpu" "$f" -o "$tmp/$side.cubin" \
      2>"$tmp/$side.err" >/dev/null || rc=$?
  fi
  if [ $rc -eq 0 ] && [ -s "$tmp/$side.ptx" ]; then
    status=ok
  elif [ $rc -eq 0 ]; then
    status="no PTX"; rm -f "$tmp/$side.ptx"
  else
    status="rc $rc: $(first_error "$tmp/$side.err")"
    # NVIDIA's ptxas failing after its PTX was written: the PTX still counts
    [ "$side" = nv ] && [ -s "$tmp/$side.ptx" ] || rm -f "$tmp/$side.ptx"
  fi
}

# assemble SIDE ARCH: ptxas -v and nvdisasm of the PTX; sets facts (14 words).
assemble() {
  local side=$1 arch=$2 rc=0
  : >"$tmp/$side.log"; : >"$tmp/$side.sass"
  if [ -f "$tmp/$side.ptx" ]; then
    "$cuda/bin/ptxas" -arch "$arch" "$tmp/$side.ptx" -o "$tmp/$side.as.cubin" --opt-level 3 \
      --enable-extended-smem=true -v >"$tmp/$side.log" 2>&1 || rc=$?
    if [ $rc -eq 0 ]; then
      "$cuda/bin/nvdisasm" -c "$tmp/$side.as.cubin" >"$tmp/$side.sass" 2>/dev/null || true
    else
      status="ptxas rc $rc: $(first_error "$tmp/$side.log")"
      : >"$tmp/$side.log"
    fi
  fi
  if [ -s "$tmp/$side.log" ]; then
    facts=$(python3 "$tmp/facts.py" "$tmp/$side.ptx" "$tmp/$side.log" "$tmp/$side.sass")
  else
    facts="- - - - - - - - - - - - - -"
  fi
}

echo "| kernel | target | ours | NVIDIA | regs | spill st | spill ld | smem | threads | loop | TC in loop | BAR in loop | TMA | mbar | maxnreg | MMA | cp.async | maps | spill-free |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for k in "${kernels[@]}"; do
  name=${k%%=*}; f=${k#*=}
  for gpu in "${gpus[@]}"; do
    arch=$gpu
    case "$gpu" in sm_90|sm_100|sm_103|sm_110|sm_120|sm_121) arch="${gpu}a" ;; esac
    compile ours "$gpu" "$f"; s_ours=$status
    assemble ours "$arch"; s_ours=$status; read -ra o <<<"$facts"
    if [ -n "$ours_only" ]; then
      s_nv=-; n=(- - - - - - - - - - - - - -)
    else
      compile nv "$gpu" "$f"; s_nv=$status
      assemble nv "$arch"; s_nv=$status; read -ra n <<<"$facts"
    fi
    cells=""
    for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13; do cells+=" ${o[$i]//_/ } / ${n[$i]//_/ } |"; done
    free=-
    if [ "${o[1]}" != - ]; then
      if [ "${o[1]}" = 0 ] && [ "${o[2]}" = 0 ]; then free=yes; else free=no; fi
    fi
    echo "| $name | $gpu | $s_ours | $s_nv |$cells $free |"
  done
done
