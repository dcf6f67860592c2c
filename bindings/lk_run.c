/*
** lk_run.c: launchers. k:launcher(function(run, cfg) ... end) makes ktlua
** call the function for every execution of a configuration instead of
** launching each kernel once. The run object is valid during that call:
**   run:launch(k[, {global =, group =, queue =}])  asynchronous launch
**   run:sync([queue])                              wait for a queue (all)
**   run:read(a[, into][, {count =, queue =}])      device -> Lua array
**   run:write(a[, from][, {queue =}])              Lua array -> device
**   run:read/run:write with {async = true}: queued without waiting
**   run:event([queue]), run:wait(event, queue)      ordering between queues
**   run:copy(dst, src[, count][, {queue =}]), run:clear(a[, {queue =}])
**   run:resize(a, n), run:length(a)
**   run:update(scalar, value), run:localmem(arg, count)
**   run:swap(k, a, b), run:args(k, {...})
**   run.config, run.global[k], run.group[k]  the configuration's sizes
** Everything a launcher changes is undone before the next execution.
** Kernel time is the sum of the launches' device times; the launcher's own
** host time (less its waits for the device) is recorded apart, and joins
** the objective with the tune option objective = "kernel+host".
*/
#include <stdio.h>
#include <string.h>

#include "lk.h"
#include "../core/eval/run.h"

#define LK_RUN "ktlua.run"
#define LK_RUN_EVENT "ktlua.run_event"
#define LK_RUN_SIZES "ktlua.run_sizes"

typedef struct lk_run {
  kt_run *run; /* NULL once the launcher has returned */
} lk_run;

/* An event of one call of a launcher; its user value keeps that call's
** run object, so that no other call's can take its address. */
typedef struct lk_run_event {
  const lk_run *owner;
  size_t index;
  int queue;
} lk_run_event;

static kt_run *check_run(lua_State *L) {
  lk_run *ur = luaL_checkudata(L, 1, LK_RUN);
  if (!ur->run) luaL_error(L, "this run is over: use the run object only inside its launcher");
  return ur->run;
}

static int run_error(lua_State *L, const kt_error *err) { return lk_error(L, err); }

/* The index of a kernel object in the running task. */
static size_t check_kernel(lua_State *L, kt_run *run, int idx) {
  lk_task *k = lk_test_object(L, idx, LK_TASK);
  int ki = k && k->kernel ? kt_task_kernel_index(run->task, k->kernel) : -1;
  if (ki < 0) luaL_argerror(L, idx, "expected a kernel of the task being tuned");
  return (size_t)ki;
}

static kt_array *check_buffer(lua_State *L, int idx) {
  kt_array *a = lk_test_array(L, idx);
  lk_arg *ua = lk_test_object(L, idx, LK_ARG);
  if (!a && ua && ua->a->kind == KT_ARG_VECTOR) a = ua->a->array;
  if (!a) luaL_typeerror(L, idx, "array or vector argument");
  return a;
}

static int opt_queue(lua_State *L, int idx, const char *what) {
  lua_Integer q = lk_opt_integer(L, idx, what, "queue", 0);
  if (q < 0) luaL_error(L, "%s.queue must not be negative", what);
  return (int)q;
}

/* {global = ..., group = ...}: sizes in the kernel's own notation; what is
** not given comes from the configuration. */
static bool check_sizes(lua_State *L, int idx, kt_run *run, size_t ki, kt_sizes *s) {
  *s = run->kernels[ki].sizes;
  bool given = false;
  const char *fields[] = {"global", "group"};
  for (int f = 0; f < 2; f++) {
    size_t *v = f == 0 ? s->global : s->local;
    int t = lk_get_field(L, idx, fields[f]);
    if (t == LUA_TNUMBER) {
      lua_Integer x = lua_tointeger(L, -1);
      if (x <= 0) luaL_error(L, "launch.%s: sizes must be positive", fields[f]);
      v[0] = (size_t)x;
      given = true;
    } else if (t == LUA_TTABLE) {
      int n = (int)luaL_len(L, -1);
      if (n < 1 || n > 3) luaL_error(L, "launch.%s: expected 1 to 3 sizes", fields[f]);
      for (int d = 0; d < n; d++) {
        lua_rawgeti(L, -1, d + 1);
        lua_Integer x = lua_tointeger(L, -1);
        if (x <= 0) luaL_error(L, "launch.%s[%d]: expected a positive integer", fields[f], d + 1);
        v[d] = (size_t)x;
        lua_pop(L, 1);
      }
      if (n > s->dims) s->dims = n;
      given = true;
    } else if (t != LUA_TNIL) {
      luaL_error(L, "launch.%s: expected a size or a list of sizes", fields[f]);
    }
    lua_pop(L, 1);
  }
  return given;
}

