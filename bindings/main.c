/*
** main.c: the ktlua executable: runs a tuning script, lists devices, or
** gives a REPL with the module loaded as `kt`.
*/
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "../core/device/compile_pool.h"
#include "../core/base/ktlua_exe.h"
#include "../core/multi/mpi.h"
#include "prompt.h"
#include "version.h"

int luaopen_ktlua(lua_State *L);
void lk_preload_stdlib(lua_State *L); /* bindings/ktlua.c */

static const char *const usage =
    "usage: ktlua [options] [script.lua [args...]]\n"
    "       ktlua db export [--format=header|json|lua] [-o FILE] DB\n"
    "       ktlua db recheck DB [--device=ID] [--all] [--retune] [--noise=X]\n"
    "       ktlua db store DB FILE... [--kernel=NAME] [--device=NAME] [--backend=B]\n"
    "                [--size=x=N,...] [--top=N]\n"
    "       ktlua report [-o PAGE] [--png] [--top=N] [--timeout=S]\n"
    "                    [--objective=NAME [--maximize]] RESULTS\n"
    "       ktlua report --follow JOURNAL [-o PAGE] [--count=N] [--seconds=S] ...\n"
    "       ktlua run PROBLEM.json [--device=ID] [--search=NAME] [--count=N] ...\n"
    "       ktlua cache info|clear\n"
    "\n"
    "Runs a ktlua tuning script; the script's arguments are in `arg` (arg[1], ...)\n"
    "and in `...`. With no script, starts an interactive prompt where the module is\n"
    "loaded as `kt`.\n"
    "\n"
    "options:\n"
    "  --devices      list the OpenCL and CUDA devices with their properties\n"
    "  --probe[=DEVICE]  measure the device (default: the default device): transfers,\n"
    "                 launch floor, work-group sweep, arithmetic rates (kt.probe)\n"
    "  --probe-db=DB  ... and keep the figures in the database DB (kt.db)\n"
    "  --probe-quick  ... with small sizes and few iterations (for tests)\n"
    "  -e CODE        run CODE (after loading the module as `kt`)\n"
    "  -i             start the prompt after running the script or -e code\n"
    "  --journal=DIR  tunings without a journal of their own keep one in DIR/<task>.jsonl\n"
    "  --resume       tunings resume from their journals, skipping what they hold\n"
    "  --no-cache     compile every program: no program cache on disk (KTLUA_CACHE=off)\n"
    "  --resume=force ... also from journals of another task (a changed kernel)\n"
    "  -v, --version  print the version (and whether MPI is built in)\n"
    "  -h, --help     print this help\n"
    "\n"
    "commands:\n"
    "  db export      the tuned configurations of a database (kt.db) as a C header with a\n"
    "                 selection function by nearest size, a JSON wisdom file or a Lua table\n"
    "  db recheck     time again the stored bests whose driver, compiler, ktlua, source or\n"
    "                 compiler options changed (those `ktlua run --db` stored) and say\n"
    "                 which became slower or invalid;\n"
    "                 exit 2: something regressed, 3: nothing is of the device, 4: an entry's\n"
    "                 kernel could not be made again\n"
    "  db store       keep the best of results files (a Kernel Tuner cache, KTT's, T4) in a\n"
    "                 database, for transfer: kernel, device, backend and size from the file\n"
    "                 or given\n"
    "  report         the results of a tuning or replay (JSON, CSV, journal) as one HTML page:\n"
    "                 the best configurations, statuses, failures and plots (gnuplot): best so\n"
    "                 far against evaluations and time, time distribution, each parameter's\n"
    "                 effect; --png also writes the plots as PNG files; --objective ranks\n"
    "                 by a metric of the results (kt.load's objective); --follow keeps the\n"
    "                 page of a tuning that holds JOURNAL up to date while it runs (a live\n"
    "                 view that reloads itself in the browser), then writes the report\n"
    "  run            tune the kernel of a T1 tuning-problem file (`ktlua run --help`)\n"
    "  cache          the program cache on disk: `info` (place, entries, size), `clear`\n"
    "\n"
    "MPI: `mpirun -np N ktlua script.lua` runs one tuning over a device of each rank:\n"
    "rank 0 runs the script, the other ranks serve their devices (doc/scaling.md)\n"
    "\n"
    "environment:\n"
    "  KTLUA_CACHE    the program cache's folder (default: $XDG_CACHE_HOME/ktlua, else\n"
    "                 ~/.cache/ktlua), or off: tunings load the programs earlier ones compiled\n"
    "  KTLUA_CACHE_SIZE  its bound, bytes or with K, M, G (default 1G; least recently used out)\n"
    "  KTLUA_DEVICE   the default device, e.g. opencl:0:0, cuda:0, gpu, cpu\n"
    "  KTLUA_EXE      the ktlua that compiler processes run, for programs that embed the\n"
    "                 core (default: this one, one beside the library, the installed one)\n"
    "  KTLUA_GNUPLOT  the gnuplot program that draws a report's plots (default: gnuplot)\n"
    "  KTLUA_HISTORY  the prompt's history file (default: ~/.ktlua_history)\n"
    "  KTLUA_HOST     the name an MPI rank gives its node (default: the host name); ranks\n"
    "                 of one name share a node's devices (doc/scaling.md)\n"
    "  KTLUA_LIBCUDA  the NVIDIA driver library to load (default: libcuda.so.1)\n"
    "  KTLUA_LIBCUPTI CUPTI, for hardware counters (default: libcupti.so.13 on the loader's path,\n"
    "                 beside NVRTC, then in /usr/local/cuda)\n"
    "  KTLUA_MPI_LATENCY_MS  each message between MPI ranks leaves this late (tests, benchmarks)\n"
    "  KTLUA_NVRTC    the NVRTC library to load (default: libnvrtc.so, .so.13, .so.12, ...)\n";

