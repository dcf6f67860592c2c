/*
** lk_probe.c: kt.probe (device probes, core/probes/probe.h), keeping them in a
** database (db:store_probe, db:probe), and the kernel's side of the cost
** model (k:sizes; k:cost, k:predict and k:predicted are written in Lua, in
** stdlib/ktlua/cost.lua). A probe record is a plain table; ktlua.probe adds
** its summary (bandwidths, latencies, the launch floor, rates).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/db/db.h"
#include "../core/probes/probe.h"
#include "lk.h"

/* ---- options ---- */

static const char *const part_names[] = {"transfers", "launch", "sweep", "ops", NULL};

static unsigned check_parts(lua_State *L, int opts) {
  if (lk_get_field(L, opts, "parts") == LUA_TNIL) {
    lua_pop(L, 1);
    return KT_PROBE_ALL;
  }
  if (!lua_istable(L, -1)) luaL_error(L, "kt.probe options.parts: expected a list of names");
  unsigned parts = 0;
  for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
    const char *s = lua_tostring(L, -1);
    int at = -1;
    for (int k = 0; s && part_names[k]; k++)
      if (strcmp(s, part_names[k]) == 0) at = k;
    if (at < 0)
      luaL_error(L, "kt.probe options.parts[%d]: expected \"transfers\", \"launch\", \"sweep\" or "
                    "\"ops\", got %s", (int)i, s ? s : luaL_typename(L, -1));
    parts |= 1u << at;
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
  if (!parts) luaL_error(L, "kt.probe options.parts: expected at least one name");
  return parts;
}

static uint64_t positive(lua_State *L, int opts, const char *field, uint64_t dflt, uint64_t most) {
  lua_Integer v = lk_opt_integer(L, opts, "kt.probe options", field, (lua_Integer)dflt);
  if (v < 1 || (uint64_t)v > most)
    luaL_error(L, "kt.probe options.%s: expected a whole number from 1 to %I, got %I", field,
               (lua_Integer)most, v);
  return (uint64_t)v;
}

/* Transfer sizes: a list in a userdata left on the stack. */
static void check_sizes(lua_State *L, int opts, bool quick, uint64_t max_alloc, kt_probe_opts *o) {
  uint64_t *sizes = lua_newuserdatauv(L, 32 * sizeof *sizes, 0);
  size_t n = 0;
  if (lk_get_field(L, opts, "sizes") == LUA_TNIL) {
    for (uint64_t s = 4; s <= (quick ? 4096u : 64u << 20) && s <= max_alloc; s *= quick ? 1024 : 16)
      sizes[n++] = s;
  } else {
    if (!lua_istable(L, -1)) luaL_error(L, "kt.probe options.sizes: expected a list of byte counts");
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++, n++) {
      lua_Integer v = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
      if (n == 32 || v < 1 || (uint64_t)v > max_alloc)
        luaL_error(L, "kt.probe options.sizes[%d]: expected at most 32 byte counts from 1 to %I",
                   (int)i, (lua_Integer)max_alloc);
      sizes[n] = (uint64_t)v;
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (n == 0) luaL_error(L, "kt.probe options.sizes: expected at least one byte count");
  }
  lua_pop(L, 1);
  o->sizes = sizes;
  o->nsizes = n;
}

