/*
** lk_live.c: the tune option live = "tuning.html" (doc/results.md, "A live
** view"): the glue between tuner:tune and ktlua.live's session, which
** checks the page before the tuning, gives the tuning a journal where it
** has none, starts the follower process at the first result (from the
** progress hook, before the script's own progress) and writes the
** finished report when the tuning returns.
*/
#include "lk.h"

void lk_live_check(lua_State *L, int opts, lk_tune_hold *h, const char *task, const char *device,
                   const char **journal) {
  if (lk_get_field(L, opts, "live") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  int page = lua_gettop(L);
  lk_push_stdlib(L, "ktlua.live", "session");
  lua_pushvalue(L, page);
  lk_get_field(L, opts, "stop");
  lua_pushstring(L, task);
  lua_pushstring(L, device);
  if (*journal) lua_pushstring(L, *journal);
  else lua_pushnil(L);
  lua_call(L, 5, 2); /* the session and its journal, kept by the session */
  h->live = lk_ref_new(L, -2);
  *journal = lua_tostring(L, -1);
  lua_pop(L, 3);
}

static int result_body(lua_State *T) {
  lk_tune_hold *h = lua_touserdata(T, 1);
  lk_ref_push(h->live);
  lua_getfield(T, -1, "result");
  lua_insert(T, -2);
  lua_call(T, 1, 0);
  return 0;
}

/* The progress hook of a tuning with a live page: the session's, then the
** script's own (lk_tuner.c's, which the hold keeps). */
static int live_progress(const kt_results *r, const kt_result *last, void *ud, kt_error *err) {
  lk_tune_hold *h = ud;
  if (lk_ref_protect(h->live, result_body, h, err)) return -1;
  return h->progress_fn ? h->progress_fn(r, last, h->progress, err) : 0;
}

void lk_live_progress(lk_tune_hold *h, kt_progress_fn *fn, void **ud) {
  if (!h->live) return;
  h->progress_fn = *fn;
  *fn = live_progress;
  *ud = h;
}

/* Ends the session: the follower stopped, the finished report written from
** the results (pushed, or nil) or, where the tuning failed before it had
** any, a page that says why. A page that cannot be written is an error
** after the outputs were written, unless the tuning's own error comes. */
void lk_live_finish(lua_State *L, lk_tune_hold *h, int results, const kt_error *err) {
  if (!h->live) return;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->live->ref); /* on L: lk_ref_push's is the callback thread */
  lua_getfield(L, -1, "finish");
  lua_insert(L, -2);
  lua_pushvalue(L, results);
  if (err) lua_pushstring(L, err->msg);
  else lua_pushnil(L);
  if (!err) lua_call(L, 3, 0);
  else (void)lua_pcall(L, 3, 0, 0); /* the tuning's error is the one to say */
  lua_settop(L, top);
}
