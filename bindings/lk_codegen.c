/*
** lk_codegen.c: kernel sources written in Lua per configuration:
**   tuner:kernel{source = function(cfg) return text end, prelude = ... | function(cfg) ...}
** The functions run on the tuning's Lua thread (codegen.h says when); one
** that fails, or returns no string, fails that configuration
** (generator_failed, with the Lua traceback) and the tuning goes on; so
** does one that runs past kernel.generator_limit seconds (10).
*/
#include <string.h>

#include "lk.h"
#include "../core/codegen.h"

#define GENERATOR_LIMIT_S 10.0

/* ---- the time limit ---- */

/* A generator stuck in a loop would hang the tuning with no device to
** time it out: a count hook stops it at its limit, as launchers are
** stopped (lk_run.c). The guard lives on the C stack; the registry points
** the hook to it while the generator runs. */
#define HOOK_INSTRUCTIONS 1000

static const char GUARD_KEY = 'c';

typedef struct gen_guard {
  int64_t deadline;
  double limit_s;
  lua_Hook hook; /* what was set before, restored after */
  int mask, count;
} gen_guard;

static void on_count(lua_State *T, lua_Debug *ar) {
  (void)ar;
  lua_rawgetp(T, LUA_REGISTRYINDEX, &GUARD_KEY);
  gen_guard *g = lua_touserdata(T, -1);
  lua_pop(T, 1);
  if (!g || kt_now_ns() < g->deadline) return;
  luaL_where(T, 0); /* in a hook, level 0 is the Lua code that was running */
  lua_pushfstring(T, "the generator ran past its time limit (%f s)", g->limit_s);
  lua_concat(T, 2);
  lua_error(T);
}

