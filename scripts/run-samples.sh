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
# (default 600); ONLY, a regular expression, picks the programs by name.
# Result: "pass" when the program exits 0 and prints its
# own success line or exits 0 from its own check (cuda-samples), "ran" when a program without a check
# of its own (Rodinia) exits 0, else "fail (exit N)" with the first
# warpcheck error line, in the log beside the table. The last column
# counts the sites that ran against `check`'s claims at the launched
# shapes; every contradiction is printed on stderr after the table.
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
wc=$(realpath "${wc:-/nonexistent}" 2>/dev/null || echo "$wc")
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
  "rodinia bfs|$rodinia/bfs|bfs.cu||@bfs|@bfs"
  "rodinia hotspot|$rodinia/hotspot|hotspot.cu||@hotspot|"
  "rodinia lud|$rodinia/lud/cuda|lud.cu lud_kernel.cu ../common/common.c|-I $rodinia/lud/common|-s 64 -v|@lud"
  "rodinia srad (v2)|$rodinia/srad/srad_v2|srad.cu||128 128 0 31 0 31 0.5 2|"
  "rodinia streamcluster|$rodinia/streamcluster|streamcluster_cuda_cpu.cpp streamcluster_cuda.cu||10 20 16 1024 1024 100 none output.txt 1|"
)

# PolyBench/GPU: each benchmark compares its GPU result with its own CPU
# run and prints how many elements differ beyond its threshold (GEMVER:
# "Number of misses"). Sizes are
# the script's, small enough to simulate (defining N skips the headers'
# datasets, so each size is given). Each .cu includes polybench.c itself.
# DOITGEN is left out: it calls rtclock without declaring it.
poly=$src/polybench-gpu/CUDA
polybench=(
  "2DCONV|2DConvolution.cu|-DN=1 -DNI=256 -DNJ=256"
  "2MM|2mm.cu|-DN=1 -DNI=128 -DNJ=128 -DNK=128 -DNL=128"
  "3DCONV|3DConvolution.cu|-DN=1 -DNI=64 -DNJ=64 -DNK=64"
  "3MM|3mm.cu|-DN=1 -DNI=128 -DNJ=128 -DNK=128 -DNL=128 -DNM=128"
  "ADI|adi.cu|-DTSTEPS=1 -DN=256"
  "ATAX|atax.cu|-DN=1 -DNX=512 -DNY=512"
  "BICG|bicg.cu|-DN=1 -DNX=512 -DNY=512"
  "CORR|correlation.cu|-DM=256 -DN=256"
  "COVAR|covariance.cu|-DM=256 -DN=256"
  "FDTD-2D|fdtd2d.cu|-DN=1 -DTMAX=10 -DNX=256 -DNY=256"
  "GEMM|gemm.cu|-DN=1 -DNI=128 -DNJ=128 -DNK=128"
  "GEMVER|gemver.cu|-DN=512"
  "GESUMMV|gesummv.cu|-DN=512"
  "GRAMSCHM|gramschmidt.cu|-DN=1 -DNI=128 -DNJ=128"
  "JACOBI1D|jacobi1D.cu|-DTSTEPS=10 -DN=1024"
  "JACOBI2D|jacobi2D.cu|-DTSTEPS=5 -DN=256"
  "LU|lu.cu|-DN=256"
  "MVT|mvt.cu|-DN=512"
  "SYR2K|syr2k.cu|-DN=1 -DNI=128 -DNJ=128"
  "SYRK|syrk.cu|-DN=1 -DNI=128 -DNJ=128"
)
for entry in "${polybench[@]}"; do
  IFS='|' read -r name file sizes <<< "$entry"
  programs+=("polybench $name|$poly/$name|$file|-I $poly/../common $sizes||Percent: 0\$\\|misses: 0\$")
done

# Inputs some programs read, generated here; "@name" as a program's
# arguments runs setup_name in the program's run directory, which prints
# the arguments. A success of "@name" runs check_name there after the
# program: exit 0 when the program's output is right.

# A random graph in Rodinia's bfs format (nodes with their first edge and
# degree, the source, then the edges with a cost), 2048 nodes.
setup_bfs() {
  python3 - > graph.txt <<'PY'
import random
random.seed(38)
n = 2048
edges = [[random.randrange(n) for _ in range(random.randrange(1, 6))] for _ in range(n)]
print(n)
at = 0
for e in edges:
    print(at, len(e))
    at += len(e)
print(0)
print(at)
for e in edges:
    for d in e:
        print(d, 1)
PY
  echo graph.txt
}

