/*
** lk_cuda.c: kt.cuda_compile{...}: compiles CUDA C++ with NVRTC without a
** GPU, to check a kernel for an architecture, read its PTX or see what a
** template instance is called:
**
**   local out, log = kt.cuda_compile{ source = src, arch = "sm_90",
**     names = { "vadd<float, 4>" }, options = "-DVEC=4", name = "vadd.cu" }
**
** On success out = { ptx = "...", cubin = "..." (machine code, for an sm_
** arch), lowered = { ["vadd<float, 4>"] = "_Z4vaddIfLi4EEvPKT_S2_PS0_i" },
** log = warnings }; when the source does not compile, nil and the log.
** A build without CUDA headers, or a machine without NVRTC, raises an
** error that says so.
*/

#include "../core/device/nvrtc.h"
#include "../core/device/remote.h"
#include "lk.h"

/* The compiler's output, freed by the collector even if building the
** Lua table runs out of memory. */
static int out_gc(lua_State *L) {
  kt_nvrtc_out_clear(lua_touserdata(L, 1));
  return 0;
}

/* The name expressions, kept in a userdata that the stack holds. */
static const char **check_names(lua_State *L, int idx, size_t *n) {
  *n = 0;
  if (lk_get_field(L, idx, "names") == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  if (!lua_istable(L, -1)) luaL_error(L, "cuda_compile options.names: expected a list of names");
  *n = (size_t)luaL_len(L, -1);
  const char **names = lua_newuserdatauv(L, (*n ? *n : 1) * sizeof *names, 0);
  for (size_t i = 0; i < *n; i++) {
    lua_rawgeti(L, -2, (lua_Integer)i + 1);
    if (!(names[i] = lua_tostring(L, -1)))
      luaL_error(L, "cuda_compile options.names[%d]: expected a string", (int)i + 1);
    lua_pop(L, 1); /* the list keeps the string */
  }
  lua_remove(L, -2);
  return names;
}

static void push_output(lua_State *L, const kt_nvrtc_job *job, const kt_nvrtc_out *out) {
  lua_createtable(L, 0, 4);
  if (out->ptx) {
    lua_pushstring(L, out->ptx);
    lua_setfield(L, -2, "ptx");
  }
  if (out->cubin) {
    lua_pushlstring(L, out->cubin, out->cubin_size);
    lua_setfield(L, -2, "cubin");
  }
  lua_createtable(L, 0, (int)out->nlowered);
  for (size_t i = 0; i < out->nlowered; i++) {
    lua_pushstring(L, out->lowered[i]);
    lua_setfield(L, -2, job->names[i]);
  }
  lua_setfield(L, -2, "lowered");
  lua_pushstring(L, out->log ? out->log : "");
  lua_setfield(L, -2, "log");
}

static int l_cuda_compile(lua_State *L) {
  static const char *const keys[] = {"source", "name", "names", "arch", "options", NULL};
  luaL_checktype(L, 1, LUA_TTABLE);
  lk_check_keys(L, 1, "cuda_compile options", keys);
  kt_nvrtc_job job = {0};
  job.source = lk_opt_string(L, 1, "cuda_compile options", "source", NULL);
  if (!job.source) luaL_error(L, "cuda_compile options.source: the CUDA source is required");
  job.origin = lk_opt_string(L, 1, "cuda_compile options", "name", "<string>");
  job.arch = lk_opt_string(L, 1, "cuda_compile options", "arch", NULL);
  job.options = lk_opt_string(L, 1, "cuda_compile options", "options", "");
  job.names = check_names(L, 1, &job.nnames);
  kt_nvrtc_out *out = lk_new_guarded(L, sizeof *out, out_gc);
  kt_error err;
  /* In a process of its own unless this one uses drivers anyway. */
  int rc = kt_drivers_in_process() ? kt_nvrtc_compile(&job, out, &err)
                                   : kt_nvrtc_compile_apart(&job, out, &err);
  if (rc < 0) return lk_error(L, &err);
  if (rc > 0) {
    lua_pushnil(L);
    lua_pushstring(L, out->log);
    return 2;
  }
  push_output(L, &job, out);
  return 1;
}

void lk_open_cuda(lua_State *L) {
  static const luaL_Reg fns[] = {{"cuda_compile", l_cuda_compile}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
