/*
** lk_tuner.c: kt.tuner(device) and its methods: kernel, composition,
** tune, run.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/device/compile_pool.h"
#include "../core/db/db.h"
#include "../core/multi/fleet.h"
#include "../core/results/metrics.h"
#include "lk.h"

/* kt.tuner([device][, {build_threads = N, isolate = true, device_growth = MiB,
** cache = true, compile_workers = N, compile_timeout = S}]) (cache: the
** program cache on disk, program_store.h; compile_workers: compiler
** processes, compile_pool.h, 0 none, absent as many as the machine allows;
** compile_timeout: the longest one compile in them may take, 0 no limit);
** device may be a list of devices, "all" or "gpu:all" (lk_fleet.c). */
static int l_tuner(lua_State *L) {
  static const char *const keys[] = {"build_threads", "isolate", "device_growth", "cache",
                                     "compile_workers", "compile_timeout", NULL};
  int threads = 0, isolate = 1, cache = 1, workers = -1;
  lua_Number limit = KT_COMPILE_TIMEOUT_DEFAULT;
  lua_Number growth = (lua_Number)(KT_DEVICE_GROWTH_DEFAULT >> 20); /* MiB */
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lk_check_keys(L, 2, "tuner options", keys);
    threads = (int)lk_opt_integer(L, 2, "tuner options", "build_threads", 0);
    if (threads < 0) luaL_error(L, "tuner options.build_threads must not be negative");
    isolate = lk_opt_boolean(L, 2, "tuner options", "isolate", 1);
    cache = lk_opt_boolean(L, 2, "tuner options", "cache", 1);
    lua_Integer w = lk_opt_integer(L, 2, "tuner options", "compile_workers", LUA_MININTEGER);
    if (w != LUA_MININTEGER && (w < 0 || w > 4096))
      luaL_error(L, "tuner options.compile_workers: expected 0 (compile in the device process) "
                    "to 4096 processes");
    workers = w == LUA_MININTEGER ? -1 : (int)w;
    if (workers > 0 && !isolate)
      luaL_error(L, "tuner options.compile_workers: compiler processes need isolate = true");
    limit = lk_opt_number(L, 2, "tuner options", "compile_timeout", limit);
    if (!(limit >= 0 && limit <= 1e6))
      luaL_error(L, "tuner options.compile_timeout: expected 0 (no limit) to 10^6 seconds");
    growth = lk_opt_number(L, 2, "tuner options", "device_growth", growth);
    if (!(growth >= 0 && growth <= 1 << 30))
      luaL_error(L, "tuner options.device_growth: expected 0 (never) to 2^30 MiB");
  }
  /* Under mpirun, one device names each rank's (kt.mpi_devices, lk_mpi.c). */
  if (isolate && lk_mpi_spreads(L, 1)) {
    lua_settop(L, 2);
    lk_push_mpi_devices(L, 1);
    lua_replace(L, 1);
  }
  if (lk_is_device_set(L, 1)) {
    if (!isolate) luaL_error(L, "tuner options.isolate: a tuner over several devices needs a "
                                "device process per device (isolate = true)");
    lk_push_fleet_tuner(L, 1, threads, (size_t)(growth * (1 << 20)), cache, workers);
    lk_tuner *ut = luaL_checkudata(L, -1, LK_TUNER);
    for (size_t i = 0; i < lk_tuner_count(ut); i++)
      kt_tuner_set_compile_timeout(lk_tuner_at(ut, i), limit);
    return 1;
  }
  kt_device_info dev;
  lk_check_device(L, 1, &dev);
  lk_tuner *ut = lua_newuserdatauv(L, sizeof *ut, 1);
  ut->t = NULL;
  ut->fleet = NULL;
  luaL_setmetatable(L, LK_TUNER);
  kt_error err;
  ut->t = kt_tuner_new(&dev, threads, isolate, &err);
  kt_device_clear(&dev);
  if (!ut->t) return lk_error(L, &err);
  kt_tuner_set_device_growth(ut->t, (size_t)(growth * (1 << 20)));
  kt_tuner_set_disk_cache(ut->t, cache);
  if (kt_tuner_set_compile_workers(ut->t, workers, &err))
    luaL_error(L, "tuner options.compile_workers: %s", err.msg);
  kt_tuner_set_compile_timeout(ut->t, limit);
  lk_push_device(L, kt_tuner_device(ut->t));
  lua_setiuservalue(L, -2, 1);
  return 1;
}

