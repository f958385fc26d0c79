/*
 * warpcheck_cuda.h - the implicit CUDA environment for toolkit-less analysis.
 *
 * warpcheck force-includes this header (`-include`) when it compiles a plain
 * nvcc-style .cu file with clang in CUDA mode and `-nocudainc -nocudalib`.
 * It supplies what nvcc makes implicit: the execution-space qualifiers, the
 * built-in index variables, vector types, warp/sync/atomic intrinsics, the
 * device math library and enough of the host runtime API for `main()` and
 * `<<<...>>>` launches to type-check.
 *
 * Device functions lower to NVVM builtins / LLVM intrinsics where those are
 * exact, and otherwise to calls of the libdevice `__nv_*` functions, which
 * are declared but never defined: the emitted IR is meant to be analysed,
 * not linked.  Nothing here approximates a math function.
 *
 * Define WARPCHECK_NO_SYSTEM_HEADERS to stop this header from pulling in the
 * C/C++ library headers that nvcc includes implicitly (see the end).
 */
#ifndef WARPCHECK_CUDA_H
#define WARPCHECK_CUDA_H

/* nvcc includes cuda_runtime.h before every file; helpers such as the
 * CUDA samples' helper_cuda.h test its guards (and driver_types.h's)
 * before they use the runtime API. */
#ifndef __CUDA_RUNTIME_H__
#define __CUDA_RUNTIME_H__
#endif
#ifndef __DRIVER_TYPES_H__
#define __DRIVER_TYPES_H__
#endif

/* Treated as a system header so that clang accepts our __device__ overloads
 * ahead of the standard library's constexpr functions of the same signature
 * (they would otherwise become implicitly __host__ __device__ and clash). */
#pragma clang system_header

#if !defined(__CUDA__)
#error "warpcheck_cuda.h must be compiled as CUDA (clang -x cuda)"
#endif

/* ------------------------------------------------------------------------ */
/* Qualifiers and version macros                                             */
/* ------------------------------------------------------------------------ */

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
/* clang only honours `managed` for HIP; a __device__ global is what the
 * kernels see, and clang lets host code reference it through its shadow. */
#define __managed__ __attribute__((device))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#if __has_attribute(grid_constant)
#define __grid_constant__ __attribute__((grid_constant))
#else
#define __grid_constant__
#endif
/* Not defined on purpose: __noinline__ is already a keyword in clang's CUDA
 * mode (as a macro it would break libstdc++'s __attribute__((__noinline__)))
 * and __restrict__ is a GNU keyword. */

/* Pretend to be a CUDA 12.0 compiler so version-gated user code picks the
 * modern *_sync warp intrinsics rather than the removed legacy ones. */
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __CUDACC_VER_MAJOR__
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 0
#define __CUDACC_VER_BUILD__ 0
#endif
#ifndef CUDART_VERSION
#define CUDART_VERSION 12000
#endif
#ifndef __CUDART_API_VERSION
#define __CUDART_API_VERSION CUDART_VERSION
#endif

#include <stddef.h>

/* Device-only helpers: always inlined so the IR of a kernel shows the
 * intrinsics themselves, at any optimisation level. */
#define __WC_DEV static __inline__ __attribute__((always_inline)) __device__
#define __WC_HD \
  static __inline__ __attribute__((always_inline)) __host__ __device__
/* libdevice functions are pure; saying so lets LLVM treat their calls like
 * the inlined bodies it would see after linking libdevice. */
#define __WC_NV_PURE extern "C" __device__ __attribute__((const, nothrow))
#define __WC_NV extern "C" __device__ __attribute__((nothrow))

/* ------------------------------------------------------------------------ */
/* Device C library: printf, malloc/free, assert                            */
/* ------------------------------------------------------------------------ */

/* Declared before <stdio.h>/<stdlib.h> so the names are usable on both
 * sides; clang lowers device printf to vprintf itself. */
extern "C" __device__ int printf(const char *, ...);
extern "C" __device__ void *malloc(size_t) __attribute__((nothrow));
extern "C" __device__ void free(void *) __attribute__((nothrow));

/* glibc's assert() expands to __assert_fail, a host function; give device
 * code an overload that reports through CUDA's __assertfail. */
extern "C" __device__ void __assertfail(const char *, const char *, unsigned,
                                        const char *, size_t);
__WC_DEV void __assert_fail(const char *__msg, const char *__file,
                            unsigned __line, const char *__func) {
  __assertfail(__msg, __file, __line, __func, sizeof(char));
}

/* CUDA's device memcpy/memset; as LLVM intrinsics they stay visible as
 * memory traffic. */
__WC_DEV void *memcpy(void *__d, const void *__s, size_t __n) {
  return __builtin_memcpy(__d, __s, __n);
}
__WC_DEV void *memset(void *__d, int __c, size_t __n) {
  return __builtin_memset(__d, __c, __n);
}

__WC_DEV void __trap(void) { __builtin_trap(); }
__WC_DEV void __brkpt(void) { __builtin_debugtrap(); }

/* ------------------------------------------------------------------------ */
/* Vector types and dim3                                                     */
/* ------------------------------------------------------------------------ */

/* Alignment follows CUDA's vector_types.h: 1-, 2- and 4-element vectors are
 * aligned to their size (capped at 16 bytes), 3-element ones naturally. */
#define __WC_VALIGN(T, N) \
  __attribute__((aligned(sizeof(T) * N > 16 ? 16 : sizeof(T) * N)))

#define __WC_VECTOR_FAMILY(T, B)                                              \
  struct __WC_VALIGN(T, 1) B##1 { T x; };                                    \
  struct __WC_VALIGN(T, 2) B##2 { T x, y; };                                 \
  struct B##3 { T x, y, z; };                                                 \
  struct __WC_VALIGN(T, 4) B##4 { T x, y, z, w; };                           \
  __WC_HD constexpr B##1 make_##B##1(T __x) { return B##1{__x}; }            \
  __WC_HD constexpr B##2 make_##B##2(T __x, T __y) { return B##2{__x, __y}; } \
  __WC_HD constexpr B##3 make_##B##3(T __x, T __y, T __z) {                  \
    return B##3{__x, __y, __z};                                               \
  }                                                                            \
  __WC_HD constexpr B##4 make_##B##4(T __x, T __y, T __z, T __w) {           \
    return B##4{__x, __y, __z, __w};                                          \
  }

__WC_VECTOR_FAMILY(signed char, char)
__WC_VECTOR_FAMILY(unsigned char, uchar)
__WC_VECTOR_FAMILY(short, short)
__WC_VECTOR_FAMILY(unsigned short, ushort)
__WC_VECTOR_FAMILY(int, int)
__WC_VECTOR_FAMILY(unsigned int, uint)
__WC_VECTOR_FAMILY(long, long)
__WC_VECTOR_FAMILY(unsigned long, ulong)
__WC_VECTOR_FAMILY(long long, longlong)
__WC_VECTOR_FAMILY(unsigned long long, ulonglong)
__WC_VECTOR_FAMILY(float, float)
__WC_VECTOR_FAMILY(double, double)

#undef __WC_VECTOR_FAMILY
#undef __WC_VALIGN

struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ constexpr dim3(unsigned int __x = 1, unsigned int __y = 1,
                                     unsigned int __z = 1)
      : x(__x), y(__y), z(__z) {}
  __host__ __device__ constexpr dim3(uint3 __v)
      : x(__v.x), y(__v.y), z(__v.z) {}
  __host__ __device__ constexpr operator uint3() const { return {x, y, z}; }
};

/* ------------------------------------------------------------------------ */
/* threadIdx, blockIdx, blockDim, gridDim, warpSize                          */
/* ------------------------------------------------------------------------ */

/* clang ships these (property getters over __nvvm_read_ptx_sreg_*, with
 * copying and address-of deleted as in nvcc) and the header needs no CUDA
 * toolkit, so it is reused rather than re-implemented. */
#include <__clang_cuda_builtin_vars.h>

