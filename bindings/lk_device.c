/*
** lk_device.c: kt.devices() and kt.device(what): devices as plain tables.
*/
#include <stdlib.h>
#include <string.h>

#include "../core/multi/mpi.h"
#include "../core/device/remote.h"
#include "lk.h"

void lk_push_device(lua_State *L, const kt_device_info *d) {
  lua_createtable(L, 0, (int)d->nprops + 4);
  for (size_t i = 0; i < d->nprops; i++) {
    const kt_prop *p = &d->props[i];
    if (p->type == KT_PROP_INT) {
      if (p->i < 0) continue; /* the device did not say */
      lua_pushinteger(L, p->i);
    } else if (p->type == KT_PROP_STRING) {
      lua_pushstring(L, p->s);
    } else {
      lua_createtable(L, p->nsizes, 0);
      for (int k = 0; k < p->nsizes; k++) {
        lua_pushinteger(L, p->sizes[k]);
        lua_rawseti(L, -2, k + 1);
      }
    }
    lua_setfield(L, -2, p->key);
  }
  lua_pushstring(L, d->id);
  lua_setfield(L, -2, "id");
  lua_pushstring(L, d->backend->name);
  lua_setfield(L, -2, "backend");
}

/* The device list, enumerated once per Lua state: OpenCL enumeration
** builds probe programs and is not cheap. */
typedef struct device_list {
  kt_device_info *list;
  size_t n;
  char why[512];
} device_list;

static int list_gc(lua_State *L) {
  device_list *dl = lua_touserdata(L, 1);
  kt_devices_free(dl->list, dl->n);
  dl->list = NULL;
  dl->n = 0;
  return 0;
}

static const char LIST_KEY = 'd';

static device_list *get_list(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &LIST_KEY);
  device_list *dl = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (dl) return dl;
  dl = lua_newuserdatauv(L, sizeof *dl, 0);
  memset(dl, 0, sizeof *dl);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, list_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &LIST_KEY);
  /* kt_devices lists them where no driver loads into this process. */
  kt_error err;
  int rc = kt_devices(&dl->list, &dl->n, dl->why, sizeof dl->why, &err);
  /* Under mpirun, rank 0 lists the other ranks' devices too ("mpi:R:..."). */
  if (rc == 0 && kt_mpi_size() > 1)
    rc = kt_mpi_devices_append(&dl->list, &dl->n, dl->why, sizeof dl->why, &err);
  if (rc) lk_error(L, &err);
  return dl;
}

static int l_devices(lua_State *L) {
  device_list *dl = get_list(L);
  lua_createtable(L, (int)dl->n, 0);
  for (size_t i = 0; i < dl->n; i++) {
    lk_push_device(L, &dl->list[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_pushstring(L, dl->why);
  return 2;
}

/* By table: its id field if any, else backend/platform/index fields. */
/* nil and "default" mean $KTLUA_DEVICE when it is set. */
static const char *device_key(lua_State *L, int idx, char *buf, size_t size) {
  bool dflt = lua_isnoneornil(L, idx) ||
              (lua_type(L, idx) == LUA_TSTRING && strcmp(lua_tostring(L, idx), "default") == 0);
  if (dflt) {
    const char *env = getenv("KTLUA_DEVICE");
    return env && env[0] ? env : "default";
  }
  if (lua_type(L, idx) == LUA_TSTRING) return lua_tostring(L, idx);
  if (!lua_istable(L, idx))
    luaL_typeerror(L, idx, "device id string or device table");
  const char *id = lk_opt_string(L, idx, "device", "id", NULL);
  if (id) {
    snprintf(buf, size, "%s", id);
    return buf;
  }
  const char *backend = lk_opt_string(L, idx, "device", "backend", "opencl");
  lua_Integer platform = lk_opt_integer(L, idx, "device", "platform", 0);
  lua_Integer index = lk_opt_integer(L, idx, "device", "index", 0);
  if (strcmp(backend, "cuda") == 0) snprintf(buf, size, "cuda:%lld", (long long)index);
  else snprintf(buf, size, "%s:%lld:%lld", backend, (long long)platform, (long long)index);
  return buf;
}

void lk_check_device(lua_State *L, int idx, kt_device_info *out) {
  char buf[128];
  const char *what = device_key(L, idx, buf, sizeof buf);
  device_list *dl = get_list(L);
  kt_error err;
  int found = kt_device_find(dl->list, dl->n, what, &err);
  if (found < 0) {
    if (dl->why[0]) luaL_error(L, "%s (%s)", err.msg, dl->why);
    lk_error(L, &err);
  }
  if (kt_device_copy(out, &dl->list[found], &err)) lk_error(L, &err);
}

/* For kt.mpi_devices (lk_mpi.c): the spec at idx as kt.device reads it,
** and the whole list (every rank's devices under mpirun). */
const char *lk_device_spec(lua_State *L, int idx, char *buf, size_t size) {
  return device_key(L, idx, buf, size);
}

const kt_device_info *lk_device_list(lua_State *L, size_t *n, const char **why) {
  device_list *dl = get_list(L);
  *n = dl->n;
  *why = dl->why;
  return dl->list;
}

/* The devices that "all" (every device of the first backend listed) or
** "gpu:all" (every GPU of the first backend that has one) names, or 0. */
size_t lk_devices_all(lua_State *L, const char *what, kt_device_info *out, size_t max) {
  device_list *dl = get_list(L);
  bool gpus = strcmp(what, "gpu:all") == 0;
  const kt_backend *be = NULL;
  size_t n = 0;
  for (size_t i = 0; i < dl->n && n < max; i++) {
    if (gpus && strcmp(kt_device_string(&dl->list[i], "type"), "gpu") != 0) continue;
    if (!be) be = dl->list[i].backend;
    if (dl->list[i].backend != be) continue;
    kt_error err;
    if (kt_device_copy(&out[n], &dl->list[i], &err)) lk_error(L, &err);
    n++;
  }
  return n;
}

size_t lk_devices_count(lua_State *L) { return get_list(L)->n; }

static int l_device(lua_State *L) {
  kt_device_info d;
  lk_check_device(L, 1, &d);
  lk_push_device(L, &d);
  kt_device_clear(&d);
  return 1;
}

void lk_open_device(lua_State *L) {
  static const luaL_Reg fns[] = {{"devices", l_devices}, {"device", l_device}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
