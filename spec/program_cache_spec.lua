-- The program cache on disk (core/device/program_store.c): tunings in new processes load the
-- programs earlier ones compiled. Every run here names its own folder (KTLUA_CACHE).
local kt = require "ktlua"
local shell = require "spec.support.shell"
local files = require "spec.support.files"

-- Six programs: every parameter is a #define of the final source. The warning shows
-- that a loaded program keeps its compile's log.
local tuning = [[
local kt = require "ktlua"
local tuner = kt.tuner("opencl", { isolate = %s, cache = %s })
local n = 64
local a = kt.array("float", n):fill(function(i) return i end)
local c = kt.array("float", n)
local k = tuner:kernel{ name = "k", global = n, group = 1, args = { a:input(), c:output() },
  options = %q, source = [=[
__kernel void k(__global const float *a, __global float *c) {
  int i = get_global_id(0);
  c[i] = a[i] * SCALE; }
#warning kept with the program
]=] }
k:param("SCALE", { %s })
k:param("WG", { %s }, { group_x = "mul" })
k:reference(c, function(ref) end, { compare = function() return true end })
local r = tuner:tune(k, { search = "exhaustive", repeats = 1, progress = false })
local s = r:summary()
print("compiles", s.compiles, "cached", s.cached)
for i = 1, #r do
  print(r[i].config.SCALE, r[i].config.WG, r[i].status,
        (r[i].build_log or ""):match("kept with the program") ~= nil)
end
tuner:run(k, { SCALE = r[1].config.SCALE, WG = 1 })
print(c[5])
]]

local dir, cache

local function script(opts)
  opts = opts or {}
  local path = dir .. "/tune.lua"
  files.write(path, tuning:format(tostring(opts.isolate ~= false), tostring(opts.cache ~= false),
                                  opts.options or "", opts.scales or "1, 2, 3", opts.wgs or "1, 2"))
  return path
end

