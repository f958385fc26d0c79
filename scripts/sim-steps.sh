#!/usr/bin/env bash
# Warp instructions ("steps") and time of the bundled examples' launches at
# a million elements (release build), against simulate's default step
# budget. Usage: scripts/sim-steps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/warpcheck
n=$((1 << 20))
grid=$((n / 256))

steps() {
  local file=$1 kernel=$2
  shift 2
  local start end
  start=$(date +%s.%N)
  local s
  s=$("$bin" simulate "examples/$file" --kernel "$kernel" --format json "$@" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["totals"]["steps"])')
  end=$(date +%s.%N)
  printf '%-34s %12d steps %6.2f s\n' "$file $kernel" "$s" "$(echo "$end - $start" | bc)"
}

big="--arg in=buf:4M:random --arg out=buf:4M --arg n=$n"
steps vector_add.cu vector_add --grid $grid --block 256 \
  --arg a=buf:4M:iota --arg b=buf:4M:iota --arg c=buf:4M --arg n=$n
steps reduction.cu reduce_shared --grid $grid --block 256 $big
steps reduction.cu reduce_shuffle --grid $grid --block 256 $big
steps divergence.cu branches --grid $grid --block 256 $big
steps histogram.cu histogram_shared --grid 1024 --block 256 \
  --arg data=buf:1M:random --arg bins=buf:1K --arg n=$n
steps particles.cu step_aos --grid $grid --block 256 \
  --arg p=buf:24M --arg dt=0.1 --arg n=$n
steps particles.cu row_sums_by_thread --grid 16 --block 256 \
  --arg m=buf:16M:random --arg sums=buf:16K --arg rows=4096
steps transpose.cu transpose_shared --grid 32,32 --block 32,32 \
  --arg out=buf:4M --arg in=buf:4M:iota --arg width=1024 --arg height=1024
echo "simulate --max-steps $("$bin" simulate --help | grep -o 'default: [0-9]\{7,\}')"
