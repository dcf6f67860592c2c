/*
** lk_db.c: the tuned-configuration database as a Lua object (core/db/db.h).
**
**   local db = kt.db(path[, {timeout = 10, readonly = false}])
**   db:store(results[, {size = {n = 4096, m = 512}, top = 3, kernel =, device =,
**            backend =, origin =}]) (size: else the file's problem_size, {x =, y =, z =})
**   db:best{kernel = k | "name", device = tuner | device | "name", size = {...},
**           backend =, objective = "kernel", stale = false, nearest = false}
**     -> entry (entry.match is "exact", "nearest" or, with nearest, "alike":
**        ktlua.transfer), or nil and why
**   db:recheck{...} -> report (ktlua.db_recheck), and why where it is empty
** (db:devices, db:touch and what a tuning stores of its device: lk_db_devices.c)
**   db:list{kernel =, device =, backend =, objective =, size =} -> entries
**     (an entry's metrics: {name = value}, where its configuration had some)
**   db:export("header" | "json" | "lua") -> text (ktlua.db_export)
**   db:close()
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/db/db.h"
#include "../core/results/journal_id.h"
#include "../core/base/json.h"
#include "../core/base/json_read.h"
#include "../core/results/metrics.h"
#include "../core/search/neighbors.h"
#include "lk.h"

typedef struct lk_db {
  kt_db *db;
  unsigned holds; /* online tunings that store their best here when their search ends */
} lk_db;

static kt_db *check_db(lua_State *L, int idx) {
  lk_db *u = luaL_checkudata(L, idx, LK_DB);
  if (!u->db) luaL_argerror(L, idx, "the database has been closed");
  return u->db;
}

/* ---- sizes ---- */

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A name given for a stored one (stored names are C strings): refused where
** it holds a NUL byte, which would cut it short. */
const char *lk_db_check_name(lua_State *L, int idx, const char *what) {
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  if (s && strlen(s) != len) luaL_error(L, "%s: a name holds a NUL byte (after '%s')", what, s);
  return s;
}

/* Writes a size's number: whole numbers below 9e15 as integers, so that
** {n = 4096.0} is the key of {n = 4096}, others as JSON reads them back. */
void lk_db_write_number(FILE *f, lua_State *L, int idx) {
  if (lua_isinteger(L, idx)) {
    fprintf(f, LUA_INTEGER_FMT, (LUAI_UACINT)lua_tointeger(L, idx));
    return;
  }
  double v = lua_tonumber(L, idx);
  if (v == floor(v) && v < 9e15) fprintf(f, "%.0f", v);
  else kt_json_number(f, v);
}

/* A size table {n = 4096, m = 512} as canonical JSON text ({"m":512,"n":4096}),
** pushed; what names the table in errors. */
const char *lk_db_push_size(lua_State *L, int idx, const char *what) {
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx))
    luaL_error(L, "%s: expected a table of named positive numbers ({n = 4096}), got %s", what,
               luaL_typename(L, idx));
  size_t n = 0;
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TNUMBER || lua_tonumber(L, -1) <= 0
        || !isfinite(lua_tonumber(L, -1))) {
      const char *key = luaL_tolstring(L, -2, NULL), *value = luaL_tolstring(L, -2, NULL);
      luaL_error(L, "%s: expected a table of named positive numbers ({n = 4096}); %s = %s is not one",
                 what, key, value);
    }
    lk_db_check_name(L, -2, what);
    n++;
  }
  if (n == 0) luaL_error(L, "%s: expected a table of named positive numbers ({n = 4096}), got {}", what);
  const char **names = lua_newuserdatauv(L, n * sizeof *names, 0);
  size_t i = 0;
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) names[i++] = lua_tostring(L, -2);
  qsort(names, n, sizeof *names, by_name);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) luaL_error(L, "out of memory");
  for (i = 0; i < n; i++) {
    fputs(i ? "," : "{", f);
    kt_json_string(f, names[i]);
    fputc(':', f);
    lua_pushstring(L, names[i]);
    lua_rawget(L, idx);
    lk_db_write_number(f, L, -1);
    lua_pop(L, 1);
  }
  fputc('}', f);
  fclose(f);
  lua_pop(L, 1); /* the names */
  lua_pushlstring(L, text, len);
  free(text);
  return lua_tostring(L, -1);
}

