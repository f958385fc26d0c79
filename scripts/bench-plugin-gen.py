#!/usr/bin/env python3
"""Writes a templated block reduction for scripts/bench-plugin.sh: a
template step<S> that halves the active threads with `if (tid < S)` and
recurses down to a warp, instantiated for INSTANCES (block size, scale)
pairs, so that one file holds over a thousand thread-dependent branches
after inlining and unrolling."""
import sys

instances = int(sys.argv[1]) if len(sys.argv) > 1 else 120
print("""template <int S> struct Step {
  __device__ __forceinline__ static void run(float *s, unsigned tid) {
    if (tid < S) s[tid] += s[tid + S];
    if (S > 32) __syncthreads(); else __syncwarp();
    Step<S / 2>::run(s, tid);
  }
};
template <> struct Step<0> {
  __device__ __forceinline__ static void run(float *, unsigned) {}
};

template <int B, int K>
__global__ void reduce(const float *in, float *out, int n) {
  __shared__ float s[B];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * B * 2 + tid;
  float v = 0.0f;
  if (i < n) v = in[i] * K;
  if (i + B < n) v += in[i + B];
  s[tid] = v;
  __syncthreads();
  Step<B / 2>::run(s, tid);
  #pragma unroll
  for (int r = 0; r < K % 4 + 1; r++)
    if (tid == r) out[blockIdx.x * 4 + r] = s[0] + r;
}
""")
sizes = [64, 128, 256, 512, 1024]
for k in range(instances):
    b = sizes[k % len(sizes)]
    print(f"template __global__ void reduce<{b}, {k + 1}>(const float *, float *, int);")
