/*
** lk_online.c: online tuning (core/eval/online.h) as a Lua object.
**
**   local on = tuner:online(k, {search =, stop =, seed =, journal =, resume =, time_limit =,
**                               lookahead =, fallback = config, db =, size =, validate =,
**                               metrics =, objective =, maximize =})
**   local step = on:step()  -- the task run once on the arrays as they are; outputs read back
**   on:best(), on:results(), on:done(), on:stop(), on:close()
**
** With db and size, the configuration stored for that size (if any, and
** not stale) is tried first and is the fallback; the search's best are
** stored when it ends.
*/
#include <string.h>

#include "../core/db/db.h"
#include "../core/eval/online.h"
#include "lk.h"

#define LK_ONLINE "ktlua.online"

typedef struct lk_online {
  kt_online *on;
  struct kt_db *db; /* held open until the search's best are stored there (lk_db_hold) */
} lk_online;

/* The uservalue keeps what the online tuning uses alive: the tuner, the
** kernel, the searcher's hold, the database, the size table and the
** metrics (their functions are called at the search's steps). */
enum { KEEP_TUNER = 1, KEEP_TASK, KEEP_HOLD, KEEP_DB, KEEP_SIZE, KEEP_METRICS };

static lk_online *check_online(lua_State *L, int idx) {
  lk_online *u = luaL_checkudata(L, idx, LK_ONLINE);
  if (!u->on) luaL_argerror(L, idx, "the online tuning has been closed (on:close())");
  return u;
}

/* Lets go of the database (once its best are stored, or never will be). */
static void release_db(lua_State *L, int idx, lk_online *u) {
  if (!u->db) return;
  lua_getiuservalue(L, idx, 1);
  lua_rawgeti(L, -1, KEEP_DB);
  lk_db_hold(L, lua_gettop(L), false);
  lua_pop(L, 2);
  u->db = NULL;
}

/* Stores the search's best once it has ended. */
static void store_if_ended(lua_State *L, int idx, lk_online *u) {
  if (!u->db || kt_online_searching(u->on) || !kt_results_best(kt_online_results(u->on))) return;
  lua_getiuservalue(L, idx, 1);
  lua_rawgeti(L, -1, KEEP_SIZE);
  lua_rawgeti(L, -2, KEEP_TUNER);
  lua_getfield(L, -1, "device");
  lk_db_store_tuner(L, u->db, kt_online_results(u->on), -3, -1, LK_DB_TUNE_TOP, NULL);
  lua_pop(L, 4);
  release_db(L, idx, u); /* once */
}

static void push_config(lua_State *L, const kt_results *r, const uint32_t *vi) {
  lua_createtable(L, 0, (int)r->nparams);
  for (size_t p = 0; p < r->nparams; p++) {
    lk_push_value(L, &r->params[p].values[vi[p]]);
    lua_setfield(L, -2, r->params[p].name);
  }
}

/* on:step() -> {config =, time_ms =, status =, searching =, confirming =,
** tried =, ran =, fell_back =, error =, done =} */
static int online_step(lua_State *L) {
  lk_online *u = check_online(L, 1);
  kt_online_outcome s;
  kt_error err;
  if (kt_online_step(u->on, &s, &err)) return lk_error(L, &err);
  const kt_results *r = kt_online_results(u->on);
  lua_createtable(L, 0, 9);
  push_config(L, r, s.ran_vi);
  lua_setfield(L, -2, "config");
  lua_pushnumber(L, s.time_ns / 1e6);
  lua_setfield(L, -2, "time_ms");
  lua_pushstring(L, kt_status_name(s.status));
  lua_setfield(L, -2, "status");
  lua_pushboolean(L, s.searching);
  lua_setfield(L, -2, "searching");
  lua_pushboolean(L, s.confirming);
  lua_setfield(L, -2, "confirming");
  if (s.searching || s.confirming) {
    lua_pushinteger(L, (lua_Integer)s.tried);
    lua_setfield(L, -2, "tried");
  }
  lua_pushinteger(L, (lua_Integer)s.ran);
  lua_setfield(L, -2, "ran");
  lua_pushboolean(L, s.fell_back);
  lua_setfield(L, -2, "fell_back");
  if (s.error) {
    lua_pushstring(L, s.error);
    lua_setfield(L, -2, "error");
  }
  lua_pushboolean(L, !kt_online_searching(u->on));
  lua_setfield(L, -2, "done");
  int step = lua_gettop(L);
  store_if_ended(L, 1, u);
  lua_settop(L, step);
  return 1;
}