/* tuner:close(): gives the device (and its device process) back now rather
** than when the tuner is collected. */
static int tuner_gc(lua_State *L) {
  lk_tuner *ut = luaL_checkudata(L, 1, LK_TUNER);
  for (size_t i = 0; ut->t && i < lk_tuner_count(ut); i++) {
    if (kt_tuner_busy(lk_tuner_at(ut, i)))
      luaL_argerror(L, 1, "the tuner is in use: close it after its tuning or run returns");
    /* (a collection finalizes the online tunings first: they hold the tuner,
    ** so were made after it) */
    if (kt_tuner_held_online(lk_tuner_at(ut, i)))
      luaL_argerror(L, 1, "the tuner is in use by an online tuning (tuner:online): close it "
                          "after on:close()");
  }
  if (ut->fleet) kt_fleet_free(ut->fleet);
  else kt_tuner_free(ut->t);
  ut->t = NULL;
  ut->fleet = NULL;
  return 0;
}

static int tuner_kernel(lua_State *L) {
  lk_check_tuner(L, 1);
  return lk_new_kernel(L, 2);
}

/* tuner:composition{name = "sort", kernels = {k1, k2, k3}}: kernels that
** share one parameter space and are run together. */
static int tuner_composition(lua_State *L) {
  static const char *const keys[] = {"name", "kernels", NULL};
  lk_check_tuner(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  lk_check_keys(L, 2, "composition", keys);
  const char *name = lk_opt_string(L, 2, "composition", "name", "composition");
  if (lua_getfield(L, 2, "kernels") != LUA_TTABLE)
    luaL_error(L, "composition.kernels: expected a list of kernels");
  size_t n = (size_t)luaL_len(L, -1);
  if (n == 0) luaL_error(L, "composition.kernels: the list is empty");
  kt_kernel **kernels = lua_newuserdatauv(L, n * sizeof *kernels, 0);
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, -2, (lua_Integer)i + 1);
    const char *dead = lk_released(L, -1);
    if (dead) luaL_error(L, "composition.kernels[%d]: %s", (int)i + 1, dead);
    lk_task *k = lk_test_object(L, -1, LK_TASK);
    if (!k || !k->kernel) luaL_error(L, "composition.kernels[%d]: expected a kernel", (int)i + 1);
    kernels[i] = k->kernel;
    lua_pop(L, 1);
  }
  kt_error err;
  kt_task *task = kt_task_new(name, kernels, n, &err);
  if (!task) return lk_error(L, &err);
  lk_push_task(L, task, NULL);
  return 1;
}

/* ---- tune options ---- */

static void check_repeat(lua_State *L, int opts, kt_repeat *rp) {
  static const char *const keys[] = {"rse", "min", "max", NULL};
  *rp = KT_REPEAT_DEFAULT;
  int t = lk_get_field(L, opts, "repeats");
  if (t == LUA_TNUMBER) {
    lua_Integer n = lua_tointeger(L, -1);
    if (!lua_isinteger(L, -1) || n < 1)
      luaL_error(L, "tune options.repeats: expected a positive integer or {rse, min, max}");
    rp->fixed = (int)n;
  } else if (t == LUA_TTABLE) {
    int idx = lua_gettop(L);
    lk_check_keys(L, idx, "tune options.repeats", keys);
    rp->rse = lk_opt_number(L, idx, "repeats", "rse", rp->rse);
    rp->min = (int)lk_opt_integer(L, idx, "repeats", "min", rp->min);
    rp->max = (int)lk_opt_integer(L, idx, "repeats", "max", rp->max);
    if (rp->rse <= 0 || rp->min < 1 || rp->max < rp->min)
      luaL_error(L, "tune options.repeats: need rse > 0 and 1 <= min <= max");
  } else if (t != LUA_TNIL) {
    luaL_error(L, "tune options.repeats: expected a number or a table");
  }
  lua_pop(L, 1);
}

typedef struct progress_args {
  lk_ref *fn;
  const kt_results *r;
  const kt_result *last;
} progress_args;

static int progress_body(lua_State *T) {
  progress_args *a = lua_touserdata(T, 1);
  lk_ref_push(a->fn);
  lk_push_result(T, a->r, a->last);
  lk_push_results(T, (kt_results *)a->r);
  lua_call(T, 2, 0);
  return 0;
}

