/*
** lk_space_def.c: kt.space{...}, a space built from a table, with no tuner
** and no device process: for counting a space and walking it before any
** kernel exists.
**
**   kt.space{params = {{"WG", {32, 64}, {group_x = "mul"}}, {"VEC", {1, 2, 4}}},
**            (or a map, params = {WG = {32, 64}, VEC = {1, 2, 4}}, in name order)
**            constraints = {"WG * VEC <= 128", {{"WG"}, function(wg) ... end}},
**            global =, group =, local_memory =, device =}
**
** It returns the view that k:space() returns. Underneath is a kernel
** without source whose only use is its sizes: with a device, the space is
** pruned by that device's limits as a kernel of those sizes would be.
** Without `global` there is nothing to divide, so the divisibility rule
** is off.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lk.h"

/* The reason of "bad argument #3 to '?' (reason)": the argument's number
** and the method are the kernel's, not the caller's. */
static const char *strip_argerror(lua_State *L, const char *msg) {
  const char *open = strstr(msg, " (");
  size_t n = strlen(msg);
  if (strncmp(msg, "bad argument #", 14) != 0 || !open || msg[n - 1] != ')') return msg;
  return lua_pushlstring(L, open + 2, (size_t)(msg + n - 1 - (open + 2)));
}

/* Calls method m of the kernel at k with the nargs arguments on top of
** the stack, keeping nres results; an error is raised again behind
** "kt.space: what: ". */
static void call_method(lua_State *L, int k, const char *m, int nargs, int nres,
                        const char *what) {
  lua_getfield(L, k, m);
  lua_pushvalue(L, k);
  lua_rotate(L, -2 - nargs, 2);
  if (lua_pcall(L, nargs + 1, nres, 0) != LUA_OK)
    luaL_error(L, "kt.space: %s: %s", what, strip_argerror(L, lua_tostring(L, -1)));
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* params = {name = values, ...}, as Kernel Tuner's tune_params: a Lua table
** keeps no order, so the parameters go in the order of their names. */
static void add_param_map(lua_State *L, int map, int k) {
  size_t n = 0;
  for (lua_pushnil(L); lua_next(L, map); lua_pop(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_argerror(L, 1, lua_pushfstring(L, "params: a map of names to values has the key %s: "
                                             "give names, or a list of {name, values}",
                                          luaL_tolstring(L, -2, NULL)));
    n++;
  }
  const char **names = lua_newuserdatauv(L, n * sizeof *names, 0);
  size_t i = 0;
  for (lua_pushnil(L); lua_next(L, map); lua_pop(L, 1)) names[i++] = lua_tostring(L, -2);
  qsort(names, n, sizeof *names, by_name); /* the keys stay anchored in the map */
  for (i = 0; i < n; i++) {
    char what[48];
    snprintf(what, sizeof what, "params.%.32s", names[i]);
    lua_pushstring(L, names[i]);
    lua_getfield(L, map, names[i]);
    call_method(L, k, "param", 2, 0, what);
  }
  lua_pop(L, 1);
}

/* params[i] = {name, values[, modifiers]}, or a map {name = values}. */
static void add_params(lua_State *L, int def, int k) {
  if (lk_get_field(L, def, "params") != LUA_TTABLE)
    luaL_argerror(L, 1, "params: expected a list of {name, values[, modifiers]} or a map "
                        "{name = values}");
  int list = lua_gettop(L);
  lua_Integer n = luaL_len(L, list);
  if (n == 0) {
    add_param_map(L, list, k);
    return (void)lua_pop(L, 1);
  }
  for (lua_pushnil(L); lua_next(L, list); lua_pop(L, 1))
    if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || lua_tointeger(L, -2) > n)
      luaL_argerror(L, 1, lua_pushfstring(L, "params: a list of {name, values} has the key %s "
                                             "too: give a list or a map {name = values}, not both",
                                          luaL_tolstring(L, -2, NULL)));
  for (lua_Integer i = 1; i <= n; i++) {
    char what[48];
    snprintf(what, sizeof what, "params[%d]", (int)i);
    if (lua_rawgeti(L, list, i) != LUA_TTABLE || lua_rawgeti(L, -1, 1) != LUA_TSTRING)
      luaL_argerror(L, 1, lua_pushfstring(L, "%s: expected {name, values[, modifiers]}", what));
    lua_rawgeti(L, -2, 2);
    lua_rawgeti(L, -3, 3);
    call_method(L, k, "param", 3, 0, what);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* constraints[i] is an expression, or {names, function} as k:constraint takes. */
static void add_constraints(lua_State *L, int def, int k) {
  int t = lk_get_field(L, def, "constraints");
  if (t == LUA_TNIL) return (void)lua_pop(L, 1);
  if (t != LUA_TTABLE)
    luaL_argerror(L, 1, "constraints: expected a list of expressions or {names, function}");
  int list = lua_gettop(L);
  lua_Integer n = luaL_len(L, list);
  for (lua_Integer i = 1; i <= n; i++) {
    char what[48];
    snprintf(what, sizeof what, "constraints[%d]", (int)i);
    int ct = lua_rawgeti(L, list, i);
    if (ct == LUA_TTABLE) {
      int pair = lua_gettop(L);
      lua_rawgeti(L, pair, 1);
      lua_rawgeti(L, pair, 2);
      lua_remove(L, pair);
    } else if (ct == LUA_TFUNCTION) {
      lua_pushnil(L);
    } else if (ct != LUA_TSTRING) {
      luaL_argerror(L, 1, lua_pushfstring(L, "%s: expected an expression or {names, function}, "
                                             "got %s", what, luaL_typename(L, -1)));
    } else {
      lua_pushnil(L);
    }
    call_method(L, k, "constraint", 2, 0, what);
  }
  lua_pop(L, 1);
}

/* The source-less kernel that carries the sizes; pushed. */
static int new_carrier(lua_State *L, int def) {
  lua_createtable(L, 0, 6);
  int kdef = lua_gettop(L);
  lua_pushliteral(L, "space");
  lua_setfield(L, kdef, "name");
  lua_pushliteral(L, "");
  lua_setfield(L, kdef, "source");
  bool has_global = lk_get_field(L, def, "global") != LUA_TNIL;
  if (!has_global) lua_pushinteger(L, 1);
  lua_setfield(L, kdef, "global");
  lk_get_field(L, def, "group");
  lua_setfield(L, kdef, "group");
  lua_pushboolean(L, !has_global || lk_opt_boolean(L, def, "kt.space", "round_global", 0));
  lua_setfield(L, kdef, "round_global");
  lk_new_kernel(L, kdef);
  lua_remove(L, kdef);
  return lua_gettop(L);
}

static int l_space(lua_State *L) {
  static const char *const keys[] = {"params", "constraints", "global", "group", "round_global",
                                     "local_memory", "device", NULL};
  luaL_checktype(L, 1, LUA_TTABLE);
  lk_check_keys(L, 1, "kt.space", keys);
  lua_settop(L, 1);
  int k = new_carrier(L, 1);
  add_params(L, 1, k);
  add_constraints(L, 1, k);
  if (lk_get_field(L, 1, "local_memory") != LUA_TNIL)
    call_method(L, k, "local_memory", 1, 0, "local_memory");
  else
    lua_pop(L, 1);
  lk_get_field(L, 1, "device");
  call_method(L, k, "space", 1, 1, "device");
  return 1;
}

void lk_open_space_def(lua_State *L) {
  static const luaL_Reg fns[] = {{"space", l_space}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
