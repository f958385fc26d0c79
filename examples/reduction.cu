// reduction.cu - summing an array, the shared-memory way and the shuffle way.
#define BLOCK 256

// Classic tree reduction: halve the number of active threads each step.
// `if (tid < s)` only diverges inside a warp once s drops below 32, and the
// barrier has to be reached by every thread, so it stays outside the branch.
__global__ void __launch_bounds__(BLOCK) reduce_shared(const float *in, float *out, int n) {
  __shared__ float sdata[BLOCK];
  unsigned tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Sum across a warp through registers: no shared memory, no barrier.
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}

// Grid-stride loop, one shuffle reduction per warp, then the first warp
// reduces the per-warp partials and adds the block total to *out.
__global__ void reduce_shuffle(const float *in, float *out, int n) {
  __shared__ float partial[32];
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    sum += in[i];
  sum = warp_sum(sum);

  unsigned lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  if (lane == 0) partial[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = (lane < blockDim.x / warpSize) ? partial[lane] : 0.0f;
    sum = warp_sum(sum);
    if (lane == 0) atomicAdd(out, sum);
  }
}
