-- Kernel sources written per configuration by Lua functions (code generation).
local kt = require "ktlua"

local statuses = require "spec.support.statuses"

local n = 64

-- c[i] = 2 * a[i], written out as TERMS terms of (2 / TERMS) * a[i]: the
-- text of each configuration differs, the output does not.
local function unrolled(cfg)
  local terms = {}
  for t = 1, cfg.TERMS do terms[t] = ("%.2ff * a[i]"):format(2 / cfg.TERMS) end
  return "__kernel void twice(__global const float *a, __global float *c) {\n"
      .. "  int i = get_global_id(0);\n  c[i] = " .. table.concat(terms, " + ") .. ";\n}\n"
end

local function twice(tuner, source, prelude)
  local a = kt.array("float", n):fill(function(i) return i end)
  local c = kt.array("float", n)
  local k = tuner:kernel{ name = "twice", global = n, source = source, prelude = prelude,
                          args = { a:input(), c:output() } }
  k:param("TERMS", { 1, 2, 4 })
  k:param("PAD", { 0, 1 })
  k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = 2 * i end end)
  return k, c
end

describe("a kernel source function", function()
  it("writes each configuration's source once, and the program cache keys on the text", function()
    local tuner = kt.tuner()
    local calls, seen = 0, {}
    local k = twice(tuner, function(cfg)
      calls = calls + 1
      seen[#seen + 1] = cfg.TERMS .. "/" .. cfg.PAD
      return unrolled(cfg)
    end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "ok", "ok", "ok", "ok", "ok" }, statuses(r))
    assert.are.equal(6, calls)                       -- once each, though compiled ahead
    assert.are.same({ "1/0", "1/1", "2/0", "2/1", "4/0", "4/1" }, seen)
    local c1 = tuner:cache()
    assert.are.equal(6, c1.misses)
    assert.are.equal(0, c1.hits)
    -- the same texts again: found in the cache, the functions run again
    tuner:tune(k, { repeats = 1 })
    local c2 = tuner:cache()
    assert.are.equal(12, calls)
    assert.are.equal(6, c2.misses)
    assert.are.equal(6, c2.hits)
    -- one run: found
    tuner:run(k, { TERMS = 2, PAD = 1 })
    assert.are.equal(7, tuner:cache().hits)
    tuner:close()
  end)

  it("compiles anew when the text changes, as a generator may read what changed", function()
    local tuner = kt.tuner()
    local comment = "first"
    local k = twice(tuner, function(cfg) return "// " .. comment .. "\n" .. unrolled(cfg) end)
    tuner:tune(k, { repeats = 1, stop = { count = 2 }, search = "exhaustive" })
    comment = "second"
    tuner:tune(k, { repeats = 1, stop = { count = 2 }, search = "exhaustive" })
    assert.are.equal(4, tuner:cache().misses)
    assert.are.equal(0, tuner:cache().hits)
    tuner:close()
  end)

  it("takes a prelude function, and a fixed source with it", function()
    local tuner = kt.tuner()
    local k = twice(tuner,
      "__kernel void twice(__global const float *a, __global float *c) { c[get_global_id(0)] = FACTOR * a[get_global_id(0)]; }",
      function(cfg) return "#define FACTOR " .. (cfg.TERMS == 4 and "3.0f" or "2.0f") end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "ok", "ok", "ok", "invalid_output", "invalid_output" }, statuses(r))
    tuner:close()
  end)

  it("fails a configuration whose generator fails, with the traceback, and tunes on", function()
    local tuner = kt.tuner()
    local k = twice(tuner, function(cfg)
      if cfg.TERMS == 4 then error("no unrolling by " .. cfg.TERMS) end
      if cfg.PAD == 1 then return nil end
      return unrolled(cfg)
    end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "generator_failed", "ok", "generator_failed", "generator_failed",
                      "generator_failed" }, statuses(r))
    assert.matches("^kernel twice: source%(cfg%) failed: spec/codegen_spec.lua:%d+: no unrolling by 4\n"
      .. "stack traceback:\n.*spec/codegen_spec.lua:%d+", r[5].error)
    assert.are.equal("kernel twice: source(cfg) returned a nil, expected the source text (a string)",
      r[2].error)
    assert.are.equal(0, r:best().config.PAD)
    assert.matches("2 ok, 4 generator_failed", r:summary().statuses.ok .. " ok, "
      .. r:summary().statuses.generator_failed .. " generator_failed", 1, true)
    tuner:close()
  end)

  it("fails a configuration whose generator runs past its time limit, and tunes on", function()
    local tuner = kt.tuner()
    local a = kt.array("float", n):fill(function(i) return i end)
    local c = kt.array("float", n)
    local k = tuner:kernel{ name = "twice", global = n, args = { a:input(), c:output() },
      generator_limit = 0.2,
      source = function(cfg)
        while cfg.TERMS == 2 do end -- never ends
        return unrolled(cfg)
      end }
    k:param("TERMS", { 1, 2, 4 })
    local r = tuner:tune(k, { repeats = 1, search = "exhaustive" })
    assert.are.same({ "ok", "generator_failed", "ok" }, statuses(r))
    assert.matches("^kernel twice: source%(cfg%) failed: spec/codegen_spec.lua:%d+: the generator "
      .. "ran past its time limit %(0.2 s%)\nstack traceback:", r[2].error)
    -- the hook is gone once the generator has returned
    assert.are.equal(nil, debug.gethook())
    assert.has_error(function()
      tuner:kernel{ name = "x", global = 1, source = function() end, generator_limit = 0 }
    end, "kernel.generator_limit: expected a positive number of seconds")
    assert.has_error(function()
      tuner:kernel{ name = "x", global = 1, source = "__kernel void x() {}", generator_limit = 1 }
    end, "kernel.generator_limit: only a source or prelude function has a time limit")
    tuner:close()
  end)

  it("stops a tuning whose first configurations all fail alike", function()
    local tuner = kt.tuner()
    local k = twice(tuner, function() error("broken", 0) end)
    k:param("MORE", { 1, 2 })
    local ok, err = pcall(tuner.tune, tuner, k, { repeats = 1 })
    assert.is_false(ok)
    assert.matches("the first 8 configurations all failed the same way (generator_failed", err, 1, true)
    tuner:close()
  end)

  it("refuses what is neither a string nor a function", function()
    local tuner = kt.tuner()
    assert.has_error(function()
      tuner:kernel{ name = "x", global = 1, source = function() end, prelude = {} }
    end, "kernel.prelude: expected a string or a function(cfg), got table")
    assert.has_error(function()
      tuner:kernel{ name = "x", global = 1, file = "x.cl", source = function() end }
    end, "kernel: give exactly one of 'file' and 'source'")
    tuner:close()
  end)
end)
