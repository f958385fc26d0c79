#!/usr/bin/env bash
# The tightness table of issue 24: per kernel of RaCuda's benchmark set
# (POPL 2021, Table 2; our versions in tests/fixtures/cu) and per metric,
# the mean over random launches of (per-warp bound) / (simulated worst
# warp), as tests/cost_soundness.rs measures it (a launch whose simulated
# cost is 0 has no ratio), then the mean over every kernel and metric.
# The same run fails if any simulated warp exceeds its bound.
# Usage: [CARGO_FLAGS=...] scripts/racuda-table.sh [--all]   (--all: our extra kernels too)
set -euo pipefail
cd "$(dirname "$0")/.."
all=${1:-}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# CARGO_FLAGS: more cargo flags, e.g. the LLVM 22 build's
# "--no-default-features --features llvm22 --target-dir target/llvm22".
# shellcheck disable=SC2086
nice -n 10 cargo test --quiet ${CARGO_FLAGS:-} --test cost_soundness -- --nocapture >"$log" 2>&1 || {
  cat "$log"
  echo "racuda-table: tests/cost_soundness.rs failed" >&2
  exit 1
}
grep '^tightness ' "$log" | awk -v all="$all" '
  $2 == "mean" { next }
  / \(not RaCuda.s\)$/ && all != "--all" { next }
  $4 == "zero" {
    k = $2; m = $3
    if (!(k in seen)) { seen[k] = 1; order[++n] = k }
    r[k, m] = $5
    next
  }
  {
    k = $2; m = $3; v = $5
    if (!(k in seen)) { seen[k] = 1; order[++n] = k }
    r[k, m] = v
    if ($0 !~ /not RaCuda/) { sum += v; cnt++ }
  }
  END {
    printf "| kernel | sectors | conflicts | divwarps | steps |\n"
    printf "|---|---|---|---|---|\n"
    split("sectors conflicts divwarps steps", ms, " ")
    for (i = 1; i <= n; i++) {
      k = order[i]
      line = "| " k
      for (j = 1; j <= 4; j++) {
        x = ((k, ms[j]) in r) ? r[k, ms[j]] : "–"
        if (x ~ /^[0-9.]+$/) x = sprintf("%.2f", x)
        line = line " | " x
      }
      print line " |"
    }
    printf "\nmean over RaCuda'"'"'s kernels and metrics: %.3f (%d pairs; 0=0: bound and simulated 0 in every launch, not in the mean)\n", sum / cnt, cnt
  }'
