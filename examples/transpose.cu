// transpose.cu - matrix transpose three ways (launch with 32x32 blocks).
//
// Reading rows and writing columns means one side of a naive transpose is
// strided. Staging a tile in shared memory makes both global accesses
// coalesced, but reading the tile by column then hits one shared-memory bank
// 32 times - unless the tile is padded to 33 columns.
#define TILE 32

// Reads are coalesced; writes stride by `height` floats: uncoalesced.
__global__ void transpose_naive(float *out, const float *in, int width, int height) {
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  if (x < width && y < height) out[x * height + y] = in[y * width + x];
}

// Coalesced in and out, but tile[threadIdx.x][...] has a 32-float stride:
// all lanes of a warp land in the same bank (32-way conflict).
__global__ void transpose_shared(float *out, const float *in, int width, int height) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  if (x < width && y < height) tile[threadIdx.y][threadIdx.x] = in[y * width + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  if (x < height && y < width) out[y * height + x] = tile[threadIdx.x][threadIdx.y];
}

// Same as above with one padding column: a 33-float row stride spreads a
// column across all 32 banks, so the tile reads are conflict-free.
__global__ void transpose_padded(float *out, const float *in, int width, int height) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  if (x < width && y < height) tile[threadIdx.y][threadIdx.x] = in[y * width + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  if (x < height && y < width) out[y * height + x] = tile[threadIdx.x][threadIdx.y];
}
