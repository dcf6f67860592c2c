/*
** space.c: parameter groups, pruned generation and index mapping.
*/
#include "space.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct constraint {
  size_t *params; /* parameter indices, in the constraint's own order */
  size_t n;
  kt_constraint_fn fn;
  void *ud;
  void (*ud_free)(void *);
} constraint;

typedef struct group {
  size_t *params;  /* parameter indices in declaration order */
  size_t n;
  size_t *order;   /* the same parameters in generation order */
  size_t **checks; /* per depth of the walk: constraints complete there */
  size_t *nchecks;
  unsigned width;  /* bytes per value index in a row */
  void *rows;      /* valid tuples in declaration order; NULL: one free parameter */
  uint64_t nrows;
} group;

struct kt_space {
  kt_param *params;
  size_t nparams, cap;
  constraint *cons;
  size_t ncons, capcons;
  bool generated;
  group *groups;
  size_t ngroups;
  uint64_t count;
};

kt_space *kt_space_new(kt_error *err) { return kt_calloc(1, sizeof(kt_space), err); }

static void free_groups(kt_space *s) {
  for (size_t g = 0; g < s->ngroups; g++) {
    group *gr = &s->groups[g];
    for (size_t d = 0; d < gr->n && gr->checks; d++) free(gr->checks[d]);
    free(gr->checks);
    free(gr->nchecks);
    free(gr->params);
    free(gr->order);
    free(gr->rows);
  }
  free(s->groups);
  s->groups = NULL;
  s->ngroups = 0;
  s->count = 0;
  s->generated = false;
}

static void param_clear(kt_param *p) {
  for (size_t j = 0; j < p->nvalues; j++)
    if (p->values[j].type == KT_VSTRING) free(p->values[j].u.s);
  free(p->values);
  free(p->name);
  memset(p, 0, sizeof *p);
}

void kt_params_free(kt_param *p, size_t n) {
  if (!p) return;
  for (size_t i = 0; i < n; i++) param_clear(&p[i]);
  free(p);
}

void kt_space_free(kt_space *s) {
  if (!s) return;
  free_groups(s);
  kt_params_free(s->params, s->nparams);
  for (size_t c = 0; c < s->ncons; c++) {
    free(s->cons[c].params);
    if (s->cons[c].ud_free) s->cons[c].ud_free(s->cons[c].ud);
  }
  free(s->cons);
  free(s);
}

static bool is_identifier(const char *name) {
  if (!(isalpha((unsigned char)name[0]) || name[0] == '_')) return false;
  for (const char *p = name; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_')) return false;
  return true;
}

static int copy_values(kt_param *p, const kt_value *values, size_t n, kt_error *err) {
  p->values = kt_calloc(n, sizeof *p->values, err);
  if (!p->values) return -1;
  for (size_t i = 0; i < n; i++) {
    p->values[i] = values[i];
    if (values[i].type == KT_VSTRING && !(p->values[i].u.s = kt_strdup(values[i].u.s, err))) {
      p->nvalues = i;
      return -1;
    }
    p->nvalues = i + 1;
  }
  return 0;
}

int kt_space_add_param(kt_space *s, const char *name, const kt_value *values,
                       size_t n, kt_error *err) {
  if (!is_identifier(name))
    return kt_fail(err, "parameter name '%s' is not a valid identifier (letters, digits, '_')", name);
  if (kt_space_find(s, name) >= 0)
    return kt_fail(err, "parameter '%s' is already defined", name);
  if (n == 0) return kt_fail(err, "parameter '%s' needs at least one value", name);
  if (n > UINT32_MAX) return kt_fail(err, "parameter '%s' has too many values", name);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < i; j++)
      if (kt_value_equal(&values[i], &values[j])) {
        char buf[128];
        kt_value_format(&values[i], buf, sizeof buf);
        return kt_fail(err, "parameter '%s' lists the value %s twice", name, buf);
      }
  if (kt_grow(&s->params, &s->cap, s->nparams + 1, sizeof *s->params, err)) return -1;
  kt_param *p = &s->params[s->nparams];
  memset(p, 0, sizeof *p);
  if (!(p->name = kt_strdup(name, err)) || copy_values(p, values, n, err)) {
    param_clear(p);
    return -1;
  }
  s->nparams++;
  free_groups(s);
  return 0;
}

