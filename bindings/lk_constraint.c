/*
** lk_constraint.c: constraints written as a Lua function of the whole
** configuration, k:constraint(function(p) return p.MWG % p.VWM == 0 end
** [, {"MWG", "VWM"}]), as Kernel Tuner's and KTT's scripts write them.
**
** The space checks a constraint as soon as its parameters are bound, so it
** must know them. Given names, the function becomes the positional form
** ({names}, function(a, b) ... end) that lk_task.c adds: each check calls
** it with a table of those parameters' values, whose other keys are an
** error. Without names it may read any parameter defined so far, on any
** path (Kernel Tuner's lambdas: p.use_padding == 0 or p.block_size_x % 32
** ~= 0), so it is checked once all of them are bound. To prune as early as
** it can, it is also checked as soon as those it reads when called once,
** here, with the first values are bound: a check that reads another then
** decides nothing (it keeps the configuration), and one that decides is
** remembered, so that the check on all parameters of the same values does
** not call the function again.
*/
#include <string.h>

#include "lk.h"

/* The error that the early check's table raises on a parameter not bound
** yet: its address is unique. */
static const char not_bound_yet = 0;

/* __index of the tables a checked function gets. Upvalue: the names. */
static int unknown_key(lua_State *L) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_Integer n = luaL_len(L, lua_upvalueindex(1));
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, lua_upvalueindex(1), i);
    if (i > 1) luaL_addstring(&b, "\", \"");
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  const char *names = lua_tostring(L, -1);
  const char *key = luaL_tolstring(L, 2, NULL);
  return luaL_error(L, "the constraint reads p.%s, which is not among its parameters (\"%s\"): "
                       "name them all, k:constraint(f, {\"%s\", \"%s\"})",
                    key, names, names, key);
}

/* The function the space calls with the values of the names, in order.
** Upvalues: the user's function, the names, the metatable. */
static int call_with_table(lua_State *L) {
  int n = lua_gettop(L);
  lua_createtable(L, 0, n);
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, lua_upvalueindex(2), i);
    lua_pushvalue(L, i);
    lua_rawset(L, -3);
  }
  lua_pushvalue(L, lua_upvalueindex(3));
  lua_setmetatable(L, -2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, -2);
  lua_call(L, 1, 1);
  return 1;
}

/* __index of the probe: records the name, gives the parameter's first
** value. Upvalues: the names read (a list and a set), the space. */
static int probe_index(lua_State *L) {
  const kt_space *s = lua_touserdata(L, lua_upvalueindex(2));
  if (lk_has_nul(L, 2)) /* "A\0x" is not A */
    return luaL_error(L, "the constraint reads p[%s]: there is no parameter of that name",
                      lk_quote(L, 2));
  const char *name = lua_tostring(L, 2);
  int i = name ? kt_space_find(s, name) : -1;
  if (i < 0)
    return luaL_error(L, "the constraint reads p.%s: there is no parameter %s (define the "
                         "parameters before the constraints that read them)",
                      luaL_tolstring(L, 2, NULL), name ? name : "?");
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) == LUA_TNIL) {
    lua_pushvalue(L, 2);
    lua_rawseti(L, lua_upvalueindex(1), luaL_len(L, lua_upvalueindex(1)) + 1);
    lua_pushvalue(L, 2);
    lua_pushboolean(L, 1);
    lua_rawset(L, lua_upvalueindex(1));
  }
  lk_push_value(L, &kt_space_param(s, (size_t)i)->values[0]);
  return 1;
}

/* The names the function at fn reads on a call with first values; pushed. */
static void probe(lua_State *L, int fn, const kt_space *s) {
  lua_newtable(L); /* names: list part in order, hash part as a set */
  int names = lua_gettop(L);
  lua_newtable(L);
  lua_newtable(L);
  lua_pushvalue(L, names);
  lua_pushlightuserdata(L, (void *)s);
  lua_pushcclosure(L, probe_index, 2);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, fn);
  lua_insert(L, -2);
  lua_call(L, 1, 0);
  lua_Integer n = luaL_len(L, names);
  if (n == 0)
    luaL_argerror(L, 2, "the constraint read no parameter when called with the first values: "
                        "name its parameters, k:constraint(f, {\"A\", \"B\"})");
  lua_createtable(L, (int)n, 0); /* the list alone */
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, names, i);
    lua_rawseti(L, -2, i);
  }
  lua_remove(L, names);
}

/* __index of the tables of a function without names. Upvalue: the set of
** the parameters not bound yet (early check), or nil (all are bound). */
static int unbound_key(lua_State *L) {
  lua_pushvalue(L, 2);
  if (lua_istable(L, lua_upvalueindex(1)) && lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) {
    lua_pushlightuserdata(L, (void *)&not_bound_yet);
    return lua_error(L);
  }
  const char *key = luaL_tolstring(L, 2, NULL);
  return luaL_error(L, "the constraint reads p.%s: there is no parameter %s (define the "
                       "parameters before the constraints that read them)", key, key);
}

/* The table {name = value} of the arguments 1 .. n; names at index names. */
static void push_config(lua_State *L, int n, int names, int meta) {
  lua_createtable(L, 0, n);
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, names, i);
    lua_pushvalue(L, i);
    lua_rawset(L, -3);
  }
  lua_pushvalue(L, meta);
  lua_setmetatable(L, -2);
}

