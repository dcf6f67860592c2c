/*
** lk_fleet.c: kt.tuner{"opencl:0:0", "opencl:0:1"}, kt.tuner("gpu:all"),
** kt.tuner("all"): one tuner over several devices of one model
** (core/multi/fleet.h). Its tune runs over them all; its other methods (run,
** online, cache) use the first device.
*/
#include <stdlib.h>
#include <string.h>

#include "../core/multi/fleet.h"
#include "../core/multi/mpi.h"
#include "lk.h"

typedef struct devset {
  kt_device_info *list;
  size_t n;
} devset;

static int devset_gc(lua_State *L) {
  devset *s = lua_touserdata(L, 1);
  for (size_t i = 0; i < s->n; i++) kt_device_clear(&s->list[i]);
  free(s->list);
  s->list = NULL;
  s->n = 0;
  return 0;
}

bool lk_is_device_set(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *s = lua_tostring(L, idx);
    return strcmp(s, "all") == 0 || strcmp(s, "gpu:all") == 0;
  }
  return lua_type(L, idx) == LUA_TTABLE && lua_rawlen(L, idx) > 0;
}

static int check_one(lua_State *L) {
  lk_check_device(L, 1, lua_touserdata(L, 2));
  return 0;
}

/* The list's devices, each as kt.device takes it; an error names the
** entry. */
static void check_list(lua_State *L, int idx, devset *s) {
  size_t n = lua_rawlen(L, idx);
  if (!(s->list = calloc(n, sizeof *s->list))) luaL_error(L, "out of memory");
  for (size_t i = 0; i < n; i++) {
    lua_pushcfunction(L, check_one);
    lua_rawgeti(L, idx, (lua_Integer)i + 1);
    lua_pushlightuserdata(L, &s->list[s->n]);
    if (lua_pcall(L, 2, 0, 0) != LUA_OK)
      luaL_error(L, "kt.tuner devices[%d]: %s", (int)i + 1, lua_tostring(L, -1));
    s->n++;
  }
}

static void check_all(lua_State *L, const char *what, devset *s) {
  size_t max = lk_devices_count(L);
  if (!(s->list = calloc(max ? max : 1, sizeof *s->list))) luaL_error(L, "out of memory");
  s->n = lk_devices_all(L, what, s->list, max);
  if (s->n == 0)
    luaL_error(L, "kt.tuner(\"%s\"): this machine has no %s (kt.devices() lists what it has)",
               what, strcmp(what, "gpu:all") == 0 ? "GPU" : "device");
}

static lk_tuner *new_tuner(lua_State *L) {
  lk_tuner *ut = lua_newuserdatauv(L, sizeof *ut, 1);
  ut->t = NULL;
  ut->fleet = NULL;
  luaL_setmetatable(L, LK_TUNER);
  return ut;
}

static void describe(lua_State *L, lk_tuner *ut) {
  lk_push_device(L, kt_tuner_device(ut->t));
  lua_setiuservalue(L, -2, 1);
}

void lk_push_fleet(lua_State *L, kt_fleet *f) {
  lk_tuner *ut = new_tuner(L);
  ut->fleet = f;
  ut->t = kt_fleet_tuner(f, 0);
  describe(L, ut);
}

int lk_push_fleet_tuner(lua_State *L, int idx, int threads, size_t growth, bool cache,
                        int workers) {
  devset *s = lk_new_guarded(L, sizeof *s, devset_gc);
  if (lua_type(L, idx) == LUA_TSTRING) check_all(L, lua_tostring(L, idx), s);
  else check_list(L, idx, s);
  kt_error err;
  if (kt_fleet_check(s->list, s->n, &err)) luaL_error(L, "kt.tuner: %s", err.msg);
  lk_tuner *ut = new_tuner(L);
  if (s->n == 1) { /* one device: a tuner as kt.tuner(device) gives */
    ut->t = kt_tuner_new(&s->list[0], threads, true, &err);
  } else if ((ut->fleet = kt_fleet_new(s->list, s->n, threads, NULL, NULL, &err))) {
    ut->t = kt_fleet_tuner(ut->fleet, 0);
  }
  if (!ut->t) return lk_error(L, &err);
  for (size_t i = 0; i < s->n; i++) {
    kt_tuner_set_device_growth(lk_tuner_at(ut, i), growth);
    kt_tuner_set_disk_cache(lk_tuner_at(ut, i), cache);
    kt_tuner_set_host_devices(lk_tuner_at(ut, i), (int)kt_mpi_node_devices(s->list, s->n, i));
    if (kt_tuner_set_compile_workers(lk_tuner_at(ut, i), workers, &err))
      luaL_error(L, "tuner options.compile_workers: %s", err.msg);
  }
  describe(L, ut);
  return 1;
}

static void use_thread(void *ud, size_t device, bool starting) {
  lua_State **threads = ud;
  lk_set_callback_thread(starting ? threads[device] : NULL);
}

/* The Lua threads are anchored on L's stack while the tuning runs. */
int lk_fleet_tune(lua_State *L, kt_fleet *f, kt_task *task, const kt_tune_opts *o,
                  kt_results **out, kt_error *err) {
  size_t n = kt_fleet_size(f);
  lua_State **threads = lua_newuserdatauv(L, n * sizeof *threads, (int)n);
  for (size_t i = 0; i < n; i++) {
    threads[i] = lua_newthread(L);
    lua_setiuservalue(L, -2, (int)i + 1);
  }
  kt_fleet_set_thread_hook(f, use_thread, threads);
  int rc = kt_fleet_tune(f, task, o, out, err);
  kt_fleet_set_thread_hook(f, NULL, NULL);
  lua_pop(L, 1);
  return rc;
}

size_t lk_tuner_count(const lk_tuner *ut) { return ut->fleet ? kt_fleet_size(ut->fleet) : 1; }

kt_tuner *lk_tuner_at(const lk_tuner *ut, size_t i) {
  return ut->fleet ? kt_fleet_tuner(ut->fleet, i) : ut->t;
}

/* tuner.devices: the ids of the devices it tunes on, in order. */
void lk_push_tuner_devices(lua_State *L, const lk_tuner *ut) {
  size_t n = lk_tuner_count(ut);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushstring(L, kt_tuner_device(lk_tuner_at(ut, i))->id);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}