/* Pushes stored JSON text (a size or a configuration: an object of numbers,
** strings and booleans) as a Lua table; false (nothing pushed) when it is
** none, with why. */
bool lk_db_push_json(lua_State *L, const char *text, char *why, size_t size) {
  kt_error err;
  kt_jdoc *doc = kt_json_parse(text, strlen(text), &err);
  const kt_jvalue *o = doc ? kt_json_root(doc) : NULL;
  if (!o || o->type != KT_JOBJECT) snprintf(why, size, "%.200s", doc ? "not an object" : err.msg);
  else lua_createtable(L, 0, (int)o->n);
  for (size_t i = 0; o && o->type == KT_JOBJECT && i < o->n; i++) {
    const kt_jvalue *v = &o->u.members[i].value;
    if (v->type == KT_JNUMBER && v->integer) lua_pushinteger(L, v->u.num.i);
    else if (v->type == KT_JNUMBER) lua_pushnumber(L, v->u.num.f);
    else if (v->type == KT_JSTRING) lua_pushlstring(L, v->u.str, v->n);
    else if (v->type == KT_JBOOL) lua_pushboolean(L, v->u.b);
    else {
      char shown[128];
      snprintf(why, size, "%s is no number, string or boolean",
               kt_quote(o->u.members[i].key, o->u.members[i].keylen, shown, sizeof shown));
      lua_pop(L, 1);
      o = NULL;
      break;
    }
    lua_pushlstring(L, o->u.members[i].key, o->u.members[i].keylen); /* "a\u0000b" whole */
    lua_insert(L, -2);
    lua_rawset(L, -3);
  }
  bool ok = o && o->type == KT_JOBJECT;
  kt_json_free(doc);
  return ok;
}

/* Pushes a row as a table; false (nothing pushed) with why when its size
** or configuration is no JSON object. */
static bool push_row(lua_State *L, const kt_db_row *r, char *why, size_t size) {
  const char *keys[] = {"kernel", "device", "backend", "objective", "source", "options",
                        "driver", "version", "date", "compiler", "origin"};
  const char *values[] = {r->kernel, r->device, r->backend, r->objective, r->source, r->options,
                          r->driver, r->version, r->date, r->compiler, r->origin};
  const char *json[] = {r->size, r->config}, *json_keys[] = {"size", "config"};
  lua_createtable(L, 0, 16);
  for (int i = 0; i < 11; i++) {
    lua_pushstring(L, values[i]);
    lua_setfield(L, -2, keys[i]);
  }
  for (int i = 0; i < 2; i++) {
    char bad[256], shown[256];
    if (!lk_db_push_json(L, json[i], bad, sizeof bad)) {
      snprintf(why, size, "the %s stored for %s on %s (rank %lld) is no JSON object: %s: %s",
               i ? "configuration" : "size", r->kernel, r->device, (long long)r->rank, bad,
               kt_quote(json[i], strlen(json[i]), shown, sizeof shown));
      lua_pop(L, 1);
      return false;
    }
    lua_setfield(L, -2, json_keys[i]);
  }
  lua_pushinteger(L, (lua_Integer)r->rank);
  lua_setfield(L, -2, "rank");
  lua_pushnumber(L, r->time_ms);
  lua_setfield(L, -2, "time_ms");
  if (r->nmetrics) { /* as a result's: absent when none */
    lua_createtable(L, 0, (int)r->nmetrics);
    for (size_t i = 0; i < r->nmetrics; i++) {
      lua_pushnumber(L, r->metrics[i].value);
      lua_setfield(L, -2, r->metrics[i].name);
    }
    lua_setfield(L, -2, "metrics");
  }
  return true;
}

/* Frees rows and raises why, after the database's path. */
static _Noreturn void bad_row(lua_State *L, kt_db *db, kt_db_row *rows, size_t n, const char *why) {
  lua_pushfstring(L, "%s: %s", kt_db_path(db), why);
  kt_db_rows_free(rows, n);
  lua_error(L);
  abort(); /* not reached */
}

