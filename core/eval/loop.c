/*
** loop.c: the search loop. Proposals are asked for ahead of evaluation
** (up to lookahead, within the budget) so that the evaluator can start
** building them while it runs the current one. A searcher that proposes
** fewer than it was asked for is not asked again until the next result
** comes back, so one that needs each result before its next proposal
** proposes one at a time and searches exactly as it would with no
** lookahead: the same seed gives the same search on any machine.
**
** An asynchronous evaluator (several devices) has a slot per device: the
** loop keeps each busy with a pending proposal (the one the evaluator
** picks), takes results in the order they finish, and once the search is
** over (or on an error) still takes in what is in flight. Its budget
** counts what is in flight as spent.
**
** A searcher with a withdraw operation may take back, after each result,
** the newest of the proposals not yet evaluated (search.h): they count
** as never proposed. Their compiles may have started; results->withdrawn
** counts those withdrawn and not proposed again, whose programs went unused.
**
** A synchronous evaluator that says which proposals are ready (loop.h)
** may have them evaluated out of order: one whose compile has run long
** (the evaluator's overtake) holds none of those behind it whose compiles
** are over. What is evaluated is what was proposed, so a searcher that
** does not need the results to propose (exhaustive, random) evaluates
** the same configurations for a seed, perhaps in another order; one that
** does (bestfirst hears of results in the order they come) may search on
** differently. The loop sets aside a proposal whose compile the evaluator
** calls an outlier (loop.h), and then no longer counts it against the
** budget.
*/
#include "loop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "indexmap.h"
#include "journal.h"
#include "interrupt.h"
#include "metrics.h"

/* A searcher whose proposals were all evaluated before, this many times in
** a row, has nothing new to offer. */
#define MAX_REPEATS 10000

/* index: in the space the searcher walks; natural: in the space as
** defined (space.h), the index the evaluator and the results see. */
typedef struct proposal {
  uint64_t index, natural;
  double searcher_ns;
  unsigned again; /* proposed again while pending: reported that many more times */
  bool seed;      /* not the searcher's own: see start() */
  bool deferred;  /* set aside: its compile is an outlier (defer_outliers) */
  char *why;      /* ... and why (malloc'd), until it is taken or recorded */
} proposal;

/* A configuration in flight on an asynchronous evaluator. */
typedef struct flight {
  proposal p;
  kt_result res;
  bool busy;
} flight;

struct kt_loop {
  const kt_space *space;
  const kt_loop_opts *o;
  const kt_evaluator *ev;
  kt_results *results;
  kt_indexmap seen;    /* index -> position in results, or pending */
  kt_indexmap taken_back; /* withdrawn index -> 1 while not proposed again, else 0 */
  uint32_t *vi;
  double clock_ns;     /* KT_CLOCK_RESULTS: the results' summed time */
  proposal *pending;   /* proposals not yet evaluated, in the order proposed (a ring) */
  size_t head, npending, lookahead;
  size_t cap;          /* the ring's size: the lookahead, and as many set aside */
  size_t ndeferred;    /* pending proposals set aside */
  uint64_t *batch;     /* what the searcher proposed last */
  bool exhausted;      /* the searcher said it has nothing more */
  bool waiting;        /* it proposed fewer than asked: it waits for a result */
  size_t repeats;
  kt_stop_state st;
  proposal current;    /* the one whose result is being made */
  size_t seeds;        /* seeds not yet evaluated */
  bool started;
  int64_t t0;
  flight *slots;       /* asynchronous evaluators: what is in flight */
  size_t nslots, inflight;
};

typedef struct kt_loop loop;

#define PENDING UINT64_MAX
#define DROPPED (UINT64_MAX - 1) /* proposed, but its evaluation failed: not evaluated */

static int report(loop *l, uint64_t index, uint64_t at, kt_error *err) {
  kt_searcher *s = l->o->searcher;
  if (s->ops->report(s, index, &l->results->items[at], err))
    return kt_fail_prefix(err, "searcher %s: ", s->ops->name);
  return 0;
}

/* The index of a result: the searcher walks the space as the device's
** limits left it, results number it as defined (space.h). */
static int natural(const loop *l, const uint32_t *vi, uint64_t *index, kt_error *err) {
  if (kt_space_natural_index(l->space, vi, index) == 0) return 0;
  return kt_fail(err, "a configuration proposed is not in the space as defined");
}

