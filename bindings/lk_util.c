/*
** lk_util.c: the binding's shared helpers: errors, classes, option
** tables, values, configurations and callback references.
*/
#include <stdlib.h>
#include <string.h>

#include "lk.h"

int lk_error(lua_State *L, const kt_error *err) { return luaL_error(L, "%s", err->msg); }

int lk_push_stdlib(lua_State *L, const char *module, const char *field) {
  lua_getglobal(L, "require");
  lua_pushstring(L, module);
  lua_call(L, 1, 1);
  int type = lua_getfield(L, -1, field);
  lua_remove(L, -2);
  return type;
}

void lk_new_class(lua_State *L, const char *name, const luaL_Reg *meta,
                  const luaL_Reg *methods) {
  luaL_newmetatable(L, name);
  if (meta) luaL_setfuncs(L, meta, 0);
  lua_pushstring(L, name);
  lua_setfield(L, -2, "__name");
  lua_getfield(L, -1, "__index");
  bool custom_index = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (methods) {
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    /* With a custom __index, methods sit in the metatable's "methods". */
    lua_setfield(L, -2, custom_index ? "methods" : "__index");
  }
  lua_pop(L, 1);
}

void lk_class_fields(lua_State *L, const char *name, const char *const *fields) {
  luaL_getmetatable(L, name);
  lua_newtable(L);
  for (int i = 0; fields[i]; i++) {
    lua_pushstring(L, fields[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "fields");
  lua_pop(L, 1);
}

void lk_class_methods(lua_State *L, const char *name, const luaL_Reg *methods) {
  luaL_getmetatable(L, name);
  if (lua_getfield(L, -1, "methods") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_getfield(L, -1, "__index");
  }
  luaL_setfuncs(L, methods, 0);
  lua_pop(L, 2);
}

void *lk_new_guarded(lua_State *L, size_t size, lua_CFunction gc) {
  void *p = lua_newuserdatauv(L, size, 0);
  memset(p, 0, size);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  return p;
}

/* ---- objects ---- */

/* How a released object of each class is named: "array has been released",
** "tuner has been closed", "array (released)". */
typedef struct kind { const char *cls, *noun, *verb, *state; } kind;

static const kind *kind_of(const char *cls) {
  static const kind kinds[] = {
      {LK_ARRAY, "array", "has", "released"},     {LK_TYPE, "struct type", "has", "released"},
      {LK_ARG, "argument", "has", "released"},    {LK_TASK, "kernel", "has", "released"},
      {LK_SPACE, "space view", "has", "released"}, {LK_RESULTS, "results", "have", "released"},
      {LK_REPLAY, "replay", "has", "released"},   {LK_TUNER, "tuner", "has", "closed"}};
  for (size_t k = 0; cls && k < sizeof kinds / sizeof kinds[0]; k++)
    if (strcmp(kinds[k].cls, cls) == 0) return &kinds[k];
  return NULL;
}

const char *lk_released(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TUSERDATA || !luaL_getmetafield(L, idx, "__name")) return NULL;
  const kind *k = kind_of(lua_tostring(L, -1));
  lua_pop(L, 1);
  if (!k || *(void **)lua_touserdata(L, idx)) return NULL;
  return lua_pushfstring(L, "%s %s been %s", k->noun, k->verb, k->state);
}

/* A released object is an argument error when it is an argument, a plain
** error when it comes from a table (whose callers name it first). */
static void *live(lua_State *L, int idx, void *ud) {
  const char *dead = ud ? lk_released(L, idx) : NULL;
  if (dead && idx > 0) luaL_argerror(L, idx, dead);
  if (dead) luaL_error(L, "%s", dead);
  return ud;
}

void *lk_check_object(lua_State *L, int idx, const char *cls) {
  return live(L, idx, luaL_checkudata(L, idx, cls));
}

void *lk_test_object(lua_State *L, int idx, const char *cls) {
  return live(L, idx, luaL_testudata(L, idx, cls));
}

bool lk_push_method(lua_State *L) {
  if (lua_type(L, 2) != LUA_TSTRING || luaL_getmetafield(L, 1, "methods") == LUA_TNIL)
    return false;
  if (lua_getfield(L, -1, lua_tostring(L, 2)) == LUA_TNIL) {
    lua_pop(L, 2);
    return false;
  }
  lua_remove(L, -2);
  return true;
}

bool lk_push_released(lua_State *L, const char *cls) {
  void **ud = luaL_checkudata(L, 1, cls);
  if (*ud) return false;
  const kind *k = kind_of(cls);
  lua_pushfstring(L, "%s (%s)", k ? k->noun : cls, k ? k->state : "released");
  return true;
}

/* ---- option tables ---- */

void lk_check_keys(lua_State *L, int idx, const char *what, const char *const *allowed) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    bool known = false;
    if (lua_type(L, -1) == LUA_TSTRING) {
      const char *key = lua_tostring(L, -1);
      for (const char *const *a = allowed; *a && !known; a++) known = strcmp(*a, key) == 0;
    } else if (lua_isinteger(L, -1)) {
      for (const char *const *a = allowed; *a && !known; a++) known = strcmp(*a, "[n]") == 0;
    }
    if (!known) {
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      for (const char *const *a = allowed; *a; a++) {
        if (strcmp(*a, "[n]") == 0) continue;
        if (a != allowed) luaL_addstring(&b, ", ");
        luaL_addstring(&b, *a);
      }
      luaL_pushresult(&b);
      const char *expected = lua_tostring(L, -1);
      const char *key = luaL_tolstring(L, -2, NULL);
      luaL_error(L, "%s: unknown field '%s' (expected one of: %s)", what, key, expected);
    }
  }
}

