-- Compile outliers (core/eval/outlier.c, core/eval/loop.c): a compile that runs far longer than
-- the tuning's others holds none of the configurations behind it, is set aside once past
-- compile_outlier times the median, and, where the tuning stops before it is over, is recorded
-- compile_deferred and its compiler process killed. On PoCL, in compiler processes, whose test
-- hooks (core/device/compile_pool.h) make a compile wait for ever (KTLUA_TEST_COMPILER_HANG), or
-- until a file exists (KTLUA_TEST_COMPILER_UNTIL) that the spec's progress callback makes: a
-- slow compile whose end the spec chooses, whatever the machine's load.
local kt = require "ktlua"
local shell = require "spec.support.shell"
local files = require "spec.support.files"
local fake_cuda = require "spec.support.fake_cuda"

describe("compile outliers", function()
  local dir = files.tmpname()
  setup(function() assert(os.execute("mkdir -p " .. dir)) end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  -- A tuning of six configurations (F = 1 .. 6) in two compiler processes, F = 2's compile held
  -- by the hooks in env; opts are the tune options (Lua text), progress the body of a progress
  -- function of (n, result) where n counts the results. Prints "F status" per result, in order,
  -- then the summary's evaluated, deferred, abandoned and stopped, then each error.
  local opencl = { "opencl", "__kernel void k(__global float *c) { c[get_global_id(0)] = F; }" }
  local function run(env, opts, progress, extra, device)
    local path = dir .. "/tune.lua"
    device = device or opencl
    files.write(path, ([[
local kt = require "ktlua"
local tuner = kt.tuner(%q, { cache = false, compile_workers = 2, build_threads = 2 })
local c = kt.array("float", 16)
local k = tuner:kernel{ name = "k", global = 16, args = { c:output() }, source = %q }
k:param("F", { 1, 2, 3, 4, 5, 6 })
local n = 0
local options = %s
options.search, options.repeats = options.search or "exhaustive", 1
options.progress = function(res) n = n + 1; %s end
local r = tuner:tune(k, options)
for i = 1, #r do print(r[i].config.F, r[i].status) end
local s = r:summary()
print(s.evaluated, s.deferred, s.abandoned, s.stopped)
for i = 1, #r do if r[i].error then print(r[i].config.F, r[i].infrastructure, r[i].error) end end
%s]]):format(device[1], device[2], opts, progress or "", extra or ""))
    local out, code = shell.run(("env KTLUA_CACHE=off %s %s %s"):format(env, shell.ktlua, path))
    assert.are.equal(0, code, out)
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
    return lines, out
  end

  it("evaluate, in the order proposed, the configurations compiled behind one that runs long, and it once it is over",
     function()
    local flag = dir .. "/go"
    os.remove(flag)
    -- F = 2 compiles once the five others are in: before, it can only be overtaken
    local lines = run(("'KTLUA_TEST_COMPILER_HANG=#define F 2' KTLUA_TEST_COMPILER_UNTIL=%s"):format(flag),
      "{}", ("if n == 5 then io.open(%q, 'w'):close() end"):format(flag))
    assert.are.same({ "1\tok", "3\tok", "4\tok", "5\tok", "6\tok", "2\tok",
                      "6\t0\t0\tspace explored" }, lines)
  end)

  it("evaluate the configurations a random search proposes with a count, whatever their compiles take",
     function()
    local function set(lines)
      local f = {}
      for i = 1, 4 do f[i] = lines[i]:match("^(%d+)\tok$") end
      table.sort(f)
      return f
    end
    local opts = "{ search = 'random', seed = 5, stop = { count = 4 }, compile_outlier = %s }"
    local plain = run("", opts:format("false"))
    -- the first proposal's compile ends after the three others are in: it is evaluated last
    local first, flag = plain[1]:match("^(%d+)"), dir .. "/first"
    os.remove(flag)
    local held = run(("'KTLUA_TEST_COMPILER_HANG=#define F %s' KTLUA_TEST_COMPILER_UNTIL=%s"):format(first, flag),
      opts:format("{ factor = 1000 }"), ("if n == 3 then io.open(%q, 'w'):close() end"):format(flag))
    assert.are.same(set(plain), set(held))
    assert.are.equal(first .. "\tok", held[4])
    assert.are_not.equal(first .. "\tok", held[1])
  end)

  it("set aside, with a count, a compile far beyond the median: another is evaluated in its place, "
     .. "and it is compile_deferred, its compile killed", function()
    local journal = dir .. "/deferred.jsonl"
    os.remove(journal)
    local lines, out = run("'KTLUA_TEST_COMPILER_HANG=#define F 2'",
      ("{ stop = { count = 4 }, journal = %q }"):format(journal), nil, "r:print()")
    assert.are.same({ "1\tok", "3\tok", "4\tok", "5\tok", "2\tcompile_deferred",
                      "4\t1\t1\tcount" }, { table.unpack(lines, 1, 6) })
    -- its own status and reason, no verdict: counted apart, shown, and run again on resume
    assert.matches("^2\ttrue\tits compile had run [%d.]+ s, more than 10 times the median of the "
      .. "tuning's 3 compiles before %([%d.e-]+ s; compile_outlier%); the tuning stopped %(count%) "
      .. "before it was over: not evaluated$", lines[7])
    assert.matches("4 of 6 configurations %(exhaustive search, stopped: count%)\n  4 ok, 1 compile_deferred\n",
      out)
    local records = files.lines(journal)
    assert.are.equal(6, #records) -- its header, then each result as it came
    assert.matches('"status":"compile_deferred"', records[6])
    assert.matches('"infrastructure":true', records[6])
    lines = run("", ("{ journal = %q, resume = true }"):format(journal))
    assert.are.same({ "1\tok", "2\tok", "3\tok", "4\tok", "5\tok", "6\tok", "6\t0\t0\tspace explored" },
      lines)
  end)

  it("set aside a compile far beyond the median with CUDA too (NVRTC in compiler processes, a stand-in driver)",
     function()
    local missing = fake_cuda.missing()
    if missing then
      pending(missing)
      return
    end
    fake_cuda.build(dir .. "/cuda")
    local lines = run(("KTLUA_LIBCUDA=%s/cuda/libcuda.so.1 'KTLUA_TEST_COMPILER_HANG=#define F 2'"):format(dir),
      "{ stop = { count = 4 } }", nil, nil,
      { "cuda:0", 'extern "C" __global__ void k(float *c) { c[threadIdx.x] = F; }' })
    assert.are.same({ "1\tok", "3\tok", "4\tok", "5\tok", "2\tcompile_deferred",
                      "4\t1\t1\tcount" }, { table.unpack(lines, 1, 6) })
    assert.matches("^2\ttrue\tits compile had run ", lines[7])
  end)

  it("keep the order proposed with compile_outlier = false, however long a compile runs", function()
    local flag = dir .. "/late"
    os.remove(flag)
    -- F = 2 compiles more than a second (the rule's floor), F = 3 .. 6 long done by then
    local lines = run(("'KTLUA_TEST_COMPILER_HANG=#define F 2' KTLUA_TEST_COMPILER_UNTIL=%s"):format(flag),
      "{ compile_outlier = false }",
      ("if n == 1 then os.execute('sleep 1.5'); io.open(%q, 'w'):close() end"):format(flag))
    assert.are.same({ "1\tok", "2\tok", "3\tok", "4\tok", "5\tok", "6\tok",
                      "6\t0\t0\tspace explored" }, lines)
  end)

  it("wait for no compile when the tuning's time is up: the one in flight is killed", function()
    -- in the order proposed, F = 2's compile (for ever) holds the rest; two seconds stop it
    local lines = run("'KTLUA_TEST_COMPILER_HANG=#define F 2'",
      "{ compile_outlier = false, stop = { seconds = 2 } }")
    assert.are.equal("1\tok", lines[1])
    assert.matches("^1\t0\t[1-5]\tseconds$", lines[2])
    assert.are.equal(2, #lines)
  end)

  it("reject a rule that is no rule, naming what is expected", function()
    local tuner = kt.tuner("opencl")
    local k = tuner:kernel{ name = "k", global = 4, args = { kt.array("float", 4):output() },
      source = "__kernel void k(__global float *c) { c[get_global_id(0)] = 1; }" }
    for _, case in ipairs({
      { 0.5, "compile_outlier: expected a factor from 1 to 10^6 %(times the median compile%), or false" },
      { { after = 0 }, "compile_outlier.after: expected a number of compiles from 1" },
      { { floor = 0 }, "compile_outlier.floor: expected seconds above 0" },
      { { median = 3 }, "median" },
      { "10", "compile_outlier: expected a factor, a table {factor =, after =, floor =} or false, got string" },
    }) do
      local ok, err = pcall(tuner.tune, tuner, k, { compile_outlier = case[1], progress = false })
      assert.is_false(ok)
      assert.matches(case[2], err)
    end
    tuner:close()
  end)
end)