/* The header leaves the conversions to uint3/dim3 for us to define. */
#define __WC_BUILTIN_VAR_CONVERSIONS(VarT)                                    \
  __device__ inline VarT::operator uint3() const { return {x, y, z}; }       \
  __device__ inline VarT::operator dim3() const { return dim3(x, y, z); }
__WC_BUILTIN_VAR_CONVERSIONS(__cuda_builtin_threadIdx_t)
__WC_BUILTIN_VAR_CONVERSIONS(__cuda_builtin_blockIdx_t)
__WC_BUILTIN_VAR_CONVERSIONS(__cuda_builtin_blockDim_t)
__WC_BUILTIN_VAR_CONVERSIONS(__cuda_builtin_gridDim_t)
#undef __WC_BUILTIN_VAR_CONVERSIONS

/* ------------------------------------------------------------------------ */
/* Barriers and fences                                                       */
/* ------------------------------------------------------------------------ */

/* __syncthreads() is itself a clang builtin (llvm.nvvm.barrier0). */
__WC_DEV int __syncthreads_count(int __p) { return __nvvm_bar0_popc(__p); }
__WC_DEV int __syncthreads_and(int __p) { return __nvvm_bar0_and(__p); }
__WC_DEV int __syncthreads_or(int __p) { return __nvvm_bar0_or(__p); }
__WC_DEV void __syncwarp(unsigned __mask = 0xffffffffu) {
  __nvvm_bar_warp_sync(__mask);
}
__WC_DEV void __threadfence_block(void) { __nvvm_membar_cta(); }
__WC_DEV void __threadfence(void) { __nvvm_membar_gl(); }
__WC_DEV void __threadfence_system(void) { __nvvm_membar_sys(); }
__WC_DEV void __nanosleep(unsigned __ns) { __nvvm_nanosleep(__ns); }

/* ------------------------------------------------------------------------ */
/* Warp vote, shuffle, match, reduce                                         */
/* ------------------------------------------------------------------------ */

__WC_DEV unsigned __activemask(void) { return __nvvm_activemask(); }
__WC_DEV int __all_sync(unsigned __mask, int __p) {
  return __nvvm_vote_all_sync(__mask, __p);
}
__WC_DEV int __any_sync(unsigned __mask, int __p) {
  return __nvvm_vote_any_sync(__mask, __p);
}
__WC_DEV int __uni_sync(unsigned __mask, int __p) {
  return __nvvm_vote_uni_sync(__mask, __p);
}
__WC_DEV unsigned __ballot_sync(unsigned __mask, int __p) {
  return __nvvm_vote_ballot_sync(__mask, __p);
}

/* PTX shfl takes a packed "c" operand: the segment mask derived from
 * `width` in bits 8-12 and the lane clamp in bits 0-4 (0 for shfl.up, which
 * clamps at the segment start instead). 64-bit values are two 32-bit
 * shuffles, exactly as nvcc emits them. */
#define __WC_SHFL(NAME, KIND, LANE_T, CLAMP)                                   \
  __WC_DEV int NAME(unsigned __m, int __v, LANE_T __l, int __w = 32) {        \
    return __nvvm_shfl_sync_##KIND##_i32(__m, __v, __l,                       \
                                         ((32 - __w) << 8) | (CLAMP));         \
  }                                                                            \
  __WC_DEV float NAME(unsigned __m, float __v, LANE_T __l, int __w = 32) {    \
    return __nvvm_shfl_sync_##KIND##_f32(__m, __v, __l,                       \
                                         ((32 - __w) << 8) | (CLAMP));         \
  }                                                                            \
  __WC_DEV unsigned NAME(unsigned __m, unsigned __v, LANE_T __l,              \
                         int __w = 32) {                                       \
    return (unsigned)NAME(__m, (int)__v, __l, __w);                           \
  }                                                                            \
  __WC_DEV long long NAME(unsigned __m, long long __v, LANE_T __l,            \
                          int __w = 32) {                                      \
    int __lo = NAME(__m, (int)__v, __l, __w);                                 \
    int __hi = NAME(__m, (int)((unsigned long long)__v >> 32), __l, __w);     \
    return (long long)(((unsigned long long)(unsigned)__hi << 32) |           \
                       (unsigned)__lo);                                        \
  }                                                                            \
  __WC_DEV unsigned long long NAME(unsigned __m, unsigned long long __v,      \
                                   LANE_T __l, int __w = 32) {                 \
    return (unsigned long long)NAME(__m, (long long)__v, __l, __w);           \
  }                                                                            \
  __WC_DEV long NAME(unsigned __m, long __v, LANE_T __l, int __w = 32) {      \
    return (long)NAME(__m, (long long)__v, __l, __w);                         \
  }                                                                            \
  __WC_DEV unsigned long NAME(unsigned __m, unsigned long __v, LANE_T __l,    \
                              int __w = 32) {                                  \
    return (unsigned long)NAME(__m, (long long)__v, __l, __w);                \
  }                                                                            \
  __WC_DEV double NAME(unsigned __m, double __v, LANE_T __l, int __w = 32) {  \
    return __builtin_bit_cast(                                                 \
        double, NAME(__m, __builtin_bit_cast(long long, __v), __l, __w));     \
  }

__WC_SHFL(__shfl_sync, idx, int, 0x1f)
__WC_SHFL(__shfl_up_sync, up, unsigned, 0)
__WC_SHFL(__shfl_down_sync, down, unsigned, 0x1f)
__WC_SHFL(__shfl_xor_sync, bfly, int, 0x1f)
#undef __WC_SHFL

/* match.sync needs sm_70; the builtin is only checked where it is used. */
#define __WC_MATCH(T, BITS, AS)                                                \
  __WC_DEV unsigned __match_any_sync(unsigned __m, T __v) {                   \
    return __nvvm_match_any_sync_i##BITS(__m, AS);                            \
  }                                                                            \
  __WC_DEV unsigned __match_all_sync(unsigned __m, T __v, int *__pred) {      \
    return __nvvm_match_all_sync_i##BITS##p(__m, AS, __pred);                 \
  }
__WC_MATCH(int, 32, __v)
__WC_MATCH(unsigned, 32, (int)__v)
__WC_MATCH(float, 32, __builtin_bit_cast(int, __v))
__WC_MATCH(long, 64, (long long)__v)
__WC_MATCH(unsigned long, 64, (long long)__v)
__WC_MATCH(long long, 64, __v)
__WC_MATCH(unsigned long long, 64, (long long)__v)
__WC_MATCH(double, 64, __builtin_bit_cast(long long, __v))
#undef __WC_MATCH

/* redux.sync needs sm_80.  In LLVM 19 the intrinsics take (value, mask);
 * clang 19's own wrapper passes them the other way round (llvm#131415). */
__WC_DEV unsigned __reduce_add_sync(unsigned __m, unsigned __v) {
  return __nvvm_redux_sync_add(__v, __m);
}
__WC_DEV int __reduce_add_sync(unsigned __m, int __v) {
  return __nvvm_redux_sync_add(__v, __m);
}
__WC_DEV unsigned __reduce_min_sync(unsigned __m, unsigned __v) {
  return __nvvm_redux_sync_umin(__v, __m);
}
__WC_DEV int __reduce_min_sync(unsigned __m, int __v) {
  return __nvvm_redux_sync_min(__v, __m);
}
__WC_DEV unsigned __reduce_max_sync(unsigned __m, unsigned __v) {
  return __nvvm_redux_sync_umax(__v, __m);
}
__WC_DEV int __reduce_max_sync(unsigned __m, int __v) {
  return __nvvm_redux_sync_max(__v, __m);
}
__WC_DEV unsigned __reduce_and_sync(unsigned __m, unsigned __v) {
  return __nvvm_redux_sync_and(__v, __m);
}
__WC_DEV unsigned __reduce_or_sync(unsigned __m, unsigned __v) {
  return __nvvm_redux_sync_or(__v, __m);
}
__WC_DEV unsigned __reduce_xor_sync(unsigned __m, unsigned __v) {
  return __nvvm_redux_sync_xor(__v, __m);
}