int kt_space_add_constraint(kt_space *s, const char *const *params, size_t n,
                            kt_constraint_fn fn, void *ud, void (*ud_free)(void *),
                            kt_error *err) {
  size_t *idx = NULL;
  if (n == 0) {
    kt_fail(err, "a constraint needs at least one parameter");
    goto fail;
  }
  if (!(idx = kt_calloc(n, sizeof *idx, err))) goto fail;
  for (size_t i = 0; i < n; i++) {
    int p = kt_space_find(s, params[i]);
    if (p < 0) {
      kt_fail(err, "constraint names unknown parameter '%s'", params[i]);
      goto fail;
    }
    idx[i] = (size_t)p;
  }
  if (kt_grow(&s->cons, &s->capcons, s->ncons + 1, sizeof *s->cons, err)) goto fail;
  s->cons[s->ncons++] = (constraint){idx, n, fn, ud, ud_free};
  free_groups(s);
  return 0;
fail:
  free(idx);
  if (ud_free) ud_free(ud);
  return -1;
}

size_t kt_space_nparams(const kt_space *s) { return s->nparams; }
const kt_param *kt_space_param(const kt_space *s, size_t i) { return &s->params[i]; }
size_t kt_space_nconstraints(const kt_space *s) { return s->ncons; }
bool kt_space_generated(const kt_space *s) { return s->generated; }
uint64_t kt_space_count(const kt_space *s) { return s->count; }

int kt_space_find(const kt_space *s, const char *name) {
  for (size_t i = 0; i < s->nparams; i++)
    if (strcmp(s->params[i].name, name) == 0) return (int)i;
  return -1;
}

double kt_space_count_all(const kt_space *s) {
  double total = 1;
  for (size_t i = 0; i < s->nparams; i++) total *= (double)s->params[i].nvalues;
  return total;
}

/* ---- grouping ---- */

