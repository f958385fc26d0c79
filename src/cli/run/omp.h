/* warpcheck run's stand-in for <omp.h>, found only when the compiler has
 * none: OpenMP's runtime calls for a program built without an OpenMP
 * runtime. Without -fopenmp the pragmas are ignored, so every parallel
 * region runs on one thread, and these answer as one thread would. */
#ifndef WARPCHECK_OMP_SERIAL_H
#define WARPCHECK_OMP_SERIAL_H
#include <time.h>

static inline void omp_set_num_threads(int n) { (void)n; }
static inline int omp_get_num_threads(void) { return 1; }
static inline int omp_get_max_threads(void) { return 1; }
static inline int omp_get_thread_num(void) { return 0; }
static inline int omp_get_num_procs(void) { return 1; }
static inline int omp_in_parallel(void) { return 0; }
static inline void omp_set_dynamic(int d) { (void)d; }
static inline int omp_get_dynamic(void) { return 0; }
static inline double omp_get_wtime(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static inline double omp_get_wtick(void) { return 1e-9; }

#endif
