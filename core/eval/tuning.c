/*
** tuning.c: a tuning's life around its loop (tune_int.h): the device's
** pruning, the space, the results and what identifies them, the journal
** (and what a resumed one holds), compiles started ahead, and the end.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ahead.h"
#include "codegen.h"
#include "journal_id.h"
#include "launch_limits.h"
#include "metrics.h"
#include "prune.h"
#include "search.h"
#include "tune_int.h"
#include "validate_async.h"
#include "validate_device.h"

/* ---- resuming ---- */

/* The journal's results that came to no verdict (result.h: infrastructure,
** a compiler process that died) are left out, to be run again; *dropped
** says whether there were any. */
static void drop_infrastructure(kt_results *prior, bool *dropped) {
  size_t kept = 0;
  for (size_t i = 0; i < prior->n; i++) {
    if (prior->items[i].infrastructure) kt_result_clear(&prior->items[i]);
    else prior->items[kept++] = prior->items[i];
  }
  *dropped = kept < prior->n;
  prior->n = kept;
}

/* Reads the journal's results, if it has any, and finds each one's index
** in this space. Returns 1 when it holds none. */
static int read_prior(tuning *tu, kt_journal *j, const kt_journal_id *id, bool *dropped,
                      kt_error *err) {
  int rc = kt_journal_read(j, tu->task->space, id, tu->opts->resume_force, &tu->prior,
                           &tu->results->notice, err);
  if (rc == 0) drop_infrastructure(tu->prior, dropped);
  for (size_t i = 0; rc == 0 && i < tu->prior->n; i++) {
    uint64_t index;
    if (kt_space_natural_index(tu->task->space, tu->prior->items[i].vi, &index))
      return kt_fail(err, "cannot resume from %s: its result %zu breaks a constraint of task %s",
                     tu->opts->journal, i + 1, tu->task->name);
    if (kt_indexmap_put(&tu->known, index, i, err)) return -1;
  }
  return rc;
}

/* Results whose index changed with the space (other constraints; a
** journal of a version that numbered the space as the device's limits left
** it) take their new index; with *moved, some did. */
static void reindex_prior(tuning *tu, bool *moved) {
  *moved = false;
  for (size_t i = 0; i < tu->prior->n; i++) {
    kt_result *x = &tu->prior->items[i];
    uint64_t index;
    kt_space_natural_index(tu->task->space, x->vi, &index); /* found by read_prior */
    *moved = *moved || index != x->index;
    x->index = index;
  }
}

/* Locks the journal, takes what it holds when resuming, and starts it. A
** journal whose indices moved (or whose header counts another space), or
** that held results to run again, is written again whole, atomically, so
** that one index names one configuration in it and a kill loses none of it. */
static kt_journal *open_journal(tuning *tu, kt_error *err) {
  kt_journal_id id;
  if (kt_journal_id_init(&id, tu->task, &tu->t->device, err)) return NULL;
  kt_journal *j = kt_journal_open(tu->opts->journal, err);
  bool moved = false, dropped = false;
  int fresh = !j ? -1 : tu->opts->resume ? read_prior(tu, j, &id, &dropped, err) : 1;
  if (fresh == 0) reindex_prior(tu, &moved);
  bool rewrite = fresh == 0 && (moved || dropped ||
                                tu->prior->space_count != tu->results->space_count);
  int rc = fresh < 0 ? -1
           : rewrite ? kt_journal_rewrite(j, tu->results, &id, tu->prior, err)
                     : kt_journal_start(j, tu->results, &id, fresh, err);
  if (rc) {
    kt_journal_close(j, NULL);
    j = NULL;
  }
  kt_journal_id_clear(&id);
  return j;
}

/* A launch the device refuses whatever the program (launch_limits.h): its
** configuration fails before its kernels are built, so none is compiled. */
static bool refused_ahead(const tuning *tu, size_t ki, const kt_config *cfg) {
  kt_sizes s;
  kt_error err;
  char why[256];
  return kt_task_sizes(tu->task, ki, cfg, &s, &err) == 0 &&
         kt_launch_limits(&tu->t->device, tu->task->kernels[ki]->name, &s, why, sizeof why) != KT_OK;
}

/* A configuration announced (tune_prefetch) that the searcher took back:
** its compiles go on (the program stays in the cache), its kernel is not
** made ahead. */
static void tune_withdrawn(void *ud, uint64_t index) {
  tuning *tu = ud;
  kt_ahead_withdraw(tu->ahead, index);
}

