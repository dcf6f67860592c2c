/*
** lk_space.c: the space view, what k:space() and rec:space() return and
** what a Lua searcher's init receives: counts, index <-> configuration,
** and the helpers that a searcher walks with (neighbours, random moves,
** the explored set). See doc/searchers.md.
**
** A view belongs to a kernel (or composition) or to a replay, and keeps
** its owner alive. k:space() numbers the space as defined, as results and
** seeds do; k:space(device) and a searcher's view as the device's limits
** left it, as the searcher walks it (space.h). The walker works in the
** latter: a view of the former translates what goes to it and comes back. Its walker (generator and explored set) is made when
** first needed and made again if the space has changed since.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/search/neighbors.h"
#include "../core/eval/replay.h"
#include "lk.h"

struct lk_space {
  kt_space *space;
  void *owner;
  void (*release)(void *owner);
  uint64_t seed;
  bool device;  /* numbered as the device's limits left the space */
  bool walking; /* walker is initialised */
  kt_walker walker;
};

static void release_task(void *t) { kt_task_release(t); }
static void release_replay(void *r) { kt_replay_release(r); }

static lk_space *check_view(lua_State *L, int idx) {
  return lk_check_object(L, idx, LK_SPACE);
}

static kt_space *check_space(lua_State *L, int idx, bool generate) {
  lk_space *us = check_view(L, idx);
  kt_error err;
  if (generate && (us->device ? kt_space_generate(us->space, &err)
                              : kt_space_natural_generate(us->space, &err)))
    lk_error(L, &err);
  return us->space;
}

/* ---- the view's numbering ---- */

static bool numbered_own(const lk_space *us) {
  return us->device || !kt_space_natural_differs(us->space);
}

static uint64_t view_count(const lk_space *us) {
  return us->device ? kt_space_count(us->space) : kt_space_natural_count(us->space);
}

static int view_config(const lk_space *us, uint64_t i, uint32_t *vi, kt_error *err) {
  return us->device ? kt_space_config(us->space, i, vi, err)
                    : kt_space_natural_config(us->space, i, vi, err);
}

static int view_index(const lk_space *us, const uint32_t *vi, uint64_t *i) {
  return us->device ? kt_space_index(us->space, vi, i) : kt_space_natural_index(us->space, vi, i);
}

/* The walker's index of the view's configuration i; an error when the
** device's limits left it out. */
static uint64_t to_walker(lua_State *L, const lk_space *us, uint64_t i, int arg) {
  if (numbered_own(us)) return i;
  size_t np = kt_space_nparams(us->space);
  uint32_t *vi = lua_newuserdatauv(L, (np ? np : 1) * sizeof *vi, 0);
  kt_error err;
  uint64_t own;
  if (kt_space_natural_config(us->space, i, vi, &err)) lk_error(L, &err);
  if (kt_space_index(us->space, vi, &own))
    luaL_argerror(L, arg, "the configuration is outside the device's limits that pruned the "
                          "space (k:space(device) numbers what is left)");
  lua_pop(L, 1);
  return own;
}

/* The view's index of the walker's configuration i. */
static uint64_t from_walker(lua_State *L, const lk_space *us, uint64_t i) {
  if (numbered_own(us)) return i;
  size_t np = kt_space_nparams(us->space);
  uint32_t *vi = lua_newuserdatauv(L, (np ? np : 1) * sizeof *vi, 0);
  kt_error err;
  uint64_t nat = 0;
  if (kt_space_config(us->space, i, vi, &err)) lk_error(L, &err);
  kt_space_natural_index(us->space, vi, &nat); /* the device's constraints only add */
  lua_pop(L, 1);
  return nat;
}

