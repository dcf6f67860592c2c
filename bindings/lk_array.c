/*
** lk_array.c: typed arrays (kt.array) and struct types (kt.struct).
** Elements are indexed from 0, as the kernel sees them.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lk.h"

/* ---- types ---- */

const kt_type *lk_check_type(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *name = lua_tostring(L, idx);
    const kt_type *t = kt_type_by_name(name);
    if (!t)
      luaL_argerror(L, idx, lua_pushfstring(L, "unknown element type '%s' (expected char, "
                                               "uchar, short, ushort, int, uint, long, ulong, "
                                               "half, float, double or a kt.struct)", name));
    return t;
  }
  lk_type *ut = lk_test_object(L, idx, LK_TYPE);
  if (!ut) luaL_typeerror(L, idx, "element type name or kt.struct");
  return ut->t;
}

static void check_field(lua_State *L, int idx, lua_Integer i, kt_field_spec *f) {
  if (lua_rawgeti(L, idx, i) != LUA_TTABLE)
    luaL_error(L, "kt.struct: field %d must be a table {name, type[, count]}", (int)i);
  lua_rawgeti(L, -1, 1);
  lua_rawgeti(L, -2, 2);
  lua_rawgeti(L, -3, 3);
  const char *name = lua_tostring(L, -3), *type = lua_tostring(L, -2);
  const kt_type *t = type ? kt_type_by_name(type) : NULL;
  if (!name || !t)
    luaL_error(L, "kt.struct: field %d needs a name and a scalar type name, e.g. {\"x\", \"float\"}",
               (int)i);
  lua_Integer count = lua_isnil(L, -1) ? 1 : lua_tointeger(L, -1);
  if (count < 1) luaL_error(L, "kt.struct: field '%s' needs a positive count", name);
  *f = (kt_field_spec){name, t->kind, (size_t)count};
  lua_pop(L, 3); /* name, type and count stay reachable through the field table */
}

/* kt.struct(name, {{"x", "float"}, {"pos", "float", 3}, ...}) */
static int l_struct(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_Integer n = luaL_len(L, 2);
  if (n < 1) luaL_argerror(L, 2, "a struct needs at least one field");
  kt_field_spec *fields = lua_newuserdatauv(L, (size_t)n * sizeof *fields, 0);
  for (lua_Integer i = 1; i <= n; i++) {
    check_field(L, 2, i, &fields[i - 1]);
    lua_pop(L, 1);
  }
  kt_error err;
  kt_type *t = kt_type_struct(name, fields, (size_t)n, &err);
  if (!t) return lk_error(L, &err);
  lk_type *ut = lua_newuserdatauv(L, sizeof *ut, 0);
  ut->t = t;
  luaL_setmetatable(L, LK_TYPE);
  return 1;
}

static int type_gc(lua_State *L) {
  lk_type *ut = luaL_checkudata(L, 1, LK_TYPE);
  kt_type_release(ut->t);
  ut->t = NULL;
  return 0;
}

/* The OpenCL C / CUDA declaration with the same layout. */
static int type_declaration(lua_State *L) {
  const kt_type *t = ((lk_type *)lk_check_object(L, 1, LK_TYPE))->t;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "typedef struct %s {\n", t->name);
  luaL_addvalue(&b);
  for (size_t i = 0; i < t->nfields; i++) {
    const kt_field *f = &t->fields[i];
    if (f->count > 1) lua_pushfstring(L, "  %s %s[%d];\n", kt_kind_name(f->kind), f->name, (int)f->count);
    else lua_pushfstring(L, "  %s %s;\n", kt_kind_name(f->kind), f->name);
    luaL_addvalue(&b);
  }
  lua_pushfstring(L, "} %s;\n", t->name);
  luaL_addvalue(&b);
  luaL_pushresult(&b);
  return 1;
}