static int online_results(lua_State *L) {
  lk_push_results(L, kt_online_results(check_online(L, 1)->on));
  return 1;
}

/* on:best(): results:best() of the search so far. */
static int online_best(lua_State *L) {
  lk_push_results(L, kt_online_results(check_online(L, 1)->on));
  lua_getfield(L, -1, "best");
  lua_insert(L, -2);
  lua_call(L, 1, 2);
  return 2;
}

static int online_done(lua_State *L) {
  lua_pushboolean(L, !kt_online_searching(check_online(L, 1)->on));
  return 1;
}

/* Its own step's callbacks (a launcher, a reference, a metric, a searcher)
** may not end or free it while the step runs on it. */
static void check_not_stepping(lua_State *L, const lk_online *u, const char *what) {
  if (u->on && kt_online_stepping(u->on))
    luaL_argerror(L, 1, lua_pushfstring(L, "the online tuning is in a step (this is one of its "
                                           "callbacks): %s it after on:step() returns", what));
}

static int online_stop(lua_State *L) {
  lk_online *u = check_online(L, 1);
  check_not_stepping(L, u, "stop");
  kt_error err;
  err.msg[0] = '\0';
  kt_online_stop(u->on, &err);
  if (err.msg[0]) return lk_error(L, &err);
  store_if_ended(L, 1, u);
  lua_settop(L, 1);
  return 1;
}

/* store_if_ended(online 1), protected. */
static int store_protected(lua_State *L) {
  store_if_ended(L, 1, luaL_checkudata(L, 1, LK_ONLINE));
  return 0;
}

/* on:close(): ends the search (its best stored, as on:stop()) and releases
** the kernel, which can then change or be tuned again; later calls do
** nothing, and every other method is an error. It closes also when the
** store fails (a read-only database), then says why. */
static int online_close(lua_State *L) {
  lk_online *u = luaL_checkudata(L, 1, LK_ONLINE);
  if (!u->on) return 0;
  check_not_stepping(L, u, "close");
  kt_error err;
  err.msg[0] = '\0';
  kt_online_stop(u->on, &err);
  int stored = LUA_OK;
  if (!err.msg[0]) {
    lua_pushcfunction(L, store_protected);
    lua_pushvalue(L, 1);
    stored = lua_pcall(L, 1, 0, 0);
  }
  release_db(L, 1, u);
  kt_online_free(u->on);
  u->on = NULL;
  if (stored != LUA_OK) return lua_error(L);
  return err.msg[0] ? lk_error(L, &err) : 0;
}

/* (A collection cannot come during a step, which holds the object; a
** call by hand can.) */
static int online_gc(lua_State *L) {
  lk_online *u = luaL_checkudata(L, 1, LK_ONLINE);
  check_not_stepping(L, u, "close");
  release_db(L, 1, u);
  kt_online_free(u->on);
  u->on = NULL;
  return 0;
}

static int online_tostring(lua_State *L) {
  lk_online *u = luaL_checkudata(L, 1, LK_ONLINE);
  if (!u->on) lua_pushliteral(L, "online tuning (released)");
  else lua_pushfstring(L, "online tuning of %s: %d configurations tried%s",
                       kt_online_results(u->on)->task, (int)kt_online_results(u->on)->n,
                       kt_online_searching(u->on) ? "" : ", search ended");
  return 1;
}

/* ---- tuner:online ---- */

