-- make install and make uninstall: what an installed ktlua holds works from
-- its prefix alone (plain lua5.4, the man page, a C program through
-- pkg-config), and uninstall leaves nothing of it.
local shell = require "spec.support.shell"
local run = shell.run

local function mktemp_dir()
  local out, code = run("mktemp -d")
  assert.are.equal(0, code, out)
  return (out:gsub("%s+$", ""))
end

local files = require "spec.support.files"
local write, exists = files.write, files.exists

-- The files under dir, one a line, sorted.
local function files_under(dir)
  local out = run("cd " .. dir .. " && find . -type f -o -type l | sort")
  return out
end

local MAKE = "make -s --no-print-directory "

local TUNING = [[
local kt = require "ktlua"
local n = 1024
local a, c = kt.array("float", n):fill(1), kt.array("float", n)
local tuner = kt.tuner("cpu")
local k = tuner:kernel{ name = "twice", global = n, group = 1, args = { a:input(), c:output() },
  source = "__kernel void twice(__global const float *a, __global float *c) "
        .. "{ int i = get_global_id(0); c[i] = 2.0f * a[i]; }" }
k:param("WG", { 16, 32, 64 }, { group_x = "mul" })
k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = 2 * a[i] end end)
local results = tuner:tune(k, { search = "exhaustive" })
print("evaluated " .. results:summary().evaluated .. ", best ok: "
      .. tostring(results:best().status == "ok"))
print(require("ktlua.report") ~= nil, package.searchpath("ktlua.report", package.path))
]]

