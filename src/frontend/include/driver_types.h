/* driver_types.h without a CUDA toolkit: warpcheck_cuda.h, which the build
 * force-includes (-include), declares what this header would. */
#pragma once
#include "../warpcheck_cuda.h"
/* The toolkit header's guard, which helpers such as the samples'
 * helper_cuda.h test before they use the runtime API. */
#ifndef __DRIVER_TYPES_H__
#define __DRIVER_TYPES_H__
#endif
