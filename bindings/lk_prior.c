/*
** lk_prior.c: the tune option prior (search.h's kt_prior), what was learnt
** elsewhere for the searcher.
**
**   tuner:tune(k, {prior = {{config = {WG = 64, VEC = 4}, weight = 0.8}, ...}})
**   rec:tune{prior = {...}}
**
** An entry of prior is a configuration (a table of values, or a result),
** or a table {config = ..., weight = w} (w > 0; 1 when absent). Each value
** given must be one of its parameter's; a parameter may be left out (the
** prior does not say it: KT_PRIOR_ANY), and a prior configuration may
** break a constraint (it is a hint, never evaluated). ktlua.transfer makes priors
** from a database (doc/transfer.md).
*/
#include <math.h>

#include "lk.h"

const kt_prior *lk_check_prior(lua_State *L, int opts, const kt_space *space) {
  if (lk_get_field(L, opts, "prior") == LUA_TNIL) return lua_pop(L, 1), NULL;
  int list = lua_gettop(L);
  if (!lua_istable(L, list))
    luaL_error(L, "tune options.prior: expected a list of configurations, each {config =, weight =} "
                  "or a configuration, got %s", luaL_typename(L, list));
  size_t n = (size_t)luaL_len(L, list), np = kt_space_nparams(space);
  kt_prior *p = lua_newuserdatauv(L, sizeof *p + (n ? n : 1) * (np * sizeof(uint32_t) + sizeof(double)),
                                  0);
  double *weight = (double *)(p + 1);
  uint32_t *vi = (uint32_t *)(weight + (n ? n : 1));
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, list, (lua_Integer)i + 1);
    if (!lua_istable(L, -1))
      luaL_error(L, "tune options.prior[%d]: expected a configuration or {config =, weight =}, got %s",
                 (int)i + 1, luaL_typename(L, -1));
    weight[i] = 1;
    if (lua_getfield(L, -1, "weight") != LUA_TNIL) {
      if (!lua_isnumber(L, -1) || !(lua_tonumber(L, -1) > 0) || !isfinite(lua_tonumber(L, -1)))
        luaL_error(L, "tune options.prior[%d].weight: expected a positive number, got %s", (int)i + 1,
                   luaL_tolstring(L, -1, NULL));
      weight[i] = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, -1, "config") == LUA_TTABLE) lua_replace(L, -2);
    else lua_pop(L, 1);
    /* a copy with the parameters it leaves out set to their first value,
    ** read as a configuration (the checks and messages of one), then those
    ** marked not said */
    int given = lua_gettop(L);
    if (!lua_istable(L, given))
      luaL_error(L, "tune options.prior[%d].config: expected a configuration", (int)i + 1);
    lua_newtable(L);
    int copy = lua_gettop(L);
    for (lua_pushnil(L); lua_next(L, given);) { /* key, value */
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, copy); /* the key stays, for lua_next */
    }
    for (size_t p = 0; p < np; p++) {
      const kt_param *par = kt_space_param(space, p);
      if (lua_getfield(L, copy, par->name) == LUA_TNIL && par->nvalues) {
        lk_push_value(L, &par->values[0]);
        lua_setfield(L, copy, par->name);
      }
      lua_pop(L, 1);
    }
    const char *why = lk_to_config(L, copy, space, vi + i * np);
    if (why) luaL_error(L, "tune options.prior[%d]: %s", (int)i + 1, why);
    for (size_t p = 0; p < np; p++) {
      if (lua_getfield(L, given, kt_space_param(space, p)->name) == LUA_TNIL)
        vi[i * np + p] = KT_PRIOR_ANY;
      lua_pop(L, 1);
    }
    lua_pop(L, 3); /* the configuration, its copy, why */
  }
  *p = (kt_prior){vi, weight, n};
  lua_replace(L, list); /* the userdata in place of the list: anchored */
  return p;
}
