/*
** ktlua.c: luaopen_ktlua, the module that `require "ktlua"` returns, and
** the stdlib modules (ktlua.report, ...) preloaded from their embedded
** sources so that the module is whole wherever it is loaded from.
*/
#include <stdio.h>
#include <string.h>

#include "lk.h"


typedef struct lk_embedded {
  const char *name;
  const char *code;
  size_t size;
} lk_embedded;

extern const lk_embedded lk_stdlib[]; /* generated: build/stdlib_embed.c */

static int load_embedded(lua_State *L) {
  const lk_embedded *m = lua_touserdata(L, lua_upvalueindex(1));
  char chunk[128];
  snprintf(chunk, sizeof chunk, "=[%s]", m->name);
  if (luaL_loadbuffer(L, m->code, m->size, chunk) != LUA_OK) return lua_error(L);
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

static void preload_with(lua_State *L, lua_CFunction loader) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  for (const lk_embedded *m = lk_stdlib; m->name; m++) {
    lua_pushlightuserdata(L, (void *)m);
    lua_pushcclosure(L, loader, 1);
    lua_setfield(L, -2, m->name);
  }
  lua_pop(L, 1);
}

/* A stdlib module required before "ktlua": from lua5.4, which finds
** luaopen_ktlua_<name> (build/stdlib_embed.c) in ktlua.so (its all-in-one
** loader), or from the executable (lk_preload_stdlib). "ktlua" loads
** first, putting the embedded loaders in package.preload in place of
** these, and the module then loads as it would after it. */
int lk_open_embedded(lua_State *L, const char *name) {
  luaL_requiref(L, "ktlua", luaopen_ktlua, 0);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, name) != LUA_TNIL) return 1; /* loaded with ktlua (ktlua.t1) */
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  if (lua_getfield(L, -1, name) == LUA_TNIL) return luaL_error(L, "no stdlib module '%s'", name);
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  return 1;
}

/* The modules the C side preloads (lk_spawn.c, lk_watch.c, lk_split.c), found the same
** way; the installed stdlib's files require them. */
int luaopen_ktlua_spawn(lua_State *L) { return lk_open_embedded(L, "ktlua.spawn"); }
int luaopen_ktlua_watch(lua_State *L) { return lk_open_embedded(L, "ktlua.watch"); }
int luaopen_ktlua_split_run(lua_State *L) { return lk_open_embedded(L, "ktlua.split_run"); }

static int load_first(lua_State *L) {
  const lk_embedded *m = lua_touserdata(L, lua_upvalueindex(1));
  return lk_open_embedded(L, m->name);
}

/* Before "ktlua" is loaded, each stdlib module's loader loads it first:
** the modules read it and the modules it preloads (ktlua.spawn, ...). */
void lk_preload_stdlib(lua_State *L) {
  preload_with(L, load_first);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_ktlua_spawn);
  lua_setfield(L, -2, "ktlua.spawn");
  lua_pushcfunction(L, luaopen_ktlua_watch);
  lua_setfield(L, -2, "ktlua.watch");
  lua_pushcfunction(L, luaopen_ktlua_split_run);
  lua_setfield(L, -2, "ktlua.split_run");
  lua_pop(L, 1);
}

/* Copies the functions of a stdlib module into the module table on top:
** kt.divisors and its kind are written in Lua (ktlua.values). */
static void merge_stdlib(lua_State *L, const char *name) {
  lua_getglobal(L, "require");
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
    if (!lua_isfunction(L, -1)) continue; /* its own constants (values.MAX) are not the API */
    lua_pushvalue(L, -2);
    lua_pushvalue(L, -2);
    lua_settable(L, -6);
  }
  lua_pop(L, 1);
}

/* kt.clock(): seconds of a monotonic clock, for scripts that time things. */
static int l_clock(lua_State *L) {
  lua_pushnumber(L, (lua_Number)kt_now_ns() / 1e9);
  return 1;
}

int luaopen_ktlua(lua_State *L) {
  luaL_checkversion(L);
  preload_with(L, load_embedded);
  lk_callback_thread(L);
  lua_newtable(L);
  lk_open_device(L);
  lk_open_array(L);
  lk_open_arg(L);
  lk_open_task(L);
  lk_open_space_def(L);
  lk_open_tuner(L);
  lk_open_results(L);
  lk_open_run(L);
  lk_open_cuda(L);
  lk_open_replay(L);
  lk_open_db(L);
  lk_open_db_devices(L);
  lk_open_online(L);
  lk_open_spawn(L);
  lk_open_watch(L);
  lk_open_t1(L);
  lk_open_json(L);
  lk_open_program_cache(L);
  lk_open_probe(L);
  lk_open_split(L);
  lk_open_mpi(L);
  lk_open_profile(L);
  merge_stdlib(L, "ktlua.values");
  merge_stdlib(L, "ktlua.t1"); /* kt.t1, kt.t1_read */
  merge_stdlib(L, "ktlua.annotated"); /* kt.annotated */
  lua_pushliteral(L, KTLUA_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushcfunction(L, l_clock);
  lua_setfield(L, -2, "clock");
  lua_createtable(L, KT_STATUS_COUNT, 0);
  for (int s = 0; s < KT_STATUS_COUNT; s++) {
    lua_pushstring(L, kt_status_name((kt_status)s));
    lua_rawseti(L, -2, s + 1);
  }
  lua_setfield(L, -2, "statuses");
  lua_pushstring(L, kt_searcher_names());
  lua_setfield(L, -2, "searchers");
  return 1;
}
