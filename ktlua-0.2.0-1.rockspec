-- LuaRocks: `luarocks make ktlua-0.2.0-1.rockspec` in a checkout builds the
-- module with the Makefile (build/ktlua.so) and installs it with the Lua
-- modules of stdlib/. It needs the Debian packages of scripts/setup.sh (the
-- OpenCL ICD loader and headers, SQLite, zlib). The executable, the C
-- library and the man page come with `make install` instead.
rockspec_format = "3.0"
package = "ktlua"
version = "0.2.0-1"
source = {
  -- No public repository yet: luarocks make uses the checkout it runs in.
  url = "git+file://./ktlua",
  tag = "v0.2.0",
}
description = {
  summary = "A kernel auto-tuner for OpenCL and CUDA whose tuning programs are Lua scripts",
  detailed = [[
    A small C core builds and counts constrained configuration spaces, compiles and
    launches kernels, times them with device events and runs the search loop; Lua
    describes parameters, constraints, references, launchers and searchers.]],
}
dependencies = { "lua >= 5.4, < 5.5" }
external_dependencies = {
  OPENCL = { library = "OpenCL" },
  SQLITE = { header = "sqlite3.h", library = "sqlite3" },
  ZLIB = { header = "zlib.h", library = "z" },
}
build = {
  type = "make",
  build_target = "build/ktlua.so",
  build_variables = { LUA_INC = "$(LUA_INCDIR)", LUA = "$(LUA)" },
  install_target = "install-lua",
  install_variables = { LUA_CMOD = "$(LIBDIR)", LUA_LMOD = "$(LUADIR)" },
}
