#!/usr/bin/env bash
# The cost of warpcheck's analysis next to clang-19's own -O2 device
# compile of the same file: the plugin runs inside that compile, so the
# ratio is what a build pays. Target: analysis / clang <= 0.10.
#
# usage: scripts/bench-acf.sh [KERNELS]
#
# For each of the largest bundled kernels and a generated file of KERNELS
# kernels (scripts/bench-acf-gen.py), prints clang's compile time (best of
# 3), warpcheck's analysis time (graphs, thread dependence, ACF and the
# checks; best of 3, from `check --timing`), and their ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
kernels=${1:-100}
cargo build --release --quiet
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 scripts/bench-acf-gen.py "$kernels" > "$dir/generated.cu"

clang_flags=(-x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -O2 -gline-tables-only
  -nocudainc -nocudalib -Xclang -target-feature -Xclang +ptx75
  -include src/frontend/warpcheck_cuda.h -S -o /dev/null)

best() { sort -n | head -1; }

printf '%-40s %10s %10s %8s\n' file clang_ms acf_ms ratio
for f in examples/reduction.cu examples/transpose.cu tests/fixtures/cu/sim_ops.cu \
         tests/fixtures/cu/acf_global.cu "$dir/generated.cu"; do
  clang_ms=$(for _ in 1 2 3; do
    s=$(date +%s%N); clang-19 "${clang_flags[@]}" "$f"; e=$(date +%s%N)
    echo $(( (e - s) / 1000000 ))
  done | best)
  acf_ms=$(for _ in 1 2 3; do
    # Analysis = graphs + per-kernel stages (taint, sites, acf) + checks.
    target/release/warpcheck check --timing "$f" 2>&1 >/dev/null |
      grep '^warpcheck: timing' | tr ',' '\n' |
      awk '$1 == "graphs" || $1 == "kernel" || $1 == "checks" { t += $2 }
           END { printf "%.1f\n", t }'
  done | best)
  ratio=$(awk -v a="$acf_ms" -v c="$clang_ms" 'BEGIN { printf "%.3f", a / c }')
  name=$f; [ "$f" = "$dir/generated.cu" ] && name="generated ($kernels kernels)"
  printf '%-40s %10s %10s %8s\n' "$name" "$clang_ms" "$acf_ms" "$ratio"
done
