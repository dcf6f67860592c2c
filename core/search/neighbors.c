/*
** neighbors.c: neighbourhoods, random moves and the explored set.
*/
#include "neighbors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"

/* Random draws before random_unexplored falls back to a scan. */
#define UNEXPLORED_TRIES 64

int kt_walker_init(kt_walker *w, const kt_space *s, uint64_t seed, kt_error *err) {
  memset(w, 0, sizeof *w);
  w->space = s;
  w->nparams = kt_space_nparams(s);
  w->count = kt_space_count(s);
  kt_rng_seed(&w->rng, seed);
  kt_indexmap_init(&w->costs);
  w->vi = kt_calloc(w->nparams + 1, sizeof *w->vi, err);
  w->vj = kt_calloc(w->nparams + 1, sizeof *w->vj, err);
  if (!w->vi || !w->vj) {
    kt_walker_clear(w);
    return -1;
  }
  return 0;
}

void kt_walker_clear(kt_walker *w) {
  kt_indexmap_clear(&w->costs);
  free(w->vi);
  free(w->vj);
  w->vi = w->vj = NULL;
}

int kt_walker_record(kt_walker *w, uint64_t index, const kt_result *r, kt_error *err) {
  double cost = kt_result_cost(r);
  uint64_t bits;
  memcpy(&bits, &cost, sizeof bits);
  return kt_indexmap_put(&w->costs, index, bits, err);
}

bool kt_walker_explored(const kt_walker *w, uint64_t index, double *cost) {
  uint64_t bits;
  if (!kt_indexmap_get(&w->costs, index, &bits)) return false;
  if (cost) memcpy(cost, &bits, sizeof *cost);
  return true;
}

uint64_t kt_walker_nexplored(const kt_walker *w) { return w->costs.n; }

/* ---- neighbourhoods ---- */

static uint32_t nvalues(const kt_walker *w, size_t p) {
  return (uint32_t)kt_space_param(w->space, p)->nvalues;
}

/* The values parameter p may take when it changes from v: every other
** value, or the ones listed next to v. *n gets their count. */
static uint32_t change_to(const kt_walker *w, size_t p, uint32_t v, kt_neighborhood nb,
                          uint32_t i, uint32_t *n) {
  uint32_t nv = nvalues(w, p);
  if (nb == KT_HAMMING) {
    *n = nv - 1;
    return i < v ? i : i + 1;
  }
  *n = (v > 0) + (v + 1 < nv);
  return v > 0 && i == 0 ? v - 1 : v + 1;
}

typedef struct enumeration {
  kt_walker *w;
  kt_neighborhood nb;
  kt_indices *out;
  kt_error *err;
} enumeration;

/* Changes `left` more parameters, each after `from`, in w->vj. */
static int enumerate(enumeration *e, size_t from, unsigned left) {
  kt_walker *w = e->w;
  if (left == 0) {
    uint64_t index;
    return kt_space_index(w->space, w->vj, &index) ? 0 : kt_indices_push(e->out, index, e->err);
  }
  for (size_t p = from; p < w->nparams; p++) {
    uint32_t n, unused, v = w->vi[p];
    change_to(w, p, v, e->nb, 0, &n);
    for (uint32_t i = 0; i < n; i++) {
      w->vj[p] = change_to(w, p, v, e->nb, i, &unused);
      if (enumerate(e, p + 1, left - 1)) return -1;
    }
    w->vj[p] = v;
  }
  return 0;
}

int kt_neighbors(kt_walker *w, uint64_t index, unsigned k, kt_neighborhood nb,
                 kt_indices *out, kt_error *err) {
  if (kt_space_config(w->space, index, w->vi, err)) return -1;
  memcpy(w->vj, w->vi, w->nparams * sizeof *w->vi);
  enumeration e = {w, nb, out, err};
  for (unsigned m = 1; m <= k && m <= w->nparams; m++)
    if (enumerate(&e, 0, m)) return -1;
  return 0;
}