/* ---- storing ---- */

/* The configuration of x as JSON text (pushed). */
static const char *push_config_json(lua_State *L, const kt_results *r, const kt_result *x) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) luaL_error(L, "out of memory");
  fputc('{', f);
  for (size_t p = 0; p < r->nparams; p++) {
    fputs(p ? "," : "", f);
    kt_json_string(f, r->params[p].name);
    fputc(':', f);
    kt_json_value(f, &r->params[p].values[x->vi[p]]);
  }
  fputc('}', f);
  fclose(f);
  lua_pushlstring(L, text, len);
  free(text);
  return lua_tostring(L, -1);
}

/* By the objective (the time, or a metric minimised or maximised: the
** cost results:best() goes by), ties in the results' order, as
** results:best() breaks them (all point into one array). */
static int by_cost(const void *a, const void *b) {
  const kt_result *x = *(const kt_result *const *)a, *y = *(const kt_result *const *)b;
  double cx = kt_result_cost(x), cy = kt_result_cost(y);
  if (cx != cy) return (cx > cy) - (cx < cy);
  return (x > y) - (x < y);
}

/* The ok results that have a value of the objective and were not cut
** short (never the best), best first (a userdata pushed). */
static const kt_result **push_ranked(lua_State *L, const kt_results *r, size_t *n) {
  const kt_result **ok = lua_newuserdatauv(L, (r->n ? r->n : 1) * sizeof *ok, 0);
  *n = 0;
  for (size_t i = 0; i < r->n; i++)
    if (r->items[i].status == KT_OK && !r->items[i].cut_short &&
        kt_result_cost(&r->items[i]) < INFINITY)
      ok[(*n)++] = &r->items[i];
  qsort(ok, *n, sizeof *ok, by_cost);
  return ok;
}

/* x's metrics as the database keeps them (a userdata pushed; the names
** are x's). */
static kt_db_metric *push_metrics(lua_State *L, const kt_result *x) {
  kt_db_metric *m = lua_newuserdatauv(L, (x->nmetrics ? x->nmetrics : 1) * sizeof *m, 0);
  for (size_t i = 0; i < x->nmetrics; i++)
    m[i] = (kt_db_metric){x->metrics[i].name, x->metrics[i].value};
  return m;
}

