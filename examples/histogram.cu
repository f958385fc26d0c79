// histogram.cu - byte histogram with atomics, global vs. shared memory.
#define NUM_BINS 256

// Every increment is a global atomic; popular bins serialise all over the GPU.
__global__ void histogram_global(const unsigned char *data, unsigned int *bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&bins[data[i]], 1u);
}

// Privatised: each block counts into its own shared-memory copy (fast
// on-chip atomics, contention only within the block), then merges it into
// the global histogram with one atomic per bin.
__global__ void histogram_shared(const unsigned char *data, unsigned int *bins, int n) {
  __shared__ unsigned int local[NUM_BINS];
  for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) local[b] = 0;
  __syncthreads();

  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();

  for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
    if (local[b] != 0) atomicAdd(&bins[b], local[b]);
}