static void check_groups(lua_State *L, int opts, uint64_t lo, uint64_t hi, kt_probe_opts *o) {
  int type = lk_get_field(L, opts, "groups");
  if (type != LUA_TNIL && type != LUA_TTABLE)
    luaL_error(L, "kt.probe options.groups: expected {lo, hi}, work-group sizes with 1 <= lo <= hi");
  if (type == LUA_TTABLE) {
    lua_rawgeti(L, -1, 1);
    lua_rawgeti(L, -2, 2);
    lo = lua_isinteger(L, -2) ? (uint64_t)lua_tointeger(L, -2) : 0;
    hi = lua_isinteger(L, -1) ? (uint64_t)lua_tointeger(L, -1) : 0;
    if (lo < 1 || hi < lo || hi > UINT32_MAX)
      luaL_error(L, "kt.probe options.groups: expected {lo, hi}, work-group sizes with 1 <= lo <= hi");
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  o->group_lo = (uint32_t)lo;
  o->group_hi = (uint32_t)hi;
}

static const char *const option_keys[] = {"rse", "min", "max", "sizes", "sweep_bytes", "groups",
                                          "iters", "parts", "quick", "db", "time_limit",
                                          NULL};

/* The options at opts (may be none); leaves a userdata (the sizes). */
static void check_options(lua_State *L, int opts, const kt_device_info *dev, kt_probe_opts *o) {
  bool has = !lua_isnoneornil(L, opts);
  if (has) {
    luaL_checktype(L, opts, LUA_TTABLE);
    lk_check_keys(L, opts, "kt.probe options", option_keys);
  } else {
    lua_newtable(L);
    lua_replace(L, opts);
  }
  bool quick = lk_opt_boolean(L, opts, "kt.probe options", "quick", 0);
  o->rse = lk_opt_number(L, opts, "kt.probe options", "rse", 0.02);
  if (!(o->rse > 0 && o->rse < 1))
    luaL_error(L, "kt.probe options.rse: expected a relative standard error between 0 and 1");
  o->min_reps = (uint32_t)positive(L, opts, "min", 5, 100000);
  o->max_reps = (uint32_t)positive(L, opts, "max", 100, 100000);
  if (o->min_reps < 2 || o->max_reps < o->min_reps)
    luaL_error(L, "kt.probe options: expected 2 <= min <= max repetitions, got min = %d, max = %d",
               (int)o->min_reps, (int)o->max_reps);
  uint64_t max_alloc = (uint64_t)kt_device_int(dev, "max_alloc", 1 << 26);
  bool cpu = strcmp(kt_device_string(dev, "type") ? kt_device_string(dev, "type") : "", "cpu") == 0;
  uint64_t sweep = quick ? 1 << 18 : cpu ? 1 << 24 : 1 << 26;
  o->sweep_bytes = positive(L, opts, "sweep_bytes", sweep < max_alloc ? sweep : max_alloc, max_alloc);
  o->sweep_bytes -= o->sweep_bytes % 4;
  if (o->sweep_bytes == 0) luaL_error(L, "kt.probe options.sweep_bytes: expected at least 4 bytes");
  uint64_t most = (uint64_t)kt_device_int(dev, "max_group_size", 256);
  check_groups(L, opts, quick ? 16 : cpu ? 8 : 1, quick ? 64 : most, o);
  o->op_iters = (uint32_t)positive(L, opts, "iters", quick ? 16 : 256, 1 << 20);
  o->op_items = quick ? 1024 : 0;
  o->time_limit = lk_opt_number(L, opts, "kt.probe options", "time_limit", 600);
  if (!(o->time_limit >= 0 && o->time_limit <= 86400))
    luaL_error(L, "kt.probe options.time_limit: expected seconds from 0 (none) to 86400");
  o->parts = check_parts(L, opts);
  check_sizes(L, opts, quick, max_alloc, o);
}

/* ---- the record ---- */

static void set_number(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

static void set_string(lua_State *L, const char *k, const char *v) {
  lua_pushstring(L, v ? v : "");
  lua_setfield(L, -2, k);
}

static void push_row(lua_State *L, const kt_probe_row *r) {
  lua_createtable(L, 0, 8);
  set_string(L, "kind", r->kind);
  set_string(L, "name", r->name);
  lua_pushinteger(L, (lua_Integer)r->size);
  lua_setfield(L, -2, "size");
  lua_pushinteger(L, r->reps);
  lua_setfield(L, -2, "reps");
  set_number(L, "mean_ns", r->mean_ns);
  set_number(L, "rse", r->rse);
  lua_pushboolean(L, r->capped);
  lua_setfield(L, -2, "capped");
  set_number(L, "value", r->value);
}

/* Pushes the record, summarised by ktlua.probe. */
static void push_record(lua_State *L, const kt_probe *p, const char *device, const char *backend,
                        const char *driver, const char *date) {
  lk_push_stdlib(L, "ktlua.probe", "record");
  lua_createtable(L, 0, 8);
  set_string(L, "device", device);
  set_string(L, "backend", backend);
  set_string(L, "driver", driver);
  set_string(L, "date", date);
  lua_createtable(L, (int)p->n, 0);
  for (size_t i = 0; i < p->n; i++) {
    push_row(L, &p->rows[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "rows");
  lua_newtable(L);
  for (const char *s = p->notes; s && *s;) {
    const char *end = strchr(s, '\n');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    lua_pushlstring(L, s, len);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    s += len + (end != NULL);
  }
  lua_setfield(L, -2, "notes");
  lua_call(L, 1, 1);
}

typedef struct held { kt_probe p; kt_device_info dev; kt_db_probe_meta meta; } held;

static int held_gc(lua_State *L) {
  held *h = lua_touserdata(L, 1);
  kt_probe_free(&h->p);
  kt_device_clear(&h->dev);
  kt_db_probe_meta_free(&h->meta);
  return 0;
}

static void now_date(char *buf, size_t size) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void store(lua_State *L, kt_db *db, const kt_probe *p, const char *device,
                  const char *backend, const char *driver, const char *date) {
  kt_db_probe_key key = {device, backend, driver, KTLUA_VERSION, date};
  kt_error err;
  if (kt_db_store_probe(db, &key, p, &err)) lk_error(L, &err);
}

/* kt.probe([device][, options]) */
static int l_probe(lua_State *L) {
  lua_settop(L, 2);
  held *h = lk_new_guarded(L, sizeof *h, held_gc); /* 3 */
  lk_check_device(L, 1, &h->dev);
  kt_probe_opts o;
  check_options(L, 2, &h->dev, &o); /* leaves the sizes at 4 */
  kt_db *db = NULL;
  if (lk_get_field(L, 2, "db") != LUA_TNIL) db = lk_check_db(L, lua_gettop(L));
  kt_error err;
  if (kt_probe_device(h->dev.id, &o, &h->p, &err)) return lk_error(L, &err);
  char date[32];
  now_date(date, sizeof date);
  const char *name = kt_device_string(&h->dev, "name"), *drv = kt_device_string(&h->dev, "driver_version");
  if (db) store(L, db, &h->p, name, h->dev.backend->name, drv, date);
  push_record(L, &h->p, name, h->dev.backend->name, drv, date);
  lua_pushstring(L, h->dev.id);
  lua_setfield(L, -2, "id");
  set_number(L, "rse_target", o.rse);
  lua_pushinteger(L, o.max_reps);
  lua_setfield(L, -2, "max_reps");
  return 1;
}

/* ---- the database ---- */

static kt_probe_row check_row(lua_State *L, int i) {
  kt_probe_row r = {0};
  const char *kind = lk_opt_string(L, -1, "probe.rows[i]", "kind", NULL);
  const char *name = lk_opt_string(L, -1, "probe.rows[i]", "name", NULL);
  if (!kind || !name) luaL_error(L, "db:store_probe: rows[%d] has no kind or name", i);
  snprintf(r.kind, sizeof r.kind, "%s", kind);
  snprintf(r.name, sizeof r.name, "%s", name);
  r.size = (uint64_t)lk_opt_integer(L, -1, "probe.rows[i]", "size", 0);
  r.reps = (uint32_t)lk_opt_integer(L, -1, "probe.rows[i]", "reps", 0);
  r.mean_ns = lk_opt_number(L, -1, "probe.rows[i]", "mean_ns", NAN);
  r.rse = lk_opt_number(L, -1, "probe.rows[i]", "rse", NAN);
  r.capped = lk_opt_boolean(L, -1, "probe.rows[i]", "capped", 0);
  r.value = lk_opt_number(L, -1, "probe.rows[i]", "value", NAN);
  return r;
}

/* db:store_probe(record) */
static int db_store_probe(lua_State *L) {
  kt_db *db = lk_check_db(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  held *h = lk_new_guarded(L, sizeof *h, held_gc);
  const char *device = lk_opt_string(L, 2, "probe", "device", NULL);
  const char *backend = lk_opt_string(L, 2, "probe", "backend", NULL);
  if (!device || !backend) luaL_error(L, "db:store_probe: the record names no device or backend");
  if (lk_get_field(L, 2, "rows") != LUA_TTABLE) luaL_error(L, "db:store_probe: the record has no rows");
  kt_error err;
  for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TTABLE; i++) {
    kt_probe_row r = check_row(L, (int)i);
    if (kt_probe_add(&h->p, &r, &err)) return lk_error(L, &err);
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
  if (lk_get_field(L, 2, "notes") == LUA_TTABLE) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TSTRING; i++, lua_pop(L, 1))
      if (kt_probe_note(&h->p, lua_tostring(L, -1), &err)) return lk_error(L, &err);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  store(L, db, &h->p, device, backend, lk_opt_string(L, 2, "probe", "driver", ""),
        lk_opt_string(L, 2, "probe", "date", ""));
  return 0;
}

/* db:probe(device[, backend]): device is a name, a device table or what
** kt.device takes. */
static int db_probe(lua_State *L) {
  kt_db *db = lk_check_db(L, 1);
  lua_settop(L, 3);
  held *h = lk_new_guarded(L, sizeof *h, held_gc); /* 4 */
  const char *name, *backend = luaL_optstring(L, 3, NULL);
  if (lua_type(L, 2) == LUA_TTABLE && lua_getfield(L, 2, "name") == LUA_TSTRING) {
    lua_getfield(L, 2, "backend");
    name = lua_tostring(L, -2);
    if (!backend) backend = lua_tostring(L, -1);
  } else {
    name = luaL_checkstring(L, 2);
  }
  if (!backend) luaL_argerror(L, 3, "expected the backend (\"opencl\" or \"cuda\") with a device name");
  kt_error err;
  int found = kt_db_read_probe(db, name, backend, &h->p, &h->meta, &err);
  if (found < 0) return lk_error(L, &err);
  if (!found) {
    lua_pushnil(L);
    lua_pushfstring(L, "no probe of %s (%s) in %s", name, backend, kt_db_path(db));
    return 2;
  }
  push_record(L, &h->p, name, backend, h->meta.driver, h->meta.date);
  return 1;
}

/* ---- the kernel's sizes under a configuration ---- */

static void push_sizes3(lua_State *L, int dims, const size_t *v, const char *key) {
  lua_createtable(L, dims, 0);
  for (int d = 0; d < dims; d++) {
    lua_pushinteger(L, (lua_Integer)v[d]);
    lua_rawseti(L, -2, d + 1);
  }
  lua_setfield(L, -2, key);
}

/* k:sizes(cfg): per kernel {global =, group =, items =} (the first's also
** at the top), as a configuration would launch them. */
static int task_sizes(lua_State *L) {
  lk_task *ut = lk_check_task(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  kt_space *space = ut->task->space;
  uint32_t *vi = lua_newuserdatauv(L, (kt_space_nparams(space) + 1) * sizeof *vi, 0);
  lk_check_config(L, 2, space, vi);
  kt_config cfg = {space, 0, vi};
  lua_createtable(L, (int)ut->task->nkernels, 3);
  for (size_t k = 0; k < ut->task->nkernels; k++) {
    kt_sizes s;
    kt_error err;
    if (kt_task_sizes(ut->task, k, &cfg, &s, &err)) return lk_error(L, &err);
    lua_createtable(L, 0, 3);
    push_sizes3(L, s.dims, s.global, "global");
    push_sizes3(L, s.dims, s.local, "group");
    push_sizes3(L, s.dims, s.items, "items");
    if (k == 0)
      for (const char *const *f = (const char *const[]){"global", "group", "items", NULL}; *f; f++) {
        lua_getfield(L, -1, *f);
        lua_setfield(L, -3, *f);
      }
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  return 1;
}

/* Methods written in ktlua.cost, called through it. */
static int cost_method(lua_State *L) {
  lk_check_task(L, 1);
  lk_push_stdlib(L, "ktlua.cost", lua_tostring(L, lua_upvalueindex(1)));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

static void add_methods(lua_State *L, const char *cls, const char *where, const luaL_Reg *fns) {
  luaL_getmetatable(L, cls);
  lua_getfield(L, -1, where);
  luaL_setfuncs(L, fns, 0);
  lua_pop(L, 2);
}

void lk_open_probe(lua_State *L) {
  static const luaL_Reg fns[] = {{"probe", l_probe}, {NULL, NULL}};
  static const luaL_Reg db_methods[] = {{"store_probe", db_store_probe}, {"probe", db_probe},
                                        {NULL, NULL}};
  static const luaL_Reg task_methods[] = {{"sizes", task_sizes}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  add_methods(L, LK_DB, "__index", db_methods);
  add_methods(L, LK_TASK, "methods", task_methods);
  luaL_getmetatable(L, LK_TASK);
  lua_getfield(L, -1, "methods");
  static const char *const cost_methods[][2] = {
      {"cost", "cost"}, {"predict", "predict_config"}, {"predicted", "predicted"},
      {"model_error", "error"}};
  for (size_t i = 0; i < sizeof cost_methods / sizeof *cost_methods; i++) {
    lua_pushstring(L, cost_methods[i][1]);
    lua_pushcclosure(L, cost_method, 1);
    lua_setfield(L, -2, cost_methods[i][0]);
  }
  lua_pop(L, 2);
}
