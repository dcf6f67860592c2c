/*
** prompt.c: the lines of ktlua's prompt. On a terminal, GNU readline edits
** them, keeps their history between sessions (a bounded file in the home
** folder, each line appended as it is read) and completes names with Tab (ktlua.complete, in Lua); without a
** terminal, lines of any length are read as they come.
*/
#include "prompt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <readline/history.h>
#include <readline/readline.h>

#define HISTORY_LINES 1000

/* readline's completion hook takes no argument of the caller's: the Lua
** state that completes is kept here while the prompt runs. */
static lua_State *completing;

struct prompt {
  bool terminal;
  char *history; /* the history file, or NULL */
};

/* What Tab inserts for matches m[1..n]: their longest common prefix, as
** readline's own completers do (kt.devi becomes kt.device, the part of
** kt.device and kt.devices both share). */
static char *common_prefix(char **m, size_t n) {
  size_t len = strlen(m[1]);
  for (size_t i = 2; i <= n; i++) {
    size_t k = 0;
    while (k < len && m[i][k] == m[1][k]) k++;
    len = k;
  }
  return strndup(m[1], len);
}

/* readline's form of the n strings of the Lua list on top: what to insert
** first, then the matches, then NULL; NULL when there are none or memory
** runs out. */
static char **match_list(lua_State *L, size_t n) {
  char **out = n ? calloc(n + 2, sizeof *out) : NULL;
  bool whole = out != NULL;
  for (size_t i = 0; whole && i < n; i++) {
    lua_rawgeti(L, -1, (lua_Integer)i + 1);
    out[i + 1] = strdup(lua_tostring(L, -1) ? lua_tostring(L, -1) : "");
    whole = out[i + 1] != NULL;
    lua_pop(L, 1);
  }
  if (whole) whole = (out[0] = common_prefix(out, n)) != NULL;
  if (whole || !out) return out;
  for (size_t i = 0; i <= n; i++) free(out[i]);
  free(out);
  return NULL;
}

/* The candidates for text, from ktlua.complete (a Lua list). */
static char **candidates(const char *text, int start, int end) {
  (void)start, (void)end;
  lua_State *L = completing;
  rl_attempted_completion_over = 1; /* no file names */
  int top = lua_gettop(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "ktlua.complete");
  char **out = NULL;
  int ok = lua_pcall(L, 1, 1, 0) == LUA_OK;
  lua_pushstring(L, text);
  if (ok && lua_pcall(L, 1, 1, 0) == LUA_OK && lua_istable(L, -1))
    out = match_list(L, (size_t)lua_rawlen(L, -1));
  lua_settop(L, top);
  return out;
}

/* The history so far, and the file made where there is none: each line is
** appended to it as it is read (prompt_read), which GNU readline does only
** to a file that exists. */
static void open_history(const char *path) {
  read_history(path);
  history_truncate_file(path, HISTORY_LINES);
  FILE *f = fopen(path, "a");
  if (f) fclose(f);
}

prompt *prompt_open(lua_State *L) {
  prompt *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->terminal = isatty(0) && isatty(1);
  if (!p->terminal) return p;
  completing = L;
  rl_readline_name = "ktlua";
  rl_attempted_completion_function = candidates;
  /* Tab inserts what the candidates share; a Tab that can add nothing lists
  ** them (an inputrc, read later, may say otherwise). */
  rl_variable_bind("show-all-if-unmodified", "on");
  rl_basic_word_break_characters = " \t\n\"'`@$><=;|&{(,+-*/%^#~[]";
  const char *file = getenv("KTLUA_HISTORY"), *home = getenv("HOME");
  if (file && file[0]) {
    p->history = strdup(file);
  } else if (home && home[0] && (p->history = malloc(strlen(home) + 32))) {
    sprintf(p->history, "%s/.ktlua_history", home);
  }
  stifle_history(HISTORY_LINES);
  if (p->history) open_history(p->history);
  return p;
}

/* A line of any length from a file or pipe. */
static bool read_plain(lua_State *L) {
  luaL_Buffer b;
  char chunk[4096];
  bool any = false;
  luaL_buffinit(L, &b);
  while (fgets(chunk, sizeof chunk, stdin)) {
    size_t len = strlen(chunk);
    any = true;
    bool ends = len && chunk[len - 1] == '\n';
    luaL_addlstring(&b, chunk, ends ? len - 1 : len);
    if (ends) break;
  }
  luaL_pushresult(&b);
  if (!any) lua_pop(L, 1);
  return any;
}

bool prompt_read(prompt *p, lua_State *L, const char *text) {
  if (!p->terminal) return read_plain(L);
  char *line = readline(text);
  if (!line) return false;
  /* Kept at once: os.exit() or a signal ends the process without
  ** prompt_close. */
  if (line[0]) {
    add_history(line);
    if (p->history) append_history(1, p->history);
  }
  lua_pushstring(L, line);
  free(line);
  return true;
}

void prompt_close(prompt *p) {
  if (!p) return;
  if (p->history) history_truncate_file(p->history, HISTORY_LINES);
  if (p->terminal) {
    clear_history();
    completing = NULL;
  }
  free(p->history);
  free(p);
}