static int run_launch(lua_State *L) {
  static const char *const keys[] = {"global", "group", "queue", NULL};
  kt_run *run = check_run(L);
  size_t ki = check_kernel(L, run, 2);
  kt_sizes sizes;
  kt_launch_opts o = {NULL, 0};
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    lk_check_keys(L, 3, "launch", keys);
    if (check_sizes(L, 3, run, ki, &sizes)) o.sizes = &sizes;
    o.queue = opt_queue(L, 3, "launch");
  }
  kt_error err;
  if (kt_run_launch(run, ki, &o, &err)) return run_error(L, &err);
  return 0;
}

static int run_sync(lua_State *L) {
  kt_run *run = check_run(L);
  lua_Integer q = luaL_optinteger(L, 2, -1);
  kt_error err;
  if (kt_run_sync(run, (int)q, &err)) return run_error(L, &err);
  return 0;
}

/* The optional options table comes last, after optional arrays. */
static int options_at(lua_State *L, int first) {
  int top = lua_gettop(L);
  return top >= first && lua_type(L, top) == LUA_TTABLE ? top : 0;
}

static bool opt_async(lua_State *L, int opts, const char *what) {
  return opts && lk_opt_boolean(L, opts, what, "async", 0);
}

static int run_read(lua_State *L) {
  static const char *const keys[] = {"count", "queue", "async", NULL};
  kt_run *run = check_run(L);
  kt_array *a = check_buffer(L, 2);
  kt_array *into = lk_test_array(L, 3);
  int opts = options_at(L, 3);
  if (opts) lk_check_keys(L, opts, "read", keys);
  lua_Integer count = opts ? lk_opt_integer(L, opts, "read", "count", 0) : 0;
  if (count < 0) luaL_error(L, "read.count must not be negative");
  int queue = opts ? opt_queue(L, opts, "read") : 0;
  kt_error err;
  int rc = opt_async(L, opts, "read")
               ? kt_run_read_async(run, a, into ? into : a, (size_t)count, queue, &err)
               : kt_run_read(run, a, into ? into : a, (size_t)count, queue, &err);
  if (rc) return run_error(L, &err);
  lua_pushvalue(L, into ? 3 : 2);
  if (!into && !lk_test_array(L, -1)) lk_push_array(L, a);
  return 1;
}

static int run_write(lua_State *L) {
  static const char *const keys[] = {"queue", "async", NULL};
  kt_run *run = check_run(L);
  kt_array *a = check_buffer(L, 2);
  kt_array *from = lk_test_array(L, 3);
  int opts = options_at(L, 3);
  if (opts) lk_check_keys(L, opts, "write", keys);
  int queue = opts ? opt_queue(L, opts, "write") : 0;
  kt_error err;
  int rc = opt_async(L, opts, "write") ? kt_run_write_async(run, a, from ? from : a, queue, &err)
                                       : kt_run_write(run, a, from ? from : a, queue, &err);
  if (rc) return run_error(L, &err);
  return 0;
}

static int check_queue_arg(lua_State *L, int idx) {
  lua_Integer q = luaL_checkinteger(L, idx);
  if (q < 0) luaL_argerror(L, idx, "a queue is a number from 0");
  return (int)q;
}

/* run:event([queue]): an event that completes once what is queued on the
** queue (0 by default) so far has. */
static int run_event(lua_State *L) {
  kt_run *run = check_run(L);
  int queue = lua_isnoneornil(L, 2) ? 0 : check_queue_arg(L, 2);
  size_t index;
  kt_error err;
  if (kt_run_event(run, queue, &index, &err)) return run_error(L, &err);
  lk_run_event *ev = lua_newuserdatauv(L, sizeof *ev, 1);
  *ev = (lk_run_event){lua_touserdata(L, 1), index, queue};
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  luaL_setmetatable(L, LK_RUN_EVENT);
  return 1;
}

/* run:wait(event, queue): what is queued on queue from now on waits for
** the event, on the device. */
static int run_wait(lua_State *L) {
  kt_run *run = check_run(L);
  lk_run_event *ev = luaL_testudata(L, 2, LK_RUN_EVENT);
  if (!ev) luaL_typeerror(L, 2, "event (from run:event)");
  if (ev->owner != lua_touserdata(L, 1))
    luaL_argerror(L, 2, "the event belongs to another execution (an event lasts until its "
                        "launcher returns)");
  int queue = check_queue_arg(L, 3);
  kt_error err;
  if (kt_run_wait(run, ev->index, queue, &err)) return run_error(L, &err);
  return 0;
}

static int event_tostring(lua_State *L) {
  lk_run_event *ev = luaL_checkudata(L, 1, LK_RUN_EVENT);
  lua_pushfstring(L, "run event %d (queue %d)", (int)ev->index, ev->queue);
  return 1;
}

