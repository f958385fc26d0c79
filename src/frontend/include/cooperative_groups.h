/*
 * cooperative_groups.h - warpcheck's subset of CUDA's cooperative groups,
 * for toolkit-less analysis.
 *
 * Written for warpcheck on top of the warp intrinsics of warpcheck_cuda.h
 * (which warpcheck force-includes): every group operation becomes the
 * shuffles, votes and barriers the analyses and the simulator already
 * know, so a kernel written with cooperative groups reads like one written
 * with the intrinsics. What it covers, and what it leaves out, is listed
 * in warpcheck's README ("Cooperative groups without a toolkit").
 *
 * The one operation with no intrinsic is the grid-wide barrier:
 * grid_group::sync() calls the external function __warpcheck_grid_sync(),
 * which the simulator recognises by name.
 */
#ifndef WARPCHECK_COOPERATIVE_GROUPS_H
#define WARPCHECK_COOPERATIVE_GROUPS_H

#pragma clang system_header

#if !defined(WARPCHECK_CUDA_H)
#error "warpcheck's cooperative_groups.h needs warpcheck_cuda.h (-include it)"
#endif

#define __WC_CG __device__ __inline__ __attribute__((always_inline))

/* The grid-wide barrier of grid_group::sync(). */
extern "C" __device__ void __warpcheck_grid_sync(void) __attribute__((nothrow));

