/*
** lk_results.c: tuning results as a Lua object: results[i] (1-based, in
** the order evaluated), results:best(), results:write(path),
** results:summary(), results:print() (stdlib ktlua.report), results:report()
** (an HTML page: stdlib ktlua.report_html).
**
** A result's `finished` is when it was recorded (Unix seconds), when
** known. A result's `resources` lists, per kernel, what the compiled kernel uses:
** registers (per thread), shared_bytes (static shared/local memory per
** block), local_bytes (per-thread local/private memory), constant_bytes,
** max_threads (the largest block it allows); a value the backend cannot
** tell is absent.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lk.h"
#include "../core/results/metrics.h"
#include "../core/results/result_formats.h"

#define MS(ns) ((ns) / 1e6)

static kt_results *check_results(lua_State *L, int idx) {
  return ((lk_results *)lk_check_object(L, idx, LK_RESULTS))->r;
}

void lk_push_results(lua_State *L, kt_results *r) {
  lk_results *ur = lua_newuserdatauv(L, sizeof *ur, 0);
  ur->r = r;
  kt_results_retain(r);
  luaL_setmetatable(L, LK_RESULTS);
}

static void set_ms(lua_State *L, const char *key, double ns) {
  lua_pushnumber(L, MS(ns));
  lua_setfield(L, -2, key);
}

static void push_overheads(lua_State *L, const kt_overheads *o) {
  lua_createtable(L, 0, 7);
  set_ms(L, "build", o->build);
  set_ms(L, "data", o->data);
  set_ms(L, "validation", o->validation);
  set_ms(L, "launcher", o->launcher);
  set_ms(L, "wait", o->wait);
  set_ms(L, "searcher", o->searcher);
  set_ms(L, "framework", o->framework);
  set_ms(L, "total", o->total);
}

static void push_kernel_sizes(lua_State *L, const kt_sizes *s) {
  lk_push_sizes(L, s->global, s->dims);
  lua_setfield(L, -2, "global");
  if (s->local[0]) {
    lk_push_sizes(L, s->local, s->dims);
    lua_setfield(L, -2, "group");
  }
}

static void push_config(lua_State *L, const kt_results *rs, const uint32_t *vi) {
  lua_createtable(L, 0, (int)rs->nparams);
  for (size_t p = 0; p < rs->nparams; p++) {
    lk_push_value(L, &rs->params[p].values[vi[p]]);
    lua_setfield(L, -2, rs->params[p].name);
  }
}

/* {kernel = name, registers = ..., shared_bytes = ..., ...}: unknown
** values are left out. */
static void push_usage(lua_State *L, const char *kernel, const kt_kernel_usage *u) {
  const char *names[KT_USAGE_FIELDS];
  int64_t values[KT_USAGE_FIELDS];
  kt_usage_fields(u, names, values);
  lua_createtable(L, 0, KT_USAGE_FIELDS + 1);
  lua_pushstring(L, kernel);
  lua_setfield(L, -2, "kernel");
  for (int i = 0; i < KT_USAGE_FIELDS; i++) {
    if (values[i] < 0) continue;
    lua_pushinteger(L, (lua_Integer)values[i]);
    lua_setfield(L, -2, names[i]);
  }
}

/* {{kernel = name, global = {...}, group = {...}, count = n}, ...} */
static void push_launched(lua_State *L, const kt_results *rs, const kt_result *r) {
  lua_createtable(L, (int)r->nlaunched, 0);
  for (size_t i = 0; i < r->nlaunched; i++) {
    const kt_launch_shape *h = &r->launched[i];
    kt_sizes s = {h->dims, {h->global[0], h->global[1], h->global[2]},
                  {h->local[0], h->local[1], h->local[2]}, {0}};
    lua_createtable(L, 0, 4);
    lua_pushstring(L, h->kernel < rs->nkernels ? rs->kernels[h->kernel] : "?");
    lua_setfield(L, -2, "kernel");
    push_kernel_sizes(L, &s);
    lua_pushinteger(L, (lua_Integer)h->count);
    lua_setfield(L, -2, "count");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "launched");
}