static int enqueue(loop *l, uint64_t index, double searcher_ns, kt_error *err) {
  uint64_t nat;
  uint64_t unused;
  if (kt_indexmap_get(&l->taken_back, index, &unused) && unused) {
    if (kt_indexmap_put(&l->taken_back, index, 0, err)) return -1;
    l->results->withdrawn--;
  }
  if (kt_indexmap_put(&l->seen, index, PENDING, err) ||
      kt_space_config(l->space, index, l->vi, err) || natural(l, l->vi, &nat, err))
    return -1;
  l->pending[(l->head + l->npending++) % l->cap] =
      (proposal){index, nat, searcher_ns, 0, false, false, NULL};
  return l->ev->prefetch ? l->ev->prefetch(l->ev->ud, nat, l->vi, err) : 0;
}

/* Asks the searcher for as many proposals as the lookahead and the budget
** allow; repeats of evaluated configurations are answered at once. */
static int fill(loop *l, kt_error *err) {
  kt_searcher *s = l->o->searcher;
  uint64_t budget = kt_stop_remaining(&l->o->stop, &l->st);
  size_t held = l->npending - l->ndeferred + l->inflight;
  budget = budget > held ? budget - held : 0;
  size_t want = l->lookahead - (l->npending - l->ndeferred);
  if (want > l->cap - l->npending) want = l->cap - l->npending;
  if (want > budget) want = (size_t)budget;
  if (want == 0 || l->exhausted) return 0;
  size_t got = 0;
  int64_t t0 = kt_now_ns();
  if (s->ops->next(s, l->batch, want, &got, err))
    return kt_fail_prefix(err, "searcher %s: ", s->ops->name);
  double each = (double)(kt_now_ns() - t0) / (double)(got ? got : 1);
  bool fresh = false;
  for (size_t i = 0; i < got; i++) {
    uint64_t index = l->batch[i], at;
    if (index >= l->st.space)
      return kt_fail(err, "searcher %s proposed configuration %llu of a space of %llu",
                     s->ops->name, (unsigned long long)index, (unsigned long long)l->st.space);
    if (!kt_indexmap_get(&l->seen, index, &at) || at == DROPPED) {
      if (enqueue(l, index, each, err)) return -1;
      fresh = true;
    } else if (at == PENDING) {
      for (size_t k = 0; k < l->npending; k++) {
        proposal *p = &l->pending[(l->head + k) % l->cap];
        if (p->index == index) p->again++;
      }
      for (size_t k = 0; k < l->nslots; k++) /* or in flight */
        if (l->slots[k].busy && l->slots[k].p.index == index) l->slots[k].p.again++;
    } else if (report(l, index, at, err)) {
      return -1;
    }
  }
  l->repeats = fresh || got == 0 ? 0 : l->repeats + 1;
  /* Nothing proposed and nothing to wait for: the searcher is done. */
  if (got == 0 && l->npending == 0 && l->inflight == 0) l->exhausted = true;
  l->waiting = got < want && (l->npending > 0 || l->inflight > 0);
  return 0;
}

static proposal *pending_at(loop *l, size_t k) {
  return &l->pending[(l->head + k) % l->cap];
}

/* The pending proposal at position at, taken out of them. */
static proposal take_at(loop *l, size_t at) {
  proposal p = *pending_at(l, at);
  if (at == 0) {
    l->head = (l->head + 1) % l->cap;
  } else {
    for (size_t k = at; k + 1 < l->npending; k++) *pending_at(l, k) = *pending_at(l, k + 1);
  }
  l->npending--;
  if (p.deferred) l->ndeferred--;
  return p;
}

static proposal pop(loop *l) { return take_at(l, 0); }

/* The pending proposal at position at gets its (empty) result. */
static int take_next(loop *l, size_t at, kt_result **res, kt_error *err) {
  l->current = take_at(l, at);
  free(l->current.why); /* set aside, but its compile came to an end in time */
  l->current.why = NULL;
  if (kt_space_config(l->space, l->current.index, l->vi, err)) return -1;
  if (!(*res = kt_results_add(l->results, l->current.natural, l->vi, err))) return -1;
  return kt_indexmap_put(&l->seen, l->current.index, l->results->n - 1, err);
}

