-- Faults are statuses of configurations; misuse of the API is a Lua error.
local kt = require "ktlua"

local tuner = kt.tuner()

local statuses = require "spec.support.statuses"

describe("a tuning with faults", function()
  it("records compile_failed with the compiler's log for exactly the configurations that fail", function()
    local out = kt.array("int", 8)
    local k = tuner:kernel{ name = "f", global = 8, args = { out:output() }, source = [[
__kernel void f(__global int *o) {
#if MODE == 2
  o[get_global_id(0)] = undeclared_name;
#else
  o[get_global_id(0)] = MODE;
#endif
}]] }
    k:param("MODE", { 1, 2, 3 })
    k:param("COPY", { 0, 1 })
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "ok", "compile_failed", "compile_failed", "ok", "ok" }, statuses(r))
    assert.matches("<string>:3:%d+: use of undeclared identifier 'undeclared_name'", r[3].error)
    assert.is_nil(r[3].time_ms)
    assert.are.equal(0, #r[3].samples_ms)
  end)

  it("records launch_failed when the device refuses a launch", function()
    local out = kt.array("int", 10)
    local k = tuner:kernel{ source = "__kernel void g(__global int *o) { o[get_global_id(0)] = 1; }",
                            name = "g", global = 10, group = 1, args = { out:output() } }
    k:param("WG", { 1, 2, 3, 5 }, { group_x = "mul" }) -- 3 does not divide 10
    k:prune{ divisible = false } -- else pruning takes WG = 3 out of the space
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "ok", "launch_failed", "ok" }, statuses(r))
    assert.matches("CL_INVALID_WORK_GROUP_SIZE", r[3].error)
  end)

  it("says which argument a kernel was not given, or was given wrongly", function()
    local out = kt.array("int", 4)
    local source = "__kernel void n(__global int *o, int v) { o[get_global_id(0)] = v; }"
    local r = tuner:run(tuner:kernel{ source = source, name = "n", global = 4, args = { out:output() } })
    assert.are.equal("launch_failed", r.status)
    assert.are.equal("kernel n: the kernel declares 2 parameters but is given 1 arguments", r.error)
    r = tuner:run(tuner:kernel{ source = source, name = "n", global = 4, args = { out:output(), kt.double(1) } })
    assert.are.equal("launch_failed", r.status)
    assert.matches("^kernel n: argument 2: clSetKernelArg failed: CL_INVALID_ARG_SIZE", r.error)
  end)

  it("names the real cause of a kernel name the program lacks", function()
    local out = kt.array("float", 4)
    local function run(name, source)
      return tuner:run(tuner:kernel{ source = source, name = name, global = 4, args = { out:output() } })
    end
    -- step is one of OpenCL C's built-in functions: PoCL names such a kernel _cl_step
    local r = run("step", "__kernel void step(__global float *o) { o[get_global_id(0)] = 1.0f; }")
    assert.are.equal("compile_failed", r.status)
    assert.are.equal("the program has no kernel named 'step': step is the name of an OpenCL C "
      .. "built-in function, and the compiler named the kernel _cl_step instead; give it another name",
      r.error)
    r = run("g", "__kernel void f(__global float *o) { o[0] = 1.0f; }\n"
      .. "__kernel void h(__global float *o) { o[1] = 1.0f; }")
    assert.are.equal("compile_failed", r.status)
    assert.are.equal("the program has no kernel named 'g' (its kernels: f, h)", r.error)
  end)

  it("says which copy of a launcher overlapped", function()
    local a = kt.array("float", 64)
    local k = tuner:kernel{ source = "__kernel void f(__global float *a) { a[get_global_id(0)] = 1.0f; }",
                            name = "f", global = 64, args = { a:output() } }
    k:launcher(function(run)
      run:launch(k)
      run:copy(a, a)
    end)
    local r = tuner:run(k)
    assert.are.equal("runtime_failed", r.status)
    local place, says = r.error:match("^(spec/faults_spec%.lua:%d+): ([^\n]*)")
    assert.is_truthy(place, r.error) -- the launcher's line
    assert.are.equal("copy: the source and the destination are one buffer (64 float elements), so "
      .. "the copy overlaps itself: copy into another array", says)
  end)

  -- Every error code of the OpenCL headers has its name in the backend's
  -- table, by its number (codes of OpenCL 2 and 3 too).
  it("names every OpenCL error code", function()
    local header = io.open("/usr/include/CL/cl.h")
    local source = io.open("core/device/cl_errors.c")
    if not header or not source then
      return pending("needs the sources and the OpenCL headers")
    end
    local h, c = header:read("a"), source:read("a")
    header:close()
    source:close()
    local codes = h:match("/%* Error Codes %*/(.-)\n\n/%*")
    local n = 0
    for name, code in codes:gmatch("#define (CL_[%u_]+)%s+(%-%d+)") do
      assert.is_truthy(c:find(("{%s, \"%s\"}"):format(code, name), 1, true), name)
      n = n + 1
    end
    assert.are.equal(62, n)
  end)

  it("records too_many_threads for work-groups beyond the kernel's limit", function()
    local out = kt.array("int", 16384)
    local k = tuner:kernel{ source = "__kernel void h(__global int *o) { o[get_global_id(0)] = 1; }",
                            name = "h", global = 16384, group = 1, args = { out:output() } }
    local limit = tuner.device.max_group_size
    k:param("WG", { 8, limit * 2 }, { group_x = "mul" })
    k:prune(false) -- else pruning takes the device's limit out of the space
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "too_many_threads" }, statuses(r))
    assert.matches("a work%-group of " .. limit * 2 .. " work%-items exceeds the kernel's limit", r[2].error)
  end)

  it("records launch_failed when a thread modifier gives no threads", function()
    local out = kt.array("int", 8)
    local k = tuner:kernel{ source = "__kernel void z(__global int *o) { o[get_global_id(0)] = 1; }",
                            name = "z", global = 8, args = { out:output() } }
    k:param("D", { 1, 16 }, { global_x = "div" })
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "launch_failed" }, statuses(r))
    assert.are.equal("kernel z, global size x: thread modifier 'div' gives the non-positive size 0", r[2].error)
  end)

  it("stops on a Lua error in a thread modifier function, naming its line", function()
    local out = kt.array("int", 8)
    local k = tuner:kernel{ source = "__kernel void z(__global int *o) { o[get_global_id(0)] = 1; }",
                            name = "z", global = 8, args = { out:output() } }
    k:param("D", { 1 })
    k:modifier("global_x", function(size, cfg) return size // cfg.nothing end)
    local ok, err = pcall(tuner.tune, tuner, k)
    assert.is_false(ok)
    assert.matches("kernel z, global size x: spec/faults_spec.lua:%d+: attempt to perform", err)
  end)
end)

