// particles.cu - the same update on an array of structures and on a
// structure of arrays.
//
// With an array of 24-byte structures, lane l reads p[i].x at 24 l bytes:
// a warp's 32 floats are spread over 24 sectors instead of 4. With one
// array per field, neighbouring lanes read neighbouring floats.
struct Particle { float x, y, z, vx, vy, vz; };

__global__ void step_aos(Particle *p, float dt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    p[i].x += p[i].vx * dt;   // uncoalesced: 24 sectors per request
    p[i].y += p[i].vy * dt;
    p[i].z += p[i].vz * dt;
  }
}

__global__ void step_soa(float *x, float *y, float *z, const float *vx,
                         const float *vy, const float *vz, float dt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] += vx[i] * dt;       // coalesced: 4 sectors per request
    y[i] += vy[i] * dt;
    z[i] += vz[i] * dt;
  }
}

// Row sums of a row-major matrix, one thread per row: at each step lane l
// reads row l, so the warp's 32 floats are COLS floats (4 KiB) apart: one
// sector each, 32 per request.
#define COLS 1024
__global__ void row_sums_by_thread(const float *m, float *sums, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0.0f;
  for (int c = 0; c < COLS; c++) s += m[r * COLS + c];
  sums[r] = s;
}

// One warp per row: lanes read neighbouring floats (4 sectors per
// request), then combine their partial sums with shuffles.
__global__ void row_sums_by_warp(const float *m, float *sums, int rows) {
  int lane = threadIdx.x % 32, r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (r >= rows) return;
  float s = 0.0f;
  for (int c = lane; c < COLS; c += 32) s += m[r * COLS + c];
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) sums[r] = s;
}
