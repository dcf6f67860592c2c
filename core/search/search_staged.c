/*
** search_staged.c: a staged search after OCLoptimizer. The parameters are
** split into stages (say, the work sizes first). Stage 1 tries every
** combination of its parameters' values with the other parameters at
** their defaults: the values of configuration 0, the first valid one. The
** fastest configurations of a stage survive, their stage's values frozen,
** and the next stage tries every combination of its own parameters on
** each survivor. Combinations that break a constraint are skipped.
**
** Options: stages (text: "A,B;C" or, from Lua, {{"A", "B"}, {"C"}}; the
** parameters no stage names get a stage each, after the named ones, in
** their declaration order; default: one stage per parameter), keep (the
** best this many survive a stage; 1, or no limit when tolerance is
** given), tolerance (0: off; else those within this fraction of the
** stage's best survive, at most keep), rounds (the sequence of stages is
** run this many times, each round from the last survivors; 0: until a
** round finds nothing faster), explore (1: once its rounds are done, the
** search goes on with random unexplored configurations, the only use of
** the seed, so that a budget larger than the stages need is not wasted;
** 0: the search ends there). A stage may carry its own keep and tolerance
** ("A keep=3 tolerance=0.05; B"): OCLoptimizer's annotations each have
** theirs (doc/annotations.md).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "indexmap.h"
#include "neighbors.h"
#include "result.h"
#include "search.h"

typedef struct candidate {
  uint64_t index;
  double cost;
} candidate;

typedef struct staged {
  kt_walker w;
  uint64_t seed;
  char *stages;           /* the option's text */
  unsigned keep, rounds, round;
  double tolerance;
  bool explore;
  unsigned *stage_keep;   /* per stage */
  double *stage_tolerance;
  double best, round_best; /* the fastest time so far, and when the round began */
  size_t *stage_of;       /* per parameter */
  size_t nstages, stage;
  uint32_t *survivors;    /* nsurvivors x nparams value indices */
  size_t nsurvivors, capsurvivors;
  size_t survivor;        /* the survivor being varied */
  uint32_t *combo;        /* per parameter: the stage's values being tried */
  kt_indexmap in_stage;   /* candidates of this stage */
  candidate *cands;
  size_t ncands, capcands;
  int pending;            /* the candidate whose result is awaited, or -1 */
} staged;

/* ---- stages ---- */

/* "keep=N" or "tolerance=X" in a stage: 1 when the word is one, -1 when bad. */
static int stage_option(staged *st, const char *buf, size_t stage, kt_error *err) {
  const char *eq = strchr(buf, '=');
  if (!eq) return 0;
  char *end;
  double v = strtod(eq + 1, &end);
  bool keep = strncmp(buf, "keep=", 5) == 0, tol = strncmp(buf, "tolerance=", 10) == 0;
  if ((!keep && !tol) || *end || eq[1] == '\0' || !(v >= 0 && v <= 1e9) ||
      (keep && (v < 1 || v != (double)(unsigned)v)))
    return kt_fail(err, "stages: '%s' is not keep=N (N >= 1) or tolerance=X (X >= 0)", buf);
  if (keep) st->stage_keep[stage] = (unsigned)v;
  else st->stage_tolerance[stage] = v;
  return 1;
}

static int assign(staged *st, const char *name, size_t len, size_t stage, kt_error *err) {
  char buf[256];
  snprintf(buf, sizeof buf, "%.*s", (int)len, name);
  int opt = stage_option(st, buf, stage, err);
  if (opt) return opt < 0 ? -1 : 1;
  int p = kt_space_find(st->w.space, buf);
  if (p < 0) return kt_fail(err, "stages names unknown parameter '%s'", buf);
  if (st->stage_of[p] != SIZE_MAX)
    return kt_fail(err, "stages names parameter '%s' twice", buf);
  st->stage_of[p] = stage;
  return 0;
}

/* A stage's own keep and tolerance, else the search's (keep no limit
** where a stage gives a tolerance and no keep). */
static void stage_defaults(staged *st) {
  for (size_t s = 0; s <= st->w.nparams; s++) { /* one more: options after the last name */
    st->stage_keep[s] = 0;
    st->stage_tolerance[s] = -1;
  }
}

