/*
** space.c: parameters, constraints, generation of the groups and the
** mapping between indices and configurations.
**
** With space_lazy.c and space_natural.c one module over space_int.h, split
** for size: they call each other (sampled groups, the natural numbering),
** a loop scripts/layers.lua allows.
*/
#include "space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "indexmap.h"
#include "space_int.h"

kt_space *kt_space_new(kt_error *err) { return kt_calloc(1, sizeof(kt_space), err); }

/* Forgets what was generated: the parameters or constraints changed. */
void space_invalidate(kt_space *s) {
  free_groups(s->groups, s->ngroups);
  s->groups = NULL;
  s->ngroups = 0;
  s->count = 0;
  s->generated = false;
  s->sampled = false;
  s->removed_known = false;
  space_natural_clear(s);
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

static void constraint_clear(constraint *c) {
  free(c->params);
  free(c->label);
  if (c->ud_free) c->ud_free(c->ud);
}

void kt_space_free(kt_space *s) {
  if (!s) return;
  space_invalidate(s);
  kt_params_free(s->params, s->nparams);
  for (size_t c = 0; c < s->ncons; c++) constraint_clear(&s->cons[c]);
  free(s->cons);
  free(s);
}

/* ---- parameters ---- */

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

/* Orders values so that those kt_value_equal calls equal are neighbours:
** strings after numbers; numbers by value as doubles (NaN last), then an
** integer before a float, integers exactly. */
static int value_order(const void *pa, const void *pb) {
  const kt_value *a = *(const kt_value *const *)pa, *b = *(const kt_value *const *)pb;
  bool sa = a->type == KT_VSTRING, sb = b->type == KT_VSTRING;
  if (sa || sb) return sa && sb ? strcmp(a->u.s, b->u.s) : (int)sa - (int)sb;
  double x, y;
  kt_value_number(a, &x);
  kt_value_number(b, &y);
  if (isnan(x) || isnan(y)) return !!isnan(x) - !!isnan(y);
  if (x != y) return x < y ? -1 : 1;
  if (a->boolean != b->boolean) return (int)a->boolean - (int)b->boolean;
  if (a->type != b->type) return a->type == KT_VINT ? -1 : 1;
  return a->type == KT_VINT ? (a->u.i > b->u.i) - (a->u.i < b->u.i) : 0;
}

/* A value listed twice, found in n log n (a parameter may have a million). */
static int check_distinct(const char *name, const kt_value *values, size_t n, kt_error *err) {
  const kt_value **sorted = kt_calloc(n, sizeof *sorted, err);
  if (!sorted) return -1;
  for (size_t i = 0; i < n; i++) sorted[i] = &values[i];
  qsort(sorted, n, sizeof *sorted, value_order);
  size_t i = 1;
  while (i < n && !kt_value_equal(sorted[i - 1], sorted[i])) i++;
  char buf[128];
  if (i < n) kt_value_show(sorted[i], buf, sizeof buf);
  free(sorted);
  return i < n ? kt_fail(err, "parameter '%s' lists the value %s twice", name, buf) : 0;
}

static int being_generated(kt_error *err) {
  return kt_fail(err, "the space is being generated: its constraints cannot change or "
                      "generate it");
}

bool kt_space_generating(const kt_space *s) { return s->generating; }

int kt_space_add_param(kt_space *s, const char *name, const kt_value *values,
                       size_t n, kt_error *err) {
  if (s->generating) return being_generated(err);
  if (!kt_is_identifier(name))
    return kt_fail(err, "parameter name '%s' is not a valid identifier (letters, digits, '_')", name);
  if (kt_space_find(s, name) >= 0)
    return kt_fail(err, "parameter '%s' is already defined", name);
  if (n == 0) return kt_fail(err, "parameter '%s' needs at least one value", name);
  if (n > UINT32_MAX) return kt_fail(err, "parameter '%s' has too many values", name);
  if (check_distinct(name, values, n, err)) return -1;
  if (kt_grow(&s->params, &s->cap, s->nparams + 1, sizeof *s->params, err)) return -1;
  kt_param *p = &s->params[s->nparams];
  memset(p, 0, sizeof *p);
  if (!(p->name = kt_strdup(name, err)) || copy_values(p, values, n, err)) {
    param_clear(p);
    return -1;
  }
  s->nparams++;
  space_invalidate(s);
  return 0;
}

/* ---- constraints ---- */

int kt_space_add_constraint_def(kt_space *s, const kt_constraint_def *d, kt_error *err) {
  constraint c = {NULL, d->n, d->fn, d->vi_fn, d->ud, d->ud_free, NULL, d->tag, d->pure};
  if (s->generating) {
    being_generated(err);
    goto fail;
  }
  if (d->n == 0) {
    kt_fail(err, "a constraint needs at least one parameter");
    goto fail;
  }
  if (d->tag >= KT_SPACE_TAGS) {
    kt_fail(err, "constraint tag %u is out of range", d->tag);
    goto fail;
  }
  if (!(c.params = kt_calloc(d->n, sizeof *c.params, err))) goto fail;
  for (size_t i = 0; i < d->n; i++) {
    int p = kt_space_find(s, d->params[i]);
    if (p < 0) {
      kt_fail(err, "constraint names unknown parameter '%s'", d->params[i]);
      goto fail;
    }
    c.params[i] = (size_t)p;
  }
  if ((d->label && !(c.label = kt_strdup(d->label, err))) ||
      kt_grow(&s->cons, &s->capcons, s->ncons + 1, sizeof *s->cons, err))
    goto fail;
  s->cons[s->ncons++] = c;
  space_invalidate(s);
  return 0;
fail:
  constraint_clear(&c);
  return -1;
}

int kt_space_add_constraint(kt_space *s, const char *const *params, size_t n,
                            kt_constraint_fn fn, void *ud, void (*ud_free)(void *),
                            kt_error *err) {
  kt_constraint_def d = {params, n, fn, NULL, ud, ud_free, NULL, 0, false};
  return kt_space_add_constraint_def(s, &d, err);
}

static int expr_check(const kt_value *const *vals, size_t n, void *ud, kt_error *err) {
  (void)n;
  return kt_expr_test(ud, vals, err);
}

/* Expressions that read at most this many names of integer parameters run
** on the expression machine for integers. */
#define INT_NAMES 32

static int expr_check_ints(const kt_value *const *vals, size_t n, void *ud, kt_error *err) {
  int64_t x[INT_NAMES];
  for (size_t i = 0; i < n; i++) x[i] = vals[i]->u.i;
  return kt_expr_test_ints(ud, x, err);
}

static bool on_integers(const kt_space *s, const kt_expr *e) {
  if (!kt_expr_integer(e) || kt_expr_nvars(e) > INT_NAMES) return false;
  for (size_t i = 0; i < kt_expr_nvars(e); i++) {
    const kt_param *p = &s->params[kt_space_find(s, kt_expr_var(e, i))];
    for (size_t v = 0; v < p->nvalues; v++)
      if (p->values[v].type != KT_VINT) return false;
  }
  return true;
}

int kt_space_check_names(const kt_space *s, const kt_expr *e, kt_error *err) {
  if (kt_expr_nvars(e) == 0) return kt_fail(err, "the expression reads no parameter");
  for (size_t i = 0; i < kt_expr_nvars(e); i++) {
    const char *name = kt_expr_var(e, i);
    int p = kt_space_find(s, name);
    if (p < 0)
      return kt_fail(err, "at character %zu: unknown parameter '%s'", kt_expr_var_pos(e, i), name);
    const kt_param *par = &s->params[p];
    for (size_t v = 0; v < par->nvalues && kt_expr_var_numeric(e, i); v++)
      if (par->values[v].type == KT_VSTRING)
        return kt_fail(err, "at character %zu: '%s' is used as a number but has the string "
                            "value \"%s\"", kt_expr_var_pos(e, i), name, par->values[v].u.s);
  }
  return 0;
}


int kt_space_add_expr(kt_space *s, const char *text, const kt_named_value *consts,
                      size_t nconsts, unsigned tag, kt_error *err) {
  kt_expr *e = kt_expr_parse(text, err);
  if (!e || kt_expr_bind(e, consts, nconsts, err) || kt_space_check_names(s, e, err)) {
    kt_expr_free(e);
    /* a long text is cut: the error's position says where to look */
    return kt_fail_prefix(err, "constraint '%.80s%s': ", text, strlen(text) > 80 ? "..." : "");
  }
  size_t n = kt_expr_nvars(e);
  const char **names = kt_calloc(n, sizeof *names, err);
  char *label = kt_alloc(strlen(text) + 16, err);
  int rc = -1;
  if (names && label) {
    for (size_t i = 0; i < n; i++) names[i] = kt_expr_var(e, i);
    sprintf(label, "constraint '%s'", text);
    kt_constraint_fn fn = on_integers(s, e) ? expr_check_ints : expr_check;
    kt_constraint_def d = {names, n, fn, NULL, e, kt_expr_free, label, tag, true};
    e = NULL; /* the space owns it from here */
    rc = kt_space_add_constraint_def(s, &d, err);
  }
  kt_expr_free(e);
  free(names);
  free(label);
  return rc;
}

size_t kt_space_remove_tagged(kt_space *s, unsigned first) {
  size_t kept = 0, removed = 0;
  for (size_t c = 0; c < s->ncons; c++) {
    if (s->cons[c].tag >= first) {
      constraint_clear(&s->cons[c]);
      removed++;
    } else {
      s->cons[kept++] = s->cons[c];
    }
  }
  s->ncons = kept;
  if (removed) space_invalidate(s);
  return removed;
}

size_t kt_space_nparams(const kt_space *s) { return s->nparams; }
const kt_param *kt_space_param(const kt_space *s, size_t i) { return &s->params[i]; }
size_t kt_space_nconstraints(const kt_space *s) { return s->ncons; }
bool kt_space_generated(const kt_space *s) { return s->generated; }
uint64_t kt_space_count(const kt_space *s) { return s->count; }
void kt_space_set_threads(kt_space *s, unsigned n) { s->threads = n; }
void kt_space_set_max_bytes(kt_space *s, size_t bytes) { s->max_bytes = bytes; }
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

/* ---- generation ---- */

unsigned space_threads(const kt_space *s) {
  if (s->threads) return s->threads;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

/* left: the bytes the space's limit leaves for this group and the next. */
int group_fill(const kt_space *s, group *g, bool store, size_t *left, kt_error *err) {
  if (group_is_free(g)) {
    g->count = s->params[g->params[0]].nvalues;
    return 0;
  }
  tuples t;
  if (walk_group(s, g, space_threads(s), store, *left, &t, err)) return -1;
  g->count = t.n;
  if (!store) return 0;
  uint32_t *nvalues = kt_calloc(g->n, sizeof *nvalues, err);
  if (!nvalues) {
    free(t.rows);
    return -1;
  }
  for (size_t j = 0; j < g->n; j++) nvalues[j] = (uint32_t)s->params[g->params[j]].nvalues;
  int rc = kt_trie_build(&g->trie, t.rows, t.width, g->n, t.n, nvalues, err);
  free(nvalues);
  size_t kept = kt_trie_bytes(&g->trie);
  *left = kept < *left ? *left - kept : 0;
  return rc;
}

/* Generates (store) or counts the groups of the constraints tagged up to
** max_tag; *count is their product. */
static int generate(const kt_space *s, unsigned max_tag, bool store, group **groups,
                    size_t *ngroups, uint64_t *count, kt_error *err) {
  if (plan_groups(s, max_tag, groups, ngroups, err)) return -1;
  *count = 1;
  size_t left = kt_space_max_bytes(s);
  for (size_t g = 0; g < *ngroups; g++) {
    if (group_fill(s, &(*groups)[g], store, &left, err)) return -1;
    if (__builtin_mul_overflow(*count, (*groups)[g].count, count))
      return kt_fail(err, "the space has more than 2^64 valid configurations");
  }
  return 0;
}

int kt_space_generate(kt_space *s, kt_error *err) {
  if (s->generated && !s->sampled) return 0; /* a sampled space is generated in full */
  if (s->generating) return being_generated(err);
  space_invalidate(s);
  s->generating = true;
  int rc = generate(s, KT_SPACE_TAGS, true, &s->groups, &s->ngroups, &s->count, err);
  s->generating = false;
  if (rc) {
    space_invalidate(s);
    return -1;
  }
  s->generated = true;
  return 0;
}

static int count_upto(const kt_space *s, unsigned max_tag, uint64_t *count, kt_error *err) {
  group *groups;
  size_t n;
  int rc = generate(s, max_tag, false, &groups, &n, count, err);
  free_groups(groups, n);
  return rc;
}

/* left[t]: configurations that the constraints tagged up to t allow. */
static int count_removed(kt_space *s, kt_error *err) {
  bool used[KT_SPACE_TAGS] = {false};
  unsigned top = 0;
  for (size_t c = 0; c < s->ncons; c++) {
    used[s->cons[c].tag] = true;
    if (s->cons[c].tag > top) top = s->cons[c].tag;
  }
  uint64_t left[KT_SPACE_TAGS];
  left[top] = s->count;
  for (unsigned t = 0; t < top; t++) {
    if (t > 0 && !used[t]) left[t] = left[t - 1];
    else if (count_upto(s, t, &left[t], err)) return -1;
  }
  memset(s->removed, 0, sizeof s->removed);
  for (unsigned t = 1; t <= top; t++) s->removed[t] = left[t - 1] - left[t];
  s->removed_known = true;
  return 0;
}

int kt_space_removed(kt_space *s, unsigned tag, uint64_t *removed, kt_error *err) {
  if (tag == 0 || tag >= KT_SPACE_TAGS)
    return kt_fail(err, "constraint tag %u is out of range (1 to %d)", tag, KT_SPACE_TAGS - 1);
  if (kt_space_generate(s, err)) return -1;
  if (s->removed_known) {
    *removed = s->removed[tag];
    return 0;
  }
  if (s->generating) return being_generated(err);
  s->generating = true;
  int rc = count_removed(s, err);
  s->generating = false;
  *removed = rc ? 0 : s->removed[tag];
  return rc;
}

size_t kt_space_bytes(const kt_space *s) {
  size_t bytes = s->ngroups * sizeof *s->groups;
  for (size_t g = 0; g < s->ngroups; g++) bytes += kt_trie_bytes(&s->groups[g].trie);
  return bytes;
}

/* ---- index mapping ---- */

int space_groups_config(const kt_space *s, const group *groups, size_t n, uint64_t count,
                        uint64_t index, uint32_t *vi, kt_error *err) {
  if (index >= count)
    return kt_fail(err, "configuration index %llu is out of range (the space has %llu)",
                   (unsigned long long)index, (unsigned long long)count);
  for (size_t g = n; g-- > 0;) {
    const group *gr = &groups[g];
    uint64_t row = index % gr->count;
    index /= gr->count;
    if (gr->sampled) sampled_tuple(s, gr, row, vi);
    else if (gr->trie.n == 0) vi[gr->params[0]] = (uint32_t)row; /* a free parameter */
    else kt_trie_get(&gr->trie, row, vi, gr->params);
  }
  return 0;
}

int kt_space_config(const kt_space *s, uint64_t index, uint32_t *vi, kt_error *err) {
  if (!s->generated) return kt_fail(err, "the space has not been generated");
  return space_groups_config(s, s->groups, s->ngroups, s->count, index, vi, err);
}

static int find_row(const kt_space *s, const group *gr, const uint32_t *vi, uint64_t *row) {
  if (gr->sampled) return sampled_row(s, gr, vi, row);
  if (gr->trie.n > 0) return kt_trie_find(&gr->trie, vi, gr->params, row);
  *row = vi[gr->params[0]];
  return *row < s->params[gr->params[0]].nvalues ? 0 : 1;
}

int space_groups_index(const kt_space *s, const group *groups, size_t n, const uint32_t *vi,
                       uint64_t *index) {
  uint64_t at = 0;
  for (size_t g = 0; g < n; g++) {
    uint64_t row;
    if (find_row(s, &groups[g], vi, &row)) return 1;
    at = at * groups[g].count + row;
  }
  *index = at;
  return 0;
}

int kt_space_index(const kt_space *s, const uint32_t *vi, uint64_t *index) {
  if (!s->generated) return 1;
  return space_groups_index(s, s->groups, s->ngroups, vi, index);
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

/* The distinct rows among n tuples of value indices (4 bytes each), as a
** new malloc'd array; repeats are dropped through each tuple's index in
** the Cartesian product. */
static uint32_t *distinct_rows(const kt_space *s, const uint32_t *vi, uint64_t n, uint64_t *kept,
                               kt_error *err) {
  size_t np = s->nparams;
  uint32_t *rows = kt_alloc((size_t)(n ? n : 1) * np * sizeof *rows, err);
  kt_indexmap seen;
  kt_indexmap_init(&seen);
  *kept = 0;
  for (uint64_t r = 0; rows && r < n; r++) {
    uint64_t key = 0, was;
    bool overflow = false;
    for (size_t p = 0; p < np; p++) {
      uint32_t v = vi[r * np + p];
      if (v >= s->params[p].nvalues) {
        kt_fail(err, "recorded configuration %llu has value index %u for parameter %s, which "
                "has %zu values", (unsigned long long)r, v, s->params[p].name,
                s->params[p].nvalues);
        free(rows);
        rows = NULL;
        break;
      }
      overflow |= __builtin_mul_overflow(key, s->params[p].nvalues, &key) ||
                  __builtin_add_overflow(key, v, &key);
    }
    if (!rows) break;
    if (overflow) {
      kt_fail(err, "a recorded space of more than 2^64 combinations is not supported");
      free(rows);
      rows = NULL;
    } else if (!kt_indexmap_get(&seen, key, &was)) {
      if (kt_indexmap_put(&seen, key, r, err)) {
        free(rows);
        rows = NULL;
      } else {
        memcpy(rows + *kept * np, vi + r * np, np * sizeof *rows);
        (*kept)++;
      }
    }
  }
  kt_indexmap_clear(&seen);
  return rows;
}

/* One group of every parameter whose tuples are the recorded ones: the
** index order is the one generation would give. */
static int recorded_group(kt_space *s, group *gr, const uint32_t *vi, uint64_t n,
                          kt_error *err) {
  gr->n = s->nparams;
  gr->params = kt_calloc(gr->n, sizeof *gr->params, err);
  gr->order = kt_calloc(gr->n, sizeof *gr->order, err);
  gr->checks = kt_calloc(gr->n, sizeof *gr->checks, err);
  gr->nchecks = kt_calloc(gr->n, sizeof *gr->nchecks, err);
  uint32_t *nvalues = kt_calloc(gr->n, sizeof *nvalues, err);
  uint64_t kept = 0;
  uint32_t *rows = gr->params && gr->order && gr->checks && gr->nchecks && nvalues
                       ? distinct_rows(s, vi, n, &kept, err)
                       : NULL;
  int rc = rows ? 0 : -1;
  for (size_t p = 0; p < gr->n && rc == 0; p++) {
    gr->params[p] = gr->order[p] = p;
    nvalues[p] = (uint32_t)s->params[p].nvalues;
  }
  if (rc == 0) rc = kt_trie_build(&gr->trie, rows, 4, gr->n, kept, nvalues, err);
  free(nvalues);
  gr->count = kept;
  return rc;
}

int kt_space_set_configs(kt_space *s, const uint32_t *vi, uint64_t n, kt_error *err) {
  if (s->generating) return being_generated(err);
  if (s->ncons) return kt_fail(err, "a space with constraints cannot take a recorded set");
  if (s->nparams == 0) return kt_fail(err, "a recorded space needs at least one parameter");
  space_invalidate(s);
  if (!(s->groups = kt_calloc(1, sizeof *s->groups, err))) return -1;
  s->ngroups = 1;
  if (recorded_group(s, &s->groups[0], vi, n, err)) {
    space_invalidate(s);
    return -1;
  }
  s->count = s->groups[0].count;
  s->generated = true;
  return 0;
}
