/*
** lk_metrics.c: user metrics and objectives in tune options (tuner:tune,
** tuner:online, rec:tune):
**   metrics = {gflops = function(r, cfg) return ... end, ...}
**   metrics = {{"gflops", function(r, cfg) ... end}, {"eff", ...}}   (in order)
**   objective = "kernel" | "kernel+host" | a metric's name | function(r, cfg)
**     (a metric of metrics =, of energy = true, a counter of profile =, or
**     one a recording holds: any name, dots and all)
**   maximize = true
** A metric function gets the result table (time_ms, samples_ms, ...) and
** the configuration of an ok configuration and returns a number (nil: no
** value); an error in it stops the tuning, naming the metric. Results keep
** the values in result.metrics, and results:best() and every searcher go
** by the objective (core/results/metrics.h).
** A metric may read others (r.metrics.gflops), as Kernel Tuner's ordered
** metrics do: a list of pairs computes them in its order, a table in the
** order of the names, and either computes a metric that is read before
** its turn then and there (two that read each other are an error).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lk.h"
#include "../core/results/metrics.h"

/* __index of result.metrics: a metric read before its turn is computed
** now. Upvalues: the metrics {name = function}, the result, its
** configuration, the set of those being computed. */
static int metric_on_demand(lua_State *L) {
  lua_settop(L, 2);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TFUNCTION) return 0;
  const char *name = lua_tostring(L, 2);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(4)) != LUA_TNIL)
    return luaL_error(L, "metric %s is read while it is computed (metrics that read each "
                         "other)", name);
  lua_pop(L, 1);
  lua_pushvalue(L, 2);
  lua_pushboolean(L, 1);
  lua_rawset(L, lua_upvalueindex(4));
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, lua_upvalueindex(3));
  lua_call(L, 2, 1);
  int t = lua_type(L, -1);
  if (t != LUA_TNUMBER && t != LUA_TNIL)
    return luaL_error(L, "metric %s returned a %s, expected a number (or nil)", name,
                      lua_typename(L, t));
  lua_pushvalue(L, 2);
  lua_pushnil(L);
  lua_rawset(L, lua_upvalueindex(4));
  lua_pushvalue(L, 2);
  lua_pushvalue(L, -2);
  lua_rawset(L, 1);
  return 1;
}

/* result.metrics (made if absent) computes the metrics of defs that are
** read before their turn. The result is at res; the metric being computed
** is named at ref's [3]. */
static void metrics_on_demand(lua_State *T, int res, int defs, int ref) {
  if (lua_getfield(T, res, "metrics") != LUA_TTABLE) {
    lua_pop(T, 1);
    lua_newtable(T);
    lua_pushvalue(T, -1);
    lua_setfield(T, res, "metrics");
  }
  lua_createtable(T, 0, 1);
  lua_pushvalue(T, defs);
  lua_pushvalue(T, res);
  lua_getfield(T, res, "config");
  lua_newtable(T);
  lua_rawgeti(T, ref, 3);
  lua_pushboolean(T, 1);
  lua_rawset(T, -3);
  lua_pushcclosure(T, metric_on_demand, 4);
  lua_setfield(T, -2, "__index");
  lua_setmetatable(T, -2);
}

/* The metrics of defs that the table at idx holds and r does not: those
** computed on demand, recorded so that they are not computed again. */
static int keep_computed(lua_State *T, int idx, int defs, kt_result *r, kt_error *err) {
  for (lua_pushnil(T); lua_next(T, idx); lua_pop(T, 1)) {
    if (lua_type(T, -2) != LUA_TSTRING || lua_type(T, -1) != LUA_TNUMBER) continue;
    const char *name = lua_tostring(T, -2);
    lua_pushvalue(T, -2);
    bool defined = lua_rawget(T, defs) == LUA_TFUNCTION;
    lua_pop(T, 1);
    if (defined && isnan(kt_result_metric(r, name)) &&
        kt_result_set_metric(r, name, lua_tonumber(T, -1), err)) {
      lua_pop(T, 2);
      return -1;
    }
  }
  return 0;
}

/* Calls the function with (result, result.config); *out is its number. ud
** references {function, {name = function} of every metric, name}. */
static int call_metric(const kt_results *rs, kt_result *r, void *ud, double *out,
                       kt_error *err) {
  lua_State *T = lk_ref_push(ud);
  int ref = lua_gettop(T), defs = ref + 1, res = ref + 2;
  lua_rawgeti(T, ref, 2);
  lk_push_result(T, rs, r);
  metrics_on_demand(T, res, defs, ref); /* at res + 1 */
  lua_rawgeti(T, ref, 1);
  lua_pushvalue(T, res);
  lua_getfield(T, res, "config");
  if (lk_ref_call(ud, 2, 1, true, err)) {
    lua_settop(T, ref - 1);
    return -1;
  }
  int t = lua_type(T, -1);
  *out = t == LUA_TNUMBER ? lua_tonumber(T, -1) : NAN;
  int rc = keep_computed(T, res + 1, defs, r, err);
  lua_settop(T, ref - 1);
  if (rc) return -1;
  if (t != LUA_TNUMBER && t != LUA_TNIL)
    return kt_fail(err, "returned a %s, expected a number (or nil)", lua_typename(T, t));
  return 0;
}

