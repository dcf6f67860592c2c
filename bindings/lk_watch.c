/*
** lk_watch.c: the module ktlua.watch, preloaded with ktlua: what the live
** view of a tuning (ktlua.live) needs of the system.
**
**   local watch = require "ktlua.watch"
**   watch.stat(path)        -> size, mtime (seconds), or nil and why
**   watch.held(path)        -> whether a tuning holds the journal at path
**                              now (journal.h; looking takes no lock)
**   watch.now()             -> the time of day, in Unix seconds
**   watch.wait(s[, input])  -> sleeps s seconds; with input, returns early
**                              "quit" when a 'q' arrives on standard input,
**                              "closed" when it ends (nil: s passed)
**   watch.ktlua()           -> the ktlua executable's path (ktlua_exe.h)
**   watch.writable(path)    -> true, or nil and why a file cannot be
**                              written there whole (atomic_file.h)
**   watch.processors()      -> the processors this process may use (cpus.h)
**   watch.start(argv)       -> a follower: argv[1] (a path) started beside
**                              this process (spawn.h: its own process
**                              group, nice 19), its standard input a
**                              connection from here; or nil and why
**   follower:stop([s])      -> sends 'q' and ends its input, then waits at
**                              most s seconds (default 120; then it is
**                              killed): its exit status, or nil and why
**   follower:close()        -> ends its input without 'q' (the follower
**                              then finishes on its own); also when the
**                              object is collected
*/
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/base/atomic_file.h"
#include "../core/base/cpus.h"
#include "../core/base/ktlua_exe.h"
#include "../core/base/spawn.h"
#include "../core/results/journal.h"
#include "lk.h"

#define LK_FOLLOWER "ktlua.follower"

typedef struct follower {
  pid_t pid; /* 0 once waited for */
  int fd;    /* the write end of its input; -1 once closed */
} follower;

static int l_stat(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  struct stat st;
  if (stat(path, &st) != 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "cannot read %s: %s", path, strerror(errno));
    return 2;
  }
  lua_pushinteger(L, (lua_Integer)st.st_size);
  lua_pushnumber(L, (lua_Number)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9);
  return 2;
}

static int l_held(lua_State *L) {
  bool held;
  kt_error err;
  if (kt_journal_held(luaL_checkstring(L, 1), &held, &err)) {
    lua_pushnil(L);
    lua_pushstring(L, err.msg);
    return 2;
  }
  lua_pushboolean(L, held);
  return 1;
}

static int l_now(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + ts.tv_nsec / 1e9);
  return 1;
}

/* Sleeps (poll with no descriptor, or standard input's) s seconds, less
** when input arrives; interrupted sleeps go on for what is left. */
static int l_wait(lua_State *L) {
  lua_Number s = luaL_checknumber(L, 1);
  bool input = lua_toboolean(L, 2);
  if (!(s >= 0 && s <= KT_SECONDS_MAX)) return luaL_argerror(L, 1, "expected 0 to 1e9 seconds");
  int64_t end = kt_now_ns() + (int64_t)(s * 1e9);
  struct pollfd p = {STDIN_FILENO, POLLIN, 0};
  for (;;) {
    int64_t left = end - kt_now_ns();
    if (left <= 0) return 0;
    int rc = poll(input ? &p : NULL, input ? 1 : 0, (int)((left + 999999) / 1000000));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0 || !input) continue;
    char c;
    ssize_t n = read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n == 1 && c != 'q') continue; /* anything else is no word */
    lua_pushstring(L, n == 1 ? "quit" : "closed");
    return 1;
  }
}

static int l_ktlua(lua_State *L) {
  char path[4096], why[512];
  if (kt_ktlua_exe(path, sizeof path, why, sizeof why)) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
  }
  lua_pushstring(L, path);
  return 1;
}

static int l_writable(lua_State *L) {
  kt_error err;
  if (kt_atomic_check(luaL_checkstring(L, 1), &err)) {
    lua_pushnil(L);
    lua_pushstring(L, err.msg);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int l_processors(lua_State *L) {
  lua_pushinteger(L, kt_cpus_usable());
  return 1;
}

static void end_input(follower *f) {
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
}

static int l_start(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer n = luaL_len(L, 1);
  if (n < 1 || n > 64) return luaL_argerror(L, 1, "a list with the program and its arguments");
  const char *argv[65];
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_geti(L, 1, i) != LUA_TSTRING)
      return luaL_error(L, "bad argument #1 to 'start' (item %d is not a string)", (int)i);
    argv[i - 1] = lua_tostring(L, -1); /* anchored by the list */
    lua_pop(L, 1);
  }
  argv[n] = NULL;
  follower *f = lua_newuserdatauv(L, sizeof *f, 0);
  f->pid = 0;
  f->fd = -1;
  luaL_setmetatable(L, LK_FOLLOWER);
  int fds[2]; /* a socket pair: a word sent to a follower gone raises no SIGPIPE */
  kt_error err;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "cannot start %s: %s", argv[0], strerror(errno));
    return 2;
  }
  int rc = kt_spawn_background(argv, fds[0], &f->pid, &err);
  close(fds[0]);
  if (rc) {
    close(fds[1]);
    f->pid = 0;
    lua_pushnil(L);
    lua_pushstring(L, err.msg);
    return 2;
  }
  f->fd = fds[1];
  return 1;
}

static int follower_stop(lua_State *L) {
  follower *f = luaL_checkudata(L, 1, LK_FOLLOWER);
  lua_Number s = luaL_optnumber(L, 2, 120);
  if (f->fd >= 0) { /* a follower gone already: nothing to tell */
    ssize_t n;
    do n = send(f->fd, "q", 1, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
  }
  end_input(f);
  if (!f->pid) return luaL_error(L, "the follower has been waited for");
  int code = kt_spawn_wait(f->pid, s);
  f->pid = 0;
  if (code < 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "the live view's process did not finish within %f s (killed)", s);
    return 2;
  }
  lua_pushinteger(L, code);
  return 1;
}

/* Ends its input; reaps it if it has finished (else the system does, when
** this process ends). */
static int follower_close(lua_State *L) {
  follower *f = luaL_checkudata(L, 1, LK_FOLLOWER);
  end_input(f);
  if (f->pid && waitpid(f->pid, NULL, WNOHANG) == f->pid) f->pid = 0;
  return 0;
}

static int open_watch(lua_State *L) {
  static const luaL_Reg methods[] = {{"stop", follower_stop}, {"close", follower_close}, {NULL, NULL}};
  if (luaL_newmetatable(L, LK_FOLLOWER)) {
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, follower_close);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {{"stat", l_stat},   {"held", l_held},   {"now", l_now},
                                 {"wait", l_wait},   {"ktlua", l_ktlua}, {"start", l_start},
                                 {"writable", l_writable}, {"processors", l_processors},
                                 {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}

void lk_open_watch(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, open_watch);
  lua_setfield(L, -2, "ktlua.watch");
  lua_pop(L, 1);
}