/* Adds a traceback to errors of the script. */
static int traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (!msg) msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  luaL_traceback(L, L, msg, 1);
  return 1;
}

static int report_status(lua_State *L, int status) {
  if (status != LUA_OK) {
    fprintf(stderr, "ktlua: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  return status;
}

static int call(lua_State *L, int nargs, int nresults) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, traceback);
  lua_insert(L, base);
  int status = lua_pcall(L, nargs, nresults, base);
  lua_remove(L, base);
  return status;
}

static int run_code(lua_State *L, const char *code, const char *name) {
  int status = luaL_loadbuffer(L, code, strlen(code), name);
  if (status == LUA_OK) status = call(L, 0, 0);
  return report_status(L, status);
}

/* arg[0] is the script, arg[1..] its arguments, arg[-n..-1] what came
** before the script on the command line. */
static void make_arg(lua_State *L, char **argv, int argc, int script) {
  lua_createtable(L, argc - script - 1, script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

static int run_script(lua_State *L, char **argv, int argc, int script) {
  make_arg(L, argv, argc, script);
  /* Tunings of a script show their progress on a terminal (lk_tuner.c,
  ** LK_PROGRESS_DEFAULT in lk.h). */
  lua_pushboolean(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, "ktlua.progress_default");
  int status = luaL_loadfile(L, strcmp(argv[script], "-") == 0 ? NULL : argv[script]);
  if (status == LUA_OK) {
    int n = argc - script - 1;
    luaL_checkstack(L, n, "too many arguments");
    for (int i = script + 1; i < argc; i++) lua_pushstring(L, argv[i]);
    status = call(L, n, 0);
  }
  return report_status(L, status);
}

/* `ktlua db ...`, `ktlua report ...`, `ktlua run ...` and `ktlua cache ...`: the main function
** of a stdlib module with the arguments after it. A main that returns an integer from 2 to 125
** says the exit status (`ktlua db recheck`: something regressed, nothing matched); *code. */
static const char *command_of(const char *word) {
  static const char *const commands[][2] = {
      {"db", "ktlua.db_export"}, {"report", "ktlua.report_html"}, {"run", "ktlua.t1_run"},
      {"cache", "ktlua.cache_cli"}};
  for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
    if (!strcmp(word, commands[c][0])) return commands[c][1];
  return NULL;
}

static int run_command(lua_State *L, const char *module, char **argv, int argc, int first,
                       int *code) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "ktlua");
  int status = call(L, 1, 0); /* which preloads the stdlib */
  lua_getglobal(L, "require");
  lua_pushstring(L, module);
  if (status == LUA_OK) status = call(L, 1, 1);
  if (status == LUA_OK) {
    lua_getfield(L, -1, "main");
    lua_remove(L, -2);
    lua_createtable(L, argc - first, 0);
    for (int i = first; i < argc; i++) {
      lua_pushstring(L, argv[i]);
      lua_rawseti(L, -2, i - first + 1);
    }
    status = lua_pcall(L, 1, 1, 0); /* its errors speak to a user: no traceback */
    if (status == LUA_OK) {
      lua_Integer c = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
      if (c >= 2 && c <= 125) *code = (int)c;
      lua_pop(L, 1);
    }
  }
  return report_status(L, status);
}

