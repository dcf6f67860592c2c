/*
** lk_replay.c: kt.replay(path), a recorded space to tune without a device
** (any results file kt.load reads: ktlua's, T4, KTT, Kernel Tuner caches;
** gzipped or not):
**   rec:tune{search, seed, stop, progress, output, seeds, prior} -> results;
**       stop.seconds and summary().total_ms count the simulated clock
**   rec:optimum([{objective =, maximize =}]) -> the best recorded result,
**       by the recording's objective or the one given (nil if none)
**   rec:space()             -> the space view (see lk_space.c)
**   rec:records()           -> the whole recording as results
**   rec:score(results[, budget[, {objective =, maximize =}]]) -> reached,
**       score (see core/eval/replay.h), by the results' objective unless given
**   rec:count(), #rec, rec.task, rec.device, rec.format
**   rec.notice: nil, or what a person should know of the recording (a
**       configuration recorded more than once: the replay uses its last record)
*/
#include <string.h>

#include "../core/results/metrics.h"
#include "lk.h"

static kt_replay *check_replay(lua_State *L, int idx) {
  return ((lk_replay *)lk_check_object(L, idx, LK_REPLAY))->r;
}

/* kt.replay(path) */
static int l_replay(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lk_replay *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->r = NULL;
  luaL_setmetatable(L, LK_REPLAY);
  kt_error err;
  if (!(u->r = kt_replay_load(path, &err))) return lk_error(L, &err);
  return 1;
}

/* seeds of a replay: indices in its space (those not in it left out), in a
** userdata left on the stack (with lk_check_seeds'). */
static const uint64_t *check_seeds(lua_State *L, int opts, kt_space *space, size_t *n) {
  size_t count;
  const uint32_t *vi = lk_check_seeds(L, opts, space, &count);
  *n = 0;
  if (!vi) return NULL;
  uint64_t *out = lua_newuserdatauv(L, (count ? count : 1) * sizeof *out, 0);
  for (size_t i = 0; i < count; i++)
    if (kt_space_index(space, vi + i * kt_space_nparams(space), &out[*n]) == 0) (*n)++;
  return out;
}

/* rec:tune([options]) -> results */
static int replay_tune(lua_State *L) {
  static const char *const keys[] = {"search", "seed", "stop", "progress", "output", "lookahead",
                                     "metrics", "objective", "maximize", "seeds", "prior", NULL};
  kt_replay *r = check_replay(L, 1);
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lk_check_keys(L, 2, "tune options", keys);
  }
  lua_settop(L, 2);
  kt_loop_opts o = {0};
  lk_tune_hold *h = lk_check_tune(L, 2, 1, false, &o);
  bool host;
  o.metrics = lk_check_metrics(L, 2, &o.stop, &host, kt_replay_records(r), false);
  if (host) luaL_error(L, "tune options.objective: a recording holds no host time");
  kt_space *space = kt_replay_space(r);
  o.seeds = check_seeds(L, 2, space, &o.nseeds);
  const kt_prior *prior = lk_check_prior(L, 2, space);
  if (prior) o.prior = *prior;
  kt_error err;
  int rc = kt_replay_tune(r, &o, &h->results, &err);
  return lk_tune_return(L, 2, h, rc, &err);
}

static const char *const objective_keys[] = {"objective", "maximize", NULL};

/* rec:optimum([{objective =, maximize =}]) -> the best record (nil if none) */
static int replay_optimum(lua_State *L) {
  kt_replay *r = check_replay(L, 1);
  const kt_results *rec = kt_replay_records(r);
  const kt_result *best = kt_replay_optimum(r);
  if (!lua_isnoneornil(L, 2)) {
    const char *objective = rec->objective;
    bool maximize = rec->maximize;
    luaL_checktype(L, 2, LUA_TTABLE);
    lk_check_keys(L, 2, "optimum options", objective_keys);
    lk_check_objective(L, 2, "optimum options", rec, &objective, &maximize);
    best = kt_results_best_of(rec, objective, maximize);
  }
  if (!best) return 0;
  lk_push_result(L, rec, best);
  return 1;
}

static int replay_space(lua_State *L) {
  check_replay(L, 1);
  lk_push_space_view(L, 1, 0, false);
  return 1;
}