/* The callback of the function at fn: {function, the metrics at defs,
** its name}. */
static kt_callback metric_callback(lua_State *L, int fn, int defs, const char *name) {
  lua_createtable(L, 3, 0);
  lua_pushvalue(L, fn);
  lua_rawseti(L, -2, 1);
  lua_pushvalue(L, defs);
  lua_rawseti(L, -2, 2);
  lua_pushstring(L, name);
  lua_rawseti(L, -2, 3);
  kt_callback cb = lk_ref_callback(L, -1);
  lua_pop(L, 1);
  return cb;
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

/* A metric's name and function (at fn), where says which: checked, then
** defined in defs. */
static void check_metric(lua_State *L, const char *name, int fn, const char *where, int defs) {
  if (!lua_isfunction(L, fn))
    luaL_error(L, "tune options.metrics%s: expected a function(result, cfg), got %s", where,
               luaL_typename(L, fn));
  if (is_time(name) || strcmp(name, "objective") == 0)
    luaL_error(L, "tune options.metrics%s: the name '%s' is taken", where, name);
  if (lua_getfield(L, defs, name) != LUA_TNIL)
    luaL_error(L, "tune options.metrics%s: the metric '%s' is defined twice", where, name);
  lua_pop(L, 1);
  lua_pushvalue(L, fn);
  lua_setfield(L, defs, name);
}

/* Checks the table at tbl, a map of names to functions, and defines its
** metrics in defs; *names (anchored by the table) in the order of the
** names (a table's pairs come in any order). */
static size_t map_names(lua_State *L, int tbl, int defs, const char ***names) {
  size_t n = 0;
  for (lua_pushnil(L); lua_next(L, tbl); lua_pop(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "tune options.metrics: expected names as keys or a list of {name, "
                    "function}, got a %s key", luaL_typename(L, -2));
    const char *name = lua_tostring(L, -2);
    int fn = lua_gettop(L);
    check_metric(L, name, fn, lua_pushfstring(L, ".%s", name), defs);
    lua_pop(L, 1);
    n++;
  }
  *names = lua_newuserdatauv(L, (n ? n : 1) * sizeof **names, 0);
  size_t i = 0;
  for (lua_pushnil(L); lua_next(L, tbl); lua_pop(L, 1)) (*names)[i++] = lua_tostring(L, -2);
  qsort(*names, n, sizeof **names, by_name);
  return n;
}

/* Checks a list of {name, function} at tbl and defines its metrics in
** defs; *names (anchored by the list) in its order. */
static size_t list_names(lua_State *L, int tbl, int defs, const char ***names) {
  size_t n = (size_t)luaL_len(L, tbl), i = 0;
  for (lua_pushnil(L); lua_next(L, tbl); lua_pop(L, 1))
    if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || (size_t)lua_tointeger(L, -2) > n)
      luaL_error(L, "tune options.metrics: a list of {name, function} has the key %s too",
                 luaL_tolstring(L, -2, NULL));
  *names = lua_newuserdatauv(L, n * sizeof **names, 0);
  for (i = 0; i < n; i++) {
    const char *where = lua_pushfstring(L, "[%d]", (int)i + 1);
    if (lua_rawgeti(L, tbl, (lua_Integer)i + 1) != LUA_TTABLE ||
        lua_rawgeti(L, -1, 1) != LUA_TSTRING)
      luaL_error(L, "tune options.metrics%s: expected {name, function}", where);
    (*names)[i] = lua_tostring(L, -1);
    lua_rawgeti(L, -2, 2);
    check_metric(L, (*names)[i], lua_gettop(L), where, defs);
    lua_pop(L, 4);
  }
  return n;
}

static void add_metrics(lua_State *L, int opts, kt_metrics *m, int defs) {
  if (lk_get_field(L, opts, "metrics") == LUA_TNIL) return (void)lua_pop(L, 1);
  if (!lua_istable(L, -1))
    luaL_error(L, "tune options.metrics: expected a table of functions or a list of {name, "
                  "function}");
  int tbl = lua_gettop(L);
  const char **names;
  size_t n = luaL_len(L, tbl) > 0 ? list_names(L, tbl, defs, &names)
                                  : map_names(L, tbl, defs, &names);
  kt_error err;
  for (size_t i = 0; i < n; i++) {
    lua_getfield(L, defs, names[i]);
    kt_callback cb = metric_callback(L, lua_gettop(L), defs, names[i]);
    if (kt_metrics_add(m, names[i], call_metric, cb, &err)) lk_error(L, &err);
    lua_pop(L, 1);
  }
  lua_settop(L, tbl - 1);
}

