#!/usr/bin/env bash
# Benchmarks the thread-dependence analysis on a generated module of about
# 200 device functions and 20k instructions (scripts/bench-taint-gen.py),
# reached from 4 kernels in different calling contexts.
#
# usage: scripts/bench-taint.sh [FUNCTIONS [KERNELS]]
#
# Prints warpcheck's own stage times (`check --timing`: the taint stage is
# re-run alone on the analysis' graphs, so its figure is the analysis by
# itself), then /usr/bin/time's wall clock and peak memory for a plain
# `warpcheck check` of the module (LLVM parsing and every stage included).
set -euo pipefail
cd "$(dirname "$0")/.."
functions=${1:-200}
kernels=${2:-4}

cargo build --release --quiet
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
module="$dir/bench.ll"
python3 scripts/bench-taint-gen.py "$functions" "$kernels" > "$module"
opt-19 -disable-output "$module"  # the module is valid IR
echo "module: $functions device functions, $kernels kernels," \
  "$(grep -cE '^  (%|store|br|ret|call)' "$module") instructions"

target/release/warpcheck check --timing "$module" 2>&1 >/dev/null |
  grep -E '^warpcheck: timing' | sed 's/^warpcheck: timing [^:]*: //'
/usr/bin/time -v target/release/warpcheck check "$module" > /dev/null 2> "$dir/stderr" || true
grep -E 'Elapsed \(wall clock\)|Maximum resident set size' "$dir/stderr" | sed 's/^[[:space:]]*/whole check: /'
