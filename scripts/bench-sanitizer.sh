#!/usr/bin/env bash
# What `warpcheck run`'s sanitizer (shared-memory races, reads of
# never-written device memory) costs: a generated program launches a
# vector add (its output buffer written only by the kernel, so every store
# updates the unwritten-byte bitmap), a shared-memory tree reduction
# (every shared access goes through the race shadow) and a shuffle
# reduction (warp collectives) on 1M elements, and times each launch on
# the host in CPU time (the simulator runs in the program's own process,
# on one core; CPU time stays put on a loaded machine where wall time
# does not), best of the runs. Compare two builds by running it with each:
#
#   scripts/bench-sanitizer.sh [runs, default 3]
#   WARPCHECK=/path/to/other/warpcheck scripts/bench-sanitizer.sh
#
# WARPCHECK names the binary (default target/release/warpcheck).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
bin=${WARPCHECK:-$root/target/release/warpcheck}
[ -x "$bin" ] || { echo "no warpcheck binary at $bin (cargo build --release, or set WARPCHECK)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/bench.cu" <<'CU'
#include <cstdio>
#include <ctime>
#define BLOCK 256

__global__ void vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

__global__ void reduce_shared(const float *in, float *out, int n) {
  __shared__ float s[BLOCK];
  unsigned t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned step = blockDim.x / 2; step > 0; step >>= 1) {
    if (t < step)
      s[t] += s[t + step];
    __syncthreads();
  }
  if (t == 0)
    out[blockIdx.x] = s[0];
}

__global__ void reduce_shuffle(const float *in, float *out, int n) {
  __shared__ float partial[BLOCK / 32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_down_sync(0xffffffff, v, o);
  if (threadIdx.x % 32 == 0)
    partial[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < BLOCK / 32 ? partial[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o /= 2)
      v += __shfl_down_sync(0xffffffff, v, o);
    if (threadIdx.x == 0)
      out[blockIdx.x] = v;
  }
}

static double ms_since(std::clock_t t) {
  return 1000.0 * double(std::clock() - t) / CLOCKS_PER_SEC;
}

int main() {
  const int n = 1 << 20, blocks = n / BLOCK;
  float *host = new float[n];
  for (int i = 0; i < n; ++i)
    host[i] = 1.0f;
  float *a, *b, *c, *sums;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&c, n * sizeof(float));
  cudaMalloc(&sums, blocks * sizeof(float));
  cudaMemcpy(a, host, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(b, host, n * sizeof(float), cudaMemcpyHostToDevice);
  std::clock_t t = std::clock();
  vector_add<<<blocks, BLOCK>>>(a, b, c, n);
  cudaDeviceSynchronize();
  printf("vector_add %.1f\n", ms_since(t));
  t = std::clock();
  reduce_shared<<<blocks, BLOCK>>>(c, sums, n);
  cudaDeviceSynchronize();
  printf("reduce_shared %.1f\n", ms_since(t));
  t = std::clock();
  reduce_shuffle<<<blocks, BLOCK>>>(c, sums, n);
  cudaDeviceSynchronize();
  printf("reduce_shuffle %.1f\n", ms_since(t));
  float first = 0;
  cudaMemcpy(&first, sums, sizeof first, cudaMemcpyDeviceToHost);
  return first == 2.0f * BLOCK ? 0 : 1;
}
CU

for _ in $(seq "$runs"); do
  (cd "$work" && "$bin" run bench.cu -O2 2>"$work/stderr") >> "$work/times" || {
    cat "$work/stderr" >&2
    exit 1
  }
done
echo "$bin"
awk '{ if (!($1 in best) || $2 < best[$1]) best[$1] = $2 }
     END { for (k in best) printf "  %-16s %8.1f ms of CPU a launch (best of '"$runs"')\n", k, best[k] }' "$work/times" | sort
