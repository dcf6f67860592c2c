/*
** lk_tune_output.c: the tune option output (tuner:tune, tuner:online, a
** fleet's tunings): each file checked before the first configuration, so
** that a bad path loses no results, and the results written when the
** tuning ends, in the format the file's name or the option says.
*/
#include <string.h>

#include "../core/base/atomic_file.h"
#include "lk.h"

/* An item of output at the top of the stack: "a.csv", or {"r.json", "t4"}
** (a file and the format to write it in). */
static const char *output_item(lua_State *L, const char *what, const char **format) {
  *format = NULL;
  if (lua_type(L, -1) == LUA_TSTRING) return lua_tostring(L, -1);
  if (!lua_istable(L, -1)) luaL_error(L, "%s: expected a file name or {file, format}", what);
  lua_rawgeti(L, -1, 1);
  lua_rawgeti(L, -2, 2);
  const char *path = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
  *format = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  lua_pop(L, 2); /* both stay alive in the table */
  if (!path || !*format) luaL_error(L, "%s: expected a file name or {file, format}", what);
  return path;
}

/* Writes the results to output = "file.json", {"a.csv", "a.json"} or
** {{"r.json", "t4"}}. */
static void write_outputs(lua_State *L, int opts, kt_results *r) {
  int t = lk_get_field(L, opts, "output");
  if (t == LUA_TSTRING) {
    lk_results_write(L, r, lua_tostring(L, -1), NULL);
  } else if (t == LUA_TTABLE) {
    for (lua_Integer i = 1; i <= luaL_len(L, -1); i++) {
      lua_rawgeti(L, -1, i);
      const char *format, *path = output_item(L, "tune options.output", &format);
      lk_results_write(L, r, path, format);
      lua_pop(L, 1);
    }
  } else if (t != LUA_TNIL) {
    luaL_error(L, "tune options.output: expected a file name or a list of them");
  }
  lua_pop(L, 1);
}

void lk_tune_write(lua_State *L, int opts, lk_tune_hold *h) {
  if (h->written || !h->results || h->results->n == 0) return;
  h->written = true;
  write_outputs(L, opts, h->results);
}

static void check_output(lua_State *L, const char *path, const char *format, const char *what) {
  kt_error err;
  static const char *const formats[] = {"csv", "json", "t4", "kernel-tuner-cache"};
  bool known = false;
  for (size_t i = 0; format && i < sizeof formats / sizeof *formats; i++)
    known = known || strcmp(format, formats[i]) == 0;
  if (format && !known)
    luaL_error(L, "%s: unknown format '%s' (expected csv, json, t4 or kernel-tuner-cache)", what,
               format);
  if (!format && !lk_results_format(path))
    luaL_error(L, "%s: cannot tell the format of '%s': name it .csv or .json", what, path);
  if (kt_atomic_check(path, &err)) luaL_error(L, "%s: %s", what, err.msg);
}

/* Each file of the output field can be written: found before the first
** configuration, a bad path loses no results. */
void lk_check_outputs(lua_State *L, int opts) {
  int t = lk_get_field(L, opts, "output");
  if (t == LUA_TSTRING) check_output(L, lua_tostring(L, -1), NULL, "tune options.output");
  for (lua_Integer i = 1; t == LUA_TTABLE && i <= luaL_len(L, -1); i++) {
    lua_rawgeti(L, -1, i);
    const char *what = lua_pushfstring(L, "tune options.output[%d]", (int)i);
    lua_insert(L, -2);
    const char *format, *path = output_item(L, what, &format);
    check_output(L, path, format, what);
    lua_pop(L, 2);
  }
  if (t != LUA_TNIL && t != LUA_TSTRING && t != LUA_TTABLE)
    luaL_error(L, "tune options.output: expected a file name or a list of them");
  lua_pop(L, 1);
}