void lk_push_result(lua_State *L, const kt_results *rs, const kt_result *r) {
  lua_createtable(L, 0, 14);
  lua_pushinteger(L, (lua_Integer)r->index);
  lua_setfield(L, -2, "index");
  push_config(L, rs, r->vi);
  lua_setfield(L, -2, "config");
  lua_pushstring(L, kt_status_name(r->status));
  lua_setfield(L, -2, "status");
  if (!isnan(r->time_ns)) set_ms(L, "time_ms", r->time_ns); /* out_of_bounds keeps its time */
  lua_createtable(L, (int)r->nsamples, 0);
  for (size_t i = 0; i < r->nsamples; i++) {
    lua_pushnumber(L, MS(r->samples_ns[i]));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "samples_ms");
  lua_pushinteger(L, (lua_Integer)r->launches);
  lua_setfield(L, -2, "launches");
  if (r->cut_short) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "cut_short");
  }
  if (r->waited_ns > 0) set_ms(L, "waited_ms", r->waited_ns);
  if (r->crowded) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "crowded");
  }
  if (r->resumed) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "resumed");
  }
  if (r->infrastructure) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "infrastructure");
  }
  if (r->nkernels > 0 && r->sizes[0].dims > 0) push_kernel_sizes(L, &r->sizes[0]);
  lua_createtable(L, (int)r->nkernels, 0);
  for (size_t k = 0; k < r->nkernels; k++) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, k < rs->nkernels ? rs->kernels[k] : "?");
    lua_setfield(L, -2, "kernel");
    if (r->sizes[k].dims > 0) push_kernel_sizes(L, &r->sizes[k]);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "sizes");
  lua_createtable(L, (int)r->nkernels, 0);
  for (size_t k = 0; k < r->nkernels && r->usage; k++) {
    push_usage(L, k < rs->nkernels ? rs->kernels[k] : "?", &r->usage[k]);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "resources");
  set_ms(L, "build_ms", r->over.build);
  set_ms(L, "compile_ms", r->compile_ns);
  if (!isnan(r->elapsed_ns)) set_ms(L, "elapsed_ms", r->elapsed_ns);
  if (r->finished > 0) { /* Unix seconds */
    lua_pushnumber(L, r->finished);
    lua_setfield(L, -2, "finished");
  }
  push_overheads(L, &r->over);
  lua_setfield(L, -2, "overheads_ms");
  const char *keys[] = {"error", "build_log", "device_log", "retried", "device"};
  const char *texts[] = {r->error, r->build_log, r->device_log, r->retried, r->device};
  for (int i = 0; i < 5; i++)
    if (texts[i]) {
      lua_pushstring(L, texts[i]);
      lua_setfield(L, -2, keys[i]);
    }
  if (r->nlaunched) push_launched(L, rs, r);
  if (r->nmetrics) {
    lk_push_metrics(L, r);
    lua_setfield(L, -2, "metrics");
  }
}

/* Where the time between configurations went (kt_gaps). */
static void push_gaps(lua_State *L, const kt_gaps *g) {
  lua_createtable(L, 0, 10);
  lua_pushinteger(L, (lua_Integer)g->n);
  lua_setfield(L, -2, "n");
  set_ms(L, "idle_ms", g->idle);
  set_ms(L, "verdict_ms", g->verdict);
  set_ms(L, "after_ms", g->after);
  set_ms(L, "loop_ms", g->loop);
  set_ms(L, "prepare_ms", g->prepare);
  set_ms(L, "kernel_ms", g->kernel);
  set_ms(L, "build_wait_ms", g->build_wait);
  set_ms(L, "launch_ms", g->launch);
  lua_pushinteger(L, (lua_Integer)g->ahead);
  lua_setfield(L, -2, "ahead");
}

static int results_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)check_results(L, 1)->n);
  return 1;
}

/* nil and why, when no configuration came out ok. */
static int no_best(lua_State *L, const kt_results *r) {
  size_t count[KT_STATUS_COUNT] = {0};
  for (size_t i = 0; i < r->n; i++) count[r->items[i].status]++;
  luaL_Buffer b;
  lua_pushnil(L);
  if (r->n == 0) {
    lua_pushliteral(L, "no configuration was evaluated");
    return 2;
  }
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "no configuration was valid: ");
  for (int s = 0, first = 1; s < KT_STATUS_COUNT; s++)
    if (count[s]) {
      lua_pushfstring(L, "%s%d %s", first ? "" : ", ", (int)count[s], kt_status_name((kt_status)s));
      luaL_addvalue(&b);
      first = 0;
    }
  luaL_pushresult(&b);
  return 2;
}

