/*
** search_bestfirst.c: best-first local search in episodes, ktlua's
** recommended searcher (see the table at the top of core/search/search.c).
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
** With `model` on, each parameter's new values are tried in an order that
** favours the values the explored configurations say go fast with the
** rest of the configuration (pairwise.h), still at random and still round
** robin over the parameters: a search that follows a model can be misled
** by it, and the round robin keeps every parameter in play.
**
** Up to `ahead` proposals are in flight at once (so that a device tuning
** compiles them together): the next untried neighbours of the same
** entries, each counted against its entry's patience until its result
** comes back. A new episode waits for every result of the last one.
**
** With `guess` N (0: off), every Nth proposal after an episode's sample
** is not a neighbour but the configuration that the same model scores
** highest (over all its pairs of values) among `pool` random ones not yet
** explored: a tree-structured-Parzen-like global guess, so that a search
** stuck near one region still tries where the results point elsewhere.
** A fast guess joins the episode and is climbed from. With `adapt` on,
** guesses come instead at random, at a share between 1/8 and 1/2 that
** follows how often guesses and neighbours beat the episode's best.
**
** With `across` T (0: off), a configuration's neighbours are ranked across
** the parameters by the model's gain over the current values (divided by
** T), a round of the parameters costing as much as a factor e in the
** odds (kt_neighbors_across): the round robin still keeps every
** parameter in play, but a move the model favours comes a round or two
** earlier.
**
** With `renew` 1, after each result the proposals not yet evaluated, past
** the episode's sample, are taken back (the loop's withdraw) and the
** searcher rewinds to where it made them: its random state, the entries
** expanded since and the moves taken or skipped since, so that it proposes
** again with every result in. It evaluates what ahead 1 does while a
** device still compiles `ahead` at once; what it takes back for good was
** compiled for nothing. With 2 only the moves taken go back.
**
** With `pairs` N (0: off), after every N one-change moves of an entry comes
** one that moves two parameters each to an adjacent value (in a random
** order): a step along a diagonal, where a product of two parameters is
** bounded (threads in a block, shared memory) and one change alone leaves
** the space or falls off the ridge.
**
** With `twins` on, the pair moves that step two parameters of the same
** list of values (a tile's x and y) each to its next value up come first
** among an entry's pair moves: a square tile's step to the next square,
** which neither change alone reaches where oblong tiles are slow (mm's
** 4 x 4 to 8 x 8). With `twins` 2 they come first only from an entry whose
** two such parameters hold the same value (a square tile, which the step
** keeps square); from an oblong one the pair moves keep their random order,
** since a square step there assumes a symmetry the entry does not show.
** 2 by default: with 1, where the fastest tiles are oblong (the
** convolutions' 1 x 8) it finds a little less; with 2 it ties there
** (bench/RESULTS.md, "Square twins").
**
** With `restart` on, every episode but the first starts instead from the
** `sample` configurations that a small neural network ensemble
** (surrogate.h: 5 networks of 40 units, each learning from at most 256 of
** the results) predicts fastest among those not yet explored; without
** FANN the episodes start at random as with it off. Off by default: on
** the recorded spaces it gained nothing (bench/RESULTS.md).
**
** With a prior (search.h: configurations that did well on other devices
** or sizes, weighted), the model counts them as `trust` fast
** configurations in all, spread by their weights, before any result of
** this space: the first moves favour the values that won elsewhere, and the
** first episode's sample is not drawn at random but guessed, each the
** configuration of `pool` random ones that the model scores highest. The
** space's own results outweigh the prior as they come. Without the model
** (model 0, or a space too large for it) a prior changes nothing.
**
** Options: sample (16; below 1, a fraction of the valid configurations),
** width (8), patience (4; 0: no limit), ahead (8), model (1; 0: new
** values in a uniformly random order), restart (0; 1: from the networks'
** predictions), guess (0), pool (64), adapt (0), across (0), renew (1),
** pairs (4), twins (2: only from a square entry; 1: every twins' step up
** first; 0: off), trust (16; 0: a prior is ignored).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "indexmap.h"
#include "neighbors.h"
#include "pairwise.h"
#include "result.h"
#include "search.h"
#include "surrogate.h"

/* The networks that choose where an episode restarts: fewer and smaller
** than the model searcher's, each on at most RESTART_RESAMPLE results, so
** that learning costs about a tenth of a second whatever was explored. */
#define RESTART_NETS 5
#define RESTART_HIDDEN 40
#define RESTART_EPOCHS 50
#define RESTART_RESAMPLE 256