# bfs writes each node's depth from node 0 to result.txt; the same by a
# breadth-first search here.
check_bfs() {
  python3 - <<'PY'
import collections, re, sys
tok = open("graph.txt").read().split()
n = int(tok[0]); nodes = [(int(tok[1 + 2 * i]), int(tok[2 + 2 * i])) for i in range(n)]
rest = tok[1 + 2 * n:]
m = int(rest[1]); dest = [int(rest[2 + 2 * i]) for i in range(m)]
depth = [-1] * n; depth[0] = 0; q = collections.deque([0])
while q:
    u = q.popleft(); s, k = nodes[u]
    for v in dest[s:s + k]:
        if depth[v] < 0:
            depth[v] = depth[u] + 1; q.append(v)
got = [int(re.match(r"\d+\) cost:(-?\d+)", l).group(1)) for l in open("result.txt")]
sys.exit(0 if got == depth else 1)
PY
}

# hotspot's temperature and power grids, 64 x 64, one value a line.
setup_hotspot() {
  python3 -c '
import random
random.seed(38)
with open("temp_64", "w") as t, open("power_64", "w") as p:
    for _ in range(64 * 64):
        print("%.6f" % (320 + 20 * random.random()), file=t)
        print("%.6f" % (0.001 * random.random()), file=p)'
  echo 64 2 2 temp_64 power_64 output.out
}

# lud -v recomputes the product L*U on the host and prints each element
# that differs from the input.
check_lud() {
  grep -q ">>>Verify<<<<" "$1" && ! grep -q "dismatch" "$1"
}

log=$work/log
{
  echo "| program | result | simulated s | wall s | check's claims: confirmed / measured / contradicted |"
  echo "|---|---|---|---|---|"
} > "$work/table"
for entry in "${programs[@]}"; do
  IFS='|' read -r name dir sources flags args want <<< "$entry"
  [[ "$name" =~ ${ONLY:-.} ]] || continue
  if [ ! -d "$dir" ]; then
    echo "| $name | not checked out | | |" >> "$work/table"
    continue
  fi
  files=()
  for f in $sources; do files+=("$dir/$f"); done
  report=$work/report.json
  rm -f "$report"
  # The program runs in a directory of its own that mirrors its source
  # directory (some read files beside them), so its outputs stay there.
  run=$work/run
  rm -rf "$run" && mkdir -p "$run" && cp -rs "$dir/." "$run/"
  if [ "${args#@}" != "$args" ]; then
    args=$(cd "$run" && "setup_${args#@}")
  fi
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  (cd "$run" && timeout "$limit" "$wc" run --format json -o "$report" "${files[@]}" $flags -- $args) \
    > "$work/stdout" 2> "$work/stderr"
  code=$?
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  sim="" claims="" found=""
  if [ -s "$report" ]; then
    sim=$(python3 -c 'import json,sys; print("%.6f" % (json.load(open(sys.argv[1]))["simulated_us"] / 1e6))' "$report")
    # The sites that ran, against check's claims at the launched shapes.
    # Faults and sanitizer findings (memory errors, races, unwritten reads).
    found=$(python3 -c 'import collections, json, sys
errors = json.load(open(sys.argv[1])).get("errors") or []
kinds = collections.Counter(e.get("kind", "error") for e in errors)
print(", ".join("%d %s" % (n, k) for k, n in sorted(kinds.items())))' "$report")
    claims=$(python3 -c 'import json,sys
a = json.load(open(sys.argv[1])).get("agreement") or {}
print(a["error"] if "error" in a else "%s / %s / %s" % (a.get("confirmed", 0), a.get("measured", 0), a.get("contradicted", 0)))
for c in a.get("contradictions", []): print(c, file=sys.stderr)' "$report" 2>> "$work/contradictions")
  fi
  if [ $code -eq 124 ]; then
    result="timeout (${limit} s)"
  elif [ $code -ne 0 ]; then
    why=$(grep -m1 -E "warpcheck run: (error|[a-z-]+ in)|error:" "$work/stderr" | cut -c1-120)
    result="fail (exit $code) ${why}"
  elif [ "${want#@}" != "$want" ]; then
    if (cd "$run" && "check_${want#@}" "$work/stdout"); then result="pass"; else result="fail (wrong output)"; fi
  elif [ -n "$want" ] && [ "$want" != "=exit" ] && ! grep -q "$want" "$work/stdout"; then
    result="fail (no '$want')"
  elif [ -n "$want" ]; then
    result="pass"
  else
    result="ran"
  fi
  [ -n "${found:-}" ] && result="$result; reported: $found"
  result=${result//|/\\|}
  printf '| %s | %s | %s | %.1f | %s |\n' "$name" "$result" "$sim" "$wall" "$claims" >> "$work/table"
  { echo "=== $name (exit $code)"; tail -5 "$work/stdout"; head -20 "$work/stderr"; } >> "$log"
done
cat "$work/table" > "$out"
if [ -s "$work/contradictions" ]; then
  echo "contradictions of check's claims (each a bug in the analysis):" >&2
  cat "$work/contradictions" >&2
fi
[ "$out" != /dev/stdout ] && cp "$log" "${out%.md}.log"
exit 0