/* Appends "where: a, b" to the list at groups when the list at names has
** any; whether name is among them. */
static bool add_group(lua_State *L, int groups, const char *where, int names, const char *name) {
  size_t n = lua_rawlen(L, names);
  bool found = false;
  if (n == 0) return false;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, where);
  for (size_t i = 1; i <= n; i++) {
    luaL_addstring(&b, i > 1 ? ", " : ": ");
    lua_rawgeti(L, names, (lua_Integer)i);
    found = found || strcmp(lua_tostring(L, -1), name) == 0;
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  lua_rawseti(L, groups, (lua_Integer)lua_rawlen(L, groups) + 1);
  return found;
}

/* The metrics a tuning with these options has, by where they come from: a
** list of "where: a, b" pushed; whether name is one. measured: energy =
** and profile = count (tuner:tune). */
static bool push_collected(lua_State *L, int opts, const kt_metrics *m, const kt_results *recorded,
                           bool measured, const char *name) {
  lua_newtable(L);
  int groups = lua_gettop(L);
  bool found = false;
  for (int source = 0; source < 4; source++) {
    static const char *const where[] = {"metrics", "energy = true", "profile", "recorded"};
    lua_newtable(L);
    int names = lua_gettop(L);
    size_t n = 0;
    const char **rec = source == 3 && recorded ? kt_results_metric_names(recorded, &n, NULL) : NULL;
    for (size_t i = 0; source == 0 && i < m->n; i++) {
      lua_pushstring(L, m->items[i].name);
      lua_rawseti(L, names, (lua_Integer)i + 1);
    }
    if (source == 1 && measured) lk_energy_list(L, opts, names);
    if (source == 2 && measured) lk_profile_list(L, opts, names);
    for (size_t i = 0; i < n; i++) {
      lua_pushstring(L, rec[i]);
      lua_rawseti(L, names, (lua_Integer)i + 1);
    }
    free(rec);
    found = add_group(L, groups, where[source], names, name) || found;
    lua_settop(L, groups);
  }
  return found;
}

/* An objective that no metric of the tuning has, with those it has. */
static int objective_error(lua_State *L, const char *name, bool measured, int groups) {
  if (measured && lk_energy_metric(name)) /* a tuning on a device: tuner:tune's option */
    return luaL_error(L, "tune options.objective: '%s' is measured with energy = true", name);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  size_t n = lua_rawlen(L, groups);
  for (size_t i = 1; i <= n; i++) {
    luaL_addstring(&b, i > 1 ? "; " : " (");
    lua_rawgeti(L, groups, (lua_Integer)i);
    luaL_addvalue(&b);
  }
  if (n) luaL_addstring(&b, ")");
  luaL_pushresult(&b);
  return luaL_error(L, "tune options.objective: expected 'kernel', 'kernel+host', the name of "
                       "a metric%s or a function(result, cfg), got '%s'",
                    lua_tostring(L, -1), name);
}

kt_metrics *lk_check_metrics(lua_State *L, int opts, const kt_stop *stop, bool *host,
                             const kt_results *recorded, bool measured) {
  kt_metrics **slot = lk_new_guarded(L, sizeof *slot, metrics_gc);
  kt_error err;
  if (!(*slot = kt_metrics_new(&err))) lk_error(L, &err);
  kt_metrics *m = *slot;
  lua_newtable(L); /* every metric by name, for those read before their turn */
  int defs = lua_gettop(L);
  add_metrics(L, opts, m, defs);
  bool maximize = lk_opt_boolean(L, opts, "tune options", "maximize", 0);
  int t = lk_get_field(L, opts, "objective");
  *host = false;
  int rc = 0;
  if (t == LUA_TFUNCTION) {
    kt_callback cb = metric_callback(L, lua_gettop(L), defs, "objective");
    rc = kt_metrics_objective(m, NULL, call_metric, cb, maximize, &err);
  } else if (t == LUA_TSTRING) {
    const char *name = lua_tostring(L, -1);
    *host = strcmp(name, "kernel+host") == 0;
    if (is_time(name) && maximize)
      luaL_error(L, "tune options.maximize: the time (objective '%s') is minimised", name);
    if (!is_time(name)) {
      if (!push_collected(L, opts, m, recorded, measured, name))
        objective_error(L, name, measured, lua_gettop(L));
      lua_pop(L, 1); /* the collected metrics */
      rc = kt_metrics_objective(m, name, NULL, (kt_callback){NULL, NULL}, maximize, &err);
    }
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
  lua_remove(L, defs); /* the callbacks hold it */
  return m;
}