static int progress_call(const kt_results *r, const kt_result *last, void *ud, kt_error *err) {
  progress_args a = {ud, r, last};
  return lk_ref_protect(ud, progress_body, &a, err);
}

/* progress = true (ktlua.report's meter: a line redrawn on a terminal, a
** line per configuration elsewhere) or a function. Without the field, the
** meter when by_default and stdout is a terminal under `ktlua script.lua`
** (main.c marks the registry). *meter tells that the meter was chosen. */
static lk_ref *check_progress(lua_State *L, int opts, bool by_default, bool *meter) {
  int t = lk_get_field(L, opts, "progress");
  bool terminal = isatty(STDOUT_FILENO);
  lua_getfield(L, LUA_REGISTRYINDEX, LK_PROGRESS_DEFAULT);
  *meter = (t == LUA_TBOOLEAN && lua_toboolean(L, -2)) ||
           (t == LUA_TNIL && by_default && terminal && lua_toboolean(L, -1));
  lua_pop(L, 1);
  lk_ref *ref = NULL;
  if (*meter) {
    lua_getglobal(L, "require");
    lua_pushliteral(L, "ktlua.report");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "meter");
    lk_get_field(L, opts, "stop");
    lua_pushboolean(L, terminal);
    lua_call(L, 2, 1);
    ref = lk_ref_new(L, -1);
    lua_pop(L, 2);
  } else if (t == LUA_TFUNCTION) {
    ref = lk_ref_new(L, -1);
  } else if (t != LUA_TNIL && t != LUA_TBOOLEAN) {
    luaL_error(L, "tune options.progress: expected true or a function(result, results)");
  }
  lua_pop(L, 1);
  return ref;
}

static int meter_end_body(lua_State *T) {
  lk_ref_push(lua_touserdata(T, 1));
  lua_call(T, 0, 0);
  return 0;
}

/* The meter's line ends with the tuning (also one that failed). */
static void end_meter(lk_tune_hold *h) {
  kt_error err;
  if (h->meter && h->progress) lk_ref_protect(h->progress, meter_end_body, h->progress, &err);
}

/* resume = true, false, or "force" (also from a journal of another task);
** by default, KTLUA_RESUME's ("1", "force"). */
static void check_resume(lua_State *L, int opts, kt_tune_opts *o) {
  const char *env = getenv("KTLUA_RESUME");
  int t = lk_get_field(L, opts, "resume");
  if (t == LUA_TNIL) {
    o->resume = env && env[0] && strcmp(env, "0");
    o->resume_force = env && strcmp(env, "force") == 0;
  } else if (t == LUA_TBOOLEAN) o->resume = lua_toboolean(L, -1);
  else if (t == LUA_TSTRING && strcmp(lua_tostring(L, -1), "force") == 0)
    o->resume = o->resume_force = true;
  else luaL_error(L, "tune options.resume: expected true, false or \"force\"");
  lua_pop(L, 1);
}

/* journal = "file.jsonl" and resume = true; `ktlua --journal=DIR` gives
** tunings without one DIR/<task>.jsonl, and `ktlua --resume` makes resume
** the default (through KTLUA_JOURNAL_DIR and KTLUA_RESUME). The path stays
** on the Lua stack until the tuning ends. */
void lk_check_journal(lua_State *L, int opts, const char *task, kt_tune_opts *o) {
  o->journal = lk_opt_string(L, opts, "tune options", "journal", NULL);
  const char *dir = getenv("KTLUA_JOURNAL_DIR");
  if (!o->journal && dir && dir[0]) o->journal = lua_pushfstring(L, "%s/%s.jsonl", dir, task);
  check_resume(L, opts, o);
  if (o->resume && !o->journal)
    luaL_error(L, "tune options.resume: resuming needs a journal (tune options.journal)");
}

