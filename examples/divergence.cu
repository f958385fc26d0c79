// divergence.cu - three kinds of control flow inside one kernel.
//
// A warp executes in lock-step: when its 32 lanes disagree on a branch the
// warp runs both sides one after the other with the inactive lanes masked.
// Only branches on per-thread values diverge; branches on per-block values
// are uniform across every warp and cost nothing extra.

__global__ void branches(const float *in, float *out, int n) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n) return;
  float v = in[idx];

  // Divergent: odd and even lanes take different arms, so each warp pays
  // for both the sqrt path and the exp path.
  if (threadIdx.x % 2) {
    v = sqrtf(fabsf(v)) + in[n - 1 - idx];
  } else {
    v = expf(-v * v) * in[idx / 2];
  }

  // Warp-uniform: blockIdx.x is the same for every thread of the block.
  if (blockIdx.x > 3) {
    v += in[blockIdx.x];
  }

  // Divergent trip count: lane k iterates k times, so the whole warp keeps
  // looping until its last lane finishes while the others sit idle.
  for (int i = 0; i < threadIdx.x; i++) {
    v = v * 0.99f + 1.0f;
  }

  out[idx] = v;
}
