#!/usr/bin/env bash
# What the pass plugin adds to a clang-19 device build: times
# `clang-19 -x cuda --cuda-device-only -O2 -c` (PTX and ptxas, as a real
# build does) without and with -fpass-plugin=libwarpcheck.so, PAIRS times
# (default 15: single runs on a shared machine vary by a few percent) per
# file, the two runs of a pair back to back in
# alternating order, and prints the median of the per-pair ratios
# (with / without). Target: ratio <= 1.05.
#
# `-c` needs ptxas: the CUDA root of scripts/cuda-toolkit.sh (or
# CUDA_PATH) when it has one. Without it the script times `-S` (PTX
# only), a smaller denominator, and says so. CPU=1 times user+sys CPU
# instead of wall clock.
#
# usage: scripts/bench-plugin.sh [INSTANCES]
#
# Files: the largest bundled fixtures and examples, and a generated
# templated reduction of INSTANCES instantiations (default 120;
# scripts/bench-plugin-gen.py), whose thread-dependent branches are
# counted with `check --format json` and must be at least 1000.
set -euo pipefail
cd "$(dirname "$0")/.."
instances=${1:-120}
pairs=${PAIRS:-15}
cargo build --release --quiet
plugin=$PWD/target/release/libwarpcheck.so
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
gen=$dir/templated_reduction.cu
python3 scripts/bench-plugin-gen.py "$instances" >"$gen"
branches=$(target/release/warpcheck check --format json "$gen" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(sum(1 for k in r["kernels"] for s in k["sites"]
          if s["kind"] == "branch" and s["thread_dependent"]))')
echo "generated: $instances instantiations, $branches thread-dependent branch sites"
[ "$branches" -ge 1000 ] || { echo "fewer than 1000 thread-dependent branches" >&2; exit 1; }

flags=(-x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -O2 -nocudainc
  -Xclang -target-feature -Xclang +ptx75 -include src/frontend/warpcheck_cuda.h
  -I src/frontend/include)
cuda=${CUDA_PATH:-${WARPCHECK_CUDA_CACHE:-$HOME/.cache/warpcheck}/cuda-12.4}
if [ -x "$cuda/bin/ptxas" ]; then
  # libdevice from the same root links the math functions ptxas needs.
  flags+=(--cuda-path="$cuda" -Wno-unknown-cuda-version -c -o "$dir/out.o")
  echo "device build: -c with ptxas from $cuda"
else
  flags+=(-nocudalib -S -o /dev/null)
  echo "device build: -S (no ptxas; scripts/cuda-toolkit.sh provides one)"
fi

ms() {
  if [ -n "${CPU:-}" ]; then
    /usr/bin/time -f '%U %S' clang-19 "${flags[@]}" "$@" 2>&1 >/dev/null | tail -n 1 |
      awk '{ printf "%d\n", ($1 + $2) * 1000 }'
    return
  fi
  local s e
  s=$(date +%s%N)
  clang-19 "${flags[@]}" "$@" 2>/dev/null
  e=$(date +%s%N)
  echo $(((e - s) / 1000000))
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The four largest bundled files that build under these flags (some
# fixtures hold asm that only the analysis reads, which ptxas rejects).
largest=()
while read -r f; do
  [ ${#largest[@]} -lt 4 ] || break
  if clang-19 "${flags[@]}" "$f" 2>/dev/null; then largest+=("$f"); else echo "skipped (does not build): $f"; fi
done < <(ls -S examples/*.cu tests/fixtures/cu/*.cu)
printf '%-40s %12s %12s %10s\n' file without_ms with_ms ratio
for f in "${largest[@]}" "$gen"; do
  # A compile that fails times nothing useful: stop on it.
  clang-19 "${flags[@]}" "$f" 2>"$dir/err" || { cat "$dir/err" >&2; echo "$f does not build" >&2; exit 1; }
  : >"$dir/without"
  : >"$dir/with"
  : >"$dir/ratios"
  for p in $(seq 1 "$pairs"); do
    if [ $((p % 2)) -eq 1 ]; then
      a=$(ms "$f")
      b=$(ms -fpass-plugin="$plugin" "$f")
    else
      b=$(ms -fpass-plugin="$plugin" "$f")
      a=$(ms "$f")
    fi
    echo "$a" >>"$dir/without"
    echo "$b" >>"$dir/with"
    awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f\n", b / a }' >>"$dir/ratios"
  done
  name=$f
  [ "$f" = "$gen" ] && name="templated reduction ($branches branches)"
  printf '%-40s %12s %12s %10.3f\n' "$name" "$(median <"$dir/without")" \
    "$(median <"$dir/with")" "$(median <"$dir/ratios")"
done
