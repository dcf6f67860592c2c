/*
** lk_task.c: kernels (and compositions) as Lua objects: the kernel
** definition table, parameters, constraints, thread modifiers, references,
** and k:space() (the space view: lk_space.c).
*/
#define _DEFAULT_SOURCE /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/eval/prune.h"
#include "../core/eval/size_expr.h"
#include "../core/base/regular_file.h"
#include "../core/eval/validate.h"
#include "lk.h"

void lk_push_task(lua_State *L, kt_task *task, kt_kernel *kernel) {
  lk_task *ut = lua_newuserdatauv(L, sizeof *ut, 0);
  ut->task = task;
  ut->kernel = kernel;
  luaL_setmetatable(L, LK_TASK);
}

/* ---- the kernel definition ---- */

/* The directory of the script that called into ktlua, so that kernel
** files are found next to the script as well as in the working directory. */
static void caller_dir(lua_State *L, char *dir, size_t size) {
  lua_Debug ar;
  dir[0] = '\0';
  for (int level = 1; lua_getstack(L, level, &ar); level++) {
    lua_getinfo(L, "S", &ar);
    if (ar.source[0] != '@') continue;
    const char *path = ar.source + 1, *slash = strrchr(path, '/');
    if (slash) snprintf(dir, size, "%.*s", (int)(slash - path), path);
    return;
  }
}

/* Only a regular file of at most KT_SOURCE_MAX bytes: a kernel file names
** no pipe to wait on or device to read forever. */
static char *read_file(const char *path, kt_error *err) {
  size_t len;
  kt_file_fault fault;
  char *data = kt_read_regular(path, KT_SOURCE_MAX, &len, &fault, err);
  if (!data) kt_fail_prefix(err, "cannot read %s: ", path);
  return data;
}

static char *load_source(lua_State *L, const char *file, char *path, size_t size) {
  kt_error err;
  snprintf(path, size, "%s", file);
  char *src = read_file(path, &err);
  if (!src && file[0] != '/') {
    char dir[1024];
    caller_dir(L, dir, sizeof dir);
    if (dir[0]) {
      kt_error err2;
      snprintf(path, size, "%s/%s", dir, file);
      src = read_file(path, &err2);
    }
  }
  if (!src) lk_error(L, &err);
  return src;
}

/* The kernel file's folder, absolute, on the include path (kernel.h), as
** nvcc and clang search a source file's own folder. */
static void set_folder(lua_State *L, kt_kernel *k, const char *path) {
  const char *slash = strrchr(path, '/');
  char dir[PATH_MAX], real[PATH_MAX];
  if (!slash) snprintf(dir, sizeof dir, ".");
  else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
  kt_error err;
  if (!realpath(dir, real))
    luaL_error(L, "kernel.file: cannot find the folder of %s: %s", path, strerror(errno));
  if (kt_kernel_set_folder(k, real, &err)) lk_error(L, &err);
}

static int check_sizes(lua_State *L, int idx, const char *field, size_t *out) {
  int t = lk_get_field(L, idx, field), dims = 0;
  if (t == LUA_TNUMBER) {
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok || v <= 0)
      luaL_error(L, "kernel.%s: expected a positive integer, got %s", field, lua_tostring(L, -1));
    out[0] = (size_t)v;
    dims = 1;
  } else if (t == LUA_TTABLE) {
    dims = (int)luaL_len(L, -1);
    if (dims < 1 || dims > 3) luaL_error(L, "kernel.%s: expected 1 to 3 sizes, got %d", field, dims);
    for (int d = 0; d < dims; d++) {
      lua_rawgeti(L, -1, d + 1);
      int ok;
      lua_Integer v = lua_tointegerx(L, -1, &ok);
      if (!ok || v <= 0)
        luaL_error(L, "kernel.%s[%d]: expected a positive integer", field, d + 1);
      out[d] = (size_t)v;
      lua_pop(L, 1);
    }
  } else if (t != LUA_TNIL) {
    luaL_error(L, "kernel.%s: expected a size or a list of 1 to 3 sizes, got %s", field,
               luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return dims;
}

static void set_args(lua_State *L, kt_kernel *k, int idx) {
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx))
    luaL_error(L, "kernel %s: args must be a list of arguments, got %s", k->name,
               luaL_typename(L, idx));
  size_t n = (size_t)luaL_len(L, idx);
  kt_arg **args = lk_scratch_args(L, n);
  for (size_t i = 0; i < n; i++) {
    char what[96];
    snprintf(what, sizeof what, "kernel %s, argument %zu", k->name, i + 1);
    lua_rawgeti(L, idx, (lua_Integer)i + 1);
    args[i] = lk_to_arg(L, -1, what);
    lua_pop(L, 1);
  }
  kt_error err;
  if (kt_kernel_set_args(k, args, n, &err)) lk_error(L, &err);
  lua_pop(L, 1);
}