static int results_best(lua_State *L) {
  kt_results *r = check_results(L, 1);
  const kt_result *best = kt_results_best(r);
  if (!best) return no_best(L, r);
  lk_push_result(L, r, best);
  return 1;
}

static int results_list(lua_State *L) {
  kt_results *r = check_results(L, 1);
  lua_createtable(L, (int)r->n, 0);
  for (size_t i = 0; i < r->n; i++) {
    lk_push_result(L, r, &r->items[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

const char *lk_results_format(const char *path) {
  return ends_with(path, ".csv") ? "csv" : ends_with(path, ".json") ? "json" : NULL;
}

/* results:write(path[, format[, options]]): format "csv", "json", "t4" or
** "kernel-tuner-cache" (options.problem_size: what Kernel Tuner's
** tune_kernel is given, a number or a list of them), else from the path's
** extension (.csv, .json). */
static int write_as(lua_State *L, kt_results *r, const char *path, const char *format,
                    const kt_cache_opts *cache, kt_error *err) {
  if (strcmp(format, "csv") == 0) return kt_results_write_csv(r, path, err);
  if (strcmp(format, "json") == 0) return kt_results_write_json(r, path, err);
  if (strcmp(format, "t4") == 0) return kt_results_write_t4(r, path, err);
  if (strcmp(format, "kernel-tuner-cache") == 0) return kt_results_write_cache(r, path, cache, err);
  return luaL_error(L, "unknown result format '%s' (expected csv, json, t4 or kernel-tuner-cache)",
                    format);
}

static int write_with(lua_State *L, kt_results *r, const char *path, const char *format,
                      const kt_cache_opts *cache) {
  if (!format) format = lk_results_format(path);
  if (!format)
    return luaL_error(L, "cannot tell the format of '%s': name it .csv or .json, or give the "
                         "format", path);
  kt_error err;
  return write_as(L, r, path, format, cache, &err) ? lk_error(L, &err) : 0;
}

int lk_results_write(lua_State *L, kt_results *r, const char *path, const char *format) {
  return write_with(L, r, path, format, NULL);
}

/* options.problem_size into o->problem_size (at most 3 sizes, in size). */
static void check_write_options(lua_State *L, int idx, int64_t size[3], kt_cache_opts *o) {
  static const char *const keys[] = {"problem_size", NULL};
  if (lua_isnoneornil(L, idx)) return;
  luaL_checktype(L, idx, LUA_TTABLE);
  lk_check_keys(L, idx, "write options", keys);
  lua_getfield(L, idx, "problem_size");
  bool scalar = lua_isinteger(L, -1);
  if (scalar) { /* one size: a list of one, written as a number */
    lua_createtable(L, 1, 0);
    lua_insert(L, -2);
    lua_rawseti(L, -2, 1);
  }
  size_t n = lua_istable(L, -1) ? (size_t)luaL_len(L, -1) : 0;
  if (!lua_isnil(L, -1) && (n < 1 || n > 3))
    luaL_argerror(L, idx, "problem_size must be a size or a list of 1 to 3 sizes");
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, -1, (lua_Integer)i + 1);
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0)
      luaL_argerror(L, idx, "problem_size must be a size or a list of 1 to 3 sizes");
    size[i] = (int64_t)lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  *o = (kt_cache_opts){n ? size : NULL, n, scalar};
}

static int results_write(lua_State *L) {
  kt_results *r = check_results(L, 1);
  const char *path = luaL_checkstring(L, 2), *format = luaL_optstring(L, 3, NULL);
  int64_t size[3];
  kt_cache_opts cache = {NULL, 0, false};
  check_write_options(L, 4, size, &cache);
  write_with(L, r, path, format, &cache);
  lua_settop(L, 1);
  return 1;
}

static int results_summary(lua_State *L) {
  kt_results *r = check_results(L, 1);
  kt_overheads sum = {0};
  double kernel = 0, compile = 0;
  size_t count[KT_STATUS_COUNT] = {0}, resumed = 0;
  for (size_t i = 0; i < r->n; i++) {
    const kt_result *x = &r->items[i];
    count[x->status]++;
    /* the times are this run's: a journal's results were timed by another */
    if (x->resumed) {
      resumed++;
      continue;
    }
    for (size_t s = 0; s < x->nsamples; s++) kernel += x->samples_ns[s];
    compile += x->compile_ns;
    sum.build += x->over.build;
    sum.data += x->over.data;
    sum.validation += x->over.validation;
    sum.launcher += x->over.launcher;
    sum.wait += x->over.wait;
    sum.searcher += x->over.searcher;
    sum.framework += x->over.framework;
    sum.total += x->over.total;
  }
  lua_createtable(L, 0, 16);
  /* those whose compile was not over when the tuning stopped were not evaluated */
  lua_pushinteger(L, (lua_Integer)(r->n - count[KT_COMPILE_DEFERRED]));
  lua_setfield(L, -2, "evaluated");
  lua_pushinteger(L, (lua_Integer)count[KT_COMPILE_DEFERRED]);
  lua_setfield(L, -2, "deferred");
  lua_pushinteger(L, (lua_Integer)resumed);
  lua_setfield(L, -2, "resumed");
  lua_createtable(L, 0, KT_STATUS_COUNT);
  for (int s = 0; s < KT_STATUS_COUNT; s++) {
    lua_pushinteger(L, (lua_Integer)count[s]);
    lua_setfield(L, -2, kt_status_name((kt_status)s));
  }
  lua_setfield(L, -2, "statuses");
  set_ms(L, "wall_ms", r->wall_ns);
  set_ms(L, "setup_ms", r->setup_ns);
  push_gaps(L, &r->gap);
  lua_setfield(L, -2, "gap");
  set_ms(L, "device_ms", r->device_ns);
  set_ms(L, "kernel_ms", kernel);
  set_ms(L, "build_ms", sum.build);
  set_ms(L, "compile_ms", compile);
  set_ms(L, "data_ms", sum.data);
  set_ms(L, "validation_ms", sum.validation);
  set_ms(L, "launcher_ms", sum.launcher);
  set_ms(L, "wait_ms", sum.wait);
  set_ms(L, "searcher_ms", sum.searcher);
  set_ms(L, "framework_ms", sum.framework);
  set_ms(L, "total_ms", sum.total); /* for a replay, its simulated clock */
  set_ms(L, "profile_ms", r->profile_ns);
  lua_pushinteger(L, (lua_Integer)r->profiled);
  lua_setfield(L, -2, "profiled");
  lua_pushinteger(L, (lua_Integer)r->profile_passes);
  lua_setfield(L, -2, "profile_passes");
  lua_pushstring(L, r->stopped); /* nil: unknown (a file that does not say) */
  lua_setfield(L, -2, "stopped");
  lk_push_count(L, r->space_count);
  lua_setfield(L, -2, "space_valid");
  lua_pushnumber(L, r->space_all);
  lua_setfield(L, -2, "space_all");
  lk_push_prune_counts(L, r->pruned);
  lua_setfield(L, -2, "pruned");
  const struct { const char *name; size_t n; } counts[] = {
      {"compiles", r->compiles},
      {"cached", r->cached},
      {"withdrawn", r->withdrawn},
      {"abandoned", r->abandoned},
      {"compile_workers", r->compile_workers},
      {"input_checks", r->input_checks},
      {"input_checks_device", r->input_checks_device},
      {"input_checks_queued", r->input_checks_queued},
      {"inputs_changed", r->inputs_changed},
      {"restores", r->restores},
      {"input_check_requests", r->input_check_requests},
      {"input_check_round_trips", r->input_check_round_trips}};
  for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
    lua_pushinteger(L, (lua_Integer)counts[i].n);
    lua_setfield(L, -2, counts[i].name);
  }
  const char *keys[] = {"inputs_log", "device_log"};
  const char *texts[] = {r->inputs_log, r->device_log};
  for (int i = 0; i < 2; i++)
    if (texts[i]) {
      lua_pushstring(L, texts[i]);
      lua_setfield(L, -2, keys[i]);
    }
  return 1;
}

/* results:print([options]) lives in Lua: require("ktlua.report").print. */
static int results_print(lua_State *L) {
  check_results(L, 1);
  lua_settop(L, 2);
  lk_push_stdlib(L, "ktlua.report", "print");
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_call(L, 2, 0);
  lua_settop(L, 1);
  return 1;
}

/* results:report(path[, options]) lives in Lua: require("ktlua.report_html").write;
** returns the paths it wrote, the page first. */
static int results_report(lua_State *L) {
  check_results(L, 1);
  lua_settop(L, 3);
  lk_push_stdlib(L, "ktlua.report_html", "write");
  lua_insert(L, 1);
  lua_call(L, 3, 1);
  return 1;
}

static int results_gc(lua_State *L) {
  lk_results *ur = luaL_checkudata(L, 1, LK_RESULTS);
  kt_results_release(ur->r);
  ur->r = NULL;
  return 0;
}

static int results_tostring(lua_State *L) {
  if (lk_push_released(L, LK_RESULTS)) return 1;
  kt_results *r = check_results(L, 1);
  lua_pushfstring(L, "results of %s: %d configurations", r->task, (int)r->n);
  return 1;
}

static void push_params(lua_State *L, const kt_results *r) {
  lua_createtable(L, (int)r->nparams, 0);
  for (size_t p = 0; p < r->nparams; p++) {
    lua_createtable(L, 0, 2);
    lua_pushstring(L, r->params[p].name);
    lua_setfield(L, -2, "name");
    lua_createtable(L, (int)r->params[p].nvalues, 0);
    for (size_t v = 0; v < r->params[p].nvalues; v++) {
      lk_push_value(L, &r->params[p].values[v]);
      lua_rawseti(L, -2, (lua_Integer)v + 1);
    }
    lua_setfield(L, -2, "values");
    lua_rawseti(L, -2, (lua_Integer)p + 1);
  }
}

static int results_index(lua_State *L) {
  if (lk_push_method(L)) return 1;
  kt_results *r = check_results(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    lua_Integer i = luaL_checkinteger(L, 2);
    if (i < 1 || (lua_Unsigned)i > r->n) return 0;
    lk_push_result(L, r, &r->items[i - 1]);
    return 1;
  }
  const char *key = luaL_checkstring(L, 2);
  if (strcmp(key, "task") == 0) lua_pushstring(L, r->task);
  else if (strcmp(key, "device") == 0) lua_pushstring(L, r->device);
  else if (strcmp(key, "searcher") == 0) lua_pushstring(L, r->searcher ? r->searcher : "");
  else if (strcmp(key, "params") == 0) push_params(L, r);
  else if (strcmp(key, "stopped") == 0) lua_pushstring(L, r->stopped); /* nil: unknown */
  else if (strcmp(key, "objective") == 0) lua_pushstring(L, r->objective ? r->objective : "kernel");
  else if (strcmp(key, "maximize") == 0) lua_pushboolean(L, r->maximize);
  else if (strcmp(key, "notice") == 0) lua_pushstring(L, r->notice); /* nil when none */
  else if (strcmp(key, "device_threads") == 0 && r->device_threads > 0)
    lua_pushinteger(L, r->device_threads); /* nil: none, or a file that does not keep it */
  else if (strcmp(key, "backend") == 0) lua_pushstring(L, r->backend); /* nil: unknown */
  else if (strcmp(key, "problem_size") == 0 && r->nproblem) {
    lua_createtable(L, (int)r->nproblem, 0);
    for (size_t i = 0; i < r->nproblem; i++)
      lua_pushinteger(L, (lua_Integer)r->problem_size[i]), lua_rawseti(L, -2, (lua_Integer)i + 1);
  } else lua_pushnil(L);
  return 1;
}

/* Makes objective (with maximize) the results' objective: their best and
** costs go by it from now on. A time keeps the time the file names. */
static void set_objective(lua_State *L, kt_results *r, const char *objective, bool maximize) {
  if (!objective || (kt_objective_is_time(objective) && kt_objective_is_time(r->objective))) return;
  char *copy = strdup(objective);
  if (!copy) luaL_error(L, "not enough memory");
  free(r->objective);
  r->objective = copy;
  r->maximize = maximize;
  kt_results_rescore(r);
}

/* kt.load(path[, {max_bytes = n, objective =, maximize =}]): results from
** a results file or a journal, of at most max_bytes (gunzipped); objective
** overrides the one the file names (a CSV file names none). */
static int l_load(lua_State *L) {
  static const char *const keys[] = {"max_bytes", "objective", "maximize", NULL};
  const char *path = luaL_checkstring(L, 1);
  lua_Integer max = 0;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lk_check_keys(L, 2, "load options", keys);
    bool limited = lk_get_field(L, 2, "max_bytes") != LUA_TNIL;
    lua_pop(L, 1);
    max = lk_opt_integer(L, 2, "load options", "max_bytes", 0);
    if (limited && max <= 0) luaL_argerror(L, 2, "max_bytes must be a positive number of bytes");
  }
  kt_error err;
  kt_results *r = kt_results_read(path, max > 0 ? (size_t)max : 0, &err);
  if (!r) return lk_error(L, &err);
  lk_push_results(L, r); /* owns r from here, also on an error below */
  kt_results_release(r);
  if (!lua_isnoneornil(L, 2)) {
    const char *objective = NULL;
    bool maximize = false;
    lk_check_objective(L, 2, "load options", r, &objective, &maximize);
    set_objective(L, r, objective, maximize);
  }
  return 1;
}