/* ------------------------------------------------------------------------ */
/* Integer intrinsics, special registers, address-space queries             */
/* ------------------------------------------------------------------------ */

__WC_DEV int __popc(unsigned __x) { return __builtin_popcount(__x); }
__WC_DEV int __popcll(unsigned long long __x) {
  return __builtin_popcountll(__x);
}
/* CUDA defines clz(0) as the bit width, which __builtin_clzg's fallback
 * expresses without a branch (it becomes llvm.ctlz with zero defined). */
__WC_DEV int __clz(int __x) { return __builtin_clzg((unsigned)__x, 32); }
__WC_DEV int __clzll(long long __x) {
  return __builtin_clzg((unsigned long long)__x, 64);
}
__WC_DEV int __ffs(int __x) { return __builtin_ffs(__x); }
__WC_DEV int __ffsll(long long __x) { return __builtin_ffsll(__x); }
__WC_DEV unsigned __brev(unsigned __x) { return __builtin_bitreverse32(__x); }
__WC_DEV unsigned long long __brevll(unsigned long long __x) {
  return __builtin_bitreverse64(__x);
}
__WC_DEV unsigned __byte_perm(unsigned __a, unsigned __b, unsigned __s) {
  return __nvvm_prmt(__a, __b, __s);
}
__WC_DEV int __mul24(int __a, int __b) { return __nvvm_mul24_i(__a, __b); }
__WC_DEV unsigned __umul24(unsigned __a, unsigned __b) {
  return __nvvm_mul24_ui(__a, __b);
}
__WC_DEV int __mulhi(int __a, int __b) { return __nvvm_mulhi_i(__a, __b); }
__WC_DEV unsigned __umulhi(unsigned __a, unsigned __b) {
  return __nvvm_mulhi_ui(__a, __b);
}
__WC_DEV long long __mul64hi(long long __a, long long __b) {
  return __nvvm_mulhi_ll(__a, __b);
}
__WC_DEV unsigned long long __umul64hi(unsigned long long __a,
                                       unsigned long long __b) {
  return __nvvm_mulhi_ull(__a, __b);
}
__WC_DEV unsigned __sad(int __a, int __b, unsigned __c) {
  return __nvvm_sad_i(__a, __b, __c);
}
__WC_DEV unsigned __usad(unsigned __a, unsigned __b, unsigned __c) {
  return __nvvm_sad_ui(__a, __b, __c);
}

/* Not the <time.h> clock(): CUDA's device clock() reads the SM counter. */
__WC_DEV long clock(void) { return (long)__nvvm_read_ptx_sreg_clock(); }
__WC_DEV long long clock64(void) {
  return (long long)__nvvm_read_ptx_sreg_clock64();
}
__WC_DEV unsigned long long __globaltimer(void) {
  return __nvvm_read_ptx_sreg_globaltimer();
}

__WC_DEV unsigned __isGlobal(const void *__p) {
  return __nvvm_isspacep_global(__p);
}
__WC_DEV unsigned __isShared(const void *__p) {
  return __nvvm_isspacep_shared(__p);
}
__WC_DEV unsigned __isConstant(const void *__p) {
  return __nvvm_isspacep_const(__p);
}
__WC_DEV unsigned __isLocal(const void *__p) {
  return __nvvm_isspacep_local(__p);
}

/* ------------------------------------------------------------------------ */
/* Read-only and cache-hinted loads                                          */
/* ------------------------------------------------------------------------ */

#define __WC_LDG(T, SUF)                                                       \
  __WC_DEV T __ldg(const T *__p) { return __nvvm_ldg_##SUF(__p); }
__WC_LDG(char, c)
__WC_LDG(signed char, sc)
__WC_LDG(unsigned char, uc)
__WC_LDG(short, s)
__WC_LDG(unsigned short, us)
__WC_LDG(int, i)
__WC_LDG(unsigned, ui)
__WC_LDG(long, l)
__WC_LDG(unsigned long, ul)
__WC_LDG(long long, ll)
__WC_LDG(unsigned long long, ull)
__WC_LDG(float, f)
__WC_LDG(double, d)
#undef __WC_LDG

/* The vector ldg builtins traffic in clang ext_vector types of the same
 * size and alignment as the CUDA structs. */
#define __WC_LDG_VEC(VT, ET, N, SUF)                                           \
  __WC_DEV VT __ldg(const VT *__p) {                                          \
    typedef ET __wc_v __attribute__((ext_vector_type(N)));                     \
    return __builtin_bit_cast(VT, __nvvm_ldg_##SUF((const __wc_v *)__p));     \
  }
__WC_LDG_VEC(char2, char, 2, c2)
__WC_LDG_VEC(char4, char, 4, c4)
__WC_LDG_VEC(uchar2, unsigned char, 2, uc2)
__WC_LDG_VEC(uchar4, unsigned char, 4, uc4)
__WC_LDG_VEC(short2, short, 2, s2)
__WC_LDG_VEC(short4, short, 4, s4)
__WC_LDG_VEC(ushort2, unsigned short, 2, us2)
__WC_LDG_VEC(ushort4, unsigned short, 4, us4)
__WC_LDG_VEC(int2, int, 2, i2)
__WC_LDG_VEC(int4, int, 4, i4)
__WC_LDG_VEC(uint2, unsigned, 2, ui2)
__WC_LDG_VEC(uint4, unsigned, 4, ui4)
__WC_LDG_VEC(longlong2, long long, 2, ll2)
__WC_LDG_VEC(ulonglong2, unsigned long long, 2, ull2)
__WC_LDG_VEC(float2, float, 2, f2)
__WC_LDG_VEC(float4, float, 4, f4)
__WC_LDG_VEC(double2, double, 2, d2)
#undef __WC_LDG_VEC

/* Cache-policy hints have no LLVM IR counterpart that matters for the
 * analysis; they are plain loads and stores here. */
#define __WC_LD_HINT(NAME)                                                     \
  template <class __T> __WC_DEV __T NAME(const __T *__p) { return *__p; }
#define __WC_ST_HINT(NAME)                                                     \
  template <class __T> __WC_DEV void NAME(__T *__p, __T __v) { *__p = __v; }
__WC_LD_HINT(__ldcg)
__WC_LD_HINT(__ldca)
__WC_LD_HINT(__ldcs)
__WC_LD_HINT(__ldlu)
__WC_LD_HINT(__ldcv)
__WC_ST_HINT(__stwb)
__WC_ST_HINT(__stcg)
__WC_ST_HINT(__stcs)
__WC_ST_HINT(__stwt)
#undef __WC_LD_HINT
#undef __WC_ST_HINT

/* ------------------------------------------------------------------------ */
/* Atomics                                                                   */
/* ------------------------------------------------------------------------ */

/* Through the __nvvm_atom_* builtins, as clang's own CUDA headers do: the
 * device-scope forms become plain (seq_cst) `atomicrmw`/`cmpxchg`, except
 * atomicInc/atomicDec (llvm.nvvm.atomic.load.inc/dec.32); the _block and
 * _system forms become scoped llvm.nvvm.atomic.*.gen.i.{cta,sys} calls. */
#define __WC_ATOMIC(NAME, OP, T, SUF, BT)                                      \
  __WC_DEV T NAME(T *__p, T __v) {                                            \
    return (T)__nvvm_atom_##OP##_gen_##SUF((BT *)__p, (BT)__v);               \
  }                                                                            \
  __WC_DEV T NAME##_block(T *__p, T __v) {                                    \
    return (T)__nvvm_atom_cta_##OP##_gen_##SUF((BT *)__p, (BT)__v);           \
  }                                                                            \
  __WC_DEV T NAME##_system(T *__p, T __v) {                                   \
    return (T)__nvvm_atom_sys_##OP##_gen_##SUF((BT *)__p, (BT)__v);           \
  }