static kt_notation check_notation(lua_State *L, int idx) {
  const char *n = lk_opt_string(L, idx, "kernel", "notation", "opencl");
  if (strcmp(n, "opencl") == 0) return KT_NOTATION_OPENCL;
  if (strcmp(n, "cuda") == 0) return KT_NOTATION_CUDA;
  luaL_error(L, "kernel.notation: expected 'opencl' (global size in work-items) or 'cuda' "
                "(global size in blocks), got '%s'", n);
  return KT_NOTATION_OPENCL;
}

/* Makes a kernel and its task from a definition table; pushes the object. */
int lk_new_kernel(lua_State *L, int idx) {
  static const char *const keys[] = {"name", "file", "source", "prelude", "global", "group",
                                     "options", "notation", "round_global", "args",
                                     "generator_limit", NULL};
  luaL_checktype(L, idx, LUA_TTABLE);
  lk_check_keys(L, idx, "kernel", keys);
  const char *name = lk_opt_string(L, idx, "kernel", "name", NULL);
  const char *file = lk_opt_string(L, idx, "kernel", "file", NULL);
  bool generated = lk_codegen_wanted(L, idx);
  const char *source = generated ? NULL : lk_opt_string(L, idx, "kernel", "source", NULL);
  bool limited = lk_get_field(L, idx, "generator_limit") != LUA_TNIL;
  lua_pop(L, 1);
  if (limited && !generated)
    luaL_error(L, "kernel.generator_limit: only a source or prelude function has a time limit");
  if (!name) luaL_error(L, "kernel.name: the kernel function's name is required");
  bool has_source = lk_get_field(L, idx, "source") != LUA_TNIL;
  lua_pop(L, 1);
  if (!file == !has_source) luaL_error(L, "kernel: give exactly one of 'file' and 'source'");
  size_t global[3], local[3];
  int gd = check_sizes(L, idx, "global", global), ld = check_sizes(L, idx, "group", local);
  if (gd == 0) luaL_error(L, "kernel.global: the global size is required");
  /* As KTT's DimensionVector(64) is 64 x 1 x 1, the sizes of fewer
  ** dimensions are padded with 1s. */
  int dims = ld > gd ? ld : gd;
  for (int d = gd; d < dims; d++) global[d] = 1;
  for (int d = ld; ld && d < dims; d++) local[d] = 1;
  char path[2048];
  char *text = file ? load_source(L, file, path, sizeof path) : NULL;
  /* A prelude (struct declarations, helpers) goes before the source. */
  const char *prelude = generated ? NULL : lk_opt_string(L, idx, "kernel", "prelude", NULL);
  if (prelude) {
    lua_pushstring(L, prelude);
    lua_pushstring(L, "\n#line 1\n"); /* compiler messages keep the file's lines */
    lua_pushstring(L, text ? text : source);
    free(text);
    text = NULL;
    lua_concat(L, 3);
    source = lua_tostring(L, -1);
  }
  kt_error err;
  kt_kernel *k = generated ? lk_codegen_kernel(L, idx, name, text, &err)
                           : kt_kernel_new(name, text ? text : source, file ? path : "<string>",
                                           &err);
  free(text);
  if (!k) return lk_error(L, &err);
  kt_task *task = kt_task_new(name, &k, 1, &err);
  kt_kernel_release(k);
  if (!task) return lk_error(L, &err);
  lk_push_task(L, task, k); /* owns the task from here, also on errors below */
  k->notation = check_notation(L, idx);
  k->round_global = lk_opt_boolean(L, idx, "kernel", "round_global", 0);
  if (kt_kernel_set_sizes(k, dims, global, ld ? local : NULL, &err) ||
      kt_kernel_set_options(k, lk_opt_string(L, idx, "kernel", "options", ""), &err))
    return lk_error(L, &err);
  if (file) set_folder(L, k, path);
  if (lk_get_field(L, idx, "args") != LUA_TNIL) set_args(L, k, -1);
  lua_pop(L, 1);
  return 1;
}