void lk_db_today(char *buf, size_t size) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Stores the top configurations of r under the size table at size_idx;
** x names what r does not say (a peer's recording) and what it cannot. */
void lk_db_store(lua_State *L, kt_db *db, const kt_results *r, int size_idx, lua_Integer top,
                 const lk_db_extra *x) {
  const char *kernel = x->kernel ? x->kernel : r->task, *device = x->device ? x->device : r->device;
  const char *backend = x->backend ? x->backend : r->backend;
  if (!backend || !device || !kernel)
    luaL_error(L, "db:store: the results do not say %s they are of (a recording of another "
                  "tuner's: name it, db:store(results, {size = ..., %s}))",
               !backend ? "on what backend" : !device ? "what device" : "what kernel",
               !backend ? "backend = \"cuda\" or \"opencl\"" : !device
                        ? "device = \"NVIDIA GeForce RTX 3090\"" : "kernel = \"name\"");
  const char *size = lk_db_push_size(L, size_idx, "db:store: size");
  size_t n;
  const kt_result **ranked = push_ranked(L, r, &n);
  if (n == 0)
    luaL_error(L, "db:store: no configuration of %s came out ok%s: nothing to store", r->task,
               kt_objective_is_time(r->objective) ? "" : " with a value of the objective");
  if ((lua_Integer)n > top) n = (size_t)top;
  kt_db_row *rows = lua_newuserdatauv(L, n * sizeof *rows, 0);
  char date[32];
  lk_db_today(date, sizeof date);
  for (size_t i = 0; i < n; i++) {
    rows[i] = (kt_db_row){.kernel = (char *)kernel, .device = (char *)device,
                          .backend = (char *)backend, .size = (char *)size,
                          .objective = r->objective ? r->objective : "kernel",
                          .source = r->source ? r->source : "",
                          .options = r->options ? r->options : "",
                          .driver = r->driver ? r->driver : "", .version = KTLUA_VERSION,
                          .date = date, .compiler = (char *)(x->compiler ? x->compiler : ""),
                          .origin = (char *)(x->origin ? x->origin : ""), .rank = (int64_t)i + 1,
                          .config = (char *)push_config_json(L, r, ranked[i]),
                          .time_ms = ranked[i]->time_ns / 1e6,
                          .metrics = push_metrics(L, ranked[i]), .nmetrics = ranked[i]->nmetrics};
  }
  kt_error err;
  if (kt_db_store(db, rows, n, &err)) lk_error(L, &err);
}

static int db_store(lua_State *L) {
  static const char *const keys[] = {"size", "top", "kernel", "device", "backend", "origin", NULL};
  kt_db *db = check_db(L, 1);
  kt_results *r = ((lk_results *)luaL_checkudata(L, 2, LK_RESULTS))->r;
  if (lua_isnoneornil(L, 3)) lua_settop(L, 2), lua_newtable(L); /* all from the results */
  luaL_checktype(L, 3, LUA_TTABLE);
  lk_check_keys(L, 3, "db:store options", keys);
  lua_Integer top = lk_opt_integer(L, 3, "db:store options", "top", 3);
  if (top < 1) luaL_error(L, "db:store options.top: expected a positive number of configurations");
  lk_db_extra x = {0};
  const char **names[] = {&x.kernel, &x.device, &x.backend, &x.origin};
  const char *fields[] = {"kernel", "device", "backend", "origin"};
  for (int i = 0; i < 4; i++) {
    const char *what = lua_pushfstring(L, "db:store options.%s", fields[i]);
    if (lk_opt_string(L, 3, "db:store options", fields[i], NULL)) {
      lk_get_field(L, 3, fields[i]);
      *names[i] = lk_db_check_name(L, -1, what);
    }
  }
  if (lua_getfield(L, 3, "size") == LUA_TNIL) { /* the file's problem size, as {x =, y =, z =} */
    if (!r->nproblem)
      luaL_error(L, "db:store options.size: the results do not say their problem size (a Kernel Tuner "
                    "cache's problem_size): give it, size = {n = 4096}");
    static const char *const axes[] = {"x", "y", "z"};
    lua_createtable(L, 0, (int)r->nproblem);
    for (size_t i = 0; i < r->nproblem; i++)
      lua_pushinteger(L, (lua_Integer)r->problem_size[i]), lua_setfield(L, -2, axes[i]);
  }
  lk_db_store(L, db, r, lua_gettop(L), top, &x);
  lua_settop(L, 1);
  return 1;
}

/* The compiler of a device table at idx: NVRTC's version (c_version) for
** CUDA, the platform's name and version for OpenCL; pushed. */
const char *lk_device_compiler(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_getfield(L, idx, "backend");
  bool cuda = lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "cuda") == 0;
  lua_pop(L, 1);
  if (cuda) {
    lua_getfield(L, idx, "c_version");
    if (!lua_isstring(L, -1)) lua_pop(L, 1), lua_pushliteral(L, "");
    return lua_tostring(L, -1);
  }
  lua_getfield(L, idx, "platform");
  lua_getfield(L, idx, "platform_version");
  const char *p = lua_isstring(L, -2) ? lua_tostring(L, -2) : "";
  const char *v = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
  lua_pushfstring(L, "%s%s%s", p, *p && *v ? " " : "", v);
  lua_replace(L, -3);
  lua_pop(L, 1);
  return lua_tostring(L, -1);
}

/* ---- finding ---- */

typedef struct query {
  kt_db_filter f;
  const char *source, *options; /* of the kernel object given, if one was */
  const char *driver, *compiler; /* of the device given as a tuner or table, if known */
  int size_idx;                 /* the size table's canonical text, or 0 */
} query;