__WC_ATOMIC(atomicAdd, add, int, i, int)
__WC_ATOMIC(atomicAdd, add, unsigned, i, int)
__WC_ATOMIC(atomicAdd, add, unsigned long long, ll, long long)
__WC_ATOMIC(atomicAdd, add, float, f, float)
__WC_ATOMIC(atomicAdd, add, double, d, double)
__WC_ATOMIC(atomicExch, xchg, int, i, int)
__WC_ATOMIC(atomicExch, xchg, unsigned, i, int)
__WC_ATOMIC(atomicExch, xchg, unsigned long long, ll, long long)
__WC_ATOMIC(atomicMin, min, int, i, int)
__WC_ATOMIC(atomicMin, min, unsigned, ui, unsigned)
__WC_ATOMIC(atomicMin, min, long long, ll, long long)
__WC_ATOMIC(atomicMin, min, unsigned long long, ull, unsigned long long)
__WC_ATOMIC(atomicMax, max, int, i, int)
__WC_ATOMIC(atomicMax, max, unsigned, ui, unsigned)
__WC_ATOMIC(atomicMax, max, long long, ll, long long)
__WC_ATOMIC(atomicMax, max, unsigned long long, ull, unsigned long long)
__WC_ATOMIC(atomicInc, inc, unsigned, ui, unsigned)
__WC_ATOMIC(atomicDec, dec, unsigned, ui, unsigned)
__WC_ATOMIC(atomicAnd, and, int, i, int)
__WC_ATOMIC(atomicAnd, and, unsigned, i, int)
__WC_ATOMIC(atomicAnd, and, unsigned long long, ll, long long)
__WC_ATOMIC(atomicOr, or, int, i, int)
__WC_ATOMIC(atomicOr, or, unsigned, i, int)
__WC_ATOMIC(atomicOr, or, unsigned long long, ll, long long)
__WC_ATOMIC(atomicXor, xor, int, i, int)
__WC_ATOMIC(atomicXor, xor, unsigned, i, int)
__WC_ATOMIC(atomicXor, xor, unsigned long long, ll, long long)
#undef __WC_ATOMIC

/* The device-scope form is a real `atomicrmw sub`; there is no scoped sub
 * builtin, so the _block/_system forms add the negation. */
__WC_DEV int atomicSub(int *__p, int __v) {
  return __nvvm_atom_sub_gen_i(__p, __v);
}
__WC_DEV unsigned atomicSub(unsigned *__p, unsigned __v) {
  return (unsigned)__nvvm_atom_sub_gen_i((int *)__p, (int)__v);
}
__WC_DEV int atomicSub_block(int *__p, int __v) {
  return atomicAdd_block(__p, -__v);
}
__WC_DEV unsigned atomicSub_block(unsigned *__p, unsigned __v) {
  return atomicAdd_block(__p, 0u - __v);
}
__WC_DEV int atomicSub_system(int *__p, int __v) {
  return atomicAdd_system(__p, -__v);
}
__WC_DEV unsigned atomicSub_system(unsigned *__p, unsigned __v) {
  return atomicAdd_system(__p, 0u - __v);
}

__WC_DEV float atomicExch(float *__p, float __v) {
  return __builtin_bit_cast(
      float, atomicExch((int *)__p, __builtin_bit_cast(int, __v)));
}

#define __WC_ATOMIC_CAS(T, SUF, BT)                                            \
  __WC_DEV T atomicCAS(T *__p, T __cmp, T __v) {                              \
    return (T)__nvvm_atom_cas_gen_##SUF((BT *)__p, (BT)__cmp, (BT)__v);       \
  }                                                                            \
  __WC_DEV T atomicCAS_block(T *__p, T __cmp, T __v) {                        \
    return (T)__nvvm_atom_cta_cas_gen_##SUF((BT *)__p, (BT)__cmp, (BT)__v);   \
  }                                                                            \
  __WC_DEV T atomicCAS_system(T *__p, T __cmp, T __v) {                       \
    return (T)__nvvm_atom_sys_cas_gen_##SUF((BT *)__p, (BT)__cmp, (BT)__v);   \
  }
__WC_ATOMIC_CAS(int, i, int)
__WC_ATOMIC_CAS(unsigned, i, int)
__WC_ATOMIC_CAS(unsigned long long, ll, long long)
#undef __WC_ATOMIC_CAS

/* ------------------------------------------------------------------------ */
/* Math library                                                              */
/* ------------------------------------------------------------------------ */

/* Every function below exists as a C name (sinf, sin) and as the C++ float
 * overload (sin(float)), all __device__ with C++ linkage.  Because they
 * differ in target from glibc's extern "C" host functions, clang treats them
 * as overloads rather than redeclarations; and because they precede
 * <cmath>, whose `using ::sin;` imports them, libstdc++'s constexpr
 * std::sin(float) stays host-only and device calls of std::sin land here. */

