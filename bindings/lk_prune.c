/*
** lk_prune.c: constants for expressions, and device pruning as kernel
** methods: k:local_memory(...), k:prune(...), and the counts that
** space:pruned() returns.
*/
#include "../core/eval/prune.h"
#include "lk.h"

const kt_named_value *lk_check_constants(lua_State *L, int idx, size_t *n) {
  *n = 0;
  if (lua_isnoneornil(L, idx)) {
    lua_pushnil(L);
    return NULL;
  }
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) (*n)++;
  kt_named_value *c = lua_newuserdatauv(L, (*n + 1) * sizeof *c, 0);
  size_t i = 0;
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1), i++) {
    if (lua_type(L, -2) != LUA_TSTRING) luaL_argerror(L, idx, "constants are named by strings");
    c[i].name = lua_tostring(L, -2);
    if (lk_has_nul(L, -2) || lk_has_nul(L, -1))
      luaL_argerror(L, idx, "a constant's name or value holds a NUL byte (C strings end there)");
    if (!lk_to_value(L, -1, &c[i].value))
      luaL_argerror(L, idx, lua_pushfstring(L, "constant %s is a %s; expected a number or a "
                                               "string", c[i].name, luaL_typename(L, -1)));
  }
  return c;
}

/* k:local_memory([kernel,] expr[, constants]): the bytes of local memory a
** work-group uses, as an expression over parameters ("(MWG + NWG) * KWG *
** 4"); configurations that need more than the device has are pruned. In
** a composition, kernel picks the kernel (default: every kernel). */
int lk_task_local_memory(lua_State *L) {
  lk_task *ut = lk_check_idle_task(L, 1);
  int kernel, arg = lk_opt_kernel(L, ut, 2, &kernel);
  const char *expr = lk_check_text(L, arg);
  size_t n;
  const kt_named_value *consts = lk_check_constants(L, arg + 1, &n);
  kt_error err;
  if (kt_task_set_local_memory(ut->task, kernel, expr, consts, n, &err)) return lk_error(L, &err);
  lua_settop(L, 1);
  return 1;
}

static void set_pruning(lua_State *L, kt_task *t, kt_prune_kind k, bool on) {
  kt_error err;
  if (kt_task_set_pruning(t, k, on, &err)) lk_error(L, &err);
}

/* k:prune(false) switches device pruning off, k:prune(true) back on, and
** k:prune{divisible = false} switches the kinds it names: group_dims,
** group_size, local_memory, divisible. Every kind is on by default. */
int lk_task_prune(lua_State *L) {
  static const char *const keys[] = {"group_dims", "group_size", "local_memory", "divisible",
                                     NULL};
  lk_task *ut = lk_check_idle_task(L, 1);
  if (lua_isboolean(L, 2)) {
    for (int k = 1; k < KT_PRUNE_END; k++) set_pruning(L, ut->task, k, lua_toboolean(L, 2));
  } else {
    luaL_checktype(L, 2, LUA_TTABLE);
    lk_check_keys(L, 2, "prune options", keys);
    for (int k = 1; k < KT_PRUNE_END; k++) {
      int t = lua_getfield(L, 2, kt_prune_name(k));
      if (t != LUA_TNIL && t != LUA_TBOOLEAN)
        luaL_error(L, "prune options.%s: expected a boolean, got %s", kt_prune_name(k),
                   luaL_typename(L, -1));
      if (t == LUA_TBOOLEAN) set_pruning(L, ut->task, k, lua_toboolean(L, -1));
      lua_pop(L, 1);
    }
  }
  lua_settop(L, 1);
  return 1;
}

void lk_push_prune_counts(lua_State *L, const uint64_t *removed) {
  lua_createtable(L, 0, KT_PRUNE_END - 1);
  for (int k = 1; k < KT_PRUNE_END; k++) {
    lua_pushinteger(L, (lua_Integer)removed[k - 1]);
    lua_setfield(L, -2, kt_prune_name(k));
  }
}

void lk_push_pruned(lua_State *L, kt_task *task) {
  uint64_t removed[KT_PRUNE_END - 1];
  kt_error err;
  for (int k = 1; k < KT_PRUNE_END; k++)
    if (kt_task_pruned(task, k, &removed[k - 1], &err)) lk_error(L, &err);
  lk_push_prune_counts(L, removed);
}
