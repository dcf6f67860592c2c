/*
** lk_types.c: the checkers of the objects that binding files take from
** one another (tuners, kernels, replays). Below every binding file that
** defines or takes them, so that none calls another's for them.
*/
#include "lk.h"

kt_tuner *lk_check_tuner(lua_State *L, int idx) {
  return ((lk_tuner *)lk_check_object(L, idx, LK_TUNER))->t;
}

kt_tuner *lk_test_tuner(lua_State *L, int idx) {
  lk_tuner *ut = luaL_testudata(L, idx, LK_TUNER);
  return ut ? ut->t : NULL;
}

lk_task *lk_check_task(lua_State *L, int idx) {
  return lk_check_object(L, idx, LK_TASK);
}

lk_task *lk_check_idle_task(lua_State *L, int idx) {
  lk_task *ut = lk_check_task(L, idx);
  kt_error err;
  if (kt_task_busy(ut->task) && kt_task_held_online(ut->task) &&
      kt_task_busy_error(ut->task, &err))
    luaL_argerror(L, idx, err.msg);
  if (kt_task_busy(ut->task))
    luaL_argerror(L, idx, lua_pushfstring(L, "%s %s is in use: it cannot change while it is "
                                             "tuned or run, or while its space is generated",
                                          ut->kernel ? "kernel" : "composition", ut->task->name));
  return ut;
}

int lk_opt_kernel(lua_State *L, const lk_task *ut, int idx, int *kernel) {
  lk_task *target_kernel = lk_test_object(L, idx, LK_TASK);
  *kernel = -1;
  if (!target_kernel) return idx;
  *kernel = target_kernel->kernel ? kt_task_kernel_index(ut->task, target_kernel->kernel) : -1;
  if (*kernel < 0) luaL_argerror(L, idx, "the kernel is not part of this composition");
  return idx + 1;
}

kt_replay *lk_test_replay(lua_State *L, int idx) {
  lk_replay *u = lk_test_object(L, idx, LK_REPLAY);
  return u ? u->r : NULL;
}