/* Exact operations map to LLVM intrinsics (llvm.sqrt, llvm.fabs, ...). */
#define __WC_MATH1_LLVM(NAME)                                                  \
  __WC_DEV float NAME##f(float __x) { return __builtin_##NAME##f(__x); }      \
  __WC_DEV float NAME(float __x) { return __builtin_##NAME##f(__x); }         \
  __WC_DEV double NAME(double __x) { return __builtin_##NAME(__x); }
#define __WC_MATH2_LLVM(NAME)                                                  \
  __WC_DEV float NAME##f(float __x, float __y) {                              \
    return __builtin_##NAME##f(__x, __y);                                     \
  }                                                                            \
  __WC_DEV float NAME(float __x, float __y) {                                 \
    return __builtin_##NAME##f(__x, __y);                                     \
  }                                                                            \
  __WC_DEV double NAME(double __x, double __y) {                              \
    return __builtin_##NAME(__x, __y);                                        \
  }

__WC_MATH1_LLVM(sqrt)
__WC_MATH1_LLVM(fabs)
__WC_MATH1_LLVM(floor)
__WC_MATH1_LLVM(ceil)
__WC_MATH1_LLVM(trunc)
__WC_MATH1_LLVM(rint)
__WC_MATH1_LLVM(nearbyint)
__WC_MATH1_LLVM(round)
__WC_MATH2_LLVM(fmin)
__WC_MATH2_LLVM(fmax)
__WC_MATH2_LLVM(copysign)
__WC_DEV float fmaf(float __x, float __y, float __z) {
  return __builtin_fmaf(__x, __y, __z);
}
__WC_DEV float fma(float __x, float __y, float __z) {
  return __builtin_fmaf(__x, __y, __z);
}
__WC_DEV double fma(double __x, double __y, double __z) {
  return __builtin_fma(__x, __y, __z);
}
#undef __WC_MATH1_LLVM
#undef __WC_MATH2_LLVM

/* Everything else is a libdevice call. */
#define __WC_MATH1_NV(NAME)                                                    \
  __WC_NV_PURE float __nv_##NAME##f(float);                                    \
  __WC_NV_PURE double __nv_##NAME(double);                                     \
  __WC_DEV float NAME##f(float __x) { return __nv_##NAME##f(__x); }           \
  __WC_DEV float NAME(float __x) { return __nv_##NAME##f(__x); }              \
  __WC_DEV double NAME(double __x) { return __nv_##NAME(__x); }
#define __WC_MATH2_NV(NAME)                                                    \
  __WC_NV_PURE float __nv_##NAME##f(float, float);                             \
  __WC_NV_PURE double __nv_##NAME(double, double);                             \
  __WC_DEV float NAME##f(float __x, float __y) {                              \
    return __nv_##NAME##f(__x, __y);                                          \
  }                                                                            \
  __WC_DEV float NAME(float __x, float __y) {                                 \
    return __nv_##NAME##f(__x, __y);                                          \
  }                                                                            \
  __WC_DEV double NAME(double __x, double __y) {                              \
    return __nv_##NAME(__x, __y);                                             \
  }

__WC_MATH1_NV(exp)
__WC_MATH1_NV(exp2)
__WC_MATH1_NV(exp10)
__WC_MATH1_NV(expm1)
__WC_MATH1_NV(log)
__WC_MATH1_NV(log2)
__WC_MATH1_NV(log10)
__WC_MATH1_NV(log1p)
__WC_MATH1_NV(logb)
__WC_MATH1_NV(sin)
__WC_MATH1_NV(cos)
__WC_MATH1_NV(tan)
__WC_MATH1_NV(asin)
__WC_MATH1_NV(acos)
__WC_MATH1_NV(atan)
__WC_MATH1_NV(sinh)
__WC_MATH1_NV(cosh)
__WC_MATH1_NV(tanh)
__WC_MATH1_NV(asinh)
__WC_MATH1_NV(acosh)
__WC_MATH1_NV(atanh)
__WC_MATH1_NV(sinpi)
__WC_MATH1_NV(cospi)
__WC_MATH1_NV(erf)
__WC_MATH1_NV(erfc)
__WC_MATH1_NV(erfinv)
__WC_MATH1_NV(erfcinv)
__WC_MATH1_NV(erfcx)
__WC_MATH1_NV(normcdf)
__WC_MATH1_NV(normcdfinv)
__WC_MATH1_NV(lgamma)
__WC_MATH1_NV(tgamma)
__WC_MATH1_NV(cbrt)
__WC_MATH1_NV(rcbrt)
__WC_MATH1_NV(rsqrt)
__WC_MATH1_NV(j0)
__WC_MATH1_NV(j1)
__WC_MATH1_NV(y0)
__WC_MATH1_NV(y1)
__WC_MATH2_NV(pow)
__WC_MATH2_NV(atan2)
__WC_MATH2_NV(fmod)
__WC_MATH2_NV(remainder)
__WC_MATH2_NV(fdim)
__WC_MATH2_NV(hypot)
__WC_MATH2_NV(rhypot)
__WC_MATH2_NV(nextafter)
#undef __WC_MATH1_NV
#undef __WC_MATH2_NV

/* Signatures that do not fit the patterns above. */
__WC_NV_PURE float __nv_powif(float, int);
__WC_NV_PURE double __nv_powi(double, int);
__WC_DEV float pow(float __x, int __n) { return __nv_powif(__x, __n); }
__WC_DEV double pow(double __x, int __n) { return __nv_powi(__x, __n); }

__WC_NV_PURE float __nv_ldexpf(float, int);
__WC_NV_PURE double __nv_ldexp(double, int);
__WC_NV_PURE float __nv_scalbnf(float, int);
__WC_NV_PURE double __nv_scalbn(double, int);
__WC_NV_PURE int __nv_ilogbf(float);
__WC_NV_PURE int __nv_ilogb(double);
__WC_NV_PURE float __nv_jnf(int, float);
__WC_NV_PURE double __nv_jn(int, double);
__WC_NV_PURE float __nv_ynf(int, float);
__WC_NV_PURE double __nv_yn(int, double);
__WC_NV_PURE long long __nv_llrintf(float);
__WC_NV_PURE long long __nv_llrint(double);
__WC_NV_PURE long long __nv_llroundf(float);
__WC_NV_PURE long long __nv_llround(double);
__WC_NV_PURE float __nv_norm3df(float, float, float);
__WC_NV_PURE double __nv_norm3d(double, double, double);
__WC_NV_PURE float __nv_rnorm3df(float, float, float);
__WC_NV_PURE double __nv_rnorm3d(double, double, double);
__WC_NV_PURE float __nv_norm4df(float, float, float, float);
__WC_NV_PURE double __nv_norm4d(double, double, double, double);
__WC_NV_PURE float __nv_nanf(const char *);
__WC_NV_PURE double __nv_nan(const char *);
__WC_NV float __nv_frexpf(float, int *);
__WC_NV double __nv_frexp(double, int *);
__WC_NV float __nv_modff(float, float *);
__WC_NV double __nv_modf(double, double *);
__WC_NV float __nv_remquof(float, float, int *);
__WC_NV double __nv_remquo(double, double, int *);
__WC_NV void __nv_sincosf(float, float *, float *);
__WC_NV void __nv_sincos(double, double *, double *);
__WC_NV void __nv_sincospif(float, float *, float *);
__WC_NV void __nv_sincospi(double, double *, double *);

__WC_DEV float ldexpf(float __x, int __e) { return __nv_ldexpf(__x, __e); }
__WC_DEV float ldexp(float __x, int __e) { return __nv_ldexpf(__x, __e); }
__WC_DEV double ldexp(double __x, int __e) { return __nv_ldexp(__x, __e); }
__WC_DEV float scalbnf(float __x, int __e) { return __nv_scalbnf(__x, __e); }
__WC_DEV float scalbn(float __x, int __e) { return __nv_scalbnf(__x, __e); }
__WC_DEV double scalbn(double __x, int __e) { return __nv_scalbn(__x, __e); }
__WC_DEV int ilogbf(float __x) { return __nv_ilogbf(__x); }
__WC_DEV int ilogb(float __x) { return __nv_ilogbf(__x); }
__WC_DEV int ilogb(double __x) { return __nv_ilogb(__x); }
__WC_DEV float jnf(int __n, float __x) { return __nv_jnf(__n, __x); }
__WC_DEV double jn(int __n, double __x) { return __nv_jn(__n, __x); }
__WC_DEV float ynf(int __n, float __x) { return __nv_ynf(__n, __x); }
__WC_DEV double yn(int __n, double __x) { return __nv_yn(__n, __x); }
__WC_DEV long long llrintf(float __x) { return __nv_llrintf(__x); }
__WC_DEV long long llrint(float __x) { return __nv_llrintf(__x); }
__WC_DEV long long llrint(double __x) { return __nv_llrint(__x); }
__WC_DEV long lrintf(float __x) { return (long)__nv_llrintf(__x); }
__WC_DEV long lrint(float __x) { return (long)__nv_llrintf(__x); }
__WC_DEV long lrint(double __x) { return (long)__nv_llrint(__x); }
__WC_DEV long long llroundf(float __x) { return __nv_llroundf(__x); }
__WC_DEV long long llround(float __x) { return __nv_llroundf(__x); }
__WC_DEV long long llround(double __x) { return __nv_llround(__x); }
__WC_DEV long lroundf(float __x) { return (long)__nv_llroundf(__x); }
__WC_DEV long lround(float __x) { return (long)__nv_llroundf(__x); }
__WC_DEV long lround(double __x) { return (long)__nv_llround(__x); }
__WC_DEV float norm3df(float __a, float __b, float __c) {
  return __nv_norm3df(__a, __b, __c);
}
__WC_DEV double norm3d(double __a, double __b, double __c) {
  return __nv_norm3d(__a, __b, __c);
}
__WC_DEV float rnorm3df(float __a, float __b, float __c) {
  return __nv_rnorm3df(__a, __b, __c);
}
__WC_DEV double rnorm3d(double __a, double __b, double __c) {
  return __nv_rnorm3d(__a, __b, __c);
}
__WC_DEV float norm4df(float __a, float __b, float __c, float __d) {
  return __nv_norm4df(__a, __b, __c, __d);
}
__WC_DEV double norm4d(double __a, double __b, double __c, double __d) {
  return __nv_norm4d(__a, __b, __c, __d);
}
__WC_DEV float nanf(const char *__s) { return __nv_nanf(__s); }
__WC_DEV double nan(const char *__s) { return __nv_nan(__s); }
__WC_DEV float frexpf(float __x, int *__e) { return __nv_frexpf(__x, __e); }
__WC_DEV float frexp(float __x, int *__e) { return __nv_frexpf(__x, __e); }
__WC_DEV double frexp(double __x, int *__e) { return __nv_frexp(__x, __e); }
__WC_DEV float modff(float __x, float *__i) { return __nv_modff(__x, __i); }
__WC_DEV float modf(float __x, float *__i) { return __nv_modff(__x, __i); }
__WC_DEV double modf(double __x, double *__i) { return __nv_modf(__x, __i); }
__WC_DEV float remquof(float __x, float __y, int *__q) {
  return __nv_remquof(__x, __y, __q);
}
__WC_DEV float remquo(float __x, float __y, int *__q) {
  return __nv_remquof(__x, __y, __q);
}
__WC_DEV double remquo(double __x, double __y, int *__q) {
  return __nv_remquo(__x, __y, __q);
}
__WC_DEV void sincosf(float __x, float *__s, float *__c) {
  __nv_sincosf(__x, __s, __c);
}
__WC_DEV void sincos(float __x, float *__s, float *__c) {
  __nv_sincosf(__x, __s, __c);
}
__WC_DEV void sincos(double __x, double *__s, double *__c) {
  __nv_sincos(__x, __s, __c);
}
__WC_DEV void sincospif(float __x, float *__s, float *__c) {
  __nv_sincospif(__x, __s, __c);
}
__WC_DEV void sincospi(double __x, double *__s, double *__c) {
  __nv_sincospi(__x, __s, __c);
}

/* Classification is a compare on the bits: clang's type-generic builtins. */
#define __WC_CLASSIFY(NAME)                                                    \
  __WC_DEV bool NAME(float __x) { return __builtin_##NAME(__x); }             \
  __WC_DEV bool NAME(double __x) { return __builtin_##NAME(__x); }
__WC_CLASSIFY(isnan)
__WC_CLASSIFY(isinf)
__WC_CLASSIFY(isfinite)
__WC_CLASSIFY(signbit)
#undef __WC_CLASSIFY

/* Integer abs is device-only: the host has <stdlib.h>'s extern "C" abs. */
__WC_DEV int abs(int __x) { return __builtin_abs(__x); }
__WC_DEV long abs(long __x) { return __builtin_labs(__x); }
__WC_DEV long long abs(long long __x) { return __builtin_llabs(__x); }
__WC_DEV float abs(float __x) { return __builtin_fabsf(__x); }
__WC_DEV double abs(double __x) { return __builtin_fabs(__x); }
__WC_DEV long labs(long __x) { return __builtin_labs(__x); }
__WC_DEV long long llabs(long long __x) { return __builtin_llabs(__x); }

/* min/max are __host__ __device__ in nvcc, with the same mixed
 * signed/unsigned and float/double overloads (the unsigned type wins). */
#define __WC_MINMAX(R, A, B)                                                   \
  __WC_HD R min(A __a, B __b) {                                               \
    return (R)__a < (R)__b ? (R)__a : (R)__b;                                 \
  }                                                                            \
  __WC_HD R max(A __a, B __b) {                                               \
    return (R)__a > (R)__b ? (R)__a : (R)__b;                                 \
  }
__WC_MINMAX(int, int, int)
__WC_MINMAX(unsigned, unsigned, unsigned)
__WC_MINMAX(unsigned, int, unsigned)
__WC_MINMAX(unsigned, unsigned, int)
__WC_MINMAX(long, long, long)
__WC_MINMAX(unsigned long, unsigned long, unsigned long)
__WC_MINMAX(unsigned long, long, unsigned long)
__WC_MINMAX(unsigned long, unsigned long, long)
__WC_MINMAX(long long, long long, long long)
__WC_MINMAX(unsigned long long, unsigned long long, unsigned long long)
__WC_MINMAX(unsigned long long, long long, unsigned long long)
__WC_MINMAX(unsigned long long, unsigned long long, long long)
#undef __WC_MINMAX
/* Floating min/max keep fmin/fmax semantics (llvm.minnum/maxnum). */
__WC_HD float min(float __a, float __b) { return __builtin_fminf(__a, __b); }
__WC_HD float max(float __a, float __b) { return __builtin_fmaxf(__a, __b); }
__WC_HD double min(double __a, double __b) { return __builtin_fmin(__a, __b); }
__WC_HD double max(double __a, double __b) { return __builtin_fmax(__a, __b); }
__WC_HD double min(float __a, double __b) { return __builtin_fmin(__a, __b); }
__WC_HD double max(float __a, double __b) { return __builtin_fmax(__a, __b); }
__WC_HD double min(double __a, float __b) { return __builtin_fmin(__a, __b); }
__WC_HD double max(double __a, float __b) { return __builtin_fmax(__a, __b); }
__WC_DEV unsigned umin(unsigned __a, unsigned __b) { return min(__a, __b); }
__WC_DEV unsigned umax(unsigned __a, unsigned __b) { return max(__a, __b); }
__WC_DEV long long llmin(long long __a, long long __b) { return min(__a, __b); }
__WC_DEV long long llmax(long long __a, long long __b) { return max(__a, __b); }
__WC_DEV unsigned long long ullmin(unsigned long long __a,
                                   unsigned long long __b) {
  return min(__a, __b);
}
__WC_DEV unsigned long long ullmax(unsigned long long __a,
                                   unsigned long long __b) {
  return max(__a, __b);
}

/* Fast-math intrinsics: libdevice's __nv_fast_* are the SFU sequences. */
__WC_NV_PURE float __nv_fast_expf(float);
__WC_NV_PURE float __nv_fast_exp10f(float);
__WC_NV_PURE float __nv_fast_logf(float);
__WC_NV_PURE float __nv_fast_log2f(float);
__WC_NV_PURE float __nv_fast_log10f(float);
__WC_NV_PURE float __nv_fast_sinf(float);
__WC_NV_PURE float __nv_fast_cosf(float);
__WC_NV_PURE float __nv_fast_tanf(float);
__WC_NV_PURE float __nv_fast_powf(float, float);
__WC_NV_PURE float __nv_fast_fdividef(float, float);
__WC_NV void __nv_fast_sincosf(float, float *, float *);
__WC_NV_PURE float __nv_saturatef(float);
__WC_NV_PURE float __nv_frsqrt_rn(float);
__WC_DEV float __expf(float __x) { return __nv_fast_expf(__x); }
__WC_DEV float __exp10f(float __x) { return __nv_fast_exp10f(__x); }
__WC_DEV float __logf(float __x) { return __nv_fast_logf(__x); }
__WC_DEV float __log2f(float __x) { return __nv_fast_log2f(__x); }
__WC_DEV float __log10f(float __x) { return __nv_fast_log10f(__x); }
__WC_DEV float __sinf(float __x) { return __nv_fast_sinf(__x); }
__WC_DEV float __cosf(float __x) { return __nv_fast_cosf(__x); }
__WC_DEV float __tanf(float __x) { return __nv_fast_tanf(__x); }
__WC_DEV float __powf(float __x, float __y) { return __nv_fast_powf(__x, __y); }
__WC_DEV float __fdividef(float __x, float __y) {
  return __nv_fast_fdividef(__x, __y);
}
__WC_DEV void __sincosf(float __x, float *__s, float *__c) {
  __nv_fast_sincosf(__x, __s, __c);
}
__WC_DEV float __saturatef(float __x) { return __nv_saturatef(__x); }
__WC_DEV float __frsqrt_rn(float __x) { return __nv_frsqrt_rn(__x); }

/* Explicitly rounded arithmetic: __fadd_rn, __dmul_rz, __fmaf_ru, ... */
#define __WC_ROUNDED(RM)                                                       \
  __WC_NV_PURE float __nv_fadd_##RM(float, float);                             \
  __WC_NV_PURE float __nv_fsub_##RM(float, float);                             \
  __WC_NV_PURE float __nv_fmul_##RM(float, float);                             \
  __WC_NV_PURE float __nv_fdiv_##RM(float, float);                             \
  __WC_NV_PURE float __nv_frcp_##RM(float);                                    \
  __WC_NV_PURE float __nv_fsqrt_##RM(float);                                   \
  __WC_NV_PURE float __nv_fmaf_##RM(float, float, float);                      \
  __WC_NV_PURE double __nv_dadd_##RM(double, double);                          \
  __WC_NV_PURE double __nv_dsub_##RM(double, double);                          \
  __WC_NV_PURE double __nv_dmul_##RM(double, double);                          \
  __WC_NV_PURE double __nv_ddiv_##RM(double, double);                          \
  __WC_NV_PURE double __nv_drcp_##RM(double);                                  \
  __WC_NV_PURE double __nv_dsqrt_##RM(double);                                 \
  __WC_NV_PURE double __nv_fma_##RM(double, double, double);                   \
  __WC_DEV float __fadd_##RM(float __a, float __b) {                          \
    return __nv_fadd_##RM(__a, __b);                                          \
  }                                                                            \
  __WC_DEV float __fsub_##RM(float __a, float __b) {                          \
    return __nv_fsub_##RM(__a, __b);                                          \
  }                                                                            \
  __WC_DEV float __fmul_##RM(float __a, float __b) {                          \
    return __nv_fmul_##RM(__a, __b);                                          \
  }                                                                            \
  __WC_DEV float __fdiv_##RM(float __a, float __b) {                          \
    return __nv_fdiv_##RM(__a, __b);                                          \
  }                                                                            \
  __WC_DEV float __frcp_##RM(float __a) { return __nv_frcp_##RM(__a); }       \
  __WC_DEV float __fsqrt_##RM(float __a) { return __nv_fsqrt_##RM(__a); }     \
  __WC_DEV float __fmaf_##RM(float __a, float __b, float __c) {               \
    return __nv_fmaf_##RM(__a, __b, __c);                                     \
  }                                                                            \
  __WC_DEV double __dadd_##RM(double __a, double __b) {                       \
    return __nv_dadd_##RM(__a, __b);                                          \
  }                                                                            \
  __WC_DEV double __dsub_##RM(double __a, double __b) {                       \
    return __nv_dsub_##RM(__a, __b);                                          \
  }                                                                            \
  __WC_DEV double __dmul_##RM(double __a, double __b) {                       \
    return __nv_dmul_##RM(__a, __b);                                          \
  }                                                                            \
  __WC_DEV double __ddiv_##RM(double __a, double __b) {                       \
    return __nv_ddiv_##RM(__a, __b);                                          \
  }                                                                            \
  __WC_DEV double __drcp_##RM(double __a) { return __nv_drcp_##RM(__a); }     \
  __WC_DEV double __dsqrt_##RM(double __a) { return __nv_dsqrt_##RM(__a); }   \
  __WC_DEV double __fma_##RM(double __a, double __b, double __c) {            \
    return __nv_fma_##RM(__a, __b, __c);                                      \
  }
