/*
** pairwise.c: the pairwise density-ratio model of moves.
*/
#include "pairwise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The share of explored configurations counted fast. */
#define FAST_SHARE 0.15
/* Prior count spread evenly over each pair's cells: a pair of values seen
** once, among fast configurations only, does not yet dominate the order. */
#define SMOOTH 4.0

static size_t pair_at(const kt_pairwise *m, size_t p, size_t q) {
  return m->pairbase[p * m->nparams + q];
}

int kt_pairwise_init(kt_pairwise *m, const kt_space *s, kt_error *err) {
  *m = (kt_pairwise){0};
  size_t P = m->nparams = kt_space_nparams(s), cells = 0;
  m->offset = kt_calloc(P + 1, sizeof *m->offset, err);
  m->nvalues = kt_calloc(P + 1, sizeof *m->nvalues, err);
  m->pairbase = kt_calloc(P * P + 1, sizeof *m->pairbase, err);
  if (!m->offset || !m->nvalues || !m->pairbase) goto fail;
  for (size_t p = 0; p < P; p++) {
    m->nvalues[p] = (uint32_t)kt_space_param(s, p)->nvalues;
    m->offset[p + 1] = m->offset[p] + m->nvalues[p];
  }
  for (size_t p = 0; p < P; p++)
    for (size_t q = p + 1; q < P; q++) {
      m->pairbase[p * P + q] = cells;
      if ((double)cells + (double)m->nvalues[p] * m->nvalues[q] > KT_PAIRWISE_MAX_CELLS) {
        kt_pairwise_clear(m);
        return 1;
      }
      cells += (size_t)m->nvalues[p] * m->nvalues[q];
    }
  m->cells = kt_calloc(cells + 1, sizeof *m->cells, err);
  m->score = kt_calloc(m->offset[P] + 1, sizeof *m->score, err);
  if (m->cells && m->score) return 0;
fail:
  kt_pairwise_clear(m);
  return -1;
}

void kt_pairwise_clear(kt_pairwise *m) {
  free(m->offset);
  free(m->nvalues);
  free(m->pairbase);
  free(m->cells);
  free(m->vi);
  free(m->ranks);
  free(m->score);
  *m = (kt_pairwise){0};
}

/* Adds delta to the fast or slow counts of every pair of values of the
** configuration that arrived seq-th. */
static void count(kt_pairwise *m, size_t seq, bool fast, int delta) {
  size_t P = m->nparams;
  const uint32_t *v = m->vi + seq * P;
  for (size_t p = 0; p < P; p++)
    for (size_t q = p + 1; q < P; q++) {
      kt_pairwise_cell *c = &m->cells[pair_at(m, p, q) + (size_t)v[p] * m->nvalues[q] + v[q]];
      double prior = SMOOTH / ((double)m->nvalues[p] * m->nvalues[q]);
      if (fast) c->fast += (uint32_t)delta;
      else c->slow += (uint32_t)delta;
      c->weight = log((c->fast + c->known + prior) / (c->slow + prior));
    }
}

void kt_pairwise_prior(kt_pairwise *m, const uint32_t *v, double weight) {
  size_t P = m->nparams;
  if (!(weight > 0) || !isfinite(weight)) return;
  for (size_t p = 0; p < P; p++)
    for (size_t q = p + 1; q < P; q++) {
      if (v[p] >= m->nvalues[p] || v[q] >= m->nvalues[q]) continue; /* not said */
      kt_pairwise_cell *c = &m->cells[pair_at(m, p, q) + (size_t)v[p] * m->nvalues[q] + v[q]];
      double prior = SMOOTH / ((double)m->nvalues[p] * m->nvalues[q]);
      c->known += weight;
      c->weight = log((c->fast + c->known + prior) / (c->slow + prior));
    }
}

/* Counts the configuration at rank i fast or slow as its rank now says. */
static void settle(kt_pairwise *m, size_t i, size_t nfast) {
  kt_pairwise_rank *r = &m->ranks[i];
  bool fast = i < nfast && isfinite(r->cost);
  if (r->fast == fast) return;
  count(m, r->seq, r->fast, -1);
  count(m, r->seq, fast, 1);
  r->fast = fast;
}

int kt_pairwise_add(kt_pairwise *m, const uint32_t *vi, double cost, kt_error *err) {
  size_t P = m->nparams;
  if (kt_grow(&m->vi, &m->capvi, (m->n + 1) * P + 1, sizeof *m->vi, err) ||
      kt_grow(&m->ranks, &m->capranks, m->n + 1, sizeof *m->ranks, err))
    return -1;
  memcpy(m->vi + m->n * P, vi, P * sizeof *vi);
  if (!(isfinite(cost) && cost > 0)) cost = INFINITY;
  size_t lo = 0, hi = m->n;
  while (lo < hi) { /* after the equally fast: the earlier first */
    size_t mid = lo + (hi - lo) / 2;
    if (m->ranks[mid].cost <= cost) lo = mid + 1;
    else hi = mid;
  }
  memmove(m->ranks + lo + 1, m->ranks + lo, (m->n - lo) * sizeof *m->ranks);
  m->ranks[lo] = (kt_pairwise_rank){cost, m->n, false};
  count(m, m->n++, false, 1);
  /* One arrival moves at most the ranks next to the boundary across it. */
  size_t nfast = (size_t)ceil(FAST_SHARE * (double)m->n);
  settle(m, lo, nfast);
  for (size_t i = nfast > 2 ? nfast - 2 : 0; i < nfast + 2 && i < m->n; i++) settle(m, i, nfast);
  return 0;
}

void kt_pairwise_score(kt_pairwise *m, const uint32_t *c) {
  size_t P = m->nparams;
  for (size_t p = 0; p < P; p++)
    for (uint32_t v = 0; v < m->nvalues[p]; v++) {
      double s = 0;
      for (size_t q = 0; q < P; q++) {
        if (q < p) s += m->cells[pair_at(m, q, p) + (size_t)c[q] * m->nvalues[p] + v].weight;
        else if (q > p) s += m->cells[pair_at(m, p, q) + (size_t)v * m->nvalues[q] + c[q]].weight;
      }
      m->score[m->offset[p] + v] = s;
    }
}

double kt_pairwise_config_score(const kt_pairwise *m, const uint32_t *v) {
  size_t P = m->nparams;
  double s = 0;
  for (size_t p = 0; p < P; p++)
    for (size_t q = p + 1; q < P; q++)
      s += m->cells[pair_at(m, p, q) + (size_t)v[p] * m->nvalues[q] + v[q]].weight;
  return s;
}