static int type_index(lua_State *L) {
  if (lk_push_method(L)) return 1;
  const char *key = luaL_checkstring(L, 2);
  const kt_type *t = ((lk_type *)lk_check_object(L, 1, LK_TYPE))->t;
  if (strcmp(key, "name") == 0) lua_pushstring(L, t->name);
  else if (strcmp(key, "size") == 0) lua_pushinteger(L, (lua_Integer)t->size);
  else if (strcmp(key, "fields") == 0) {
    lua_createtable(L, (int)t->nfields, 0);
    for (size_t i = 0; i < t->nfields; i++) {
      lua_createtable(L, 0, 4);
      lua_pushstring(L, t->fields[i].name);
      lua_setfield(L, -2, "name");
      lua_pushstring(L, kt_kind_name(t->fields[i].kind));
      lua_setfield(L, -2, "type");
      lua_pushinteger(L, (lua_Integer)t->fields[i].count);
      lua_setfield(L, -2, "count");
      lua_pushinteger(L, (lua_Integer)t->fields[i].offset);
      lua_setfield(L, -2, "offset");
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
  } else lua_pushnil(L);
  return 1;
}

static int type_tostring(lua_State *L) {
  if (lk_push_released(L, LK_TYPE)) return 1;
  const kt_type *t = ((lk_type *)lk_check_object(L, 1, LK_TYPE))->t;
  lua_pushfstring(L, "struct %s (%d bytes)", t->name, (int)t->size);
  return 1;
}

/* ---- arrays ---- */

kt_array *lk_test_array(lua_State *L, int idx) {
  lk_array *ua = lk_test_object(L, idx, LK_ARRAY);
  return ua ? ua->a : NULL;
}

kt_array *lk_check_array(lua_State *L, int idx) {
  return ((lk_array *)lk_check_object(L, idx, LK_ARRAY))->a;
}

void lk_push_array(lua_State *L, kt_array *a) {
  lk_array *ua = lua_newuserdatauv(L, sizeof *ua, 0);
  ua->a = a;
  kt_array_retain(a);
  luaL_setmetatable(L, LK_ARRAY);
}

/* kt.array(type, n) */
static int l_array(lua_State *L) {
  const kt_type *t = lk_check_type(L, 1);
  lua_Integer n = luaL_checkinteger(L, 2);
  if (n <= 0) luaL_argerror(L, 2, "array length must be positive");
  kt_error err;
  kt_array *a = kt_array_new(t, (size_t)n, &err);
  if (!a) return lk_error(L, &err);
  lk_push_array(L, a);
  kt_array_release(a);
  return 1;
}

static size_t check_index(lua_State *L, const kt_array *a, int idx) {
  lua_Integer i = luaL_checkinteger(L, idx);
  if (i < 0 || (lua_Unsigned)i >= a->length)
    luaL_error(L, "array index %I out of range (0 to %I)", i, (lua_Integer)a->length - 1);
  return (size_t)i;
}

static void push_scalar(lua_State *L, kt_kind kind, const void *p) {
  kt_number v = kt_elem_get(kind, p);
  if (v.is_int) lua_pushinteger(L, v.i);
  else lua_pushnumber(L, v.f);
}

static void set_scalar(lua_State *L, kt_kind kind, void *p, int idx, const char *what) {
  if (lua_isinteger(L, idx)) kt_elem_set_int(kind, p, lua_tointeger(L, idx));
  else if (lua_type(L, idx) == LUA_TNUMBER) kt_elem_set_float(kind, p, lua_tonumber(L, idx));
  else luaL_error(L, "%s: expected a number, got %s", what, luaL_typename(L, idx));
}

static void push_field(lua_State *L, const kt_field *f, const char *elem) {
  size_t size = kt_type_scalar(f->kind)->size;
  if (f->count == 1) {
    push_scalar(L, f->kind, elem + f->offset);
    return;
  }
  lua_createtable(L, (int)f->count, 0);
  for (size_t j = 0; j < f->count; j++) {
    push_scalar(L, f->kind, elem + f->offset + j * size);
    lua_rawseti(L, -2, (lua_Integer)j + 1);
  }
}

static void set_field(lua_State *L, const kt_field *f, char *elem, int idx) {
  size_t size = kt_type_scalar(f->kind)->size;
  if (f->count == 1) {
    set_scalar(L, f->kind, elem + f->offset, idx, f->name);
    return;
  }
  if (!lua_istable(L, idx) || lua_rawlen(L, idx) != f->count)
    luaL_error(L, "field '%s' is %s[%d]: expected a table of %d numbers, got %s", f->name,
               kt_kind_name(f->kind), (int)f->count, (int)f->count,
               lua_istable(L, idx) ? lua_pushfstring(L, "%d values", (int)lua_rawlen(L, idx))
                                   : luaL_typename(L, idx));
  for (size_t j = 0; j < f->count; j++) {
    lua_rawgeti(L, idx, (lua_Integer)j + 1);
    set_scalar(L, f->kind, elem + f->offset + j * size, -1, f->name);
    lua_pop(L, 1);
  }
}

static void push_element(lua_State *L, const kt_array *a, size_t i) {
  const kt_type *t = a->type;
  const char *e = kt_array_at(a, i);
  if (t->kind != KT_STRUCT) {
    push_scalar(L, t->kind, e);
    return;
  }
  lua_createtable(L, 0, (int)t->nfields);
  for (size_t f = 0; f < t->nfields; f++) {
    push_field(L, &t->fields[f], e);
    lua_setfield(L, -2, t->fields[f].name);
  }
}

/* A struct element is set from a table of fields; fields left out keep
** their values. */
static void set_element(lua_State *L, kt_array *a, size_t i, int idx) {
  const kt_type *t = a->type;
  char *e = kt_array_at(a, i);
  if (t->kind != KT_STRUCT) {
    set_scalar(L, t->kind, e, idx, "array element");
    return;
  }
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx))
    luaL_error(L, "an element of struct %s is set from a table of fields", t->name);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    /* "x\0y" is not field x */
    const char *key = lua_type(L, -2) == LUA_TSTRING && !lk_has_nul(L, -2) ? lua_tostring(L, -2)
                                                                          : NULL;
    int f = key ? kt_type_field(t, key) : -1;
    if (f < 0) luaL_error(L, "struct %s has no field %s", t->name, lk_quote(L, -2));
    set_field(L, &t->fields[f], e, -1);
    lua_pop(L, 1);
  }
}

