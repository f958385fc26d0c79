// Host mixed-signedness min and max, as nvcc's headers declare them
// (max(int, unsigned) and the like) and clang's CUDA wrappers do not.
// The suites' host code calls them (Rodinia huffman, several CUDA
// samples); scripts/suites.sh retries a failed compile with this header
// force-included. Only for building the suites: warpcheck never reads it.
#pragma once
#define WC_MINMAX(T, U, R)                                                      \
  static inline __host__ R min(T a, U b) { return (R)a < (R)b ? (R)a : (R)b; } \
  static inline __host__ R max(T a, U b) { return (R)a > (R)b ? (R)a : (R)b; }
WC_MINMAX(int, unsigned int, unsigned int)
WC_MINMAX(unsigned int, int, unsigned int)
WC_MINMAX(long, unsigned long, unsigned long)
WC_MINMAX(unsigned long, long, unsigned long)
WC_MINMAX(long long, unsigned long long, unsigned long long)
WC_MINMAX(unsigned long long, long long, unsigned long long)
WC_MINMAX(float, double, double)
WC_MINMAX(double, float, double)
#undef WC_MINMAX