/* ---- parameters and constraints ---- */

static void check_values(lua_State *L, int idx, kt_value **out, size_t *n) {
  luaL_checktype(L, idx, LUA_TTABLE);
  *n = (size_t)luaL_len(L, idx);
  if (*n == 0) luaL_argerror(L, idx, "a parameter needs at least one value");
  *out = lua_newuserdatauv(L, *n * sizeof **out, 0);
  for (size_t i = 0; i < *n; i++) {
    lua_rawgeti(L, idx, (lua_Integer)i + 1);
    if (!lk_to_value(L, -1, &(*out)[i]))
      luaL_argerror(L, idx, lua_pushfstring(L, "value %d is a %s; parameter values are "
                                               "numbers, strings or booleans", (int)i + 1,
                                            luaL_typename(L, -1)));
    if (lk_has_nul(L, -1))
      luaL_argerror(L, idx, lua_pushfstring(L, "value %d holds a NUL byte (C strings end "
                                               "there)", (int)i + 1));
    lua_pop(L, 1); /* strings stay alive in the table */
  }
}

static void parse_target(lua_State *L, const char *target, kt_modifier *m);

/* k:param(name, values[, modifiers]) where modifiers maps a target such as
** "global_x" or "group_y" to "add", "sub", "mul", "div" or "div_ceil". */
static int task_param(lua_State *L) {
  lk_task *ut = lk_check_idle_task(L, 1);
  lua_settop(L, 4);
  const char *name = lk_check_text(L, 2);
  kt_value *values;
  size_t n;
  check_values(L, 3, &values, &n);
  size_t nmods = 0;
  kt_modifier *mods = NULL;
  if (!lua_isnoneornil(L, 4)) {
    luaL_checktype(L, 4, LUA_TTABLE);
    mods = lua_newuserdatauv(L, 6 * sizeof *mods, 0);
    lua_pushnil(L);
    while (lua_next(L, 4)) {
      const char *target = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
      const char *op = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
      int code = op ? kt_mod_op_from_name(op) : -1;
      if (code < 0)
        luaL_argerror(L, 4, lua_pushfstring(L, "modifier %s: expected add, sub, mul, div or "
                                               "div_ceil", target));
      if (nmods == 6) luaL_argerror(L, 4, "at most one modifier per size and dimension");
      mods[nmods] = (kt_modifier){.op = (kt_mod_op)code, .kernel = -1};
      parse_target(L, target, &mods[nmods++]);
      lua_pop(L, 1);
    }
  }
  kt_error err;
  for (size_t i = 0; i < nmods; i++) /* before the parameter joins the space */
    if (kt_task_check_modifier(ut->task, &mods[i], &err)) return lk_error(L, &err);
  if (kt_space_add_param(ut->task->space, name, values, n, &err)) return lk_error(L, &err);
  for (size_t i = 0; i < nmods; i++) {
    mods[i].param = kt_space_find(ut->task->space, name);
    if (kt_task_add_modifier(ut->task, &mods[i], &err)) return lk_error(L, &err);
  }
  lua_settop(L, 1);
  return 1;
}

static int constraint_in_lua(const kt_value *const *vals, size_t n, void *ud, kt_error *err) {
  lua_State *T = lk_ref_push(ud);
  for (size_t i = 0; i < n; i++) lk_push_value(T, vals[i]);
  if (lk_ref_call(ud, (int)n, 1, false, err)) return -1;
  int ok = lua_toboolean(T, -1);
  lua_pop(T, 1);
  return ok;
}