static void stage_limits(const staged *st, size_t s, unsigned *keep, double *tolerance) {
  bool own = st->stage_tolerance[s] >= 0;
  *tolerance = own ? st->stage_tolerance[s] : st->tolerance;
  *keep = st->stage_keep[s] ? st->stage_keep[s] : own && *tolerance > 0 ? UINT32_MAX : st->keep;
}

static int parse_stages(staged *st, kt_error *err) {
  for (size_t p = 0; p < st->w.nparams; p++) st->stage_of[p] = SIZE_MAX;
  stage_defaults(st);
  st->nstages = 0;
  for (const char *s = st->stages; s && *s;) {
    size_t named = 0, options = 0;
    while (*s && *s != ';') {
      s += strspn(s, " \t,");
      size_t len = strcspn(s, " \t,;");
      int rc = len ? assign(st, s, len, st->nstages, err) : 0;
      if (rc < 0) return -1;
      named += len > 0 && rc == 0;
      options += rc > 0;
      s += len;
      s += strspn(s, " \t,");
    }
    if (options && !named) return kt_fail(err, "stages: a stage's keep or tolerance names no parameter");
    st->nstages += named > 0;
    s += *s == ';';
  }
  for (size_t p = 0; p < st->w.nparams; p++)
    if (st->stage_of[p] == SIZE_MAX) st->stage_of[p] = st->nstages++;
  return 0;
}

/* The next combination of the stage's values; false after the last. */
static bool advance(staged *st) {
  for (size_t p = 0; p < st->w.nparams; p++) {
    if (st->stage_of[p] != st->stage) continue;
    if (++st->combo[p] < kt_space_param(st->w.space, p)->nvalues) return true;
    st->combo[p] = 0;
  }
  return false;
}

/* ---- survivors ---- */

static int by_cost(const void *a, const void *b) {
  const candidate *x = a, *y = b;
  if (x->cost != y->cost) return x->cost < y->cost ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static int add_survivor(staged *st, uint64_t index, kt_error *err) {
  size_t np = st->w.nparams;
  if (kt_grow(&st->survivors, &st->capsurvivors, (st->nsurvivors + 1) * np,
              sizeof *st->survivors, err))
    return -1;
  return kt_space_config(st->w.space, index, st->survivors + st->nsurvivors++ * np, err);
}

static void begin_stage(staged *st, size_t stage) {
  st->stage = stage;
  st->survivor = 0;
  st->ncands = 0;
  st->pending = -1;
  memset(st->combo, 0, st->w.nparams * sizeof *st->combo);
  kt_indexmap_clear(&st->in_stage);
}

/* The survivors of the stage just tried; when everything failed, the
** previous survivors stay. */
static int end_stage(staged *st, kt_error *err) {
  qsort(st->cands, st->ncands, sizeof *st->cands, by_cost);
  double best = st->ncands ? st->cands[0].cost : INFINITY;
  st->best = fmin(st->best, best);
  unsigned keep;
  double tolerance;
  stage_limits(st, st->stage, &keep, &tolerance);
  if (isfinite(best)) {
    st->nsurvivors = 0;
    for (size_t i = 0; i < st->ncands && st->nsurvivors < keep; i++) {
      const candidate *c = &st->cands[i];
      if (!isfinite(c->cost) || (tolerance > 0 && c->cost > best * (1 + tolerance))) break;
      if (add_survivor(st, c->index, err)) return -1;
    }
  }
  size_t next = st->stage + 1;
  if (next == st->nstages) {
    st->round++;
    bool again = st->rounds ? st->round < st->rounds : st->best < st->round_best;
    st->round_best = st->best;
    if (again) next = 0;
  }
  begin_stage(st, next);
  return 0;
}

/* ---- the searcher ---- */

static int sg_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  staged *st = s->state;
  kt_walker_clear(&st->w);
  if (kt_walker_init(&st->w, space, st->seed, err)) return -1;
  size_t np = st->w.nparams ? st->w.nparams : 1;
  free(st->stage_of);
  free(st->combo);
  free(st->stage_keep);
  free(st->stage_tolerance);
  st->stage_of = kt_calloc(np, sizeof *st->stage_of, err);
  st->combo = kt_calloc(np, sizeof *st->combo, err);
  st->stage_keep = kt_calloc(np + 1, sizeof *st->stage_keep, err);
  st->stage_tolerance = kt_calloc(np + 1, sizeof *st->stage_tolerance, err);
  if (!st->stage_of || !st->combo || !st->stage_keep || !st->stage_tolerance ||
      parse_stages(st, err))
    return -1;
  st->nsurvivors = 0;
  st->round = 0;
  st->best = st->round_best = INFINITY;
  if (add_survivor(st, 0, err)) return -1;
  begin_stage(st, 0);
  return 0;
}