/* Sets the guard, keeping what the registry held (a launcher's run may
** generate a source) on the stack until unguard. */
static void guard(lua_State *T, double limit_s, gen_guard *g) {
  g->limit_s = limit_s;
  g->deadline = kt_now_ns() + (int64_t)(limit_s * 1e9);
  g->hook = lua_gethook(T);
  g->mask = lua_gethookmask(T);
  g->count = lua_gethookcount(T);
  lua_rawgetp(T, LUA_REGISTRYINDEX, &GUARD_KEY);
  lua_pushlightuserdata(T, g);
  lua_rawsetp(T, LUA_REGISTRYINDEX, &GUARD_KEY);
  lua_sethook(T, on_count, LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
}

static void unguard(lua_State *T, int saved, const gen_guard *g) {
  lua_sethook(T, g->hook, g->mask, g->count);
  lua_pushvalue(T, saved);
  lua_rawsetp(T, LUA_REGISTRYINDEX, &GUARD_KEY);
  lua_remove(T, saved);
}

/* ---- generating ---- */

bool lk_codegen_wanted(lua_State *L, int idx) {
  const char *fields[] = {"source", "prelude"};
  int types[2];
  for (int i = 0; i < 2; i++) {
    types[i] = lk_get_field(L, idx, fields[i]);
    lua_pop(L, 1);
  }
  if (types[0] != LUA_TFUNCTION && types[1] != LUA_TFUNCTION) return false;
  for (int i = 0; i < 2; i++)
    if (types[i] != LUA_TNIL && types[i] != LUA_TFUNCTION && types[i] != LUA_TSTRING)
      luaL_error(L, "kernel.%s: expected a string or a function(cfg), got %s", fields[i],
                 lua_typename(L, types[i]));
  return true;
}

/* Calls part (a function of the generator table at gen) with the
** configuration, leaving its text; a string part is its own text. */
static int part_text(lua_State *T, int gen, const void *ud, const char *part,
                     const kt_config *cfg, kt_error *err) {
  int t = lua_getfield(T, gen, part);
  if (t != LUA_TFUNCTION) return 0;
  lua_getfield(T, gen, "name");
  const char *name = lua_tostring(T, -1); /* anchored by the table */
  lua_pop(T, 1);
  lua_getfield(T, gen, "limit");
  double limit_s = lua_tonumber(T, -1);
  lua_pop(T, 1);
  gen_guard g;
  guard(T, limit_s, &g);
  int saved = lua_gettop(T) - 1;
  lua_insert(T, saved); /* the saved guard under the function */
  lk_push_config(T, cfg->space, cfg->vi);
  int rc = lk_ref_call(ud, 1, 1, true, err);
  unguard(T, saved, &g);
  if (rc) return kt_fail_prefix(err, "kernel %s: %s(cfg) failed: ", name, part);
  if (lua_type(T, -1) == LUA_TSTRING) return 0;
  return kt_fail(err, "kernel %s: %s(cfg) returned a %s, expected the source text (a string)",
                 name, part, luaL_typename(T, -1));
}

static int generate(const kt_config *cfg, char **text, void *ud, kt_error *err) {
  lua_State *T = lk_ref_push(ud);
  int top = lua_gettop(T);
  kt_error why;
  if (part_text(T, top, ud, "prelude", cfg, &why) ||
      part_text(T, top, ud, "source", cfg, &why)) {
    lua_settop(T, top - 1);
    *text = strdup(why.msg);
    return 1;
  }
  /* table, prelude or nil, source: as a fixed prelude goes before a source */
  if (lua_isnil(T, -2)) {
    *text = strdup(lua_tostring(T, -1));
  } else {
    lua_pushstring(T, "\n#line 1\n");
    lua_insert(T, -2);
    lua_concat(T, 3);
    *text = strdup(lua_tostring(T, -1));
  }
  lua_settop(T, top - 1);
  return *text ? 0 : kt_fail(err, "out of memory");
}

/* What stands for the source in what identifies the kernel (journals,
** databases): a fixed part's text, or where a function was defined. */
static void push_identity(lua_State *L, int gen) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  const char *parts[] = {"prelude", "source"};
  for (int i = 0; i < 2; i++) {
    int t = lua_getfield(L, gen, parts[i]);
    if (t == LUA_TFUNCTION) {
      lua_Debug ar;
      lua_getinfo(L, ">S", &ar);
      lua_pushfstring(L, "/* %s: generated by the function at %s:%d */\n", parts[i],
                      ar.short_src, ar.linedefined);
    } else if (t == LUA_TNIL) {
      lua_pop(L, 1);
      continue;
    }
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
}

kt_kernel *lk_codegen_kernel(lua_State *L, int idx, const char *name, const char *file_text,
                             kt_error *err) {
  lua_createtable(L, 0, 3);
  int gen = lua_gettop(L);
  lua_pushstring(L, name);
  lua_setfield(L, gen, "name");
  const char *fields[] = {"source", "prelude"};
  for (int i = 0; i < 2; i++) {
    lk_get_field(L, idx, fields[i]); /* checked by lk_codegen_wanted */
    lua_setfield(L, gen, fields[i]);
  }
  if (file_text) {
    lua_pushstring(L, file_text);
    lua_setfield(L, gen, "source");
  }
  lk_get_field(L, idx, "generator_limit");
  lua_Number limit = lua_isnil(L, -1) ? GENERATOR_LIMIT_S : lua_tonumber(L, -1);
  if (!lua_isnil(L, -1) && (!lua_isnumber(L, -1) || !(limit > 0) || limit > 1e6))
    luaL_error(L, "kernel.generator_limit: expected a positive number of seconds");
  lua_pop(L, 1);
  lua_pushnumber(L, limit);
  lua_setfield(L, gen, "limit");
  push_identity(L, gen);
  kt_kernel *k = kt_kernel_new(name, lua_tostring(L, -1), "<generated>", err);
  lua_pop(L, 1);
  if (k && !(k->gen = kt_codegen_new(generate, lk_ref_callback(L, gen), err))) {
    kt_kernel_release(k);
    k = NULL;
  }
  lua_pop(L, 1);
  return k;
}