/* time_limit = seconds, or {factor = 50, floor = 10} (seconds). */
void lk_check_time_limit(lua_State *L, int opts, kt_tune_opts *o) {
  static const char *const keys[] = {"factor", "floor", NULL};
  int t = lk_get_field(L, opts, "time_limit");
  if (t == LUA_TNUMBER) {
    double s = lua_tonumber(L, -1);
    if (!(s > 0)) luaL_error(L, "tune options.time_limit must be positive");
    if (!(s <= KT_SECONDS_MAX)) luaL_error(L, "tune options.time_limit: at most 1e9 seconds, got %f", s);
    o->time_limit_ns = s * 1e9;
  } else if (t == LUA_TTABLE) {
    int idx = lua_gettop(L);
    lk_check_keys(L, idx, "tune options.time_limit", keys);
    o->time_factor = lk_opt_number(L, idx, "time_limit", "factor", KT_TIME_FACTOR_DEFAULT);
    o->time_floor_ns = lk_opt_number(L, idx, "time_limit", "floor", KT_TIME_FLOOR_DEFAULT / 1e9) * 1e9;
    if (!(o->time_factor > 0) || !(o->time_floor_ns > 0))
      luaL_error(L, "tune options.time_limit: factor and floor must be positive");
    if (!(o->time_factor <= 1e9) || !(o->time_floor_ns <= KT_NS_MAX))
      luaL_error(L, "tune options.time_limit: factor and floor: at most 1e9 (times, seconds)");
  } else if (t != LUA_TNIL) {
    luaL_error(L, "tune options.time_limit: expected seconds or {factor =, floor =}");
  }
  lua_pop(L, 1);
}

/* fail_fast = N (the first N configurations failing alike stop the
** tuning with their error) or false. */
static void check_fail_fast(lua_State *L, int opts, kt_tune_opts *o) {
  int t = lk_get_field(L, opts, "fail_fast");
  if (t == LUA_TBOOLEAN && !lua_toboolean(L, -1)) o->fail_fast = -1;
  else if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 2 && lua_tointeger(L, -1) <= 1 << 20)
    o->fail_fast = (int)lua_tointeger(L, -1);
  else if (t != LUA_TNIL)
    luaL_error(L, "tune options.fail_fast: expected a number of configurations (2 or more) or "
                  "false, got %s", luaL_tolstring(L, -1, NULL));
  lua_pop(L, 1);
}

/* compile_outlier = factor, true (the defaults), false (off), or {factor =,
** after = compiles, floor = seconds} (kt_outlier_rule, tuner.h). */
static void check_outlier(lua_State *L, int opts, kt_outlier_rule *r) {
  static const char *const keys[] = {"factor", "after", "floor", NULL};
  const char *what = "tune options.compile_outlier";
  int t = lk_get_field(L, opts, "compile_outlier");
  int at = lua_gettop(L);
  if (t == LUA_TBOOLEAN) {
    if (!lua_toboolean(L, at)) r->factor = -1;
  } else if (t == LUA_TNUMBER || t == LUA_TTABLE) {
    if (t == LUA_TTABLE) lk_check_keys(L, at, what, keys);
    lua_Number factor = t == LUA_TNUMBER ? lua_tonumber(L, at)
                                         : lk_opt_number(L, at, what, "factor", KT_OUTLIER_FACTOR_DEFAULT);
    lua_Integer after = t == LUA_TTABLE ? lk_opt_integer(L, at, what, "after", KT_OUTLIER_AFTER_DEFAULT)
                                        : KT_OUTLIER_AFTER_DEFAULT;
    lua_Number floor_s = t == LUA_TTABLE ? lk_opt_number(L, at, what, "floor", KT_OUTLIER_FLOOR_DEFAULT / 1e9)
                                         : KT_OUTLIER_FLOOR_DEFAULT / 1e9;
    if (!(factor >= 1 && factor <= 1e6))
      luaL_error(L, "%s: expected a factor from 1 to 10^6 (times the median compile), or false", what);
    if (after < 1 || after > 1 << 20)
      luaL_error(L, "%s.after: expected a number of compiles from 1", what);
    if (!(floor_s > 0 && floor_s <= 1e6))
      luaL_error(L, "%s.floor: expected seconds above 0 (up to 10^6)", what);
    *r = (kt_outlier_rule){factor, (size_t)after, floor_s * 1e9};
  } else if (t != LUA_TNIL) {
    luaL_error(L, "%s: expected a factor, a table {factor =, after =, floor =} or false, got %s",
               what, luaL_typename(L, at));
  }
  lua_pop(L, 1);
}

