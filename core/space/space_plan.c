/*
** space_plan.c: groups of parameters (components of the constraint graph)
** and the order in which a walk binds them.
*/
#include <stdlib.h>

#include "space_int.h"

static void seqplan_clear(seqplan *sp) {
  for (size_t k = 0; k < sp->nparts; k++) seqplan_clear(&sp->parts[k]);
  free(sp->parts);
  free(sp->params);
  free(sp->depth);
}

void free_groups(group *groups, size_t n) {
  for (size_t g = 0; g < n; g++) {
    group *gr = &groups[g];
    seqplan_clear(&gr->plan);
    for (size_t d = 0; d < gr->n && gr->checks; d++) free(gr->checks[d]);
    free(gr->checks);
    free(gr->nchecks);
    free(gr->params);
    free(gr->order);
    kt_trie_free(&gr->trie);
  }
  free(groups);
}

bool group_is_free(const group *g) { return g->n == 1 && g->nchecks[0] == 0; }

/* The constraints a plan uses. */
typedef struct scope {
  const kt_space *s;
  unsigned max_tag;
  size_t *gid; /* group of each parameter */
} scope;

static bool active(const scope *sc, size_t c) { return sc->s->cons[c].tag <= sc->max_tag; }

static size_t uf_find(size_t *parent, size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

/* Numbers each parameter's group, groups numbered by their first
** parameter. Returns the number of groups. */
static size_t find_components(const scope *sc, size_t *parent) {
  const kt_space *s = sc->s;
  for (size_t i = 0; i < s->nparams; i++) parent[i] = i;
  for (size_t c = 0; c < s->ncons; c++) {
    if (!active(sc, c)) continue;
    for (size_t j = 1; j < s->cons[c].n; j++) {
      size_t a = uf_find(parent, s->cons[c].params[0]);
      size_t b = uf_find(parent, s->cons[c].params[j]);
      if (a != b) parent[a > b ? a : b] = a < b ? a : b;
    }
  }
  size_t ngroups = 0;
  for (size_t i = 0; i < s->nparams; i++) {
    size_t root = uf_find(parent, i);
    sc->gid[i] = root == i ? ngroups++ : sc->gid[root];
  }
  return ngroups;
}

static bool in_group(const scope *sc, size_t c, size_t g) {
  return active(sc, c) && sc->gid[sc->s->cons[c].params[0]] == g;
}

/* Number of constraints that the parameter p would complete, given the
** parameters already bound. */
static size_t completes(const scope *sc, size_t g, const bool *bound, size_t p) {
  const kt_space *s = sc->s;
  size_t k = 0;
  for (size_t c = 0; c < s->ncons; c++) {
    if (!in_group(sc, c, g)) continue;
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

static size_t mentions(const scope *sc, size_t p) {
  size_t k = 0;
  for (size_t c = 0; c < sc->s->ncons; c++) {
    if (!active(sc, c)) continue;
    for (size_t j = 0; j < sc->s->cons[c].n; j++)
      if (sc->s->cons[c].params[j] == p) k++;
  }
  return k;
}

/* Greedy generation order: next, the parameter that completes the most
** constraints, then the one in most constraints, then the one with fewest
** values, so that pruning happens as near the root as possible. */
static void choose_order(const scope *sc, group *gr, bool *bound) {
  const kt_space *s = sc->s;
  for (size_t d = 0; d < gr->n; d++) {
    size_t best = SIZE_MAX, bc = 0, bm = 0, bv = 0;
    for (size_t i = 0; i < gr->n; i++) {
      size_t p = gr->params[i];
      if (bound[p]) continue;
      size_t c = completes(sc, sc->gid[p], bound, p), m = mentions(sc, p),
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
static int plan_checks(const scope *sc, size_t g, group *gr, kt_error *err) {
  const kt_space *s = sc->s;
  gr->checks = kt_calloc(gr->n, sizeof *gr->checks, err);
  gr->nchecks = kt_calloc(gr->n, sizeof *gr->nchecks, err);
  if (!gr->checks || !gr->nchecks) return -1;
  gr->pure = true;
  for (size_t c = 0; c < s->ncons; c++) {
    if (!in_group(sc, c, g)) continue;
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
    gr->pure = gr->pure && s->cons[c].pure;
  }
  return 0;
}

/* ---- splitting into parts ---- */

/* Numbers the parameters of sp from position `from` by part: constraints
** of the group join the parameters they read that are not bound yet.
** Returns the number of parts; part[i] is the part of sp->params[i]. */
static size_t find_parts(const scope *sc, size_t g, const seqplan *sp, size_t from,
                         size_t *parent, size_t *part) {
  const kt_space *s = sc->s;
  for (size_t i = from; i < sp->n; i++) parent[i] = i;
  for (size_t c = 0; c < s->ncons; c++) {
    if (!in_group(sc, c, g)) continue;
    size_t first = SIZE_MAX;
    for (size_t j = 0; j < s->cons[c].n; j++)
      for (size_t i = from; i < sp->n; i++) {
        if (sp->params[i] != s->cons[c].params[j]) continue;
        if (first == SIZE_MAX) first = i;
        size_t a = uf_find(parent, first), b = uf_find(parent, i);
        if (a != b) parent[a > b ? a : b] = a < b ? a : b;
      }
  }
  size_t nparts = 0;
  for (size_t i = from; i < sp->n; i++) {
    size_t root = uf_find(parent, i);
    part[i] = root == i ? nparts++ : part[root];
  }
  return nparts;
}

static int plan_sequence(const scope *sc, size_t g, seqplan *sp, size_t *nplans, kt_error *err);

static int plan_parts(const scope *sc, size_t g, seqplan *sp, const size_t *part, size_t *nplans,
                      kt_error *err) {
  if (!(sp->parts = kt_calloc(sp->nparts, sizeof *sp->parts, err))) return -1;
  for (size_t i = sp->split_at; i < sp->n; i++) sp->parts[part[i]].n++;
  for (size_t k = 0; k < sp->nparts; k++) {
    seqplan *q = &sp->parts[k];
    q->params = kt_calloc(q->n, sizeof *q->params, err);
    q->depth = kt_calloc(q->n, sizeof *q->depth, err);
    if (!q->params || !q->depth) return -1;
    q->n = 0;
  }
  for (size_t i = sp->split_at; i < sp->n; i++) {
    seqplan *q = &sp->parts[part[i]];
    q->params[q->n] = sp->params[i];
    q->depth[q->n++] = sp->depth[i];
  }
  for (size_t k = 0; k < sp->nparts; k++)
    if (plan_sequence(sc, g, &sp->parts[k], nplans, err)) return -1;
  return 0;
}

/* Finds where the sequence first falls apart, and plans the parts. */
static int plan_sequence(const scope *sc, size_t g, seqplan *sp, size_t *nplans, kt_error *err) {
  sp->id = (*nplans)++;
  sp->split_at = sp->n;
  size_t *parent = kt_calloc(sp->n + 1, sizeof *parent, err);
  size_t *part = kt_calloc(sp->n + 1, sizeof *part, err);
  int rc = parent && part ? 0 : -1;
  for (size_t i = 1; i < sp->n && rc == 0 && sp->split_at == sp->n; i++) {
    size_t nparts = find_parts(sc, g, sp, i, parent, part);
    if (nparts < 2) continue;
    sp->split_at = i;
    sp->nparts = nparts;
    rc = plan_parts(sc, g, sp, part, nplans, err);
  }
  free(parent);
  free(part);
  return rc;
}

static int plan_group(const scope *sc, size_t g, group *gr, kt_error *err) {
  seqplan *sp = &gr->plan;
  sp->n = gr->n;
  sp->params = kt_calloc(gr->n, sizeof *sp->params, err);
  sp->depth = kt_calloc(gr->n, sizeof *sp->depth, err);
  if (!sp->params || !sp->depth) return -1;
  for (size_t d = 0; d < gr->n; d++) {
    sp->params[d] = gr->order[d];
    sp->depth[d] = d;
  }
  return plan_sequence(sc, g, sp, &gr->nplans, err);
}

static int fill_groups(const scope *sc, group *groups, size_t ngroups, bool *bound,
                       kt_error *err) {
  const kt_space *s = sc->s;
  for (size_t i = 0; i < s->nparams; i++) groups[sc->gid[i]].n++;
  for (size_t g = 0; g < ngroups; g++) {
    group *gr = &groups[g];
    gr->params = kt_calloc(gr->n, sizeof *gr->params, err);
    gr->order = kt_calloc(gr->n, sizeof *gr->order, err);
    if (!gr->params || !gr->order) return -1;
    gr->n = 0;
  }
  for (size_t i = 0; i < s->nparams; i++) {
    group *gr = &groups[sc->gid[i]];
    gr->params[gr->n++] = i;
  }
  for (size_t g = 0; g < ngroups; g++) {
    choose_order(sc, &groups[g], bound);
    if (plan_checks(sc, g, &groups[g], err) || plan_group(sc, g, &groups[g], err)) return -1;
  }
  return 0;
}

int plan_groups(const kt_space *s, unsigned max_tag, group **out, size_t *n, kt_error *err) {
  size_t *parent = kt_calloc(s->nparams + 1, sizeof *parent, err);
  size_t *gid = kt_calloc(s->nparams + 1, sizeof *gid, err);
  bool *bound = kt_calloc(s->nparams + 1, sizeof *bound, err);
  scope sc = {s, max_tag, gid};
  *out = NULL;
  *n = 0;
  int rc = -1;
  if (parent && gid && bound) {
    *n = find_components(&sc, parent);
    *out = kt_calloc(*n + 1, sizeof **out, err);
    rc = *out ? fill_groups(&sc, *out, *n, bound, err) : -1;
  }
  free(parent);
  free(gid);
  free(bound);
  if (rc) {
    free_groups(*out, *n);
    *out = NULL;
    *n = 0;
  }
  return rc;
}

/* The memory a listing may take (space.h), which every part that lists
** or walks groups keeps within. */
size_t kt_space_max_bytes(const kt_space *s) {
  return s->max_bytes ? s->max_bytes : KT_SPACE_MAX_BYTES;
}