/* device = tuner | device table | "name": its name and (not for a name)
** its backend. */
static void check_device_field(lua_State *L, int opts, query *q) {
  int t = lk_get_field(L, opts, "device");
  kt_tuner *tuner = lk_test_tuner(L, -1);
  if (tuner) {
    q->f.device = kt_device_string(kt_tuner_device(tuner), "name");
    q->f.backend = kt_tuner_device(tuner)->backend->name;
    q->driver = kt_device_string(kt_tuner_device(tuner), "driver_version");
    lua_getfield(L, -1, "device");
    q->compiler = lk_device_compiler(L, -1);
  } else if (t == LUA_TTABLE) {
    int dev = lua_gettop(L);
    lua_getfield(L, dev, "name");
    lua_getfield(L, dev, "backend");
    if (!lua_isstring(L, -2) || !lua_isstring(L, -1))
      luaL_error(L, "db options.device: expected a tuner, a device table or a device name");
    q->f.device = lk_db_check_name(L, -2, "db options.device.name");
    q->f.backend = lk_db_check_name(L, -1, "db options.device.backend");
    if (lua_getfield(L, dev, "driver_version") == LUA_TSTRING) q->driver = lua_tostring(L, -1);
    if (q->driver) q->compiler = lk_device_compiler(L, dev);
  } else if (t == LUA_TSTRING) {
    q->f.device = lk_db_check_name(L, -1, "db options.device");
  } else if (t != LUA_TNIL) {
    luaL_error(L, "db options.device: expected a tuner, a device table or a device name, got %s",
               luaL_typename(L, -1));
  }
}

/* kernel = a kernel (or composition) object, whose code is compared with
** the stored one's, or its name. */
static void check_kernel_field(lua_State *L, int opts, query *q) {
  int t = lk_get_field(L, opts, "kernel");
  if (t == LUA_TSTRING) {
    q->f.kernel = lk_db_check_name(L, -1, "db options.kernel");
  } else if (t == LUA_TUSERDATA && luaL_testudata(L, -1, LK_TASK)) {
    kt_task *task = lk_check_task(L, lua_gettop(L))->task;
    const char **ids[] = {&q->source, &q->options};
    int fields[] = {KT_ID_SOURCE, KT_ID_OPTIONS};
    q->f.kernel = task->name;
    for (int i = 0; i < 2; i++) {
      char *text = kt_journal_id_text(task, fields[i]);
      if (!text) luaL_error(L, "out of memory");
      *ids[i] = lua_pushstring(L, text);
      free(text);
    }
  } else if (t != LUA_TNIL) {
    luaL_error(L, "db options.kernel: expected a kernel or a kernel's name, got %s",
               luaL_typename(L, -1));
  }
}

/* The string field of opts (left on the stack), or NULL. */
static const char *opt_name(lua_State *L, int opts, const char *field) {
  if (!lk_opt_string(L, opts, "db options", field, NULL)) return NULL;
  const char *what = lua_pushfstring(L, "db options.%s", field);
  lk_get_field(L, opts, field);
  return lk_db_check_name(L, -1, what);
}

static void check_query(lua_State *L, int opts, query *q) {
  static const char *const keys[] = {"kernel", "device", "backend", "objective", "size",
                                     "stale", "nearest", NULL};
  memset(q, 0, sizeof *q);
  if (lua_isnoneornil(L, opts)) return;
  luaL_checktype(L, opts, LUA_TTABLE);
  lk_check_keys(L, opts, "db options", keys);
  check_kernel_field(L, opts, q);
  check_device_field(L, opts, q);
  const char *backend = opt_name(L, opts, "backend");
  if (backend) q->f.backend = backend;
  q->f.objective = opt_name(L, opts, "objective");
  if (lk_get_field(L, opts, "size") != LUA_TNIL) {
    lk_db_push_size(L, -1, "db options.size");
    q->size_idx = lua_gettop(L);
  }
}

