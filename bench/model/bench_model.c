/*
** bench_model.c: what the model searcher's neural networks cost
** (core/models/ensemble.c on FANN): one training on a sample and one prediction
** of every configuration of a 100,000-configuration space, on one core.
**
**   build/bench_model [inputs] [sample]          (make bench-model)
**
** The space is a grid of `inputs` parameters (15 by default, as many as
** CLBlast's Xgemm) scaled to [0, 1], 100,000 random points of it; the
** times to learn are a smooth function of the point with noise. Each
** figure is the median of 5 runs, in CPU time of the thread (the machine
** may be shared), with the searcher's defaults (11 networks of 50 hidden
** units, 100 epochs) and the paper's range of hidden units. It also
** prints, on stderr, how far the batched prediction is from FANN's own
** fann_run and what that costs.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../core/models/ensemble.h"
#include "../../core/base/rng.h"

#define POINTS 100000
#define RUNS 5

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* CPU time: the machine may be shared */
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v) {
  qsort(v, RUNS, sizeof *v, by_value);
  return v[RUNS / 2];
}

/* The batched prediction against FANN's fann_run, point by point. */
static void check(kt_ensemble *e, const float *x, const float *pred, unsigned hidden) {
  enum { N = 20000 };
  static float ref[N];
  double t0 = now(), worst = 0;
  kt_ensemble_predict_fann(e, x, N, ref);
  double t = now() - t0;
  for (size_t i = 0; i < N; i++) worst = fmax(worst, fabs(ref[i] - pred[i]));
  fprintf(stderr, "hidden %u: fann_run %.2f µs a point; largest difference %.3g\n", hidden,
          1e6 * t / N, worst);
}

static void measure(size_t d, size_t sample, unsigned hidden, const float *x, const float *y,
                    float *pred) {
  double train_s[RUNS], predict_s[RUNS];
  for (int r = 0; r < RUNS; r++) {
    kt_error err = {0};
    kt_ensemble *e = kt_ensemble_new(d, &(kt_ensemble_opts){11, hidden, (uint64_t)r + 1}, &err);
    if (!e) {
      fprintf(stderr, "bench_model: %s\n", err.msg);
      exit(1);
    }
    double t0 = now();
    if (kt_ensemble_train(e, x, y, sample, sample, 100, &err)) {
      fprintf(stderr, "bench_model: %s\n", err.msg);
      exit(1);
    }
    double t1 = now();
    kt_ensemble_predict(e, x, POINTS, pred);
    double t2 = now();
    train_s[r] = t1 - t0, predict_s[r] = t2 - t1;
    if (r == 0) check(e, x, pred, hidden);
    kt_ensemble_free(e);
  }
  double tr = median(train_s), pr = median(predict_s);
  printf("| %zu | %zu | %u | %.3f | %.3f | %.3f | %.2f |\n", d, sample, hidden, tr, pr, tr + pr,
         1e6 * pr / POINTS);
}

int main(int argc, char **argv) {
  size_t d = argc > 1 ? (size_t)atoi(argv[1]) : 15, sample = argc > 2 ? (size_t)atoi(argv[2]) : 100;
  if (!kt_ensemble_available()) {
    puts("bench_model: ktlua was built without FANN: no neural networks to measure");
    return 0;
  }
  float *x = malloc(POINTS * d * sizeof *x), *y = malloc(POINTS * sizeof *y),
        *pred = malloc(POINTS * sizeof *pred);
  if (!x || !y || !pred) return 1;
  kt_rng rng;
  kt_rng_seed(&rng, 1);
  for (size_t i = 0; i < POINTS; i++) {
    double t = 0;
    for (size_t c = 0; c < d; c++) {
      x[i * d + c] = (float)kt_rng_below(&rng, 8) / 7.0f;
      t += (c % 3 + 1) * (x[i * d + c] - 0.4) * (x[i * d + c] - 0.4);
    }
    y[i] = (float)(t + 0.05 * kt_rng_double(&rng));
  }
  printf("| inputs | sample | hidden | train (s) | predict 100,000 (s) | total (s) | µs per point |\n"
         "|---|---|---|---|---|---|---|\n");
  for (unsigned hidden = 40; hidden <= 70; hidden += 10) measure(d, sample, hidden, x, y, pred);
  measure(d, sample * 4, 50, x, y, pred);
  free(x), free(y), free(pred);
  return 0;
}
