/*
** space_lazy.c: spaces too large to list, for a budgeted random search.
**
** A group whose pruned walk would bind more than KT_SPACE_WALK_STEPS
** values, or whose tuples would pass the space's byte limit, is sampled:
** its row numbers run over all of its combinations (declaration order,
** the last parameter fastest), valid or not, and a searcher draws rows
** and keeps those that meet the group's constraints (rejection sampling).
** Every other group is generated exactly as kt_space_generate would, so a
** space without a sampled group is the same space, index for index.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "space_int.h"

static double product(const kt_space *s, const group *g) {
  double n = 1;
  for (size_t j = 0; j < g->n; j++) n *= (double)s->params[g->params[j]].nvalues;
  return n;
}

void sampled_tuple(const kt_space *s, const group *g, uint64_t row, uint32_t *vi) {
  for (size_t j = g->n; j-- > 0;) {
    size_t p = g->params[j];
    uint64_t nv = s->params[p].nvalues;
    vi[p] = (uint32_t)(row % nv);
    row /= nv;
  }
}

int sampled_row(const kt_space *s, const group *g, const uint32_t *vi, uint64_t *row) {
  uint64_t at = 0;
  for (size_t j = 0; j < g->n; j++) {
    size_t p = g->params[j];
    if (vi[p] >= s->params[p].nvalues) return 1;
    at = at * s->params[p].nvalues + vi[p];
  }
  kt_error err;
  if (group_accepts(s, g, vi, &err) != 1) return 1; /* an error in a constraint: not found */
  *row = at;
  return 0;
}

/* The parameters of g as "A, B, C" into buf. */
static void group_names(const kt_space *s, const group *g, char *buf, size_t size, size_t *used) {
  for (size_t j = 0; j < g->n && *used < size; j++)
    *used += (size_t)snprintf(buf + *used, size - *used, "%s%s", *used ? ", " : "",
                              s->params[g->params[j]].name);
}

void kt_space_sampled_names(const kt_space *s, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t g = 0; g < s->ngroups; g++)
    if (s->groups[g].sampled) group_names(s, &s->groups[g], buf, size, &used);
}

bool kt_space_sampled(const kt_space *s) { return s->sampled; }

/* ---- generation ---- */

/* Whether n tuples of g would pass the bytes left, as the walk stores them. */
static bool too_big(const kt_space *s, const group *g, uint64_t n, size_t left) {
  size_t most = 0;
  for (size_t j = 0; j < g->n; j++)
    if (s->params[g->params[j]].nvalues > most) most = s->params[g->params[j]].nvalues;
  double bytes = (double)n * (double)g->n * kt_index_width(most);
  return bytes > (double)left;
}

static int sample_group(const kt_space *s, group *g, kt_error *err) {
  uint64_t n = 1;
  for (size_t j = 0; j < g->n; j++)
    if (__builtin_mul_overflow(n, s->params[g->params[j]].nvalues, &n)) {
      char names[256];
      size_t used = 0;
      group_names(s, g, names, sizeof names, &used);
      return kt_fail(err, "the %.3g combinations of %s are more than 2^64: too many to sample",
                     product(s, g), names);
    }
  g->sampled = true;
  g->count = n;
  return 0;
}

/* Generates g as kt_space_generate would where a walk of it is short and
** its tuples fit; else samples it. */
int space_fill_or_sample(const kt_space *s, group *g, size_t *left, kt_error *err) {
  if (group_is_free(g) || product(s, g) <= (double)KT_SPACE_WALK_STEPS)
    return group_fill(s, g, true, left, err);
  uint64_t n;
  int over = count_group_steps(s, g, KT_SPACE_WALK_STEPS, &n, err);
  if (over < 0) return -1;
  if (!over && !too_big(s, g, n, *left)) return group_fill(s, g, true, left, err);
  return sample_group(s, g, err);
}