/* k:constraint("A % B == 0"[, constants]): an expression (core/space/expr.h)
** whose names are parameters or keys of constants ({N = n}); evaluated in
** C, thousands of times faster than a Lua call per check. */
static int constraint_expr(lua_State *L, lk_task *ut) {
  size_t n;
  const kt_named_value *consts = lk_check_constants(L, 3, &n);
  kt_error err;
  if (kt_space_add_expr(ut->task->space, lk_check_text(L, 2), consts, n, 0, &err))
    return lk_error(L, &err);
  lua_settop(L, 1);
  return 1;
}

/* The function at fn, of the parameters listed at list, as a constraint. */
static void add_positional(lua_State *L, lk_task *ut, int list, int fn) {
  luaL_checktype(L, list, LUA_TTABLE);
  luaL_checktype(L, fn, LUA_TFUNCTION);
  size_t n = (size_t)luaL_len(L, list);
  if (n == 0) luaL_argerror(L, list, "list the parameters the constraint reads");
  const char **names = lua_newuserdatauv(L, n * sizeof *names, 0);
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, list, (lua_Integer)i + 1);
    names[i] = lua_tostring(L, -1);
    if (!names[i]) luaL_argerror(L, list, "parameter names must be strings");
    lua_pop(L, 1);
  }
  kt_callback cb = lk_ref_callback(L, fn);
  kt_error err;
  if (kt_space_add_constraint(ut->task->space, names, n, constraint_in_lua, cb.ud, cb.ud_free, &err))
    lk_error(L, &err);
  lua_pop(L, 1);
}

/* k:constraint({"A", "B"}, function(a, b) return ... end), an expression, or
** k:constraint(function(p) return p.A < p.B end[, {"A", "B"}]) (lk_constraint.c:
** without names, an early check on what it read first, then one on all) */
static int task_constraint(lua_State *L) {
  lk_task *ut = lk_check_idle_task(L, 1);
  if (lua_type(L, 2) == LUA_TSTRING) return constraint_expr(L, ut);
  int forms = 1;
  if (lua_type(L, 2) == LUA_TFUNCTION) forms = lk_constraint_table_form(L, ut->task->space);
  if (forms == 2) add_positional(L, ut, 4, 5);
  add_positional(L, ut, 2, 3);
  lua_settop(L, 1);
  return 1;
}

/* ---- thread modifiers ---- */

static void parse_target(lua_State *L, const char *target, kt_modifier *m) {
  const char *under = strrchr(target, '_');
  size_t len = under ? (size_t)(under - target) : 0;
  bool global = len == 6 && strncmp(target, "global", 6) == 0;
  bool local = (len == 5 && strncmp(target, "group", 5) == 0) ||
               (len == 5 && strncmp(target, "local", 5) == 0);
  const char *dim = under ? strchr("xyz", under[1]) : NULL;
  if ((!global && !local) || !dim || !under[1] || under[2])
    luaL_error(L, "unknown modifier target '%s' (expected global_x, global_y, global_z, "
                  "group_x, group_y or group_z)", target);
  m->local = local;
  m->dim = (int)(dim - "xyz");
}

static void add_modifier(lua_State *L, lk_task *ut, int kernel, const char *target,
                         kt_modifier *m) {
  parse_target(L, target, m);
  m->kernel = kernel;
  kt_error err;
  if (kt_task_add_modifier(ut->task, m, &err)) lk_error(L, &err);
}

static int modifier_in_lua(const kt_config *cfg, int64_t in, int64_t *out, void *ud,
                        kt_error *err) {
  lua_State *T = lk_ref_push(ud);
  lua_pushinteger(T, in);
  lk_push_config(T, cfg->space, cfg->vi);
  if (lk_ref_call(ud, 2, 1, false, err)) return -1;
  int ok;
  *out = lua_tointegerx(T, -1, &ok);
  lua_pop(T, 1);
  return ok ? 0 : kt_fail(err, "a modifier function must return an integer size");
}