const char *lk_check_text(lua_State *L, int arg) {
  size_t len;
  const char *s = luaL_checklstring(L, arg, &len);
  const char *nul = memchr(s, '\0', len);
  if (nul)
    luaL_argerror(L, arg, lua_pushfstring(L, "holds a NUL byte at character %d (C strings end "
                                             "there)", (int)(nul - s) + 1));
  return s;
}

bool lk_has_nul(lua_State *L, int idx) {
  size_t len;
  const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
  return s && memchr(s, '\0', len) != NULL;
}

const char *lk_quote(lua_State *L, int idx) {
  size_t len;
  if (lua_type(L, idx) != LUA_TSTRING) return luaL_tolstring(L, idx, NULL);
  const char *s = lua_tolstring(L, idx, &len);
  size_t size = (len < 4096 ? len : 4096) * 6 + 16; /* every byte \u00XX, quotes, "..." */
  char *buf = lua_newuserdatauv(L, size, 0);
  lua_pushstring(L, kt_quote(s, len, buf, size));
  lua_remove(L, -2);
  return lua_tostring(L, -1);
}

int lk_get_field(lua_State *L, int idx, const char *field) {
  if (lua_isnoneornil(L, idx)) {
    lua_pushnil(L);
    return LUA_TNIL;
  }
  return lua_getfield(L, idx, field);
}

static void wrong_type(lua_State *L, const char *what, const char *field, const char *want) {
  luaL_error(L, "%s.%s: expected %s, got %s", what, field, want, luaL_typename(L, -1));
}

lua_Integer lk_opt_integer(lua_State *L, int idx, const char *what, const char *field,
                           lua_Integer dflt) {
  lua_Integer v = dflt;
  if (lk_get_field(L, idx, field) != LUA_TNIL) {
    int ok;
    v = lua_tointegerx(L, -1, &ok);
    if (!ok) wrong_type(L, what, field, "an integer");
  }
  lua_pop(L, 1);
  return v;
}

lua_Number lk_opt_number(lua_State *L, int idx, const char *what, const char *field,
                         lua_Number dflt) {
  lua_Number v = dflt;
  if (lk_get_field(L, idx, field) != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TNUMBER) wrong_type(L, what, field, "a number");
    v = lua_tonumber(L, -1);
  }
  lua_pop(L, 1);
  return v;
}

/* The string stays valid while the option table is alive. */
const char *lk_opt_string(lua_State *L, int idx, const char *what, const char *field,
                          const char *dflt) {
  const char *v = dflt;
  if (lk_get_field(L, idx, field) != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TSTRING) wrong_type(L, what, field, "a string");
    v = lua_tostring(L, -1);
  }
  lua_pop(L, 1);
  return v;
}