/* `ktlua --probe`: ktlua.probe's main. */
static int run_probe(lua_State *L, const char *device, const char *db, bool quick) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "ktlua");
  int status = call(L, 1, 0); /* which preloads the stdlib */
  lua_getglobal(L, "require");
  lua_pushliteral(L, "ktlua.probe");
  if (status == LUA_OK) status = call(L, 1, 1);
  if (status == LUA_OK) {
    lua_getfield(L, -1, "main");
    lua_remove(L, -2);
    lua_createtable(L, 0, 3);
    lua_pushstring(L, device);
    lua_setfield(L, -2, "device");
    if (db) lua_pushstring(L, db), lua_setfield(L, -2, "db");
    lua_pushboolean(L, quick);
    lua_setfield(L, -2, "quick");
    status = call(L, 1, 0);
  }
  return report_status(L, status);
}

/* ---- the prompt ---- */

static bool incomplete(lua_State *L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t len;
  const char *msg = lua_tolstring(L, -1, &len);
  return len >= 5 && strcmp(msg + len - 5, "<eof>") == 0;
}

/* Compiles "return LINE" first so that expressions print their value.
** Leaves the line and, above it, the chunk or the error message. */
static int load_line(lua_State *L) {
  const char *line = lua_tostring(L, -1);
  const char *ret = lua_pushfstring(L, "return %s", line);
  int status = luaL_loadbuffer(L, ret, strlen(ret), "=stdin");
  lua_remove(L, -2);
  if (status == LUA_OK) return status;
  lua_pop(L, 1);
  return luaL_loadbuffer(L, line, strlen(line), "=stdin");
}

static void print_results(lua_State *L, int base) {
  int n = lua_gettop(L) - base;
  if (n == 0) return;
  lua_getglobal(L, "require");
  lua_pushliteral(L, "ktlua.report");
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    lua_pop(L, 1);
    return;
  }
  lua_getfield(L, -1, "inspect");
  lua_remove(L, -2);
  for (int i = 1; i <= n; i++) {
    lua_pushvalue(L, -1);
    lua_pushvalue(L, base + i);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK) printf("%s%s", i > 1 ? "\t" : "", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  printf("\n");
  lua_settop(L, base);
}

static void repl(lua_State *L) {
  prompt *p = prompt_open(L);
  if (!p) return;
  if (isatty(0))
    printf("ktlua %s (Lua %s.%s): `kt` is the module; kt.devices(), kt.tuner(), ...; Tab completes\n",
           KTLUA_VERSION, LUA_VERSION_MAJOR, LUA_VERSION_MINOR);
  while (prompt_read(p, L, "ktlua> ")) {
    int base = lua_gettop(L) - 1;
    int status = load_line(L);
    while (incomplete(L, status)) {
      lua_pop(L, 1); /* the message; the source is on top */
      if (!prompt_read(p, L, "    >> ")) break;
      lua_pushliteral(L, "\n");
      lua_insert(L, -2);
      lua_concat(L, 3);
      status = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=stdin");
    }
    lua_remove(L, base + 1); /* the source */
    if (status == LUA_OK) status = call(L, 0, LUA_MULTRET);
    if (status == LUA_OK) print_results(L, base);
    else report_status(L, status);
    lua_settop(L, base);
  }
  if (isatty(0)) printf("\n");
  prompt_close(p);
}

/* "ktlua" and its stdlib modules, for require in any order. */
static void load_module(lua_State *L) {
  lk_preload_stdlib(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_ktlua);
  lua_setfield(L, -2, "ktlua");
  lua_pop(L, 1);
}

static int set_kt_global(lua_State *L) {
  return run_code(L, "kt = require 'ktlua'", "=ktlua");
}