typedef struct entry {
  double cost;
  uint64_t index;
  size_t node; /* its expansion state + 1, or 0 before it is expanded */
} entry;

typedef struct node {
  kt_indices moves;     /* neighbours in the order to try */
  size_t next;
  unsigned misses;      /* tried neighbours no faster, in a row */
  unsigned outstanding; /* tried neighbours whose results are awaited */
} node;

/* What a proposal changed of the searcher besides its entry's moves: the
** state before it, restored when renew takes it back. */
typedef struct before {
  kt_rng rng;
  size_t nnodes;
  uint64_t steps, drawn, made;
} before;

/* A change a proposal made to the episode, for renew to undo: an entry's
** place among its moves before the proposal skipped or took some (node:
** its expansion state + 1), or a configuration met again that joined the
** episode (node 0). */
typedef struct change {
  uint64_t made; /* the proposal's number */
  uint64_t index;
  size_t node, next;
} change;

typedef struct flight {
  uint64_t index;
  size_t node; /* the expansion state + 1 of the entry whose neighbour it is, or 0: a random draw */
  size_t pos;  /* its place among that entry's moves */
  double cost; /* that entry's */
  int kind;    /* FROM_SAMPLE, FROM_NEIGHBOUR or FROM_GUESS */
  before was;
} flight;

enum { FROM_SAMPLE, FROM_NEIGHBOUR, FROM_GUESS };

typedef struct bestfirst {
  kt_walker w;
  uint64_t seed;
  double sample_opt;
  unsigned sample, width, patience, ahead;
  bool use_model;
  unsigned guess, pool;  /* every guess-th expansion a guess, the best of pool */
  bool adapt;            /* the share of guesses follows their wins */
  unsigned pairs;        /* a two-change adjacent move after every pairs one-change ones */
  unsigned twins;        /* twins' steps up first among the pair moves: 1 all, 2 from
                            an entry whose two twins hold the same value */
  double trust;          /* a prior counts as this many fast configurations */
  bool primed;           /* a prior was learnt: the first episode's sample is guessed */
  uint64_t episodes;     /* episodes begun since the start, the first 0 */
  double across;         /* moves ranked across the parameters at this temperature; 0: off */
  unsigned renew;        /* after each result, what is not yet evaluated is chosen again:
                            1 as ahead 1 would, 2 keeping the entries' orders of moves */
  double tries[3], wins[3]; /* by flight kind: proposals, and those that beat the episode */
  uint64_t steps;        /* expansions, for guess */
  uint64_t made;         /* proposals, in the order made */
  kt_pairwise model;     /* every result, for the order of new values; no
                            parameters when off (or the space is too large) */
  uint64_t drawn;        /* random configurations proposed in this episode */
  entry *found;          /* successes of this episode, fastest first */
  size_t nfound, capfound;
  kt_indexmap in_found;  /* index -> 1 while in found (0: taken back) */
  change *changes;       /* renew: what the proposals in flight changed, oldest first */
  size_t nchanges, capchanges;
  node *nodes;
  size_t nnodes, capnodes;
  flight *flights;       /* proposals whose results are awaited */
  size_t nflights;
  bool use_restart;
  kt_surrogate sg;       /* every result, for the restarts; no network when off */
  uint64_t *starts;      /* the episode's first configurations, best predicted first */
  size_t nstarts, nextstart;
} bestfirst;

static bool in_flight(const bestfirst *b, uint64_t index) {
  for (size_t i = 0; i < b->nflights; i++)
    if (b->flights[i].index == index) return true;
  return false;
}

/* Explored, or proposed and awaited: not to be proposed again. */
static bool taken(const bestfirst *b, uint64_t index, double *cost) {
  *cost = INFINITY;
  return kt_walker_explored(&b->w, index, cost) || in_flight(b, index);
}

