/*
** ensemble.h: an ensemble of small neural networks that predicts a
** number from a point, for the model-based searcher (search_model.c).
**
** Each of k networks has one hidden layer of sigmoid units and a linear
** output, and learns from its own bootstrap resample of the data
** (bagging); the prediction is the mean of the k outputs. The networks
** are FANN's (libfann); their weights start from the ensemble's seed, so
** a seed gives the same predictions on every machine with the same FANN.
** Training again goes on from the weights reached so far.
*/
#ifndef KT_ENSEMBLE_H
#define KT_ENSEMBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kt.h"

typedef struct kt_ensemble kt_ensemble;

typedef struct kt_ensemble_opts {
  unsigned k;      /* networks */
  unsigned hidden; /* sigmoid units of each */
  uint64_t seed;
} kt_ensemble_opts;

/* false when ktlua was built without FANN: kt_ensemble_new then fails. */
bool kt_ensemble_available(void);
kt_ensemble *kt_ensemble_new(size_t ninputs, const kt_ensemble_opts *o, kt_error *err);
void kt_ensemble_free(kt_ensemble *e);
/* Trains for `epochs` on n points (x: n rows of ninputs) and their
** targets y: each network on its own m points drawn from them with
** repeats. */
int kt_ensemble_train(kt_ensemble *e, const float *x, const float *y, size_t n, size_t m,
                      unsigned epochs, kt_error *err);
/* The mean prediction of the networks for each of n points. */
void kt_ensemble_predict(kt_ensemble *e, const float *x, size_t n, float *out);
/* The same through FANN's own fann_run, point by point (slower): what
** the tests compare kt_ensemble_predict with. */
void kt_ensemble_predict_fann(kt_ensemble *e, const float *x, size_t n, float *out);

#endif
