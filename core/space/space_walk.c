/*
** space_walk.c: the pruned depth-first walk over one group of parameters,
** on the calling thread, or split into subtrees that threads take in turn.
**
** The walk binds parameters in generation order and checks each
** constraint as soon as its last parameter is bound. Where the unbound
** parameters fall apart into parts that no constraint links (seqplan in
** space_int.h), each part is walked once and the parts' tuples are
** combined: for GEMM-like spaces, tiles in M, in N and in K are found
** independently once the thread counts are bound.
**
** A walk on threads first lists the valid prefixes of the first few
** parameters; each prefix is a task whose tuples go to a buffer of its
** own, joined in prefix order. The trie sorts the tuples (trie.h), so the
** space never depends on the number of threads. Only groups whose
** constraints are all pure are walked on threads: a Lua constraint is
** never called from a worker.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "space_int.h"

/* Groups with a smaller Cartesian product are walked on one thread:
** starting threads would cost more than they save. */
#define PARALLEL_PRODUCT 65536.0
/* Subtrees per thread, so that subtrees of uneven size still balance. */
#define TASKS_PER_THREAD 16

typedef struct rowbuf {
  char *data;
  uint64_t n, cap;
} rowbuf;

typedef struct walker {
  const kt_space *s;
  const group *g;
  uint32_t *vi;          /* a value index for every parameter */
  const kt_value **args; /* a constraint's arguments */
  size_t end;            /* the depth at which a tuple of the group is complete */
  bool store;
  bool prefix;           /* store generation-order prefixes, not rows */
  unsigned width;        /* bytes per stored value index */
  rowbuf out;
  rowbuf *parts;         /* per plan: the tuples of a part, 4 bytes per value */
  atomic_size_t *used;   /* bytes the walk's buffers take, on every thread ... */
  size_t budget;         /* ... and the most they may */
  uint64_t steps;        /* values bound so far ... */
  uint64_t max_steps;    /* ... and the most it may bind (0: no limit) */
  bool over;             /* it stopped at max_steps */
  kt_error *err;
} walker;

static int walker_init(walker *w, const kt_space *s, const group *g, atomic_size_t *used,
                       size_t budget, kt_error *err) {
  size_t maxargs = 1;
  for (size_t c = 0; c < s->ncons; c++)
    if (s->cons[c].n > maxargs) maxargs = s->cons[c].n;
  *w = (walker){.s = s, .g = g, .end = g->n, .used = used, .budget = budget, .err = err};
  w->vi = kt_calloc(s->nparams + 1, sizeof *w->vi, err);
  w->args = kt_calloc(maxargs, sizeof *w->args, err);
  w->parts = kt_calloc(g->nplans + 1, sizeof *w->parts, err);
  if (w->vi && w->args && w->parts) return 0;
  free(w->vi);
  free(w->args);
  free(w->parts);
  return -1;
}

static void walker_clear(walker *w) {
  for (size_t i = 0; i < w->g->nplans; i++) free(w->parts[i].data);
  free(w->parts);
  free(w->vi);
  free(w->args);
}

static void name_constraint(const kt_space *s, const constraint *c, kt_error *err) {
  if (c->label) {
    kt_fail_prefix(err, "%s: ", c->label);
    return;
  }
  char names[256] = "";
  size_t used = 0;
  for (size_t j = 0; j < c->n && used < sizeof names; j++)
    used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", j ? ", " : "",
                             s->params[c->params[j]].name);
  kt_fail_prefix(err, "constraint on %s: ", names);
}

int check_constraint(const kt_space *s, const constraint *c, const uint32_t *vi,
                     const kt_value **args, kt_error *err) {
  int rc;
  if (c->vi_fn) {
    rc = c->vi_fn(s, vi, c->ud, err);
  } else {
    for (size_t j = 0; j < c->n; j++) {
      size_t p = c->params[j];
      args[j] = &s->params[p].values[vi[p]];
    }
    rc = c->fn(args, c->n, c->ud, err);
  }
  if (rc < 0) name_constraint(s, c, err);
  return rc;
}

static int check(walker *w, const constraint *c) {
  return check_constraint(w->s, c, w->vi, w->args, w->err);
}