/* The queue of an options table that may end the arguments. */
static int queue_at(lua_State *L, int first, const char *what) {
  static const char *const keys[] = {"queue", NULL};
  int opts = options_at(L, first);
  if (!opts) return 0;
  lk_check_keys(L, opts, what, keys);
  return opt_queue(L, opts, what);
}

static int run_copy(lua_State *L) {
  kt_run *run = check_run(L);
  kt_array *dst = check_buffer(L, 2), *src = check_buffer(L, 3);
  lua_Integer count = lua_isinteger(L, 4) ? lua_tointeger(L, 4) : 0;
  if (count < 0) luaL_argerror(L, 4, "count must not be negative");
  kt_error err;
  if (kt_run_copy(run, dst, src, (size_t)count, queue_at(L, 4, "copy"), &err))
    return run_error(L, &err);
  return 0;
}

static int run_clear(lua_State *L) {
  kt_run *run = check_run(L);
  kt_error err;
  if (kt_run_clear(run, check_buffer(L, 2), queue_at(L, 3, "clear"), &err))
    return run_error(L, &err);
  return 0;
}

static int run_resize(lua_State *L) {
  kt_run *run = check_run(L);
  kt_array *a = check_buffer(L, 2);
  lua_Integer n = luaL_checkinteger(L, 3);
  if (n <= 0) luaL_argerror(L, 3, "a buffer needs at least one element");
  kt_error err;
  if (kt_run_resize(run, a, (size_t)n, &err)) return run_error(L, &err);
  return 0;
}

static int run_length(lua_State *L) {
  kt_run *run = check_run(L);
  lua_pushinteger(L, (lua_Integer)kt_run_length(run, check_buffer(L, 2)));
  return 1;
}

static kt_arg *check_arg(lua_State *L, int idx, kt_arg_kind kind, const char *what) {
  lk_arg *ua = lk_test_object(L, idx, LK_ARG);
  if (!ua || ua->a->kind != kind) luaL_typeerror(L, idx, what);
  return ua->a;
}

/* run:update(scalar, value): the scalar's value for this execution. */
static int run_update(lua_State *L) {
  kt_run *run = check_run(L);
  kt_arg *arg = check_arg(L, 2, KT_ARG_SCALAR, "scalar argument (kt.int(...), ...)");
  luaL_checkany(L, 3);
  kt_error err;
  if (kt_run_set_scalar(run, arg, lk_scalar_bytes(L, arg->type, 3), &err)) return run_error(L, &err);
  return 0;
}

/* run:localmem(arg, count): the local memory's element count for this execution. */
static int run_localmem(lua_State *L) {
  kt_run *run = check_run(L);
  kt_arg *arg = check_arg(L, 2, KT_ARG_LOCAL, "local-memory argument (kt.localmem(...))");
  lua_Integer n = luaL_checkinteger(L, 3);
  if (n <= 0) luaL_argerror(L, 3, "local memory needs a positive size");
  kt_error err;
  if (kt_run_set_local(run, arg, (size_t)n * arg->elem_size, &err)) return run_error(L, &err);
  return 0;
}

/* An argument of kernel ki given as an argument object, or as the array of
** a vector argument in its current list. */
static const kt_arg *find_arg(lua_State *L, kt_run *run, size_t ki, int idx) {
  lk_arg *ua = lk_test_object(L, idx, LK_ARG);
  if (ua) return ua->a;
  kt_array *a = lk_test_array(L, idx);
  if (!a) luaL_typeerror(L, idx, "argument or array");
  const kt_run_kernel *rk = &run->kernels[ki];
  for (size_t i = 0; i < rk->nargs; i++)
    if (rk->args[i]->kind == KT_ARG_VECTOR && rk->args[i]->array == a) return rk->args[i];
  luaL_argerror(L, idx, "the array is not an argument of the kernel");
  return NULL;
}

static int run_swap(lua_State *L) {
  kt_run *run = check_run(L);
  size_t ki = check_kernel(L, run, 2);
  const kt_arg *a = find_arg(L, run, ki, 3), *b = find_arg(L, run, ki, 4);
  kt_error err;
  if (kt_run_swap(run, ki, a, b, &err)) return run_error(L, &err);
  return 0;
}

