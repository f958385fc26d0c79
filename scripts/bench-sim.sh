#!/usr/bin/env bash
# Simulation speed: simulated thread-instructions per second (one core,
# release build) on a 1M-thread vector add and on a 1M-element block
# reduction. Usage: scripts/bench-sim.sh [runs, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
cargo build --release --quiet
bin=target/release/warpcheck

bench() {
  local name=$1
  shift
  local best=0
  for _ in $(seq "$runs"); do
    # The last stderr line reads: "simulated N thread-instructions in S s: R M thread-instructions/s".
    local rate
    rate=$("$bin" simulate "$@" --timing 2>&1 >/dev/null | awk '/^simulated/ {print $(NF-2)}')
    best=$(awk -v a="$best" -v b="$rate" 'BEGIN {print (b > a) ? b : a}')
  done
  printf '%-28s %8.1f M thread-instructions/s (best of %d)\n' "$name" "$best" "$runs"
}

n=$((1 << 20))
bench "vector_add (1M threads)" examples/vector_add.cu --kernel vector_add \
  --grid $((n / 256)) --block 256 \
  --arg a=buf:4M:iota --arg b=buf:4M:iota --arg c=buf:4M --arg n=$n
bench "reduce_shared (1M elements)" examples/reduction.cu --kernel reduce_shared \
  --grid $((n / 256)) --block 256 \
  --arg in=buf:4M:random --arg out=buf:16K --arg n=$n