static int replay_records(lua_State *L) {
  /* Results objects never change their results, so the recording is shared. */
  lk_push_results(L, (kt_results *)kt_replay_records(check_replay(L, 1)));
  return 1;
}

/* rec:score(results[, budget[, {objective =, maximize =}]]) -> reached,
** score; by the results' own objective unless given. */
static int replay_score(lua_State *L) {
  kt_replay *r = check_replay(L, 1);
  const kt_results *res = ((lk_results *)lk_check_object(L, 2, LK_RESULTS))->r;
  lua_Integer budget = luaL_optinteger(L, 3, 0);
  const kt_space *space = kt_replay_space(r);
  if (res->space_count != kt_space_count(space) || res->nparams != kt_space_nparams(space))
    luaL_argerror(L, 2, "the results are not of this recording's space");
  if (budget < 0) luaL_argerror(L, 3, "expected a budget of 0 (all) or more evaluations");
  const char *objective = res->objective;
  bool maximize = res->maximize;
  if (!lua_isnoneornil(L, 4)) {
    luaL_checktype(L, 4, LUA_TTABLE);
    lk_check_keys(L, 4, "score options", objective_keys);
    lk_check_objective(L, 4, "score options", kt_replay_records(r), &objective, &maximize);
  }
  double reached = 0, score = 0;
  if (kt_replay_score(r, res, (uint64_t)budget, objective, maximize, &reached, &score) &&
      !kt_objective_is_time(objective))
    return luaL_error(L, "rec:score: no record of the recording has a value of the objective "
                         "'%s' (give it as score options.objective)", objective);
  lua_pushnumber(L, reached);
  lua_pushnumber(L, score);
  return 2;
}

static int replay_count(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)kt_space_count(kt_replay_space(check_replay(L, 1))));
  return 1;
}

static int replay_index(lua_State *L) {
  if (lk_push_method(L)) return 1;
  kt_replay *r = check_replay(L, 1);
  const char *key = luaL_checkstring(L, 2);
  if (strcmp(key, "task") == 0) lua_pushstring(L, kt_replay_records(r)->task);
  else if (strcmp(key, "device") == 0) lua_pushstring(L, kt_replay_records(r)->device);
  else if (strcmp(key, "format") == 0) lua_pushstring(L, kt_replay_format(r));
  else if (strcmp(key, "notice") == 0) lua_pushstring(L, kt_replay_records(r)->notice);
  else lua_pushnil(L);
  return 1;
}

static int replay_gc(lua_State *L) {
  lk_replay *u = luaL_checkudata(L, 1, LK_REPLAY);
  kt_replay_release(u->r);
  u->r = NULL;
  return 0;
}

static int replay_tostring(lua_State *L) {
  if (lk_push_released(L, LK_REPLAY)) return 1;
  kt_replay *r = check_replay(L, 1);
  const kt_results *rec = kt_replay_records(r);
  const char *on = rec->device && *rec->device ? " on " : ""; /* a file may not say */
  lua_pushfstring(L, "replay of %s%s%s: %I configurations (%s)", rec->task, on,
                  *on ? rec->device : "", (lua_Integer)kt_space_count(kt_replay_space(r)),
                  kt_replay_format(r));
  if (rec->notice) {
    lua_pushfstring(L, "; %s", rec->notice);
    lua_concat(L, 2);
  }
  return 1;
}

void lk_open_replay(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", replay_gc}, {"__index", replay_index},
                                  {"__len", replay_count}, {"__tostring", replay_tostring},
                                  {NULL, NULL}};
  static const luaL_Reg methods[] = {{"tune", replay_tune}, {"optimum", replay_optimum},
                                     {"space", replay_space}, {"records", replay_records},
                                     {"score", replay_score}, {"count", replay_count},
                                     {NULL, NULL}};
  static const luaL_Reg fns[] = {{"replay", l_replay}, {NULL, NULL}};
  static const char *const fields[] = {"task", "device", "format", "notice", NULL};
  lk_new_class(L, LK_REPLAY, meta, methods);
  lk_class_fields(L, LK_REPLAY, fields);
  luaL_setfuncs(L, fns, 0);
}