/* The early check, on the parameters the first call read. Upvalues: the
** function, their names, the metatable, the memo {values..., decided =}. */
static int early_check(lua_State *L) {
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  push_config(L, n, lua_upvalueindex(2), lua_upvalueindex(3));
  bool ok = lua_pcall(L, 1, 1, 0) == LUA_OK;
  if (!ok && lua_touserdata(L, -1) != &not_bound_yet) return lua_error(L);
  int memo = lua_upvalueindex(4);
  for (int i = 1; i <= n; i++) {
    lua_pushvalue(L, i);
    lua_rawseti(L, memo, i);
  }
  if (ok) lua_pushboolean(L, lua_toboolean(L, -1));
  else lua_pushnil(L);
  lua_setfield(L, memo, "decided");
  lua_pushboolean(L, !ok || lua_toboolean(L, -1));
  return 1;
}

/* The check on all parameters: what the early check decided for the same
** values, else the function's answer. Upvalues: the function, the names,
** the metatable, the memo, where each early parameter is among the names. */
static int full_check(lua_State *L) {
  int n = lua_gettop(L), memo = lua_upvalueindex(4), at = lua_upvalueindex(5);
  if (lua_getfield(L, memo, "decided") != LUA_TNIL) {
    bool same = true;
    lua_Integer k = luaL_len(L, at);
    for (lua_Integer j = 1; j <= k && same; j++) {
      lua_rawgeti(L, at, j);
      int i = (int)lua_tointeger(L, -1);
      lua_rawgeti(L, memo, j);
      same = lua_rawequal(L, -1, i);
      lua_pop(L, 2);
    }
    if (same) return 1;
  }
  lua_settop(L, n);
  lua_pushvalue(L, lua_upvalueindex(1));
  push_config(L, n, lua_upvalueindex(2), lua_upvalueindex(3));
  lua_call(L, 1, 1);
  lua_pushboolean(L, lua_toboolean(L, -1));
  return 1;
}

/* A metatable whose __index is unbound_key with the set at idx (0: none). */
static void push_meta(lua_State *L, int set) {
  lua_createtable(L, 0, 1);
  if (set) lua_pushvalue(L, set);
  else lua_pushnil(L);
  lua_pushcclosure(L, unbound_key, 1);
  lua_setfield(L, -2, "__index");
}

/* A function without names: at 2 and 3, ({all names}, full check); at 4
** and 5, ({names first read}, early check), unless those are all. The
** early names are at `read`. */
static int without_names(lua_State *L, const kt_space *s, int read) {
  int fn = 2;
  size_t np = kt_space_nparams(s);
  lua_Integer nread = luaL_len(L, read);
  lua_createtable(L, (int)np, 0);
  int all = lua_gettop(L);
  lua_createtable(L, 0, (int)np); /* the set of those the early check lacks */
  int later = lua_gettop(L);
  lua_createtable(L, (int)nread, 0); /* where each read name is among all */
  int at = lua_gettop(L);
  for (size_t i = 0; i < np; i++) {
    lua_pushstring(L, kt_space_param(s, i)->name);
    lua_pushvalue(L, -1);
    lua_rawseti(L, all, (lua_Integer)i + 1);
    lua_pushboolean(L, 1);
    lua_rawset(L, later);
  }
  for (lua_Integer j = 1; j <= nread; j++) {
    lua_rawgeti(L, read, j);
    lua_pushinteger(L, kt_space_find(s, lua_tostring(L, -1)) + 1);
    lua_rawseti(L, at, j);
    lua_pushnil(L);
    lua_rawset(L, later);
  }
  lua_newtable(L);
  int memo = lua_gettop(L);
  lua_pushvalue(L, fn); /* the full check */
  lua_pushvalue(L, all);
  push_meta(L, 0);
  lua_pushvalue(L, memo);
  lua_pushvalue(L, at);
  lua_pushcclosure(L, full_check, 5);
  int full = lua_gettop(L);
  lua_pushvalue(L, fn); /* the early check */
  lua_pushvalue(L, read);
  push_meta(L, later);
  lua_pushvalue(L, memo);
  lua_pushcclosure(L, early_check, 4);
  int early = lua_gettop(L);
  int out[4] = {all, full, read, early};
  for (int i = 0; i < 4; i++) lua_copy(L, out[i], 2 + i); /* all above 5 */
  lua_settop(L, 5);
  return (size_t)nread == np ? 1 : 2;
}

int lk_constraint_table_form(lua_State *L, const kt_space *s) {
  int fn = 2;
  lua_settop(L, 3);
  if (lua_isnil(L, 3)) {
    probe(L, fn, s);
    return without_names(L, s, lua_gettop(L));
  }
  luaL_checktype(L, 3, LUA_TTABLE);
  lua_pushvalue(L, 3);
  int names = lua_gettop(L);
  lua_pushvalue(L, fn);
  lua_pushvalue(L, names);
  lua_createtable(L, 0, 1);
  lua_pushvalue(L, names);
  lua_pushcclosure(L, unknown_key, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcclosure(L, call_with_table, 3);
  lua_replace(L, 3);
  lua_replace(L, 2); /* {names}, wrapper */
  lua_settop(L, 3);
  return 1;
}
