/*
** lk_json.c: kt.json, JSON for scripts, through the core's own reader
** (json_read.c) and writer (json.c): the ones ktlua's result files use, so
** that there is one JSON in the product and the standalone binary and the
** bundle need no other module.
**   kt.json.decode(text)  -> value (objects and arrays as tables, null as
**                            kt.json.null); errors name line and column
**   kt.json.read(path)    -> value of a file's JSON, gzip-compressed or not
**   kt.json.encode(value) -> text: tables with keys 1..n (n >= 1) are
**                            arrays, other tables objects (keys sorted;
**                            integer keys become strings); an empty table
**                            is {}; kt.json.null is null
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/json.h"
#include "../core/json_read.h"
#include "lk.h"

/* ---- decoding ---- */

static void push_json(lua_State *L, const kt_jvalue *v) {
  luaL_checkstack(L, 4, "JSON nested too deeply");
  switch (v->type) {
    case KT_JNULL: lua_pushlightuserdata(L, NULL); break;
    case KT_JBOOL: lua_pushboolean(L, v->u.b); break;
    case KT_JNUMBER:
      if (v->integer) lua_pushinteger(L, (lua_Integer)v->u.num.i);
      else lua_pushnumber(L, v->u.num.f);
      break;
    case KT_JSTRING: lua_pushlstring(L, v->u.str, v->n); break;
    case KT_JARRAY:
      lua_createtable(L, (int)v->n, 0);
      for (size_t i = 0; i < v->n; i++) {
        push_json(L, &v->u.items[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
      }
      break;
    case KT_JOBJECT:
      lua_createtable(L, 0, (int)v->n);
      for (size_t i = 0; i < v->n; i++) {
        lua_pushlstring(L, v->u.members[i].key, v->u.members[i].key_len);
        push_json(L, &v->u.members[i].value);
        lua_rawset(L, -3);
      }
      break;
  }
}

/* The document is freed even when pushing it runs out of memory. */
static int push_doc(lua_State *L) {
  push_json(L, kt_json_root(lua_touserdata(L, 1)));
  return 1;
}

static int decoded(lua_State *L, kt_jdoc *doc, kt_error *err, const char *fn) {
  if (!doc) return luaL_error(L, "kt.json.%s: %s", fn, err->msg);
  lua_pushcfunction(L, push_doc);
  lua_pushlightuserdata(L, doc);
  int rc = lua_pcall(L, 1, 1, 0);
  kt_json_free(doc);
  if (rc != LUA_OK) return lua_error(L);
  return 1;
}

static int l_decode(lua_State *L) {
  size_t len;
  const char *text = luaL_checklstring(L, 1, &len);
  kt_error err;
  return decoded(L, kt_json_parse(text, len, &err), &err, "decode");
}

static int l_read(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  kt_error err;
  return decoded(L, kt_json_read_file(path, &err), &err, "read");
}

/* ---- encoding ---- */

/* The text goes to a memory stream (the core's writers write to a FILE),
** owned by a userdata so that an error in the middle frees it. */
typedef struct sink {
  FILE *f;
  char *text;
  size_t len;
} sink;

#define LK_JSON_SINK "ktlua.json_sink"

static void sink_close(sink *s) {
  if (s->f) fclose(s->f);
  free(s->text);
  *s = (sink){NULL, NULL, 0};
}

static int sink_gc(lua_State *L) {
  sink_close(luaL_checkudata(L, 1, LK_JSON_SINK));
  return 0;
}

typedef struct encoder {
  lua_State *L;
  FILE *f;
  int depth;
  int seen; /* stack index of the set of tables being written */
} encoder;

static void encode(encoder *e, int idx, const char *where);

static _Noreturn void encode_error(encoder *e, const char *where, const char *what) {
  luaL_error(e->L, "kt.json.encode: %s %s", where, what);
  abort(); /* not reached: luaL_error does not return */
}

static void encode_number(encoder *e, int idx, const char *where) {
  lua_State *L = e->L;
  if (lua_isinteger(L, idx)) {
    fprintf(e->f, LUA_INTEGER_FMT, (LUAI_UACINT)lua_tointeger(L, idx));
    return;
  }
  double x = lua_tonumber(L, idx);
  if (!isfinite(x)) encode_error(e, where, "is not a finite number (JSON has none)");
  kt_json_number(e->f, x);
}

/* n >= 1 when the table's keys are exactly 1..n. */
static lua_Integer array_length(lua_State *L, int idx) {
  lua_Integer n = 0, count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1) {
      lua_pop(L, 1);
      return 0;
    }
    if (lua_tointeger(L, -1) > n) n = lua_tointeger(L, -1);
    count++;
  }
  return n == count ? n : 0;
}

static void encode_array(encoder *e, int idx, lua_Integer n, const char *where) {
  fputc('[', e->f);
  for (lua_Integer i = 1; i <= n; i++) {
    if (i > 1) fputc(',', e->f);
    lua_rawgeti(e->L, idx, i);
    const char *at = lua_pushfstring(e->L, "%s[%I]", where, (LUAI_UACINT)i);
    encode(e, lua_gettop(e->L) - 1, at);
    lua_pop(e->L, 2);
  }
  fputc(']', e->f);
}

