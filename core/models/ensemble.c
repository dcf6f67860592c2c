/*
** ensemble.c: the networks of ensemble.h, on FANN where ktlua was built
** with it (KT_HAVE_FANN: the Makefile defines it where floatfann.h is).
**
** FANN draws initial weights from the C library's rand(), seeded from the
** clock or /dev/urandom; the weights are drawn again here from the
** ensemble's own generator, so that training is reproducible. Batch RPROP
** (FANN's default algorithm) is itself deterministic.
*/
#include "ensemble.h"

#ifndef KT_HAVE_FANN

bool kt_ensemble_available(void) { return false; }

kt_ensemble *kt_ensemble_new(size_t ninputs, const kt_ensemble_opts *o, kt_error *err) {
  (void)ninputs, (void)o;
  return kt_fail(err, "ktlua was built without FANN (libfann-dev): no neural networks"), NULL;
}

void kt_ensemble_free(kt_ensemble *e) { (void)e; }

int kt_ensemble_train(kt_ensemble *e, const float *x, const float *y, size_t n, size_t m,
                      unsigned epochs, kt_error *err) {
  (void)e, (void)x, (void)y, (void)n, (void)m, (void)epochs;
  return kt_fail(err, "ktlua was built without FANN");
}

void kt_ensemble_predict(kt_ensemble *e, const float *x, size_t n, float *out) {
  (void)e, (void)x, (void)n, (void)out;
}

void kt_ensemble_predict_fann(kt_ensemble *e, const float *x, size_t n, float *out) {
  (void)e, (void)x, (void)n, (void)out;
}

#else

#include <floatfann.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include "rng.h"

/* FANN's fann_run goes one point at a time through each network, in
** double precision; predicting a whole space that way costs 18 µs a point
** for 11 networks. predict() below computes the same function from the
** trained weights copied out of FANN (w1: for each network, each input
** and the bias, the weights to its hidden units; w2: each hidden unit's
** and the bias's weight to the output), the hidden units of a layer side
** by side, which the compiler vectorises. */
struct kt_ensemble {
  size_t ninputs;
  kt_ensemble_opts o;
  kt_rng rng;
  struct fann **nets;
  float *w1, *w2;
  struct fann_connection *conn;
};

#define HIDDEN_STEEPNESS 0.5f /* FANN's default; its sigmoid is 1 / (1 + e^(-2 s x)) */
#define OUTPUT_STEEPNESS 1.0f
#define OUTPUT_CLIP (150 / OUTPUT_STEEPNESS) /* where fann_run clips a neuron's sum */

bool kt_ensemble_available(void) { return true; }

void kt_ensemble_free(kt_ensemble *e) {
  if (!e) return;
  for (unsigned i = 0; e->nets && i < e->o.k; i++)
    if (e->nets[i]) fann_destroy(e->nets[i]);
  free(e->nets);
  free(e->w1), free(e->w2), free(e->conn);
  free(e);
}

static struct fann *new_net(kt_ensemble *e, kt_error *err) {
  struct fann *net = fann_create_standard(3, (unsigned)e->ninputs, e->o.hidden, 1u);
  if (!net) return kt_fail(err, "out of memory (a neural network)"), NULL;
  fann_set_error_log((struct fann_error *)net, NULL);
  fann_set_activation_function_hidden(net, FANN_SIGMOID);
  fann_set_activation_function_output(net, FANN_LINEAR);
  fann_set_activation_steepness_hidden(net, HIDDEN_STEEPNESS);
  fann_set_activation_steepness_output(net, OUTPUT_STEEPNESS);
  fann_set_training_algorithm(net, FANN_TRAIN_RPROP);
  for (unsigned i = 0; i < net->total_connections; i++) /* FANN's own range, our generator */
    net->weights[i] = (fann_type)(0.2 * kt_rng_double(&e->rng) - 0.1);
  return net;
}

/* FANN numbers the neurons layer by layer, each layer's bias last: the
** inputs 0..d-1, their bias d, the hidden units d+1..d+h, their bias
** d+h+1, the output d+h+2. */
static void copy_weights(kt_ensemble *e, unsigned j) {
  size_t d = e->ninputs, h = e->o.hidden;
  float *w1 = e->w1 + (size_t)j * (d + 1) * h, *w2 = e->w2 + (size_t)j * (h + 1);
  fann_get_connection_array(e->nets[j], e->conn);
  for (size_t c = 0; c < (d + 1) * h + h + 1; c++) {
    size_t from = e->conn[c].from_neuron, to = e->conn[c].to_neuron;
    if (to <= d + h) w1[from * h + (to - d - 1)] = e->conn[c].weight * 2 * HIDDEN_STEEPNESS;
    else w2[from - d - 1] = e->conn[c].weight * OUTPUT_STEEPNESS;
  }
}

