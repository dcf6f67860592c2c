/*
** online.c: tuning inside a running application (online.h).
*/
#include "online.h"

#include <stdlib.h>
#include <string.h>

#include "online_confirm.h"
#include "tune_int.h"

struct kt_online {
  kt_tune_opts opts;   /* a copy, with the journal's path and the seeds */
  char *journal;
  uint32_t *seeds;
  tuning tu;           /* begun with it, released with it: its steps check outputs with
                       ** it after the search (tune_close ends only the search) */
  bool begun;
  kt_results *results; /* the search's, kept after it ended */
  kt_loop *loop;       /* NULL once the search ended */
  uint32_t *fallback;  /* NULL: none */
  uint32_t *ran_vi;    /* what the last step ran */
  kt_result scratch;   /* a step that is no search's */
  char *error;
  bool validate;       /* the search's steps are checked against the references */
  kt_task *task;       /* held (a reference, and pinned) while the online tuning lives */
  bool stepping;       /* in kt_online_step: its callbacks may not stop or free it */
  kt_online_confirm settings;
  kt_confirm confirm;  /* the leading candidates re-measured ... */
  bool confirming;     /* ... from the search's end until all have run */
};

/* Ends the search: its journal closed, later steps run the best. The
** tuning's own memory stays for the confirmation's checked steps. The
** compiles started ahead for it that nobody asked for are dropped, unless
** another tuning runs on the tuner (this one ended from that tuning's
** callback, or collected then): some are that tuning's, and its end drops
** what is left. */
static int end_search(kt_online *on, kt_error *err) {
  if (!on->loop) return 0;
  kt_loop_free(on->loop);
  on->loop = NULL;
  if (on->stepping || !kt_tuner_busy(on->tu.t))
    on->tu.results->abandoned += kt_build_cache_cancel_pending(on->tu.t->cache);
  return tune_close(&on->tu, 0, err);
}

kt_online *kt_online_new(kt_tuner *t, kt_task *task, const kt_tune_opts *opts,
                         const uint32_t *fallback, bool validate,
                         kt_online_confirm confirm, kt_error *err) {
  if (t->busy) return tune_busy_error(err), NULL;
  if (kt_task_busy(task)) return kt_task_busy_error(task, err), NULL;
  kt_online *on = kt_calloc(1, sizeof *on, err);
  if (!on) return NULL;
  on->validate = validate;
  on->settings = confirm;
  on->opts = *opts;
  size_t nvi = opts->nseeds * kt_space_nparams(task->space);
  bool copied = (!opts->journal || (on->opts.journal = on->journal = kt_strdup(opts->journal, err))) &&
                (!nvi || (on->opts.seeds = on->seeds = kt_calloc(nvi, sizeof *on->seeds, err)));
  if (copied && nvi) memcpy(on->seeds, opts->seeds, nvi * sizeof *on->seeds);
  if (!copied || tune_begin(&on->tu, t, task, &on->opts, &on->results, err)) {
    kt_results_release(on->results);
    on->results = NULL;
    kt_online_free(on);
    return NULL;
  }
  on->begun = true;
  size_t np = kt_space_nparams(task->space) + 1;
  on->ran_vi = kt_calloc(np, sizeof *on->ran_vi, err);
  if (on->ran_vi && fallback && (on->fallback = kt_calloc(np, sizeof *on->fallback, err)))
    memcpy(on->fallback, fallback, (np - 1) * sizeof *fallback);
  if (on->ran_vi && (!fallback || on->fallback))
    on->loop = kt_loop_new(task->space, &on->tu.lo, &on->tu.ev, on->results, err);
  if (!on->loop) {
    kt_build_cache_cancel_pending(t->cache);
    tune_close(&on->tu, -1, NULL);
    kt_online_free(on);
    return NULL;
  }
  /* Its search holds pointers into the task: no change while it lives,
  ** and a reference of its own, which no other release (a kernel released
  ** by hand) takes. */
  on->task = task;
  kt_task_retain(task);
  kt_task_hold_online(task, true);
  kt_tuner_hold_online(t, true);
  return on;
}

