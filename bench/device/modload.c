/*
** bench/device/modload.c: does loading a CUDA module wait for the device? The driver API alone,
** built and run by bench/device/modload.sh on a GPU machine: loads and first launches with
** the device idle and beside a 5 ms kernel, and 40 launches of 0.5 ms kernels alone and
** beside another thread that loads 16 modules (server_loads.c says why it matters).
*/
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorString(r_, &s); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1);} } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static char *slurp(const char *p, size_t *n) { FILE *f = fopen(p, "rb"); if (!f) { perror(p); exit(1); } fseek(f, 0, SEEK_END); *n = ftell(f); rewind(f); char *b = malloc(*n); fread(b, 1, *n, f); fclose(f); return b; }
static CUstream st; static CUfunction spin; static CUcontext ctx;
static void launch_spin(long long cycles) { void *a[] = {&cycles}; CK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, st, a, NULL)); }
static char *images[64]; static int nimg;
static volatile int loader_go, loader_done;
static void *loader(void *p) { (void)p; CK(cuCtxSetCurrent(ctx)); while (!loader_go) ; for (int i = 32; i < 48; i++) { CUmodule m; CUfunction f; CK(cuModuleLoadData(&m, images[i])); CK(cuModuleGetFunction(&f, m, "k")); } loader_done = 1; return NULL; }
int main(int argc, char **argv) {
  CUdevice d; CK(cuInit(0)); CK(cuDeviceGet(&d, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, d)); CK(cuCtxSetCurrent(ctx)); CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
  size_t n; char *spin_img = slurp("spin.cubin", &n); CUmodule sm; CK(cuModuleLoadData(&sm, spin_img)); CK(cuModuleGetFunction(&spin, sm, "spin"));
  int clock_khz; CK(cuDeviceGetAttribute(&clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, d));
  long long ms5 = (long long)clock_khz * 5; /* about 5 ms of spinning */
  for (nimg = 0; nimg < argc - 1 && nimg < 64; nimg++) images[nimg] = slurp(argv[nimg + 1], &n);
  launch_spin(1000); CK(cuStreamSynchronize(st));
  printf("cubins %d, clock %d kHz\n", nimg, clock_khz);
  for (int i = 0; i < 8; i++) { /* device idle */
    CUmodule m; CUfunction f; double t0 = now(); CK(cuModuleLoadData(&m, images[i])); double t1 = now(); CK(cuModuleGetFunction(&f, m, "k")); double t2 = now();
    printf("idle: load %.3f ms, get function %.3f ms\n", t1 - t0, t2 - t1);
  }
  for (int i = 8; i < 16; i++) { /* device busy 5 ms */
    launch_spin(ms5); double t0 = now(); CUmodule m; CUfunction f; CK(cuModuleLoadData(&m, images[i])); double t1 = now(); CK(cuModuleGetFunction(&f, m, "k")); double t2 = now();
    CUresult q = cuStreamQuery(st); double t3 = now(); CK(cuStreamSynchronize(st)); double t4 = now();
    printf("busy: load %.3f ms, get function %.3f ms, stream %s after them, spin ended %.3f ms after the load began\n", t1 - t0, t2 - t1, q == CUDA_ERROR_NOT_READY ? "still busy" : "idle", t4 - t0); (void)t3;
  }
  for (int i = 16; i < 24; i++) { /* first launch of a new function while busy */
    CUmodule m; CUfunction f; CK(cuModuleLoadData(&m, images[i])); CK(cuModuleGetFunction(&f, m, "k"));
    launch_spin(ms5); double t0 = now(); int x = 0; void *a[] = {&x}; CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, st, a, NULL)); double t1 = now();
    CUresult q = cuStreamQuery(st); CK(cuStreamSynchronize(st)); double t2 = now();
    printf("busy: first launch %.3f ms (stream %s after it), all done %.3f ms after\n", t1 - t0, q == CUDA_ERROR_NOT_READY ? "still busy" : "idle", t2 - t0);
  }
  /* 8 spins of 0.5 ms queued one at a time from this thread while another thread loads 16 modules */
  pthread_t th; pthread_create(&th, NULL, loader, NULL);
  for (int rep = 0; rep < 2; rep++) {
    CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0));
    loader_go = rep == 1;
    double t0 = now(); CK(cuEventRecord(e0, st)); double worst = 0;
    for (int i = 0; i < 40; i++) { double a = now(); launch_spin(ms5 / 10); double b = now(); if (b - a > worst) worst = b - a; }
    CK(cuEventRecord(e1, st)); CK(cuEventSynchronize(e1)); double t1 = now(); float ev; CK(cuEventElapsedTime(&ev, e0, e1));
    printf("%s: 40 launches of 0.5 ms: wall %.3f ms, device span %.3f ms, slowest launch call %.3f ms\n", rep ? "loads beside" : "alone", t1 - t0, ev, worst);
  }
  pthread_join(th, NULL);
  return 0;
}