/* The searcher's say over the newest pending proposals (search.h): those
** after the last seed or repeat, which are its own and proposed once. */
static int withdraw(loop *l, kt_error *err) {
  kt_searcher *s = l->o->searcher;
  if (!s->ops->withdraw) return 0;
  size_t first = 0;
  for (size_t k = 0; k < l->npending; k++)
    if (pending_at(l, k)->seed || pending_at(l, k)->again || pending_at(l, k)->deferred)
      first = k + 1;
  size_t n = l->npending - first, keep = n;
  if (n == 0) return 0;
  for (size_t k = 0; k < n; k++) l->batch[k] = pending_at(l, first + k)->index;
  if (s->ops->withdraw(s, l->batch, n, &keep, err))
    return kt_fail_prefix(err, "searcher %s: ", s->ops->name);
  if (keep > n)
    return kt_fail(err, "searcher %s kept %zu of %zu proposals", s->ops->name, keep, n);
  for (size_t k = first + keep; k < l->npending; k++) {
    uint64_t index = pending_at(l, k)->index, held;
    if (l->ev->withdrawn) l->ev->withdrawn(l->ev->ud, pending_at(l, k)->natural);
    bool again = kt_indexmap_get(&l->taken_back, index, &held) && held;
    if (kt_indexmap_put(&l->seen, index, DROPPED, err) ||
        (!again && kt_indexmap_put(&l->taken_back, index, 1, err)))
      return -1;
    if (!again) l->results->withdrawn++;
  }
  if (keep < n) l->waiting = false;
  l->npending = first + keep;
  return 0;
}

/* The result at `at` of proposal p is in: journal, progress, searcher. */
static int record(loop *l, proposal p, uint64_t at, bool recorded, kt_error *err) {
  if (p.seed && !p.deferred) l->seeds--; /* a seed set aside was counted out then */
  kt_result *res = &l->results->items[at];
  res->resumed = recorded;
  if (l->o->metrics && kt_metrics_apply(l->o->metrics, l->results, res, err)) return -1;
  res->over.searcher += p.searcher_ns;
  if (res->finished == 0) res->finished = kt_wall_s(); /* a replay keeps the recorded time */
  l->clock_ns += res->over.total;
  res->elapsed_ns = l->o->clock == KT_CLOCK_WALL ? (double)(kt_now_ns() - l->t0) : l->clock_ns;
  kt_stop_state_record(&l->st, res);
  if (l->o->journal && !recorded && kt_journal_append(l->o->journal, l->results, res, err))
    return -1;
  if (l->o->progress && l->o->progress(l->results, res, l->o->progress_ud, err))
    return kt_fail_prefix(err, "progress: ");
  l->waiting = false;
  for (unsigned k = 0; k <= p.again; k++)
    if (report(l, p.index, at, err)) return -1;
  return withdraw(l, err);
}

int kt_loop_record(kt_loop *l, bool recorded, kt_error *err) {
  return record(l, l->current, l->results->n - 1, recorded, err);
}

void kt_loop_drop(kt_loop *l) {
  kt_error ignored; /* the index is in the map already: nothing to allocate */
  kt_results_drop_last(l->results);
  kt_indexmap_put(&l->seen, l->current.index, DROPPED, &ignored);
  if (l->current.seed && !l->current.deferred) l->seeds--;
  l->waiting = false;
}

/* Checked before each evaluation, but only once something was evaluated:
** a tuning always has at least one result. */
static const char *stop_reason(loop *l, int64_t t0) {
  kt_stop_state *st = &l->st;
  if (kt_interrupted()) return "interrupted";
  if (st->evaluated == 0) return NULL;
  st->elapsed_ns = l->o->clock == KT_CLOCK_WALL ? (double)(kt_now_ns() - t0) : l->clock_ns;
  const char *why = kt_stop_reached(&l->o->stop, st);
  if (!why && st->evaluated >= st->space) why = "space explored";
  return why;
}