/* How long a step may wait for the device: as a tuning's executions. */
static int64_t limit_ns(const kt_online *on) {
  return tuner_can_time_out(on->tu.t) ? tune_time_limit(&on->tu) : 0;
}

/* Runs vi once on the application's data into res (checked against the
** references computed from that data, when asked). Its outputs stay on
** the device: output() reads them back once nothing can fail the step. */
static int run(kt_online *on, const uint32_t *vi, bool check, kt_result *res, kt_error *err) {
  int64_t t0 = kt_now_ns();
  tuning *checked = check && on->validate && on->tu.task->nrefs ? &on->tu : NULL;
  if (checked && tune_references(checked, err)) return -1;
  if (tune_run_once(on->tu.t, on->tu.task, vi, limit_ns(on), checked, res, err)) return -1;
  res->over.total = (double)(kt_now_ns() - t0);
  if (res->status != KT_OK) return 0;
  if (!(res->samples_ns = kt_calloc(1, sizeof *res->samples_ns, err))) return -1;
  res->samples_ns[res->nsamples++] = res->time_ns;
  return 0;
}

/* The search ended by itself: its leading candidates run again. */
static int begin_confirm(kt_online *on, kt_error *err) {
  if (kt_confirm_begin(&on->confirm, on->results, on->settings.candidates, on->settings.runs,
                       err))
    return -1;
  on->confirming = kt_confirm_next(&on->confirm) >= 0;
  return 0;
}

/* The best is declared: the candidates take the medians of their runs. */
static int end_confirm(kt_online *on, kt_error *err) {
  if (!on->confirming) return 0;
  on->confirming = false;
  return kt_confirm_end(&on->confirm, on->results, on->opts.metrics, err);
}

/* The search's next configuration, run; 0 when the search is over. What a
** resumed journal holds is taken from it, not run again. */
static int search_step(kt_online *on, kt_result **out, kt_error *err) {
  for (;;) {
    kt_result *res;
    uint64_t at;
    int rc = kt_loop_next(on->loop, &res, err);
    if (rc <= 0) return rc < 0 || end_search(on, err) ? -1 : begin_confirm(on, err);
    bool known = kt_indexmap_get(&on->tu.known, res->index, &at);
    if (known ? kt_result_copy(res, &on->tu.prior->items[at], err)
              : run(on, res->vi, true, res, err)) {
      kt_loop_drop(on->loop); /* it did not run to a verdict: no result */
      return -1;
    }
    if (kt_loop_record(on->loop, known, err)) return -1;
    if (!known) {
      *out = &on->results->items[on->results->n - 1];
      return 1;
    }
  }
}

/* r's run gives the step its outputs: they are read back into the
** arrays, last, so that a step that fails before (a metric's error, the
** journal's) leaves the arrays as they were. */
static int output(kt_online *on, kt_online_outcome *out, const kt_result *r, const uint32_t *vi,
                  kt_error *err) {
  if (tune_read_back(on->tu.t, on->tu.task, err)) return -1;
  memcpy(on->ran_vi, vi, kt_space_nparams(on->tu.task->space) * sizeof *vi);
  out->ran = r->index;
  out->ran_vi = on->ran_vi;
  out->time_ns = r->time_ns;
  return 0;
}

/* The best configuration known (or the fallback) runs the step. */
static int exploit(kt_online *on, kt_online_outcome *out, kt_error *err) {
  const kt_result *best = kt_results_best(on->results);
  const uint32_t *vi = best ? best->vi : on->fallback;
  if (!vi)
    return kt_fail(err, "task %s: no configuration has run correctly yet and no fallback was "
                   "given, so this step has no outputs%s%s", on->tu.task->name,
                   on->error ? ": " : "", on->error ? on->error : "");
  kt_result_clear(&on->scratch);
  if (run(on, vi, false, &on->scratch, err)) return -1;
  if (on->scratch.status != KT_OK)
    return kt_fail(err, "task %s: the %s configuration failed in this step (%s): %s",
                   on->tu.task->name, best ? "best" : "fallback",
                   kt_status_name(on->scratch.status), on->scratch.error ? on->scratch.error : "");
  if (!out->searching && !out->confirming) out->status = KT_OK;
  return output(on, out, &on->scratch, vi, err);
}