/* The one-change neighbours of w->vi grouped by parameter: out gets them,
** ends[q] where the q-th non-empty group ends. */
static int grouped(kt_walker *w, kt_neighborhood nb, kt_indices *out, kt_indices *ends,
                   kt_error *err) {
  memcpy(w->vj, w->vi, w->nparams * sizeof *w->vi);
  enumeration e = {w, nb, out, err};
  for (size_t p = 0; p < w->nparams; p++) {
    size_t before = out->n;
    uint32_t n, unused, v = w->vi[p];
    change_to(w, p, v, nb, 0, &n);
    for (uint32_t i = 0; i < n; i++) {
      w->vj[p] = change_to(w, p, v, nb, i, &unused);
      if (enumerate(&e, w->nparams, 0)) return -1;
    }
    w->vj[p] = v;
    kt_shuffle_u64(&w->rng, out->items + before, out->n - before);
    if (out->n > before && kt_indices_push(ends, out->n, err)) return -1;
  }
  return 0;
}

/* Appends the groups of all (ends: where each ends) to out, round robin
** over the groups in a random order. */
static int interleave(kt_walker *w, const kt_indices *all, const kt_indices *ends,
                      kt_indices *out, kt_error *err) {
  kt_indices order = {NULL, 0, 0};
  int rc = 0;
  for (size_t q = 0; q < ends->n && rc == 0; q++) rc = kt_indices_push(&order, q, err);
  kt_shuffle_u64(&w->rng, order.items, order.n);
  for (size_t round = 0, taken = 1; rc == 0 && taken; round++) {
    taken = 0;
    for (size_t k = 0; k < order.n && rc == 0; k++) {
      size_t q = (size_t)order.items[k], at = (q ? (size_t)ends->items[q - 1] : 0) + round;
      if (at < ends->items[q]) {
        rc = kt_indices_push(out, all->items[at], err);
        taken++;
      }
    }
  }
  kt_indices_clear(&order);
  return rc;
}

typedef struct keyed {
  double key;
  uint64_t index;
} keyed;

static int by_key_descending(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  return (x->key < y->key) - (x->key > y->key);
}

/* Reorders items[0..n) (neighbours of w->vi, each with one change) by the
** score of its new value plus Gumbel noise: a random order in which a move
** scored higher by d comes before another with odds e^d to 1. k: scratch
** of n. */
static int rank_group(kt_walker *w, uint64_t *items, size_t n, const double *score,
                      const size_t *offset, keyed *k, kt_error *err) {
  for (size_t i = 0; i < n; i++) {
    if (kt_space_config(w->space, items[i], w->vj, err)) return -1;
    size_t p = 0;
    while (p + 1 < w->nparams && w->vj[p] == w->vi[p]) p++;
    double u = kt_rng_double(&w->rng);
    k[i] = (keyed){score[offset[p] + w->vj[p]] - log(-log(u > 0 ? u : 0x1p-60)), items[i]};
  }
  qsort(k, n, sizeof *k, by_key_descending);
  for (size_t i = 0; i < n; i++) items[i] = k[i].index;
  return 0;
}

static int mixed(kt_walker *w, uint64_t index, kt_neighborhood nb, const double *score,
                 const size_t *offset, kt_indices *out, kt_error *err) {
  kt_indices all = {NULL, 0, 0}, ends = {NULL, 0, 0};
  keyed *k = NULL;
  int rc = kt_space_config(w->space, index, w->vi, err);
  if (rc == 0) rc = grouped(w, nb, &all, &ends, err);
  if (rc == 0 && score && !(k = kt_calloc(all.n + 1, sizeof *k, err))) rc = -1;
  for (size_t q = 0; score && q < ends.n && rc == 0; q++) {
    size_t from = q ? (size_t)ends.items[q - 1] : 0;
    rc = rank_group(w, all.items + from, (size_t)ends.items[q] - from, score, offset, k, err);
  }
  if (rc == 0) rc = interleave(w, &all, &ends, out, err);
  free(k);
  kt_indices_clear(&all);
  kt_indices_clear(&ends);
  return rc;
}