static int key_order(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The table's keys as strings, sorted bytewise: a list pushed on the stack. */
static void sorted_keys(encoder *e, int idx, const char *where) {
  lua_State *L = e->L;
  lua_newtable(L);
  int keys = lua_gettop(L);
  lua_Integer n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) lua_pushvalue(L, -1);
    else if (lua_isinteger(L, -1)) lua_pushfstring(L, "%I", (LUAI_UACINT)lua_tointeger(L, -1));
    else encode_error(e, where, lua_pushfstring(L, "has a key of type %s (JSON's are strings)",
                                                luaL_typename(L, -1)));
    lua_rawseti(L, keys, ++n);
  }
  const char **names = lua_newuserdatauv(L, (size_t)n * sizeof *names + 1, 0);
  for (lua_Integer i = 0; i < n; i++) {
    lua_rawgeti(L, keys, i + 1);
    names[i] = lua_tostring(L, -1); /* kept alive by the list */
    lua_pop(L, 1);
  }
  qsort(names, (size_t)n, sizeof *names, key_order);
  lua_newtable(L);
  for (lua_Integer i = 0; i < n; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_replace(L, keys);
  lua_pop(L, 1);
}

/* The value of a key written as a string: the string key, else the
** integer one. */
static void get_member(lua_State *L, int idx, const char *key) {
  lua_getfield(L, idx, key);
  if (!lua_isnil(L, -1)) return;
  lua_pop(L, 1);
  lua_stringtonumber(L, key);
  lua_rawget(L, idx);
}

static void encode_object(encoder *e, int idx, const char *where) {
  lua_State *L = e->L;
  sorted_keys(e, idx, where);
  int keys = lua_gettop(L);
  lua_Integer n = (lua_Integer)lua_rawlen(L, keys);
  fputc('{', e->f);
  for (lua_Integer i = 1; i <= n; i++) {
    if (i > 1) fputc(',', e->f);
    lua_rawgeti(L, keys, i);
    const char *key = lua_tostring(L, -1);
    kt_json_string(e->f, key);
    fputc(':', e->f);
    get_member(L, idx, key);
    const char *at = lua_pushfstring(L, "%s.%s", where, key);
    encode(e, lua_gettop(L) - 1, at);
    lua_pop(L, 3);
  }
  fputc('}', e->f);
  lua_pop(L, 1);
}

static void encode_table(encoder *e, int idx, const char *where) {
  lua_State *L = e->L;
  if (e->depth >= 512) encode_error(e, where, "is nested too deeply");
  luaL_checkstack(L, 8, "JSON nested too deeply");
  lua_pushvalue(L, idx);
  if (lua_rawget(L, e->seen) != LUA_TNIL) encode_error(e, where, "holds itself (JSON has no cycles)");
  lua_pop(L, 1);
  lua_pushvalue(L, idx);
  lua_pushboolean(L, 1);
  lua_rawset(L, e->seen);
  e->depth++;
  lua_Integer n = array_length(L, idx);
  if (n > 0) encode_array(e, idx, n, where);
  else encode_object(e, idx, where);
  e->depth--;
  lua_pushvalue(L, idx);
  lua_pushnil(L);
  lua_rawset(L, e->seen);
}

static void encode(encoder *e, int idx, const char *where) {
  lua_State *L = e->L;
  switch (lua_type(L, idx)) {
    case LUA_TNIL: fputs("null", e->f); break;
    case LUA_TBOOLEAN: fputs(lua_toboolean(L, idx) ? "true" : "false", e->f); break;
    case LUA_TNUMBER: encode_number(e, idx, where); break;
    case LUA_TSTRING: kt_json_string(e->f, lua_tostring(L, idx)); break;
    case LUA_TTABLE: encode_table(e, idx, where); break;
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, idx) == NULL) {
        fputs("null", e->f);
        break;
      }
      /* fall through */
    default:
      encode_error(e, where, lua_pushfstring(L, "is a %s (JSON has none)", luaL_typename(L, idx)));
  }
}

static int l_encode(lua_State *L) {
  luaL_checkany(L, 1);
  lua_settop(L, 1);
  sink *s = lua_newuserdatauv(L, sizeof *s, 0);
  *s = (sink){NULL, NULL, 0};
  luaL_setmetatable(L, LK_JSON_SINK);
  if (!(s->f = open_memstream(&s->text, &s->len))) return luaL_error(L, "kt.json.encode: out of memory");
  lua_newtable(L);
  encoder e = {L, s->f, 0, lua_gettop(L)};
  encode(&e, 1, "the value");
  fclose(s->f);
  s->f = NULL;
  lua_pushlstring(L, s->text, s->len);
  sink_close(s);
  return 1;
}

void lk_open_json(lua_State *L) {
  static const luaL_Reg fns[] = {{"decode", l_decode}, {"encode", l_encode}, {"read", l_read},
                                 {NULL, NULL}};
  luaL_newmetatable(L, LK_JSON_SINK);
  lua_pushcfunction(L, sink_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  lua_newtable(L);
  luaL_setfuncs(L, fns, 0);
  lua_pushlightuserdata(L, NULL);
  lua_setfield(L, -2, "null");
  lua_setfield(L, -2, "json");
}