int group_accepts(const kt_space *s, const group *g, const uint32_t *vi, kt_error *err) {
  const kt_value *stack[16], **args = stack;
  int ok = 1;
  for (size_t d = 0; d < g->n && ok == 1; d++)
    for (size_t k = 0; k < g->nchecks[d] && ok == 1; k++) {
      const constraint *c = &s->cons[g->checks[d][k]];
      if (c->n > 16 && !(args = kt_calloc(c->n, sizeof *args, err))) return -1;
      ok = check_constraint(s, c, vi, args, err);
      if (args != stack) free(args);
      args = stack;
    }
  return ok;
}

static void over_budget(walker *w) {
  char names[256] = "";
  size_t used = 0;
  for (size_t j = 0; j < w->g->n && used < sizeof names; j++)
    used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", j ? ", " : "",
                             w->s->params[w->g->params[j]].name);
  double all = 1;
  for (size_t j = 0; j < w->g->n; j++) all *= (double)w->s->params[w->g->params[j]].nvalues;
  kt_fail(w->err, "the valid configurations of %s (of %.3g combinations) take more than %zu "
          "bytes, the space's limit (k:space():max_bytes(n) raises it); search = \"random\" "
          "with a budget (stop = {count = n} or {seconds = s}) samples a space too large to "
          "list, and k:space():estimate() counts it", names, all, kt_space_max_bytes(w->s));
}

/* Room for one more row of rowbytes at the end of b, within the budget. */
static char *next_row(walker *w, rowbuf *b, size_t rowbytes) {
  if (b->n == b->cap) {
    uint64_t cap = b->cap ? b->cap * 2 : 1024;
    size_t more = (size_t)(cap - b->cap) * rowbytes;
    if (atomic_fetch_add(w->used, more) + more > w->budget) return over_budget(w), NULL;
    char *grown = realloc(b->data, (size_t)cap * rowbytes);
    if (!grown)
      return kt_fail(w->err, "out of memory: over %llu valid tuples in one group",
                     (unsigned long long)b->n), NULL;
    b->data = grown;
    b->cap = cap;
  }
  return b->data + (size_t)b->n++ * rowbytes;
}

/* Stores the values of cols (ncols of them) as a row of b. */
static int store_row(walker *w, rowbuf *b, const size_t *cols, size_t ncols, unsigned width) {
  char *row = next_row(w, b, ncols * width);
  if (!row) return -1;
  for (size_t j = 0; j < ncols; j++) kt_cell_put(row, width, j, w->vi[cols[j]]);
  return 0;
}

/* One completion of the sequence sp, counted into *n: a tuple of the group
** (root) or of a part. */
static int complete(walker *w, const seqplan *sp, bool root, uint64_t *n) {
  (*n)++;
  if (!w->store) return 0;
  if (!root) return store_row(w, &w->parts[sp->id], sp->params, sp->n, sizeof(uint32_t));
  if (w->prefix) return store_row(w, &w->out, w->g->order, w->end, w->width);
  return store_row(w, &w->out, w->g->params, w->g->n, w->width);
}

/* Binds every tuple of part k in turn, then those of the parts after it. */
static int combine(walker *w, const seqplan *sp, size_t k, bool root, uint64_t *n) {
  if (k == sp->nparts) return complete(w, sp, root, n);
  const seqplan *q = &sp->parts[k];
  const rowbuf *b = &w->parts[q->id];
  for (uint64_t t = 0; t < b->n; t++) {
    const uint32_t *tuple = (const uint32_t *)b->data + t * q->n;
    for (size_t j = 0; j < q->n; j++) w->vi[q->params[j]] = tuple[j];
    if (combine(w, sp, k + 1, root, n)) return -1;
  }
  return 0;
}

static int walk_seq(walker *w, const seqplan *sp, size_t i, bool root, uint64_t *n);