static int db_list(lua_State *L) {
  kt_db *db = check_db(L, 1);
  query q;
  check_query(L, 2, &q);
  if (q.size_idx) q.f.size = lua_tostring(L, q.size_idx);
  kt_db_row *rows;
  size_t n;
  kt_error err;
  if (kt_db_query(db, &q.f, &rows, &n, &err)) return lk_error(L, &err);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    char why[1024];
    if (!push_row(L, &rows[i], why, sizeof why)) bad_row(L, db, rows, n, why);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  kt_db_rows_free(rows, n);
  return 1;
}

/* Why the row found does not fit the kernel given, or NULL. */
static const char *stale(lua_State *L, const query *q, const kt_db_row *r) {
  if (q->source && strcmp(q->source, r->source) != 0)
    return lua_pushfstring(L, "stale: %s on %s was tuned for another source (%s, now %s)",
                           r->kernel, r->device, r->source, q->source);
  if (q->options && strcmp(q->options, r->options) != 0)
    return lua_pushfstring(L, "stale: %s on %s was tuned with other compiler options ('%s', now "
                           "'%s')", r->kernel, r->device, r->options, q->options);
  /* Of the same device: a driver or compiler since upgraded (unknown: ""). */
  bool same = strcmp(q->f.device, r->device) == 0 && strcmp(q->f.backend ? q->f.backend : "",
                                                            r->backend) == 0;
  if (same && q->driver && *q->driver && *r->driver && strcmp(q->driver, r->driver) != 0)
    return lua_pushfstring(L, "stale: %s on %s was tuned with the driver %s (now %s)", r->kernel,
                           r->device, r->driver, q->driver);
  if (same && q->compiler && *q->compiler && *r->compiler && strcmp(q->compiler, r->compiler) != 0)
    return lua_pushfstring(L, "stale: %s on %s was tuned with the compiler %s (now %s)",
                           r->kernel, r->device, r->compiler, q->compiler);
  return NULL;
}

/* The row found, or nil and why it is stale; -1 with why in bad when the
** row is no row. */
static int found(lua_State *L, const query *q, const kt_db_row *r, double distance, int accept,
                 char *bad, size_t size) {
  const char *why = stale(L, q, r);
  if (why && !accept) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  if (!push_row(L, r, bad, size)) return -1;
  lua_pushstring(L, distance == 0 ? "exact" : "nearest");
  lua_setfield(L, -2, "match");
  lua_pushnumber(L, distance);
  lua_setfield(L, -2, "distance");
  lua_pushboolean(L, why != NULL);
  lua_setfield(L, -2, "stale");
  return 1;
}

static int db_best(lua_State *L) {
  kt_db *db = check_db(L, 1);
  query q;
  luaL_checktype(L, 2, LUA_TTABLE);
  check_query(L, 2, &q);
  int accept = lk_opt_boolean(L, 2, "db options", "stale", 0);
  int nearest = lk_opt_boolean(L, 2, "db options", "nearest", 0);
  if (!q.f.kernel || !q.f.device || !q.size_idx)
    luaL_error(L, "db:best: expected kernel, device and size");
  if (!q.f.objective) q.f.objective = "kernel";
  q.f.best_only = true;
  kt_db_row *rows;
  size_t n;
  kt_error err;
  if (kt_db_query(db, &q.f, &rows, &n, &err)) return lk_error(L, &err);
  double distance = 0;
  long at = kt_db_nearest(rows, n, lua_tostring(L, q.size_idx), &distance, &err);
  if (at == -2) bad_row(L, db, rows, n, err.msg);
  int results;
  char bad[1024];
  if (at >= 0) {
    results = found(L, &q, &rows[at], distance, accept, bad, sizeof bad);
    if (results < 0) bad_row(L, db, rows, n, bad);
  } else if (n == 0 && nearest) { /* another device's, the most alike (ktlua.transfer) */
    kt_db_rows_free(rows, n);
    lk_push_stdlib(L, "ktlua.transfer", "nearest_best");
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 2);
    return 2;
  } else {
    lua_pushnil(L);
    lua_pushfstring(L, "no configuration of %s on %s is stored%s", q.f.kernel, q.f.device,
                    n ? " for a size of these names" : "");
    results = 2;
  }
  kt_db_rows_free(rows, n);
  return results;
}

