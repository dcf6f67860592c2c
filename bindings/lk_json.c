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

#include "../core/base/json.h"
#include "../core/base/json_read.h"
#include "lk.h"

/* ---- decoding ---- */

static void push_json(lua_State *L, const kt_jvalue *v) {
  luaL_checkstack(L, 4, "JSON nested too deeply");
  switch (v->type) {
    case KT_JNULL: lua_pushlightuserdata(L, NULL); break;
    case KT_JBOOL: lua_pushboolean(L, v->u.b); break;
    case KT_JNONFINITE: /* kt_json_parse reads none: only a results file's parser does */
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
        lua_pushlstring(L, v->u.members[i].key, v->u.members[i].keylen);
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

#define LK_JSON_DEPTH 512

/* The encoder recurses for each table, bounded by LK_JSON_DEPTH (and by
** the cycle check). Where a value is, for errors, is the path of keys to
** it, kept as keys (path[1 .. npath]) and written out only for an error:
** building it at each level would cost the square of its length. */
typedef struct encoder {
  lua_State *L;
  FILE *f;
  int depth;
  int seen; /* stack index of the set of tables being written */
  int path; /* stack index of the keys to the value being written */
  lua_Integer npath;
} encoder;

static void encode(encoder *e, int idx);

static _Noreturn void encode_error(encoder *e, const char *what) {
  lua_State *L = e->L;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "kt.json.encode: the value");
  for (lua_Integer i = 1; i <= e->npath; i++) {
    lua_rawgeti(L, e->path, i);
    if (lua_isinteger(L, -1)) {
      lua_pushfstring(L, "[%I]", (LUAI_UACINT)lua_tointeger(L, -1));
    } else {
      lua_pushliteral(L, ".");
      lua_pushvalue(L, -2);
      lua_concat(L, 2);
    }
    lua_remove(L, -2);
    luaL_addvalue(&b);
  }
  luaL_addchar(&b, ' ');
  luaL_addstring(&b, what);
  luaL_pushresult(&b);
  lua_error(L);
  abort(); /* not reached: lua_error does not return */
}

/* Encodes the value on top of the stack, the member `key` (at stack index
** key) of the table being written, and pops it. */
static void encode_member(encoder *e, int key) {
  lua_pushvalue(e->L, key);
  lua_rawseti(e->L, e->path, ++e->npath);
  encode(e, lua_gettop(e->L));
  lua_pop(e->L, 1);
  e->npath--;
}

static void encode_number(encoder *e, int idx) {
  lua_State *L = e->L;
  if (lua_isinteger(L, idx)) {
    fprintf(e->f, LUA_INTEGER_FMT, (LUAI_UACINT)lua_tointeger(L, idx));
    return;
  }
  double x = lua_tonumber(L, idx);
  if (!isfinite(x)) encode_error(e, "is not a finite number (JSON has none)");
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

static void encode_array(encoder *e, int idx, lua_Integer n) {
  lua_State *L = e->L;
  fputc('[', e->f);
  for (lua_Integer i = 1; i <= n; i++) {
    if (i > 1) fputc(',', e->f);
    lua_pushinteger(L, i);
    lua_rawgeti(L, idx, i);
    encode_member(e, lua_gettop(L) - 1);
    lua_pop(L, 1);
  }
  fputc(']', e->f);
}

/* A key's name in JSON, with its length (NUL bytes are part of it), and
** where the table's own key is in the list of keys. */
typedef struct jkey {
  const char *s;
  size_t len;
  lua_Integer at;
} jkey;

static int key_order(const void *a, const void *b) {
  const jkey *x = a, *y = b;
  int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The table's keys sorted bytewise by their names in JSON. Pushes the
** names, the keys and the sorted array (a userdata), in that order. */
static jkey *sorted_keys(encoder *e, int idx, lua_Integer *count) {
  lua_State *L = e->L;
  lua_newtable(L);
  lua_newtable(L);
  int names = lua_gettop(L) - 1, keys = names + 1;
  lua_Integer n = 0;
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
    if (lua_type(L, -2) == LUA_TSTRING) lua_pushvalue(L, -2);
    else if (lua_isinteger(L, -2)) lua_pushfstring(L, "%I", (LUAI_UACINT)lua_tointeger(L, -2));
    else encode_error(e, lua_pushfstring(L, "has a key of type %s (JSON's are strings)",
                                         luaL_typename(L, -2)));
    lua_rawseti(L, names, ++n);
    lua_pushvalue(L, -2);
    lua_rawseti(L, keys, n);
  }
  jkey *k = lua_newuserdatauv(L, (size_t)n * sizeof *k + 1, 0);
  for (lua_Integer i = 0; i < n; i++) {
    lua_rawgeti(L, names, i + 1);
    size_t len;
    const char *name = lua_tolstring(L, -1, &len); /* kept alive by names */
    k[i] = (jkey){name, len, i + 1};
    lua_pop(L, 1);
  }
  qsort(k, (size_t)n, sizeof *k, key_order);
  for (lua_Integer i = 1; i < n; i++)
    if (key_order(&k[i - 1], &k[i]) == 0)
      encode_error(e, lua_pushfstring(L, "has the key %s both as an integer and as a string "
                                         "(one name in JSON)", k[i].s));
  *count = n;
  return k;
}

static void encode_object(encoder *e, int idx) {
  lua_State *L = e->L;
  lua_Integer n;
  jkey *k = sorted_keys(e, idx, &n);
  int names = lua_gettop(L) - 2, keys = names + 1;
  fputc('{', e->f);
  for (lua_Integer i = 0; i < n; i++) {
    if (i > 0) fputc(',', e->f);
    kt_json_lstring(e->f, k[i].s, k[i].len);
    fputc(':', e->f);
    lua_rawgeti(L, names, k[i].at);
    lua_rawgeti(L, keys, k[i].at);
    lua_rawget(L, idx);
    encode_member(e, lua_gettop(L) - 1);
    lua_pop(L, 1);
  }
  fputc('}', e->f);
  lua_pop(L, 3);
}

static void encode_table(encoder *e, int idx) {
  lua_State *L = e->L;
  if (e->depth == LK_JSON_DEPTH)
    encode_error(e, lua_pushfstring(L, "nests tables more than %d deep", LK_JSON_DEPTH));
  luaL_checkstack(L, 16, "JSON nested too deeply");
  lua_pushvalue(L, idx);
  if (lua_rawget(L, e->seen) != LUA_TNIL) encode_error(e, "holds itself (JSON has no cycles)");
  lua_pop(L, 1);
  lua_pushvalue(L, idx);
  lua_pushboolean(L, 1);
  lua_rawset(L, e->seen);
  e->depth++;
  lua_Integer n = array_length(L, idx);
  if (n > 0) encode_array(e, idx, n);
  else encode_object(e, idx);
  e->depth--;
  lua_pushvalue(L, idx);
  lua_pushnil(L);
  lua_rawset(L, e->seen);
}

static void encode(encoder *e, int idx) {
  lua_State *L = e->L;
  size_t len;
  const char *s;
  switch (lua_type(L, idx)) {
    case LUA_TNIL: fputs("null", e->f); break;
    case LUA_TBOOLEAN: fputs(lua_toboolean(L, idx) ? "true" : "false", e->f); break;
    case LUA_TNUMBER: encode_number(e, idx); break;
    case LUA_TSTRING:
      s = lua_tolstring(L, idx, &len);
      kt_json_lstring(e->f, s, len);
      break;
    case LUA_TTABLE: encode_table(e, idx); break;
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, idx) == NULL) {
        fputs("null", e->f);
        break;
      }
      /* fall through */
    default:
      encode_error(e, lua_pushfstring(L, "is a %s (JSON has none)", luaL_typename(L, idx)));
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
  lua_newtable(L);
  encoder e = {L, s->f, 0, lua_gettop(L) - 1, lua_gettop(L), 0};
  encode(&e, 1);
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