/* The rest of sp falls apart: each part is walked once, and its tuples
** are combined with those of the others (or only counted). */
static int walk_split(walker *w, const seqplan *sp, bool root, uint64_t *n) {
  uint64_t combos = 1;
  for (size_t k = 0; k < sp->nparts; k++) {
    const seqplan *q = &sp->parts[k];
    uint64_t found = 0;
    w->parts[q->id].n = 0;
    if (walk_seq(w, q, 0, false, &found)) return -1;
    if (found == 0) return 0;
    if (__builtin_mul_overflow(combos, found, &combos)) combos = UINT64_MAX;
  }
  if (w->store) return combine(w, sp, 0, root, n);
  if (__builtin_add_overflow(*n, combos, n))
    return kt_fail(w->err, "more than 2^64 valid tuples in one group");
  return 0;
}

/* Binds sp's parameters from position i on, pruning as it goes. */
static int walk_seq(walker *w, const seqplan *sp, size_t i, bool root, uint64_t *n) {
  if (i == (root ? w->end : sp->n)) return complete(w, sp, root, n);
  if (i == sp->split_at) return walk_split(w, sp, root, n);
  const group *g = w->g;
  size_t p = sp->params[i], d = sp->depth[i];
  uint32_t nv = (uint32_t)w->s->params[p].nvalues;
  for (uint32_t v = 0; v < nv; v++) {
    if (w->max_steps && ++w->steps > w->max_steps) {
      w->over = true;
      return -1;
    }
    w->vi[p] = v;
    int ok = 1;
    for (size_t k = 0; k < g->nchecks[d] && ok == 1; k++) ok = check(w, &w->s->cons[g->checks[d][k]]);
    if (ok < 0) return -1;
    if (ok && walk_seq(w, sp, i + 1, root, n)) return -1;
  }
  return 0;
}

/* ---- on several threads ---- */

typedef struct task_out {
  rowbuf rows;
  uint64_t count;
} task_out;

typedef struct pool {
  const kt_space *s;
  const group *g;
  atomic_size_t *used;
  size_t budget;
  bool store;
  unsigned width;
  size_t depth;             /* of the prefixes */
  const uint32_t *prefixes; /* depth value indices per task */
  size_t ntasks;
  task_out *outs;
  atomic_size_t next;
  atomic_bool failed;
} pool;

typedef struct worker {
  pool *pl;
  size_t failed_task; /* SIZE_MAX: none */
  kt_error err;
  pthread_t thread;
} worker;

static void run_tasks(worker *wk) {
  pool *pl = wk->pl;
  walker w;
  if (walker_init(&w, pl->s, pl->g, pl->used, pl->budget, &wk->err)) {
    wk->failed_task = 0;
    atomic_store(&pl->failed, true);
    return;
  }
  w.store = pl->store;
  w.width = pl->width;
  while (!atomic_load(&pl->failed)) {
    size_t t = atomic_fetch_add(&pl->next, 1);
    if (t >= pl->ntasks) break;
    for (size_t d = 0; d < pl->depth; d++) w.vi[pl->g->order[d]] = pl->prefixes[t * pl->depth + d];
    w.out = (rowbuf){0};
    uint64_t count = 0;
    int rc = walk_seq(&w, &pl->g->plan, pl->depth, true, &count);
    pl->outs[t] = (task_out){w.out, count};
    if (rc) {
      wk->failed_task = t;
      atomic_store(&pl->failed, true);
    }
  }
  walker_clear(&w);
}

static void *worker_main(void *arg) {
  run_tasks(arg);
  return NULL;
}

/* Joins the tasks' tuples in task order; on failure, reports the error of
** the first failed task, as a walk on one thread would have met it. */
static int gather(pool *pl, const worker *wks, unsigned n, tuples *out, kt_error *err) {
  const worker *first = NULL;
  for (unsigned i = 0; i < n; i++)
    if (wks[i].failed_task != SIZE_MAX && (!first || wks[i].failed_task < first->failed_task))
      first = &wks[i];
  size_t rowbytes = pl->g->n * pl->width;
  int rc = first ? kt_fail(err, "%s", first->err.msg) : 0;
  for (size_t t = 0; t < pl->ntasks && rc == 0; t++) out->n += pl->outs[t].count;
  if (rc == 0 && pl->store && !(out->rows = kt_alloc((size_t)out->n * rowbytes + 1, err))) rc = -1;
  char *at = out->rows;
  for (size_t t = 0; t < pl->ntasks; t++) {
    size_t bytes = (size_t)pl->outs[t].rows.n * rowbytes;
    if (rc == 0 && at && bytes) {
      memcpy(at, pl->outs[t].rows.data, bytes);
      at += bytes;
    }
    free(pl->outs[t].rows.data);
  }
  return rc;
}

