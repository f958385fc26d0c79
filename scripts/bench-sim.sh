#!/usr/bin/env bash
# Simulation speed: simulated thread-instructions per second (release
# build) on a 1M-thread vector add, a 1M-element block reduction and a
# 4M-element one, on one thread (-j 1) and on every core (-j 0). Two
# figures: the launch alone (its blocks, as a profiler times a kernel),
# and with what `simulate` does first (decoding the kernel, filling the
# argument buffers the command line describes).
# Usage: scripts/bench-sim.sh [runs, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
cargo build --release --quiet
bin=target/release/warpcheck

bench() {
  local name=$1 jobs=$2
  shift 2
  local best=0 best_all=0
  for _ in $(seq "$runs"); do
    # stderr ends with two lines:
    #   "with decoding and the arguments' buffers: S s, R M thread-instructions/s"
    #   "simulated N thread-instructions in S s on T threads: R M thread-instructions/s"
    # the first timing everything `simulate` does, the second the launch alone.
    local err rate all
    err=$("$bin" simulate "$@" -j "$jobs" --timing 2>&1 >/dev/null)
    rate=$(awk '/^simulated/ {print $(NF-2)}' <<<"$err")
    all=$(awk '/^with decoding/ {print $(NF-2)}' <<<"$err")
    best=$(awk -v a="$best" -v b="$rate" 'BEGIN {print (b > a) ? b : a}')
    best_all=$(awk -v a="$best_all" -v b="$all" 'BEGIN {print (b > a) ? b : a}')
  done
  printf '%-30s %-9s %8.1f M/s launch  %8.1f M/s with setup (best of %d)\n' "$name" \
    "$([ "$jobs" = 0 ] && echo "$(nproc) cores" || echo "1 thread")" "$best" "$best_all" "$runs"
}

n=$((1 << 20))
m=$((1 << 22))
for jobs in 1 0; do
  bench "vector_add (1M threads)" $jobs examples/vector_add.cu --kernel vector_add \
    --grid $((n / 256)) --block 256 \
    --arg a=buf:4M:iota --arg b=buf:4M:iota --arg c=buf:4M --arg n=$n
  bench "reduce_shared (1M elements)" $jobs examples/reduction.cu --kernel reduce_shared \
    --grid $((n / 256)) --block 256 \
    --arg in=buf:4M:random --arg out=buf:16K --arg n=$n
  bench "reduce_shared (4M elements)" $jobs examples/reduction.cu --kernel reduce_shared \
    --grid $((m / 256)) --block 256 \
    --arg in=buf:16M:random --arg out=buf:64K --arg n=$m
done