/* k:modifier([kernel,] target, op, operand) with op "add", "sub", "mul",
** "div" or "div_ceil" and operand a parameter name or an integer; or
** k:modifier([kernel,] target, function(size, cfg) return new_size end); or
** k:modifier([kernel,] target, "expression of the parameters") for the
** size itself, evaluated in C (size_expr.h). */
static int task_modifier(lua_State *L) {
  lk_task *ut = lk_check_idle_task(L, 1);
  lua_settop(L, 5);
  int kernel, arg = lk_opt_kernel(L, ut, 2, &kernel);
  const char *target = luaL_checkstring(L, arg);
  kt_modifier m = {.param = -1};
  if (lua_isfunction(L, arg + 1)) {
    m.op = KT_MOD_FN;
    m.fn = modifier_in_lua;
    parse_target(L, target, &m); /* check before the reference is taken */
    m.cb = lk_ref_callback(L, arg + 1);
  } else if (lua_type(L, arg + 1) == LUA_TSTRING && lua_isnil(L, arg + 2) &&
             kt_mod_op_from_name(lua_tostring(L, arg + 1)) < 0) {
    parse_target(L, target, &m);
    kt_error err;
    if (kt_size_expr_modifier(ut->task->space, lk_check_text(L, arg + 1), NULL, 0, &m, &err))
      lk_error(L, &err);
  } else {
    const char *op = luaL_checkstring(L, arg + 1);
    int code = kt_mod_op_from_name(op);
    if (code < 0)
      luaL_argerror(L, arg + 1, "expected add, sub, mul, div, div_ceil, a function or an expression");
    m.op = (kt_mod_op)code;
    if (lua_isinteger(L, arg + 2)) {
      m.constant = lua_tointeger(L, arg + 2);
    } else {
      const char *param = luaL_checkstring(L, arg + 2);
      m.param = kt_space_find(ut->task->space, param);
      if (m.param < 0)
        luaL_argerror(L, arg + 2, lua_pushfstring(L, "unknown parameter '%s'", param));
    }
  }
  add_modifier(L, ut, kernel, target, &m);
  lua_settop(L, 1);
  return 1;
}

/* ---- references ---- */

static int reference_in_lua(kt_array *expected, void *ud, kt_error *err) {
  lua_State *T = lk_ref_push(ud);
  lk_push_array(T, expected);
  return lk_ref_call(ud, 1, 0, false, err);
}

static int compare_in_lua(const kt_array *got, const kt_array *expected, void *ud, char **why,
                       kt_error *err) {
  lua_State *T = lk_ref_push(ud);
  lk_push_array(T, (kt_array *)got);
  lk_push_array(T, (kt_array *)expected);
  if (lk_ref_call(ud, 2, 2, false, err)) return -1;
  int same = lua_toboolean(T, -2);
  if (!same && lua_isstring(T, -1)) *why = strdup(lua_tostring(T, -1));
  lua_pop(T, 2);
  return same;
}

static kt_array *check_target(lua_State *L, int idx) {
  kt_array *a = lk_test_array(L, idx);
  lk_arg *ua = lk_test_object(L, idx, LK_ARG);
  if (!a && ua && ua->a->kind == KT_ARG_VECTOR) a = ua->a->array;
  if (!a) luaL_typeerror(L, idx, "the output array (or its argument)");
  return a;
}

static bool has_field(lua_State *L, int idx, const char *field) {
  bool has = lk_get_field(L, idx, field) != LUA_TNIL;
  lua_pop(L, 1);
  return has;
}

/* method = "close": atol and rtol, numpy's defaults (1e-8, 1e-5);
** "kernel_tuner": Kernel Tuner's (atol 1e-6, numpy's rtol 1e-5). */
static void close_options(lua_State *L, int idx, kt_reference *r, const char *method) {
  if (has_field(L, idx, "tolerance"))
    luaL_error(L, "reference options.tolerance: method \"%s\" takes atol and rtol instead",
               method);
  double atol = r->method == KT_CMP_KERNEL_TUNER ? 1e-6 : 1e-8;
  r->tolerance = lk_opt_number(L, idx, "reference options", "atol", atol);
  r->rtol = lk_opt_number(L, idx, "reference options", "rtol", 1e-5);
  if (r->tolerance < 0) luaL_error(L, "reference options.atol must not be negative");
  if (r->rtol < 0) luaL_error(L, "reference options.rtol must not be negative");
}