/* lk_check_config(table 1, space 2, vi 3), protected. */
static int check_config_protected(lua_State *L) {
  lk_check_config(L, 1, lua_touserdata(L, 2), lua_touserdata(L, 3));
  return 0;
}

/* lk_check_config, its error naming the option. */
static void check_option_config(lua_State *L, int idx, kt_space *space, uint32_t *vi,
                                const char *option) {
  lua_pushcfunction(L, check_config_protected);
  lua_pushvalue(L, idx);
  lua_pushlightuserdata(L, space);
  lua_pushlightuserdata(L, vi);
  if (lua_pcall(L, 3, 0, 0) == LUA_OK) return;
  const char *why = luaL_tolstring(L, -1, NULL);
  if (strncmp(why, "configuration: ", 15) == 0) why += 15;
  luaL_error(L, "%s: %s", option, why);
}

/* fallback = a configuration (table of values or a result) -> vi in the
** userdata pushed, or NULL. */
static uint32_t *check_fallback(lua_State *L, int opts, kt_space *space) {
  if (lk_get_field(L, opts, "fallback") == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  int idx = lua_gettop(L);
  if (lua_istable(L, idx) && lua_getfield(L, idx, "config") == LUA_TTABLE) lua_replace(L, idx);
  else if (lua_istable(L, idx)) lua_pop(L, 1);
  if (!lua_istable(L, idx)) luaL_error(L, "online options.fallback: expected a configuration");
  size_t np = kt_space_nparams(space);
  uint32_t *vi = lua_newuserdatauv(L, (np ? np : 1) * sizeof *vi, 0);
  check_option_config(L, idx, space, vi, "online options.fallback");
  return vi;
}

/* With db and size: the stored configuration of this key, as a seed (and
** the fallback when none is given); pushes nothing it returns. */
static bool stored_best(lua_State *L, int opts, kt_space *space, uint32_t *vi) {
  if (lk_get_field(L, opts, "db") == LUA_TNIL) return lua_pop(L, 1), false;
  lua_getfield(L, -1, "best");
  lua_insert(L, -2);
  lua_createtable(L, 0, 3);
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, "kernel");
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "device");
  lua_getfield(L, opts, "size");
  lua_setfield(L, -2, "size");
  lua_call(L, 2, 1);
  bool found = lua_istable(L, -1);
  if (found) {
    lua_getfield(L, -1, "match");
    found = strcmp(lua_tostring(L, -1), "exact") == 0;
    lua_pop(L, 1);
  }
  if (found) {
    lua_getfield(L, -1, "config");
    lk_check_config(L, lua_gettop(L), space, vi);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return found;
}

/* confirm = {candidates = 3, runs = 3} (the default), or false: the search's
** leading candidates re-measured before the best is declared. */
static kt_online_confirm check_confirm(lua_State *L, int opts) {
  static const char *const keys[] = {"candidates", "runs", NULL};
  kt_online_confirm c = KT_ONLINE_CONFIRM_DEFAULT;
  int t = lk_get_field(L, opts, "confirm");
  int idx = lua_gettop(L);
  if (t == LUA_TBOOLEAN && !lua_toboolean(L, idx)) c = (kt_online_confirm){0, 0};
  else if (t == LUA_TTABLE) {
    lk_check_keys(L, idx, "online options.confirm", keys);
    lua_Integer n = lk_opt_integer(L, idx, "online options.confirm", "candidates", 3);
    lua_Integer runs = lk_opt_integer(L, idx, "online options.confirm", "runs", 3);
    if (n < 0 || n > 1000)
      luaL_error(L, "online options.confirm.candidates: expected 0 to 1000, got %I", n);
    if (runs < 0 || runs > 1000)
      luaL_error(L, "online options.confirm.runs: expected 0 to 1000, got %I", runs);
    c = (kt_online_confirm){(size_t)n, (unsigned)runs};
  } else if (t != LUA_TNIL) {
    luaL_error(L, "online options.confirm: expected a table {candidates =, runs =} or false, "
                  "got %s", luaL_tolstring(L, idx, NULL));
  }
  lua_settop(L, idx - 1);
  return c;
}

