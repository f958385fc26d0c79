#!/usr/bin/env python3
"""Writes a large .cu file for scripts/bench-acf.sh: KERNELS kernels, each
with a grid-stride loop, strided and tiled global accesses, a shared tile,
lane and warp tests and a data-dependent branch, so that every ACF check
has many sites to decide."""
import sys

kernels = int(sys.argv[1]) if len(sys.argv) > 1 else 100
out = ["#define TILE 32"]
for k in range(kernels):
    s = k % 7 + 1
    out.append(f"""
__global__ void k{k}(const float *in, float *out, const int *idx, int n, int w) {{
  __shared__ float tile[TILE][TILE + {k % 2}];
  int t = threadIdx.x, lane = t % 32, warp = t / 32;
  int i = blockIdx.x * blockDim.x + t;
  float acc = 0.0f;
  for (int j = i; j < n; j += blockDim.x * gridDim.x) {{
    acc += in[j] * in[{s} * j % n];
    if (j % {s + 1} == 0) acc += in[idx[j]];
  }}
  tile[t % TILE][lane] = acc;
  __syncthreads();
  if (lane < {k % 32}) acc += tile[lane][t % TILE];
  if (warp == {k % 8}) acc *= 2.0f;
  if (in[i % n] > acc) out[(i * {s}) % n] = acc;
  for (int r = 0; r < {k % 5 + 2}; r++)
    if (i + r * w < n) out[i + r * w] += tile[(lane + r) % TILE][warp];
  if (lane == 0) out[blockIdx.x * 8 + warp] = acc;
}}""")
print("\n".join(out))