/* seeds = {config, ...} (tables of values, results, 0-based indices in the
** space as defined, as results number it): the configurations evaluated
** first, as value indices in a userdata pushed. */
const uint32_t *lk_check_seeds(lua_State *L, int opts, kt_space *space, size_t *n) {
  *n = 0;
  if (lk_get_field(L, opts, "seeds") == LUA_TNIL) return lua_pop(L, 1), NULL;
  int list = lua_gettop(L);
  if (!lua_istable(L, list)) luaL_error(L, "tune options.seeds: expected a list of configurations");
  kt_error err;
  if (kt_space_natural_generate(space, &err)) lk_error(L, &err);
  size_t count = (size_t)luaL_len(L, list), np = kt_space_nparams(space);
  size_t nvi = count * np;
  uint32_t *seeds = lua_newuserdatauv(L, (nvi ? nvi : 1) * sizeof *seeds, 0);
  for (size_t i = 0; i < count; i++) {
    uint32_t *vi = seeds + i * np;
    uint64_t index;
    lua_rawgeti(L, list, (lua_Integer)i + 1);
    if (lua_isinteger(L, -1)) {
      lua_Integer x = lua_tointeger(L, -1);
      if (x < 0 || (uint64_t)x >= kt_space_natural_count(space) ||
          kt_space_natural_config(space, (uint64_t)x, vi, &err))
        luaL_error(L, "tune options.seeds[%d]: configuration index out of range", (int)i + 1);
    } else if (lua_istable(L, -1)) {
      if (lua_getfield(L, -1, "config") == LUA_TTABLE) lua_replace(L, -2); /* a result */
      else lua_pop(L, 1);
      lk_check_config(L, -1, space, vi);
      if (kt_space_natural_index(space, vi, &index))
        luaL_error(L, "tune options.seeds[%d]: the configuration breaks a constraint", (int)i + 1);
    } else {
      luaL_error(L, "tune options.seeds[%d]: expected a configuration", (int)i + 1);
    }
    lua_pop(L, 1);
  }
  *n = count;
  return seeds;
}

/* db = kt.db(...) with size = {...}: the tuning's best are stored. */
kt_db *lk_check_db_option(lua_State *L, int opts) {
  int has_db = lk_get_field(L, opts, "db") != LUA_TNIL;
  kt_db *db = has_db ? lk_check_db_named(L, lua_gettop(L), "tune options.db") : NULL;
  int has_size = lk_get_field(L, opts, "size") != LUA_TNIL;
  lua_pop(L, 2);
  if (has_db != has_size)
    luaL_error(L, "tune options: db and size go together (the database keys what it stores by "
                  "the problem size)");
  return db;
}

static int hold_gc(lua_State *L) {
  lk_tune_hold *h = lua_touserdata(L, 1);
  kt_searcher_free(h->searcher);
  lk_ref_free(h->progress);
  lk_ref_free(h->live);
  kt_results_release(h->results);
  kt_task_release(h->task);
  kt_replay_release(h->replay);
  memset(h, 0, sizeof *h);
  return 0;
}

static lk_tune_hold *new_hold(lua_State *L) {
  return lk_new_guarded(L, sizeof(lk_tune_hold), hold_gc);
}

