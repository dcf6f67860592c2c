/*
** lk_metrics.c: user metrics and objectives in tune options (tuner:tune,
** tuner:online, rec:tune):
**   metrics = {gflops = function(r, cfg) return ... end, ...}
**   objective = "kernel" | "kernel+host" | a metric's name | function(r, cfg)
**   maximize = true
** A metric function gets the result table (time_ms, samples_ms, ...) and
** the configuration of an ok configuration and returns a number (nil: no
** value); an error in it stops the tuning, naming the metric. Results keep
** the values in result.metrics, and results:best() and every searcher go
** by the objective (core/metrics.h).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lk.h"
#include "../core/metrics.h"

/* Calls the function with (result, result.config); *out is its number. */
static int call_metric(const kt_results *rs, const kt_result *r, void *ud, double *out,
                       kt_error *err) {
  lua_State *T = lk_ref_push(ud);
  lk_push_result(T, rs, r);
  lua_getfield(T, -1, "config");
  if (lk_ref_call(ud, 2, 1, true, err)) return -1;
  int t = lua_type(T, -1);
  *out = t == LUA_TNUMBER ? lua_tonumber(T, -1) : NAN;
  lua_pop(T, 1);
  if (t != LUA_TNUMBER && t != LUA_TNIL)
    return kt_fail(err, "returned a %s, expected a number (or nil)", lua_typename(T, t));
  return 0;
}

static int metrics_gc(lua_State *L) {
  kt_metrics **m = lua_touserdata(L, 1);
  kt_metrics_free(*m);
  *m = NULL;
  return 0;
}

static bool is_time(const char *name) {
  return strcmp(name, "kernel") == 0 || strcmp(name, "kernel+host") == 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Checks the table at tbl and adds its metrics in the order of their names
** (a table's pairs come in any order). */
static void add_sorted(lua_State *L, int tbl, kt_metrics *m) {
  size_t n = 0;
  for (lua_pushnil(L); lua_next(L, tbl); lua_pop(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "tune options.metrics: expected names as keys, got a %s", luaL_typename(L, -2));
    const char *name = lua_tostring(L, -2);
    if (!lua_isfunction(L, -1))
      luaL_error(L, "tune options.metrics.%s: expected a function(result, cfg), got %s", name,
                 luaL_typename(L, -1));
    if (is_time(name) || strcmp(name, "objective") == 0)
      luaL_error(L, "tune options.metrics.%s: that name is taken", name);
    n++;
  }
  const char **names = lua_newuserdatauv(L, (n ? n : 1) * sizeof *names, 0);
  size_t i = 0;
  for (lua_pushnil(L); lua_next(L, tbl); lua_pop(L, 1)) names[i++] = lua_tostring(L, -2);
  qsort(names, n, sizeof *names, by_name); /* the keys stay anchored in the table */
  kt_error err;
  for (i = 0; i < n; i++) {
    lua_getfield(L, tbl, names[i]);
    if (kt_metrics_add(m, names[i], call_metric, lk_ref_callback(L, -1), &err)) lk_error(L, &err);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

static void add_metrics(lua_State *L, int opts, kt_metrics *m) {
  if (lk_get_field(L, opts, "metrics") == LUA_TNIL) return (void)lua_pop(L, 1);
  if (!lua_istable(L, -1)) luaL_error(L, "tune options.metrics: expected a table of functions");
  add_sorted(L, lua_gettop(L), m);
  lua_pop(L, 1);
}

static bool has_metric(const kt_metrics *m, const char *name, const kt_results *recorded) {
  for (size_t i = 0; i < m->n; i++)
    if (strcmp(m->items[i].name, name) == 0) return true;
  for (size_t i = 0; recorded && i < recorded->n; i++)
    if (!isnan(kt_result_metric(&recorded->items[i], name))) return true;
  return false;
}

static int objective_error(lua_State *L, const char *name, const kt_results *recorded) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  size_t n = 0;
  const char **names = recorded ? kt_results_metric_names(recorded, &n, NULL) : NULL;
  for (size_t i = 0; i < n; i++) {
    luaL_addstring(&b, i ? ", " : " (recorded: ");
    luaL_addstring(&b, names[i]);
  }
  if (n) luaL_addstring(&b, ")");
  free(names);
  luaL_pushresult(&b);
  return luaL_error(L, "tune options.objective: expected 'kernel', 'kernel+host', the name of "
                       "a metric%s or a function(result, cfg), got '%s'",
                    lua_tostring(L, -1), name);
}

kt_metrics *lk_check_metrics(lua_State *L, int opts, const kt_stop *stop, bool *host,
                             const kt_results *recorded) {
  kt_metrics **slot = lk_new_guarded(L, sizeof *slot, metrics_gc);
  kt_error err;
  if (!(*slot = kt_metrics_new(&err))) lk_error(L, &err);
  kt_metrics *m = *slot;
  add_metrics(L, opts, m);
  bool maximize = lk_opt_boolean(L, opts, "tune options", "maximize", 0);
  int t = lk_get_field(L, opts, "objective");
  *host = false;
  int rc = 0;
  if (t == LUA_TFUNCTION) {
    rc = kt_metrics_objective(m, NULL, call_metric, lk_ref_callback(L, -1), maximize, &err);
  } else if (t == LUA_TSTRING) {
    const char *name = lua_tostring(L, -1);
    *host = strcmp(name, "kernel+host") == 0;
    if (is_time(name) && maximize)
      luaL_error(L, "tune options.maximize: the time (objective '%s') is minimised", name);
    if (!is_time(name) && !has_metric(m, name, recorded)) objective_error(L, name, recorded);
    if (!is_time(name))
      rc = kt_metrics_objective(m, name, NULL, (kt_callback){NULL, NULL}, maximize, &err);
  } else if (t != LUA_TNIL) {
    luaL_error(L, "tune options.objective: expected a name or a function, got %s",
               luaL_typename(L, -1));
  } else if (maximize) {
    luaL_error(L, "tune options.maximize: give the objective to maximise");
  }
  lua_pop(L, 1);
  if (rc) lk_error(L, &err);
  if (kt_metrics_objective_name(m) && stop->target_ns > 0)
    luaL_error(L, "tune options.stop.target_ms: a target time needs the time as the objective "
                  "(objective is '%s')", kt_metrics_objective_name(m));
  return m;
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