static int array_newindex(lua_State *L) {
  kt_array *a = lk_check_array(L, 1);
  size_t i = check_index(L, a, 2);
  a->changes++;
  set_element(L, a, i, 3);
  return 0;
}

static int array_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)lk_check_array(L, 1)->length);
  return 1;
}

static int array_tostring(lua_State *L) {
  if (lk_push_released(L, LK_ARRAY)) return 1;
  kt_array *a = lk_check_array(L, 1);
  lua_pushfstring(L, "%s[%I]", a->type->name, (lua_Integer)a->length);
  return 1;
}

/* Two Lua values for the same array (a and a:input().array) are equal. */
static int array_eq(lua_State *L) {
  lua_pushboolean(L, lk_test_array(L, 1) == lk_test_array(L, 2));
  return 1;
}

static int array_gc(lua_State *L) {
  lk_array *ua = luaL_checkudata(L, 1, LK_ARRAY);
  kt_array_release(ua->a);
  ua->a = NULL;
  return 0;
}

/* a:fill(value) or a:fill(function(i) return value end) */
static int array_fill(lua_State *L) {
  kt_array *a = lk_check_array(L, 1);
  luaL_checkany(L, 2);
  a->changes++; /* before: a failing function leaves some elements written */
  if (lua_isfunction(L, 2)) {
    for (size_t i = 0; i < a->length; i++) {
      lua_pushvalue(L, 2);
      lua_pushinteger(L, (lua_Integer)i);
      lua_call(L, 1, 1);
      set_element(L, a, i, -1);
      lua_pop(L, 1);
    }
  } else if (a->type->kind != KT_STRUCT && lua_type(L, 2) == LUA_TNUMBER) {
    set_element(L, a, 0, 2);
    for (size_t i = 1; i < a->length; i++)
      memcpy(kt_array_at(a, i), a->data, a->type->size);
  } else {
    for (size_t i = 0; i < a->length; i++) set_element(L, a, i, 2);
  }
  lua_settop(L, 1);
  return 1;
}

static void type_range(kt_kind kind, double *lo, double *hi) {
  static const double ranges[][2] = {
      {-128, 127}, {0, 255}, {-32768, 32767}, {0, 65535},
      {-2147483648.0, 2147483647.0}, {0, 4294967295.0},
      {-9223372036854775808.0, 9223372036854775807.0}, {0, 18446744073709551615.0},
  };
  if (kt_kind_is_float(kind)) {
    *lo = 0;
    *hi = 1;
  } else {
    *lo = ranges[kind][0];
    *hi = ranges[kind][1];
  }
}

/* A bound of a:random: a finite number, for integers within the type's
** range [least, most] (what lies beyond has no element value). */
static double check_bound(lua_State *L, int idx, kt_kind kind, double least, double most) {
  double v = luaL_optnumber(L, idx, idx == 3 ? least : most);
  if (kt_kind_is_float(kind) ? !isfinite(v) : !(v >= least && v <= most))
    luaL_argerror(L, idx, kt_kind_is_float(kind)
                              ? lua_pushfstring(L, "expected a finite number, got %f", v)
                              : lua_pushfstring(L, "expected a number from %f to %f for %s, got %f",
                                                least, most, kt_type_scalar(kind)->name, v));
  return v;
}

/* a:random(seed[, lo, hi]): floats uniform in [lo, hi) (default [0, 1)),
** integers uniform in [lo, hi] (default: the type's whole range). */
static int array_random(lua_State *L) {
  kt_array *a = lk_check_array(L, 1);
  lua_Integer seed = luaL_optinteger(L, 2, 0);
  double lo, hi;
  kt_kind kind = a->type->kind == KT_STRUCT ? KT_FLOAT : a->type->kind;
  type_range(kind, &lo, &hi);
  double least = lo, most = hi;
  lo = check_bound(L, 3, kind, least, most);
  hi = check_bound(L, 4, kind, least, most);
  if (hi < lo) luaL_argerror(L, 4, "upper bound is below the lower bound");
  kt_array_random(a, (uint64_t)seed, lo, hi);
  lua_settop(L, 1);
  return 1;
}

