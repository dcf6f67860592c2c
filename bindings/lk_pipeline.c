/*
** lk_pipeline.c: the tune options that say how configurations are
** measured (core/eval/measure.c).
*/
#include <string.h>

#include "lk.h"

static const char *const early_keys[] = {"runs", "factor", "spread", "noise", NULL};

/* early_stop = true (kt_early_stop's defaults), false (the default: off)
** or {runs =, factor =, spread =, noise =}. */
static void check_early_stop(lua_State *L, int opts, kt_early_stop *e) {
  const char *what = "tune options.early_stop";
  int t = lk_get_field(L, opts, "early_stop");
  int at = lua_gettop(L);
  *e = (kt_early_stop){0, 0, 0, 0};
  if (t == LUA_TNIL || (t == LUA_TBOOLEAN && !lua_toboolean(L, at))) {
    lua_pop(L, 1);
    return;
  }
  *e = KT_EARLY_STOP_DEFAULT;
  if (t == LUA_TTABLE) {
    lk_check_keys(L, at, what, early_keys);
    lua_Integer runs = lk_opt_integer(L, at, what, "runs", e->runs);
    e->factor = lk_opt_number(L, at, what, "factor", e->factor);
    e->spread = lk_opt_number(L, at, what, "spread", e->spread);
    e->noise = lk_opt_number(L, at, what, "noise", e->noise);
    if (runs < 1 || runs > 1 << 20)
      luaL_error(L, "%s.runs: expected an integer of 1 or more, got %I", what, runs);
    if (!(e->factor > 1) || e->factor > 1e12)
      luaL_error(L, "%s.factor: expected a number above 1, got %f", what, e->factor);
    if (!(e->spread >= 0) || e->spread > 1e12)
      luaL_error(L, "%s.spread: expected a number of 0 or more, got %f", what, e->spread);
    if (!(e->noise >= 0) || e->noise > 1e12)
      luaL_error(L, "%s.noise: expected a number of 0 or more, got %f", what, e->noise);
    e->runs = (int)runs;
  } else if (t != LUA_TBOOLEAN) {
    luaL_error(L, "%s: expected true, false or {runs =, factor =, spread =, noise =}, got %s", what,
               luaL_typename(L, at));
  }
  lua_pop(L, 1);
}

/* pipeline = true (default): timed runs queued back to back, outputs
** compared on a worker meanwhile; false: one by one, as for comparing.
** validate_on = "auto" (default: on the device for large outputs on a
** GPU), "host" or "device" (wherever the method and type allow). */
void lk_check_pipeline(lua_State *L, int opts, kt_tune_opts *o) {
  o->serial = !lk_opt_boolean(L, opts, "tune options", "pipeline", 1);
  static const char *const where[] = {"auto", "host", "device", NULL};
  const char *w = lk_opt_string(L, opts, "tune options", "validate_on", "auto");
  for (o->validate_on = 0; where[o->validate_on] && strcmp(where[o->validate_on], w); o->validate_on++) {}
  if (!where[o->validate_on])
    luaL_error(L, "tune options.validate_on: expected 'auto', 'host' or 'device', got '%s'", w);
  check_early_stop(L, opts, &o->early);
}