/* The seeds, before the searcher's first proposals. The searcher hears of
** their results (as of any configuration evaluated before it proposed
** it), and is asked for nothing until they are all in, so that a
** searcher that waits for the result of its own proposal never gets a
** seed's instead. */
static int start(loop *l, kt_error *err) {
  kt_searcher *s = l->o->searcher;
  l->t0 = kt_now_ns();
  l->started = true;
  if (s->ops->start(s, l->space, err)) return kt_fail_prefix(err, "searcher %s: ", s->ops->name);
  if (l->o->prior.n && s->ops->prior && s->ops->prior(s, &l->o->prior, err))
    return kt_fail_prefix(err, "searcher %s: ", s->ops->name);
  for (size_t i = 0; i < l->o->nseeds && l->npending < l->lookahead; i++) {
    uint64_t index = l->o->seeds[i], at;
    if (index >= l->st.space) return kt_fail(err, "seed %zu is beyond the space", i + 1);
    if (kt_indexmap_get(&l->seen, index, &at)) continue;
    if (enqueue(l, index, 0, err)) return -1;
    pending_at(l, l->npending - 1)->seed = true;
    l->seeds++;
  }
  return 0;
}

/* Proposals up to the lookahead. 1: one is pending; 0: the search is
** over (*why says why); 2: nothing to do before a result in flight is in. */
static int advance(loop *l, const char **why, kt_error *err) {
  if (!l->started && start(l, err)) return -1;
  *why = stop_reason(l, l->t0);
  while (!*why && !l->seeds && l->npending - l->ndeferred < l->lookahead &&
         l->npending < l->cap && !l->exhausted && !l->waiting) {
    size_t before = l->npending;
    if (fill(l, err)) return -1;
    if (l->repeats >= MAX_REPEATS) *why = "searcher repeats itself";
    /* nothing new: go on with what is pending, or wait for what is in flight */
    if (l->npending == before && (l->npending > 0 || l->inflight > 0)) break;
    if (kt_stop_remaining(&l->o->stop, &l->st) <= l->npending - l->ndeferred + l->inflight) break;
  }
  if (*why) return 0;
  if (l->npending > 0) return 1;
  if (l->inflight > 0) return 2;
  *why = "searcher finished";
  return 0;
}

/* How often a wait for compiles looks up (kt_loop_next): at the clock
** (stop.seconds), for Ctrl-C and for outliers. */
#define LOOK_UP_NS 100000000

/* The pending proposal to evaluate next (loop.h): the first that is ready
** behind only proposals set aside or that it may overtake; without ready,
** the first. SIZE_MAX: none may go now. */
static size_t choose(loop *l) {
  const kt_evaluator *ev = l->ev;
  if (!ev->ready) return 0;
  for (size_t k = 0; k < l->npending; k++) {
    const proposal *p = pending_at(l, k);
    if (ev->ready(ev->ud, p->natural)) return k;
    if (!p->deferred && !(ev->overtake && ev->overtake(ev->ud, p->natural))) break;
  }
  return SIZE_MAX;
}

/* Sets aside the pending proposals whose compiles the evaluator calls
** outliers; returns how many it set aside now, or -1. A seed set aside
** holds the searcher's proposals back no more. */
static int defer_outliers(loop *l, kt_error *err) {
  int n = 0;
  for (size_t k = 0; l->ev->outlier && k < l->npending; k++) {
    proposal *p = pending_at(l, k);
    char why[512];
    if (p->deferred || !l->ev->outlier(l->ev->ud, p->natural, why, sizeof why)) continue;
    if (!(p->why = kt_strdup(why, err))) return -1;
    p->deferred = true;
    l->ndeferred++;
    if (p->seed) l->seeds--;
    n++;
  }
  return n;
}