kt_ensemble *kt_ensemble_new(size_t ninputs, const kt_ensemble_opts *o, kt_error *err) {
  if (ninputs == 0 || ninputs > UINT_MAX)
    return kt_fail(err, "a neural network needs 1 to %u inputs", UINT_MAX), NULL;
  kt_ensemble *e = kt_calloc(1, sizeof *e, err);
  if (!e) return NULL;
  e->ninputs = ninputs;
  e->o = *o;
  kt_rng_seed(&e->rng, o->seed);
  size_t h = o->hidden, per = (ninputs + 1) * h + h + 1;
  if (!(e->nets = kt_calloc(o->k, sizeof *e->nets, err)) ||
      !(e->w1 = kt_calloc(o->k * (ninputs + 1) * h, sizeof *e->w1, err)) ||
      !(e->w2 = kt_calloc(o->k * (h + 1), sizeof *e->w2, err)) ||
      !(e->conn = kt_calloc(per, sizeof *e->conn, err))) {
    kt_ensemble_free(e);
    return NULL;
  }
  for (unsigned i = 0; i < o->k; i++) {
    if (!(e->nets[i] = new_net(e, err))) {
      kt_ensemble_free(e);
      return NULL;
    }
    copy_weights(e, i);
  }
  return e;
}

/* Each network learns from its own resample, m points drawn with repeats. */
int kt_ensemble_train(kt_ensemble *e, const float *x, const float *y, size_t n, size_t m,
                      unsigned epochs, kt_error *err) {
  if (n == 0 || m == 0) return 0;
  if (m > UINT_MAX) return kt_fail(err, "too many points to train a neural network on");
  struct fann_train_data *data = fann_create_train((unsigned)m, (unsigned)e->ninputs, 1u);
  if (!data) return kt_fail(err, "out of memory (training data of a neural network)");
  for (unsigned j = 0; j < e->o.k; j++) {
    for (size_t i = 0; i < m; i++) {
      size_t pick = (size_t)kt_rng_below(&e->rng, n);
      for (size_t c = 0; c < e->ninputs; c++) data->input[i][c] = x[pick * e->ninputs + c];
      data->output[i][0] = y[pick];
    }
    for (unsigned t = 0; t < epochs; t++) fann_train_epoch(e->nets[j], data);
    copy_weights(e, j);
  }
  fann_destroy_train(data);
  return 0;
}

/* One network's output at one point; sum: h floats of scratch. */
static float forward(const float *w1, const float *w2, const float *x, size_t d, size_t h,
                     float *sum) {
  for (size_t u = 0; u < h; u++) sum[u] = w1[d * h + u]; /* the bias */
  for (size_t c = 0; c < d; c++)
    for (size_t u = 0; u < h; u++) sum[u] += w1[c * h + u] * x[c];
  float out = w2[h];
  for (size_t u = 0; u < h; u++) out += w2[u] / (1.0f + expf(-sum[u]));
  return fminf(fmaxf(out, -OUTPUT_CLIP), OUTPUT_CLIP);
}

void kt_ensemble_predict(kt_ensemble *e, const float *x, size_t n, float *out) {
  size_t d = e->ninputs, h = e->o.hidden;
  float sum[h];
  for (size_t i = 0; i < n; i++) {
    float total = 0;
    for (unsigned j = 0; j < e->o.k; j++)
      total += forward(e->w1 + (size_t)j * (d + 1) * h, e->w2 + (size_t)j * (h + 1), x + i * d,
                       d, h, sum);
    out[i] = total / (float)e->o.k;
  }
}

/* What FANN itself predicts (for tests of predict: the same function). */
void kt_ensemble_predict_fann(kt_ensemble *e, const float *x, size_t n, float *out) {
  for (size_t i = 0; i < n; i++) {
    fann_type *in = (fann_type *)(x + i * e->ninputs); /* fann_run only reads it */
    double sum = 0;
    for (unsigned j = 0; j < e->o.k; j++) sum += fann_run(e->nets[j], in)[0];
    out[i] = (float)(sum / e->o.k);
  }
}

#endif