lk_space *lk_push_space_view(lua_State *L, int owner_idx, uint64_t seed, bool device) {
  lk_task *ut = lk_test_object(L, owner_idx, LK_TASK);
  kt_replay *rep = ut ? NULL : lk_test_replay(L, owner_idx);
  if (!ut && !rep) luaL_argerror(L, owner_idx, "expected a kernel, a composition or a replay");
  lk_space *us = lua_newuserdatauv(L, sizeof *us, 0);
  if (ut) {
    kt_task_retain(ut->task);
    *us = (lk_space){ut->task->space, ut->task, release_task, seed, device, false, {0}};
  } else {
    kt_replay_retain(rep);
    *us = (lk_space){kt_replay_space(rep), rep, release_replay, seed, device, false, {0}};
  }
  luaL_setmetatable(L, LK_SPACE);
  return us;
}

/* The walker, (re)made when the space is not the one it was made for. */
static kt_walker *view_walker(lua_State *L, lk_space *us) {
  kt_error err;
  if (kt_space_generate(us->space, &err)) lk_error(L, &err);
  kt_walker *w = &us->walker;
  if (us->walking && w->nparams == kt_space_nparams(us->space) &&
      w->count == kt_space_count(us->space))
    return w;
  lk_space_view_reset(us, us->seed, &err);
  if (!us->walking) lk_error(L, &err);
  return w;
}

int lk_space_view_reset(lk_space *us, uint64_t seed, kt_error *err) {
  if (!us->space) return kt_fail(err, "the space view has been released");
  if (us->walking) kt_walker_clear(&us->walker);
  us->seed = seed;
  us->walking = kt_walker_init(&us->walker, us->space, seed, err) == 0;
  return us->walking ? 0 : -1;
}

int lk_space_view_record(lk_space *us, uint64_t index, const kt_result *r, kt_error *err) {
  return us->walking ? kt_walker_record(&us->walker, index, r, err) : 0;
}

/* ---- counts and configurations ---- */

static int space_count(lua_State *L) {
  check_space(L, 1, true);
  lk_push_count(L, view_count(check_view(L, 1)));
  return 1;
}

static int space_count_all(lua_State *L) {
  double all = kt_space_count_all(check_space(L, 1, false));
  if (all < 9.2e18) lua_pushinteger(L, (lua_Integer)all);
  else lua_pushnumber(L, all);
  return 1;
}

/* space:estimate{draws = 10000, seed = 0}: the number of valid
** configurations and whether it is exact; a group too large to list is
** estimated from random draws of its combinations (space.h). */
static int space_estimate(lua_State *L) {
  kt_space *s = check_space(L, 1, false);
  static const char *const keys[] = {"draws", "seed", NULL};
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lk_check_keys(L, 2, "estimate", keys);
  }
  lua_Integer draws = lua_istable(L, 2) ? lk_opt_integer(L, 2, "estimate", "draws", 10000) : 10000;
  lua_Integer seed = lua_istable(L, 2) ? lk_opt_integer(L, 2, "estimate", "seed", 0) : 0;
  if (draws < 1) luaL_argerror(L, 2, "estimate.draws must be at least 1");
  double count;
  bool exact;
  kt_error err;
  if (kt_space_estimate(s, (uint64_t)draws, (uint64_t)seed, &count, &exact, &err)) lk_error(L, &err);
  if (exact && count < 9.2e18) lua_pushinteger(L, (lua_Integer)count);
  else lua_pushnumber(L, count);
  lua_pushboolean(L, exact);
  return 2;
}

static uint64_t check_config_index(lua_State *L, const lk_space *us, int idx) {
  lua_Integer i = luaL_checkinteger(L, idx);
  uint64_t n = view_count(us);
  if (i < 0 || (uint64_t)i >= n)
    luaL_argerror(L, idx, lua_pushfstring(L, "configuration index out of range (0 to %I)",
                                          (lua_Integer)(n - 1 < (uint64_t)LUA_MAXINTEGER
                                                            ? n - 1
                                                            : (uint64_t)LUA_MAXINTEGER)));
  return (uint64_t)i;
}

