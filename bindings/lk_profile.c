/*
** lk_profile.c: hardware counters in tune options (tuner:tune):
**   profile = {"dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed"}
** CUPTI's metric names, collected for each configuration that came out ok
** (core/eval/profile.c) into result.metrics. search = "profile" without a
** profile list collects the counters its analysis reads
** (core/models/bottlenecks.h), which kt.profile_counters lists.
*/
#include <string.h>

#include "../core/models/bottlenecks.h"
#include "lk.h"

/* The searcher's name in the options' search (a name, or a table with it first). */
static bool searches_by_profile(lua_State *L, int opts) {
  int t = lk_get_field(L, opts, "search");
  if (t == LUA_TTABLE) {
    lua_rawgeti(L, -1, 1);
    lua_replace(L, -2);
  }
  bool yes = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "profile") == 0;
  lua_pop(L, 1);
  return yes;
}

/* The names as an array anchored in a userdata left on the stack. */
static void check_names(lua_State *L, int list, kt_tune_opts *o) {
  lua_Integer n = luaL_len(L, list);
  if (n < 1 || n > 4096)
    luaL_error(L, "tune options.profile: expected a list of counter names (CUPTI's metrics, "
                  "e.g. \"dram__bytes_read.sum\")");
  const char **names = lua_newuserdatauv(L, (size_t)n * sizeof *names, 1);
  lua_pushvalue(L, list);
  lua_setiuservalue(L, -2, 1); /* the strings live as long as the array */
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_rawgeti(L, list, i) != LUA_TSTRING || lua_rawlen(L, -1) == 0)
      luaL_error(L, "tune options.profile[%d]: expected a counter's name, got %s", (int)i,
                 luaL_typename(L, -1));
    names[i - 1] = lua_tostring(L, -1);
    for (lua_Integer j = 1; j < i; j++)
      if (strcmp(names[j - 1], names[i - 1]) == 0)
        luaL_error(L, "tune options.profile[%d]: '%s' is named twice", (int)i, names[i - 1]);
    lua_pop(L, 1);
  }
  o->profile = names;
  o->nprofile = (size_t)n;
}

void lk_check_profile(lua_State *L, int opts, kt_tune_opts *o) {
  int t = lk_get_field(L, opts, "profile");
  int list = lua_gettop(L);
  if (t == LUA_TTABLE) check_names(L, list, o); /* leaves the anchor on the stack */
  else if (t != LUA_TNIL)
    luaL_error(L, "tune options.profile: expected a list of counter names, got %s",
               luaL_typename(L, -1));
  else if (searches_by_profile(L, opts)) {
    o->profile = kt_profile_counters;
    o->nprofile = KT_PC_COUNT;
  }
}

static void append(lua_State *L, int list) {
  lua_rawseti(L, list, (lua_Integer)lua_rawlen(L, list) + 1);
}

void lk_profile_list(lua_State *L, int opts, int list) {
  int t = lk_get_field(L, opts, "profile");
  for (lua_Integer i = 1; t == LUA_TTABLE && i <= (lua_Integer)lua_rawlen(L, -1); i++)
    if (lua_rawgeti(L, -1, i) == LUA_TSTRING) append(L, list);
    else lua_pop(L, 1);
  bool implicit = t == LUA_TNIL && searches_by_profile(L, opts);
  for (int i = 0; implicit && i < KT_PC_COUNT; i++) {
    lua_pushstring(L, kt_profile_counters[i]);
    append(L, list);
  }
  lua_pop(L, 1);
}

void lk_open_profile(lua_State *L) {
  lua_createtable(L, KT_PC_COUNT, 0);
  for (int i = 0; i < KT_PC_COUNT; i++) {
    lua_pushstring(L, kt_profile_counters[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "profile_counters");
}