/* Adds the candidate in w->vi unless it is invalid or already tried in
** this stage; *ask says whether it needs an evaluation. */
static int consider(staged *st, uint64_t *out, bool *ask, kt_error *err) {
  uint64_t at;
  *ask = false;
  if (kt_space_index(st->w.space, st->w.vi, out) || kt_indexmap_get(&st->in_stage, *out, &at))
    return 0;
  if (kt_grow(&st->cands, &st->capcands, st->ncands + 1, sizeof *st->cands, err) ||
      kt_indexmap_put(&st->in_stage, *out, st->ncands, err))
    return -1;
  candidate *c = &st->cands[st->ncands++];
  *c = (candidate){*out, INFINITY};
  *ask = !kt_walker_explored(&st->w, *out, &c->cost);
  if (*ask) st->pending = (int)(st->ncands - 1);
  return 0;
}

static int sg_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  staged *st = s->state;
  size_t np = st->w.nparams;
  *got = 0;
  if (max == 0) return 0;
  while (st->stage < st->nstages) {
    if (st->survivor == st->nsurvivors) {
      if (end_stage(st, err)) return -1;
      continue;
    }
    memcpy(st->w.vi, st->survivors + st->survivor * np, np * sizeof *st->w.vi);
    for (size_t p = 0; p < np; p++)
      if (st->stage_of[p] == st->stage) st->w.vi[p] = st->combo[p];
    if (!advance(st)) st->survivor++;
    bool ask;
    if (consider(st, out, &ask, err)) return -1;
    if (ask) {
      *got = 1;
      return 0;
    }
  }
  *got = st->explore && kt_random_unexplored(&st->w, out) == 0; /* the stages are done */
  return 0;
}

static int sg_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  staged *st = s->state;
  if (kt_walker_record(&st->w, index, r, err)) return -1;
  if (st->pending >= 0 && st->cands[st->pending].index == index)
    st->cands[st->pending].cost = kt_result_cost(r);
  st->pending = -1;
  return 0;
}

static void sg_destroy(void *state) {
  staged *st = state;
  kt_walker_clear(&st->w);
  kt_indexmap_clear(&st->in_stage);
  free(st->stages);
  free(st->stage_of);
  free(st->combo);
  free(st->stage_keep);
  free(st->stage_tolerance);
  free(st->survivors);
  free(st->cands);
  free(st);
}

static const kt_searcher_ops staged_ops = {"staged", sg_start, sg_next, sg_report, sg_destroy, NULL, NULL};

int kt_search_staged_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {"stages", "keep", "tolerance", "rounds", "explore", NULL};
  const char *stages;
  double tolerance, rounds, keep, explore;
  if (kt_search_opts_check(o, "staged", allowed, err) ||
      kt_search_opt_text(o, "staged", "stages", NULL, &stages, err) ||
      kt_search_opt_number(o, "staged", "tolerance", 0, 0, 1e9, &tolerance, err) ||
      kt_search_opt_whole(o, "staged", "keep", tolerance > 0 ? 1e9 : 1, 1, 1e9, false, &keep, err) ||
      kt_search_opt_whole(o, "staged", "rounds", 0, 0, 1e9, false, &rounds, err) ||
      kt_search_opt_whole(o, "staged", "explore", 1, 0, 1, false, &explore, err))
    return -1;
  char *text = stages ? kt_strdup(stages, err) : NULL;
  staged *st = (text || !stages) ? kt_calloc(1, sizeof *st, err) : NULL;
  if (!st) {
    free(text);
    return -1;
  }
  *st = (staged){.seed = o->seed, .stages = text, .keep = (unsigned)keep,
                 .rounds = (unsigned)rounds, .tolerance = tolerance,
                 .explore = explore != 0};
  kt_indexmap_init(&st->in_stage);
  s->ops = &staged_ops;
  s->state = st;
  return 0;
}