__WC_ROUNDED(rn)
__WC_ROUNDED(rz)
__WC_ROUNDED(ru)
__WC_ROUNDED(rd)
#undef __WC_ROUNDED

/* Conversions with an explicit rounding mode: __float2int_rn, ... */
#define __WC_CVT(FROM, TO, RM)                                                 \
  __WC_NV_PURE __wc_##TO##_t __nv_##FROM##2##TO##_##RM(__wc_##FROM##_t);       \
  __WC_DEV __wc_##TO##_t __##FROM##2##TO##_##RM(__wc_##FROM##_t __x) {        \
    return __nv_##FROM##2##TO##_##RM(__x);                                    \
  }
#define __WC_CVT_ALL_MODES(FROM, TO)                                           \
  __WC_CVT(FROM, TO, rn) __WC_CVT(FROM, TO, rz)                                \
  __WC_CVT(FROM, TO, ru) __WC_CVT(FROM, TO, rd)
typedef float __wc_float_t;
typedef double __wc_double_t;
typedef int __wc_int_t;
typedef unsigned __wc_uint_t;
typedef long long __wc_ll_t;
typedef unsigned long long __wc_ull_t;
__WC_CVT_ALL_MODES(float, int)
__WC_CVT_ALL_MODES(float, uint)
__WC_CVT_ALL_MODES(float, ll)
__WC_CVT_ALL_MODES(float, ull)
__WC_CVT_ALL_MODES(double, int)
__WC_CVT_ALL_MODES(double, uint)
__WC_CVT_ALL_MODES(double, ll)
__WC_CVT_ALL_MODES(double, ull)
__WC_CVT_ALL_MODES(double, float)
__WC_CVT_ALL_MODES(int, float)
__WC_CVT_ALL_MODES(uint, float)
__WC_CVT_ALL_MODES(ll, float)
__WC_CVT_ALL_MODES(ull, float)
__WC_CVT_ALL_MODES(ll, double)
__WC_CVT_ALL_MODES(ull, double)
__WC_CVT(int, double, rn)
__WC_CVT(uint, double, rn)
#undef __WC_CVT_ALL_MODES
#undef __WC_CVT