-- Runs ktlua with env ("NAME=value ...", KTLUA_CACHE the spec's folder unless given) and args.
local function ktlua(args, env)
  env = env or ""
  if not env:find("KTLUA_CACHE=", 1, true) then env = env .. " KTLUA_CACHE=" .. cache end
  return shell.run(("env %s %s %s"):format(env, shell.ktlua, args))
end

local function tune(opts, env)
  local out, code = ktlua((opts and opts.flags or "") .. " " .. script(opts), env)
  assert.are.equal(0, code, out)
  return out
end

-- The summary line and the rest.
local function split(out)
  local first, rest = out:match("^([^\n]*)\n(.*)$")
  return first, rest
end

-- The entries of the tuning's programs, and of the inputs' check kernel (core/eval/verify_device.c:
-- the tuning's checks build it once, and keep it there too), in the folder's order.
local function entry_files()
  local list, check = {}, nil
  local p = io.popen(("ls %s/*.ktp 2>/dev/null"):format(cache))
  for line in p:lines() do
    if files.read(line):find("ktlua_unchanged", 1, true) then check = line
    else list[#list + 1] = line end
  end
  p:close()
  return list, check
end

-- The programs' entries, the check kernel's aside.
local function entries()
  return #entry_files()
end

describe("the program cache on disk", function()
  before_each(function()
    dir = files.tmpname()
    assert(os.execute("mkdir -p " .. dir))
    cache = dir .. "/cache"
  end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("lets a second identical tuning in a new process compile nothing, with the same results", function()
    local first, results = split(tune())
    assert.are.equal("compiles\t6\tcached\t0", first)
    assert.are.equal(6, entries())
    local again, same = split(tune())
    assert.are.equal("compiles\t0\tcached\t6", again)
    assert.are.equal(results, same)
    assert.matches("^1\t1\tok\ttrue\n", same) -- the compile's warning, kept with the program
    -- a tuner without a device process loads them too
    local here, also = split(tune({ isolate = false }))
    assert.are.equal("compiles\t0\tcached\t6", here)
    assert.are.equal(results, also)
  end)

  it("detects damaged and foreign entries and builds them again", function()
    local _, results = split(tune())
    local list = entry_files()
    assert.are.equal(6, #list)
    local whole = files.read(list[1])
    files.write(list[1], whole:sub(1, #whole // 2)) -- cut short
    local text = files.read(list[2])
    local at = #text // 2
    local flipped = string.char(text:byte(at) ~ 0xff)
    files.write(list[2], text:sub(1, at - 1) .. flipped .. text:sub(at + 1)) -- a byte changed
    files.write(list[3], "") -- emptied
    files.write(list[4], files.read(list[5])) -- another program's entry under its name
    local again, same = split(tune())
    assert.are.equal("compiles\t4\tcached\t2", again)
    assert.are.equal(results, same)
    assert.are.equal(6, entries())
    assert.are.equal("compiles\t0\tcached\t6", (split(tune())))
  end)

  it("writes nothing with cache = false, --no-cache or KTLUA_CACHE=off", function()
    assert.are.equal("compiles\t6\tcached\t0", (split(tune({ cache = false }))))
    assert.are.equal("compiles\t6\tcached\t0", (split(tune({ flags = "--no-cache" }))))
    assert.are.equal("compiles\t6\tcached\t0", (split(tune(nil, "KTLUA_CACHE=off"))))
    assert.is_false(files.exists(cache))
    -- nor does a disabled tuner read a warm cache
    tune()
    assert.are.equal("compiles\t6\tcached\t0", (split(tune({ cache = false }))))
  end)

  it("is shared by tunings running at once", function()
    local path = script()
    local cmd = ("env KTLUA_CACHE=%s %s %s > %s/%%d.out 2>&1"):format(cache, shell.ktlua, path, dir)
    local out, code = shell.run(("(%s & %s & %s & wait)"):format(cmd:format(1), cmd:format(2),
                                                                  cmd:format(3)))
    assert.are.equal(0, code, out)
    local first = select(2, split(files.read(dir .. "/1.out")))
    for i = 1, 3 do
      local summary, results = split(files.read(dir .. "/" .. i .. ".out"))
      assert.matches("^compiles\t%d\tcached\t%d$", summary)
      assert.are.equal(first, results)
    end
    assert.are.equal(6, entries())
    assert.are.equal("compiles\t0\tcached\t6", (split(tune())))
    assert.are.equal("", (shell.run(("ls %s | grep -v '\\.ktp$'"):format(cache)))) -- no leftovers
  end)

  it("keeps another entry for another option or define", function()
    assert.are.equal("compiles\t2\tcached\t0", (split(tune({ scales = "1", options = "-DX=1" }))))
    assert.are.equal("compiles\t0\tcached\t2", (split(tune({ scales = "1", options = "-DX=1" }))))
    assert.are.equal("compiles\t2\tcached\t0", (split(tune({ scales = "1", options = "-DX=2" }))))
    assert.are.equal("compiles\t2\tcached\t0", (split(tune({ scales = "1", options = "-DX=2 -w" }))))
    assert.are.equal("compiles\t2\tcached\t2", (split(tune({ scales = "1, 4", options = "-DX=2" }))))
    assert.are.equal(8, entries())
  end)

  it("stays within its bound, the least recently used entries going first", function()
    -- One program per run (SCALE = 1..3, WG = 1 only), so that the order of uses is known.
    local function one(scale, env) return ktlua(script({ scales = scale, wgs = "1" }), env) end
    local out, code = one("1")
    assert.are.equal(0, code, out)
    local list, check = entry_files()
    local size = files.read(list[1]):len()
    -- room for the check kernel's entry (used by every run) and two programs, not three
    local env = ("KTLUA_CACHE_SIZE=%d"):format(size * 5 // 2 + files.read(check):len())
    assert.are.equal("compiles\t1\tcached\t0", (split((one("2", env)))))
    assert.are.equal("compiles\t0\tcached\t1", (split((one("1", env))))) -- 1 used again: 2 is older
    assert.are.equal("compiles\t1\tcached\t0", (split((one("3", env))))) -- 2 goes
    assert.are.equal(2, entries())
    assert.are.equal("compiles\t0\tcached\t1", (split((one("1", env)))))
    assert.are.equal("compiles\t0\tcached\t1", (split((one("3", env)))))
    assert.are.equal("compiles\t1\tcached\t0", (split((one("2", env))))) -- and 1 goes now
    assert.are.equal("compiles\t1\tcached\t0", (split((one("1", env)))))
  end)

  it("says where it is and how big with `ktlua cache info`, and empties with `clear`", function()
    local out, code = ktlua("cache info")
    assert.are.equal(0, code, out)
    assert.are.equal(("place:   %s\nentries: 0\nsize:    0 bytes (0 bytes) of at most 1.0 GiB\n")
      :format(cache), out)
    tune()
    out, code = ktlua("cache info", "KTLUA_CACHE_SIZE=64M")
    assert.are.equal(0, code, out)
    local list, check = entry_files()
    local bytes = files.read(check):len()
    for _, f in ipairs(list) do bytes = bytes + files.read(f):len() end
    -- six programs and the inputs' check kernel
    assert.are.equal(("place:   %s\nentries: 7\nsize:    %.1f KiB (%d bytes) of at most 64.0 MiB\n")
      :format(cache, bytes / 1024, bytes), out)
    out, code = ktlua("cache clear")
    assert.are.equal(0, code, out)
    assert.are.equal(("removed 7 entries from %s\n"):format(cache), out)
    assert.are.equal(0, entries())
    assert.are.equal("compiles\t6\tcached\t0", (split(tune())))
  end)

  it("names the default folder, and says what is wrong with the settings", function()
    local out, code = shell.run(("env -u KTLUA_CACHE XDG_CACHE_HOME=%s/xdg %s cache info")
      :format(dir, shell.ktlua))
    assert.are.equal(0, code, out)
    assert.matches("^place:   " .. (dir .. "/xdg/ktlua"):gsub("%p", "%%%0") .. "\n", out)
    out, code = shell.run(("env -u KTLUA_CACHE -u XDG_CACHE_HOME HOME=%s/home %s cache info")
      :format(dir, shell.ktlua))
    assert.are.equal(0, code, out)
    assert.matches("^place:   " .. (dir .. "/home/.cache/ktlua"):gsub("%p", "%%%0") .. "\n", out)
    out, code = ktlua("cache info", "KTLUA_CACHE=off")
    assert.are.equal(0, code, out)
    assert.are.equal("the program cache is off (KTLUA_CACHE=off)\n", out)
    -- a bare environment (a daemon's) names no folder: tunings go on without the cache
    out, code = shell.run(("env -i PATH=/usr/bin:/bin %s cache info"):format(shell.ktlua))
    assert.are.equal(0, code, out)
    assert.are.equal("the program cache is off (no KTLUA_CACHE, XDG_CACHE_HOME nor HOME)\n", out)
    out, code = shell.run(("env -i PATH=/usr/bin:/bin %s -e 'print(kt.tuner(\"opencl\"):cache().place)'")
      :format(shell.ktlua))
    assert.are.equal(0, code, out)
    assert.are.equal("nil\n", out)
    local why = "KTLUA_CACHE_SIZE: '12X' is not a size (bytes, or a number with K, M or G)"
    out, code = ktlua("cache info", "KTLUA_CACHE_SIZE=12X")
    assert.are.equal(1, code, out)
    assert.are.equal("ktlua: " .. why .. "\n", out)
    out, code = ktlua("-e 'kt.tuner(\"opencl\")'", "KTLUA_CACHE_SIZE=12X")
    assert.are.equal(1, code, out)
    assert.matches(why, out, 1, true)
    out, code = ktlua("cache list")
    assert.are.equal(1, code, out)
    assert.matches("^ktlua: ktlua cache: expected info or clear, got 'list'\n", out)
  end)

  it("takes only regular files for entries: a FIFO at an entry's name is compiled past", function()
    local _, results = split(tune())
    local list = entry_files()
    assert(os.remove(list[1]))
    shell.must("mkfifo " .. list[1])
    -- a tuning that opened the FIFO would wait for a writer for ever: `timeout` ends such a
    -- one (a failure), and only such a one
    local out, code = shell.run(("env KTLUA_CACHE=%s timeout 300 %s %s"):format(cache, shell.ktlua,
                                                                              script()))
    assert.are.equal(0, code, out)
    local again, same = split(out)
    assert.are.equal("compiles\t1\tcached\t5", again)
    assert.are.equal(results, same)
    -- the program compiled took the FIFO's place
    assert.are.equal(0, select(2, shell.run("test -f " .. list[1])))
    assert.are.equal("compiles\t0\tcached\t6", (split(tune())))
  end)

  it("counts, evicts and clears only the entries it wrote, whatever else the folder holds", function()
    assert(os.execute("mkdir -p " .. cache))
    -- a user's notes, a file named as an entry is and one named as an unfinished write is (two
    -- hours old: unfinished writes of another process that old are removed)
    local others = { notes = "notes.ktp", named = "0123456789abcdef.ktp", temp = "notes.ktp.tmp-1-2" }
    for _, name in pairs(others) do files.write(cache .. "/" .. name, "my notes\n") end
    shell.must(("touch -d '2 hours ago' %s/%s"):format(cache, others.temp))
    local function kept()
      for _, name in pairs(others) do
        assert.are.equal("my notes\n", files.read(cache .. "/" .. name))
      end
    end
    tune()
    local out = ktlua("cache info")
    assert.matches("\nentries: 7\n", out) -- six programs and the inputs' check kernel
    local list, check = entry_files()
    local bytes = files.read(check):len()
    for _, f in ipairs(list) do
      local text = files.read(f)
      if text ~= "my notes\n" then bytes = bytes + #text end
    end
    assert.matches(("(%d bytes)"):format(bytes), out, 1, true)
    -- a bound of one byte: every write removes all the other entries
    assert.are.equal("compiles\t1\tcached\t0", (split((ktlua(script({ scales = "5", wgs = "1" }),
                                                                   "KTLUA_CACHE_SIZE=1")))))
    kept()
    assert.matches("\nentries: 0\n", (ktlua("cache info")))
    tune()
    assert.are.equal("removed 7 entries from " .. cache .. "\n", (ktlua("cache clear")))
    kept()
    assert.matches("\nentries: 0\nsize:    0 bytes %(0 bytes%)", (ktlua("cache info")))
  end)

  it("takes a bound of at most 2^63 - 1 bytes, and says so of a larger one", function()
    local out, code = ktlua("cache info", "KTLUA_CACHE_SIZE=9223372036854775807")
    assert.are.equal(0, code, out)
    assert.matches("of at most 8.0 EiB\n$", out)
    for _, size in ipairs({ "9223372036854775808", "18446744073709551615", "18446744073709551616",
                            "8589934592G", "99999999999999999999999K" }) do
      local why = ("KTLUA_CACHE_SIZE: '%s' is too large: the bound is at most 9223372036854775807 "
        .. "bytes (8 EiB)"):format(size)
      out, code = ktlua("cache info", "KTLUA_CACHE_SIZE=" .. size)
      assert.are.equal(1, code, out)
      assert.are.equal("ktlua: " .. why .. "\n", out)
      out, code = ktlua("-e 'kt.tuner(\"opencl\")'", "KTLUA_CACHE_SIZE=" .. size)
      assert.are.equal(1, code, out)
      assert.matches(why, out, 1, true)
    end
  end)

  it("rejects a cache option that is no boolean", function()
    local ok, err = pcall(kt.tuner, "opencl", { cache = "no" })
    assert.is_false(ok)
    assert.matches("cache", err)
  end)
end)

describe("the program cache on disk with CUDA (a stand-in driver: spec/support/fake_cuda.c)", function()
  local missing = require("spec.support.fake_cuda").missing()
  if missing then
    pending(missing)
    return
  end
  local lib = files.tmpname()
  setup(function() require("spec.support.fake_cuda").build(lib) end)
  teardown(function() os.execute("rm -rf " .. lib) end)

  -- Writes a tuning (`kernel`: Lua making k) that prints its summary's compiles and cached and
  -- its statuses, then runs `after`; returns a run of it in a new process (env: more variables)
  -- on a disk cache of its own, and that cache's folder.
  local function script(name, kernel, after)
    local path, cache = lib .. "/" .. name .. ".lua", lib .. "/" .. name .. "-cache"
    files.write(path, [[
local kt = require "ktlua"
local tuner = kt.tuner("cuda:0", { isolate = os.getenv("ISOLATE") ~= "0" })
local c = kt.array("float", 64)
]] .. kernel .. [[
local r = tuner:tune(k, { repeats = 1, progress = false })
local s = r:summary()
io.write(s.compiles, " ", s.cached)
for i = 1, #r do io.write(" ", r[i].status) end
print()
]] .. (after or ""))
    return function(env)
      local out, code = shell.run(("env KTLUA_CACHE=%s KTLUA_LIBCUDA=%s/libcuda.so.1 %s %s %s")
        :format(cache, lib, env or "", shell.ktlua, path))
      assert.are.equal(0, code, out)
      return out
    end, cache
  end

  it("loads the cubins an earlier tuning compiled, templates' lowered names with them", function()
    local run, cache = script("tune", [[
local k = tuner:kernel{ name = "scaled<2>", global = 64, args = { c:output() }, source = [=[
template <int F>
__global__ void scaled(float *c) { c[threadIdx.x] = F * V; }]=] }
k:param("V", { 1, 2, 3 })
k:param("WG", { 8, 16 }, { group_x = "mul" })
]])
    assert.are.equal("6 0 ok ok ok ok ok ok\n", run())
    assert.are.equal("0 6 ok ok ok ok ok ok\n", run())
    assert.are.equal("0 6 ok ok ok ok ok ok\n", run("ISOLATE=0"))
    local names = io.popen("ls " .. cache):read("a")
    assert.are.equal(7, select(2, names:gsub("%.ktp", ""))) -- and the inputs' check kernel
  end)

  it("keeps what the compiler refused: a second tuning compiles nothing and fails it alike", function()
    local run, cache = script("refused", [[
local k = tuner:kernel{ name = "scaled", global = 64, args = { c:output() }, source = [=[
#if V == 2
#error V = 2 does not compile
#endif
extern "C" __global__ void scaled(float *c) { c[threadIdx.x] = V; }]=] }
k:param("V", { 1, 2, 3 })
]], "print(r[2].error)\n")
    local first, why = run():match("^(.-)\n(.*)$")
    assert.are.equal("3 0 ok compile_failed ok", first)
    assert.matches("V = 2 does not compile", why, 1, true)
    assert.are.equal("0 3 ok compile_failed ok\n" .. why, run())
    assert.are.equal("0 3 ok compile_failed ok\n" .. why, run("ISOLATE=0"))
    shell.run(("env KTLUA_CACHE=%s %s cache clear"):format(cache, shell.ktlua))
    assert.are.equal("3 0 ok compile_failed ok\n" .. why, run())
  end)
end)