/* Reads and checks the options; returns the stack index of the comparator
** function, or 0. Takes nothing that would need freeing. */
static int reference_options(lua_State *L, int idx, kt_reference *r) {
  static const char *const keys[] = {"method", "tolerance", "atol", "rtol", "first", "compare",
                                     NULL};
  const kt_type *t = r->target->type;
  r->method = KT_CMP_ABSOLUTE;
  r->tolerance = t->kind != KT_STRUCT && kt_kind_is_float(t->kind) ? 1e-4 : 0;
  if (lua_isnoneornil(L, idx)) return 0;
  luaL_checktype(L, idx, LUA_TTABLE);
  lk_check_keys(L, idx, "reference options", keys);
  const char *method = lk_opt_string(L, idx, "reference options", "method", "absolute");
  int m = kt_cmp_method_from_name(method);
  if (m < 0)
    luaL_error(L, "reference options.method: expected absolute, relative, sum, close or "
               "kernel_tuner, got '%s'", method);
  r->method = (kt_cmp_method)m;
  if (r->method == KT_CMP_CLOSE || r->method == KT_CMP_KERNEL_TUNER)
    close_options(L, idx, r, method);
  else if (has_field(L, idx, "atol") || has_field(L, idx, "rtol"))
    luaL_error(L, "reference options: atol and rtol go with method = \"close\" or "
               "\"kernel_tuner\" (method is %s)", method);
  else r->tolerance = lk_opt_number(L, idx, "reference options", "tolerance", r->tolerance);
  if (r->tolerance < 0) luaL_error(L, "reference options.tolerance must not be negative");
  lua_Integer first = lk_opt_integer(L, idx, "reference options", "first", 0);
  if (first < 0) luaL_error(L, "reference options.first must not be negative");
  r->first = (size_t)first;
  if (lk_get_field(L, idx, "compare") == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  if (!lua_isfunction(L, -1)) luaL_error(L, "reference options.compare: expected a function");
  return lua_gettop(L); /* left on the stack for the caller */
}

/* {kernel = k2, config = {...}}: checks and leaves the value indices in a
** userdata on the stack; returns the reference kernel. */
static lk_task *reference_kernel(lua_State *L, int idx, uint32_t **vi) {
  static const char *const keys[] = {"kernel", "config", NULL};
  lk_check_keys(L, idx, "reference", keys);
  lua_getfield(L, idx, "kernel");
  const char *dead = lk_released(L, -1);
  if (dead) luaL_error(L, "reference.kernel: %s", dead);
  lk_task *ref = lk_test_object(L, -1, LK_TASK);
  if (!ref) luaL_error(L, "reference.kernel: expected a kernel");
  lua_pop(L, 1); /* the definition table keeps it alive */
  size_t np = kt_space_nparams(ref->task->space);
  *vi = lua_newuserdatauv(L, (np ? np : 1) * sizeof **vi, 0);
  if (lua_getfield(L, idx, "config") == LUA_TNIL) {
    lua_pop(L, 1);
    lua_newtable(L);
  }
  lk_check_config(L, -1, ref->task->space, *vi);
  lua_pop(L, 1);
  return ref;
}

/* k:reference(output, source[, options]) where source is a function that
** fills a copy of the output, an array, or {kernel = k2, config = {...}}. */
static int task_reference(lua_State *L) {
  lk_task *ut = lk_check_idle_task(L, 1);
  lua_settop(L, 4);
  kt_reference r = {0};
  r.target = check_target(L, 2);
  kt_array *given = lk_test_array(L, 3);
  lk_task *ref = NULL;
  uint32_t *vi = NULL;
  if (!lua_isfunction(L, 3) && !given) {
    if (!lua_istable(L, 3)) luaL_typeerror(L, 3, "function, array or {kernel = ..., config = ...}");
    ref = reference_kernel(L, 3, &vi);
  }
  int compare = reference_options(L, 4, &r);
  if (r.first > r.target->length)
    luaL_argerror(L, 4, lua_pushfstring(L, "first = %I exceeds the output's %I elements",
                                        (lua_Integer)r.first, (lua_Integer)r.target->length));
  if (r.target->type->kind == KT_STRUCT && !compare)
    luaL_argerror(L, 4, "an output of struct type needs a comparator (option 'compare')");
  /* Checked: from here on only running out of memory raises. */
  if (ref) {
    size_t np = kt_space_nparams(ref->task->space);
    if (!(r.task_vi = malloc((np ? np : 1) * sizeof *vi))) return luaL_error(L, "out of memory");
    memcpy(r.task_vi, vi, np * sizeof *vi);
    r.kind = KT_REF_TASK;
    r.task = ref->task;
    kt_task_retain(ref->task);
  } else if (given) {
    r.kind = KT_REF_ARRAY;
    r.given = given;
    kt_array_retain(given);
  } else {
    r.kind = KT_REF_FN;
    r.fn = reference_in_lua;
    r.fn_cb = lk_ref_callback(L, 3);
  }
  if (compare) {
    r.compare = compare_in_lua;
    r.compare_cb = lk_ref_callback(L, compare);
  }
  kt_array_retain(r.target);
  kt_error err;
  if (kt_task_add_reference(ut->task, &r, &err)) return lk_error(L, &err);
  lua_settop(L, 1);
  return 1;
}

/* k:space([device]): the space view, numbered as defined (as results and
** seeds are); with a device (its id, such as "opencl:0:0", or its table),
** a view pruned by that device's limits, as a tuning on it would be, and
** numbered as its searcher walks it. */
static int task_space(lua_State *L) {
  lk_task *ut = lk_check_task(L, 1);
  if (!lua_isnoneornil(L, 2)) {
    lk_check_idle_task(L, 1); /* pruning changes the space */
    kt_device_info dev;
    lk_check_device(L, 2, &dev);
    kt_error err;
    int rc = kt_task_prune(ut->task, &dev, &err);
    kt_device_clear(&dev);
    if (rc) return lk_error(L, &err);
  }
  lk_push_space_view(L, 1, 0, !lua_isnoneornil(L, 2));
  return 1;
}

/* ---- the object ---- */

static int task_gc(lua_State *L) {
  lk_task *ut = luaL_checkudata(L, 1, LK_TASK);
  kt_task_release(ut->task);
  ut->task = NULL;
  ut->kernel = NULL;
  return 0;
}

static int task_tostring(lua_State *L) {
  if (lk_push_released(L, LK_TASK)) return 1;
  lk_task *ut = lk_check_task(L, 1);
  lua_pushfstring(L, "%s %s", ut->kernel ? "kernel" : "composition", ut->task->name);
  return 1;
}

static int task_set_args(lua_State *L) {
  lk_task *ut = lk_check_idle_task(L, 1);
  if (!ut->kernel) luaL_argerror(L, 1, "set the arguments of each kernel of a composition");
  set_args(L, ut->kernel, 2);
  lua_settop(L, 1);
  return 1;
}

static int task_index(lua_State *L) {
  if (lk_push_method(L)) return 1;
  lk_task *ut = lk_check_task(L, 1);
  const char *key = luaL_checkstring(L, 2);
  if (strcmp(key, "name") == 0) lua_pushstring(L, ut->task->name);
  else lua_pushnil(L);
  return 1;
}

void lk_open_task(lua_State *L) {
  static const luaL_Reg meta[] = {
      {"__gc", task_gc}, {"__tostring", task_tostring}, {"__index", task_index}, {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"param", task_param}, {"constraint", task_constraint}, {"modifier", task_modifier},
      {"reference", task_reference}, {"space", task_space}, {"args", task_set_args},
      {"local_memory", lk_task_local_memory}, {"prune", lk_task_prune}, {NULL, NULL}};
  static const char *const fields[] = {"name", NULL};
  lk_new_class(L, LK_TASK, meta, methods);
  lk_class_fields(L, LK_TASK, fields);
  lk_open_space(L);
}