static int array_copy(lua_State *L) {
  kt_array *a = lk_check_array(L, 1);
  kt_error err;
  kt_array *c = kt_array_clone(a, &err);
  if (!c) return lk_error(L, &err);
  lk_push_array(L, c);
  kt_array_release(c);
  return 1;
}

/* a:copy_from(b): the same type and length */
static int array_copy_from(lua_State *L) {
  kt_array *a = lk_check_array(L, 1), *b = lk_check_array(L, 2);
  if (a->type != b->type || a->length != b->length)
    luaL_argerror(L, 2, lua_pushfstring(L, "expected %s[%I], got %s[%I]", a->type->name,
                                        (lua_Integer)a->length, b->type->name,
                                        (lua_Integer)b->length));
  memcpy(a->data, b->data, kt_array_bytes(a));
  a->changes++;
  lua_settop(L, 1);
  return 1;
}

static int array_totable(lua_State *L) {
  kt_array *a = lk_check_array(L, 1);
  lua_createtable(L, (int)a->length, 0);
  for (size_t i = 0; i < a->length; i++) {
    push_element(L, a, i);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static const kt_field *check_field_name(lua_State *L, const kt_array *a, int idx) {
  const char *name = luaL_checkstring(L, idx);
  int f = a->type->kind == KT_STRUCT ? kt_type_field(a->type, name) : -1;
  if (f < 0) luaL_argerror(L, idx, lua_pushfstring(L, "%s has no field '%s'", a->type->name, name));
  return &a->type->fields[f];
}

/* a:get(i, field) and a:set(i, field, value): one field of a struct element. */
static int array_get(lua_State *L) {
  kt_array *a = lk_check_array(L, 1);
  size_t i = check_index(L, a, 2);
  if (lua_isnoneornil(L, 3)) push_element(L, a, i);
  else push_field(L, check_field_name(L, a, 3), kt_array_at(a, i));
  return 1;
}

static int array_set(lua_State *L) {
  kt_array *a = lk_check_array(L, 1);
  size_t i = check_index(L, a, 2);
  const kt_field *f = check_field_name(L, a, 3);
  a->changes++;
  set_field(L, f, kt_array_at(a, i), 4);
  return 0;
}

static int array_index(lua_State *L) {
  if (lk_push_method(L)) return 1;
  kt_array *a = lk_check_array(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    push_element(L, a, check_index(L, a, 2));
    return 1;
  }
  const char *key = luaL_checkstring(L, 2);
  if (strcmp(key, "length") == 0) {
    lua_pushinteger(L, (lua_Integer)a->length);
  } else if (strcmp(key, "type") == 0) {
    lua_pushstring(L, a->type->name);
  } else if (strcmp(key, "bytes") == 0) {
    lua_pushinteger(L, (lua_Integer)kt_array_bytes(a));
  } else {
    lua_pushnil(L);
  }
  return 1;
}

/* lk_arg.c: a:input(), a:output(), a:inout() */

void lk_open_array(lua_State *L) {
  static const luaL_Reg type_meta[] = {
      {"__gc", type_gc}, {"__index", type_index}, {"__tostring", type_tostring}, {NULL, NULL}};
  static const luaL_Reg array_meta[] = {
      {"__index", array_index}, {"__newindex", array_newindex}, {"__len", array_len},
      {"__tostring", array_tostring}, {"__gc", array_gc}, {"__eq", array_eq}, {NULL, NULL}};
  static const luaL_Reg array_methods[] = {
      {"fill", array_fill}, {"random", array_random}, {"copy", array_copy},
      {"copy_from", array_copy_from}, {"totable", array_totable}, {"get", array_get},
      {"set", array_set}, {NULL, NULL}}; /* and input, output, inout: lk_arg.c */
  static const luaL_Reg fns[] = {{"array", l_array}, {"struct", l_struct}, {NULL, NULL}};
  static const luaL_Reg type_methods[] = {{"declaration", type_declaration}, {NULL, NULL}};
  static const char *const type_fields[] = {"name", "size", "fields", NULL};
  static const char *const array_fields[] = {"length", "type", "bytes", NULL};
  lk_new_class(L, LK_TYPE, type_meta, type_methods);
  lk_class_fields(L, LK_TYPE, type_fields);
  lk_new_class(L, LK_ARRAY, array_meta, array_methods);
  lk_class_fields(L, LK_ARRAY, array_fields);
  luaL_setfuncs(L, fns, 0);
}
