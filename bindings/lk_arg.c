/*
** lk_arg.c: kernel arguments: a:input(), a:output(), a:inout(),
** kt.scalar and its typed shorthands (kt.int, kt.float, ...), kt.localmem,
** kt.symbol.
*/
#include <string.h>

#include "lk.h"

static void push_arg(lua_State *L, kt_arg *a) {
  lk_arg *ua = lua_newuserdatauv(L, sizeof *ua, 0);
  ua->a = a;
  luaL_setmetatable(L, LK_ARG);
}

static kt_placement check_placement(lua_State *L, int idx) {
  static const char *const names[] = {"device", "host", "zero_copy", "managed", NULL};
  if (lua_isnoneornil(L, idx)) return KT_PLACE_DEVICE;
  luaL_checktype(L, idx, LUA_TTABLE);
  static const char *const keys[] = {"placement", NULL};
  lk_check_keys(L, idx, "argument options", keys);
  const char *p = lk_opt_string(L, idx, "argument options", "placement", "device");
  for (int i = 0; names[i]; i++)
    if (strcmp(p, names[i]) == 0) return (kt_placement)i;
  return luaL_error(L, "argument options.placement: unknown placement '%s' (expected device, "
                       "host, zero_copy or managed)", p);
}

static int vector(lua_State *L, kt_access access) {
  kt_array *a = lk_check_array(L, 1);
  kt_placement place = check_placement(L, 2);
  kt_error err;
  kt_arg *arg = kt_arg_vector(a, access, place, &err);
  if (!arg) return lk_error(L, &err);
  push_arg(L, arg);
  return 1;
}

static int array_input(lua_State *L) { return vector(L, KT_READ); }
static int array_output(lua_State *L) { return vector(L, KT_WRITE); }
static int array_inout(lua_State *L) { return vector(L, KT_READ_WRITE); }

/* Through a one-element array, so that conversions are those of array
** elements. */
void *lk_scalar_bytes(lua_State *L, const kt_type *t, int idx) {
  idx = lua_absindex(L, idx);
  kt_error err;
  kt_array *tmp = kt_array_new(t, 1, &err);
  if (!tmp) lk_error(L, &err);
  lk_push_array(L, tmp); /* collected even if the conversion fails */
  kt_array_release(tmp);
  lua_pushinteger(L, 0);
  lua_pushvalue(L, idx);
  lua_settable(L, -3);
  return tmp->data;
}

static kt_arg *make_scalar(lua_State *L, const kt_type *t, int idx) {
  kt_error err;
  kt_arg *arg = kt_arg_scalar(t, lk_scalar_bytes(L, t, idx), &err);
  lua_pop(L, 1);
  if (!arg) lk_error(L, &err);
  return arg;
}

/* kt.scalar(type, value) */
static int l_scalar(lua_State *L) {
  const kt_type *t = lk_check_type(L, 1);
  luaL_checkany(L, 2);
  push_arg(L, make_scalar(L, t, 2));
  return 1;
}

/* kt.int(v), kt.float(v), ...: the type is the upvalue. */
static int l_typed_scalar(lua_State *L) {
  const kt_type *t = kt_type_by_name(lua_tostring(L, lua_upvalueindex(1)));
  if (lua_type(L, 1) != LUA_TNUMBER) luaL_typeerror(L, 1, "number");
  push_arg(L, make_scalar(L, t, 1));
  return 1;
}

static int local_count(const kt_config *cfg, int64_t in, int64_t *out, void *ud,
                       kt_error *err) {
  (void)in;
  lua_State *T = lk_ref_push(ud);
  lk_push_config(T, cfg->space, cfg->vi);
  if (lk_ref_call(ud, 1, 1, false, err)) return -1;
  int ok;
  *out = lua_tointegerx(T, -1, &ok);
  lua_pop(T, 1);
  return ok ? 0 : kt_fail(err, "the local memory function must return an integer count");
}

/* kt.localmem(type, count) or kt.localmem(type, function(cfg) return count end) */
static int l_localmem(lua_State *L) {
  const kt_type *t = lk_check_type(L, 1);
  kt_error err;
  kt_arg *arg;
  if (lua_isfunction(L, 2)) {
    arg = kt_arg_local(t->size, 0, local_count, lk_ref_callback(L, 2), &err);
  } else {
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n <= 0) luaL_argerror(L, 2, "local memory needs a positive element count");
    arg = kt_arg_local(t->size, n, NULL, (kt_callback){NULL, NULL}, &err);
  }
  if (!arg) return lk_error(L, &err);
  push_arg(L, arg);
  return 1;
}

/* kt.symbol(name, value): a CUDA __constant__ (or __device__) variable of
** the kernel's program that receives value (an array's contents, or a
** scalar such as kt.float(2)) before every launch. It is listed among the
** arguments, where it fills no parameter position:
**   args = { a:input(), c:output(), kt.int(n), kt.symbol("coeffs", coeffs) } */
static int l_symbol(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  kt_array *array = lk_test_array(L, 2);
  lk_arg *scalar = lk_test_object(L, 2, LK_ARG);
  if (!array && (!scalar || scalar->a->kind != KT_ARG_SCALAR))
    luaL_typeerror(L, 2, "array or scalar (kt.float(...), ...)");
  kt_error err;
  kt_arg *arg = kt_arg_symbol(name, array, scalar ? scalar->a : NULL, &err);
  if (!arg) return lk_error(L, &err);
  push_arg(L, arg);
  return 1;
}