/* The search is over (stopped says why): each proposal set aside is
** recorded compile_deferred, with why, and leaves the pending ones; the
** others stay unevaluated, as ever (their compiles are the evaluator's to
** end). */
static int settle(loop *l, const char *stopped, kt_error *err) {
  for (size_t k = 0; k < l->npending;) {
    proposal *p = pending_at(l, k);
    if (!p->deferred) {
      k++;
      continue;
    }
    proposal d = take_at(l, k);
    kt_result *res = NULL;
    size_t size = strlen(d.why) + strlen(stopped) + 96;
    if (kt_space_config(l->space, d.index, l->vi, err) ||
        !(res = kt_results_add(l->results, d.natural, l->vi, err)) ||
        !(res->error = kt_alloc(size, err))) {
      free(d.why);
      return -1;
    }
    snprintf(res->error, size, "%s; the tuning stopped (%s) before it was over: not evaluated",
             d.why, stopped);
    free(d.why);
    res->status = KT_COMPILE_DEFERRED;
    res->infrastructure = true;
    res->finished = kt_wall_s();
    res->elapsed_ns = l->o->clock == KT_CLOCK_WALL ? (double)(kt_now_ns() - l->t0) : l->clock_ns;
    if (kt_indexmap_put(&l->seen, d.index, l->results->n - 1, err) ||
        (l->o->journal && kt_journal_append(l->o->journal, l->results, res, err)))
      return -1;
    if (l->o->progress && l->o->progress(l->results, res, l->o->progress_ud, err))
      return kt_fail_prefix(err, "progress: ");
  }
  return 0;
}

int kt_loop_next(kt_loop *l, kt_result **res, kt_error *err) {
  for (;;) {
    uint64_t mark = l->ev->marked ? l->ev->marked(l->ev->ud) : 0;
    const char *why = NULL;
    int rc = advance(l, &why, err);
    if (rc < 0) return -1;
    if (rc == 0) {
      l->results->stopped = why;
      return settle(l, why, err) ? -1 : 0;
    }
    size_t at = choose(l);
    if (at != SIZE_MAX) return take_next(l, at, res, err) ? -1 : 1;
    int deferred = defer_outliers(l, err);
    if (deferred < 0) return -1;
    /* none is ready: wait for a compile, unless others may come in place of those set aside */
    if (deferred == 0) l->ev->await(l->ev->ud, mark, kt_now_ns() + LOOK_UP_NS);
  }
}

/* ---- asynchronous evaluators ---- */

/* Slot s comes free, its evaluation failed: its result is dropped. */
static void drop(loop *l, size_t s) {
  l->slots[s].busy = false;
  l->inflight--;
  kt_result_clear(&l->slots[s].res);
}

/* Moves the finished result of slot s into the results and records it. */
static int land(loop *l, size_t s, bool recorded, kt_error *err) {
  flight *f = &l->slots[s];
  kt_result done = f->res;
  f->busy = false;
  memset(&f->res, 0, sizeof f->res);
  l->inflight--;
  kt_result *dst = kt_results_add(l->results, done.index, done.vi, err);
  if (!dst) {
    kt_result_clear(&done);
    return -1;
  }
  uint32_t *vi = dst->vi;
  *dst = done;
  dst->vi = vi;
  free(done.vi);
  if (kt_indexmap_put(&l->seen, f->p.index, l->results->n - 1, err)) return -1;
  return record(l, f->p, l->results->n - 1, recorded, err);
}

/* The pending proposal the evaluator picks for slot s (the first when it
** does not pick), taken out of the pending ones. */
static proposal pick(loop *l, const kt_evaluator *ev, size_t s) {
  if (!ev->pick) return pop(l);
  for (size_t k = 0; k < l->npending; k++) l->batch[k] = pending_at(l, k)->natural;
  size_t at = ev->pick(ev->ud, s, l->batch, l->npending);
  return take_at(l, at < l->npending ? at : 0);
}

/* A pending proposal, into a free slot and on to the evaluator. */
static int submit(loop *l, const kt_evaluator *ev, kt_error *err) {
  size_t s = 0;
  while (l->slots[s].busy) s++;
  flight *f = &l->slots[s];
  f->p = pick(l, ev, s);
  size_t np = kt_space_nparams(l->space);
  f->res = (kt_result){.index = f->p.natural, .time_ns = NAN, .elapsed_ns = NAN};
  if (!(f->res.vi = kt_calloc(np + 1, sizeof *f->res.vi, err)) ||
      kt_space_config(l->space, f->p.index, f->res.vi, err))
    return kt_result_clear(&f->res), -1;
  f->busy = true;
  l->inflight++;
  int rc = ev->submit(ev->ud, s, &f->res, err);
  if (rc < 0) {
    drop(l, s);
    return -1;
  }
  return rc == 1 ? land(l, s, true, err) : 0;
}