/* ---- the episode's successes, fastest first ---- */

static int insert(bestfirst *b, uint64_t index, double cost, kt_error *err) {
  uint64_t present;
  if (kt_indexmap_get(&b->in_found, index, &present) && present) return 0;
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
  b->nstarts = b->nextstart = 0;
  for (size_t i = 0; i < b->nnodes; i++) kt_indices_clear(&b->nodes[i].moves);
  b->nnodes = 0;
  b->nfound = 0;
  kt_indexmap_clear(&b->in_found);
  b->drawn = 0;
  b->nchanges = 0;
}

/* ---- expansion ---- */

/* The neighbours of index in the order to try them. */
static int single_moves(bestfirst *b, uint64_t index, kt_indices *moves, kt_error *err) {
  kt_walker *w = &b->w;
  if (!b->model.nparams) return kt_neighbors_mixed(w, index, KT_HAMMING, moves, err);
  if (kt_space_config(w->space, index, w->vj, err)) return -1;
  kt_pairwise_score(&b->model, w->vj);
  if (b->across > 0)
    return kt_neighbors_across(w, index, KT_HAMMING, b->model.score, b->model.offset, b->across,
                               moves, err);
  return kt_neighbors_ranked(w, index, KT_HAMMING, b->model.score, b->model.offset, moves, err);
}

/* With pairs N, after every N one-change moves one that changes two
** parameters each to an adjacent value, in a random order. */
static int moves_of(bestfirst *b, uint64_t index, kt_indices *moves, kt_error *err) {
  if (single_moves(b, index, moves, err)) return -1;
  if (!b->pairs) return 0;
  kt_indices one = {0}, two = {0}, all = {0};
  int rc = kt_neighbors(&b->w, index, 1, KT_ADJACENT, &one, err) ||
           kt_neighbors(&b->w, index, 2, KT_ADJACENT, &two, err);
  size_t first = one.n;
  kt_indices_clear(&one);
  if (!rc) {
    kt_shuffle_u64(&b->w.rng, two.items + first, two.n - first); /* the two-change ones */
    if (b->twins)
      rc = kt_neighbors_twins_first(&b->w, index, two.items + first, two.n - first, b->twins == 2,
                                    err);
    size_t a = 0, c = first, since = 0;
    while (!rc && (a < moves->n || c < two.n)) {
      bool pair = c < two.n && (a == moves->n || since == b->pairs);
      since = pair ? 0 : since + 1;
      rc = kt_indices_push(&all, pair ? two.items[c++] : moves->items[a++], err);
    }
  }
  kt_indices_clear(&two);
  if (rc) return kt_indices_clear(&all), -1;
  kt_indices_clear(moves);
  *moves = all;
  return 0;
}

static node *node_of(bestfirst *b, entry *e, kt_error *err) {
  if (e->node) return &b->nodes[e->node - 1];
  if (kt_grow(&b->nodes, &b->capnodes, b->nnodes + 1, sizeof *b->nodes, err)) return NULL;
  node *n = &b->nodes[b->nnodes];
  memset(n, 0, sizeof *n);
  if (moves_of(b, e->index, &n->moves, err)) {
    kt_indices_clear(&n->moves);
    return NULL;
  }
  e->node = ++b->nnodes;
  return n;
}

/* With renew on, what the proposal being made changes, for undoing. */
static int note(bestfirst *b, change c, kt_error *err) {
  if (b->renew != 1) return 0;
  if (kt_grow(&b->changes, &b->capchanges, b->nchanges + 1, sizeof *b->changes, err)) return -1;
  c.made = b->made;
  b->changes[b->nchanges++] = c;
  return 0;
}

static int note_next(bestfirst *b, const node *n, size_t before, kt_error *err) {
  if (n->next == before) return 0;
  return note(b, (change){0, 0, (size_t)(n - b->nodes) + 1, before}, err);
}

