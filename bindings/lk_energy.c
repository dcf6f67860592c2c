/*
** lk_energy.c: the tune option that measures energy (core/device/energy.h):
**   energy = true                 a window of 0.1 s per configuration
**   energy = {window = seconds}
** Each configuration then has the metrics energy (J per run), power (W)
** and sm_clock (MHz), which objectives and other metrics may name.
*/
#include <string.h>

#include "../core/results/metrics.h"
#include "lk.h"

#define WINDOW_DEFAULT_S 0.1

static const char *const measured[] = {"energy", "power", "sm_clock", NULL};

static bool is_measured(const char *name) {
  for (int i = 0; measured[i]; i++)
    if (strcmp(measured[i], name) == 0) return true;
  return false;
}

static double check_window(lua_State *L, int at) {
  static const char *const keys[] = {"window", NULL};
  lk_check_keys(L, at, "tune options.energy", keys);
  double s = lk_opt_number(L, at, "tune options.energy", "window", WINDOW_DEFAULT_S);
  if (!(s >= 0.001 && s <= 3600))
    luaL_error(L, "tune options.energy.window: expected 0.001 to 3600 seconds, got %f", s);
  return s;
}

/* The window in seconds: 0 when energy is off. */
static double energy_window(lua_State *L, int opts) {
  int t = lk_get_field(L, opts, "energy");
  double s = 0;
  if (t == LUA_TBOOLEAN) s = lua_toboolean(L, -1) ? WINDOW_DEFAULT_S : 0;
  else if (t == LUA_TTABLE) s = check_window(L, lua_gettop(L));
  else if (t != LUA_TNIL)
    luaL_error(L, "tune options.energy: expected true, false or {window = seconds}, got %s",
               luaL_typename(L, -1));
  lua_pop(L, 1);
  return s;
}

bool lk_energy_metric(const char *name) { return is_measured(name); }

void lk_energy_list(lua_State *L, int opts, int list) {
  if (energy_window(L, opts) <= 0) return;
  for (int i = 0; measured[i]; i++) {
    lua_pushstring(L, measured[i]);
    lua_rawseti(L, list, (lua_Integer)lua_rawlen(L, list) + 1);
  }
}

void lk_check_energy(lua_State *L, int opts, kt_tune_opts *o) {
  o->energy_window_ns = energy_window(L, opts) * 1e9;
  for (size_t i = 0; o->energy_window_ns > 0 && o->metrics && i < o->metrics->n; i++)
    if (is_measured(o->metrics->items[i].name))
      luaL_error(L, "tune options.metrics: the name '%s' is taken (energy = true measures it)",
                 o->metrics->items[i].name);
}
