/* omp_serial.c: the two OpenMP calls chapter 10's mha_fast makes, for its
 * WebAssembly build (mk/wasm.mk), which has no threads: one thread, and nothing
 * to release. The build leaves out -fopenmp, so every #pragma omp is ignored and
 * each parallel loop runs as a plain loop. Not part of the book: a build tool. */
#include <omp.h>

int omp_get_max_threads(void) { return 1; }
int omp_pause_resource_all(omp_pause_resource_t kind) { (void)kind; return 0; }