namespace cooperative_groups {

/* Implementation details; not part of the interface. */
namespace __wc_cg {

__WC_CG unsigned int lane() { return __nvvm_read_ptx_sreg_laneid(); }
__WC_CG unsigned int lanes_below() { return __nvvm_read_ptx_sreg_lanemask_lt(); }

/* The lane holding the `n`-th (from 0) set bit of `mask`: a binary search
 * over halves, the same steps in every lane. */
__WC_CG unsigned int nth_lane(unsigned int mask, unsigned int n) {
  unsigned int pos = 0;
  for (unsigned int width = 16; width > 0; width /= 2) {
    unsigned int below = __popc((mask >> pos) & ((1u << width) - 1));
    bool above = n >= below;
    n = above ? n - below : n;
    pos = above ? pos + width : pos;
  }
  return pos;
}

/* `bits` with the bits of the lanes in `mask` packed down, in lane order:
 * bit r of the result is the bit of the r-th lane of `mask`. */
__WC_CG unsigned int pack_lanes(unsigned int bits, unsigned int mask) {
  unsigned int out = 0;
  unsigned int rank = 0;
  for (unsigned int m = mask; m != 0; m &= m - 1, ++rank) {
    out |= ((bits & m & (0u - m)) != 0 ? 1u : 0u) << rank;
  }
  return out;
}

/* Shuffles of any type: the intrinsics' own overloads for the arithmetic
 * types, 32-bit words otherwise. */
#define __WC_CG_SHFL(NAME, PRIM)                                               \
  template <class __T>                                                         \
  __WC_CG __T NAME(unsigned int __m, __T __v, int __l, int __w) {              \
    int __words[(sizeof(__T) + 3) / 4];                                        \
    __builtin_memcpy(__words, &__v, sizeof(__T));                              \
    for (unsigned int __k = 0; __k < (sizeof(__T) + 3) / 4; ++__k)             \
      __words[__k] = PRIM(__m, __words[__k], __l, __w);                        \
    __builtin_memcpy(&__v, __words, sizeof(__T));                              \
    return __v;                                                                \
  }                                                                            \
  __WC_CG int NAME(unsigned int __m, int __v, int __l, int __w) {              \
    return PRIM(__m, __v, __l, __w);                                           \
  }                                                                            \
  __WC_CG unsigned int NAME(unsigned int __m, unsigned int __v, int __l,       \
                            int __w) {                                         \
    return PRIM(__m, __v, __l, __w);                                           \
  }                                                                            \
  __WC_CG long long NAME(unsigned int __m, long long __v, int __l, int __w) {  \
    return PRIM(__m, __v, __l, __w);                                           \
  }                                                                            \
  __WC_CG unsigned long long NAME(unsigned int __m, unsigned long long __v,    \
                                  int __l, int __w) {                          \
    return PRIM(__m, __v, __l, __w);                                           \
  }                                                                            \
  __WC_CG float NAME(unsigned int __m, float __v, int __l, int __w) {          \
    return PRIM(__m, __v, __l, __w);                                           \
  }                                                                            \
  __WC_CG double NAME(unsigned int __m, double __v, int __l, int __w) {        \
    return PRIM(__m, __v, __l, __w);                                           \
  }

__WC_CG_SHFL(shfl_idx, __shfl_sync)
__WC_CG_SHFL(shfl_up, __shfl_up_sync)
__WC_CG_SHFL(shfl_down, __shfl_down_sync)
__WC_CG_SHFL(shfl_xor, __shfl_xor_sync)
#undef __WC_CG_SHFL

} // namespace __wc_cg

/* ------------------------------------------------------------------------ */
/* The thread block                                                          */
/* ------------------------------------------------------------------------ */

/* Groups are made by this_thread_block(), tiled_partition(),
 * coalesced_threads() and this_grid(); their constructors are internal. */
class thread_block {
public:
  __WC_CG thread_block() {}
  __WC_CG static void sync() { __syncthreads(); }
  /* The linear rank: x fastest, as warps are formed. */
  __WC_CG static unsigned int thread_rank() {
    return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  }
  __WC_CG static unsigned int num_threads() {
    return blockDim.x * blockDim.y * blockDim.z;
  }
  __WC_CG static unsigned int size() { return num_threads(); }
  __WC_CG static dim3 group_index() {
    return dim3(blockIdx.x, blockIdx.y, blockIdx.z);
  }
  __WC_CG static dim3 thread_index() {
    return dim3(threadIdx.x, threadIdx.y, threadIdx.z);
  }
  __WC_CG static dim3 dim_threads() {
    return dim3(blockDim.x, blockDim.y, blockDim.z);
  }
  __WC_CG static dim3 group_dim() { return dim_threads(); }
};

__WC_CG thread_block this_thread_block() { return thread_block(); }

/* The scratch CUDA's multi-warp tiles exchange through, declared
 * `__shared__` by the program; warpcheck's tiles keep their own. */
template <unsigned int __MaxBlockSize, unsigned int __TileCount = 0>
struct block_tile_memory {
  unsigned char __unused;
};

template <unsigned int __S, unsigned int __C>
__WC_CG thread_block this_thread_block(block_tile_memory<__S, __C> &) {
  return thread_block();
}

/* ------------------------------------------------------------------------ */
/* Tiles of a warp: thread_block_tile<N> for N = 1, 2, 4, ..., 32            */
/* ------------------------------------------------------------------------ */

template <unsigned int __N, class __Parent = void> class thread_block_tile;

namespace __wc_cg {
/* What every tile of `__N` threads has: its size, and which tile of its
 * parent it is and how many the parent holds. */
template <unsigned int __N> class tile_shape {
  static_assert(__N >= 1 && __N <= 1024 && (__N & (__N - 1)) == 0,
                "warpcheck's cooperative groups: tiles of a power of two "
                "threads, at most 1024");

  unsigned int __meta_rank;
  unsigned int __meta_size;

public:
  __WC_CG tile_shape(unsigned int __rank, unsigned int __groups)
      : __meta_rank(__rank), __meta_size(__groups) {}

  __WC_CG static constexpr unsigned int num_threads() { return __N; }
  __WC_CG static constexpr unsigned int size() { return __N; }
  __WC_CG unsigned int meta_group_rank() const { return __meta_rank; }
  __WC_CG unsigned int meta_group_size() const { return __meta_size; }
};

template <unsigned int __N, bool __MultiWarp = (__N > 32)> class tile;

/* A tile is `__N` consecutive lanes of one warp, starting at a multiple of
 * `__N`; its rank is the lane's position within it. */
template <unsigned int __N> class tile<__N, false> : public tile_shape<__N> {
  __WC_CG static unsigned int __mask() {
    return __N == 32 ? 0xffffffffu
                     : ((1u << __N) - 1) << (__wc_cg::lane() & ~(__N - 1));
  }

public:
  __WC_CG tile(unsigned int __rank, unsigned int __groups)
      : tile_shape<__N>(__rank, __groups) {}

  __WC_CG static unsigned int thread_rank() {
    return __wc_cg::lane() & (__N - 1);
  }
  __WC_CG static void sync() { __syncwarp(__mask()); }

  template <class __T> __WC_CG __T shfl(__T __v, int __src) const {
    return __wc_cg::shfl_idx(__mask(), __v, __src, __N);
  }
  template <class __T> __WC_CG __T shfl_up(__T __v, unsigned int __d) const {
    return __wc_cg::shfl_up(__mask(), __v, (int)__d, __N);
  }
  template <class __T> __WC_CG __T shfl_down(__T __v, unsigned int __d) const {
    return __wc_cg::shfl_down(__mask(), __v, (int)__d, __N);
  }
  template <class __T> __WC_CG __T shfl_xor(__T __v, unsigned int __m) const {
    return __wc_cg::shfl_xor(__mask(), __v, (int)__m, __N);
  }

  __WC_CG int any(int __p) const { return __any_sync(__mask(), __p) != 0; }
  __WC_CG int all(int __p) const { return __all_sync(__mask(), __p) != 0; }
  /* Bit r is the vote of the tile's rank r. */
  __WC_CG unsigned int ballot(int __p) const {
    return __ballot_sync(__mask(), __p) >> (__wc_cg::lane() & ~(__N - 1));
  }
  template <class __T> __WC_CG unsigned int match_any(__T __v) const {
    return __match_any_sync(__mask(), __v) >> (__wc_cg::lane() & ~(__N - 1));
  }
  template <class __T>
  __WC_CG unsigned int match_all(__T __v, int &__pred) const {
    return __match_all_sync(__mask(), __v, &__pred) >>
           (__wc_cg::lane() & ~(__N - 1));
  }
};

/* A tile of `__N` threads, 64 to 1024, is `__N / 32` consecutive warps of
 * the block (by linear rank). Its sync is the block's barrier: right when
 * every tile of the block syncs together, as they do in the reductions
 * multi-warp tiles are made for; a tile syncing alone is reported as a
 * deadlock. Its collectives exchange through shared memory of their own
 * (the `block_tile_memory` a program declares is not needed). */
template <unsigned int __N> class tile<__N, true> : public tile_shape<__N> {
public:
  __WC_CG tile(unsigned int __rank, unsigned int __groups)
      : tile_shape<__N>(__rank, __groups) {}

  __WC_CG static unsigned int thread_rank() {
    return thread_block::thread_rank() & (__N - 1);
  }
  __WC_CG static void sync() { __syncthreads(); }
};
} // namespace __wc_cg

template <unsigned int __N>
class thread_block_tile<__N, void> : public __wc_cg::tile<__N> {
public:
  __WC_CG thread_block_tile(unsigned int __rank, unsigned int __groups)
      : __wc_cg::tile<__N>(__rank, __groups) {}
};

/* The tile as tiled_partition returns it, remembering its parent's type;
 * it converts to thread_block_tile<N>. */
template <unsigned int __N, class __Parent>
class thread_block_tile : public thread_block_tile<__N, void> {
public:
  __WC_CG thread_block_tile(unsigned int __rank, unsigned int __groups)
      : thread_block_tile<__N, void>(__rank, __groups) {}
};

template <unsigned int __N>
__WC_CG thread_block_tile<__N, thread_block>
tiled_partition(const thread_block &__g) {
  return thread_block_tile<__N, thread_block>(
      __g.thread_rank() / __N, (__g.size() + __N - 1) / __N);
}

template <unsigned int __N, unsigned int __K, class __P>
__WC_CG thread_block_tile<__N, thread_block_tile<__K, __P>>
tiled_partition(const thread_block_tile<__K, __P> &__g) {
  static_assert(__N <= __K, "a tile can only be split into smaller tiles");
  return thread_block_tile<__N, thread_block_tile<__K, __P>>(
      __g.thread_rank() / __N, __K / __N);
}

/* ------------------------------------------------------------------------ */
/* Coalesced groups: the lanes active together                               */
/* ------------------------------------------------------------------------ */

class coalesced_group {
  unsigned int __lanes;