/* Value indices of configuration i, in scratch memory on the stack. */
static uint32_t *config_vi(lua_State *L, const lk_space *us, int idx) {
  uint64_t i = check_config_index(L, us, idx);
  size_t np = kt_space_nparams(us->space);
  uint32_t *vi = lua_newuserdatauv(L, (np ? np : 1) * sizeof *vi, 0);
  kt_error err;
  if (view_config(us, i, vi, &err)) lk_error(L, &err);
  return vi;
}

static int space_config(lua_State *L) {
  kt_space *s = check_space(L, 1, true);
  lk_push_config(L, s, config_vi(L, check_view(L, 1), 2));
  return 1;
}

/* space:index(cfg): the configuration's index, or nil and why when a
** value is not one of its parameter's or the configuration is not in the
** space (a constraint, or the device's limits, exclude it). */
static int space_index(lua_State *L) {
  kt_space *s = check_space(L, 1, true);
  size_t np = kt_space_nparams(s);
  uint32_t *vi = lua_newuserdatauv(L, (np ? np : 1) * sizeof *vi, 0);
  uint64_t index;
  lua_pushnil(L); /* the first result when there is a reason */
  if (lk_to_config(L, 2, s, vi)) return 2;
  if (view_index(check_view(L, 1), vi, &index)) {
    lua_pushliteral(L, "the configuration is not in the space");
    return 2;
  }
  lua_pushinteger(L, (lua_Integer)index);
  return 1;
}

/* space:value_indices(i): {v1, v2, ...}, each parameter's value index
** (0-based, in the order of space:params()). */
static int space_value_indices(lua_State *L) {
  kt_space *s = check_space(L, 1, true);
  uint32_t *vi = config_vi(L, check_view(L, 1), 2);
  size_t np = kt_space_nparams(s);
  lua_createtable(L, (int)np, 0);
  for (size_t p = 0; p < np; p++) {
    lua_pushinteger(L, vi[p]);
    lua_rawseti(L, -2, (lua_Integer)p + 1);
  }
  return 1;
}

/* space:from_value_indices(vi): the index, or nil when not in the space. */
static int space_from_value_indices(lua_State *L) {
  kt_space *s = check_space(L, 1, true);
  luaL_checktype(L, 2, LUA_TTABLE);
  size_t np = kt_space_nparams(s);
  if (luaL_len(L, 2) != (lua_Integer)np)
    luaL_argerror(L, 2, lua_pushfstring(L, "expected %d value indices", (int)np));
  uint32_t *vi = lua_newuserdatauv(L, (np ? np : 1) * sizeof *vi, 0);
  for (size_t p = 0; p < np; p++) {
    lua_rawgeti(L, 2, (lua_Integer)p + 1);
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok || v < 0 || (size_t)v >= kt_space_param(s, p)->nvalues)
      luaL_argerror(L, 2, lua_pushfstring(L, "value index %d of parameter %s is out of range",
                                          (int)p + 1, kt_space_param(s, p)->name));
    vi[p] = (uint32_t)v;
    lua_pop(L, 1);
  }
  uint64_t index;
  if (view_index(check_view(L, 1), vi, &index)) return 0;
  lua_pushinteger(L, (lua_Integer)index);
  return 1;
}

static int configs_step(lua_State *L) {
  check_space(L, 1, false);
  lua_Integer i = lua_isnil(L, 2) ? 0 : lua_tointeger(L, 2) + 1;
  if ((uint64_t)i >= view_count(check_view(L, 1))) return 0;
  lua_pushinteger(L, i);
  lua_pushcfunction(L, space_config);
  lua_pushvalue(L, 1);
  lua_pushinteger(L, i);
  lua_call(L, 2, 1);
  return 2;
}