/* The script the command line runs (the first argument that is no option
** nor an option's value), or NULL: under mpirun every rank given one must
** have rank 0's (mpi.h). */
static const char *script_arg(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--")) return i + 1 < argc ? argv[i + 1] : NULL;
    if (argv[i][0] != '-' || !argv[i][1]) return argv[i][0] == '-' ? NULL : argv[i];
    if (!strcmp(argv[i], "-e")) i++;
  }
  return NULL;
}

/* This executable serves `--compile-worker` (ktlua_exe.h). */
const int kt_ktlua_executable = 1;

int main(int argc, char **argv) {
  /* A compiler process (compile_pool.h): before Lua, MPI and everything. */
  if (argc == 2 && !strcmp(argv[1], KT_COMPILE_WORKER_ARG)) kt_compile_worker_main(3);
  /* Under mpirun, ranks above 0 serve their devices to rank 0 (mpi.h). */
  kt_error err;
  int rank = kt_mpi_start(&argc, &argv, "ktlua " KTLUA_VERSION, script_arg(argc, argv), &err);
  if (rank < 0) {
    fprintf(stderr, "ktlua: %s\n", err.msg);
    return 1;
  }
  if (rank > 0) kt_mpi_serve();
  lua_State *L = luaL_newstate();
  if (!L) {
    fprintf(stderr, "ktlua: cannot create the Lua state\n");
    return 1;
  }
  luaL_openlibs(L);
  load_module(L);
  int status = LUA_OK, i = 1, code = 0;
  bool interactive = false, ran = false, probe_quick = false;
  const char *probe = NULL, *probe_db = NULL;
  for (; i < argc && argv[i][0] == '-' && argv[i][1] && status == LUA_OK; i++) {
    const char *o = argv[i];
    if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
      fputs(usage, stdout);
      ran = true;
    } else if (!strcmp(o, "-v") || !strcmp(o, "--version")) {
      printf("ktlua %s (%s; %s)\n", KTLUA_VERSION, LUA_RELEASE, kt_mpi_describe());
      ran = true;
    } else if (!strcmp(o, "--devices")) {
      status = run_code(L, "local kt = require('ktlua'); require('ktlua.report').devices(kt.devices())", "=ktlua");
      ran = true;
    } else if (!strcmp(o, "-e") && i + 1 < argc) {
      status = set_kt_global(L);
      if (status == LUA_OK) status = run_code(L, argv[++i], "=(command line)");
      ran = true;
    } else if (!strcmp(o, "--probe") || (!strncmp(o, "--probe=", 8) && o[8])) {
      probe = o[7] ? o + 8 : "default";
    } else if (!strncmp(o, "--probe-db=", 11) && o[11]) {
      probe_db = o + 11;
    } else if (!strcmp(o, "--probe-quick")) {
      probe_quick = true;
    } else if (!strcmp(o, "-i")) {
      interactive = true;
    } else if (!strncmp(o, "--journal=", 10) && o[10]) {
      setenv("KTLUA_JOURNAL_DIR", o + 10, 1);
    } else if (!strcmp(o, "--no-cache")) {
      setenv("KTLUA_CACHE", "off", 1);
    } else if (!strcmp(o, "--resume")) {
      setenv("KTLUA_RESUME", "1", 1);
    } else if (!strcmp(o, "--resume=force")) {
      setenv("KTLUA_RESUME", "force", 1);
    } else if (!strcmp(o, "--")) {
      i++;
      break;
    } else {
      fprintf(stderr, "ktlua: unknown option '%s'\n%s", o, usage);
      status = LUA_ERRRUN;
    }
  }
  if (status == LUA_OK && (probe_db || probe_quick) && !probe) {
    fprintf(stderr, "ktlua: --probe-db and --probe-quick go with --probe[=DEVICE]\n");
    status = LUA_ERRRUN;
  }
  if (status == LUA_OK && probe) {
    status = run_probe(L, probe, probe_db, probe_quick);
    ran = true;
  }
  const char *command_module = i < argc ? command_of(argv[i]) : NULL;
  if (status == LUA_OK && command_module) {
    status = run_command(L, command_module, argv, argc, i + 1, &code);
    ran = true;
  } else if (status == LUA_OK && i < argc) {
    status = run_script(L, argv, argc, i);
    ran = true;
  }
  if (status == LUA_OK && (interactive || !ran)) {
    if (set_kt_global(L) == LUA_OK) repl(L);
  }
  lua_close(L);
  return status == LUA_OK ? code : 1;
}