/* An argument from an argument object, or an array (read and written). */
kt_arg *lk_to_arg(lua_State *L, int idx, const char *what) {
  const char *dead = lk_released(L, idx);
  if (dead) luaL_error(L, "%s: %s", what, dead);
  lk_arg *ua = lk_test_object(L, idx, LK_ARG);
  if (ua) {
    kt_arg_retain(ua->a);
    return ua->a;
  }
  kt_array *a = lk_test_array(L, idx);
  if (a) {
    kt_error err;
    kt_arg *arg = kt_arg_vector(a, KT_READ_WRITE, KT_PLACE_DEVICE, &err);
    if (!arg) lk_error(L, &err);
    return arg;
  }
  if (lua_type(L, idx) == LUA_TNUMBER)
    luaL_error(L, "%s: a number needs a type, e.g. kt.int(%s) or kt.float(%s)", what,
               lua_tostring(L, idx), lua_tostring(L, idx));
  luaL_error(L, "%s: expected an array, a:input()/output()/inout(), kt.int(...) or "
                "another scalar, or kt.localmem(...), got %s", what, luaL_typename(L, idx));
  return NULL;
}

/* A scalar, or a symbol holding one. */
static bool holds_scalar(const kt_arg *a) {
  return a->kind == KT_ARG_SCALAR || (a->kind == KT_ARG_SYMBOL && !a->array);
}

/* scalar:set(value): a new value for the next launches. */
static int arg_set(lua_State *L) {
  lk_arg *ua = lk_check_object(L, 1, LK_ARG);
  if (!holds_scalar(ua->a)) luaL_argerror(L, 1, "only a scalar argument has a value to set");
  luaL_checkany(L, 2);
  kt_arg *fresh = make_scalar(L, ua->a->type, 2);
  memcpy(ua->a->bytes, fresh->bytes, ua->a->type->size);
  kt_arg_release(fresh);
  lua_settop(L, 1);
  return 1;
}

static int arg_value(lua_State *L) {
  lk_arg *ua = lk_check_object(L, 1, LK_ARG);
  if (!holds_scalar(ua->a) || ua->a->type->kind == KT_STRUCT) return 0;
  kt_number v = kt_elem_get(ua->a->type->kind, ua->a->bytes);
  if (v.is_int) lua_pushinteger(L, v.i);
  else lua_pushnumber(L, v.f);
  return 1;
}

static int arg_gc(lua_State *L) {
  lk_arg *ua = luaL_checkudata(L, 1, LK_ARG);
  kt_arg_release(ua->a);
  ua->a = NULL;
  return 0;
}

static int arg_tostring(lua_State *L) {
  if (lk_push_released(L, LK_ARG)) return 1;
  lk_arg *ua = lk_check_object(L, 1, LK_ARG);
  char buf[128];
  lua_pushfstring(L, "argument: %s", kt_arg_describe(ua->a, buf, sizeof buf));
  return 1;
}

static int arg_index(lua_State *L) {
  if (lk_push_method(L)) return 1;
  const char *key = luaL_checkstring(L, 2);
  lk_arg *ua = lk_check_object(L, 1, LK_ARG);
  static const char *const kinds[] = {"vector", "scalar", "local", "symbol"};
  if (strcmp(key, "kind") == 0) lua_pushstring(L, kinds[ua->a->kind]);
  else if (strcmp(key, "symbol") == 0 && ua->a->symbol) lua_pushstring(L, ua->a->symbol);
  else if (strcmp(key, "array") == 0 && ua->a->array) lk_push_array(L, ua->a->array);
  else if (strcmp(key, "access") == 0 && ua->a->kind == KT_ARG_VECTOR) lua_pushstring(L, kt_access_name(ua->a->access));
  else if (strcmp(key, "placement") == 0 && ua->a->kind == KT_ARG_VECTOR) lua_pushstring(L, kt_placement_name(ua->a->placement));
  else if (strcmp(key, "value") == 0) return arg_value(L);
  else lua_pushnil(L);
  return 1;
}

void lk_open_arg(lua_State *L) {
  static const luaL_Reg meta[] = {
      {"__gc", arg_gc}, {"__tostring", arg_tostring}, {"__index", arg_index}, {NULL, NULL}};
  static const luaL_Reg fns[] = {{"scalar", l_scalar}, {"localmem", l_localmem},
                                 {"symbol", l_symbol}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"set", arg_set}, {NULL, NULL}};
  static const char *const fields[] = {"kind", "symbol", "array", "access", "placement", "value", NULL};
  static const luaL_Reg array_methods[] = {{"input", array_input}, {"output", array_output},
                                           {"inout", array_inout}, {NULL, NULL}};
  lk_new_class(L, LK_ARG, meta, methods);
  lk_class_methods(L, LK_ARRAY, array_methods); /* lk_array.c is below this file */
  lk_class_fields(L, LK_ARG, fields);
  luaL_setfuncs(L, fns, 0);
  for (int k = 0; k < KT_STRUCT; k++) {
    const char *name = kt_kind_name((kt_kind)k);
    lua_pushstring(L, name);
    lua_pushcclosure(L, l_typed_scalar, 1);
    lua_setfield(L, -2, name);
  }
}