/* After Ctrl-C: the best so far, on stderr, before the error that ends
** the script. */
static void report_interrupted(lua_State *L, const kt_results *r) {
  const kt_result *best = kt_results_best(r);
  if (!best) {
    fprintf(stderr, "ktlua: no configuration had finished correctly\n");
    return;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (size_t p = 0; p < r->nparams; p++) {
    char v[256];
    lua_pushfstring(L, "%s%s=%s", p ? " " : "", r->params[p].name,
                    kt_value_show(&r->params[p].values[best->vi[p]], v, sizeof v));
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  fprintf(stderr, "ktlua: best so far: %s  %.6g ms\n", lua_tostring(L, -1), best->time_ns / 1e6);
  lua_pop(L, 1);
}

lk_tune_hold *lk_check_tune(lua_State *L, int opts, int owner, bool progress_default,
                            kt_loop_opts *o) {
  lk_check_outputs(L, opts);
  lk_check_stop(L, opts, &o->stop);
  lua_Integer seed = lk_opt_integer(L, opts, "tune options", "seed", 0);
  lua_Integer lookahead = lk_opt_integer(L, opts, "tune options", "lookahead", 0);
  if (lookahead < 0 || lookahead > 1 << 20)
    luaL_error(L, "tune options.lookahead: expected a positive number of configurations");
  o->lookahead = (size_t)lookahead;
  lk_tune_hold *h = new_hold(L);
  lk_task *ut = lk_test_object(L, owner, LK_TASK);
  if (ut) kt_task_retain(h->task = ut->task);
  else kt_replay_retain(h->replay = lk_test_replay(L, owner));
  h->progress = check_progress(L, opts, progress_default, &h->meter);
  h->searcher = lk_check_searcher(L, opts, owner, seed, &o->stop);
  o->searcher = h->searcher;
  o->progress = h->progress ? progress_call : NULL;
  o->progress_ud = h->progress;
  return h;
}

/* Pushes the results (written to the options' outputs first), or raises
** the tuning's error; after Ctrl-C, the best so far and an error. */
int lk_tune_return(lua_State *L, int opts, lk_tune_hold *h, int rc, const kt_error *err) {
  end_meter(h);
  if (h->results && h->results->notice) fprintf(stderr, "ktlua: %s\n", h->results->notice);
  if (h->results) lk_push_results(L, h->results);
  else lua_pushnil(L);
  lk_tune_write(L, opts, h);
  lk_live_finish(L, h, lua_gettop(L), rc ? err : NULL);
  if (rc) return lk_error(L, err);
  if (h->results->stopped && strcmp(h->results->stopped, "interrupted") == 0) {
    report_interrupted(L, h->results);
    return luaL_error(L, "tuning of %s interrupted after %d configurations", h->results->task,
                      (int)h->results->n);
  }
  return 1;
}

/* tuner:tune(kernel[, options]) -> results */
static int tuner_tune(lua_State *L) {
  static const char *const keys[] = {"search",    "seed",    "stop",       "repeats",
                                     "progress",  "output",  "objective",  "journal",
                                     "resume",    "time_limit", "lookahead", "fail_fast",
                                     "check_inputs", "db", "size", "seeds", "metrics",
                                     "maximize", "pipeline",
                                     "validate_on", "early_stop", "energy",
                                     "profile", "compile_outlier", "prior", "transfer", "origin",
                                     "live", NULL};
  kt_tuner *t = lk_check_tuner(L, 1);
  struct kt_fleet *fleet = ((lk_tuner *)lua_touserdata(L, 1))->fleet;
  lk_task *ut = lk_check_task(L, 2);
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    lk_check_keys(L, 3, "tune options", keys);
  }
  lua_settop(L, 3);
  if (lua_istable(L, 3) && lua_getfield(L, 3, "transfer") != LUA_TNIL) {
    /* seeds and prior from a database (ktlua.transfer), in a copy of the options */
    lk_push_stdlib(L, "ktlua.transfer", "tune_options");
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 3);
    lua_call(L, 3, 1);
    lua_replace(L, 3);
  }
  lua_settop(L, 3);
  kt_loop_opts lo = {0};
  lk_tune_hold *h = lk_check_tune(L, 3, 2, true, &lo);
  kt_tune_opts o = {.searcher = lo.searcher, .stop = lo.stop, .repeat = KT_REPEAT_DEFAULT,
                    .progress = lo.progress, .progress_ud = lo.progress_ud};
  check_repeat(L, 3, &o.repeat);
  o.metrics = lk_check_metrics(L, 3, &o.stop, &o.include_host, NULL, true);
  lk_check_journal(L, 3, ut->task->name, &o);
  lk_check_time_limit(L, 3, &o);
  check_fail_fast(L, 3, &o);
  check_outlier(L, 3, &o.outlier);
  lk_check_pipeline(L, 3, &o);
  lk_check_energy(L, 3, &o);
  lk_check_profile(L, 3, &o);
  if (o.early.runs > 0 && kt_metrics_objective_name(o.metrics))
    luaL_error(L, "tune options.early_stop: cutting configurations short by their time needs the "
                  "time as the objective (objective is '%s')", kt_metrics_objective_name(o.metrics));
  const char *when = lk_opt_string(L, 3, "tune options", "check_inputs", "auto");
  if (strcmp(when, "always") == 0) o.check_inputs = KT_CHECK_ALWAYS;
  else if (strcmp(when, "failures") == 0) o.check_inputs = KT_CHECK_FAILURES;
  else if (strcmp(when, "auto") != 0)
    luaL_error(L, "tune options.check_inputs: expected 'auto', 'always' or 'failures', got '%s'",
               when);
  o.lookahead = lo.lookahead;
  kt_db *db = lk_check_db_option(L, 3);
  const char *origin = lk_opt_string(L, 3, "tune options", "origin", NULL);
  if (origin && !db) luaL_error(L, "tune options.origin: it is kept in a database: give db and size too");
  o.seeds = lk_check_seeds(L, 3, ut->task->space, &o.nseeds);
  const kt_prior *prior = lk_check_prior(L, 3, ut->task->space);
  if (prior) o.prior = *prior;
  /* last: the live page is written first once the options are known good */
  lk_live_check(L, 3, h, ut->task->name, kt_device_string(kt_tuner_device(t), "name"), &o.journal);
  lk_live_progress(h, &o.progress, &o.progress_ud);
  kt_error err;
  int rc = fleet ? lk_fleet_tune(L, fleet, ut->task, &o, &h->results, &err)
                 : kt_tune(t, ut->task, &o, &h->results, &err);
  bool whole = rc == 0 && strcmp(h->results->stopped, "interrupted") != 0;
  if (whole && db && kt_results_best(h->results)) {
    lk_tune_write(L, 3, h); /* first: a database that refuses them loses no results */
    lua_getfield(L, 3, "db"); /* again: a callback of the tuning may have closed it */
    db = lk_check_db_named(L, lua_gettop(L), "tune options.db");
    lua_getfield(L, 3, "size");
    lua_getfield(L, 1, "device");
    lk_db_store_tuner(L, db, h->results, -2, -1, LK_DB_TUNE_TOP, origin);
    lua_pop(L, 3);
  }
  return lk_tune_return(L, 3, h, rc, &err);
}