/* Starts compiling the kernels of a configuration that comes soon, and
** keeps their sources for making its kernels ahead (ahead.h). */
int tune_prefetch(void *ud, uint64_t index, const uint32_t *vi, kt_error *err) {
  tuning *tu = ud;
  uint64_t at;
  if (kt_indexmap_get(&tu->known, index, &at)) return 0; /* a resumed journal's: not run */
  kt_config cfg = {tu->task->space, index, vi};
  size_t n = tu->task->nkernels;
  char **sources = kt_calloc(n ? n : 1, sizeof *sources, err);
  if (!sources) return -1;
  for (size_t ki = 0; ki < n; ki++) {
    const kt_kernel *k = tu->task->kernels[ki];
    char *source = NULL, *why = NULL; /* a generator that fails is the configuration's */
    int rc = refused_ahead(tu, ki, &cfg) ? 1 : kt_final_source(tu->task, k, &cfg, &source, &why, err);
    if (rc == 0) rc = kt_build_prefetch(tu->t->cache, source, k->build_options, k->name, err);
    sources[ki] = rc == 0 ? source : NULL;
    if (rc) free(source);
    free(why);
    if (rc < 0) {
      for (size_t i = 0; i < ki; i++) free(sources[i]);
      free(sources);
      return -1;
    }
  }
  return kt_ahead_announce(tu->ahead, index, sources, n, err);
}

/* The reference kernels start compiling first, beside the first
** proposals', so that the set-up before the first configuration waits
** for no compile of its own. What fails here fails again, and is
** reported, when the reference is computed. */
static void prefetch_references(tuning *tu) {
  kt_error err;
  for (size_t i = 0; i < tu->task->nrefs; i++) {
    const kt_reference *r = &tu->task->refs_list[i];
    uint64_t index;
    if (r->kind != KT_REF_TASK || kt_space_generate(r->task->space, &err) ||
        kt_space_index(r->task->space, r->task_vi, &index))
      continue;
    kt_config cfg = {r->task->space, index, r->task_vi};
    for (size_t ki = 0; ki < r->task->nkernels; ki++) {
      const kt_kernel *k = r->task->kernels[ki];
      char *source = kt_build_source(r->task, k, &cfg, &err);
      if (source) kt_build_prefetch(tu->t->cache, source, k->build_options, k->name, &err);
      free(source);
    }
  }
}

void tune_release(tuning *tu) {
  if (tu->scratch)
    for (size_t i = 0; i < tu->task->nrefs; i++) kt_array_release(tu->scratch[i]);
  free(tu->scratch);
  free(tu->landed);
  kt_results_release(tu->prior);
  free(tu->seeds);
  kt_indexmap_clear(&tu->known);
  tune_guard_clear(&tu->guard);
  kt_checker_free(tu->checker);
  kt_devcheck_free(tu->devcheck);
  kt_ahead_free(tu->ahead);
}

void tune_clear(tuning *tu) {
  tuner_drop_hosts(tu->t); /* the tuning leaves the arrays' host contents as it found them */
  tune_release(tu);
}

/* Says whether the constraints or the device's limits left nothing. */
static int no_configuration(kt_task *task, const kt_device_info *dev, kt_error *err) {
  char why[256] = "";
  size_t n = 0;
  for (int k = 1; k < KT_PRUNE_END; k++) {
    uint64_t removed = 0;
    if (kt_task_pruned(task, k, &removed, err)) return -1;
    if (removed && n < sizeof why)
      n += (size_t)snprintf(why + n, sizeof why - n, "%s%s %" PRIu64, n ? ", " : "",
                            kt_prune_name(k), removed);
  }
  if (!n) return kt_fail(err, "task %s: no configuration satisfies the constraints", task->name);
  return kt_fail(err, "task %s: the limits of %s removed every configuration (%s); k:prune{...} "
                 "switches a check off", task->name, dev->id, why);
}

/* The seeds' indices in the space as the device's limits left it. */
static int seed_indices(tuning *tu, size_t *n, kt_error *err) {
  const kt_tune_opts *o = tu->opts;
  size_t np = kt_space_nparams(tu->task->space);
  if (!o->nseeds) return 0;
  if (!(tu->seeds = kt_calloc(o->nseeds, sizeof *tu->seeds, err))) return -1;
  for (size_t i = 0; i < o->nseeds; i++)
    if (kt_space_index(tu->task->space, o->seeds + i * np, &tu->seeds[*n]) == 0) (*n)++;
  return 0;
}

/* A random search with a budget may start on a space too large to list:
** its largest groups are sampled, not generated (space.h). */
static int generate_space(kt_space *s, const kt_tune_opts *o, kt_error *err) {
  const kt_stop *st = &o->stop;
  bool budget = (st->count > 0 || st->seconds > 0) && st->fraction == 0;
  if (budget && kt_search_samples(o->searcher)) return kt_space_generate_sampled(s, err);
  return kt_space_generate(s, err);
}