/* for i, cfg in space:configs() do ... end (i from 0) */
static int space_configs(lua_State *L) {
  check_space(L, 1, true);
  lua_pushcfunction(L, configs_step);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

static int space_params(lua_State *L) {
  kt_space *s = check_space(L, 1, false);
  size_t np = kt_space_nparams(s);
  lua_createtable(L, (int)np, 0);
  for (size_t p = 0; p < np; p++) {
    const kt_param *par = kt_space_param(s, p);
    lua_createtable(L, 0, 2);
    lua_pushstring(L, par->name);
    lua_setfield(L, -2, "name");
    lua_createtable(L, (int)par->nvalues, 0);
    for (size_t v = 0; v < par->nvalues; v++) {
      lk_push_value(L, &par->values[v]);
      lua_rawseti(L, -2, (lua_Integer)v + 1);
    }
    lua_setfield(L, -2, "values");
    lua_rawseti(L, -2, (lua_Integer)p + 1);
  }
  return 1;
}

/* ---- walking ---- */

/* {changes = k, adjacent = bool, unexplored = bool} at idx (optional). */
static kt_neighborhood check_moves(lua_State *L, int idx, const char *what, lua_Integer *changes,
                                   bool *unexplored) {
  static const char *const keys[] = {"changes", "adjacent", "unexplored", NULL};
  if (!lua_isnoneornil(L, idx)) {
    luaL_checktype(L, idx, LUA_TTABLE);
    lk_check_keys(L, idx, what, keys);
  }
  *changes = lk_opt_integer(L, idx, what, "changes", 1);
  if (*changes < 1) luaL_error(L, "%s.changes: expected a positive integer", what);
  *unexplored = lk_opt_boolean(L, idx, what, "unexplored", 0);
  return lk_opt_boolean(L, idx, what, "adjacent", 0) ? KT_ADJACENT : KT_HAMMING;
}

/* space:neighbors(i[, {changes = 1, adjacent = false, unexplored = false}]):
** the indices of the valid configurations that differ from i in 1 to
** `changes` parameters (Hamming: any other value; adjacent: the value
** listed before or after), those with fewer changes first. */
static int space_neighbors(lua_State *L) {
  lk_space *us = check_view(L, 1);
  kt_walker *w = view_walker(L, us);
  uint64_t i = to_walker(L, us, check_config_index(L, us, 2), 2);
  lua_Integer changes;
  bool unexplored;
  kt_neighborhood nb = check_moves(L, 3, "neighbors options", &changes, &unexplored);
  kt_indices found = {NULL, 0, 0};
  kt_error err;
  if (kt_neighbors(w, i, (unsigned)changes, nb, &found, &err)) {
    kt_indices_clear(&found);
    return lk_error(L, &err);
  }
  lua_createtable(L, (int)found.n, 0);
  lua_Integer n = 0;
  for (size_t k = 0; k < found.n; k++) {
    if (unexplored && kt_walker_explored(w, found.items[k], NULL)) continue;
    lua_pushinteger(L, (lua_Integer)from_walker(L, us, found.items[k]));
    lua_rawseti(L, -2, ++n);
  }
  kt_indices_clear(&found);
  return 1;
}

/* space:random_neighbor(i[, {adjacent = false, unexplored = false}]): a
** random neighbour with one change, or nil when there is none. */
static int space_random_neighbor(lua_State *L) {
  lk_space *us = check_view(L, 1);
  kt_walker *w = view_walker(L, us);
  uint64_t i = to_walker(L, us, check_config_index(L, us, 2), 2), out;
  lua_Integer changes;
  bool unexplored;
  kt_neighborhood nb = check_moves(L, 3, "random_neighbor options", &changes, &unexplored);
  if (changes != 1) luaL_error(L, "random_neighbor options.changes: only 1 is supported");
  kt_error err;
  int rc = kt_neighbor_random(w, i, nb, unexplored, &out, &err);
  if (rc < 0) return lk_error(L, &err);
  if (rc > 0) return 0;
  lua_pushinteger(L, (lua_Integer)from_walker(L, us, out));
  return 1;
}

/* space:random_unexplored(): a uniformly random configuration not yet
** explored, or nil when all are. */
static int space_random_unexplored(lua_State *L) {
  lk_space *us = check_view(L, 1);
  kt_walker *w = view_walker(L, us);
  uint64_t out;
  if (kt_random_unexplored(w, &out)) return 0;
  lua_pushinteger(L, (lua_Integer)from_walker(L, us, out));
  return 1;
}

/* space:explored(i): true and the time in ms (nil when it failed) once
** the searcher has heard of configuration i, else false. */
static int space_explored(lua_State *L) {
  lk_space *us = check_view(L, 1);
  kt_walker *w = view_walker(L, us);
  double cost;
  if (!kt_walker_explored(w, to_walker(L, us, check_config_index(L, us, 2), 2), &cost)) {
    lua_pushboolean(L, 0);
    return 1;
  }
  lua_pushboolean(L, 1);
  if (isinf(cost)) lua_pushnil(L);
  else lua_pushnumber(L, cost / 1e6);
  return 2;
}

static int space_explored_count(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)kt_walker_nexplored(view_walker(L, check_view(L, 1))));
  return 1;
}