/* The configuration for tuner:run: a table of values, a result (its
** config), or a 0-based index. */
static void check_run_config(lua_State *L, int idx, kt_space *space, uint32_t *vi) {
  kt_error err;
  if (lua_isinteger(L, idx)) {
    if (kt_space_natural_generate(space, &err)) lk_error(L, &err);
    lua_Integer i = lua_tointeger(L, idx);
    if (i < 0 || (uint64_t)i >= kt_space_natural_count(space))
      luaL_argerror(L, idx, "configuration index out of range");
    if (kt_space_natural_config(space, (uint64_t)i, vi, &err)) lk_error(L, &err);
    return;
  }
  if (lua_isnoneornil(L, idx) && kt_space_nparams(space) == 0) return;
  if (lua_isnoneornil(L, idx))
    luaL_argerror(L, idx, "no configuration given (a table of values, a result or an index; "
                          "results:best() gives nil, and why, when no configuration was valid)");
  luaL_checktype(L, idx, LUA_TTABLE);
  if (lua_getfield(L, idx, "config") == LUA_TTABLE) lua_replace(L, idx);
  else lua_pop(L, 1);
  lk_check_config(L, idx, space, vi);
}

/* tuner:run(kernel, config) -> result; outputs are read back into arrays. */
static int tuner_run(lua_State *L) {
  kt_tuner *t = lk_check_tuner(L, 1);
  lk_task *ut = lk_check_task(L, 2);
  lua_settop(L, 3);
  size_t np = kt_space_nparams(ut->task->space);
  uint32_t *vi = lua_newuserdatauv(L, (np ? np : 1) * sizeof *vi, 0);
  check_run_config(L, 3, ut->task->space, vi);
  lk_tune_hold *h = new_hold(L);
  kt_error err;
  if (!(h->results = kt_results_for_task(ut->task, kt_device_string(kt_tuner_device(t), "name"), &err)))
    return lk_error(L, &err);
  kt_result *res = kt_results_add(h->results, 0, vi, &err);
  if (!res || kt_tuner_run_once(t, ut->task, vi, 0, res, &err)) return lk_error(L, &err);
  lk_push_result(L, h->results, res);
  return 1;
}

/* tuner:tune_sizes(make, sizes[, options]) lives in Lua: ktlua.sizes. */
static int tuner_tune_sizes(lua_State *L) {
  lk_check_tuner(L, 1);
  lua_settop(L, 4);
  lk_push_stdlib(L, "ktlua.sizes", "tune");
  lua_insert(L, 1);
  lua_call(L, 4, 1);
  return 1;
}

