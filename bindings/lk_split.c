/*
** lk_split.c: the preloaded module ktlua.split_run, what ktlua.split runs
** its parts with (core/eval/split.h), and kt.split, which lives in Lua.
**
**   local results = require("ktlua.split_run").run({{tuner, kernel, config}, ...}, seconds)
**
** Every part runs once, at the same time (core/eval/split.h); each result is
** {status =, error =, time_ms =, end_ms =}: its kernel time (device events)
** and when its execution ended on the host clock, from when the parts were
** let go together. seconds (optional) is how long each may wait for its
** device.
*/
#include <stdlib.h>
#include <string.h>

#include "../core/eval/split.h"
#include "lk.h"

typedef struct split_hold {
  size_t n;
  kt_split_part *parts;
} split_hold;

static int hold_gc(lua_State *L) {
  split_hold *h = lua_touserdata(L, 1);
  for (size_t i = 0; h->parts && i < h->n; i++) free(h->parts[i].error);
  free(h->parts);
  memset(h, 0, sizeof *h);
  return 0;
}

/* parts[i] = {tuner, kernel, config}: its value indices. */
static void check_part(lua_State *L, split_hold *h, size_t i) {
  lua_rawgeti(L, 1, (lua_Integer)i + 1);
  if (!lua_istable(L, -1))
    luaL_error(L, "split parts[%d]: expected {tuner, kernel, config}", (int)i + 1);
  int p = lua_gettop(L);
  lua_rawgeti(L, p, 1);
  kt_tuner *t = lk_check_tuner(L, -1);
  lua_rawgeti(L, p, 2);
  lk_task *ut = lk_check_task(L, -1);
  size_t np = kt_space_nparams(ut->task->space);
  uint32_t *vi = lua_newuserdatauv(L, (np ? np : 1) * sizeof *vi, 0);
  lua_rawgeti(L, p, 3);
  if (np || !lua_isnil(L, -1)) {
    luaL_checktype(L, -1, LUA_TTABLE);
    lk_check_config(L, lua_gettop(L), ut->task->space, vi);
  }
  lua_pop(L, 1);
  lua_rawseti(L, 3, (lua_Integer)i + 1); /* keeps vi while the parts run */
  h->parts[i] = (kt_split_part){.tuner = t, .task = ut->task, .vi = vi};
  lua_settop(L, p - 1);
}

/* {status =, error =, time_ms = (device events), end_ms = (host clock,
** from when the first part was let go)}. */
static void push_part(lua_State *L, const kt_split_part *p, int64_t start) {
  lua_createtable(L, 0, 4);
  lua_pushstring(L, kt_status_name(p->status));
  lua_setfield(L, -2, "status");
  if (p->error) {
    lua_pushstring(L, p->error);
    lua_setfield(L, -2, "error");
  }
  lua_pushnumber(L, p->kernel_ns / 1e6);
  lua_setfield(L, -2, "time_ms");
  lua_pushnumber(L, (double)(p->end_ns - start) / 1e6);
  lua_setfield(L, -2, "end_ms");
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
}

static int l_run(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  double seconds = luaL_optnumber(L, 2, 0);
  luaL_argcheck(L, seconds >= 0 && seconds <= KT_SECONDS_MAX, 2,
                "expected a time limit of 0 (none) to 1e9 seconds");
  lua_settop(L, 2);
  lua_newtable(L); /* 3: keeps the value indices */
  size_t n = (size_t)luaL_len(L, 1);
  split_hold *h = lk_new_guarded(L, sizeof *h, hold_gc);
  h->parts = calloc(n ? n : 1, sizeof *h->parts);
  if (!h->parts) return luaL_error(L, "out of memory");
  h->n = n;
  for (size_t i = 0; i < n; i++) check_part(L, h, i);
  kt_error err;
  bool interrupted = false;
  int rc = kt_split_run(h->parts, n, kt_ns_clamp(seconds * 1e9), &interrupted, &err);
  if (interrupted) return luaL_error(L, "split interrupted");
  if (rc) return lk_error(L, &err);
  int64_t start = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || h->parts[i].start_ns < start) start = h->parts[i].start_ns;
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) push_part(L, &h->parts[i], start);
  return 1;
}

static int open_split_run(lua_State *L) {
  static const luaL_Reg fns[] = {{"run", l_run}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}

/* kt.split(options) lives in Lua: ktlua.split. */
static int l_split(lua_State *L) {
  lua_settop(L, 1);
  lk_push_stdlib(L, "ktlua.split", "split");
  lua_insert(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

void lk_open_split(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, open_split_run);
  lua_setfield(L, -2, "ktlua.split_run");
  lua_pop(L, 1);
  lua_pushcfunction(L, l_split);
  lua_setfield(L, -2, "split");
}