/* Takes an entry out of the episode's successes. */
static void remove_found(bestfirst *b, uint64_t index) {
  kt_error ignored; /* the index is in the map already: nothing to allocate */
  for (size_t i = 0; i < b->nfound; i++)
    if (b->found[i].index == index) {
      memmove(b->found + i, b->found + i + 1, (b->nfound - i - 1) * sizeof *b->found);
      b->nfound--;
      kt_indexmap_put(&b->in_found, index, 0, &ignored);
      return;
    }
}

/* Skips the entry's neighbours explored or awaited already; a faster one
** joins the episode (*joined: the ranking has changed). */
static int skip_known(bestfirst *b, size_t i, node *n, bool *joined, kt_error *err) {
  double cost;
  *joined = false;
  while (n->next < n->moves.n && taken(b, n->moves.items[n->next], &cost)) {
    uint64_t m = n->moves.items[n->next++];
    size_t before = b->nfound;
    if (cost < b->found[i].cost && insert(b, m, cost, err)) return -1;
    if ((*joined = b->nfound > before)) return note(b, (change){0, m, 0, 0}, err);
  }
  return 0;
}

/* The next neighbour to try: of the fastest of the first `width` entries
** that has one and patience left. *from gets that entry, or NULL when none
** has (the episode is over, once its results are in). */
static int expand(bestfirst *b, uint64_t *out, size_t *pos, const entry **from, kt_error *err) {
  *from = NULL;
  for (size_t i = 0; i < b->nfound && i < b->width; i++) {
    node *n = node_of(b, &b->found[i], err);
    if (!n) return -1;
    size_t before = n->next;
    bool joined;
    if (skip_known(b, i, n, &joined, err)) return -1;
    if (joined) {
      if (note_next(b, n, before, err)) return -1;
      i = (size_t)-1; /* rank again from the top */
      continue;
    }
    if (n->next == n->moves.n || (b->patience && n->misses + n->outstanding >= b->patience)) {
      if (note_next(b, n, before, err)) return -1;
      continue;
    }
    *pos = n->next;
    *out = n->moves.items[n->next++];
    n->outstanding++;
    *from = &b->found[i];
    return note_next(b, n, before, err);
  }
  return 0;
}

/* A random configuration not yet taken; 1 when there is none now. */
static int draw_any(bestfirst *b, uint64_t *out) {
  double cost;
  for (int t = 0; t < 64; t++) {
    if (kt_random_unexplored(&b->w, out)) return 1;
    if (!taken(b, *out, &cost)) return 0;
  }
  return 1; /* what is left is in flight */
}

/* The episode's next start: planned, or random. */
static int draw(bestfirst *b, uint64_t *out) {
  double cost;
  while (b->nextstart < b->nstarts)
    if (!taken(b, *out = b->starts[b->nextstart++], &cost)) return 0;
  return draw_any(b, out);
}

/* A guess: of `pool` random configurations not taken, the one the model
** scores highest; 1 when there is none now. */
static int guess(bestfirst *b, uint64_t *out, kt_error *err) {
  double best = -INFINITY;
  bool any = false;
  for (unsigned t = 0; t < b->pool; t++) {
    uint64_t c;
    if (draw_any(b, &c)) break;
    if (kt_space_config(b->w.space, c, b->w.vj, err)) return -1;
    double score = kt_pairwise_config_score(&b->model, b->w.vj);
    if (!any || score > best) *out = c, best = score, any = true;
  }
  return any ? 0 : 1;
}

/* ---- restarts ---- */

/* The episode's first configurations: the `sample` best predicted that
** are not taken, once the networks have learnt every result so far. */
static int plan_restart(bestfirst *b, kt_error *err) {
  kt_surrogate *sg = &b->sg;
  if (!sg->net || !sg->nok) return 0;
  if (kt_surrogate_learn(sg, err)) return -1;
  size_t want = b->sample, n = 0;
  double cost;
  for (size_t i = 0; i < sg->npool; i++) {
    float p = sg->pred[i];
    if ((n == want && !(p < sg->pred[b->starts[n - 1]])) || taken(b, sg->pool[i], &cost))
      continue;
    size_t at = n < want ? n++ : n - 1; /* insert by prediction into the best `want` */
    while (at > 0 && p < sg->pred[b->starts[at - 1]]) {
      b->starts[at] = b->starts[at - 1];
      at--;
    }
    b->starts[at] = i;
  }
  for (size_t i = 0; i < n; i++) b->starts[i] = sg->pool[b->starts[i]];
  b->nstarts = n;
  return 0;
}