  /* The lane holding rank `__r`, or this lane when no lane does. */
  __WC_CG unsigned int __lane_of(unsigned int __r) const {
    return __r < size() ? __wc_cg::nth_lane(__lanes, __r) : __wc_cg::lane();
  }

public:
  __WC_CG explicit coalesced_group(unsigned int __m) : __lanes(__m) {}

  __WC_CG unsigned int num_threads() const { return __popc(__lanes); }
  __WC_CG unsigned int size() const { return num_threads(); }
  __WC_CG unsigned int thread_rank() const {
    return __popc(__lanes & __wc_cg::lanes_below());
  }
  __WC_CG unsigned int meta_group_rank() const { return 0; }
  __WC_CG unsigned int meta_group_size() const { return 1; }
  __WC_CG void sync() const { __syncwarp(__lanes); }

  template <class __T> __WC_CG __T shfl(__T __v, unsigned int __src) const {
    return __wc_cg::shfl_idx(__lanes, __v, (int)__wc_cg::nth_lane(__lanes, __src),
                             32);
  }
  template <class __T> __WC_CG __T shfl_down(__T __v, unsigned int __d) const {
    return __wc_cg::shfl_idx(__lanes, __v, (int)__lane_of(thread_rank() + __d),
                             32);
  }
  template <class __T> __WC_CG __T shfl_up(__T __v, unsigned int __d) const {
    unsigned int __r = thread_rank();
    return __wc_cg::shfl_idx(
        __lanes, __v, (int)(__r >= __d ? __lane_of(__r - __d) : __wc_cg::lane()),
        32);
  }

