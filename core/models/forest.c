/*
** forest.c: the random forest of forest.h.
*/
#include "forest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct kt_forest_task {
  uint32_t node, lo, hi, depth; /* the node, its rows [lo, hi) */
} kt_forest_task;

int kt_forest_init(kt_forest *f, const kt_space *s, unsigned ntrees, unsigned min_leaf,
                   double mtry_share, kt_error *err) {
  memset(f, 0, sizeof *f);
  size_t P = f->nparams = kt_space_nparams(s);
  uint32_t most = 1;
  f->ntrees = ntrees ? ntrees : 1;
  f->min_leaf = min_leaf ? min_leaf : 1;
  f->nvalues = kt_calloc(P + 1, sizeof *f->nvalues, err);
  f->splittable = kt_calloc(P + 1, sizeof *f->splittable, err);
  f->roots = kt_calloc(f->ntrees, sizeof *f->roots, err);
  if (!f->nvalues || !f->splittable || !f->roots) goto fail;
  for (size_t p = 0; p < P; p++) {
    f->nvalues[p] = (uint32_t)kt_space_param(s, p)->nvalues;
    if (f->nvalues[p] > most) most = f->nvalues[p];
    if (f->nvalues[p] > 1) f->splittable[f->nsplittable++] = (uint32_t)p;
  }
  double m = ceil(mtry_share * (double)f->nsplittable);
  f->mtry = m < 1 ? 1 : (unsigned)m;
  f->hsum = kt_calloc(most, sizeof *f->hsum, err);
  f->hcount = kt_calloc(most, sizeof *f->hcount, err);
  if (f->hsum && f->hcount) return 0;
fail:
  kt_forest_clear(f);
  return -1;
}

void kt_forest_clear(kt_forest *f) {
  free(f->nvalues);
  free(f->splittable);
  free(f->roots);
  free(f->nodes);
  free(f->rows);
  free(f->hsum);
  free(f->hcount);
  free(f->stack);
  memset(f, 0, sizeof *f);
}

static int push(kt_forest *f, size_t *n, kt_forest_task t, kt_error *err) {
  if (kt_grow(&f->stack, &f->capstack, *n + 1, sizeof *f->stack, err)) return -1;
  f->stack[(*n)++] = t;
  return 0;
}

static int new_node(kt_forest *f, uint32_t *at, kt_error *err) {
  if (f->nnodes >= UINT32_MAX) return kt_fail(err, "forest: too many nodes");
  if (kt_grow(&f->nodes, &f->capnodes, f->nnodes + 1, sizeof *f->nodes, err)) return -1;
  memset(&f->nodes[f->nnodes], 0, sizeof *f->nodes);
  *at = (uint32_t)f->nnodes++;
  return 0;
}

typedef struct split {
  uint32_t param, at;
  double gain;
} split;

/* The best split of rows [lo, hi) (summing to sum) among mtry parameters
** drawn at random that have a split at all; gain 0 when none has. */
static split best_split(kt_forest *f, const uint32_t *x, const double *y, uint32_t lo,
                        uint32_t hi, double sum, kt_rng *rng) {
  size_t P = f->nparams, left = f->nsplittable;
  double n = (double)(hi - lo), base = sum * sum / n;
  split best = {0, 0, 0};
  unsigned tried = 0;
  while (left > 0 && tried < f->mtry) {
    /* draw without replacement: the drawn one goes to the end of the list */
    size_t k = (size_t)kt_rng_below(rng, left);
    uint32_t p = f->splittable[k];
    f->splittable[k] = f->splittable[--left];
    f->splittable[left] = p;
    uint32_t nv = f->nvalues[p];
    memset(f->hsum, 0, nv * sizeof *f->hsum);
    memset(f->hcount, 0, nv * sizeof *f->hcount);
    for (uint32_t i = lo; i < hi; i++) {
      uint32_t r = f->rows[i], v = x[(size_t)r * P + p];
      f->hsum[v] += y[r];
      f->hcount[v]++;
    }
    double sl = 0;
    uint32_t cl = 0;
    bool any = false;
    for (uint32_t v = 0; v + 1 < nv; v++) {
      if (!f->hcount[v]) continue; /* the same split as the last value present */
      cl += f->hcount[v];
      sl += f->hsum[v];
      uint32_t cr = (hi - lo) - cl;
      if (cl < f->min_leaf) continue;
      if (cr < f->min_leaf) break;
      any = true;
      double gain = sl * sl / cl + (sum - sl) * (sum - sl) / cr - base;
      if (gain > best.gain) best = (split){p, v, gain};
    }
    tried += any;
  }
  /* a gain within rounding of nothing is no split (equal targets) */
  if (best.gain <= 1e-12 * (fabs(base) + 1)) best.gain = 0;
  return best;
}

