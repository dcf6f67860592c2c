/*
** lk_mpi.c: kt.mpi(): the MPI job this process belongs to (core/multi/mpi.h).
*/
#include <string.h>

#include "../core/multi/mpi.h"
#include "lk.h"

static void push_ranks(lua_State *L) {
  lua_createtable(L, kt_mpi_size() - 1, 0);
  for (int r = 1; r < kt_mpi_size(); r++) {
    kt_mpi_node node;
    lua_createtable(L, 0, 6);
    lua_pushinteger(L, r);
    lua_setfield(L, -2, "rank");
    lua_pushinteger(L, kt_mpi_local_rank(r));
    lua_setfield(L, -2, "local_rank");
    if (kt_mpi_peer(r, &node) == 0) {
      lua_pushinteger(L, node.pid);
      lua_setfield(L, -2, "pid");
      lua_pushstring(L, node.host);
      lua_setfield(L, -2, "host");
      lua_pushinteger(L, node.cpus);
      lua_setfield(L, -2, "cpus");
      lua_pushboolean(L, node.alive);
      lua_setfield(L, -2, "alive");
    }
    lua_rawseti(L, -2, r);
  }
}

/* kt.mpi() -> {built, library, size, rank, host, cpus,
**              ranks = {[r] = {rank, local_rank, pid, host, cpus, alive}}} */
static int l_mpi(lua_State *L) {
  kt_mpi_node me;
  kt_mpi_peer(0, &me);
  lua_createtable(L, 0, 7);
  lua_pushstring(L, me.host);
  lua_setfield(L, -2, "host");
  lua_pushinteger(L, me.cpus);
  lua_setfield(L, -2, "cpus");
  lua_pushboolean(L, kt_mpi_built());
  lua_setfield(L, -2, "built");
  lua_pushstring(L, kt_mpi_describe());
  lua_setfield(L, -2, "library");
  lua_pushinteger(L, kt_mpi_size());
  lua_setfield(L, -2, "size");
  lua_pushinteger(L, kt_mpi_rank());
  lua_setfield(L, -2, "rank");
  push_ranks(L);
  lua_setfield(L, -2, "ranks");
  return 1;
}

void lk_push_mpi_devices(lua_State *L, int idx) {
  char buf[128];
  const char *what = lk_device_spec(L, idx, buf, sizeof buf);
  size_t n;
  const char *why;
  const kt_device_info *list = lk_device_list(L, &n, &why);
  int *picked = lua_newuserdatauv(L, sizeof *picked * (size_t)kt_mpi_size(), 0);
  kt_error err;
  if (kt_mpi_pick(list, n, what, picked, &err)) {
    if (why[0]) luaL_error(L, "%s (%s)", err.msg, why); /* as lk_check_device says it */
    lk_error(L, &err);
  }
  lua_createtable(L, kt_mpi_size(), 0);
  for (int r = 0; r < kt_mpi_size(); r++) {
    lua_pushstring(L, list[picked[r]].id);
    lua_rawseti(L, -2, r + 1);
  }
  lua_remove(L, -2);
}

bool lk_mpi_spreads(lua_State *L, int idx) {
  if (kt_mpi_size() <= 1 || lk_is_device_set(L, idx)) return false;
  if (lua_type(L, idx) == LUA_TTABLE) return false; /* a device table names one device */
  char buf[128];
  return strncmp(lk_device_spec(L, idx, buf, sizeof buf), "mpi:", 4) != 0;
}

/* kt.mpi_devices([device]) -> {id of rank 0's, id of rank 1's, ...} */
static int l_mpi_devices(lua_State *L) {
  lk_push_mpi_devices(L, 1);
  return 1;
}

void lk_open_mpi(lua_State *L) {
  lua_pushcfunction(L, l_mpi);
  lua_setfield(L, -2, "mpi");
  lua_pushcfunction(L, l_mpi_devices);
  lua_setfield(L, -2, "mpi_devices");
}