static int generate_sampled(kt_space *s, kt_error *err) {
  if (plan_groups(s, KT_SPACE_TAGS, &s->groups, &s->ngroups, err)) return -1;
  size_t left = kt_space_max_bytes(s);
  s->count = 1;
  for (size_t g = 0; g < s->ngroups; g++) {
    group *gr = &s->groups[g];
    if (space_fill_or_sample(s, gr, &left, err)) return -1;
    s->sampled = s->sampled || gr->sampled;
    if (__builtin_mul_overflow(s->count, gr->count, &s->count))
      return kt_fail(err, "the space has more than 2^64 configurations to draw from");
  }
  return 0;
}

int kt_space_generate_sampled(kt_space *s, kt_error *err) {
  if (s->generated) return 0;
  if (s->generating)
    return kt_fail(err, "the space is being generated: its constraints cannot change or "
                        "generate it");
  space_invalidate(s);
  s->generating = true;
  int rc = generate_sampled(s, err);
  s->generating = false;
  if (rc) {
    space_invalidate(s);
    return -1;
  }
  s->generated = true;
  return 0;
}

int kt_space_valid(const kt_space *s, uint64_t index, uint32_t *vi, kt_error *err) {
  if (kt_space_config(s, index, vi, err)) return -1;
  if (!s->sampled) return 1;
  /* A constraint written in Lua must not change the space while it runs:
  ** the space is the caller's, only declared const for the searcher. */
  kt_space *mut = (kt_space *)s;
  mut->generating = true;
  int ok = 1;
  for (size_t g = 0; g < s->ngroups && ok == 1; g++)
    if (s->groups[g].sampled) ok = group_accepts(s, &s->groups[g], vi, err);
  mut->generating = false;
  return ok;
}

/* ---- estimates ---- */

/* Valid tuples of g among draws combinations drawn at random (with
** repeats), scaled to all of its combinations. */
static int estimate_group(const kt_space *s, const group *g, uint64_t draws, kt_rng *rng,
                          uint32_t *vi, double *count, kt_error *err) {
  uint64_t hits = 0;
  for (uint64_t d = 0; d < draws; d++) {
    for (size_t j = 0; j < g->n; j++) {
      size_t p = g->params[j];
      vi[p] = (uint32_t)kt_rng_below(rng, s->params[p].nvalues);
    }
    int ok = group_accepts(s, g, vi, err);
    if (ok < 0) return -1;
    hits += (uint64_t)ok;
  }
  *count = product(s, g) * (double)hits / (double)draws;
  return 0;
}

static int estimate_groups(const kt_space *s, const group *groups, size_t ngroups,
                           uint64_t draws, kt_rng *rng, double *count, bool *exact,
                           kt_error *err) {
  uint32_t *vi = kt_calloc(s->nparams + 1, sizeof *vi, err);
  if (!vi) return -1;
  int rc = 0;
  for (size_t g = 0; g < ngroups && rc == 0; g++) {
    const group *gr = &groups[g];
    uint64_t n = s->params[gr->params[0]].nvalues;
    double c;
    int over = group_is_free(gr) ? 0 : count_group_steps(s, gr, KT_SPACE_WALK_STEPS, &n, err);
    if (over < 0) rc = -1;
    else if (over) rc = estimate_group(s, gr, draws, rng, vi, &c, err);
    else c = (double)n;
    *exact = *exact && over == 0;
    if (rc == 0) *count *= c;
  }
  free(vi);
  return rc;
}

int kt_space_estimate(kt_space *s, uint64_t draws, uint64_t seed, double *count, bool *exact,
                      kt_error *err) {
  *count = 1;
  *exact = true;
  if (s->generated && !s->sampled) {
    *count = (double)s->count;
    return 0;
  }
  if (s->generating)
    return kt_fail(err, "the space is being generated: its constraints cannot change or "
                        "generate it");
  if (draws == 0) return kt_fail(err, "an estimate needs at least one draw");
  group *groups;
  size_t n;
  if (plan_groups(s, KT_SPACE_TAGS, &groups, &n, err)) return -1;
  kt_rng rng;
  kt_rng_seed(&rng, seed);
  s->generating = true;
  int rc = estimate_groups(s, groups, n, draws, &rng, count, exact, err);
  s->generating = false;
  free_groups(groups, n);
  return rc;
}
