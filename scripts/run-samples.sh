#!/usr/bin/env bash
# Runs `warpcheck run` over public sample programs checked out in
# $SUITES_SRC (default /work/suites-src: cuda-samples and rodinia, see
# scripts/suites.sh) and tables program, result, simulated and wall
# seconds. Nothing of the suites is copied or committed: the programs
# are built from their checkouts into a temporary directory.
#
#   scripts/run-samples.sh [OUT.md]
#
# WARPCHECK names the binary (default target/release/warpcheck, else
# target/debug/warpcheck); TIMEOUT is each program's limit in seconds
# (default 600). Result: "pass" when the program exits 0 and prints its
# own success line or exits 0 from its own check (cuda-samples), "ran" when a program without a check
# of its own (Rodinia) exits 0, else "fail (exit N)" with the first
# warpcheck error line, in the log beside the table.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
src=${SUITES_SRC:-/work/suites-src}
out=${1:-/dev/stdout}
wc=${WARPCHECK:-}
if [ -z "$wc" ]; then
  for c in "$root/target/release/warpcheck" "$root/target/debug/warpcheck"; do
    [ -x "$c" ] && { wc=$c; break; }
  done
fi
[ -x "${wc:-}" ] || { echo "no warpcheck binary (cargo build first, or set WARPCHECK)" >&2; exit 2; }
limit=${TIMEOUT:-600}
samples=$src/cuda-samples/Samples
common=$src/cuda-samples/Common
rodinia=$src/rodinia/cuda
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | directory | sources | flags | program args | success: a line the
# program prints when its own check passes, "=exit" when its exit code is
# its check, "" when it has none (Rodinia)
programs=(
  "vectorAdd|$samples/0_Introduction/vectorAdd|vectorAdd.cu|-I $common||Test PASSED"
  "matrixMul|$samples/0_Introduction/matrixMul|matrixMul.cu|-I $common|-wA=64 -hA=64 -wB=64 -hB=64|Result = PASS"
  "simpleAtomicIntrinsics|$samples/0_Introduction/simpleAtomicIntrinsics|simpleAtomicIntrinsics.cu simpleAtomicIntrinsics_cpu.cpp|-I $common||completed, returned OK"
  "transpose|$samples/6_Performance/transpose|transpose.cu|-I $common|-dimX=64 -dimY=64|Test passed"
  "reduction|$samples/2_Concepts_and_Techniques/reduction|reduction.cpp reduction_kernel.cu|-I $common|--n=65536|Test passed"
  "histogram|$samples/2_Concepts_and_Techniques/histogram|main.cpp histogram64.cu histogram256.cu histogram_gold.cpp|-I $common||Test passed"
  "shfl_scan|$samples/2_Concepts_and_Techniques/shfl_scan|shfl_scan.cu|-I $common||=exit"
  "sortingNetworks|$samples/2_Concepts_and_Techniques/sortingNetworks|main.cpp bitonicSort.cu oddEvenMergeSort.cu sortingNetworks_validate.cpp|-I $common||Test passed"
  "mergeSort|$samples/0_Introduction/mergeSort|main.cpp bitonic.cu mergeSort.cu mergeSort_host.cpp mergeSort_validate.cpp|-I $common||TEST PASSED"
  "rodinia gaussian|$rodinia/gaussian|gaussian.cu||-s 16 -q|"
  "rodinia nw|$rodinia/nw|needle.cu||256 10|"
  "rodinia pathfinder|$rodinia/pathfinder|pathfinder.cu||1000 20 5|"
  "rodinia backprop|$rodinia/backprop|backprop_cuda.cu backprop.c facetrain.c imagenet.c|-lm|4096|"
)

log=$work/log
{
  echo "| program | result | simulated s | wall s |"
  echo "|---|---|---|---|"
} > "$work/table"
for entry in "${programs[@]}"; do
  IFS='|' read -r name dir sources flags args want <<< "$entry"
  if [ ! -d "$dir" ]; then
    echo "| $name | not checked out | | |" >> "$work/table"
    continue
  fi
  files=()
  for f in $sources; do files+=("$dir/$f"); done
  report=$work/report.json
  rm -f "$report"
  start=$(date +%s.%N)
  # The program runs in its own directory (some read files beside them).
  # shellcheck disable=SC2086
  (cd "$dir" && timeout "$limit" "$wc" run --format json -o "$report" "${files[@]}" $flags -- $args) \
    > "$work/stdout" 2> "$work/stderr"
  code=$?
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  sim=""
  if [ -s "$report" ]; then
    sim=$(python3 -c 'import json,sys; print("%.6f" % (json.load(open(sys.argv[1]))["simulated_us"] / 1e6))' "$report")
  fi
  if [ $code -eq 124 ]; then
    result="timeout (${limit} s)"
  elif [ $code -ne 0 ]; then
    why=$(grep -m1 -E "warpcheck run: (error|[a-z-]+ in)|error:" "$work/stderr" | cut -c1-120)
    result="fail (exit $code) ${why}"
  elif [ -n "$want" ] && [ "$want" != "=exit" ] && ! grep -q "$want" "$work/stdout"; then
    result="fail (no '$want')"
  elif [ -n "$want" ]; then
    result="pass"
  else
    result="ran"
  fi
  result=${result//|/\\|}
  printf '| %s | %s | %s | %.1f |\n' "$name" "$result" "$sim" "$wall" >> "$work/table"
  { echo "=== $name (exit $code)"; tail -5 "$work/stdout"; head -20 "$work/stderr"; } >> "$log"
done
cat "$work/table" > "$out"
[ "$out" != /dev/stdout ] && cp "$log" "${out%.md}.log"
exit 0