describe("misuse of the API", function()
  local out = kt.array("int", 8)
  local k = tuner:kernel{ source = "__kernel void m(__global int *o) { o[0] = 1; }", name = "m", global = 8,
                          args = { out:output() } }

  it("names what was expected", function()
    assert.has_error(function() k:param() end)
    assert.has_error(function() k:param("A", 5) end)
    assert.has_error(function() k:modifier("global_w", "mul", 2) end,
      "unknown modifier target 'global_w' (expected global_x, global_y, global_z, group_x, group_y or group_z)")
    assert.has_error(function() k:modifier("global_x", "pow", 2) end)
    assert.has_error(function() k:modifier("global_x", "mul", "NOPE") end)
    assert.has_error(function() k:param("B", { 1 }, { global_x = "times" }) end)
    assert.has_error(function() tuner:tune(k, { stop = 5 }) end, "tune options.stop: expected a table")
    assert.has_error(function() tuner:tune("k") end)
    assert.has_error(function() kt.tuner("nowhere:0") end)
    assert.has_error(function() tuner:run(k, "x") end)
    assert.has_error(function() k:modifier("global_y", "mul", 2) end,
      "a modifier of dimension y, but the kernel is 1-dimensional")
    assert.has_error(function() k:param("C", { 1 }, { group_z = "mul" }) end,
      "a modifier of dimension z, but the kernel is 1-dimensional")
    assert.is_nil(k:space():params()[1]) -- the parameter was not added either
    assert.has_error(function() k:reference(out, out:copy(), { first = 9 }) end,
      "bad argument #3 to 'reference' (first = 9 exceeds the output's 8 elements)")
  end)

  it("says when a reference's output is no argument of the task's kernels", function()
    local unused = kt.array("int", 8)
    local r = tuner:kernel{ source = "__kernel void r(__global int *o) { o[0] = 1; }", name = "r", global = 8,
                            args = { out:output() } }
    r:reference(unused, function(ref) ref:fill(1) end)
    assert.has_error(function() tuner:tune(r) end, "task r: output 1 (int[8]) is not an argument of its "
      .. "kernels, nor did its launcher give it to one")
  end)

  it("never crashes on nil or wrong arguments", function()
    local calls = {
      function() kt.array() end, function() kt.array("float") end, function() kt.struct() end,
      function() kt.scalar() end, function() kt.localmem() end, function() tuner:kernel() end,
      function() tuner:kernel(5) end, function() k:constraint() end, function() k:constraint({}, 5) end,
      function() k:reference() end, function() k:reference(out) end, function() tuner:composition() end,
      function() tuner:composition{ kernels = {} } end, function() kt.device({ backend = 5 }) end,
      function() k:space():config() end, function() k:space():index() end, function() k:args(5) end,
    }
    for i, f in ipairs(calls) do
      local ok = pcall(f)
      assert.is_false(ok, "call " .. i)
    end
  end)
end)