/* space:random(): a number in [0, 1) from the view's seeded generator. */
static int space_random(lua_State *L) {
  lua_pushnumber(L, kt_rng_double(&view_walker(L, check_view(L, 1))->rng));
  return 1;
}

/* ---- the object ---- */

/* space:pruned(): how many configurations each device constraint removed
** (a kernel's space; a replay's is never pruned). */
static int space_pruned(lua_State *L) {
  lk_space *us = check_view(L, 1);
  if (us->release == release_task) lk_push_pruned(L, us->owner);
  else lua_newtable(L);
  return 1;
}

/* space:threads(n): threads for the next generation (0: every processor). */
static int space_threads(lua_State *L) {
  kt_space *s = check_space(L, 1, false);
  lua_Integer n = luaL_checkinteger(L, 2);
  if (n < 0 || n > 1024) luaL_argerror(L, 2, "expected 0 (every processor) to 1024 threads");
  kt_space_set_threads(s, (unsigned)n);
  lua_settop(L, 1);
  return 1;
}

/* space:max_bytes([n]): the most bytes generation may take for the valid
** configurations (0: the default); returns the space, or without n the
** limit. */
static int space_max_bytes(lua_State *L) {
  kt_space *s = check_space(L, 1, false);
  if (lua_isnoneornil(L, 2)) {
    lua_pushinteger(L, (lua_Integer)kt_space_max_bytes(s));
    return 1;
  }
  lua_Integer n = luaL_checkinteger(L, 2);
  if (n < 0) luaL_argerror(L, 2, "expected a number of bytes (0: the default)");
  kt_space_set_max_bytes(s, (size_t)n);
  lua_settop(L, 1);
  return 1;
}

static int space_gc(lua_State *L) {
  lk_space *us = luaL_checkudata(L, 1, LK_SPACE);
  if (us->walking) kt_walker_clear(&us->walker);
  if (us->release) us->release(us->owner);
  memset(us, 0, sizeof *us);
  return 0;
}

static int space_tostring(lua_State *L) {
  if (lk_push_released(L, LK_SPACE)) return 1;
  kt_space *s = check_space(L, 1, false);
  lua_pushfstring(L, "space: %d parameters, %d constraints", (int)kt_space_nparams(s),
                  (int)kt_space_nconstraints(s));
  return 1;
}

void lk_open_space(lua_State *L) {
  static const luaL_Reg meta[] = {
      {"__gc", space_gc}, {"__len", space_count}, {"__tostring", space_tostring}, {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"count", space_count}, {"count_all", space_count_all}, {"estimate", space_estimate}, {"config", space_config},
      {"index", space_index}, {"configs", space_configs}, {"params", space_params},
      {"value_indices", space_value_indices}, {"from_value_indices", space_from_value_indices},
      {"neighbors", space_neighbors}, {"random_neighbor", space_random_neighbor},
      {"random_unexplored", space_random_unexplored}, {"explored", space_explored},
      {"explored_count", space_explored_count}, {"random", space_random},
      {"pruned", space_pruned}, {"threads", space_threads},
      {"max_bytes", space_max_bytes}, {NULL, NULL}};
  lk_new_class(L, LK_SPACE, meta, methods);
}