static int run_args(lua_State *L) {
  kt_run *run = check_run(L);
  size_t ki = check_kernel(L, run, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  size_t n = (size_t)luaL_len(L, 3);
  kt_arg **args = lk_scratch_args(L, n);
  for (size_t i = 0; i < n; i++) {
    char what[32];
    snprintf(what, sizeof what, "argument %zu", i + 1);
    lua_rawgeti(L, 3, (lua_Integer)i + 1);
    args[i] = lk_to_arg(L, -1, what);
    lua_pop(L, 1);
  }
  kt_error err;
  if (kt_run_set_args(run, ki, args, n, &err)) return run_error(L, &err);
  return 0;
}

/* run.global[k], run.group[k]: kernel k's sizes under the configuration,
** as a launch with no sizes of its own would use them (KTT's
** GetCurrentGlobalSize), in the kernel's notation; group is nil when the
** runtime chooses. The proxy holds the run object as its user value. */
static int sizes_index(lua_State *L) {
  bool *group = luaL_checkudata(L, 1, LK_RUN_SIZES);
  lua_getiuservalue(L, 1, 1);
  lua_replace(L, 1);
  kt_run *run = check_run(L);
  const kt_sizes *s = &run->kernels[check_kernel(L, run, 2)].sizes;
  const size_t *v = *group ? s->local : s->global;
  if (!v[0]) return lua_pushnil(L), 1;
  lua_createtable(L, s->dims, 0);
  for (int d = 0; d < s->dims; d++) {
    lua_pushinteger(L, (lua_Integer)v[d]);
    lua_rawseti(L, -2, d + 1);
  }
  return 1;
}

static void push_sizes(lua_State *L, bool group) {
  bool *g = lua_newuserdatauv(L, sizeof *g, 1);
  *g = group;
  luaL_setmetatable(L, LK_RUN_SIZES);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
}

static int run_index(lua_State *L) {
  const char *key = luaL_checkstring(L, 2);
  if (strcmp(key, "config") == 0) {
    kt_run *run = check_run(L);
    lk_push_config(L, run->cfg.space, run->cfg.vi);
    return 1;
  }
  if (strcmp(key, "global") == 0 || strcmp(key, "group") == 0) {
    check_run(L);
    push_sizes(L, key[1] == 'r');
    return 1;
  }
  luaL_getmetafield(L, 1, "methods");
  lua_getfield(L, -1, key);
  return 1;
}

static int launcher_in_lua(kt_run *run, void *ud, kt_error *err) {
  lua_State *T = lk_ref_push(ud);
  lk_run *ur = lua_newuserdatauv(T, sizeof *ur, 0);
  ur->run = run;
  luaL_setmetatable(T, LK_RUN);
  lk_push_config(T, run->cfg.space, run->cfg.vi);
  /* A launcher stuck in Lua waits for no device, so the device's deadline
  ** never stops it: the same limit on its host code does (a timeout). */
  lk_deadline d;
  bool limited = run->time_limit_ns > 0;
  if (limited)
    lk_deadline_begin(T, &d, (double)run->time_limit_ns / 1e9, "the launcher", " in its Lua code");
  int rc = lk_ref_call(ud, 2, 0, true, err);
  if (limited) lk_deadline_end(T, &d);
  if (rc && limited && d.fired) run->fault = KT_FAULT_TIMEOUT;
  ur->run = NULL;
  return rc;
}

/* k:launcher(function(run, cfg) ... end), or k:launcher(nil) for the default. */
static int task_launcher(lua_State *L) {
  lk_task *ut = lk_check_idle_task(L, 1);
  if (lua_isnil(L, 2)) {
    kt_task_set_launcher(ut->task, NULL, (kt_callback){NULL, NULL});
  } else {
    luaL_checktype(L, 2, LUA_TFUNCTION);
    kt_task_set_launcher(ut->task, launcher_in_lua, lk_ref_callback(L, 2));
  }
  lua_settop(L, 1);
  return 1;
}

void lk_open_run(lua_State *L) {
  static const luaL_Reg meta[] = {{"__index", run_index}, {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"launch", run_launch}, {"sync", run_sync},       {"read", run_read},
      {"write", run_write},   {"copy", run_copy},       {"clear", run_clear},
      {"resize", run_resize}, {"length", run_length},   {"update", run_update},
      {"localmem", run_localmem}, {"swap", run_swap},   {"args", run_args},
      {"event", run_event},   {"wait", run_wait},
      {NULL, NULL}};
  static const char *const fields[] = {"config", "global", "group", NULL};
  lk_new_class(L, LK_RUN, meta, methods);
  lk_class_fields(L, LK_RUN, fields);
  static const luaL_Reg event_meta[] = {{"__tostring", event_tostring}, {NULL, NULL}};
  static const luaL_Reg event_methods[] = {{NULL, NULL}};
  lk_new_class(L, LK_RUN_EVENT, event_meta, event_methods);
  static const luaL_Reg sizes_meta[] = {{"__index", sizes_index}, {NULL, NULL}};
  lk_new_class(L, LK_RUN_SIZES, sizes_meta, NULL);
  /* The launcher method belongs to kernels and compositions. */
  luaL_getmetatable(L, LK_TASK);
  lua_getfield(L, -1, "methods");
  lua_pushcfunction(L, task_launcher);
  lua_setfield(L, -2, "launcher");
  lua_pop(L, 2);
}