int lk_opt_boolean(lua_State *L, int idx, const char *what, const char *field, int dflt) {
  int v = dflt;
  if (lk_get_field(L, idx, field) != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TBOOLEAN) wrong_type(L, what, field, "a boolean");
    v = lua_toboolean(L, -1);
  }
  lua_pop(L, 1);
  return v;
}

/* ---- values ---- */

void lk_push_value(lua_State *L, const kt_value *v) {
  switch (v->type) {
    case KT_VINT:
      if (v->boolean) lua_pushboolean(L, v->u.i != 0);
      else lua_pushinteger(L, v->u.i);
      break;
    case KT_VFLOAT: lua_pushnumber(L, v->u.f); break;
    case KT_VSTRING: lua_pushstring(L, v->u.s); break;
  }
}

/* The string of a KT_VSTRING points into the Lua string (valid while it
** stays on the stack); the core copies what it keeps. */
bool lk_to_value(lua_State *L, int idx, kt_value *v) {
  v->boolean = false;
  switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN:
      v->type = KT_VINT;
      v->u.i = lua_toboolean(L, idx);
      v->boolean = true;
      return true;
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        v->type = KT_VINT;
        v->u.i = lua_tointeger(L, idx);
      } else {
        v->type = KT_VFLOAT;
        v->u.f = lua_tonumber(L, idx);
      }
      return true;
    case LUA_TSTRING:
      v->type = KT_VSTRING;
      v->u.s = (char *)lua_tostring(L, idx);
      return true;
    default:
      return false;
  }
}

void lk_push_config(lua_State *L, const kt_space *space, const uint32_t *vi) {
  size_t n = kt_space_nparams(space);
  lua_createtable(L, 0, (int)n);
  for (size_t p = 0; p < n; p++) {
    const kt_param *par = kt_space_param(space, p);
    lk_push_value(L, &par->values[vi[p]]);
    lua_setfield(L, -2, par->name);
  }
}

/* The first values of p, as messages show them (strings quoted). */
static void push_value_list(lua_State *L, const kt_param *p) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (size_t i = 0; i < p->nvalues && i < 16; i++) {
    if (i) luaL_addstring(&b, ", ");
    lk_push_value(L, &p->values[i]);
    lk_quote(L, -1);
    lua_remove(L, -2);
    luaL_addvalue(&b);
  }
  if (p->nvalues > 16) luaL_addstring(&b, ", ...");
  luaL_pushresult(&b);
}

const char *lk_to_config(lua_State *L, int idx, const kt_space *space, uint32_t *vi) {
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L); /* the first value that is not one of its parameter's */
  int reason = lua_gettop(L);
  size_t n = kt_space_nparams(space);
  for (size_t p = 0; p < n; p++) {
    const kt_param *par = kt_space_param(space, p);
    kt_value v;
    lua_getfield(L, idx, par->name);
    if (lua_isnil(L, -1)) luaL_error(L, "configuration has no value for parameter %s", par->name);
    if (!lk_to_value(L, -1, &v))
      luaL_error(L, "configuration: %s must be a number or a string", par->name);
    size_t i = lk_has_nul(L, -1) ? par->nvalues : 0; /* values hold no NUL byte */
    while (i < par->nvalues && !kt_value_equal(&par->values[i], &v)) i++;
    if (i == par->nvalues && lua_isnil(L, reason)) {
      const char *given = lk_quote(L, -1);
      push_value_list(L, par);
      lua_pushfstring(L, "%s = %s is not one of its values (%s)", par->name, given,
                      lua_tostring(L, -1));
      lua_replace(L, reason);
      lua_pop(L, 2);
    }
    vi[p] = (uint32_t)(i < par->nvalues ? i : 0);
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING || lk_has_nul(L, -1) ||
        kt_space_find(space, lua_tostring(L, -1)) < 0) /* "WG\0x" is not WG */
      luaL_error(L, "configuration names unknown parameter %s", lk_quote(L, -1));
  }
  return lua_tostring(L, reason);
}

void lk_check_config(lua_State *L, int idx, const kt_space *space, uint32_t *vi) {
  const char *reason = lk_to_config(L, idx, space, vi);
  if (reason) luaL_error(L, "configuration: %s", reason);
  lua_pop(L, 1);
}

void lk_push_count(lua_State *L, uint64_t n) {
  if (n <= (uint64_t)LUA_MAXINTEGER) lua_pushinteger(L, (lua_Integer)n);
  else lua_pushnumber(L, (lua_Number)n);
}