/* ---- the searcher ---- */

static int bf_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  bestfirst *b = s->state;
  kt_walker_clear(&b->w);
  kt_pairwise_clear(&b->model);
  new_episode(b);
  b->nflights = 0;
  b->made = 0;
  b->steps = 0;
  b->primed = false;
  b->episodes = 0;
  memset(b->tries, 0, sizeof b->tries);
  memset(b->wins, 0, sizeof b->wins);
  if (kt_walker_init(&b->w, space, b->seed, err) ||
      (b->use_model && kt_pairwise_init(&b->model, space, err) < 0))
    return -1;
  b->sample = kt_search_size(b->sample_opt, b->w.count);
  free(b->starts);
  b->starts = NULL;
  kt_surrogate_clear(&b->sg);
  if (!b->use_restart || !kt_ensemble_available()) return 0;
  kt_ensemble_opts o = {RESTART_NETS, RESTART_HIDDEN, b->seed};
  if (!(b->starts = kt_calloc(b->sample, sizeof *b->starts, err))) return -1;
  return kt_surrogate_init(&b->sg, space, &o, RESTART_EPOCHS, RESTART_RESAMPLE, err);
}

/* Whether the next proposal after the sample is a guess: every guess-th,
** or with adapt at random, at a share between 1/8 and 1/2 in proportion to
** how often guesses and neighbours beat the episode's best (each rate
** Laplace-smoothed, so a half until they have results). */
static bool wants_guess(bestfirst *b) {
  if (!b->model.nparams) return false;
  if (!b->adapt) return b->guess && ++b->steps % b->guess == 0;
  double rg = (b->wins[FROM_GUESS] + 1) / (b->tries[FROM_GUESS] + 2);
  double rn = (b->wins[FROM_NEIGHBOUR] + 1) / (b->tries[FROM_NEIGHBOUR] + 2);
  double share = rg / (rg + rn);
  share = share < 0.125 ? 0.125 : share > 0.5 ? 0.5 : share;
  return kt_rng_double(&b->w.rng) < share;
}

/* One proposal into *out, or none (*any false) until results come back
** or, with nothing in flight, because everything is explored. */
static int propose(bestfirst *b, uint64_t *out, bool *any, kt_error *err) {
  const entry *from = NULL;
  size_t pos = 0;
  before was = {b->w.rng, b->nnodes, b->steps, b->drawn, b->made};
  *any = false;
  for (;;) {
    if (b->drawn < b->sample) {
      int rc = b->primed && b->episodes == 0 ? guess(b, out, err) : draw(b, out);
      if (rc < 0) return -1;
      if (rc) return 0;
      b->drawn++;
      break;
    }
    if (wants_guess(b)) {
      int rc = guess(b, out, err);
      if (rc < 0) return -1;
      if (!rc) {
        b->flights[b->nflights++] = (flight){*out, 0, 0, 0, FROM_GUESS, was};
        b->made++;
        *any = true;
        return 0;
      }
    }
    if (expand(b, out, &pos, &from, err)) return -1;
    if (from) break;
    if (b->nflights) return 0; /* the episode ends once its results are in */
    new_episode(b);
    b->episodes++;
    if (b->use_restart && plan_restart(b, err)) return -1;
  }
  /* Nodes stay where they are until the episode ends, after its flights. */
  b->flights[b->nflights++] = from ? (flight){*out, from->node, pos, from->cost, FROM_NEIGHBOUR, was}
                                   : (flight){*out, 0, 0, 0, FROM_SAMPLE, was};
  b->made++;
  *any = true;
  return 0;
}

static int bf_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  bestfirst *b = s->state;
  *got = 0;
  while (*got < max && b->nflights < b->ahead) {
    bool any;
    if (propose(b, &out[*got], &any, err)) return -1;
    if (!any) break;
    (*got)++;
  }
  return 0;
}