/* db:export(format): ktlua.db_export's writer of that format. */
static int db_export(lua_State *L) {
  check_db(L, 1);
  const char *format = luaL_optstring(L, 2, "header");
  if (strcmp(format, "main") == 0 || lk_push_stdlib(L, "ktlua.db_export", format) != LUA_TFUNCTION)
    return luaL_argerror(L, 2, lua_pushfstring(L, "unknown format '%s' (header, json or lua)",
                                               format));
  lua_pushcfunction(L, db_list);
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  lua_call(L, 1, 1);
  return 1;
}

/* db:recheck{...}: ktlua.db_recheck's (a stored best timed again). */
static int db_recheck(lua_State *L) {
  check_db(L, 1);
  lua_settop(L, 2);
  lk_push_stdlib(L, "ktlua.db_recheck", "recheck");
  lua_insert(L, 1);
  lua_call(L, 2, 2);
  return 2;
}

/* (A collection finalizes the online tunings that hold it first: they
** were made after it.) */
static int db_close(lua_State *L) {
  lk_db *u = luaL_checkudata(L, 1, LK_DB);
  if (u->holds)
    luaL_argerror(L, 1, "the database is in use by an online tuning (tuner:online), which stores "
                        "its best there when its search ends: close it after on:close()");
  kt_db_close(u->db);
  u->db = NULL;
  return 0;
}

static int db_tostring(lua_State *L) {
  lk_db *u = luaL_checkudata(L, 1, LK_DB);
  const char *readonly = u->db ? kt_db_readonly(u->db) : NULL;
  lua_pushfstring(L, "tuned-configuration database %s%s%s%s", u->db ? kt_db_path(u->db) : "(closed)",
                  readonly ? " (read-only: " : "", readonly ? readonly : "", readonly ? ")" : "");
  return 1;
}

/* kt.db(path[, {timeout = seconds, readonly = false}]) */
static int l_db(lua_State *L) {
  static const char *const keys[] = {"timeout", "readonly", NULL};
  size_t len;
  const char *path = luaL_checklstring(L, 1, &len);
  if (strlen(path) != len) luaL_argerror(L, 1, "the path holds a NUL byte");
  double timeout = 10;
  int readonly = 0;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lk_check_keys(L, 2, "kt.db options", keys);
    timeout = lk_opt_number(L, 2, "kt.db options", "timeout", 10);
    if (!(timeout >= 0 && timeout <= 86400))
      luaL_error(L, "kt.db options.timeout: expected seconds from 0 to 86400");
    readonly = lk_opt_boolean(L, 2, "kt.db options", "readonly", 0);
  }
  lk_db *u = lua_newuserdatauv(L, sizeof *u, 0);
  *u = (lk_db){NULL, 0};
  luaL_setmetatable(L, LK_DB);
  kt_error err;
  if (!(u->db = kt_db_open(path, (int)(timeout * 1000), readonly, &err))) return lk_error(L, &err);
  return 1;
}

kt_db *lk_check_db(lua_State *L, int idx) { return check_db(L, idx); }

void lk_db_hold(lua_State *L, int idx, bool hold) {
  lk_db *u = luaL_checkudata(L, idx, LK_DB);
  if (hold) u->holds++;
  else u->holds--;
}

kt_db *lk_check_db_named(lua_State *L, int idx, const char *what) {
  lk_db *u = luaL_testudata(L, idx, LK_DB);
  if (!u) luaL_error(L, "%s: expected a database (kt.db), got %s", what, luaL_typename(L, idx));
  if (!u->db) luaL_error(L, "%s: the database has been closed", what);
  return u->db;
}

void lk_open_db(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", db_close}, {"__close", db_close},
                                  {"__tostring", db_tostring}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"store", db_store},     {"best", db_best},
                                     {"list", db_list},       {"recheck", db_recheck},
                                     {"export", db_export},   {"close", db_close},
                                     {NULL, NULL}};
  static const luaL_Reg fns[] = {{"db", l_db}, {NULL, NULL}};
  lk_new_class(L, LK_DB, meta, methods);
  luaL_setfuncs(L, fns, 0);
}