int kt_neighbors_mixed(kt_walker *w, uint64_t index, kt_neighborhood nb, kt_indices *out,
                       kt_error *err) {
  return mixed(w, index, nb, NULL, NULL, out, err);
}

int kt_neighbors_ranked(kt_walker *w, uint64_t index, kt_neighborhood nb, const double *score,
                        const size_t *offset, kt_indices *out, kt_error *err) {
  return mixed(w, index, nb, score, offset, out, err);
}

/* Reorders the list of kt_neighbors_ranked by gain across the parameters:
** the key of the i-th move, of parameter p from value u to v, is
** (score[p, v] - score[p, u]) / temperature - i / nparams plus Gumbel noise,
** so that a round of the parameters costs as much as a factor e in the odds. */
static int across(kt_walker *w, uint64_t index, const double *score, const size_t *offset,
                  double temperature, kt_indices *moves, kt_error *err) {
  keyed *k = kt_calloc(moves->n + 1, sizeof *k, err);
  int rc = k ? kt_space_config(w->space, index, w->vi, err) : -1;
  for (size_t i = 0; rc == 0 && i < moves->n; i++) {
    if ((rc = kt_space_config(w->space, moves->items[i], w->vj, err))) break;
    size_t p = 0;
    while (p + 1 < w->nparams && w->vj[p] == w->vi[p]) p++;
    double gain = score[offset[p] + w->vj[p]] - score[offset[p] + w->vi[p]];
    double u = kt_rng_double(&w->rng);
    k[i] = (keyed){gain / temperature - (double)i / (double)w->nparams - log(-log(u > 0 ? u : 0x1p-60)),
                   moves->items[i]};
  }
  if (rc == 0) {
    qsort(k, moves->n, sizeof *k, by_key_descending);
    for (size_t i = 0; i < moves->n; i++) moves->items[i] = k[i].index;
  }
  free(k);
  return rc;
}

int kt_neighbors_across(kt_walker *w, uint64_t index, kt_neighborhood nb, const double *score,
                        const size_t *offset, double temperature, kt_indices *out,
                        kt_error *err) {
  size_t from = out->n;
  if (mixed(w, index, nb, score, offset, out, err)) return -1;
  kt_indices mine = {out->items + from, out->n - from, out->n - from};
  return across(w, index, score, offset, temperature, &mine, err);
}

/* Whether parameters p and q take the same list of three or more values. */
static bool twins(const kt_space *s, size_t p, size_t q) {
  const kt_param *a = kt_space_param(s, p), *b = kt_space_param(s, q);
  if (a->nvalues != b->nvalues || a->nvalues < 3) return false;
  for (size_t i = 0; i < a->nvalues; i++)
    if (!kt_value_equal(&a->values[i], &b->values[i])) return false;
  return true;
}

/* Whether w->vj steps two twins of w->vi each to its next value up (with
** square, only two that hold the same value in w->vi). */
static bool twin_step_up(const kt_walker *w, bool square) {
  size_t changed[2], n = 0;
  for (size_t p = 0; p < w->nparams; p++) {
    if (w->vj[p] == w->vi[p]) continue;
    if (n == 2 || w->vj[p] != w->vi[p] + 1) return false;
    changed[n++] = p;
  }
  return n == 2 && (!square || w->vi[changed[0]] == w->vi[changed[1]]) &&
         twins(w->space, changed[0], changed[1]);
}

