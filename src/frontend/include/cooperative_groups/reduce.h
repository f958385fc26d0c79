/*
 * cooperative_groups/reduce.h - warpcheck's cg::reduce and its operators,
 * for toolkit-less analysis (see ../cooperative_groups.h).
 *
 * A tile reduces by a butterfly of shfl_xor, so every rank ends with the
 * result; a coalesced group, whose lanes need not be contiguous, by a tree
 * of shfl_down over ranks and a broadcast from rank 0.
 */
#ifndef WARPCHECK_COOPERATIVE_GROUPS_REDUCE_H
#define WARPCHECK_COOPERATIVE_GROUPS_REDUCE_H

#pragma clang system_header

#include <cooperative_groups.h>

#define __WC_CG __device__ __inline__ __attribute__((always_inline))

namespace cooperative_groups {

template <class __T> struct plus {
  __WC_CG __T operator()(const __T &__a, const __T &__b) const {
    return __a + __b;
  }
};
/* less picks the smaller value, greater the larger. */
template <class __T> struct less {
  __WC_CG __T operator()(const __T &__a, const __T &__b) const {
    return __b < __a ? __b : __a;
  }
};
template <class __T> struct greater {
  __WC_CG __T operator()(const __T &__a, const __T &__b) const {
    return __a < __b ? __b : __a;
  }
};
template <class __T> struct bit_and {
  __WC_CG __T operator()(const __T &__a, const __T &__b) const {
    return __a & __b;
  }
};
template <class __T> struct bit_or {
  __WC_CG __T operator()(const __T &__a, const __T &__b) const {
    return __a | __b;
  }
};
template <class __T> struct bit_xor {
  __WC_CG __T operator()(const __T &__a, const __T &__b) const {
    return __a ^ __b;
  }
};

template <unsigned int __N, class __P, class __T, class __Op>
__WC_CG __T reduce(const thread_block_tile<__N, __P> &__g, __T __v,
                   __Op &&__op) {
  if constexpr (__N <= 32) {
    for (unsigned int __k = __N / 2; __k > 0; __k /= 2) {
      __v = __op(__v, __g.shfl_xor(__v, __k));
    }
    return __v;
  } else {
    /* Each warp reduces by a butterfly, its lane 0 leaves the result in
     * the warp's slot, and every thread of the tile combines its warps'
     * slots in order; the second sync keeps the slots until all have. */
    __shared__ __T __slot[32];
    for (unsigned int __k = 16; __k > 0; __k /= 2) {
      __v = __op(__v, __shfl_xor_sync(0xffffffffu, __v, __k));
    }
    unsigned int __warp = thread_block::thread_rank() / 32;
    if (__g.thread_rank() % 32 == 0) {
      __slot[__warp] = __v;
    }
    __g.sync();
    unsigned int __first = __warp & ~(__N / 32 - 1);
    __T __r = __slot[__first];
    for (unsigned int __w = 1; __w < __N / 32; ++__w) {
      __r = __op(__r, __slot[__first + __w]);
    }
    __g.sync();
    return __r;
  }
}

template <class __T, class __Op>
__WC_CG __T reduce(const coalesced_group &__g, __T __v, __Op &&__op) {
  unsigned int __rank = __g.thread_rank();
  unsigned int __n = __g.size();
  for (unsigned int __k = 1; __k < __n; __k *= 2) {
    __T __other = __g.shfl_down(__v, __k);
    if (__rank + __k < __n) {
      __v = __op(__v, __other);
    }
  }
  return __g.shfl(__v, 0);
}

} // namespace cooperative_groups

#undef __WC_CG

#endif /* WARPCHECK_COOPERATIVE_GROUPS_REDUCE_H */
