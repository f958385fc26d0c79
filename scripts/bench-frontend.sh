#!/usr/bin/env bash
# A `check -p` run over a generated project next to the device-only
# compiles it stands for. Target: warpcheck / clang <= 1.2.
#
# usage: scripts/bench-frontend.sh [FILES] [JOBS]
#
# Writes FILES small .cu files (default 200) and a compile_commands.json
# with nvcc command lines, then times, with JOBS in parallel (default: all
# cores): (a) clang-19 device-only compiles of every file with warpcheck's
# flags (header force-included, as a build without warpcheck's cache
# would), and (b) `warpcheck check -p` (its header precompiled once, in a
# fresh cache, so the first file pays for it).
set -euo pipefail
cd "$(dirname "$0")/.."
files=${1:-200}
jobs=${2:-$(nproc)}
cargo build --release --quiet
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src" "$dir/build" "$dir/cache"
entries=()
for i in $(seq 1 "$files"); do
  cat > "$dir/src/k$i.cu" <<CU
__global__ void k$i(float *out, const float *in, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n && (t % $(( i % 7 + 2 ))) == 0) out[t] = in[t * $(( i % 3 + 1 ))] * 2.0f;
}
CU
  entries+=("{\"directory\": \"$dir/build\", \"file\": \"$dir/src/k$i.cu\", \"command\": \"nvcc -O3 -arch=sm_80 -c $dir/src/k$i.cu -o k$i.o\"}")
done
(IFS=,; echo "[${entries[*]}]") > "$dir/build/compile_commands.json"

flags=(-x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -O2 -gline-tables-only
  -nocudainc -nocudalib -Xclang -target-feature -Xclang +ptx75
  -include src/frontend/warpcheck_cuda.h -emit-llvm -c -o /dev/null)
s=$(date +%s%N)
ls "$dir"/src/*.cu | xargs -P "$jobs" -I{} clang-19 "${flags[@]}" {}
e=$(date +%s%N)
clang_ms=$(( (e - s) / 1000000 ))

s=$(date +%s%N)
XDG_CACHE_HOME="$dir/cache" target/release/warpcheck check -j "$jobs" -p "$dir/build" >/dev/null 2>&1 || true
e=$(date +%s%N)
wc_ms=$(( (e - s) / 1000000 ))

echo "files $files, jobs $jobs"
echo "clang-19 device-only compiles: $clang_ms ms"
echo "warpcheck check -p:            $wc_ms ms"
awk -v a="$wc_ms" -v c="$clang_ms" 'BEGIN { printf "ratio: %.2f (target <= 1.2)\n", a / c }'