/* The next candidate runs again, on the application's data; one that fails
** leaves the step to the best known. */
static int confirm_step(kt_online *on, kt_online_outcome *out, kt_error *err) {
  const kt_result *cand = &on->results->items[kt_confirm_next(&on->confirm)];
  out->confirming = true;
  out->tried = cand->index;
  kt_result_clear(&on->scratch);
  if (run(on, cand->vi, true, &on->scratch, err) ||
      kt_confirm_record(&on->confirm, on->results, &on->scratch, err))
    return -1;
  out->status = on->scratch.status;
  if (kt_confirm_next(&on->confirm) < 0 && end_confirm(on, err)) return -1;
  if (on->scratch.status == KT_OK) {
    if (output(on, out, &on->scratch, cand->vi, err)) return -1;
    out->ran = out->tried;
    return 0;
  }
  const char *why = on->scratch.error ? on->scratch.error : kt_status_name(on->scratch.status);
  out->error = on->error = strdup(why);
  out->fell_back = true;
  return exploit(on, out, err);
}

static int step(kt_online *on, kt_online_outcome *out, kt_error *err) {
  kt_result *tried = NULL;
  int rc = on->loop ? search_step(on, &tried, err) : 0;
  if (rc < 0) return -1;
  if (tried) {
    out->searching = true;
    out->tried = tried->index;
    out->status = tried->status;
    if (tried->status == KT_OK) return output(on, out, tried, tried->vi, err);
    on->error = strdup(tried->error ? tried->error : kt_status_name(tried->status));
    out->error = on->error;
    out->fell_back = true;
  }
  if (!tried && on->confirming) return confirm_step(on, out, err);
  return exploit(on, out, err);
}

int kt_online_step(kt_online *on, kt_online_outcome *out, kt_error *err) {
  memset(out, 0, sizeof *out);
  /* (before anything changes: a step refused here may come from the
  ** callback of a step in progress, whose error it would free) */
  if (on->tu.t->busy) return tune_busy_error(err);
  free(on->error);
  on->error = NULL;
  on->tu.t->busy = true; /* the step's callbacks may not use the tuner */
  on->stepping = true;
  int rc = step(on, out, err);
  on->stepping = false;
  on->tu.t->busy = false;
  return rc;
}

kt_results *kt_online_results(const kt_online *on) { return on->results; }

bool kt_online_searching(const kt_online *on) { return on->loop != NULL || on->confirming; }

bool kt_online_stepping(const kt_online *on) { return on->stepping; }

void kt_online_stop(kt_online *on, kt_error *err) {
  if (on->stepping) {
    kt_fail(err, "task %s: the online tuning is in a step: stop it after the step returns",
            on->tu.task->name);
    return;
  }
  if (on->loop && !on->results->stopped) on->results->stopped = "stopped by the application";
  if (end_search(on, err) == 0) end_confirm(on, err);
}

void kt_online_free(kt_online *on) {
  if (!on) return;
  if (on->loop) kt_online_stop(on, NULL);
  if (on->begun) tune_release(&on->tu);
  if (on->task) {
    kt_task_hold_online(on->task, false);
    kt_tuner_hold_online(on->tu.t, false);
  }
  kt_task_release(on->task);
  free(on->journal);
  free(on->seeds);
  kt_results_release(on->results);
  kt_result_clear(&on->scratch);
  free(on->fallback);
  free(on->ran_vi);
  free(on->error);
  kt_confirm_clear(&on->confirm);
  free(on);
}