/* Changes older than every proposal in flight are for good. */
static void forget_settled(bestfirst *b) {
  uint64_t oldest = b->made;
  for (size_t i = 0; i < b->nflights; i++)
    if (b->flights[i].was.made < oldest) oldest = b->flights[i].was.made;
  size_t k = 0;
  while (k < b->nchanges && b->changes[k].made < oldest) k++;
  if (k == 0) return;
  memmove(b->changes, b->changes + k, (b->nchanges - k) * sizeof *b->changes);
  b->nchanges -= k;
}

static int bf_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  bestfirst *b = s->state;
  double cost = kt_result_cost(r);
  if (kt_walker_record(&b->w, index, r, err) ||
      (b->model.nparams && kt_pairwise_add(&b->model, r->vi, cost, err)) ||
      (b->sg.net && kt_surrogate_add(&b->sg, r->vi, cost, err)))
    return -1;
  for (size_t i = 0; i < b->nflights; i++) {
    if (b->flights[i].index != index) continue;
    flight f = b->flights[i];
    b->flights[i] = b->flights[--b->nflights];
    b->tries[f.kind]++;
    if (isfinite(cost) && (!b->nfound || cost < b->found[0].cost)) b->wins[f.kind]++;
    if (f.node) {
      node *n = &b->nodes[f.node - 1];
      n->outstanding--;
      if (!(cost < f.cost)) n->misses++;
    }
    break;
  }
  forget_settled(b);
  return isfinite(cost) ? insert(b, index, cost, err) : 0;
}

/* A flight taken back: its entry may propose it again. */
static void unmake(bestfirst *b, size_t i) {
  flight f = b->flights[i];
  b->flights[i] = b->flights[--b->nflights];
  if (!f.node || f.node > b->nnodes) return;
  node *n = &b->nodes[f.node - 1];
  n->outstanding--;
  if (f.pos < n->next) n->next = f.pos;
}

/* The searcher as before proposal `was`, where every proposal made since
** is taken back: the random state, and the entries expanded since
** unexpanded, so that it proposes what it would have with every result in
** (the draws of ahead 1). */
static void rewind_to(bestfirst *b, const before *was) {
  for (size_t i = 0; i < b->nflights; i++)
    if (b->flights[i].was.made >= was->made) {
      b->nchanges = 0; /* one made since stays: only the moves taken back go back */
      return;
    }
  for (; b->nchanges && b->changes[b->nchanges - 1].made >= was->made; b->nchanges--) {
    change *c = &b->changes[b->nchanges - 1];
    if (!c->node) remove_found(b, c->index);
    else if (c->node <= was->nnodes) b->nodes[c->node - 1].next = c->next;
  }
  b->w.rng = was->rng;
  b->steps = was->steps;
  b->drawn = was->drawn;
  for (size_t i = was->nnodes; i < b->nnodes; i++) kt_indices_clear(&b->nodes[i].moves);
  for (size_t i = 0; i < b->nfound; i++)
    if (b->found[i].node > was->nnodes) b->found[i].node = 0;
  b->nnodes = was->nnodes;
}

/* With renew on, every pending proposal from the first that is not part
** of the episode's sample is taken back, as if never made. So the
** proposals evaluated are those that ahead 1 makes, while a device still
** compiles up to `ahead` at once; a sample is random and is kept. */
static int bf_withdraw(kt_searcher *s, const uint64_t *pending, size_t n, size_t *keep,
                       kt_error *err) {
  bestfirst *b = s->state;
  (void)err;
  *keep = n;
  before first = {0};
  for (size_t k = 0; b->renew && k < n; k++) {
    size_t i = 0;
    while (i < b->nflights && b->flights[i].index != pending[k]) i++;
    if (i == b->nflights) continue; /* not ours to keep or take back */
    if (*keep == n && b->flights[i].kind == FROM_SAMPLE) continue;
    if (*keep == n) *keep = k, first = b->flights[i].was;
    unmake(b, i);
  }
  if (*keep < n && b->renew == 1) rewind_to(b, &first);
  if (b->renew == 2) b->nchanges = 0;
  return 0;
}

