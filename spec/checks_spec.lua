-- The "close" validation method (numpy's allclose rule), "kernel_tuner"
-- (Kernel Tuner's default check, np.allclose(expected, got)), and the
-- configuration's sizes inside launchers (run.global, run.group).
local kt = require "ktlua"

local tuner = kt.tuner()
local statuses = require "spec.support.statuses"

describe("method = 'close'", function()
  -- Every element comes out as 8 + OFFSET; the reference holds 8.
  local n = 16
  local function with(offset, opts)
    local c = kt.array("float", n)
    local k = tuner:kernel{ name = "eight", global = n, args = { c:output() },
      source = "__kernel void eight(__global float *c) { c[get_global_id(0)] = 8.0f + OFFSET; }" }
    k:param("OFFSET", { offset })
    k:reference(c, function(ref) ref:fill(8) end, opts)
    return tuner:tune(k, { repeats = 1 })[1]
  end

  it("accepts |got - expected| <= atol + rtol * |expected| and rejects past it", function()
    -- |8.5 - 8| = 0.5 = 0.25 + 0.03125 * 8: on the boundary, accepted
    assert.are.equal("ok", with(0.5, { method = "close", atol = 0.25, rtol = 0.03125 }).status)
    assert.are.equal("ok", with(0.5, { method = "close", atol = 0.5, rtol = 0 }).status)
    local r = with(0.5, { method = "close", atol = 0.4999, rtol = 0 })
    assert.are.equal("invalid_output", r.status)
    assert.are.equal("element 0: got 8.5, expected 8 (difference 0.5 > atol 0.4999 + rtol 0 * 8 = "
      .. "0.4999); 16 of 16 elements differ", r.error)
    -- the relative term scales the reference (8), not the output (8.5):
    -- 0.25 + 0.0303 * 8 = 0.4924 < 0.5, where 0.25 + 0.0303 * 8.5 would be 0.5076
    assert.are.equal("invalid_output", with(0.5, { method = "close", atol = 0.25, rtol = 0.0303 }).status)
    -- numpy's defaults, atol 1e-8 and rtol 1e-5: 8 * 1e-5 = 8e-5 allows 2^-14, not 2^-12
    assert.are.equal("ok", with(2 ^ -14, { method = "close" }).status)
    assert.are.equal("invalid_output", with(2 ^ -12, { method = "close" }).status)
    assert.are.equal("ok", with(0, { method = "close", atol = 0, rtol = 0 }).status)
  end)

  it("compares integers and the first elements alike", function()
    local function ints(rtol)
      local c = kt.array("int", 8)
      local k = tuner:kernel{ name = "ramp", global = 8, args = { c:output() },
        source = "__kernel void ramp(__global int *c) { int i = get_global_id(0); c[i] = i < 4 ? 100 : 0; }" }
      k:param("X", { 0 })
      k:reference(c, function(ref) ref:fill(function(i) return i < 4 and 95 or 1 end) end,
        { method = "close", atol = 0, rtol = rtol, first = 4 })
      return tuner:tune(k, { repeats = 1 })[1]
    end
    assert.are.equal("ok", ints(0.1).status)               -- 5 <= 0.1 * 95
    local r = ints(0.05)                                   -- 5 > 0.05 * 95
    assert.are.equal("invalid_output", r.status)
    assert.matches("4 of 4 elements differ", r.error, 1, true)
  end)

  it("refuses options that do not go with the method", function()
    local c = kt.array("float", 4)
    local k = tuner:kernel{ name = "z", global = 4, args = { c:output() },
      source = "__kernel void z(__global float *c) { c[get_global_id(0)] = 0; }" }
    local function ref() end
    assert.has_error(function() k:reference(c, ref, { method = "close", tolerance = 1 }) end,
      'reference options.tolerance: method "close" takes atol and rtol instead')
    assert.has_error(function() k:reference(c, ref, { atol = 1 }) end,
      'reference options: atol and rtol go with method = "close" or "kernel_tuner" (method is absolute)')
    assert.has_error(function() k:reference(c, ref, { method = "close", rtol = -1 }) end,
      "reference options.rtol must not be negative")
    assert.has_error(function() k:reference(c, ref, { method = "closest" }) end,
      "reference options.method: expected absolute, relative, sum, close or kernel_tuner, got 'closest'")
    assert.has_error(function() k:reference(c, ref, { method = "kernel_tuner", tolerance = 1 }) end,
      'reference options.tolerance: method "kernel_tuner" takes atol and rtol instead')
  end)
end)

describe("method = 'kernel_tuner'", function()
  -- Every element comes out as GOT (a float, or OpenCL's NAN); the reference holds want.
  local n = 8
  local function with(got, want, opts)
    local c = kt.array("float", n)
    local k = tuner:kernel{ name = "value", global = n, args = { c:output() },
      source = "__kernel void value(__global float *c) { c[get_global_id(0)] = GOT; }" }
    k:param("GOT", { got })
    k:reference(c, function(ref) ref:fill(want) end, opts)
    return tuner:tune(k, { repeats = 1 })[1]
  end
  local function both(got, want, opts)
    local kt_opts, close_opts = { method = "kernel_tuner" }, { method = "close" }
    for key, v in pairs(opts or {}) do kt_opts[key], close_opts[key] = v, v end
    return with(got, want, kt_opts).status, with(got, want, close_opts).status
  end

  it("scales rtol by the output, as np.allclose(expected, got) does, where close scales the reference", function()
    -- |8.5 - 8| = 0.5: kernel_tuner 0.25 + 0.0303 * 8.5 = 0.50755 passes it,
    -- close 0.25 + 0.0303 * 8 = 0.4924 does not
    local kt_status, close_status = both("8.5f", 8, { atol = 0.25, rtol = 0.0303 })
    assert.are.equal("ok", kt_status)
    assert.are.equal("invalid_output", close_status)
    -- and the other way round the rule is not symmetric: output 8, reference 8.5
    kt_status, close_status = both("8.0f", 8.5, { atol = 0.25, rtol = 0.0303 })
    assert.are.equal("invalid_output", kt_status)
    assert.are.equal("ok", close_status)
    local r = with("8.0f", 8.5, { method = "kernel_tuner", atol = 0.25, rtol = 0.0303 })
    assert.are.equal("element 0: got 8, expected 8.5 (difference 0.5 > atol 0.25 + rtol 0.0303 * 8 "
      .. "(|got|, as Kernel Tuner scales) = 0.4924); 8 of 8 elements differ", r.error)
  end)

  it("has Kernel Tuner's default atol, 1e-6 (close: numpy's 1e-8)", function()
    -- 2^-21 = 4.8e-7 against a reference of 0: within 1e-6, beyond 1e-8
    local kt_status, close_status = both("0x1p-21f", 0)
    assert.are.equal("ok", kt_status)
    assert.are.equal("invalid_output", close_status)
    assert.are.equal("invalid_output", (both("0x1p-19f", 0)))   -- 1.9e-6 > 1e-6
  end)

  it("matches NaN with nothing, as numpy's equal_nan is off (close matches NaN with NaN)", function()
    local kt_status, close_status = both("NAN", 0 / 0)
    assert.are.equal("invalid_output", kt_status)
    assert.are.equal("ok", close_status)
    assert.are.equal("ok", (both("INFINITY", math.huge)))
    assert.are.equal("invalid_output", (both("INFINITY", -math.huge)))
  end)
end)

describe("run.global and run.group", function()
  local src = [[__kernel void fill(__global int *o) { int i = get_global_id(0); if (i < 100) o[i] = 1; }
    __kernel void two(__global int *o) { o[get_global_id(0)] = 2; }]]

  it("give each kernel's sizes under the configuration, as launched", function()
    local o = kt.array("int", 100)
    local p = kt.array("int", 64)
    local a = tuner:kernel{ source = src, name = "fill", global = 100, group = 1, round_global = true,
      args = { o:output() } }
    local b = tuner:kernel{ source = src, name = "two", global = { 8, 8 }, args = { p:output() } }
    local c = tuner:composition{ name = "both", kernels = { a, b } }
    c:param("WG", { 32, 64 })
    c:modifier(a, "group_x", "mul", "WG")
    c:modifier(b, "global_y", "div", 2)
    local seen = {}
    c:launcher(function(run, cfg)
      seen[cfg.WG] = { run.global[a], run.group[a], run.global[b], run.group[b] }
      run:launch(a)
      run:launch(b)
    end)
    local r = tuner:tune(c, { repeats = 1 })
    assert.are.same({ "ok", "ok" }, statuses(r))
    -- 100 rounded up to a multiple of the work-group; b lets the runtime choose
    assert.are.same({ { 128 }, { 32 }, { 8, 4 } }, seen[32])
    assert.are.same({ { 128 }, { 64 }, { 8, 4 } }, seen[64])
    assert.are.same(r[1].sizes[1].global, seen[32][1])
  end)

  it("refuse what is not a kernel of the task, and work only inside the launcher", function()
    local o = kt.array("int", 100)
    local a = tuner:kernel{ source = src, name = "fill", global = 100, args = { o:output() } }
    local other = tuner:kernel{ source = src, name = "two", global = 4, args = { o:output() } }
    local kept, err
    a:launcher(function(run)
      kept = run
      err = select(2, pcall(function() return run.global[other] end))
      run:launch(a)
    end)
    tuner:tune(a, { repeats = 1 })
    assert.matches("expected a kernel of the task being tuned", err)
    assert.has_error(function() return kept.global end,
      "this run is over: use the run object only inside its launcher")
  end)
end)
