/*
** lk_deadline.c: a time limit on Lua code that waits for no device (a
** launcher's host steps, a source generator), whose loop the device's
** deadline would never stop: a count hook raises an error once it passes.
** Limits nest (a launcher's run may generate a source): each one's state
** lives on its caller's C stack, the registry points the hook to the
** innermost (per Lua thread: the device threads of a tuning over several
** devices each have one), and the end of one gives the hook back to the
** one it hid.
*/
#include "lk.h"
#include "run_delay.h"

#define HOOK_INSTRUCTIONS 1000

/* The limits of the callback thread this OS thread runs (also when the
** hook fires in a coroutine that its Lua code made). */
static void *key_of(lua_State *T) { return lk_running_callback_thread(T); }

static void on_count(lua_State *T, lua_Debug *ar) {
  (void)ar;
  lua_rawgetp(T, LUA_REGISTRYINDEX, key_of(T));
  lk_deadline *d = lua_touserdata(T, -1);
  lua_pop(T, 1);
  if (!d || kt_now_ns() < d->at) return;
  /* a machine busy with other jobs stretches the limit, not the verdict */
  int64_t waited = kt_run_delay_self();
  if (waited > d->waited) {
    d->at += waited - d->waited;
    d->waited = waited;
    if (kt_now_ns() < d->at) return;
  }
  d->fired = true;
  luaL_where(T, 0); /* in a hook, level 0 is the Lua code that was running */
  lua_pushfstring(T, "%s ran past its time limit (%f s)%s", d->who, d->limit_s, d->where);
  lua_concat(T, 2);
  lua_error(T);
}

void lk_deadline_begin(lua_State *T, lk_deadline *d, double limit_s, const char *who,
                       const char *where) {
  d->at = kt_now_ns() + kt_ns_clamp(limit_s * 1e9);
  d->waited = kt_run_delay_self();
  d->limit_s = limit_s;
  d->who = who;
  d->where = where;
  d->fired = false;
  d->hook = lua_gethook(T);
  d->mask = lua_gethookmask(T);
  d->count = lua_gethookcount(T);
  lua_rawgetp(T, LUA_REGISTRYINDEX, key_of(T));
  d->outer = lua_touserdata(T, -1);
  lua_pop(T, 1);
  lua_pushlightuserdata(T, d);
  lua_rawsetp(T, LUA_REGISTRYINDEX, key_of(T));
  lua_sethook(T, on_count, LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
}

void lk_deadline_end(lua_State *T, const lk_deadline *d) {
  lua_sethook(T, d->hook, d->mask, d->count);
  if (d->outer) lua_pushlightuserdata(T, d->outer);
  else lua_pushnil(T);
  lua_rawsetp(T, LUA_REGISTRYINDEX, key_of(T));
}
