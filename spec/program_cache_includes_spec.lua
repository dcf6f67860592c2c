-- The program cache on disk and the files a compile reads besides its source (issue 39): an
-- entry's key holds every header the source includes (found as the compiler finds them, hashed),
-- a program whose headers cannot be known is not kept, and the kernel file's folder is on the
-- include path. Every tuning runs in a new process, on a cache folder of its test's own.
local shell = require "spec.support.shell"
local files = require "spec.support.files"

-- Tunes k (file KERNEL, options OPTIONS) over SCALE = 1, 2, 3 (three programs, alike but for
-- SCALE) against a reference made from V, the value the header V_FROM defines now: a program
-- built from an older header gives wrong outputs. Prints the summary's compiles and cached, the
-- statuses, then the summary's device_log (where notes about the program cache are) and the lines
-- of results:print() that show those notes.
local tuning = [[
local kt = require "ktlua"
local kernel, options, v_from = ...
local f = assert(io.open(v_from))
local v = tonumber(f:read("a"):match("#define V (%%d+)"))
f:close()
local tuner = kt.tuner("opencl", { isolate = %s })
local n = 16
local c = kt.array("float", n)
local k = tuner:kernel{ name = "k", global = n, group = 1, file = kernel, options = options,
                        args = { c:output() } }
k:param("SCALE", { 1, 2, 3 })
k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = v end end)
local r = tuner:tune(k, { search = "exhaustive", repeats = 1, progress = false })
local s = r:summary()
io.write("compiles ", s.compiles, " cached ", s.cached)
for i = 1, #r do io.write(" ", r[i].status) end
print()
io.write(s.device_log or "")
local printed = {}
r:print{ out = { write = function(_, ...) printed[#printed + 1] = table.concat({ ... }) end } }
for line in table.concat(printed):gmatch("[^\n]+") do
  if line:match("^  program cache: ") then print(line) end
end
]]

local body = "__kernel void k(__global float *c) { c[get_global_id(0)] = V + (SCALE - SCALE); }\n"

local dir, cache
-- The executable by a path that holds from any folder.
local ktlua = shell.ktlua:sub(1, 1) == "/" and shell.ktlua
  or shell.must("pwd"):gsub("\n$", "") .. "/" .. shell.ktlua

-- Writes the script (in dir/script) and returns a function that runs it in a new process
-- with cwd, the kernel file (as the script names it), its options and the header V comes from;
-- it returns the first line of the output and the rest.
local function tuner_script(opts)
  opts = opts or {}
  shell.must("mkdir -p " .. dir .. "/script")
  local path = dir .. "/script/tune.lua"
  files.write(path, tuning:format(tostring(opts.isolate ~= false)))
  return function(cwd, kernel, options, v_from)
    local out, code = shell.run(("cd %s && env KTLUA_CACHE=%s %s %s %s %q %s"):format(
      cwd, cache, ktlua, path, kernel, options or "", v_from))
    assert.are.equal(0, code, out)
    return out:match("^([^\n]*)\n(.*)$")
  end
end

-- A note in the summary's device_log, and as results:print() shows it.
local function shown(note)
  return note .. "  " .. note
end

-- How many entries of the cache hold text.
local function entries_holding(text)
  local n = 0
  for path in shell.must(("ls %s/*.ktp"):format(cache)):gmatch("[^\n]+") do
    if files.read(path):find(text, 1, true) then n = n + 1 end
  end
  return n
end

describe("the program cache on disk and #included files", function()
  before_each(function()
    dir = files.tmpname()
    shell.must("mkdir -p " .. dir .. "/kernels")
    cache = dir .. "/cache"
  end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("compiles again where an included header changed, and loads where none did", function()
    local kernels = dir .. "/kernels"
    files.write(kernels .. "/k.cl", '#include "inc.h"\n' .. body)
    files.write(kernels .. "/inc.h", "#define V 2\n")
    local run = tuner_script()
    local inc = kernels .. "/inc.h"
    assert.are.equal("compiles 3 cached 0 ok ok ok", (run(kernels, "k.cl", "", inc)))
    assert.are.equal("compiles 0 cached 3 ok ok ok", (run(kernels, "k.cl", "", inc)))
    -- the key of each program's entry names the header and the SHA-256 of its bytes
    local line = inc .. "\t" .. shell.must("sha256sum " .. inc):match("^(%x+)") .. "\n"
    assert.are.equal(3, entries_holding(line))
    files.write(inc, "#define V 5\n")
    assert.are.equal("compiles 3 cached 0 ok ok ok", (run(kernels, "k.cl", "", inc)))
    assert.are.equal("compiles 0 cached 3 ok ok ok", (run(kernels, "k.cl", "", inc)))
    -- a tuner without a device process keys its programs alike
    files.write(inc, "#define V 7\n")
    local here = tuner_script({ isolate = false })
    assert.are.equal("compiles 3 cached 0 ok ok ok", (here(kernels, "k.cl", "", inc)))
    assert.are.equal("compiles 0 cached 3 ok ok ok", (run(kernels, "k.cl", "", inc)))
  end)

  it("follows includes of includes, beside their includer and in -I folders", function()
    local kernels, extra = dir .. "/kernels", dir .. "/extra"
    shell.must(("mkdir -p %s/sub %s"):format(kernels, extra))
    files.write(kernels .. "/k.cl", '#include "sub/a.h"\n#include <c.h>\n' .. body)
    -- sub/a.h's "b.h" is sub/b.h, beside its includer
    files.write(kernels .. "/sub/a.h", '#include "b.h"\n')
    files.write(kernels .. "/sub/b.h", "#define V 2\n")
    files.write(extra .. "/c.h", "#define W 1\n")
    local run = tuner_script()
    local options, b = "-I" .. extra, kernels .. "/sub/b.h"
    assert.are.equal("compiles 3 cached 0 ok ok ok", (run(kernels, "k.cl", options, b)))
    assert.are.equal("compiles 0 cached 3 ok ok ok", (run(kernels, "k.cl", options, b)))
    files.write(b, "#define V 3\n")
    assert.are.equal("compiles 3 cached 0 ok ok ok", (run(kernels, "k.cl", options, b)))
    files.write(extra .. "/c.h", "#define W 2\n")
    assert.are.equal("compiles 3 cached 0 ok ok ok", (run(kernels, "k.cl", options, b)))
    assert.are.equal("compiles 0 cached 3 ok ok ok", (run(kernels, "k.cl", options, b)))
    -- a header that appears where the compiler looks before the one it read: kernels/c.h comes
    -- before the -I folder
    files.write(kernels .. "/c.h", "#define W 3\n")
    assert.are.equal("compiles 3 cached 0 ok ok ok", (run(kernels, "k.cl", options, b)))
  end)

  it("keeps no program whose headers cannot be known, and says so in the summary", function()
    local kernels = dir .. "/kernels"
    files.write(kernels .. "/k.cl", files.read("spec/fixtures/fuzz/include_macro.cl"))
    files.write(kernels .. "/inc.h", "#define V 2\n")
    local run = tuner_script()
    local options, inc = "-DHEADER=<inc.h>", kernels .. "/inc.h"
    local note = "program cache: 3 programs compiled were not kept on disk: k.cl:3: "
      .. "#include HEADER names its file by a macro, which is known only once compiled\n"
    for _ = 1, 2 do
      assert.are.same({ "compiles 3 cached 0 ok ok ok", shown(note) },
                      { run(kernels, "k.cl", options, inc) })
    end
    assert.are.equal(1, entries_holding("")) -- the inputs' check kernel's alone
  end)

  it("reads the source as the preprocessor does, and follows __has_include", function()
    local kernels = dir .. "/kernels"
    local inc = kernels .. "/inc.h"
    files.write(inc, "#define V 2\n")
    local run = tuner_script()
    local function from(fixture)
      files.write(kernels .. "/k.cl", files.read("spec/fixtures/fuzz/" .. fixture))
      return run(kernels, "k.cl", "", inc)
    end
    -- includes in comments and strings are none; one split by a line splice is one
    assert.are.same({ "compiles 3 cached 0 ok ok ok", "" }, { from("include_hidden.cl") })
    assert.are.same({ "compiles 0 cached 3 ok ok ok", "" }, { from("include_hidden.cl") })
    files.write(inc, "#define V 3\n")
    assert.are.same({ "compiles 3 cached 0 ok ok ok", "" }, { from("include_hidden.cl") })
    -- a file that appears where __has_include looked
    assert.are.same({ "compiles 3 cached 0 ok ok ok", "" }, { from("include_probe.cl") })
    assert.are.same({ "compiles 0 cached 3 ok ok ok", "" }, { from("include_probe.cl") })
    files.write(kernels .. "/extra.h", "#define EXTRA 0\n")
    assert.are.same({ "compiles 3 cached 0 ok ok ok", "" }, { from("include_probe.cl") })
    -- what cannot be known keeps the programs off the disk, and the summary says why
    local head = "program cache: 3 programs compiled were not kept on disk: "
    assert.are.same({ "compiles 3 cached 0 ok ok ok", shown(head .. "k.cl:4: #include "
      .. "\"missing.h\" is in none of the folders ktlua searches (the includer's, the working "
      .. "folder, the -I folders); the compiler may find it in one of its own\n") },
      { from("include_if0.cl") })
    assert.are.same({ "compiles 3 cached 0 ok ok ok", shown(head .. "k.cl:3: #include_next "
      .. "depends on where the compiler found its includer\n") }, { from("include_next.cl") })
  end)

  it("finds headers beside the kernel file, wherever the script runs from", function()
    local kernels = dir .. "/kernels"
    shell.must("mkdir -p " .. dir .. "/elsewhere")
    files.write(kernels .. "/k.cl", '#include "inc.h"\n' .. body)
    files.write(kernels .. "/inc.h", "#define V 4\n")
    local run = tuner_script()
    -- the script (in dir/script) names the kernel relative to its own folder
    local inc = kernels .. "/inc.h"
    assert.are.equal("compiles 3 cached 0 ok ok ok", (run(dir .. "/elsewhere", "../kernels/k.cl", "", inc)))
    assert.are.equal("compiles 0 cached 3 ok ok ok", (run(dir .. "/elsewhere", "../kernels/k.cl", "", inc)))
    files.write(inc, "#define V 6\n")
    assert.are.equal("compiles 3 cached 0 ok ok ok", (run(dir, "kernels/k.cl", "", inc)))
  end)
end)

describe("the program cache on disk and #included files, with CUDA (NVRTC and a stand-in driver: "
  .. "spec/support/fake_cuda.c)", function()
  local missing = require("spec.support.fake_cuda").missing()
  if missing then
    pending(missing)
    return
  end
  local lib = files.tmpname()
  setup(function() require("spec.support.fake_cuda").build(lib) end)
  teardown(function() os.execute("rm -rf " .. lib) end)
  before_each(function()
    dir = files.tmpname()
    shell.must(("mkdir -p %s/kernels %s/script %s/elsewhere"):format(dir, dir, dir))
    cache = dir .. "/cache"
  end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("finds headers beside the kernel file, keys programs by them, and NVRTC's own by its version",
     function()
    files.write(dir .. "/kernels/k.cu", [[
#include "inc.h"
#include <cuda_fp16.h>
#include <math.h>
extern "C" __global__ void k(float *c) { c[threadIdx.x] = V + (SCALE - SCALE) + 0 * M_PI; }
]])
    files.write(dir .. "/kernels/inc.h", "#define V 2\n")
    files.write(dir .. "/script/tune.lua", [[
local kt = require "ktlua"
local tuner = kt.tuner("cuda:0", { isolate = os.getenv("ISOLATE") ~= "0" })
local c = kt.array("float", 64)
local k = tuner:kernel{ name = "k", global = 64, file = "../kernels/k.cu", args = { c:output() } }
k:param("SCALE", { 1, 2 })
local r = tuner:tune(k, { repeats = 1, progress = false })
local s = r:summary()
io.write(s.compiles, " ", s.cached)
for i = 1, #r do io.write(" ", r[i].status) end
print()
io.write(s.device_log or "")
]])
    local function run(env)
      local out, code = shell.run(("cd %s/elsewhere && env KTLUA_CACHE=%s KTLUA_LIBCUDA=%s/libcuda.so.1 "
        .. "%s %s %s/script/tune.lua"):format(dir, cache, lib, env or "", ktlua, dir))
      assert.are.equal(0, code, out)
      return out
    end
    assert.are.equal("2 0 ok ok\n", run())
    assert.are.equal("0 2 ok ok\n", run())
    files.write(dir .. "/kernels/inc.h", "#define V 3\n")
    assert.are.equal("2 0 ok ok\n", run("ISOLATE=0"))
    assert.are.equal("0 2 ok ok\n", run())
  end)
end)
