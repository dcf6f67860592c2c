/*
** lk_spawn.c: the module ktlua.spawn, preloaded with ktlua, for what the
** stdlib runs beside it (gnuplot for ktlua.report_html):
**
**   local code, why = require("ktlua.spawn").run({"gnuplot", "plot.gp"},
**     {stdin = path, stdout = path, stderr = path, timeout = 30})
**
** runs the program with those arguments and no shell, its standard
** streams from and to files (absent: /dev/null), and waits for it at most
** timeout seconds (absent or 0: no limit). Returns its exit status, or nil
** and why when it could not be started or ran past its time.
*/
#include "lk.h"
#include "../core/base/spawn.h"

static int l_run(lua_State *L) {
  static const char *const keys[] = {"stdin", "stdout", "stderr", "timeout", NULL};
  luaL_checktype(L, 1, LUA_TTABLE);
  if (lua_isnoneornil(L, 2)) lua_newtable(L);
  else luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  lk_check_keys(L, 2, "spawn options", keys);
  lua_Integer n = luaL_len(L, 1);
  if (n < 1) return luaL_argerror(L, 1, "a list with the program and its arguments");
  const char **argv = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof *argv, 0);
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_geti(L, 1, i) != LUA_TSTRING)
      return luaL_error(L, "bad argument #1 to 'run' (item %d is not a string)", (int)i);
    argv[i - 1] = lua_tostring(L, -1); /* anchored by the list */
    lua_pop(L, 1);
  }
  argv[n] = NULL;
  double timeout = lk_opt_number(L, 2, "spawn options", "timeout", 0);
  if (!(timeout >= 0 && timeout <= KT_SECONDS_MAX))
    return luaL_error(L, "spawn options.timeout: expected 0 (no limit) to 1e9 seconds, got %f",
                      timeout);
  kt_spawn_opts o = {lk_opt_string(L, 2, "spawn options", "stdin", NULL),
                     lk_opt_string(L, 2, "spawn options", "stdout", NULL),
                     lk_opt_string(L, 2, "spawn options", "stderr", NULL),
                     timeout};
  kt_error err;
  int code = kt_spawn_run(argv, &o, &err);
  if (code < 0) {
    lua_pushnil(L);
    lua_pushstring(L, err.msg);
    return 2;
  }
  lua_pushinteger(L, code);
  return 1;
}

static int open_spawn(lua_State *L) {
  static const luaL_Reg fns[] = {{"run", l_run}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}

void lk_open_spawn(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, open_spawn);
  lua_setfield(L, -2, "ktlua.spawn");
  lua_pop(L, 1);
}