static size_t uf_find(size_t *parent, size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

/* Assigns each parameter a group number, groups numbered by their first
** parameter. Returns the number of groups. */
static size_t find_components(const kt_space *s, size_t *parent, size_t *gid) {
  for (size_t i = 0; i < s->nparams; i++) parent[i] = i;
  for (size_t c = 0; c < s->ncons; c++)
    for (size_t j = 1; j < s->cons[c].n; j++) {
      size_t a = uf_find(parent, s->cons[c].params[0]);
      size_t b = uf_find(parent, s->cons[c].params[j]);
      if (a != b) parent[a > b ? a : b] = a < b ? a : b;
    }
  size_t ngroups = 0;
  for (size_t i = 0; i < s->nparams; i++) {
    size_t root = uf_find(parent, i);
    gid[i] = root == i ? ngroups++ : gid[root];
  }
  return ngroups;
}

static bool cons_in_group(const kt_space *s, size_t c, const size_t *gid, size_t g) {
  return gid[s->cons[c].params[0]] == g;
}

/* Number of constraints that the parameter p would complete, given the
** parameters already bound. */
static size_t completes(const kt_space *s, const size_t *gid, size_t g,
                        const bool *bound, size_t p) {
  size_t k = 0;
  for (size_t c = 0; c < s->ncons; c++) {
    if (!cons_in_group(s, c, gid, g)) continue;
    bool has_p = false, rest_bound = true;
    for (size_t j = 0; j < s->cons[c].n; j++) {
      size_t q = s->cons[c].params[j];
      if (q == p) has_p = true;
      else if (!bound[q]) rest_bound = false;
    }
    if (has_p && rest_bound) k++;
  }
  return k;
}

static size_t mentions(const kt_space *s, size_t p) {
  size_t k = 0;
  for (size_t c = 0; c < s->ncons; c++)
    for (size_t j = 0; j < s->cons[c].n; j++)
      if (s->cons[c].params[j] == p) k++;
  return k;
}

/* Greedy generation order: next, the parameter that completes the most
** constraints, then the one in most constraints, then the one with fewest
** values, so that pruning happens as near the root as possible. */
static void choose_order(const kt_space *s, const size_t *gid, group *gr, bool *bound) {
  for (size_t d = 0; d < gr->n; d++) {
    size_t best = SIZE_MAX, bc = 0, bm = 0, bv = 0;
    for (size_t i = 0; i < gr->n; i++) {
      size_t p = gr->params[i];
      if (bound[p]) continue;
      size_t c = completes(s, gid, gid[p], bound, p), m = mentions(s, p),
             v = s->params[p].nvalues;
      if (best == SIZE_MAX || c > bc || (c == bc && (m > bm || (m == bm && v < bv)))) {
        best = p;
        bc = c;
        bm = m;
        bv = v;
      }
    }
    gr->order[d] = best;
    bound[best] = true;
  }
}

/* For each depth, the constraints whose last parameter is bound there. */
static int plan_checks(const kt_space *s, const size_t *gid, size_t g, group *gr,
                       kt_error *err) {
  gr->checks = kt_calloc(gr->n, sizeof *gr->checks, err);
  gr->nchecks = kt_calloc(gr->n, sizeof *gr->nchecks, err);
  if (!gr->checks || !gr->nchecks) return -1;
  for (size_t c = 0; c < s->ncons; c++) {
    if (!cons_in_group(s, c, gid, g)) continue;
    size_t depth = 0;
    for (size_t j = 0; j < s->cons[c].n; j++)
      for (size_t d = 0; d < gr->n; d++)
        if (gr->order[d] == s->cons[c].params[j] && d > depth) depth = d;
    size_t k = gr->nchecks[depth];
    size_t *grown = realloc(gr->checks[depth], (k + 1) * sizeof(size_t));
    if (!grown) return kt_fail(err, "out of memory planning constraint checks");
    gr->checks[depth] = grown;
    grown[k] = c;
    gr->nchecks[depth] = k + 1;
  }
  return 0;
}

static int make_groups(kt_space *s, kt_error *err) {
  size_t *parent = kt_calloc(s->nparams, sizeof *parent, err);
  size_t *gid = kt_calloc(s->nparams, sizeof *gid, err);
  bool *bound = kt_calloc(s->nparams, sizeof *bound, err);
  int rc = -1;
  if (!parent || !gid || !bound) goto done;
  s->ngroups = find_components(s, parent, gid);
  if (!(s->groups = kt_calloc(s->ngroups, sizeof *s->groups, err))) goto done;
  for (size_t i = 0; i < s->nparams; i++) s->groups[gid[i]].n++;
  for (size_t g = 0; g < s->ngroups; g++) {
    group *gr = &s->groups[g];
    gr->params = kt_calloc(gr->n, sizeof *gr->params, err);
    gr->order = kt_calloc(gr->n, sizeof *gr->order, err);
    if (!gr->params || !gr->order) goto done;
    gr->n = 0;
  }
  for (size_t i = 0; i < s->nparams; i++) {
    group *gr = &s->groups[gid[i]];
    gr->params[gr->n++] = i;
  }
  for (size_t g = 0; g < s->ngroups; g++) {
    choose_order(s, gid, &s->groups[g], bound);
    if (plan_checks(s, gid, g, &s->groups[g], err)) goto done;
  }
  rc = 0;
done:
  free(parent);
  free(gid);
  free(bound);
  return rc;
}

/* ---- rows ---- */

static uint32_t row_get(const group *gr, uint64_t row, size_t j) {
  size_t at = (size_t)row * gr->n + j;
  switch (gr->width) {
    case 1: return ((const uint8_t *)gr->rows)[at];
    case 2: return ((const uint16_t *)gr->rows)[at];
    default: return ((const uint32_t *)gr->rows)[at];
  }
}

static void row_put(group *gr, uint64_t row, size_t j, uint32_t v) {
  size_t at = (size_t)row * gr->n + j;
  switch (gr->width) {
    case 1: ((uint8_t *)gr->rows)[at] = (uint8_t)v; break;
    case 2: ((uint16_t *)gr->rows)[at] = (uint16_t)v; break;
    default: ((uint32_t *)gr->rows)[at] = v; break;
  }
}

/* Compares a row with the group's values taken from vi. */
static int row_cmp_config(const group *gr, uint64_t row, const uint32_t *vi) {
  for (size_t j = 0; j < gr->n; j++) {
    uint32_t a = row_get(gr, row, j), b = vi[gr->params[j]];
    if (a != b) return a < b ? -1 : 1;
  }
  return 0;
}

static int row_cmp(const group *gr, const void *rows_a, uint64_t a, const void *rows_b,
                   uint64_t b) {
  group ga = *gr, gb = *gr;
  ga.rows = (void *)rows_a;
  gb.rows = (void *)rows_b;
  for (size_t j = 0; j < gr->n; j++) {
    uint32_t x = row_get(&ga, a, j), y = row_get(&gb, b, j);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

/* Bottom-up merge sort of the rows into declaration order (the walk
** produces them in generation order). */
static int sort_rows(group *gr, kt_error *err) {
  uint64_t n = gr->nrows;
  size_t rowbytes = gr->n * gr->width;
  bool sorted = true;
  for (uint64_t r = 1; r < n && sorted; r++)
    if (row_cmp(gr, gr->rows, r - 1, gr->rows, r) > 0) sorted = false;
  if (sorted) return 0;
  char *tmp = kt_alloc((size_t)n * rowbytes, err), *src = gr->rows, *dst = tmp;
  if (!tmp) return -1;
  for (uint64_t w = 1; w < n; w *= 2) {
    for (uint64_t lo = 0; lo < n; lo += 2 * w) {
      uint64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      uint64_t i = lo, j = mid, k = lo;
      while (i < mid || j < hi) {
        bool take_i = j >= hi || (i < mid && row_cmp(gr, src, i, src, j) <= 0);
        uint64_t from = take_i ? i++ : j++;
        memcpy(dst + (size_t)k++ * rowbytes, src + (size_t)from * rowbytes, rowbytes);
      }
    }
    char *t = src;
    src = dst;
    dst = t;
  }
  gr->rows = src;
  free(dst);
  return 0;
}

/* ---- generation ---- */

typedef struct walk {
  kt_space *s;
  group *gr;
  uint32_t *vi;
  const kt_value **args;
  uint64_t cap;
  kt_error *err;
} walk;

static int append_row(walk *w) {
  group *gr = w->gr;
  if (gr->nrows == w->cap) {
    uint64_t ncap = w->cap ? w->cap * 2 : 1024;
    void *grown = realloc(gr->rows, (size_t)ncap * gr->n * gr->width);
    if (!grown) return kt_fail(w->err, "out of memory: the space has over %llu configurations in one group",
                               (unsigned long long)gr->nrows);
    gr->rows = grown;
    w->cap = ncap;
  }
  for (size_t j = 0; j < gr->n; j++) row_put(gr, gr->nrows, j, w->vi[gr->params[j]]);
  gr->nrows++;
  return 0;
}

static int check(walk *w, size_t c) {
  constraint *cn = &w->s->cons[c];
  for (size_t j = 0; j < cn->n; j++) {
    size_t p = cn->params[j];
    w->args[j] = &w->s->params[p].values[w->vi[p]];
  }
  int rc = cn->fn(w->args, cn->n, cn->ud, w->err);
  if (rc < 0) {
    char names[256] = "";
    size_t used = 0;
    for (size_t j = 0; j < cn->n && used < sizeof names; j++)
      used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", j ? ", " : "",
                               w->s->params[cn->params[j]].name);
    kt_fail_prefix(w->err, "constraint on %s: ", names);
  }
  return rc;
}

static int walk_depth(walk *w, size_t d) {
  group *gr = w->gr;
  if (d == gr->n) return append_row(w);
  size_t p = gr->order[d];
  for (uint32_t v = 0; v < w->s->params[p].nvalues; v++) {
    w->vi[p] = v;
    int ok = 1;
    for (size_t k = 0; k < gr->nchecks[d] && ok == 1; k++) ok = check(w, gr->checks[d][k]);
    if (ok < 0) return -1;
    if (ok && walk_depth(w, d + 1)) return -1;
  }
  return 0;
}

static unsigned row_width(const kt_space *s, const group *gr) {
  size_t most = 0;
  for (size_t j = 0; j < gr->n; j++)
    if (s->params[gr->params[j]].nvalues > most) most = s->params[gr->params[j]].nvalues;
  return most <= 256 ? 1 : most <= 65536 ? 2 : 4;
}

static int generate_group(kt_space *s, group *gr, uint32_t *vi, const kt_value **args,
                          kt_error *err) {
  bool free_param = gr->n == 1 && gr->nchecks[0] == 0;
  if (free_param) {
    gr->nrows = s->params[gr->params[0]].nvalues;
    return 0;
  }
  gr->width = row_width(s, gr);
  walk w = {s, gr, vi, args, 0, err};
  if (walk_depth(&w, 0)) return -1;
  return sort_rows(gr, err);
}

int kt_space_generate(kt_space *s, kt_error *err) {
  if (s->generated) return 0;
  free_groups(s);
  size_t maxargs = 1;
  for (size_t c = 0; c < s->ncons; c++)
    if (s->cons[c].n > maxargs) maxargs = s->cons[c].n;
  uint32_t *vi = kt_calloc(s->nparams, sizeof *vi, err);
  const kt_value **args = kt_calloc(maxargs, sizeof *args, err);
  int rc = vi && args ? make_groups(s, err) : -1;
  uint64_t count = 1;
  for (size_t g = 0; g < s->ngroups && rc == 0; g++) {
    rc = generate_group(s, &s->groups[g], vi, args, err);
    if (rc == 0 && __builtin_mul_overflow(count, s->groups[g].nrows, &count))
      rc = kt_fail(err, "the space has more than 2^64 valid configurations");
  }
  free(vi);
  free(args);
  if (rc) {
    free_groups(s);
    return -1;
  }
  s->count = count;
  s->generated = true;
  return 0;
}

/* ---- index mapping ---- */

int kt_space_config(const kt_space *s, uint64_t index, uint32_t *vi, kt_error *err) {
  if (!s->generated) return kt_fail(err, "the space has not been generated");
  if (index >= s->count)
    return kt_fail(err, "configuration index %llu is out of range (the space has %llu)",
                   (unsigned long long)index, (unsigned long long)s->count);
  for (size_t g = s->ngroups; g-- > 0;) {
    const group *gr = &s->groups[g];
    uint64_t row = index % gr->nrows;
    index /= gr->nrows;
    if (!gr->rows) {
      vi[gr->params[0]] = (uint32_t)row;
      continue;
    }
    for (size_t j = 0; j < gr->n; j++) vi[gr->params[j]] = row_get(gr, row, j);
  }
  return 0;
}

static int find_row(const group *gr, const uint32_t *vi, uint64_t *row) {
  if (!gr->rows) {
    *row = vi[gr->params[0]];
    return *row < gr->nrows ? 0 : 1;
  }
  uint64_t lo = 0, hi = gr->nrows;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    int c = row_cmp_config(gr, mid, vi);
    if (c == 0) {
      *row = mid;
      return 0;
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return 1;
}

int kt_space_index(const kt_space *s, const uint32_t *vi, uint64_t *index) {
  if (!s->generated) return 1;
  uint64_t at = 0;
  for (size_t g = 0; g < s->ngroups; g++) {
    uint64_t row;
    if (find_row(&s->groups[g], vi, &row)) return 1;
    at = at * s->groups[g].nrows + row;
  }
  *index = at;
  return 0;
}

kt_param *kt_params_clone(const kt_space *s, kt_error *err) {
  kt_param *p = kt_calloc(s->nparams, sizeof *p, err);
  if (!p) return NULL;
  for (size_t i = 0; i < s->nparams; i++) {
    if (!(p[i].name = kt_strdup(s->params[i].name, err)) ||
        copy_values(&p[i], s->params[i].values, s->params[i].nvalues, err)) {
      kt_params_free(p, i + 1);
      return NULL;
    }
  }
  return p;
}

/* ---- recorded spaces ---- */

/* One group of every parameter whose rows are the given tuples, sorted
** and without repeats: the index order is the one generation would give. */
static int recorded_group(kt_space *s, const uint32_t *vi, uint64_t n, kt_error *err) {
  group *gr = &s->groups[0];
  gr->n = s->nparams;
  gr->params = kt_calloc(gr->n, sizeof *gr->params, err);
  gr->order = kt_calloc(gr->n, sizeof *gr->order, err);
  gr->checks = kt_calloc(gr->n, sizeof *gr->checks, err);
  gr->nchecks = kt_calloc(gr->n, sizeof *gr->nchecks, err);
  if (!gr->params || !gr->order || !gr->checks || !gr->nchecks) return -1;
  for (size_t p = 0; p < gr->n; p++) gr->params[p] = gr->order[p] = p;
  gr->width = row_width(s, gr);
  if (!(gr->rows = kt_alloc((size_t)n * gr->n * gr->width, err))) return -1;
  for (uint64_t r = 0; r < n; r++)
    for (size_t p = 0; p < gr->n; p++) {
      if (vi[r * gr->n + p] >= s->params[p].nvalues)
        return kt_fail(err, "recorded configuration %llu has value index %u for parameter %s, "
                       "which has %zu values", (unsigned long long)r, vi[r * gr->n + p],
                       s->params[p].name, s->params[p].nvalues);
      row_put(gr, r, p, vi[r * gr->n + p]);
    }
  gr->nrows = n;
  if (sort_rows(gr, err)) return -1;
  uint64_t kept = n ? 1 : 0;
  size_t rowbytes = gr->n * gr->width;
  for (uint64_t r = 1; r < n; r++)
    if (row_cmp(gr, gr->rows, r, gr->rows, kept - 1) != 0)
      memmove((char *)gr->rows + kept++ * rowbytes, (char *)gr->rows + r * rowbytes, rowbytes);
  gr->nrows = kept;
  return 0;
}

int kt_space_set_configs(kt_space *s, const uint32_t *vi, uint64_t n, kt_error *err) {
  if (s->ncons) return kt_fail(err, "a space with constraints cannot take a recorded set");
  if (s->nparams == 0) return kt_fail(err, "a recorded space needs at least one parameter");
  free_groups(s);
  if (!(s->groups = kt_calloc(1, sizeof *s->groups, err))) return -1;
  s->ngroups = 1;
  if (recorded_group(s, vi, n, err)) {
    free_groups(s);
    return -1;
  }
  s->count = s->groups[0].nrows;
  s->generated = true;
  return 0;
}