  __WC_CG int any(int __p) const { return __any_sync(__lanes, __p) != 0; }
  __WC_CG int all(int __p) const { return __all_sync(__lanes, __p) != 0; }
  /* Bit r is the vote of the group's rank r. */
  __WC_CG unsigned int ballot(int __p) const {
    return __wc_cg::pack_lanes(__ballot_sync(__lanes, __p), __lanes);
  }
};

__WC_CG coalesced_group coalesced_threads() {
  return coalesced_group(__activemask());
}

/* ------------------------------------------------------------------------ */
/* The grid                                                                  */
/* ------------------------------------------------------------------------ */

class grid_group {
public:
  __WC_CG grid_group() {}
  /* Whether the launch was cooperative: assumed, as the analysis cannot
   * see the launch. */
  __WC_CG static bool is_valid() { return true; }
  __WC_CG static void sync() { __warpcheck_grid_sync(); }
  __WC_CG static unsigned long long num_blocks() {
    return (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
  }
  __WC_CG static unsigned long long block_rank() {
    return ((unsigned long long)blockIdx.z * gridDim.y + blockIdx.y) *
               gridDim.x +
           blockIdx.x;
  }
  __WC_CG static unsigned long long num_threads() {
    return num_blocks() * thread_block::num_threads();
  }
  __WC_CG static unsigned long long size() { return num_threads(); }
  __WC_CG static unsigned long long thread_rank() {
    return block_rank() * thread_block::num_threads() +
           thread_block::thread_rank();
  }
  __WC_CG static dim3 dim_blocks() {
    return dim3(gridDim.x, gridDim.y, gridDim.z);
  }
  __WC_CG static dim3 group_dim() { return dim_blocks(); }
  __WC_CG static dim3 block_index() {
    return dim3(blockIdx.x, blockIdx.y, blockIdx.z);
  }
};

__WC_CG grid_group this_grid() { return grid_group(); }

/* ------------------------------------------------------------------------ */
/* Free functions on any group                                               */
/* ------------------------------------------------------------------------ */

template <class __G> __WC_CG void sync(const __G &__g) { __g.sync(); }
template <class __G>
__WC_CG unsigned long long thread_rank(const __G &__g) {
  return __g.thread_rank();
}
template <class __G> __WC_CG unsigned long long group_size(const __G &__g) {
  return __g.size();
}

} // namespace cooperative_groups

#undef __WC_CG

#endif /* WARPCHECK_COOPERATIVE_GROUPS_H */