int tune_begin(tuning *tu, kt_tuner *t, kt_task *task, const kt_tune_opts *opts,
               kt_results **out, kt_error *err) {
  *tu = (tuning){.t = t, .task = task, .opts = opts, .t0 = kt_now_ns(), .device0 = t->device_ns,
                 .restores0 = t->restores,
                 .builds0 = kt_tuner_build_stats(t)};
  kt_indexmap_init(&tu->known);
  kt_codegen_forget(task);
  *out = NULL;
  if (tuner_ensure_open(t, err) || tune_energy_check(tu, err) || tune_profile_check(tu, err) ||
      kt_task_prune(task, &t->device, err) ||
      generate_space(task->space, opts, err) || kt_space_natural_generate(task->space, err))
    return -1;
  if (kt_space_count(task->space) == 0) return no_configuration(task, &t->device, err);
  tu->compiles0 = kt_build_cache_times(t->cache);
  prefetch_references(tu);
  kt_devcheck_prefetch(t, task, opts->validate_on);
  if (!(tu->results = kt_results_for_task(task, kt_device_string(&t->device, "name"), err)))
    return -1;
  if (kt_results_identify(tu->results, task, t->device.backend->name,
                          kt_device_string(&t->device, "driver_version"),
                          opts->include_host ? "kernel+host" : "kernel", err)) {
    kt_results_release(tu->results);
    return -1;
  }
  *out = tu->results;
  if (opts->metrics && kt_metrics_note_objective(opts->metrics, tu->results, err)) {
    kt_results_release(tu->results);
    *out = tu->results = NULL;
    return -1;
  }
  if (!tu->results->searcher) tu->results->searcher = kt_strdup(opts->searcher->ops->name, NULL);
  tu->results->device_threads = tuner_device_threads(t);
  int rc = 0;
  /* what the device's limits removed from a sampled space is not counted */
  for (int k = 1; k < KT_PRUNE_END && rc == 0 && !kt_space_sampled(task->space); k++)
    rc = kt_task_pruned(task, k, &tu->results->pruned[k - 1], err);
  tu->journal = rc == 0 && opts->journal ? open_journal(tu, err) : NULL;
  if (rc || (opts->journal && !tu->journal)) {
    tune_clear(tu);
    return -1;
  }
  /* Enough proposals ahead to keep every compile thread busy, also while
  ** the next configuration's compile is one of the slow ones. */
  size_t lookahead = opts->lookahead ? opts->lookahead : 4 * (size_t)kt_tuner_build_threads(t) + 1;
  if (!opts->lookahead && lookahead < KT_LOOKAHEAD_MIN) lookahead = KT_LOOKAHEAD_MIN;
  size_t nseeds = 0;
  if (!(tu->ahead = kt_ahead_new(err)) || seed_indices(tu, &nseeds, err)) {
    tune_clear(tu);
    return -1;
  }
  tu->lo = (kt_loop_opts){.searcher = opts->searcher, .stop = opts->stop, .clock = KT_CLOCK_WALL,
                          .lookahead = lookahead, .journal = tu->journal,
                          .progress = opts->progress, .progress_ud = opts->progress_ud,
                          .seeds = tu->seeds, .nseeds = nseeds, .prior = opts->prior,
                          .metrics = opts->metrics};
  tu->ev = (kt_evaluator){.prefetch = tune_prefetch, .withdrawn = tune_withdrawn, .ud = tu};
  return 0;
}

/* Programs compiled that the disk did not keep, whose compiles every
** tuning pays again: the summary says how many and why. */
static void note_unkept(const kt_tuner *t, size_t unkept, kt_results *r) {
  char head[128];
  char *why = kt_tuner_unkept_why(t);
  snprintf(head, sizeof head, "program cache: %zu program%s compiled %s not kept on disk: ", unkept,
           unkept == 1 ? "" : "s", unkept == 1 ? "was" : "were");
  kt_log_append(&r->device_log, head);
  kt_log_append(&r->device_log, why ? why : "out of memory");
  kt_log_append(&r->device_log, "\n");
  free(why);
}

void tune_count_builds(const tuning *tu, kt_results *r) {
  kt_build_stats s = kt_tuner_build_stats(tu->t);
  r->compiles += s.compiled - tu->builds0.compiled;
  r->cached += s.cached - tu->builds0.cached;
  r->compile_workers += s.workers;
  size_t unkept = s.unkept - tu->builds0.unkept;
  if (unkept) note_unkept(tu->t, unkept, r);
  const char *fallback = kt_tuner_compile_fallback(tu->t);
  if (fallback) {
    kt_log_append(&r->device_log, "compile workers: ");
    kt_log_append(&r->device_log, fallback);
    kt_log_append(&r->device_log, "; compiled in the device process instead\n");
  }
}

int tune_close(tuning *tu, int rc, kt_error *err) {
  if (kt_journal_close(tu->journal, rc ? NULL : err)) rc = -1;
  tu->journal = NULL;
  tu->results->wall_ns = (double)(kt_now_ns() - tu->t0);
  tu->results->device_ns = tu->t->device_ns - tu->device0;
  tu->results->restores = tu->t->restores - tu->restores0;
  tune_count_builds(tu, tu->results);
  return rc;
}

int tune_end(tuning *tu, int rc, kt_error *err) {
  tu->results->abandoned += kt_build_cache_cancel_pending(tu->t->cache);
  rc = tune_close(tu, rc, err);
  tune_clear(tu);
  return rc;
}