/* After an error: what is in flight comes in (and is kept) before the
** evaluator may be ended; errors meanwhile are the first one's. */
static void drain(loop *l, const kt_evaluator *ev) {
  kt_error ignored;
  while (l->inflight > 0) {
    size_t s;
    if (ev->wait(ev->ud, &s, &ignored) >= 0) land(l, s, false, &ignored);
    else drop(l, s);
  }
}

/* Keeps every slot busy while there is something to propose; once the
** search is over, what is in flight still comes in and is recorded. */
static int run_async(loop *l, const kt_evaluator *ev, kt_error *err) {
  const char *why = NULL;
  int rc = 0;
  for (;;) {
    while (rc == 0 && !why && l->inflight < l->nslots) {
      int a = advance(l, &why, err);
      if (a < 0) rc = -1;
      if (a != 1) break;
      if (submit(l, ev, err)) rc = -1;
    }
    if (rc || l->inflight == 0) break;
    size_t s;
    kt_error later;
    int done = ev->wait(ev->ud, &s, err);
    if (done < 0) drop(l, s);
    if (done < 0 || land(l, s, false, done == 2 ? &later : err) || done == 2) rc = -1;
  }
  if (rc) drain(l, ev);
  else l->results->stopped = why;
  return rc;
}

kt_loop *kt_loop_new(const kt_space *space, const kt_loop_opts *o, const kt_evaluator *ev,
                     kt_results *results, kt_error *err) {
  if (!o->searcher) return kt_fail(err, "no searcher given"), NULL;
  if (!kt_space_generated(space)) return kt_fail(err, "the space has not been generated"), NULL;
  kt_loop *l = kt_calloc(1, sizeof *l, err);
  if (!l) return NULL;
  *l = (loop){.space = space, .o = o, .ev = ev, .results = results,
              .lookahead = o->lookahead ? o->lookahead : KT_LOOKAHEAD_MIN};
  kt_indexmap_init(&l->seen);
  kt_indexmap_init(&l->taken_back);
  if (kt_stop_state_init(&l->st, &o->stop, kt_space_count(space), err)) {
    free(l);
    return NULL;
  }
  l->vi = kt_calloc(kt_space_nparams(space) + 1, sizeof *l->vi, err);
  l->cap = ev->ready && ev->outlier ? 2 * l->lookahead : l->lookahead;
  l->pending = kt_calloc(l->cap, sizeof *l->pending, err);
  l->batch = kt_calloc(l->cap, sizeof *l->batch, err);
  l->nslots = ev->slots > 1 ? ev->slots : 0;
  if (l->nslots) l->slots = kt_calloc(l->nslots, sizeof *l->slots, err);
  if (!l->vi || !l->pending || !l->batch || (l->nslots && !l->slots)) {
    kt_loop_free(l);
    return NULL;
  }
  if (!results->searcher) results->searcher = kt_strdup(o->searcher->ops->name, NULL);
  return l;
}

void kt_loop_free(kt_loop *l) {
  if (!l) return;
  kt_stop_state_clear(&l->st);
  free(l->vi);
  for (size_t k = 0; l->pending && k < l->npending; k++) free(pending_at(l, k)->why);
  free(l->pending);
  free(l->batch);
  for (size_t s = 0; s < l->nslots; s++) kt_result_clear(&l->slots[s].res);
  free(l->slots);
  kt_indexmap_clear(&l->seen);
  kt_indexmap_clear(&l->taken_back);
  free(l);
}

int kt_search_loop(const kt_space *space, const kt_loop_opts *o, const kt_evaluator *ev,
                   kt_results *results, kt_error *err) {
  kt_loop *l = kt_loop_new(space, o, ev, results, err);
  if (!l) return -1;
  if (l->nslots) {
    int rc = run_async(l, ev, err);
    kt_loop_free(l);
    return rc;
  }
  kt_result *res;
  int rc;
  while ((rc = kt_loop_next(l, &res, err)) > 0) {
    int done = ev->evaluate(ev->ud, res, err);
    kt_error later;
    if (done < 0) kt_loop_drop(l);
    if (done < 0 || kt_loop_record(l, done == 1, done == 2 ? &later : err) || done == 2) {
      rc = -1;
      break;
    }
  }
  kt_loop_free(l);
  return rc < 0 ? -1 : 0;
}
