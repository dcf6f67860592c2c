/*
** lk_program_cache.c: kt.program_cache() and kt.program_cache_clear(): the
** program cache on disk that tuners use (program_store.h), for `ktlua
** cache info` and `ktlua cache clear`.
*/
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "../core/device/program_store.h"
#include "lk.h"

/* Errors without a position: they are about the environment, not a line. */
static int fail(lua_State *L, const kt_error *err) {
  lua_pushstring(L, err->msg);
  return lua_error(L);
}

/* The store the environment names; NULL when it is turned off. */
static kt_program_store *open_store(lua_State *L) {
  kt_error err;
  bool off;
  kt_program_store *s = kt_program_store_default(&off, &err);
  if (!s && !off) fail(L, &err);
  return s;
}

/* kt.program_cache() -> {place, entries, bytes, limit}, or nil and why. */
static int l_program_cache(lua_State *L) {
  kt_program_store *s = open_store(L);
  if (!s) {
    lua_pushnil(L);
    const char *place = getenv("KTLUA_CACHE");
    lua_pushstring(L, place && strcmp(place, "off") == 0
                          ? "the program cache is off (KTLUA_CACHE=off)"
                          : "the program cache is off (no KTLUA_CACHE, XDG_CACHE_HOME nor HOME)");
    return 2;
  }
  kt_error err;
  kt_program_store_usage u;
  int rc = kt_program_store_usage_of(s, &u, &err);
  if (rc == 0) {
    lua_createtable(L, 0, 4);
    lua_pushstring(L, kt_program_store_dir(s));
    lua_setfield(L, -2, "place");
    lua_pushinteger(L, (lua_Integer)u.entries);
    lua_setfield(L, -2, "entries");
    lua_pushinteger(L, (lua_Integer)u.bytes);
    lua_setfield(L, -2, "bytes");
    lua_pushinteger(L, (lua_Integer)kt_program_store_limit(s));
    lua_setfield(L, -2, "limit");
  }
  kt_program_store_free(s);
  return rc ? fail(L, &err) : 1;
}

/* kt.program_cache_clear() -> entries removed (0 when the cache is off). */
static int l_program_cache_clear(lua_State *L) {
  kt_program_store *s = open_store(L);
  size_t removed = 0;
  kt_error err;
  int rc = s ? kt_program_store_clear(s, &removed, &err) : 0;
  kt_program_store_free(s);
  if (rc) return fail(L, &err);
  lua_pushinteger(L, (lua_Integer)removed);
  return 1;
}

void lk_open_program_cache(lua_State *L) {
  static const luaL_Reg fns[] = {{"program_cache", l_program_cache},
                                 {"program_cache_clear", l_program_cache_clear},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