void lk_push_sizes(lua_State *L, const size_t *v, int dims) {
  lua_createtable(L, dims, 0);
  for (int d = 0; d < dims; d++) {
    lua_pushinteger(L, (lua_Integer)v[d]);
    lua_rawseti(L, -2, d + 1);
  }
}

/* ---- callbacks ---- */

static const char CBTHREAD_KEY = 'k';

lua_State *lk_callback_thread(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &CBTHREAD_KEY);
  lua_State *T = lua_tothread(L, -1);
  lua_pop(L, 1);
  if (!T) {
    T = lua_newthread(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &CBTHREAD_KEY);
  }
  return T;
}

/* A tuning over several devices runs callbacks on a thread per device,
** one at a time (core/multi/fleet.h), each on a Lua thread of its own, so that
** no device's Lua frames ever lie under another's. Which one is the OS
** thread's: thread-local, as it can only be. */
static _Thread_local lua_State *own_thread;

void lk_set_callback_thread(lua_State *T) { own_thread = T; }

static lua_State *thread_of(const lk_ref *r) { return own_thread ? own_thread : r->thread; }

lua_State *lk_running_callback_thread(lua_State *L) {
  return own_thread ? own_thread : lk_callback_thread(L);
}

lk_ref *lk_ref_new(lua_State *L, int idx) {
  lk_ref *r = malloc(sizeof *r);
  if (!r) luaL_error(L, "out of memory");
  lua_pushvalue(L, idx);
  r->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  r->thread = lk_callback_thread(L);
  return r;
}

void lk_ref_free(void *ud) {
  lk_ref *r = ud;
  if (!r) return;
  luaL_unref(r->thread, LUA_REGISTRYINDEX, r->ref);
  free(r);
}

kt_callback lk_ref_callback(lua_State *L, int idx) {
  return (kt_callback){lk_ref_new(L, idx), lk_ref_free};
}

lua_State *lk_ref_push(const lk_ref *r) {
  lua_State *T = thread_of(r);
  luaL_checkstack(T, 32, "ktlua callback");
  lua_rawgeti(T, LUA_REGISTRYINDEX, r->ref);
  return T;
}

/* Keeps the message and adds a traceback, so that an error in a callback
** says where it happened even when the message has no position. */
static int traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (!msg) msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  luaL_traceback(L, L, msg, 1);
  return 1;
}

int lk_ref_call(const lk_ref *r, int nargs, int nresults, bool with_traceback,
                kt_error *err) {
  lua_State *T = thread_of(r);
  int base = lua_gettop(T) - nargs;
  if (with_traceback) lua_pushcfunction(T, traceback);
  else lua_pushnil(T);
  lua_insert(T, base);
  int rc = lua_pcall(T, nargs, nresults, with_traceback ? base : 0);
  lua_remove(T, base);
  if (rc != LUA_OK) {
    kt_fail(err, "%s", lua_tostring(T, -1));
    lua_pop(T, 1);
    return -1;
  }
  return 0;
}

int lk_ref_protect(const lk_ref *r, lua_CFunction body, void *ud, kt_error *err) {
  lua_State *T = thread_of(r);
  int base = lua_gettop(T);
  if (!lua_checkstack(T, 8)) return kt_fail(err, "the callback thread's stack is full");
  lua_pushcfunction(T, traceback);
  lua_pushcfunction(T, body);
  lua_pushlightuserdata(T, ud);
  int rc = lua_pcall(T, 1, 0, base + 1);
  if (rc != LUA_OK) kt_fail(err, "%s", lua_tostring(T, -1));
  lua_settop(T, base);
  return rc == LUA_OK ? 0 : -1;
}

/* ---- argument lists ---- */

/* Arguments being collected, released by the garbage collector if an
** error interrupts the collection. */
static int scratch_args_gc(lua_State *L) {
  size_t n = lua_rawlen(L, 1) / sizeof(kt_arg *);
  kt_arg **args = lua_touserdata(L, 1);
  for (size_t i = 0; i < n; i++) kt_arg_release(args[i]);
  return 0;
}

kt_arg **lk_scratch_args(lua_State *L, size_t n) {
  return lk_new_guarded(L, (n ? n : 1) * sizeof(kt_arg *), scratch_args_gc);
}