int kt_neighbors_twins_first(kt_walker *w, uint64_t index, uint64_t *items, size_t n,
                             bool square, kt_error *err) {
  if (kt_space_config(w->space, index, w->vi, err)) return -1;
  size_t front = 0;
  for (size_t i = 0; i < n; i++) {
    if (kt_space_config(w->space, items[i], w->vj, err)) return -1;
    if (!twin_step_up(w, square)) continue;
    uint64_t m = items[i];
    memmove(items + front + 1, items + front, (i - front) * sizeof *items);
    items[front++] = m;
  }
  return 0;
}

/* One random change of w->vi into w->vj; false when the drawn parameter
** cannot change. */
static bool random_change(kt_walker *w, kt_neighborhood nb) {
  size_t p = (size_t)kt_rng_below(&w->rng, w->nparams);
  uint32_t n;
  change_to(w, p, w->vi[p], nb, 0, &n);
  if (n == 0) return false;
  memcpy(w->vj, w->vi, w->nparams * sizeof *w->vi);
  w->vj[p] = change_to(w, p, w->vi[p], nb, (uint32_t)kt_rng_below(&w->rng, n), &n);
  return true;
}

/* Draws first; when draws keep missing, lists every neighbour and picks. */
int kt_neighbor_random(kt_walker *w, uint64_t index, kt_neighborhood nb, bool unexplored,
                       uint64_t *out, kt_error *err) {
  if (w->nparams == 0) return 1;
  if (kt_space_config(w->space, index, w->vi, err)) return -1;
  for (size_t t = 0; t < 4 * w->nparams; t++)
    if (random_change(w, nb) && kt_space_index(w->space, w->vj, out) == 0 &&
        !(unexplored && kt_walker_explored(w, *out, NULL)))
      return 0;
  kt_indices all = {NULL, 0, 0};
  if (kt_neighbors(w, index, 1, nb, &all, err)) {
    kt_indices_clear(&all);
    return -1;
  }
  size_t kept = 0;
  for (size_t i = 0; i < all.n; i++)
    if (!(unexplored && kt_walker_explored(w, all.items[i], NULL)))
      all.items[kept++] = all.items[i];
  if (kept) *out = all.items[kt_rng_below(&w->rng, kept)];
  kt_indices_clear(&all);
  return kept ? 0 : 1;
}

int kt_random_unexplored(kt_walker *w, uint64_t *out) {
  uint64_t left = w->count - kt_walker_nexplored(w);
  if (left == 0) return 1;
  for (int t = 0; t < UNEXPLORED_TRIES; t++) {
    *out = kt_rng_below(&w->rng, w->count);
    if (!kt_walker_explored(w, *out, NULL)) return 0;
  }
  /* Nearly everything is explored: the r-th unexplored one, by a scan. */
  uint64_t r = kt_rng_below(&w->rng, left);
  for (uint64_t i = 0; i < w->count; i++)
    if (!kt_walker_explored(w, i, NULL) && r-- == 0) {
      *out = i;
      return 0;
    }
  return 1;
}

/* ---- continuous positions ---- */

uint64_t kt_nearest(kt_walker *w, const double *pos) {
  for (size_t p = 0; p < w->nparams; p++) {
    double x = round(pos[p]), top = (double)(nvalues(w, p) - 1);
    w->vi[p] = (uint32_t)(x < 0 || isnan(x) ? 0 : x > top ? top : x);
  }
  uint64_t found;
  if (kt_space_index(w->space, w->vi, &found) == 0) return found;
  double best = INFINITY;
  memcpy(w->vj, w->vi, w->nparams * sizeof *w->vi);
  for (size_t p = 0; p < w->nparams; p++) {
    for (uint32_t v = 0; v < nvalues(w, p); v++) {
      double d = fabs(pos[p] - v) - fabs(pos[p] - w->vi[p]);
      uint64_t index;
      w->vj[p] = v;
      if (v != w->vi[p] && d < best && kt_space_index(w->space, w->vj, &index) == 0) {
        best = d;
        found = index;
      }
    }
    w->vj[p] = w->vi[p];
  }
  return best == INFINITY ? kt_rng_below(&w->rng, w->count) : found;
}