/* Reinterpretations are pure bit casts in IR. */
__WC_DEV int __float_as_int(float __x) { return __builtin_bit_cast(int, __x); }
__WC_DEV unsigned __float_as_uint(float __x) {
  return __builtin_bit_cast(unsigned, __x);
}
__WC_DEV float __int_as_float(int __x) {
  return __builtin_bit_cast(float, __x);
}
__WC_DEV float __uint_as_float(unsigned __x) {
  return __builtin_bit_cast(float, __x);
}
__WC_DEV long long __double_as_longlong(double __x) {
  return __builtin_bit_cast(long long, __x);
}
__WC_DEV double __longlong_as_double(long long __x) {
  return __builtin_bit_cast(double, __x);
}
__WC_DEV int __double2hiint(double __x) {
  return (int)(__builtin_bit_cast(unsigned long long, __x) >> 32);
}
__WC_DEV int __double2loint(double __x) {
  return (int)__builtin_bit_cast(unsigned long long, __x);
}
__WC_DEV double __hiloint2double(int __hi, int __lo) {
  return __builtin_bit_cast(
      double, ((unsigned long long)(unsigned)__hi << 32) | (unsigned)__lo);
}

/* ------------------------------------------------------------------------ */
/* Host runtime API (declarations only: the host side is never linked)       */
/* ------------------------------------------------------------------------ */

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorCudartUnloading = 4,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidKernelImage = 200,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchTimeout = 702,
  cudaErrorLaunchFailure = 719,
  cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

enum cudaFuncCache {
  cudaFuncCachePreferNone = 0,
  cudaFuncCachePreferShared = 1,
  cudaFuncCachePreferL1 = 2,
  cudaFuncCachePreferEqual = 3
};

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;

#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
#define cudaCpuDeviceId (-1)
#define cudaHostAllocDefault 0x00
#define cudaEventDefault 0x00
#define cudaEventDisableTiming 0x02
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01

/* 3-D copies between linear memory (CUDA arrays are not provided). */
struct cudaPos {
  size_t x, y, z;
};
struct cudaExtent {
  size_t width, height, depth;
};
struct cudaPitchedPtr {
  void *ptr;
  size_t pitch, xsize, ysize;
};
typedef struct cudaArray *cudaArray_t;
struct cudaMemcpy3DParms {
  cudaArray_t srcArray;
  struct cudaPos srcPos;
  struct cudaPitchedPtr srcPtr;
  cudaArray_t dstArray;
  struct cudaPos dstPos;
  struct cudaPitchedPtr dstPtr;
  struct cudaExtent extent;
  enum cudaMemcpyKind kind;
};
static __inline__ struct cudaPos make_cudaPos(size_t __x, size_t __y,
                                              size_t __z) {
  struct cudaPos __p = {__x, __y, __z};
  return __p;
}
static __inline__ struct cudaExtent make_cudaExtent(size_t __w, size_t __h,
                                                    size_t __d) {
  struct cudaExtent __e = {__w, __h, __d};
  return __e;
}
static __inline__ struct cudaPitchedPtr
make_cudaPitchedPtr(void *__d, size_t __p, size_t __xsz, size_t __ysz) {
  struct cudaPitchedPtr __s = {__d, __p, __xsz, __ysz};
  return __s;
}

/* A subset of the real struct: the fields sample code usually prints. */
struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  size_t totalConstMem;
  int major;
  int minor;
  int multiProcessorCount;
  int memoryClockRate;
  int memoryBusWidth;
  int l2CacheSize;
  int maxThreadsPerMultiProcessor;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int concurrentKernels;
  int unifiedAddressing;
  int managedMemory;
  size_t textureAlignment;
  int deviceOverlap;
};

/* The attributes cudaDeviceGetAttribute answers, numbered as the toolkit
 * numbers them. */
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrIntegrated = 18,
  cudaDevAttrComputeMode = 20,
  cudaDevAttrConcurrentKernels = 31,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrUnifiedAddressing = 41,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrManagedMemory = 83,
  cudaDevAttrConcurrentManagedAccess = 89,
  cudaDevAttrCooperativeLaunch = 95,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
};