/* tuner:cache(): the program caches' counts, summed over the devices of a
** tuner over several (threads: each device's). */
static int tuner_cache(lua_State *L) {
  kt_tuner *t = lk_check_tuner(L, 1);
  const lk_tuner *ut = lua_touserdata(L, 1);
  kt_build_stats s = kt_tuner_build_stats(t);
  size_t compiling = kt_tuner_build_compiling(t);
  for (size_t i = 1; i < lk_tuner_count(ut); i++) {
    kt_build_stats d = kt_tuner_build_stats(lk_tuner_at(ut, i));
    s.hits += d.hits;
    s.misses += d.misses;
    s.entries += d.entries;
    s.compiles += d.compiles;
    s.compiled += d.compiled;
    s.cached += d.cached;
    s.workers += d.workers;
    compiling += kt_tuner_build_compiling(lk_tuner_at(ut, i));
  }
  lua_createtable(L, 0, 10);
  lua_pushinteger(L, kt_tuner_build_threads(t));
  lua_setfield(L, -2, "threads");
  lua_pushinteger(L, (lua_Integer)s.hits);
  lua_setfield(L, -2, "hits");
  lua_pushinteger(L, (lua_Integer)s.misses);
  lua_setfield(L, -2, "misses");
  lua_pushinteger(L, (lua_Integer)s.entries);
  lua_setfield(L, -2, "entries");
  lua_pushinteger(L, (lua_Integer)s.compiles);
  lua_setfield(L, -2, "compiles");
  lua_pushinteger(L, (lua_Integer)s.compiled);
  lua_setfield(L, -2, "compiled");
  lua_pushinteger(L, (lua_Integer)s.cached);
  lua_setfield(L, -2, "cached");
  lua_pushinteger(L, (lua_Integer)s.workers);
  lua_setfield(L, -2, "workers");
  lua_pushstring(L, kt_tuner_disk_cache(t)); /* nil: none */
  lua_setfield(L, -2, "place");
  lua_pushinteger(L, (lua_Integer)compiling);
  lua_setfield(L, -2, "compiling");
  return 1;
}

/* A closed tuner still answers its device and methods, so that t:close()
** twice and printing it stay harmless; the methods that need it check. */
static int tuner_index(lua_State *L) {
  luaL_checkudata(L, 1, LK_TUNER);
  const char *key = luaL_checkstring(L, 2);
  if (strcmp(key, "device") == 0) {
    lua_getiuservalue(L, 1, 1);
    return 1;
  }
  if (strcmp(key, "isolated") == 0) {
    lua_pushboolean(L, kt_tuner_isolated(lk_check_tuner(L, 1)));
    return 1;
  }
  if (strcmp(key, "devices") == 0) {
    lk_check_tuner(L, 1);
    lk_push_tuner_devices(L, lua_touserdata(L, 1));
    return 1;
  }
  if (strcmp(key, "renewals") == 0) {
    lua_pushinteger(L, kt_tuner_renewals(lk_check_tuner(L, 1)));
    return 1;
  }
  luaL_getmetafield(L, 1, "methods");
  lua_getfield(L, -1, key);
  return 1;
}

static int tuner_tostring(lua_State *L) {
  if (lk_push_released(L, LK_TUNER)) return 1;
  kt_tuner *t = lk_check_tuner(L, 1);
  const kt_device_info *d = kt_tuner_device(t);
  struct kt_fleet *f = ((lk_tuner *)lua_touserdata(L, 1))->fleet;
  if (f) lua_pushfstring(L, "tuner on %s and %d more (%s)", d->id, (int)kt_fleet_size(f) - 1,
                         kt_device_string(d, "name"));
  else lua_pushfstring(L, "tuner on %s (%s)", d->id, kt_device_string(d, "name"));
  return 1;
}

void lk_open_tuner(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", tuner_gc}, {"__index", tuner_index},
                                  {"__tostring", tuner_tostring}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"kernel", tuner_kernel}, {"composition", tuner_composition},
                                     {"tune", tuner_tune}, {"run", tuner_run},
                                     {"tune_sizes", tuner_tune_sizes},
                                     {"cache", tuner_cache}, {"close", tuner_gc}, {NULL, NULL}};
  static const luaL_Reg fns[] = {{"tuner", l_tuner}, {NULL, NULL}};
  static const char *const fields[] = {"device", "isolated", "devices", "renewals", NULL};
  lk_new_class(L, LK_TUNER, meta, methods);
  lk_class_fields(L, LK_TUNER, fields);
  luaL_setfuncs(L, fns, 0);
}