/* The prior, as `trust` fast configurations in the model's counts. */
static int bf_prior(kt_searcher *s, const kt_prior *p, kt_error *err) {
  bestfirst *b = s->state;
  (void)err;
  double sum = 0;
  for (size_t i = 0; i < p->n; i++)
    if (p->weight[i] > 0 && isfinite(p->weight[i])) sum += p->weight[i];
  if (!b->model.nparams || !(b->trust > 0) || !(sum > 0)) return 0;
  for (size_t i = 0; i < p->n; i++)
    kt_pairwise_prior(&b->model, p->vi + i * b->model.nparams, b->trust * p->weight[i] / sum);
  b->primed = true;
  return 0;
}

static void bf_destroy(void *state) {
  bestfirst *b = state;
  kt_walker_clear(&b->w);
  kt_pairwise_clear(&b->model);
  kt_surrogate_clear(&b->sg);
  new_episode(b);
  free(b->starts);
  free(b->nodes);
  free(b->found);
  free(b->changes);
  free(b->flights);
  free(b);
}

static const kt_searcher_ops bestfirst_ops = {"bestfirst", bf_start, bf_next, bf_report,
                                              bf_destroy, bf_withdraw, bf_prior};

int kt_search_bestfirst_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {"sample", "width",   "patience", "ahead",
                                        "model",  "restart", "guess",    "pool",
                                        "adapt",  "across",  "renew",    "pairs",
                                        "twins",  "trust",   NULL};
  double sample, width, patience, ahead, model, restart, guessing, pool, adapt,
      across, renew, pairs, twins, trust;
  if (kt_search_opts_check(o, "bestfirst", allowed, err) ||
      kt_search_opt_whole(o, "bestfirst", "sample", 16, 1e-9, 1e9, true, &sample, err) ||
      kt_search_opt_whole(o, "bestfirst", "width", 8, 1, 1e9, false, &width, err) ||
      kt_search_opt_whole(o, "bestfirst", "patience", 4, 0, 1e9, false, &patience, err) ||
      kt_search_opt_whole(o, "bestfirst", "ahead", 8, 1, 1024, false, &ahead, err) ||
      kt_search_opt_whole(o, "bestfirst", "model", 1, 0, 1, false, &model, err) ||
      kt_search_opt_whole(o, "bestfirst", "restart", 0, 0, 1, false, &restart, err) ||
      kt_search_opt_whole(o, "bestfirst", "guess", 0, 0, 1e9, false, &guessing, err) ||
      kt_search_opt_whole(o, "bestfirst", "pool", 64, 1, 1e6, false, &pool, err) ||
      kt_search_opt_whole(o, "bestfirst", "adapt", 0, 0, 1, false, &adapt, err) ||
      kt_search_opt_number(o, "bestfirst", "across", 0, 0, 1e9, &across, err) ||
      kt_search_opt_whole(o, "bestfirst", "renew", 1, 0, 2, false, &renew, err) ||
      kt_search_opt_whole(o, "bestfirst", "pairs", 4, 0, 1e6, false, &pairs, err) ||
      kt_search_opt_whole(o, "bestfirst", "twins", 2, 0, 2, false, &twins, err) ||
      kt_search_opt_number(o, "bestfirst", "trust", 16, 0, 1e6, &trust, err))
    return -1;
  bestfirst *b = kt_calloc(1, sizeof *b, err);
  if (!b) return -1;
  b->ahead = (unsigned)ahead;
  if (!(b->flights = kt_calloc(b->ahead, sizeof *b->flights, err))) {
    free(b);
    return -1;
  }
  b->seed = o->seed;
  b->sample_opt = sample;
  b->width = (unsigned)width;
  b->patience = (unsigned)patience;
  b->use_model = model != 0;
  b->use_restart = restart != 0;
  b->guess = (unsigned)guessing;
  b->pool = (unsigned)pool;
  b->adapt = adapt != 0;
  b->across = across;
  b->renew = (unsigned)renew;
  b->pairs = (unsigned)pairs;
  b->twins = (unsigned)twins;
  b->trust = trust;
  kt_indexmap_init(&b->in_found);
  s->ops = &bestfirst_ops;
  s->state = b;
  return 0;
}
