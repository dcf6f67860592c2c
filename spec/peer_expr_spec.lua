-- What a Kernel Tuner or KTT user writes first (issue 28, "Expressions and
-- constraints"): restrictions on boolean parameters, conditional
-- expressions, lambda-style constraint functions, tune_params as a map and
-- metrics that read other metrics.
local kt = require "ktlua"
local files = require "spec.support.files"

-- The configurations the restrictions keep, as "k=v,k=v" strings, sorted.
local function kept(params, constraints)
  local out = {}
  for _, cfg in kt.space{ params = params, constraints = constraints }:configs() do
    local parts = {}
    for _, p in ipairs(params) do parts[#parts + 1] = p[1] .. "=" .. tostring(cfg[p[1]]) end
    out[#out + 1] = table.concat(parts, ",")
  end
  table.sort(out)
  return out
end

local function sorted(t)
  table.sort(t)
  return t
end

local function space_error(params, constraints)
  local ok, err = pcall(kt.space, { params = params, constraints = constraints })
  if ok then ok, err = pcall(err.count, err) end
  assert.is_false(ok, tostring(constraints[1]))
  return err
end

local BOOL = { { "USE_SHMEM", { true, false } }, { "N", { 1, 2 } } }

describe("restrictions on boolean parameters (issue 28, item 1)", function()
  it("port from Kernel Tuner as they are", function()
    local shmem = { "USE_SHMEM=true,N=1", "USE_SHMEM=true,N=2" }
    local plain = { "USE_SHMEM=false,N=1", "USE_SHMEM=false,N=2" }
    assert.are.same(shmem, kept(BOOL, { "USE_SHMEM == True" }))
    assert.are.same(shmem, kept(BOOL, { "USE_SHMEM" }))
    assert.are.same(plain, kept(BOOL, { "not USE_SHMEM" }))
    assert.are.same(plain, kept(BOOL, { "USE_SHMEM == False" }))
    assert.are.same(plain, kept(BOOL, { "!USE_SHMEM" }))
    assert.are.same({ "USE_SHMEM=true,N=2" }, kept(BOOL, { "USE_SHMEM and N == 2" }))
    assert.are.same(sorted{ "USE_SHMEM=true,N=1", "USE_SHMEM=true,N=2", "USE_SHMEM=false,N=2" },
      kept(BOOL, { "USE_SHMEM or N == 2" }))
    assert.are.same(plain, kept(BOOL, { "USE_SHMEM != True" }))
  end)

  it("test any value by Python's truth, and use a condition as a number", function()
    local P = { { "A", { 0, 1, 2 } }, { "F", { 0.0, 0.5 } }, { "S", { "", "x" } } }
    assert.are.same({ "A=1,F=0.5,S=x", "A=2,F=0.5,S=x" }, kept(P, { "A and F and S" }))
    assert.are.same({ "A=0,F=0.0,S=" }, kept(P, { "not (A or F or S)" }))
    assert.are.same({ "A=0,F=0.0,S=x", "A=0,F=0.5,S=x" }, kept(P, { "not A and S" }))
    -- True is 1: a condition is a number, and a number is a condition
    assert.are.same({ "A=2,F=0.0,S=", "A=2,F=0.5,S=" },
      kept(P, { "(A > 1) + (S == '') == 2" }))
    assert.are.same({ "A=1,F=0.5,S=", "A=1,F=0.5,S=x" }, kept(P, { "A * 2 - 1 == (F > 0)" }))
    assert.are.same(sorted{ "A=1,F=0.0,S=", "A=1,F=0.5,S=", "A=1,F=0.0,S=x", "A=1,F=0.5,S=x" },
      kept(P, { "A == True" }))
  end)

  it("gives and/or Python's operand, on both machines", function()
    local f = kt._expression("A or B")
    assert.are.equal(7, f{ A = 0, B = 7 })
    assert.are.equal(3, f{ A = 3, B = 7 })
    assert.are.equal("b", kt._expression("A and B"){ A = "a", B = "b" })
    assert.are.equal("", kt._expression("A and B"){ A = "", B = "b" })
    assert.are.equal(0.0, kt._expression("A and 2"){ A = 0.0 })
    -- the integer machine (integers alone) and the bytecode machine (a float
    -- parameter) agree: (A or B) is A when A is not 0
    local ints = kept({ { "A", { 0, 1, 2 } }, { "B", { 0, 3 } } }, { "(A or B) == 3 or (A and B) == 2" })
    assert.are.same({ "A=0,B=3" }, ints)
    local mixed = kept({ { "A", { 0, 1, 2 } }, { "B", { 0, 3, 0.5 } } },
      { "(A or B) == 3 or (A and B) == 2" })
    assert.are.same({ "A=0,B=3" }, mixed)
  end)

  it("checks at run time that what and/or gave is a number where one is needed", function()
    local P = { { "S", { "x" } }, { "N", { 1 } } }
    assert.matches("at character 10: '%+' takes numbers, not the string \"x\"",
      space_error(P, { "(S or N) + 1 > 0" }))
    assert.matches("at character 10: '<' takes numbers, not the string \"x\"",
      space_error(P, { "(S or N) < 2" }))
    assert.matches("at character 1: the function takes numbers, not the string \"x\"",
      space_error(P, { "max(S or N, 2) > 1" }))
    assert.are.same({ "S=x,N=1" }, kept(P, { "(S or N) == 'x'" })) -- compared: no error
    assert.are.same({}, kept(P, { "(S or N) == 1" }))               -- a string is not 1
  end)
end)

describe("conditional expressions (issue 28, item 2)", function()
  -- KTT's Examples/JSON/CoulombSum3d.json, as the issue quotes it
  local COULOMB = "1+(i//4)*(0.1 + 0.05*(i%4)) if i%4 < 3 else ((i//4)%10)*0.1"

  it("read KTT's CoulombSum3d generator", function()
    local f, names = kt._expression(COULOMB)
    assert.are.same({ "i" }, names)
    local want = { [0] = 1, 1, 1, 0, 1.1, 1.15, 1.2, 0.1, 1.2, 1.3, 1.4, 0.2 }
    for i = 0, 11 do
      assert.is_true(math.abs(f{ i = i } - want[i]) < 1e-12, "i = " .. i)
    end
    assert.are.equal("integer", math.type(f{ i = 3 } == 0 and 0 or f{ i = 0 }))
    assert.are.equal(0.1 * 12 // 1 * 0 + 12 // 4 % 10 * 0.1, f{ i = 15 })
  end)

  it("read a Generator of a T1 file", function()
    local dir = files.tmpname()
    assert(os.execute("mkdir -p " .. dir))
    files.write(dir .. "/vadd.cl", files.read("spec/fixtures/t1/vadd.cl"))
    files.write(dir .. "/vadd_expected.bin", files.read("spec/fixtures/t1/vadd_expected.bin"))
    local text = files.read("spec/fixtures/t1/vadd_T1.json")
    local at = assert(text:find('"DataSource": "i % 7"', 1, true))
    text = text:sub(1, at - 1) .. '"DataSource": "' .. COULOMB .. '"' .. text:sub(at + 21)
    files.write(dir .. "/p.json", text)
    local x = kt.t1_read(dir .. "/p.json").args[3]
    assert.are.equal(COULOMB, x.source)
    assert.are.equal(1.15, x.generator{ i = 5 })
    assert.are.equal(0.1, x.generator{ i = 7 })
  end)

  it("bind as Python's: below or, right to left, evaluating only the branch taken", function()
    local e = function(text, vals) return kt._expression(text)(vals or {}) end
    assert.are.equal(1, e("1 if A or B else 2", { A = 0, B = 1 }))
    assert.are.equal(3, e("1 if A else 2 if B else 3", { A = 0, B = 0 }))
    assert.are.equal(2, e("1 if A else 2 if B else 3", { A = 0, B = 1 }))
    assert.are.equal(1, e("1 if A else 2 if B else 3", { A = 1, B = 0 }))
    assert.are.equal(6, e("(1 if A else 2) + 4", { A = 0 }))
    assert.are.equal(5, e("1 + 4 if A else 2", { A = 1 }))
    assert.are.equal(0, e("10 // A if A != 0 else 0", { A = 0 })) -- no division by zero
    assert.are.equal("y", e("'x' if A > 1 else 'y'", { A = 1 }))
    assert.are.equal(4, e("max(A if A else 4, 2)", { A = 0 }))
    assert.is_true(e("(A if A < 0 else B < 2) == False", { A = 1, B = 3 }))
  end)

  it("prune in constraints, on both machines, and in chains and 'in' tests", function()
    local P = { { "A", { 1, 2, 3, 4 } }, { "B", { 0, 1 } } }
    local want = sorted{ "A=2,B=0", "A=4,B=0", "A=1,B=1", "A=2,B=1" }
    assert.are.same(want, kept(P, { "A % 2 == 0 if B == 0 else A < 3" }))
    local F = { { "A", { 1, 2, 3, 4 } }, { "B", { 0, 1, 0.5 } } } -- floats: the bytecode machine
    assert.are.same(sorted{ "A=2,B=0", "A=4,B=0", "A=1,B=1", "A=2,B=1", "A=1,B=0.5" },
      kept(F, { "(A % 2 == 0 if B == 0 else A < 3) and (B != 0.5 or A == 1)" }))
    assert.are.same(sorted{ "A=2,B=0", "A=3,B=0", "A=1,B=1", "A=2,B=1" },
      kept(P, { "1 < (A if B == 0 else A + 1) <= 3" }))
    assert.are.same(sorted{ "A=1,B=0", "A=4,B=0", "A=3,B=1" },
      kept(P, { "(A if B == 0 else A + 1) in [1, 4]" }))
  end)

  it("read in list comprehensions, an 'if' after a condition being a clause", function()
    assert.are.same({ 3, -4, 5 }, kt.python_list("[a if a % 2 else -a for a in range(6) if a if a > 2]"))
    assert.are.same({ 1, 7, 3 }, kt.python_list("[(a if a % 2 else 0) or 7 for a in range(1, 4)]"))
    assert.are.same({ 0, 2 }, kt.python_list("[a for a in range(3) if (a if a != 1 else 0) == a]"))
    assert.are.same({ 1, 2 }, kt.python_list("[x for x in [1 if True else 0, 2]]"))
  end)

  it("say what is missing", function()
    local ok, err = pcall(kt.python_list, "[1 if 2]")
    assert.is_false(ok)
    assert.matches("at character 8: expected 'else' for the 'if' at character 4", err)
    assert.matches("at character 7: expected 'else' for the 'if' at character 3",
      space_error(BOOL, { "N if N" }))
    assert.matches("at character 13: expected a value, found the end of the expression",
      space_error(BOOL, { "N if N else " }))
  end)
end)

describe("expressions that open many jumps at once", function()
  it("run on the bytecode machine past the integer machine's bound", function()
    -- 90 nested parenthesised ors once overran the integer machine's array of pending jumps
    local text = assert(io.open("spec/fixtures/fuzz/peer_expr_nested_or.txt")):read("a")
    assert.are.same({ "A=1", "A=2" }, kept({ { "A", { 1, 2 } } }, { text }))
    local chain = ("0 if A > 5 else "):rep(99) .. "A"
    assert.are.same({ "A=1", "A=2" }, kept({ { "A", { 1, 2 } } }, { chain }))
  end)
end)

describe("a constraint function in Kernel Tuner's lambda style (issue 28, item 3)", function()
  local PAD = { { "use_padding", { 0, 1 } }, { "block_size_x", { 16, 32, 48, 64 } } }
  local function padding(p) return p.use_padding == 0 or p.block_size_x % 32 ~= 0 end

  it("reads any parameter, also one that its first call did not", function()
    -- use_padding is 0 on the first call: block_size_x is read only later
    local want = sorted{ "use_padding=0,block_size_x=16", "use_padding=0,block_size_x=32",
      "use_padding=0,block_size_x=48", "use_padding=0,block_size_x=64",
      "use_padding=1,block_size_x=16", "use_padding=1,block_size_x=48" }
    assert.are.same(want, kept(PAD, { padding }))
    assert.are.same(want, kept(PAD, { { { "use_padding", "block_size_x" }, function(u, b)
      return padding{ use_padding = u, block_size_x = b } end } }))
    local tuner = kt.tuner()
    local k = tuner:kernel{ source = "__kernel void k(__global float *a) {}", name = "k", global = 64 }
    k:param("use_padding", { 0, 1 })
    k:param("block_size_x", { 16, 32, 48, 64 })
    k:constraint(padding)
    assert.are.equal(6, k:space():count())
  end)

  it("prunes on what it read first and calls it no more than needed", function()
    local calls = 0
    local s = kt.space{ params = { { "A", { 1, 2, 3 } }, { "B", { 1, 2, 3, 4 } } },
      constraints = { function(p) calls = calls + 1; return p.A ~= 2 end } }
    assert.are.equal(8, s:count())
    -- the first call, then one per value of A: each decides, and the check on A and B
    -- takes what it decided
    assert.are.equal(4, calls)
    calls = 0
    s = kt.space{ params = PAD, constraints = { function(p) calls = calls + 1; return padding(p) end } }
    assert.are.equal(6, s:count())
    -- the first call; use_padding = 0 decides, 1 does not (2 calls); then 4 calls for 1
    assert.are.equal(1 + 2 + 4, calls)
  end)

  it("keeps its errors, and says what is no parameter", function()
    local err = space_error({ { "A", { 1, 2 } }, { "B", { 1, 2 } } },
      { function(p) if p.A == 2 then error("A is 2") end return p.B > 0 end })
    assert.matches("A is 2", err)
    err = space_error({ { "A", { 1, 2 } }, { "B", { 1, 2 } } },
      { function(p) return p.A == 1 or p.C > 0 end })
    assert.matches("the constraint reads p.C: there is no parameter C %(define the parameters " ..
      "before the constraints that read them%)", err)
  end)
end)

describe("kt.space with tune_params as a map (issue 28, item 4)", function()
  it("takes the parameters in the order of their names", function()
    local s = kt.space{ params = { MWG = { 16, 32 }, KWG = { 16, 32 }, NWG = { 8 } },
                        constraints = { "MWG >= KWG" } }
    assert.are.equal(3, s:count())
    local names = {}
    for _, p in ipairs(s:params()) do names[#names + 1] = p.name end
    assert.are.same({ "KWG", "MWG", "NWG" }, names)
    assert.are.same({ KWG = 16, MWG = 16, NWG = 8 }, s:config(0))
  end)

  it("keeps the order of a list of {name, values}", function()
    local s = kt.space{ params = { { "MWG", { 16, 32 } }, { "KWG", { 16, 32 } } } }
    assert.are.same({ "MWG", "KWG" }, { s:params()[1].name, s:params()[2].name })
  end)

  it("says what is wrong with a table that is neither", function()
    local ok, err = pcall(kt.space, { params = { { "A", { 1 } }, B = { 2 } } })
    assert.is_false(ok)
    assert.matches("params: a list of {name, values} has the key B too: give a list or a map " ..
      "{name = values}, not both", err, 1, true)
    ok, err = pcall(kt.space, { params = { MWG = { 16 }, [3] = { 1 } } })
    assert.is_false(ok)
    assert.matches("params: a map of names to values has the key 3: give names, or a list of " ..
      "{name, values}", err, 1, true)
    ok, err = pcall(kt.space, { params = { MWG = 16 } })
    assert.is_false(ok)
    assert.matches("kt.space: params.MWG: ", err, 1, true)
  end)
end)

describe("metrics that read other metrics (issue 28, item 5)", function()
  local tuner = kt.tuner()
  local n = 64
  local function scale()
    local a = kt.array("float", n):fill(1)
    local c = kt.array("float", n)
    local k = tuner:kernel{ name = "scale", global = n, args = { a:input(), c:output() },
      source = "__kernel void scale(__global const float *a, __global float *c) "
            .. "{ int i = get_global_id(0); c[i] = a[i] * X; }" }
    k:param("X", { 1, 2, 3 })
    return k
  end
  local function gflops(_, cfg) return 10 * cfg.X end
  local function eff(r) return r.metrics.gflops / 40 end

  it("computes a list of {name, function} in its order", function()
    local r = tuner:tune(scale(), { repeats = 1,
      metrics = { { "gflops", gflops }, { "eff", eff } }, objective = "eff", maximize = true })
    assert.are.equal(3, #r)
    for i = 1, #r do
      assert.are.same({ gflops = 10 * r[i].config.X, eff = r[i].config.X / 4 }, r[i].metrics)
    end
    assert.are.equal(3, r:best().config.X)
  end)

  it("computes a metric of a table that another reads before its turn, once", function()
    local calls = 0
    local r = tuner:tune(scale(), { repeats = 1, metrics = { eff = eff, -- "eff" < "gflops"
      gflops = function(res, cfg) calls = calls + 1; return gflops(res, cfg) end },
      objective = function(res) return -res.metrics.eff end })
    assert.are.equal(3, #r)
    assert.are.equal(3, calls)
    for i = 1, #r do assert.are.equal(r[i].config.X / 4, r[i].metrics.eff) end
    assert.are.equal(3, r:best().config.X)
  end)

  it("says when metrics read each other, or what is wrong with the list", function()
    local ok, err = pcall(tuner.tune, tuner, scale(), { repeats = 1, metrics = {
      a = function(r) return r.metrics.b end, b = function(r) return r.metrics.a end } })
    assert.is_false(ok)
    assert.matches("metric a: .*metric a is read while it is computed %(metrics that read each " ..
      "other%)", err)
    local function refused(metrics)
      local ok2, err2 = pcall(tuner.tune, tuner, scale(), { repeats = 1, metrics = metrics })
      assert.is_false(ok2)
      return err2
    end
    assert.matches("tune options.metrics[2]: expected {name, function}",
      refused{ { "gflops", gflops }, "eff" }, 1, true)
    assert.matches("tune options.metrics[2]: the metric 'gflops' is defined twice",
      refused{ { "gflops", gflops }, { "gflops", eff } }, 1, true)
    assert.matches("tune options.metrics[1]: expected a function(result, cfg), got number",
      refused{ { "gflops", 3 } }, 1, true)
    assert.matches("tune options.metrics[1]: the name 'objective' is taken",
      refused{ { "objective", gflops } }, 1, true)
    assert.matches("tune options.metrics: a list of {name, function} has the key eff too",
      refused{ { "gflops", gflops }, eff = eff }, 1, true)
  end)
end)