int lk_tuner_online(lua_State *L) {
  static const char *const keys[] = {"search", "seed", "stop", "journal", "resume", "time_limit",
                                     "lookahead", "fallback", "db", "size", "validate", "metrics",
                                     "objective", "maximize", "confirm", NULL};
  kt_tuner *t = lk_check_tuner(L, 1);
  lk_task *ut = lk_check_task(L, 2);
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    lk_check_keys(L, 3, "online options", keys);
  }
  lua_settop(L, 3);
  kt_loop_opts lo = {0};
  lk_tune_hold *h = lk_check_tune(L, 3, 2, false, &lo);
  int hold = lua_gettop(L);
  kt_tune_opts o = {.searcher = lo.searcher, .stop = lo.stop, .repeat = KT_REPEAT_DEFAULT,
                    .lookahead = lo.lookahead};
  bool host;
  o.metrics = lk_check_metrics(L, 3, &o.stop, &host, NULL, false);
  int metrics = lua_gettop(L);
  /* a step runs once and its time is the kernel's (tuner:run's) */
  if (host) luaL_error(L, "online options.objective: 'kernel+host' is not measured online (a "
                          "step's time is the kernel's)");
  lk_check_journal(L, 3, ut->task->name, &o);
  lk_check_time_limit(L, 3, &o);
  struct kt_db *db = lk_check_db_option(L, 3);
  kt_error err;
  if (kt_space_generate(ut->task->space, &err)) return lk_error(L, &err);
  uint32_t *fallback = check_fallback(L, 3, ut->task->space);
  size_t np = kt_space_nparams(ut->task->space);
  uint32_t *stored = lua_newuserdatauv(L, (np ? np : 1) * sizeof *stored, 0);
  if (db && stored_best(L, 3, ut->task->space, stored)) {
    o.seeds = stored;
    o.nseeds = 1;
    if (!fallback) fallback = stored;
  }
  lk_online *u = lua_newuserdatauv(L, sizeof *u, 1);
  *u = (lk_online){NULL, NULL};
  luaL_setmetatable(L, LK_ONLINE);
  lua_createtable(L, 6, 0);
  int keep[] = {1, 2, hold};
  for (int i = 0; i < 3; i++) {
    lua_pushvalue(L, keep[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lk_get_field(L, 3, "db"); /* (the options may be nil) */
  lua_rawseti(L, -2, KEEP_DB);
  lk_get_field(L, 3, "size");
  lua_rawseti(L, -2, KEEP_SIZE);
  lua_pushvalue(L, metrics);
  lua_rawseti(L, -2, KEEP_METRICS);
  lua_setiuservalue(L, -2, 1);
  bool validate = lk_opt_boolean(L, 3, "online options", "validate", 0);
  if (validate && !ut->task->nrefs)
    luaL_error(L, "online options.validate: the kernel has no reference (k:reference)");
  kt_online_confirm confirm = check_confirm(L, 3);
  if (!(u->on = kt_online_new(t, ut->task, &o, fallback, validate, confirm, &err)))
    return lk_error(L, &err);
  if (db) {
    lua_getfield(L, 3, "db");
    lk_db_hold(L, lua_gettop(L), true);
    lua_pop(L, 1);
    u->db = db;
  }
  (void)h;
  return 1;
}

void lk_open_online(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", online_gc}, {"__close", online_gc},
                                  {"__tostring", online_tostring}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"step", online_step},   {"best", online_best},
                                     {"results", online_results}, {"done", online_done},
                                     {"stop", online_stop},   {"close", online_close},
                                     {NULL, NULL}};
  lk_new_class(L, LK_ONLINE, meta, methods);
  static const luaL_Reg tuner_methods[] = {{"online", lk_tuner_online}, {NULL, NULL}};
  lk_class_methods(L, LK_TUNER, tuner_methods); /* lk_tuner.c is below this file */
}
