/* cuda_profiler_api.h without a CUDA toolkit: the profiler's start and
 * stop calls, which an analysis never runs. */
#pragma once
#include "../warpcheck_cuda.h"

extern "C" {
cudaError_t cudaProfilerStart(void);
cudaError_t cudaProfilerStop(void);
}
