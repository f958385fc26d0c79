// vector_add.cu - the "hello world" of CUDA: one thread per element.
//
// Consecutive threads touch consecutive floats, so every warp's loads and
// stores are fully coalesced; the `if (i < n)` guard only diverges in the
// last, partially filled block.
#include <stdio.h>
#include <stdlib.h>

__global__ void vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main(void) {
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  float *h_a = (float *)malloc(bytes), *h_b = (float *)malloc(bytes);
  float *h_c = (float *)malloc(bytes);
  for (int i = 0; i < n; i++) { h_a[i] = i; h_b[i] = 2.0f * i; }

  float *d_a, *d_b, *d_c;
  cudaMalloc(&d_a, bytes);
  cudaMalloc(&d_b, bytes);
  cudaMalloc(&d_c, bytes);
  cudaMemcpy(d_a, h_a, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(d_b, h_b, bytes, cudaMemcpyHostToDevice);

  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  vector_add<<<blocks, threads>>>(d_a, d_b, d_c, n);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    fprintf(stderr, "launch failed: %s\n", cudaGetErrorString(err));
    return 1;
  }
  cudaMemcpy(h_c, d_c, bytes, cudaMemcpyDeviceToHost);

  int errors = 0;
  for (int i = 0; i < n; i++) errors += h_c[i] != 3.0f * i;
  printf("%s (%d mismatches)\n", errors ? "FAILED" : "ok", errors);

  cudaFree(d_a); cudaFree(d_b); cudaFree(d_c);
  free(h_a); free(h_b); free(h_c);
  return errors != 0;
}
