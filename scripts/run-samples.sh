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
# (default 600); ONLY, a regular expression, picks the programs by name;
# REPORTS, a directory, keeps each program's `--format json` report there
# as NAME.json (its name's words joined by _: rodinia_srad_v2.json), which
# scripts/run-measured.py reads. With OUT.md, the reports go to
# OUT.reports/ unless REPORTS says otherwise, and what Rodinia's runs
# measured at `check`'s unknown locations to OUT.measured.md.
# Result: "pass" when the program exits 0 and prints its own success
# line or exits 0 from its own check (cuda-samples), or when the script's
# check of its output passes (most of Rodinia: "pass: how close it came");
# "ran" when a program with neither exits 0; else "fail (exit N)" with the
# first warpcheck error line, in the log beside the table. The last column
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
reports=${REPORTS:-}
[ -z "$reports" ] && [ "$out" != /dev/stdout ] && reports=${out%.md}.reports
[ -n "$reports" ] && mkdir -p "$reports"

# name | directory | sources | flags | program args | success: a line the
# program prints when its own check passes, "=exit" when its exit code is
# its check, "" when it has none (Rodinia). A source "@NAME" is a file of
# this script's (below, written to $work/hooks) built with the program:
# it saves results a program computes but never shows.
programs=(
  "vectorAdd|$samples/0_Introduction/vectorAdd|vectorAdd.cu|-I $common||Test PASSED"
  "matrixMul|$samples/0_Introduction/matrixMul|matrixMul.cu|-I $common|-wA=64 -hA=64 -wB=64 -hB=64|Result = PASS"
  "simpleAtomicIntrinsics|$samples/0_Introduction/simpleAtomicIntrinsics|simpleAtomicIntrinsics.cu simpleAtomicIntrinsics_cpu.cpp|-I $common||completed, returned OK"
  "transpose|$samples/6_Performance/transpose|transpose.cu|-I $common|-dimX=64 -dimY=64|Test passed"
  "reduction|$samples/2_Concepts_and_Techniques/reduction|reduction.cpp reduction_kernel.cu|-I $common|--n=65536|Test passed"
  "histogram|$samples/2_Concepts_and_Techniques/histogram|main.cpp histogram64.cu histogram256.cu histogram_gold.cpp|-I $common||Test passed"
  "shfl_scan|$samples/2_Concepts_and_Techniques/shfl_scan|shfl_scan.cu|-I $common||=exit"
  "sortingNetworks|$samples/2_Concepts_and_Techniques/sortingNetworks|main.cpp bitonicSort.cu oddEvenMergeSort.cu sortingNetworks_validate.cpp|-I $common||=exit"
  "mergeSort|$samples/0_Introduction/mergeSort|main.cpp bitonic.cu mergeSort.cu mergeSort_host.cpp mergeSort_validate.cpp|-I $common||=exit"
  "rodinia gaussian|$rodinia/gaussian|gaussian.cu @gaussian_hook.c||-s 64 -q|@gaussian"
  "rodinia nw|$rodinia/nw|needle.cu|-DTRACEBACK|256 10|@nw"
  "rodinia pathfinder|$rodinia/pathfinder|pathfinder.cu|-DBENCH_PRINT|1000 20 5|@pathfinder"
  "rodinia backprop|$rodinia/backprop|backprop_cuda.cu backprop.c facetrain.c imagenet.c @backprop_hook.c|-lm -I $rodinia/backprop -Wl,--wrap=bpnn_free -Wl,--wrap=cudaMemcpy|4096|@backprop"
  "rodinia bfs|$rodinia/bfs|bfs.cu||@bfs|@bfs"
  "rodinia hotspot|$rodinia/hotspot|hotspot.cu||@hotspot|@hotspot"
  "rodinia lud|$rodinia/lud/cuda|lud.cu lud_kernel.cu ../common/common.c|-I $rodinia/lud/common|-s 64 -v|@lud"
  "rodinia srad (v2)|$rodinia/srad/srad_v2|srad.cu||128 128 0 31 0 31 0.5 2|"
  "rodinia streamcluster|$rodinia/streamcluster|streamcluster_cuda_cpu.cpp streamcluster_cuda.cu||10 20 16 1024 1024 100 none output.txt 1|@streamcluster"
  # Not here: myocyte, heartwall and leukocyte read the suite's data
  # (myocyte's initial state and parameters, the others an AVI video),
  # which a checkout lacks and nothing here can make up meaningfully.
  "rodinia hotspot3D|$rodinia/hotspot3D|3D.cu|-lm|@hotspot3D|@hotspot3D"
  "rodinia nn|$rodinia/nn|nn_cuda.cu||@nn|@nn"
  "rodinia lavaMD|$rodinia/lavaMD|main.c kernel/kernel_gpu_cuda_wrapper.cu util/num/num.c util/timer/timer.c util/device/device.cu @fixed_time.c|-lm -DOUTPUT -Wl,--wrap=time|-boxes1d 2|@lavaMD"
  "rodinia srad (v1)|$rodinia/srad/srad_v1|main.cu|-lm|@srad_v1|@srad_v1"
  "rodinia b+tree|$rodinia/b+tree|main.c kernel/kernel_gpu_cuda_wrapper.cu kernel/kernel_gpu_cuda_wrapper_2.cu util/timer/timer.c util/num/num.c util/cuda/cuda.cu|-lm|@btree|@btree"
  "rodinia huffman|$rodinia/huffman|main_test_cu.cu stats_logger.cpp cpuencode.cpp|-DTESTING -DCACHECWLUT|@huffman|PASS! vectors are matching"
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

# Rodinia's programs (but bfs, lud and hotspot3D) check nothing
# themselves: their outputs are compared here with a reference, Python's
# or the suite's OpenMP version built with the host compiler (without
# -fopenmp, so serially; warpcheck's omp.h stands in for the runtime's).
# Each check prints how close the output came.

# All numbers of two files compared: each may differ from the expected
# one by TOL (relative to it where it is above 1, else absolute; with
# "abs", absolute): "N numbers, M differ, by at most D".
compare_numbers() {
  python3 - "$@" <<'PY'
import re, sys
got, want, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
absolute = sys.argv[4:] == ["abs"]
num = re.compile(r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
a = [float(x) for x in num.findall(open(got).read())]
b = [float(x) for x in num.findall(open(want).read())]
if len(a) != len(b):
    print("%d numbers, %d expected" % (len(a), len(b)))
    sys.exit(1)
diff = [abs(x - y) / (1.0 if absolute else max(1.0, abs(y))) for x, y in zip(a, b)]
worst = max(diff, default=0.0)
print("%d numbers, %d differ, by at most %.2g" % (len(a), sum(d > 0 for d in diff), worst))
sys.exit(0 if worst <= tol else 1)
PY
}

# The suite's OpenMP version of a program, built into ./omp-ref; words
# starting with - or / are flags and files of the script's, passed as
# they are.
omp_build() {
  local dir=$src/rodinia/openmp/$1; shift
  local files=() f
  for f in "$@"; do
    case $f in
      -* | /*) files+=("$f") ;;
      *) files+=("$dir/$f") ;;
    esac
  done
  case "$1" in
    # Old C, as the suite's Makefiles' gcc takes it.
    *.c) "${CLANG:-clang-19}" -O2 -w -Wno-error=implicit-function-declaration \
      -I "$root/src/cli/run" "${files[@]}" -o omp-ref -lm ;;
    *) "${CLANGXX:-clang++-19}" -O2 -w -I "$root/src/cli/run" "${files[@]}" -o omp-ref -lm -lpthread ;;
  esac
}

# glibc's rand() after srand(seed), for programs that draw their input.
glibc_rand_py='
def glibc_rand(seed):
    r = [seed]
    for i in range(1, 31):
        r.append((16807 * r[i - 1]) % 2147483647)
    r += [r[i - 31] for i in range(31, 34)]
    for i in range(34, 344):
        r.append((r[i - 31] + r[i - 3]) & 0xFFFFFFFF)
    while True:
        r.append((r[-31] + r[-3]) & 0xFFFFFFFF)
        yield r[-1] >> 1
'

# nw -DTRACEBACK writes the scores along its traceback to result.txt: the
# same alignment (srand(7), BLOSUM62 from its source) and traceback here.
check_nw() {
  python3 - "$rodinia/nw/needle.cu" <<PY
import re, sys
$glibc_rand_py
text = open(sys.argv[1]).read()
blosum = [int(v) for v in re.findall(r"-?\d+", text.split("blosum62[24][24] = {")[1].split("};")[0])]
n, penalty = 256 + 1, 10
rand = glibc_rand(7)
rows = [0] + [next(rand) % 10 + 1 for _ in range(1, n)]
cols = [0] + [next(rand) % 10 + 1 for _ in range(1, n)]
ref = [[blosum[rows[i] * 24 + cols[j]] if i and j else 0 for j in range(n)] for i in range(n)]
m = [[0] * n for _ in range(n)]
for i in range(n):
    m[i][0] = -i * penalty
    m[0][i] = -i * penalty
for i in range(1, n):
    for j in range(1, n):
        m[i][j] = max(m[i - 1][j - 1] + ref[i][j], m[i][j - 1] - penalty, m[i - 1][j] - penalty)
want = [m[n - 2][n - 2]]
i = j = n - 2
while not (i == 0 and j == 0):
    LIMIT = -999
    if i > 0 and j > 0:
        nw, w, no = m[i - 1][j - 1], m[i][j - 1], m[i - 1][j]
    elif i == 0:
        nw = no = LIMIT; w = m[i][j - 1]
    else:
        nw = w = LIMIT; no = m[i - 1][j]
    new_nw, new_w, new_n = nw + ref[i][j], w - penalty, no - penalty
    t = max(new_nw, new_w, new_n)
    if t == new_nw: t = nw
    if t == new_w: t = w
    if t == new_n: t = no
    want.append(t)
    if t == nw: i -= 1; j -= 1
    elif t == w: j -= 1
    elif t == no: i -= 1
    else: break
got = [int(v) for v in open("result.txt").read().split(":")[1].split()]
print("%d traceback scores, %d differ" % (len(want), sum(a != b for a, b in zip(got, want)) + abs(len(got) - len(want))))
sys.exit(0 if got == want else 1)
PY
}

# pathfinder -DBENCH_PRINT prints its grid of weights, then the first row
# and each column's cheapest path cost: the same dynamic program here.
check_pathfinder() {
  python3 - "$1" <<'PY'
import sys
rows, cols = 20, 1000
lines = [l.split() for l in open(sys.argv[1])]
grid = [list(map(int, l)) for l in lines if len(l) == cols and all(t.lstrip("-").isdigit() for t in l)]
wall, got = grid[:rows], grid[-1]
cost = wall[0]
for r in range(1, rows):
    cost = [wall[r][j] + min(cost[max(j - 1, 0):j + 2]) for j in range(cols)]
bad = sum(a != b for a, b in zip(got, cost))
print("%d costs, %d differ" % (cols, bad))
sys.exit(0 if bad == 0 and len(grid) == rows + 2 else 1)
PY
}

# hotspot's output against its stencil run in Python: each step moves a
# cell by step/Cap times its power plus its exchange with the four
# neighbours (a border cell's missing neighbour is itself) and with the
# ambient temperature.
check_hotspot() {
  python3 - <<'PY'
import sys
n, iters = 64, 2
temp = [float(l) for l in open("temp_64")]
power = [float(l) for l in open("power_64")]
t_chip, chip, k_si, spec_heat, factor, max_pd, precision, amb = 0.0005, 0.016, 100, 1.75e6, 0.5, 3.0e6, 0.001, 80.0
gh = gw = chip / n
cap = factor * spec_heat * t_chip * gw * gh
rx = gw / (2.0 * k_si * t_chip * gh)
ry = gh / (2.0 * k_si * t_chip * gw)
rz = t_chip / (k_si * gh * gw)
step = precision / (max_pd / (factor * t_chip * spec_heat))
for _ in range(iters):
    new = []
    for r in range(n):
        for c in range(n):
            t = temp[r * n + c]
            nn = temp[max(r - 1, 0) * n + c]; s = temp[min(r + 1, n - 1) * n + c]
            w = temp[r * n + max(c - 1, 0)]; e = temp[r * n + min(c + 1, n - 1)]
            new.append(t + step / cap * (power[r * n + c] + (s + nn - 2 * t) / ry + (e + w - 2 * t) / rx + (amb - t) / rz))
    temp = new
got = [float(l.split()[1]) for l in open("output.out")]
worst = max(abs(a - b) for a, b in zip(got, temp))
print("%d temperatures, largest difference %.1e" % (len(got), worst))
sys.exit(0 if len(got) == n * n and worst < 1e-3 else 1)
PY
}

# streamcluster and srad v1 against the suite's OpenMP versions, run the
# same way on the same input (streamcluster draws its points and its
# choices from lrand48's fixed sequence). srad's output image is whole
# grey levels, which single-precision rounding may move by one.
check_streamcluster() {
  mv output.txt gpu.txt && omp_build streamcluster streamcluster_omp.cpp &&
    ./omp-ref 10 20 16 1024 1024 100 none output.txt 1 > /dev/null 2>&1 &&
    compare_numbers gpu.txt output.txt 1e-4
}

# b+tree writes each query's answer to output.txt; its OpenMP version
# draws the same queries (rand() unseeded) and writes the same lines.
check_btree() {
  mv output.txt gpu.txt && omp_build b+tree main.c kernel/kernel_cpu.c kernel/kernel_cpu_2.c \
    util/timer/timer.c util/num/num.c &&
    ./omp-ref core 1 file keys.txt command command.txt > /dev/null &&
    compare_numbers gpu.txt output.txt 0
}

check_srad_v1() {
  mv image_out.pgm gpu.pgm && omp_build srad/srad_v1 main.c &&
    ./omp-ref 2 0.5 64 64 1 > /dev/null && compare_numbers gpu.pgm image_out.pgm 1 abs
}

# hotspot3D's power and temperature, 64 x 64 x 8, one value a line; it
# checks itself against its own CPU version and prints the RMS error.
setup_hotspot3D() {
  python3 -c '
import random
random.seed(38)
with open("temp_64x8", "w") as t, open("power_64x8", "w") as p:
    for _ in range(64 * 64 * 8):
        print("%.6f" % (320 + 20 * random.random()), file=t)
        print("%.6f" % (0.001 * random.random()), file=p)'
  echo 64 8 2 power_64x8 temp_64x8 output.out
}

check_hotspot3D() {
  awk '/^Accuracy:/ { ok = ($2 + 0 < 1e-3); found = 1 } END { exit !(found && ok) }' "$1"
}

# nn: 2000 hurricane records in the layout its generator writes (latitude
# and longitude at columns 29 and 34), in two files; the 5 nearest to
# (30, 90) are checked against a search here.
setup_nn() {
  python3 - <<'PY'
import random
random.seed(38)
names = ["ALBERTO", "BERYL", "CHRIS", "DEBBY", "ERNESTO"]
with open("list.txt", "w") as lst:
    for f in range(2):
        name = "cane_%d.db" % f
        print(name, file=lst)
        with open(name, "w") as db:
            for _ in range(1000):
                print("%4d %2d %2d %2d %2d %-9s %5.1f %5.1f %4d %4d" % (
                    1950 + random.randrange(55), 1 + random.randrange(12), 1 + random.randrange(28),
                    6 * random.randrange(4), 1 + random.randrange(28), random.choice(names),
                    7 + random.random() * 62, random.random() * 357, 10 + random.randrange(155),
                    random.randrange(900)), file=db)
PY
  echo list.txt -r 5 -lat 30 -lng 90
}

check_nn() {
  python3 - "$1" <<'PY'
import math, re, sys
recs = []
for name in open("list.txt").read().split():
    for line in open(name):
        lat, lng = float(line[28:33]), float(line[33:38])
        recs.append((math.sqrt((lat - 30) ** 2 + (lng - 90) ** 2), line.rstrip("\n")))
want = sorted(d for d, _ in recs)[:5]
got = [float(m.group(1)) for m in re.finditer(r"--> Distance=([\d.]+)", open(sys.argv[1]).read())]
worst = max((abs(a - b) for a, b in zip(sorted(got), want)), default=0.0)
print("%d nearest of %d, distances differ by at most %.1e" % (len(got), len(recs), worst))
sys.exit(0 if len(got) == 5 and worst < 1e-3 else 1)
PY
}

# srad v1 reads ../../../data/srad/image.pgm (a plain PGM, 502 x 458 in
# the suite's data) and resizes it to the rows and columns it is given.
setup_srad_v1() {
  mkdir -p ../../../data/srad
  python3 -c '
import random
random.seed(38)
rows, cols = 502, 458
with open("../../../data/srad/image.pgm", "w") as f:
    print("P2\n%d %d\n255" % (cols, rows), file=f)
    for r in range(rows):
        print(" ".join(str(min(255, max(0, int(128 + 60 * random.gauss(0, 1))))) for _ in range(cols)), file=f)'
  echo 2 0.5 64 64
}

# b+tree: the keys 1 to 10000 in a random order (the queries it draws
# fall among them), then 20 point and 20 range queries.
setup_btree() {
  python3 -c '
import random
random.seed(38)
keys = random.sample(range(1, 10001), 10000)
with open("keys.txt", "w") as f:
    print(len(keys), file=f)
    for k in keys: print(k, file=f)
with open("command.txt", "w") as f:
    print("k 20", file=f)
    print("j 20 100", file=f)'
  echo file keys.txt command command.txt
}

# huffman encodes a file on the device and on the host and compares: 64 KiB
# of bytes drawn unevenly, so that codes have several lengths.
setup_huffman() {
  python3 -c '
import random
random.seed(38)
data = bytes(min(255, int(random.expovariate(0.05))) for _ in range(65536))
open("input.bin", "wb").write(data)'
  echo input.bin
}

# Hooks built into programs that keep their results to themselves.
hooks=$work/hooks
mkdir -p "$hooks"
# gaussian prints its solution only under a flag no option sets: its
# globals are saved when the program ends.
cat > "$hooks/gaussian_hook.c" <<'C'
#include <stdio.h>
extern int Size;
extern float *finalVec;
__attribute__((destructor)) static void save_solution(void) {
  FILE *f = fopen("solution.txt", "w");
  for (int i = 0; f && finalVec && i < Size; i++)
    fprintf(f, "%.9g\n", finalVec[i]);
  if (f)
    fclose(f);
}
C
# backprop trains one step and frees the net without a word. Its device
# half sums input times weight per block of 16 inputs (copied back), from
# which the host makes the hidden layer, and adjusts the input weights
# (copied back, then dropped). Linked with --wrap, the hook keeps the
# first copy back (the sums) and the largest (the weights) and, when the
# net is freed, writes the device's sums, hidden layer and weights to
# gpu.txt and the same computed on the host (the sums here, the rest by
# the program's own functions) to host.txt. (The hidden units saturate
# at 1 for this input, so the weights do not change: the sums are what
# tests the device.)
cat > "$hooks/backprop_hook.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backprop.h"
void bpnn_layerforward(float *l1, float *l2, float **conn, int n1, int n2);
void bpnn_adjust_weights(float *delta, int ndelta, float *ly, int nly, float **w, float **oldw);
int __real_cudaMemcpy(void *dst, const void *src, size_t n, int kind);
void __real_bpnn_free(BPNN *net);
static float *copied, *partial;
static size_t copied_bytes, partial_bytes;
int __wrap_cudaMemcpy(void *dst, const void *src, size_t n, int kind) {
  int r = __real_cudaMemcpy(dst, src, n, kind);
  if (r == 0 && kind == 2 && !partial) {
    partial = malloc(n);
    memcpy(partial, dst, n);
    partial_bytes = n;
  }
  if (r == 0 && kind == 2 && n > copied_bytes) {
    free(copied);
    copied = malloc(n);
    memcpy(copied, dst, n);
    copied_bytes = n;
  }
  return r;
}
void __wrap_bpnn_free(BPNN *net) {
  int in = net->input_n, hid = net->hidden_n, k, j;
  float *hidden = calloc(hid + 1, sizeof(float));
  FILE *gpu = fopen("gpu.txt", "w"), *host = fopen("host.txt", "w");
  bpnn_layerforward(net->input_units, hidden, net->input_weights, in, hid);
  /* The first copy back: each block's 16 rows of input times weight,
     summed per hidden unit. */
  for (k = 0; k < in / 16 && partial_bytes == (size_t)in * sizeof(float); k++)
    for (j = 1; j <= hid; j++) {
      float sum = 0;
      for (int r = 16 * k + 1; r <= 16 * k + 16; r++)
        sum += net->input_units[r] * net->input_weights[r][j];
      fprintf(gpu, "%.9g\n", partial[k * hid + j - 1]);
      fprintf(host, "%.9g\n", sum);
    }
  for (j = 1; j <= hid; j++) {
    fprintf(gpu, "%.9g\n", net->hidden_units[j]);
    fprintf(host, "%.9g\n", hidden[j]);
  }
  bpnn_adjust_weights(net->hidden_delta, hid, net->input_units, in, net->input_weights,
                      net->input_prev_weights);
  for (k = 0; k <= in && copied_bytes == (size_t)(in + 1) * (hid + 1) * sizeof(float); k++)
    for (j = 0; j <= hid; j++) {
      fprintf(gpu, "%.9g\n", copied[k * (hid + 1) + j]);
      fprintf(host, "%.9g\n", net->input_weights[k][j]);
    }
  fclose(gpu);
  fclose(host);
  free(hidden);
  __real_bpnn_free(net);
}
C
# lavaMD seeds rand() with the time: linked with --wrap, time() is fixed
# for it and for its OpenMP version, whose forces it writes the same way.
cat > "$hooks/fixed_time.c" <<'C'
#include <time.h>
time_t __wrap_time(time_t *t) {
  if (t)
    *t = 38;
  return 38;
}
C
check_lavaMD() {
  mv result.txt gpu.txt && omp_build lavaMD main.c kernel/kernel_cpu.c util/num/num.c \
    util/timer/timer.c "$hooks/fixed_time.c" -DOUTPUT -Wl,--wrap=time &&
    ./omp-ref -cores 1 -boxes1d 2 > /dev/null && compare_numbers gpu.txt result.txt 1e-4
}
check_backprop() {
  compare_numbers gpu.txt host.txt 1e-5
}
# gaussian's solution of its 64 x 64 system (a[i][j] = 10 e^(-0.01 |i - j|),
# b all ones) against elimination in double precision here.
check_gaussian() {
  python3 - <<'PY'
import math, sys
n = 64
a = [[10 * math.exp(-0.01 * abs(i - j)) for j in range(n)] for i in range(n)]
b = [1.0] * n
for t in range(n):
    for i in range(t + 1, n):
        f = a[i][t] / a[t][t]
        for j in range(t, n):
            a[i][j] -= f * a[t][j]
        b[i] -= f * b[t]
x = [0.0] * n
for i in reversed(range(n)):
    x[i] = (b[i] - sum(a[i][j] * x[j] for j in range(i + 1, n))) / a[i][i]
got = [float(l) for l in open("solution.txt")]
scale = max(abs(v) for v in x)
worst = max((abs(g - w) / scale for g, w in zip(got, x)), default=1.0)
print("%d unknowns, largest difference %.1e of the largest" % (len(got), worst))
sys.exit(0 if len(got) == n and worst < 1e-3 else 1)
PY
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
  for f in $sources; do
    case $f in
      @*) files+=("$hooks/${f#@}") ;;
      *) files+=("$dir/$f") ;;
    esac
  done
  report=$work/report.json
  rm -f "$report"
  # The program runs in a directory of its own that mirrors its source
  # directory (some read files beside them), so its outputs stay there.
  # It sits at the same depth below $work/tree as the source directory
  # below $SUITES_SRC, for programs that read ../../data.
  run=$work/tree/${dir#"$src"/}
  rm -rf "$work/tree" && mkdir -p "$run" && cp -rs "$dir/." "$run/"
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
    # A check may print one line on how close the output came.
    if detail=$(cd "$run" && "check_${want#@}" "$work/stdout"); then result="pass"; else result="fail (wrong output)"; fi
    [ -n "$detail" ] && result="$result: $detail"
  elif [ -n "$want" ] && [ "$want" != "=exit" ] && ! grep -q "$want" "$work/stdout"; then
    result="fail (no '$want')"
  elif [ -n "$want" ]; then
    result="pass"
  else
    result="ran"
  fi
  if [ -n "$reports" ] && [ -s "$report" ]; then
    cp "$report" "$reports/$(echo "$name" | sed 's/[^A-Za-z0-9+]\{1,\}/_/g; s/_$//').json"
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
if [ "$out" != /dev/stdout ]; then
  cp "$log" "${out%.md}.log"
  python3 "$root/scripts/run-measured.py" "$reports" > "${out%.md}.measured.md"
fi
exit 0
