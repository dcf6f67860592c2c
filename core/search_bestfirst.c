/*
** search_bestfirst.c: best-first local search in episodes, ktlua's
** recommended searcher (see the table at the top of core/search.c).
**
** An episode starts with `sample` random configurations. Each step then
** takes the fastest configuration of the episode, among its first `width`,
** that still has untried neighbours and patience left, and evaluates its
** next neighbour (one parameter changed, round robin over the parameters:
** neighbors.h). A configuration whose `patience` tried neighbours in a
** row were no faster than itself is set aside. A faster neighbour simply
** becomes the episode's fastest configuration, so the search climbs from
** it at once; and where a greedy descent would spend its budget proving
** that its start is a local optimum, this search turns to the next best
** configurations it has met. When the first `width` are all set aside or
** fully explored, a new episode starts from new random configurations.
** Neighbours explored in an earlier episode cost nothing: a faster one
** joins the episode as if just found.
**
** Options: sample (16; below 1, a fraction of the valid configurations),
** width (8), patience (4; 0: no limit).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "indexmap.h"
#include "neighbors.h"
#include "result.h"
#include "search.h"

typedef struct entry {
  double cost;
  uint64_t index;
  size_t node; /* its expansion state + 1, or 0 before it is expanded */
} entry;

typedef struct node {
  kt_indices moves; /* neighbours in the order to try */
  size_t next;
  unsigned misses;  /* tried neighbours no faster, in a row */
} node;

typedef struct bestfirst {
  kt_walker w;
  uint64_t seed;
  double sample_opt;
  unsigned sample, width, patience;
  uint64_t drawn;        /* random configurations proposed in this episode */
  entry *found;          /* successes of this episode, fastest first */
  size_t nfound, capfound;
  kt_indexmap in_found;
  node *nodes;
  size_t nnodes, capnodes;
  size_t pending;        /* the entry whose neighbour awaits its result + 1, or 0 */
} bestfirst;

/* ---- the episode's successes, fastest first ---- */

static int insert(bestfirst *b, uint64_t index, double cost, kt_error *err) {
  uint64_t unused;
  if (kt_indexmap_get(&b->in_found, index, &unused)) return 0;
  if (kt_indexmap_put(&b->in_found, index, 1, err) ||
      kt_grow(&b->found, &b->capfound, b->nfound + 1, sizeof *b->found, err))
    return -1;
  size_t lo = 0, hi = b->nfound;
  while (lo < hi) { /* after the entries as fast: among equals, the earlier first */
    size_t mid = lo + (hi - lo) / 2;
    if (b->found[mid].cost <= cost) lo = mid + 1;
    else hi = mid;
  }
  memmove(b->found + lo + 1, b->found + lo, (b->nfound - lo) * sizeof *b->found);
  b->found[lo] = (entry){cost, index, 0};
  b->nfound++;
  return 0;
}

static void new_episode(bestfirst *b) {
  for (size_t i = 0; i < b->nnodes; i++) kt_indices_clear(&b->nodes[i].moves);
  b->nnodes = 0;
  b->nfound = 0;
  kt_indexmap_clear(&b->in_found);
  b->drawn = 0;
}

/* ---- expansion ---- */

static node *node_of(bestfirst *b, entry *e, kt_error *err) {
  if (e->node) return &b->nodes[e->node - 1];
  if (kt_grow(&b->nodes, &b->capnodes, b->nnodes + 1, sizeof *b->nodes, err)) return NULL;
  node *n = &b->nodes[b->nnodes];
  memset(n, 0, sizeof *n);
  if (kt_neighbors_mixed(&b->w, e->index, KT_HAMMING, &n->moves, err)) {
    kt_indices_clear(&n->moves);
    return NULL;
  }
  e->node = ++b->nnodes;
  return n;
}

/* Skips the entry's neighbours explored already; a faster one joins the
** episode (*joined: the ranking has changed). */
static int skip_known(bestfirst *b, size_t i, node *n, bool *joined, kt_error *err) {
  double cost;
  *joined = false;
  while (n->next < n->moves.n && kt_walker_explored(&b->w, n->moves.items[n->next], &cost)) {
    uint64_t m = n->moves.items[n->next++];
    size_t before = b->nfound;
    if (cost < b->found[i].cost && insert(b, m, cost, err)) return -1;
    if ((*joined = b->nfound > before)) return 0;
  }
  return 0;
}

/* The next neighbour to try: of the fastest of the first `width` entries
** that has one and patience left. *which gets that entry + 1, or 0 when
** none has (the episode is over). */
static int expand(bestfirst *b, uint64_t *out, size_t *which, kt_error *err) {
  *which = 0;
  for (size_t i = 0; i < b->nfound && i < b->width; i++) {
    node *n = node_of(b, &b->found[i], err);
    bool joined;
    if (!n || skip_known(b, i, n, &joined, err)) return -1;
    if (joined) {
      i = (size_t)-1; /* rank again from the top */
      continue;
    }
    if (n->next == n->moves.n || (b->patience && n->misses >= b->patience)) continue;
    *out = n->moves.items[n->next++];
    *which = i + 1;
    return 0;
  }
  return 0;
}

/* ---- the searcher ---- */

static int bf_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  bestfirst *b = s->state;
  kt_walker_clear(&b->w);
  new_episode(b);
  b->pending = 0;
  if (kt_walker_init(&b->w, space, b->seed, err)) return -1;
  b->sample = kt_search_size(b->sample_opt, b->w.count);
  return 0;
}

static int bf_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  bestfirst *b = s->state;
  *got = 0;
  b->pending = 0;
  if (max == 0) return 0;
  if (b->drawn >= b->sample) {
    if (expand(b, out, &b->pending, err)) return -1;
    if (!b->pending) new_episode(b);
  }
  if (!b->pending) {
    if (kt_random_unexplored(&b->w, out)) return 0; /* everything is explored */
    b->drawn++;
  }
  *got = 1;
  return 0;
}

static int bf_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  bestfirst *b = s->state;
  double cost = kt_result_cost(r);
  if (kt_walker_record(&b->w, index, r, err)) return -1;
  /* Entries move only when one is inserted, below: pending still points right. */
  entry *from = b->pending ? &b->found[b->pending - 1] : NULL;
  if (from && !(cost < from->cost)) b->nodes[from->node - 1].misses++;
  b->pending = 0;
  return isfinite(cost) ? insert(b, index, cost, err) : 0;
}

static void bf_destroy(void *state) {
  bestfirst *b = state;
  kt_walker_clear(&b->w);
  new_episode(b);
  free(b->nodes);
  free(b->found);
  free(b);
}

static const kt_searcher_ops bestfirst_ops = {"bestfirst", bf_start, bf_next, bf_report,
                                              bf_destroy};

int kt_search_bestfirst_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {"sample", "width", "patience", NULL};
  double sample, width, patience;
  if (kt_search_opts_check(o, "bestfirst", allowed, err) ||
      kt_search_opt_number(o, "bestfirst", "sample", 16, 1e-9, 1e9, &sample, err) ||
      kt_search_opt_number(o, "bestfirst", "width", 8, 1, 1e9, &width, err) ||
      kt_search_opt_number(o, "bestfirst", "patience", 4, 0, 1e9, &patience, err))
    return -1;
  bestfirst *b = kt_calloc(1, sizeof *b, err);
  if (!b) return -1;
  b->seed = o->seed;
  b->sample_opt = sample;
  b->width = (unsigned)width;
  b->patience = (unsigned)patience;
  kt_indexmap_init(&b->in_found);
  s->ops = &bestfirst_ops;
  s->state = b;
  return 0;
}
