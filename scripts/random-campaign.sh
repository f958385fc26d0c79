#!/usr/bin/env bash
# A long campaign of random kernels against the simulator
# (tests/random_kernels.rs) in a release build.
#
# usage: scripts/random-campaign.sh [COUNT] [SEED]
#
# Runs COUNT kernels (default 10000) in rounds of ROUND (default 1000),
# round i with seed SEED + i (SEED defaults to a random one). A round stops
# at its first disagreement, minimises the kernel and saves it under
# tests/fixtures/regress/ as random-<seed>.json (replay it with
# WARPCHECK_RANDOM_REPLAY=tests/fixtures/regress/random-<seed>.json cargo
# test --test random_kernels replay -- --ignored), .c (readable) and .ir (our IR); the
# campaign goes on with the next round. Exits 1 if any round failed.
set -uo pipefail
cd "$(dirname "$0")/.."
count=${1:-10000}
seed=${2:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
round=${ROUND:-1000}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
cargo test --release --test random_kernels --no-run --quiet 2>/dev/null || exit 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
kernels=0 sites=0 failed=0 rounds=0
start=$(date +%s)
for ((done = 0; done < count; done += round)); do
  n=$((count - done < round ? count - done : round))
  s=$((seed + rounds))
  rounds=$((rounds + 1))
  WARPCHECK_RANDOM_CASES=$n WARPCHECK_RANDOM_SEED=$s \
    WARPCHECK_RANDOM_SAVE=tests/fixtures/regress \
    cargo test --release --quiet --test random_kernels random_kernels_agree -- --nocapture >"$log" 2>&1
  rc=$?
  line=$(grep -m1 '^random kernels' "$log")
  k=$(sed -nE 's/.*: ([0-9]+) kernels,.*/\1/p' <<<"$line")
  c=$(sed -nE 's/.*; ([0-9]+) sites checked.*/\1/p' <<<"$line")
  kernels=$((kernels + ${k:-0}))
  sites=$((sites + ${c:-0}))
  if [ "$rc" -ne 0 ]; then
    failed=$((failed + 1))
    echo "seed $s: FAILED after ${k:-0} kernels"
    sed -n '/disagrees with the simulator/,/^saved to/p' "$log"
    grep -m1 'panicked' "$log"
  else
    echo "seed $s: ${k:-0} kernels, ${c:-0} sites: ok"
  fi
done
echo "campaign: seeds $seed..$((seed + rounds - 1)), $kernels kernels passed, $sites sites checked, $failed failing rounds, $(($(date +%s) - start))s"
[ "$failed" -eq 0 ]