static int build_tree(kt_forest *f, const uint32_t *x, const double *y, uint32_t nrows,
                      kt_rng *rng, uint32_t *root, kt_error *err) {
  size_t P = f->nparams, nstack = 0;
  if (new_node(f, root, err) || push(f, &nstack, (kt_forest_task){*root, 0, nrows, 0}, err))
    return -1;
  while (nstack) {
    kt_forest_task t = f->stack[--nstack];
    double sum = 0;
    for (uint32_t i = t.lo; i < t.hi; i++) sum += y[f->rows[i]];
    f->nodes[t.node].value = (float)(sum / (double)(t.hi - t.lo));
    if (t.hi - t.lo < 2 * f->min_leaf || t.depth >= KT_FOREST_DEPTH) continue;
    split s = best_split(f, x, y, t.lo, t.hi, sum, rng);
    if (s.gain <= 0) continue;
    uint32_t a = t.lo, b = t.hi; /* partition: values <= s.at first */
    while (a < b) {
      if (x[(size_t)f->rows[a] * P + s.param] <= s.at) a++;
      else {
        uint32_t r = f->rows[a];
        f->rows[a] = f->rows[--b];
        f->rows[b] = r;
      }
    }
    uint32_t l, r;
    if (new_node(f, &l, err) || new_node(f, &r, err)) return -1;
    kt_forest_node *nd = &f->nodes[t.node];
    nd->param = s.param;
    nd->split = s.at;
    nd->left = l; /* r == l + 1 */
    if (push(f, &nstack, (kt_forest_task){l, t.lo, a, t.depth + 1}, err) ||
        push(f, &nstack, (kt_forest_task){r, a, t.hi, t.depth + 1}, err))
      return -1;
  }
  return 0;
}

int kt_forest_fit(kt_forest *f, const uint32_t *x, const double *y, size_t n, uint64_t seed,
                  kt_error *err) {
  if (n == 0 || n > UINT32_MAX) return kt_fail(err, "forest: cannot learn from %zu points", n);
  size_t m = f->resample && f->resample < n ? f->resample : n;
  if (kt_grow(&f->rows, &f->caprows, m, sizeof *f->rows, err)) return -1;
  f->nnodes = 0;
  f->fitted = false;
  for (unsigned t = 0; t < f->ntrees; t++) {
    kt_rng rng;
    kt_rng_seed(&rng, seed + 0x9E3779B97F4A7C15ull * (t + 1));
    for (size_t i = 0; i < m; i++) f->rows[i] = (uint32_t)kt_rng_below(&rng, n);
    if (build_tree(f, x, y, (uint32_t)m, &rng, &f->roots[t], err)) return -1;
  }
  f->fitted = true;
  return 0;
}

double kt_forest_predict(const kt_forest *f, const uint32_t *vi, double *sd) {
  double sum = 0, sum2 = 0;
  for (unsigned t = 0; t < f->ntrees; t++) {
    const kt_forest_node *nd = &f->nodes[f->roots[t]];
    while (nd->left) nd = &f->nodes[nd->left + (vi[nd->param] > nd->split)];
    sum += nd->value;
    sum2 += nd->value * nd->value;
  }
  double m = sum / f->ntrees, v = sum2 / f->ntrees - m * m;
  if (sd) *sd = v > 0 ? sqrt(v) : 0;
  return m;
}

void kt_forest_predict_many(const kt_forest *f, const uint32_t *vi, size_t n, double *mean,
                            double *sd) {
  size_t P = f->nparams;
  for (size_t i = 0; i < n; i++) mean[i] = sd[i] = 0; /* sums, then moments */
  for (unsigned t = 0; t < f->ntrees; t++) {
    const kt_forest_node *root = &f->nodes[f->roots[t]];
    for (size_t i = 0; i < n; i++) {
      const uint32_t *v = vi + i * P;
      const kt_forest_node *nd = root;
      while (nd->left) nd = &f->nodes[nd->left + (v[nd->param] > nd->split)];
      mean[i] += nd->value;
      sd[i] += (double)nd->value * nd->value;
    }
  }
  for (size_t i = 0; i < n; i++) {
    double m = mean[i] / f->ntrees, v = sd[i] / f->ntrees - m * m;
    mean[i] = m;
    sd[i] = v > 0 ? sqrt(v) : 0;
  }
}