enum cudaMemoryAdvise {
  cudaMemAdviseSetReadMostly = 1,
  cudaMemAdviseUnsetReadMostly = 2,
  cudaMemAdviseSetPreferredLocation = 3,
  cudaMemAdviseUnsetPreferredLocation = 4,
  cudaMemAdviseSetAccessedBy = 5,
  cudaMemAdviseUnsetAccessedBy = 6
};

enum cudaComputeMode {
  cudaComputeModeDefault = 0,
  cudaComputeModeExclusive = 1,
  cudaComputeModeProhibited = 2,
  cudaComputeModeExclusiveProcess = 3
};

extern "C" {
cudaError_t cudaDeviceGetAttribute(int *, enum cudaDeviceAttr, int);
cudaError_t cudaGetSymbolAddress(void **, const void *);
cudaError_t cudaMalloc(void **, size_t);
cudaError_t cudaMallocManaged(void **, size_t,
                              unsigned int __flags = cudaMemAttachGlobal);
cudaError_t cudaMallocHost(void **, size_t);
cudaError_t cudaMemGetInfo(size_t *, size_t *);
cudaError_t cudaHostAlloc(void **, size_t, unsigned int);
cudaError_t cudaMallocPitch(void **, size_t *, size_t, size_t);
cudaError_t cudaFree(void *);
cudaError_t cudaFreeHost(void *);
cudaError_t cudaMemcpy(void *, const void *, size_t, enum cudaMemcpyKind);
cudaError_t cudaMemcpyAsync(void *, const void *, size_t, enum cudaMemcpyKind,
                            cudaStream_t __stream = 0);
cudaError_t cudaMalloc3D(struct cudaPitchedPtr *, struct cudaExtent);
cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *);
cudaError_t cudaMemcpy2D(void *, size_t, const void *, size_t, size_t, size_t,
                         enum cudaMemcpyKind);
cudaError_t cudaMemcpyToSymbol(const void *, const void *, size_t,
                               size_t __offset = 0,
                               enum cudaMemcpyKind = cudaMemcpyHostToDevice);
cudaError_t cudaMemcpyFromSymbol(void *, const void *, size_t,
                                 size_t __offset = 0,
                                 enum cudaMemcpyKind = cudaMemcpyDeviceToHost);
cudaError_t cudaMemset(void *, int, size_t);
cudaError_t cudaMemsetAsync(void *, int, size_t, cudaStream_t __stream = 0);
cudaError_t cudaMemPrefetchAsync(const void *, size_t, int,
                                 cudaStream_t __stream = 0);
cudaError_t cudaMemAdvise(const void *, size_t, enum cudaMemoryAdvise, int);

cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaThreadSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaThreadExit(void);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t);
const char *cudaGetErrorName(cudaError_t);
cudaError_t cudaGetDeviceCount(int *);
cudaError_t cudaGetDevice(int *);
cudaError_t cudaSetDevice(int);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *, int);
cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache);
cudaError_t cudaFuncSetCacheConfig(const void *, enum cudaFuncCache);

cudaError_t cudaStreamCreate(cudaStream_t *);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *, unsigned int);
cudaError_t cudaStreamDestroy(cudaStream_t);
cudaError_t cudaStreamSynchronize(cudaStream_t);
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t,
                                unsigned int __flags = 0);

cudaError_t cudaEventCreate(cudaEvent_t *);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *, unsigned int);
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t __stream = 0);
cudaError_t cudaEventQuery(cudaEvent_t);
cudaError_t cudaEventSynchronize(cudaEvent_t);
cudaError_t cudaEventElapsedTime(float *, cudaEvent_t, cudaEvent_t);
cudaError_t cudaEventDestroy(cudaEvent_t);

cudaError_t cudaLaunchKernel(const void *, dim3, dim3, void **, size_t,
                             cudaStream_t);
cudaError_t cudaLaunchCooperativeKernel(const void *, dim3, dim3, void **,
                                        size_t, cudaStream_t);

/* What clang emits for `k<<<g, b, shmem, stream>>>(...)`: cudaConfigureCall
 * when no CUDA installation is detected (or it is older than 9.2), the
 * push/pop pair (plus cudaLaunchKernel in the stub) otherwise. */
cudaError_t cudaConfigureCall(dim3, dim3, size_t __shmem = 0,
                              cudaStream_t __stream = 0);
unsigned __cudaPushCallConfiguration(dim3, dim3, size_t __shmem = 0,
                                     cudaStream_t __stream = 0);
cudaError_t __cudaPopCallConfiguration(dim3 *, dim3 *, size_t *, void *);
}

/* C++ conveniences from cuda_runtime.h. */
template <class __T>
static __inline__ cudaError_t cudaMalloc(__T **__p, size_t __n) {
  return ::cudaMalloc((void **)(void *)__p, __n);
}
template <class __T>
static __inline__ cudaError_t
cudaMallocManaged(__T **__p, size_t __n,
                  unsigned int __flags = cudaMemAttachGlobal) {
  return ::cudaMallocManaged((void **)(void *)__p, __n, __flags);
}
template <class __T>
static __inline__ cudaError_t cudaMallocHost(__T **__p, size_t __n) {
  return ::cudaMallocHost((void **)(void *)__p, __n);
}
template <class __T>
static __inline__ cudaError_t
cudaMemcpyToSymbol(const __T &__sym, const void *__src, size_t __n,
                   size_t __off = 0,
                   enum cudaMemcpyKind __k = cudaMemcpyHostToDevice) {
  return ::cudaMemcpyToSymbol((const void *)&__sym, __src, __n, __off, __k);
}
template <class __T>
static __inline__ cudaError_t
cudaMemcpyFromSymbol(void *__dst, const __T &__sym, size_t __n,
                     size_t __off = 0,
                     enum cudaMemcpyKind __k = cudaMemcpyDeviceToHost) {
  return ::cudaMemcpyFromSymbol(__dst, (const void *)&__sym, __n, __off, __k);
}
template <class __T>
static __inline__ cudaError_t cudaGetSymbolAddress(void **__p,
                                                   const __T &__sym) {
  return ::cudaGetSymbolAddress(__p, (const void *)&__sym);
}
template <class __T>
static __inline__ cudaError_t cudaFuncSetCacheConfig(__T *__f,
                                                     enum cudaFuncCache __c) {
  return ::cudaFuncSetCacheConfig((const void *)__f, __c);
}
template <class __T>
static __inline__ cudaError_t cudaLaunchKernel(__T *__f, dim3 __g, dim3 __b,
                                               void **__args,
                                               size_t __shmem = 0,
                                               cudaStream_t __s = 0) {
  return ::cudaLaunchKernel((const void *)__f, __g, __b, __args, __shmem, __s);
}
template <class __T>
static __inline__ cudaError_t
cudaLaunchCooperativeKernel(__T *__f, dim3 __g, dim3 __b, void **__args,
                            size_t __shmem = 0, cudaStream_t __s = 0) {
  return ::cudaLaunchCooperativeKernel((const void *)__f, __g, __b, __args,
                                       __shmem, __s);
}
template <class __T>
cudaError_t cudaOccupancyMaxPotentialBlockSize(int *__min_grid, int *__block,
                                               __T __f, size_t __shmem = 0,
                                               int __limit = 0);
template <class __T>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *__blocks,
                                                          __T __f, int __block,
                                                          size_t __shmem);

#undef __WC_DEV
#undef __WC_HD
#undef __WC_NV_PURE
#undef __WC_NV

/* ------------------------------------------------------------------------ */
/* The library headers nvcc's cuda_runtime.h brings in                       */
/* ------------------------------------------------------------------------ */

/* Included last, after every device overload they must not pre-empt.
 * <new> goes through clang's cuda_wrappers/new, which adds device
 * operator new/delete on top of the malloc/free declared above. */
#if !defined(WARPCHECK_NO_SYSTEM_HEADERS)
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <new>
#endif

#endif /* WARPCHECK_CUDA_H */