static int run_pool(pool *pl, unsigned threads, tuples *out, kt_error *err) {
  unsigned n = threads < pl->ntasks ? threads : (unsigned)pl->ntasks;
  worker *wks = kt_calloc(n, sizeof *wks, err);
  if (!wks) return -1;
  unsigned started = 1;
  for (unsigned i = 0; i < n; i++) wks[i] = (worker){.pl = pl, .failed_task = SIZE_MAX};
  while (started < n && pthread_create(&wks[started].thread, NULL, worker_main, &wks[started]) == 0)
    started++;
  run_tasks(&wks[0]); /* the calling thread works too */
  for (unsigned i = 1; i < started; i++) pthread_join(wks[i].thread, NULL);
  int rc = gather(pl, wks, started, out, err);
  free(wks);
  return rc;
}

/* The prefix depth: enough subtrees for every thread, at least one
** parameter left below it, and no deeper than where the walk splits. */
static size_t split_depth(const kt_space *s, const group *g, unsigned threads) {
  double prefixes = 1;
  size_t k = 0;
  while (k + 1 < g->n && k < g->plan.split_at && prefixes < (double)TASKS_PER_THREAD * threads)
    prefixes *= (double)s->params[g->order[k++]].nvalues;
  return k;
}

static int walk_parallel(const kt_space *s, const group *g, unsigned threads, bool store,
                         atomic_size_t *used, size_t budget, tuples *out, kt_error *err) {
  walker pw;
  if (walker_init(&pw, s, g, used, budget, err)) return -1;
  pw.end = split_depth(s, g, threads);
  pw.store = pw.prefix = true;
  pw.width = sizeof(uint32_t);
  uint64_t ntasks = 0;
  int rc = walk_seq(&pw, &g->plan, 0, true, &ntasks);
  walker_clear(&pw);
  pool pl = {s, g, used, budget, store, out->width, pw.end, (const uint32_t *)pw.out.data, ntasks,
             NULL, 0, false};
  if (rc == 0 && pl.ntasks > 0) {
    pl.outs = kt_calloc(pl.ntasks, sizeof *pl.outs, err);
    rc = pl.outs ? run_pool(&pl, threads, out, err) : -1;
  }
  free(pl.outs);
  free(pw.out.data);
  return rc;
}

/* ---- entry ---- */

static double product(const kt_space *s, const group *g) {
  double n = 1;
  for (size_t j = 0; j < g->n; j++) n *= (double)s->params[g->params[j]].nvalues;
  return n;
}

int walk_group(const kt_space *s, const group *g, unsigned threads, bool store, size_t budget,
               tuples *out, kt_error *err) {
  size_t most = 0;
  atomic_size_t used = 0;
  for (size_t j = 0; j < g->n; j++)
    if (s->params[g->params[j]].nvalues > most) most = s->params[g->params[j]].nvalues;
  *out = (tuples){NULL, kt_index_width(most), 0};
  if (threads > 1 && g->pure && g->n >= 2 && product(s, g) >= PARALLEL_PRODUCT)
    return walk_parallel(s, g, threads, store, &used, budget, out, err);
  walker w;
  if (walker_init(&w, s, g, &used, budget, err)) return -1;
  w.store = store;
  w.width = out->width;
  int rc = walk_seq(&w, &g->plan, 0, true, &out->n);
  walker_clear(&w);
  out->rows = w.out.data;
  if (rc) {
    free(out->rows);
    out->rows = NULL;
  }
  return rc;
}

int count_group_steps(const kt_space *s, const group *g, uint64_t max_steps, uint64_t *count,
                      kt_error *err) {
  atomic_size_t used = 0;
  walker w;
  if (walker_init(&w, s, g, &used, SIZE_MAX, err)) return -1;
  w.max_steps = max_steps;
  *count = 0;
  int rc = walk_seq(&w, &g->plan, 0, true, count);
  walker_clear(&w);
  return rc && w.over ? 1 : rc;
}
