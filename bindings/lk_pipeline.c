/*
** lk_pipeline.c: the tune options that say how configurations are
** measured (core/measure.c).
*/
#include <string.h>

#include "lk.h"

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
}
