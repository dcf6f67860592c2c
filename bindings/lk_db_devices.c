/*
** lk_db_devices.c: what the tuned-configuration database (lk_db.c) keeps of
** the devices and of when a configuration was measured: a tuning's device
** properties and compiler (for transfer, ktlua.transfer, and for knowing a
** stored best stale after an upgrade), and a stored tuning measured again
** (ktlua.db_recheck).
**
**   db:devices() -> {{device =, backend =, properties = {...}, date =}, ...}
**   db:touch(entry, {driver =, compiler =, time_ms =}) -> true, or false
**   kt.compiler_version(device) -> "NVRTC 12.8" | "<platform> <platform version>"
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/base/json.h"
#include "../core/db/db.h"
#include "lk.h"

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The device table at idx's scalar properties (numbers, strings,
** booleans) as a JSON object, pushed. */
static const char *push_properties(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  const char **names = NULL;
  size_t n = 0, cap = 0;
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
    int t = lua_type(L, -1);
    if (lua_type(L, -2) != LUA_TSTRING || (t != LUA_TNUMBER && t != LUA_TSTRING && t != LUA_TBOOLEAN))
      continue;
    const char *name = lua_tostring(L, -2);
    if (strcmp(name, "extensions") == 0 || strcmp(name, "id") == 0 || strcmp(name, "pci_bus_id") == 0)
      continue; /* long, or of this machine only */
    kt_error err;
    if (kt_grow(&names, &cap, n + 1, sizeof *names, &err)) {
      free(names);
      lk_error(L, &err);
    }
    names[n++] = name;
  }
  if (n) qsort(names, n, sizeof *names, by_name);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) {
    free(names);
    luaL_error(L, "out of memory");
  }
  fputc('{', f);
  for (size_t i = 0; i < n; i++) {
    fputs(i ? "," : "", f);
    kt_json_string(f, names[i]);
    fputc(':', f);
    lua_getfield(L, idx, names[i]);
    if (lua_type(L, -1) == LUA_TBOOLEAN) fputs(lua_toboolean(L, -1) ? "true" : "false", f);
    else if (lua_type(L, -1) == LUA_TNUMBER) lk_db_write_number(f, L, -1);
    else kt_json_string(f, lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  fputc('}', f);
  fclose(f);
  free(names);
  lua_pushlstring(L, text, len);
  free(text);
  return lua_tostring(L, -1);
}

void lk_db_store_tuner(lua_State *L, kt_db *db, const kt_results *r, int size_idx, int device_idx,
                       lua_Integer top, const char *origin) {
  int base = lua_gettop(L);
  device_idx = lua_absindex(L, device_idx);
  size_idx = lua_absindex(L, size_idx);
  lk_db_extra x = {0};
  x.compiler = lk_device_compiler(L, device_idx);
  x.origin = origin;
  lk_db_store(L, db, r, size_idx, top, &x);
  char date[32];
  lk_db_today(date, sizeof date);
  lua_getfield(L, device_idx, "backend");
  const char *backend = lua_tostring(L, -1);
  const char *properties = push_properties(L, device_idx);
  kt_error err;
  if (backend && r->device && kt_db_store_device(db, r->device, backend, properties, date, &err))
    lk_error(L, &err);
  lua_settop(L, base); /* what storing pushed */
}

/* db:touch(entry, {driver =, compiler =, time_ms =}): the entry's tuning
** (its key: kernel, device, backend, size, objective) measured again now,
** with this ktlua, by that driver and compiler; rank 1 takes time_ms.
** true, or false when the database no longer holds it. */
static int db_touch(lua_State *L) {
  static const char *const keys[] = {"driver", "compiler", "time_ms", NULL};
  kt_db *db = lk_check_db(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_checktype(L, 3, LUA_TTABLE);
  lk_check_keys(L, 3, "db:touch options", keys);
  kt_db_row r = {.version = KTLUA_VERSION, .time_ms = NAN};
  char **key[] = {&r.kernel, &r.device, &r.backend, &r.objective};
  const char *fields[] = {"kernel", "device", "backend", "objective"};
  for (int i = 0; i < 4; i++) {
    lua_getfield(L, 2, fields[i]);
    if (!lua_isstring(L, -1))
      luaL_error(L, "db:touch: expected an entry of db:list or db:best (its %s is missing)", fields[i]);
    *key[i] = (char *)lk_db_check_name(L, -1, "db:touch entry");
  }
  lua_getfield(L, 2, "size");
  r.size = (char *)lk_db_push_size(L, -1, "db:touch entry.size");
  r.driver = (char *)lk_opt_string(L, 3, "db:touch options", "driver", "");
  r.compiler = (char *)lk_opt_string(L, 3, "db:touch options", "compiler", "");
  double t = lk_opt_number(L, 3, "db:touch options", "time_ms", NAN);
  if (!isnan(t) && !(t > 0 && isfinite(t)))
    luaL_error(L, "db:touch options.time_ms: expected a positive time in ms");
  r.time_ms = t;
  char date[32];
  lk_db_today(date, sizeof date);
  r.date = date;
  kt_error err;
  int rc = kt_db_touch(db, &r, &err);
  if (rc < 0) return lk_error(L, &err);
  lua_pushboolean(L, rc == 0);
  return 1;
}

/* db:devices() -> {{device =, backend =, properties = {...}, date =}, ...} */
static int db_devices(lua_State *L) {
  kt_db *db = lk_check_db(L, 1);
  char **list;
  size_t n;
  kt_error err;
  if (kt_db_devices(db, &list, &n, &err)) return lk_error(L, &err);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    char why[256];
    lua_createtable(L, 0, 4);
    lua_pushstring(L, list[4 * i]);
    lua_setfield(L, -2, "device");
    lua_pushstring(L, list[4 * i + 1]);
    lua_setfield(L, -2, "backend");
    if (!lk_db_push_json(L, list[4 * i + 2], why, sizeof why)) {
      lua_pushfstring(L, "%s: the properties stored for the device %s are no JSON object: %s",
                      kt_db_path(db), list[4 * i], why);
      kt_db_strings_free(list, 4 * n);
      return lua_error(L);
    }
    lua_setfield(L, -2, "properties");
    lua_pushstring(L, list[4 * i + 3]);
    lua_setfield(L, -2, "date");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  kt_db_strings_free(list, 4 * n);
  return 1;
}

/* kt.compiler_version(device) -> the compiler's version as kt.db keeps it */
static int l_compiler_version(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lk_device_compiler(L, 1);
  return 1;
}

void lk_open_db_devices(lua_State *L) {
  static const luaL_Reg fns[] = {{"compiler_version", l_compiler_version}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"devices", db_devices}, {"touch", db_touch}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  luaL_getmetatable(L, LK_DB);
  lua_getfield(L, -1, "__index");
  luaL_setfuncs(L, methods, 0);
  lua_pop(L, 2);
}