void lk_open_results(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", results_gc}, {"__len", results_len},
                                  {"__index", results_index}, {"__tostring", results_tostring},
                                  {NULL, NULL}};
  static const luaL_Reg methods[] = {{"best", results_best}, {"list", results_list},
                                     {"write", results_write}, {"summary", results_summary},
                                     {"print", results_print}, {"report", results_report},
                                     {NULL, NULL}};
  static const luaL_Reg fns[] = {{"load", l_load}, {NULL, NULL}};
  static const char *const fields[] = {"task",      "device",  "searcher", "params",
                                      "stopped",   "objective", "maximize", "notice",
                                      "backend",   "problem_size", "device_threads", NULL};
  lk_new_class(L, LK_RESULTS, meta, methods);
  lk_class_fields(L, LK_RESULTS, fields);
  luaL_setfuncs(L, fns, 0);
}

/* The fields objective and maximize of the options at idx, for results
** recorded before (rec:optimum, rec:score, kt.load): the objective must be
** the time ("kernel") or a metric of rec; without one, *name and *maximize
** stay. */
void lk_check_objective(lua_State *L, int idx, const char *what, const kt_results *rec,
                        const char **name, bool *maximize) {
  const char *given = lk_opt_string(L, idx, what, "objective", NULL);
  bool most = lk_opt_boolean(L, idx, what, "maximize", 0);
  if (!given && most) luaL_error(L, "%s.maximize: give the objective to maximise", what);
  if (!given) return;
  if (kt_objective_is_time(given) && most)
    luaL_error(L, "%s.maximize: the time (objective '%s') is minimised", what, given);
  size_t n = 0;
  const char **names = kt_results_metric_names(rec, &n, NULL);
  bool known = kt_objective_is_time(given);
  for (size_t i = 0; i < n && !known; i++) known = strcmp(names[i], given) == 0;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (size_t i = 0; i < n; i++) {
    luaL_addstring(&b, i ? ", " : "");
    luaL_addstring(&b, names[i]);
  }
  free(names);
  luaL_pushresult(&b);
  if (!known)
    luaL_error(L, "%s.objective: expected 'kernel' or a recorded metric (%s), got '%s'", what,
               n ? lua_tostring(L, -1) : "none recorded", given);
  lua_pop(L, 1);
  *name = given;
  *maximize = most;
}

/* {gflops = 12.5, ...} */
void lk_push_metrics(lua_State *L, const kt_result *r) {
  lua_createtable(L, 0, (int)r->nmetrics);
  for (size_t i = 0; i < r->nmetrics; i++) {
    lua_pushnumber(L, r->metrics[i].value);
    lua_setfield(L, -2, r->metrics[i].name);
  }
}
