/* cuda_runtime.h without a CUDA toolkit: warpcheck_cuda.h, which the build
 * force-includes (-include), declares what this header would. */
#pragma once
#include "../warpcheck_cuda.h"
