/*
** lk_t1.c: what the T1 reader (stdlib ktlua.t1) needs from C: Python list
** expressions for parameter values (kt.python_list, core/space/expr_list.c), its
** expressions, and the files a T1 file names (core/base/regular_file.c); it
** reads its JSON with kt.json.
*/
#include <string.h>

#include "lk.h"

#include <stdlib.h>

#include "../core/space/expr.h"
#include "../core/base/regular_file.h"

/* The text quoted in an error: its first 80 bytes (a hostile one may be
** megabytes long; the error names the character). */
static const char *shortened(lua_State *L, const char *text) {
  if (strlen(text) <= 80) return text;
  lua_pushlstring(L, text, 80);
  lua_pushliteral(L, "...");
  lua_concat(L, 2);
  return lua_tostring(L, -1);
}

/* kt.python_list("[2**i for i in range(5, 11)]") -> {32, 64, ..., 1024} */
static int l_python_list(lua_State *L) {
  const char *text = lk_check_text(L, 1);
  kt_value *v;
  size_t n;
  kt_error err;
  if (kt_expr_list(text, &v, &n, &err))
    return luaL_error(L, "python_list '%s': %s", shortened(L, text), err.msg);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lk_push_value(L, &v[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  kt_values_free(v, n);
  return 1;
}

/* JSON nesting is bounded by the reader; Lua's stack grows with it. */

/* ---- expressions evaluated from Lua ---- */

static int expr_gc(lua_State *L) {
  kt_expr **box = luaL_checkudata(L, 1, "ktlua.expr");
  kt_expr_free(*box);
  *box = NULL;
  return 0;
}

/* f(values): the expression with its names taken from the table values. */
static int expr_call(lua_State *L) {
  kt_expr *e = *(kt_expr **)lua_touserdata(L, lua_upvalueindex(1));
  size_t n = kt_expr_nvars(e);
  if (n > 0) luaL_checktype(L, 1, LUA_TTABLE);
  kt_value *vals = lua_newuserdatauv(L, (n ? n : 1) * sizeof *vals, 0);
  const kt_value **ptrs = lua_newuserdatauv(L, (n ? n : 1) * sizeof *ptrs, 0);
  for (size_t i = 0; i < n; i++) {
    lua_getfield(L, 1, kt_expr_var(e, i));
    if (!lk_to_value(L, -1, &vals[i]))
      return luaL_error(L, "expression '%s': '%s' is %s, not a number or a string",
                        kt_expr_text(e), kt_expr_var(e, i),
                        lua_isnil(L, -1) ? "not given" : luaL_typename(L, -1));
    if (lk_has_nul(L, -1))
      return luaL_error(L, "expression '%s': '%s' holds a NUL byte (C strings end there)",
                        kt_expr_text(e), kt_expr_var(e, i));
    ptrs[i] = &vals[i]; /* strings stay alive on the stack */
  }
  kt_value out;
  kt_error err;
  if (kt_expr_eval(e, ptrs, &out, &err))
    return luaL_error(L, "expression '%s': %s", kt_expr_text(e), err.msg);
  if (kt_expr_is_condition(e)) lua_pushboolean(L, out.u.i != 0);
  else lk_push_value(L, &out);
  return 1;
}

/* kt._expression(text) -> f(values), {names it reads}: an expression of
** expr.h for ktlua.t1's sizes and fills; errors name the character. */
static int l_expression(lua_State *L) {
  const char *text = lk_check_text(L, 1);
  kt_expr **box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = NULL;
  luaL_setmetatable(L, "ktlua.expr");
  kt_error err;
  if (!(*box = kt_expr_parse(text, &err)))
    return luaL_error(L, "expression '%s': %s", shortened(L, text), err.msg);
  lua_pushcclosure(L, expr_call, 1);
  size_t n = kt_expr_nvars(*box);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushstring(L, kt_expr_var(*box, i));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 2;
}

static int bytes_gc(lua_State *L) {
  char **slot = lua_touserdata(L, 1);
  free(*slot);
  *slot = NULL;
  return 0;
}

/* kt._read_regular(path, max) -> bytes | nil, why, "absent" or "refused":
** a regular file of at most max bytes; why does not repeat the path. */
static int l_read_regular(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer max = luaL_checkinteger(L, 2);
  luaL_argcheck(L, max >= 0, 2, "the limit must not be negative");
  char **slot = lk_new_guarded(L, sizeof *slot, bytes_gc); /* owns the bytes */
  size_t len;
  kt_file_fault fault;
  kt_error err;
  char *data = *slot = kt_read_regular(path, (size_t)max, &len, &fault, &err);
  if (!data) {
    luaL_pushfail(L);
    lua_pushstring(L, err.msg);
    lua_pushstring(L, fault == KT_FILE_ABSENT ? "absent" : "refused");
    return 3;
  }
  lua_pushlstring(L, data, len);
  free(data);
  *slot = NULL;
  return 1;
}

void lk_open_t1(lua_State *L) {
  if (luaL_newmetatable(L, "ktlua.expr")) {
    lua_pushcfunction(L, expr_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {
      {"python_list", l_python_list},
      {"_expression", l_expression}, {"_read_regular", l_read_regular}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
