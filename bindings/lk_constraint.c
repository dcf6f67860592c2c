/*
** lk_constraint.c: constraints written as a Lua function of the whole
** configuration, k:constraint(function(p) return p.MWG % p.VWM == 0 end
** [, {"MWG", "VWM"}]), as Kernel Tuner's and KTT's scripts write them.
**
** The space checks a constraint as soon as its parameters are bound, so it
** must know them: they are the names given, or those the function reads
** when it is called once, here, with the first value of every parameter
** defined so far. The function then becomes the positional form
** ({names}, function(a, b) ... end) that lk_task.c adds: each check calls
** it with a table of those parameters' values, whose other keys are an
** error (a branch that reads a parameter the first call did not).
*/
#include <string.h>

#include "lk.h"

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

void lk_constraint_table_form(lua_State *L, const kt_space *s) {
  int fn = 2;
  lua_settop(L, 3);
  if (lua_isnil(L, 3)) {
    probe(L, fn, s);
  } else {
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_pushvalue(L, 3);
  }
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
}