local C_PROGRAM = [[
#include <stdio.h>
#include <ktlua/space.h>

int main(void) {
  kt_error err;
  kt_space *s = kt_space_new(&err);
  kt_value wg[3] = {{.type = KT_VINT, .u.i = 32}, {.type = KT_VINT, .u.i = 64},
                    {.type = KT_VINT, .u.i = 128}};
  kt_value vec[3] = {{.type = KT_VINT, .u.i = 1}, {.type = KT_VINT, .u.i = 2},
                     {.type = KT_VINT, .u.i = 4}};
  if (!s || kt_space_add_param(s, "WG", wg, 3, &err) || kt_space_add_param(s, "VEC", vec, 3, &err) ||
      kt_space_add_expr(s, "WG * VEC <= 128", NULL, 0, 0, &err) || kt_space_generate(s, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  printf("%llu of %.0f\n", (unsigned long long)kt_space_count(s), kt_space_count_all(s));
  kt_space_free(s);
  return 0;
}
]]

describe("make install", function()
  local tmp, prefix

  setup(function()
    tmp = mktemp_dir()
    prefix = tmp .. "/prefix"
    local out, code = run(MAKE .. "install PREFIX=" .. prefix)
    assert.are.equal(0, code, out)
  end)

  teardown(function()
    if tmp then run("rm -rf " .. tmp) end
  end)

  it("puts each part where its users look", function()
    for _, path in ipairs{"bin/ktlua", "lib/lua/5.4/ktlua.so", "share/lua/5.4/ktlua/report.lua",
                          "lib/libktlua.a", "lib/pkgconfig/ktlua.pc", "include/ktlua/space.h",
                          "include/ktlua/kt.h", "share/man/man1/ktlua.1",
                          "share/doc/ktlua/README.md", "share/doc/ktlua/doc/searchers.md",
                          "share/doc/ktlua/doc/peers.md",
                          "share/ktlua/examples/tune_vectoradd.lua",
                          "share/ktlua/examples/kernels/vadd.cl",
                          "share/ktlua/examples/embed/tune_vadd.c"} do
      assert.is_true(exists(prefix .. "/" .. path), path)
    end
    local out = run(prefix .. "/bin/ktlua --version")
    assert.matches("^ktlua 0%.2%.0 ", out)
  end)

  it("tunes from plain lua5.4 with the installed module", function()
    write(tmp .. "/tune.lua", TUNING)
    local env = ("LUA_CPATH='%s/lib/lua/5.4/?.so' LUA_PATH='%s/share/lua/5.4/?.lua' ")
        :format(prefix, prefix)
    local out, code = run(env .. "lua5.4 " .. tmp .. "/tune.lua")
    assert.are.equal(0, code, out)
    assert.matches("evaluated 3, best ok: true", out, 1, true)
    assert.matches("true\t" .. prefix .. "/share/lua/5.4/ktlua/report.lua", out, 1, true)
  end)

  it("installs a man page that groff reads without warnings", function()
    local page = prefix .. "/share/man/man1/ktlua.1"
    local out, code = run("groff -man -Tutf8 -ww -z " .. page)
    assert.are.equal(0, code, out)
    assert.are.equal("", out)
    out, code = run("groff -man -Tascii " .. page .. " | col -b")
    assert.are.equal(0, code, out)
    for _, text in ipairs{"ktlua - a kernel auto-tuner", "db export", "run problem.json",
                          "--devices", "--resume=force",
                          "KTLUA_DEVICE", "KTLUA_NVRTC", "kt.tuner", "README.md"} do
      assert.matches(text, out, 1, true)
    end
  end)

  it("builds a C program against the library through pkg-config", function()
    write(tmp .. "/prog.c", C_PROGRAM)
    local pc = "PKG_CONFIG_PATH=" .. prefix .. "/lib/pkgconfig pkg-config "
    local out, code = run(pc .. "--modversion ktlua")
    assert.are.equal("0.2.0\n", out)
    out, code = run(("cc -std=c11 -Wall -Wextra -Werror -o %s/prog %s/prog.c $(%s --cflags --libs ktlua)")
                    :format(tmp, tmp, pc))
    assert.are.equal(0, code, out)
    out, code = run(tmp .. "/prog")
    assert.are.equal(0, code, out)
    assert.are.equal("6 of 9\n", out)
  end)

  it("builds the installed C example through pkg-config, and it tunes", function()
    local pc = "PKG_CONFIG_PATH=" .. prefix .. "/lib/pkgconfig pkg-config "
    local out, code = run(("cc -std=c11 -Wall -Wextra -Werror -o %s/tune_vadd "
      .. "%s/share/ktlua/examples/embed/tune_vadd.c $(%s --cflags --libs ktlua)"):format(tmp, prefix, pc))
    assert.are.equal(0, code, out)
    out, code = run(("timeout 300 %s/tune_vadd %s/kt.db tune cpu && "
      .. "timeout 300 %s/tune_vadd %s/kt.db run 4096 cpu"):format(tmp, tmp, tmp, tmp))
    assert.are.equal(0, code, out)
    assert.matches('n = 4096: {"WG":%d+} from the size {"n":4096} %(exact%), ok', out)
  end)

  it("runs the installed ktlua as the compiler processes of lua5.4 and of a C program", function()
    local exe = run("readlink -f " .. prefix .. "/bin/ktlua"):gsub("\n$", "")
    write(tmp .. "/workers.lua", [[
local kt = require "ktlua"
local tuner = kt.tuner("cpu", { compile_workers = 1, cache = false })
local c = kt.array("float", 4)
local k = tuner:kernel{ name = "k", global = 4, args = { c:output() },
  source = "__kernel void k(__global float *c) { c[get_global_id(0)] = F; }" }
k:param("F", { 1, 2 })
local r = tuner:tune(k, { repeats = 1, progress = false })
print(r:summary().compile_workers, r:summary().device_log or "")]])
    local env = ("LUA_CPATH='%s/lib/lua/5.4/?.so' LUA_PATH='%s/share/lua/5.4/?.lua' ")
        :format(prefix, prefix)
    local out, code = run(env .. "lua5.4 " .. tmp .. "/workers.lua")
    assert.are.equal(0, code, out)
    assert.are.equal("1\t\n", out)
    -- a C program on libktlua.a: the ktlua of the prefix it was installed for
    local pc = "PKG_CONFIG_PATH=" .. prefix .. "/lib/pkgconfig pkg-config "
    out, code = run(("cc -std=c11 -Wall -Wextra -Werror -o %s/embed_workers "
      .. "spec/support/embed_workers.c $(%s --cflags --libs ktlua)"):format(tmp, pc))
    assert.are.equal(0, code, out)
    out, code = run(("timeout 300 %s/embed_workers cpu 1"):format(tmp))
    assert.are.equal(0, code, out)
    assert.matches(("worker: %s --compile-worker"):format(exe), out, 1, true)
    assert.matches("compile workers: 1\n", out, 1, true)
  end)

  it("uninstalls exactly what it installed", function()
    write(prefix .. "/share/doc/mine.txt", "not ktlua's\n")
    local out, code = run(MAKE .. "uninstall PREFIX=" .. prefix)
    assert.are.equal(0, code, out)
    assert.are.equal("./share/doc/mine.txt\n", files_under(prefix))
    out = run("find " .. prefix .. " -name '*ktlua*'")
    assert.are.equal("", out)
  end)

  it("stages into DESTDIR with the final prefix in ktlua.pc", function()
    local stage = tmp .. "/stage"
    local out, code = run(MAKE .. "install DESTDIR=" .. stage .. " PREFIX=/opt/kt")
    assert.are.equal(0, code, out)
    local f = assert(io.open(stage .. "/opt/kt/lib/pkgconfig/ktlua.pc"))
    assert.matches("^prefix=/opt/kt\n", f:read("a"))
    f:close()
    assert.is_true(exists(stage .. "/opt/kt/bin/ktlua"))
    out, code = run(MAKE .. "uninstall DESTDIR=" .. stage .. " PREFIX=/opt/kt")
    assert.are.equal(0, code, out)
    assert.are.equal("", files_under(stage))
  end)
end)
