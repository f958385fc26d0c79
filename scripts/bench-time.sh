#!/usr/bin/env bash
# warpcheck time: the static time bound's cost per kernel (the whole
# command, compile included, release build; the target is under 1 s per
# kernel), and each bound next to the simulator's cycles on the same
# machine model (default: the A100-class model), and what limits each
# bound (latency and issue, or a bandwidth).
# Usage: scripts/bench-time.sh [--machine KEY=VALUE ...]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/warpcheck
fx=tests/fixtures/cu
machine=("$@")

# file | kernel | block | grid | params | shared bytes
rows=(
  "$fx/cost_vector_add.cu|vectorAdd|256|4|N=1000|0"
  "$fx/cost_matmul.cu|matMul|32,32|4,4|N=128|0"
  "$fx/cost_reduce.cu|reduce0|256|4|n=1024|1024"
  "$fx/cost_reduce.cu|reduce3|256|4|n=2048|1024"
  "$fx/cost_histogram.cu|histogram256|64|4|n=4096|0"
  "$fx/cost_mandelbrot.cu|mandelbrot|32|4,16|w=128 h=16 max_iter=100|0"
  "$fx/cost_addsub.cu|addSub2|64|2|w=128 h=64|0"
  "$fx/cost_triangular.cu|triangular|32|2|n=40|0"
  "examples/vector_add.cu|vector_add|256|16|n=4096|0"
  "examples/reduction.cu|reduce_shared|256|300|n=70000|0"
  "examples/reduction.cu|reduce_shuffle|256|30|n=70000|0"
  "examples/transpose.cu|transpose_padded|32,8|8,8|width=256 height=256|0"
  "examples/divergence.cu|branches|256|8|n=2048|0"
  "examples/histogram.cu|histogram_shared|256|8|n=65536|0"
  "examples/particles.cu|row_sums_by_warp|256|4|rows=256|0"
  "tests/fixtures/time/triangle_sum.cu|triangle_sum|16|1|c=16|0"
  "tests/fixtures/time/roofline.cu|triad|256|4096|n=1048576 s=2|0"
  "tests/fixtures/time/roofline.cu|fma_chain|256|216|iters=1000|0"
)
printf '%-16s %-7s %-6s %10s %-13s %10s %7s %8s  %s\n' kernel block grid bound method simulated ratio seconds limited-by
for row in "${rows[@]}"; do
  IFS='|' read -r f k b g params shared <<<"$row"
  args=(--kernel "$k" --block-dim "$b" --grid "$g" --shared-bytes "$shared")
  for p in $params; do args+=(--param "$p"); done
  for m in "${machine[@]}"; do args+=("$m"); done
  start=$(date +%s.%N)
  "$bin" time "$f" "${args[@]}" --format json >/dev/null
  end=$(date +%s.%N)
  "$bin" time "$f" "${args[@]}" --simulate --format json |
    python3 -c '
import json, sys
j = json.load(sys.stdin)
b, s = j["bound_cycles"], j["simulated_cycles"]
ratio = "%.2f" % (b / s) if b is not None and s else "—"
cols = (j["kernel"], sys.argv[1], sys.argv[2], "—" if b is None else "%d" % b,
        j["method"] or "no bound", str(s), ratio, float(sys.argv[4]) - float(sys.argv[3]),
        j["limited_by"] or "—")
print("%-16s %-7s %-6s %10s %-13s %10s %7s %8.3f  %s" % cols)
' "$b" "$g" "$start" "$end"
done
