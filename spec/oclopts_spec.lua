-- OCLoptimizer's annotated kernels (kt.annotated, doc/annotations.md):
-- the pragmas read, the parameters they make, the loops rewritten per
-- configuration (exact text, and compiled and run on this machine's
-- OpenCL device against a reference), GENINIT/GENLIMIT/GENSTEP per device
-- type, the breadth-first search, and errors that say where.
local kt = require "ktlua"
local statuses = require "spec.support.statuses"

local UNROLL = "kernel void f(global int *c, int n) {\n  #pragma oclopts unroll 1 4 1\n"
  .. "  for (int i = 0; i < n; i += 2) c[i] = i;\n}\n"

local JAM = "void g(int m, int n, float *y, const float *a) {\n#pragma oclopts unrollandjam 1 2 1\n"
  .. "for (int i = 0; i < m; i++) {\n  float s = 0;\n  for (int j = 0; j < n; j++) s += a[i * n + j];\n"
  .. "  y[i] = s;\n}\n}\n"

-- The error kt.annotated raises for source text.
local function error_of(source, extra)
  local def = { source = source }
  for k, v in pairs(extra or {}) do def[k] = v end
  local ok, err = pcall(kt.annotated, def)
  assert.is_false(ok, "no error for:\n" .. source)
  return err
end

-- A kernel body with one loop under a pragma.
local function loop(pragma, header, body)
  return ("void f(int n, int *c) {\n  int k = 0;\n  %s\n  %s %s\n}\n"):format(pragma, header, body or "c[i] = i;")
end

describe("kt.annotated", function()
  it("makes a parameter per annotation, values init..end by step, with its tolerance and number", function()
    local ann = kt.annotated{ source = "void f(int n, int *c) {\n"
      .. "  #pragma oclopts unroll 2 8 3 tolerance 2.5 number 4\n  for (int i = 0; i < n; i++) c[i] = 0;\n"
      .. "  # pragma oclopts unrollandjam 1 2 1\n  for (int i = 0; i < n; i++) {\n"
      .. "    for (int j = 0; j < n; j++) c[i] += j;\n  }\n}\n" }
    assert.are.same({
      { name = "UNROLL_1", kind = "unroll", values = { 2, 5, 8 }, tolerance = 2.5, number = 4, line = 2, column = 3 },
      { name = "UNROLL_JAM_2", kind = "unrollandjam", values = { 1, 2 }, line = 4, column = 3 },
    }, ann.params)
  end)

  it("unrolls a loop, the iterations left over in a remainder loop", function()
    local ann = kt.annotated{ source = UNROLL }
    assert.are.equal("kernel void f(global int *c, int n) {\n  \n  { int i = 0;\n"
      .. "for (; i + 4 < n; i += 6) {\nc[i] = i;\nc[(i + 2)] = (i + 2);\nc[(i + 4)] = (i + 4);\n}\n"
      .. "for (; i < n; i += 2) c[i] = i; }\n#line 3\n\n}\n", ann:body{ UNROLL_1 = 3 })
    -- factor 1: the loop as written, its pragma gone
    assert.are.equal("kernel void f(global int *c, int n) {\n  \n  for (int i = 0; i < n; i += 2) c[i] = i;\n}\n",
      ann:body{ UNROLL_1 = 1 })
    assert.are.equal(ann:body{ UNROLL_1 = 1 }, ann:body{})
    for _, v in ipairs { 0, 1.5, 1025, "2" } do
      assert.has_error(function() ann:body{ UNROLL_1 = v } end,
        "annotated:source: UNROLL_1: expected a whole number from 1 to 1024, got " .. tostring(v))
    end
    -- every factor its own program
    local seen = {}
    for u = 1, 4 do
      local text = ann:source{ UNROLL_1 = u }
      assert.is_nil(seen[text])
      seen[text] = true
    end
  end)

  it("unrolls and jams: the outer loop's copies share one inner loop, their variables renamed", function()
    local ann = kt.annotated{ source = JAM }
    assert.are.equal("void g(int m, int n, float *y, const float *a) {\n\n{ int i = 0;\n"
      .. "for (; i + 1 < m; i += 2) {\nfloat s = 0;\nfloat s_jam1 = 0;\nfor (int j = 0; j < n; j++) {\n"
      .. "s += a[i * n + j];\ns_jam1 += a[(i + 1) * n + j];\n}\ny[i] = s;\ny[(i + 1)] = s_jam1;\n}\n"
      .. "for (; i < m; i++) {\n  float s = 0;\n  for (int j = 0; j < n; j++) s += a[i * n + j];\n"
      .. "  y[i] = s;\n} }\n#line 7\n\n}\n", ann:body{ UNROLL_JAM_1 = 2 })
  end)

  it("steps by the loop's own step, down as well as up, and keeps a continue to its copy", function()
    local down = kt.annotated{ source = loop("#pragma oclopts unroll 1 2 1", "for (k = n; k >= 1; k -= s)", "c[k] = 1;") }
    assert.matches("for %(; k %- 1 %* %(s%) >= 1; k %-= 2 %* %(s%)%) {\nc%[k%] = 1;\nc%[%(k %- 1 %* %(s%)%)%] = 1;\n}",
      down:body{ UNROLL_1 = 2 })
    local cont = kt.annotated{ source = loop("#pragma oclopts unroll 1 2 1", "for (int i = 0; i < n; ++i)",
      "{ if (c[i]) continue; c[i] = 1; }") }
    assert.matches("do { if %(c%[%(i %+ 1%)%]%) continue; c%[%(i %+ 1%)%] = 1; } while %(0%);", cont:body{ UNROLL_1 = 2 })
  end)

  it("writes GENINIT/GENLIMIT/GENSTEP for the device's type: cyclic on a GPU, blocks elsewhere", function()
    local src = "void f(int n) {\n  for (int i = GENINIT(n); i < GENLIMIT(n); i += GENSTEP(n)) ;\n}\n"
    local gpu = kt.annotated{ source = src, device = { type = "gpu", backend = "opencl" } }
    assert.matches("\n#define KT_GEN_INIT%(n, s, d%) KT_GEN_ID_##s%(d%)\n#define KT_GEN_LIMIT%(n, s, d%) %(%(long%)%(n%)%)\n"
      .. "#define KT_GEN_STEP%(n, s, d%) KT_GEN_SIZE_##s%(d%)\n", gpu.prelude)
    assert.matches("^#define KT_GEN_ID_g%(d%) %(%(long%)get_global_id%(d%)%)\n", gpu.prelude)
    assert.are.equal("cyclic", gpu.distribution)
    local cpu = kt.annotated{ source = src, device = { type = "cpu", backend = "opencl" } }
    assert.are.equal("blocked", cpu.distribution)
    assert.matches("\n#define KT_GEN_STEP%(n, s, d%) 1L\n", cpu.prelude)
    assert.matches("\n#define KT_GEN_CHUNK_g%(n, d%) %(%(%(long%)%(n%) %+ KT_GEN_SIZE_g%(d%) %- 1%) / KT_GEN_SIZE_g%(d%)%)\n",
      cpu.prelude)
    assert.are.equal("blocked", kt.annotated{ source = src, device = { type = "accelerator", backend = "opencl" } }.distribution)
    local cuda = kt.annotated{ source = src, device = { type = "gpu", backend = "cuda" } }
    assert.matches("#define KT_GEN_ID_g%(d%) %(KT_GEN_DIM%(blockIdx, d, 0L%) %* KT_GEN_SIZE_l%(d%) %+ KT_GEN_ID_l%(d%)%)", cuda.prelude)
    assert.is_nil(cuda.prelude:find("get_global_id", 1, true))
    assert.are.equal("blocked", kt.annotated{ source = src, device = { type = "gpu" }, distribution = "blocked" }.distribution)
    -- what the prelude identifies: the annotated text
    assert.are_not.equal(gpu.prelude, kt.annotated{ source = src .. "\n", device = { type = "gpu" } }.prelude)
    assert.matches("uses GENINIT/GENLIMIT/GENSTEP: give the device", error_of(src))
    assert.matches("distribution: expected 'blocked' or 'cyclic', got round", error_of(src, { distribution = "round" }))
  end)
end)

describe("an annotated kernel, tuned on this machine's OpenCL device", function()
  -- three loops: a remainder, a step of 3, a continue, a loop counting down, a jam
  local SRC = [[
__kernel void k(__global const int *a, __global int *out, int n) {
  int gid = get_global_id(0);
  int s = 0;
  #pragma oclopts unroll 1 5 1
  for (int i = gid; i < n; i += 3) { if (a[i] % 2) continue; s += a[i]; }
  #pragma oclopts unroll 1 4 3
  for (int i = n - 1; i >= 0; i--) s += a[i] * (i & 1);
  #pragma oclopts unrollandjam 1 3 1
  for (int r = 0; r < 5; r++) {
    int t = r;
    for (int j = 0; j < gid; j++) t += a[j];
    s += t * r;
  }
  out[gid] = s;
}
]]
  local n, items = 29, 8

  local function reference(a, ref)
    for g = 0, items - 1 do
      local s = 0
      for i = g, n - 1, 3 do if a[i] % 2 == 0 then s = s + a[i] end end
      for i = n - 1, 0, -1 do s = s + a[i] * (i & 1) end
      for r = 0, 4 do
        local t = r
        for j = 0, g - 1 do t = t + a[j] end
        s = s + t * r
      end
      ref[g] = s
    end
  end

  it("computes the reference in every configuration (each its own rewritten program)", function()
    local tuner = kt.tuner()
    local a = kt.array("int", n):fill(function(i) return (i * 7) % 11 end)
    local out = kt.array("int", items)
    local ann = kt.annotated{ source = SRC, device = tuner.device }
    local k = ann:kernel(tuner, { name = "k", global = items, args = { a:input(), out:output(), kt.int(n) } })
    k:reference(out, function(ref) reference(a, ref) end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.equal(5 * 2 * 3, #r)
    for _, s in ipairs(statuses(r)) do assert.are.equal("ok", s) end
    assert.are.equal(30, tuner:cache().misses) -- thirty programs
  end)

  it("rewrites loops annotated in the unbraced bodies of annotated loops, in every copy and remainder (issue 39)", function()
    -- each loop the unbraced body of the one around it: a rewrite of the outer loop
    -- left its remainder's '#pragma oclopts' in the program, which then did not compile
    local src = "__kernel void k(__global int *out, int n) {\n  int s = 0;\n"
      .. "  #pragma oclopts unroll 1 2 1\n  for (int a = 0; a < n; a++)\n"
      .. "    #pragma oclopts unroll 1 2 1\n    for (int b = 0; b < n + 1; b++)\n"
      .. "      #pragma oclopts unroll 1 3 2\n      for (int c = 0; c < n + 2; c++)\n"
      .. "        s += a * 100 + b * 10 + c;\n  out[get_global_id(0)] = s;\n}\n"
    local tuner = kt.tuner()
    local out = kt.array("int", 1)
    local ann = kt.annotated{ source = src, device = tuner.device }
    local body = ann:body{ UNROLL_1 = 2, UNROLL_2 = 2, UNROLL_3 = 3 }
    assert.is_nil(body:find("oclopts", 1, true), body)
    local k = ann:kernel(tuner, { name = "k", global = 1, args = { out:output(), kt.int(5) } })
    local want = 0
    for a = 0, 4 do for b = 0, 5 do for c = 0, 6 do want = want + a * 100 + b * 10 + c end end end
    k:reference(out, function(ref) ref[0] = want end)
    -- (a loaded machine's waits are no timeouts: the programs are what this checks)
    local r = tuner:tune(k, { repeats = 1, time_limit = { factor = 50, floor = 600 } })
    assert.are.equal(8, #r)
    for _, st in ipairs(statuses(r)) do assert.are.equal("ok", st) end
  end)

  it("shares iterations either way: blocks and cyclic give the same result", function()
    for _, dist in ipairs { "blocked", "cyclic" } do
      local tuner = kt.tuner()
      local a = kt.array("float", 1000):fill(function(i) return i end)
      local b = kt.array("float", 1000):fill(function(i) return 2 * i end)
      local c = kt.array("float", 1000)
      local ann = kt.annotated{ file = "examples/kernels/vadd_annotated.cl", distribution = dist }
      local k = ann:kernel(tuner, { name = "vadd", global = 64, args = { a:input(), b:input(), c:output(), kt.int(1000) } })
      k:reference(c, function(ref) for i = 0, 999 do ref[i] = 3 * i end end)
      local r = tuner:tune(k, { repeats = 1 })
      assert.are.equal(8, #r, dist)
      for _, s in ipairs(statuses(r)) do assert.are.equal("ok", s, dist) end
    end
  end)
end)

describe("the annotated CUDA examples, compiled by NVRTC (no GPU needed)", function()
  local nvrtc = pcall(kt.cuda_compile, { source = "" })
  local gpu = { type = "gpu", backend = "cuda" }

  local function ptx(file, cfg, dist)
    local ann = kt.annotated{ file = file, device = gpu, distribution = dist }
    local out, log = kt.cuda_compile{ source = ann:source(cfg), arch = "sm_90", name = file }
    assert.is_table(out, log)
    return out.ptx
  end

  it("compile for every factor, and each factor is other code: more loads per iteration", function()
    if not nvrtc then return pending("needs NVRTC") end
    local last = 0
    for u = 1, 8 do
      local loads = select(2, ptx("examples/kernels/vadd_annotated.cu", { UNROLL_1 = u }):gsub("ld%.global", ""))
      if u == 1 then assert.are.equal(2, loads) end -- a[i], b[i]: the loop as written
      assert.is_true(loads > last, ("factor %d: %d loads"):format(u, loads))
      last = loads
    end
    for jam = 1, 4 do
      for u = 1, 4 do
        for _, dist in ipairs { "cyclic", "blocked" } do
          ptx("examples/kernels/matvec_annotated.cu", { UNROLL_JAM_1 = jam, UNROLL_2 = u }, dist)
        end
      end
    end
  end)

  it("compile the paper's form (GENINIT(N, g, 0) ...) for its factors, both distributions", function()
    if not nvrtc then return pending("needs NVRTC") end
    for jam = 1, 4 do
      for _, u in ipairs { 1, 8 } do
        for _, dist in ipairs { "cyclic", "blocked" } do
          ptx("examples/kernels/matvec_paper.cu", { UNROLL_JAM_1 = jam, UNROLL_2 = u }, dist)
        end
      end
    end
  end)
end)

describe("the annotations' search", function()
  local small = kt.replay("spec/fixtures/small_cache.json")
  local function indices(results)
    local list = {}
    for i = 1, #results do list[i] = results[i].index end
    return list
  end

  it("stages the annotations one after the other with their number and tolerance (percent)", function()
    local ann = kt.annotated{ source = "void f(int n, int *c) {\n"
      .. "#pragma oclopts unroll 1 2 1 number 3\nfor (int i = 0; i < n; i++) c[i] = 0;\n"
      .. "#pragma oclopts unroll 1 2 1 tolerance 5\nfor (int i = 0; i < n; i++) c[i] = 0;\n"
      .. "#pragma oclopts unroll 1 2 1\nfor (int i = 0; i < n; i++) c[i] = 0;\n}\n" }
    assert.are.same({ "staged", stages = { { "WG" }, { "UNROLL_1", "keep=3" }, { "UNROLL_2", "tolerance=0.05" }, { "UNROLL_3" } },
                      rounds = 1, explore = 0, seed = 4 }, ann:search{ first = { { "WG" } }, seed = 4 })
  end)

  it("visits, breadth first, each stage's values on the versions the last one kept", function()
    -- the search of three annotations named as the recorded space's parameters
    local search = kt.annotated{ source = "" }.search
    local function visits(params)
      return indices(small:tune{ search = search({ params = params }) })
    end
    -- block_x: 4 values from configuration 0; the best (index 0) kept; then
    -- block_y on it, then unroll on the best of those: then the search ends
    assert.are.same({ 0, 6, 12, 18, 2, 4, 1 },
      visits{ { name = "block_x" }, { name = "block_y" }, { name = "unroll" } })
    -- number 2: the two best of block_x each go on to block_y
    assert.are.same({ 0, 6, 12, 18, 2, 4, 14, 16, 1 },
      visits{ { name = "block_x", number = 2 }, { name = "block_y" }, { name = "unroll" } })
    -- tolerance 100%: every block_x within twice the best survives
    assert.are.same({ 0, 6, 12, 18, 2, 4, 14, 16, 8, 10, 20, 1 },
      visits{ { name = "block_x", tolerance = 100 }, { name = "block_y" }, { name = "unroll" } })
  end)

  it("lets a staged search's stage carry its own keep and tolerance, and end with its rounds", function()
    assert.are.same({ 0, 6, 12, 18, 2, 4, 1, 3, 5, 14, 16, 13, 15, 17 },
      indices(small:tune{ search = { "staged", stages = { { "block_x", "keep=2" }, { "block_y", "unroll" } } },
                          stop = { count = 14 } }))
    assert.has_error(function() small:tune{ search = { "staged", stages = { { "block_x", "keep=0" } } } } end,
      "searcher staged: stages: 'keep=0' is not keep=N (N >= 1) or tolerance=X (X >= 0)")
    assert.has_error(function() small:tune{ search = { "staged", stages = "block_x; keep=2" } } end,
      "searcher staged: stages: a stage's keep or tolerance names no parameter")
  end)
end)

describe("a bad annotation", function()
  local cases = {
    { "#pragma oclopts", "<string>:3:3: #pragma oclopts: expected 'unroll' or 'unrollandjam', got nothing" },
    { "#pragma oclopts tile 1 2 1", "<string>:3:3: #pragma oclopts: expected 'unroll' or 'unrollandjam', got 'tile'" },
    { "#pragma oclopts unroll 1 8", "<string>:3:3: #pragma oclopts: step: expected a whole number, got nothing" },
    { "#pragma oclopts unroll 1 x 1", "<string>:3:3: #pragma oclopts: end: expected a whole number, got 'x'" },
    { "#pragma oclopts unroll 4 2 1", "<string>:3:3: #pragma oclopts: init 4 is past end 2" },
    { "#pragma oclopts unroll 1 99999999999999999999 1", "<string>:3:3: #pragma oclopts: end: unroll factors go up to 1024, got 99999999999999999999" },
    { "#pragma oclopts unroll 99999999999999999999 2 1", "<string>:3:3: #pragma oclopts: init: unroll factors go up to 1024, got 99999999999999999999" },
    { "#pragma oclopts unroll 1 2 99999999999999999999", "<string>:3:3: #pragma oclopts: step: 99999999999999999999 is out of range (at most 9223372036854775807)" },
    { "#pragma oclopts unroll 1 2 1 number 99999999999999999999", "<string>:3:3: #pragma oclopts: number: 99999999999999999999 is out of range (at most 9223372036854775807)" },
    { "#pragma oclopts unroll 1 2 1 tolerance 1" .. ("0"):rep(400), "<string>:3:3: #pragma oclopts: tolerance: 1" .. ("0"):rep(400) .. " is out of range (past the largest float)" },
    { "#pragma oclopts unroll 1 2048 1", "<string>:3:3: #pragma oclopts: end: unroll factors go up to 1024, got 2048" },
    { "#pragma oclopts unroll 1 2 1\n  #pragma oclopts unroll 1 2 1", "<string>:3:3: #pragma oclopts unroll: expected a for loop after the pragma, found '#pragma oclopts unroll 1 2 1'" },
    { "#pragma oclopts unroll 1 4 0", "<string>:3:3: #pragma oclopts: step: expected a step > 0, got 0" },
    { "#pragma oclopts unroll 0 4 1", "<string>:3:3: #pragma oclopts: init: an unroll factor is at least 1, got 0" },
    { "#pragma oclopts unroll 1 4 1 tolerance", "<string>:3:3: #pragma oclopts: tolerance: expected a percentage >= 0, got nothing" },
    { "#pragma oclopts unroll 1 4 1 number 2 number 3", "<string>:3:3: #pragma oclopts: 'number' is given twice" },
    { "#pragma oclopts unroll 1 4 1 fast", "<string>:3:3: #pragma oclopts: expected 'tolerance T' or 'number N' after the step, got 'fast'" },
  }
  for _, case in ipairs(cases) do
    it("is refused where it is: " .. case[1], function()
      assert.are.equal(case[2], error_of(loop(case[1], "for (int i = 0; i < n; i++)")))
    end)
  end

  local loops = {
    { "while (k < n)", "expected a for loop after the pragma, found 'while'" },
    { "for (int i = 0; i != n; i++)", "the loop's condition must compare i with <, <=, > or >= to a bound" },
    { "for (int i = 0; i < n && c[i]; i++)", "the loop's bound holds '&&': write the condition as i < bound" },
    { "for (int i = 0; k < n; i++)", "the loop's condition must begin with its variable i" },
    { "for (int i = 0, j = 0; i < n; i++)", "the loop's init sets more than one variable" },
    { "for (int i = 0; i < n; i *= 2)", "the loop's increment must be i++, i--, i += step or i -= step" },
    { "for (int i = 0; i < n; i--)", "the loop steps away from its bound (< with a decrease)" },
    { "for (int i = 0; i < n; i = i - k + 1)", "the loop's step must be a single term (put it in parentheses)" },
    { "for (int i = 0; i < n; i += k, k++)", "the loop's step must be a single term (put it in parentheses)" },
  }
  for _, case in ipairs(loops) do
    it("names the loop it cannot rewrite: " .. case[1], function()
      assert.are.equal("<string>:3:3: #pragma oclopts unroll: " .. case[2],
        error_of(loop("#pragma oclopts unroll 1 4 1", case[1])))
    end)
  end

  it("refuses a body that changes the variable or leaves the loop", function()
    local function body_error(body, kind)
      return error_of(loop("#pragma oclopts " .. (kind or "unroll") .. " 1 4 1", "for (int i = 0; i < n; i++)", body))
    end
    assert.are.equal("<string>:3:3: #pragma oclopts unroll: the loop's body changes i (line 4)", body_error("{ i += 1; }"))
    assert.are.equal("<string>:3:3: #pragma oclopts unroll: the loop's body leaves it with 'break' (line 4)",
      body_error("{ if (c[i]) break; }"))
    -- a break of an inner loop or a switch is theirs
    assert.is_truthy(kt.annotated{ source = loop("#pragma oclopts unroll 1 4 1", "for (int i = 0; i < n; i++)",
      "{ switch (c[i]) { case 1: break; } while (c[i]) break; }") })
    assert.are.equal("<string>:3:3: #pragma oclopts unrollandjam: unroll-and-jam needs a for loop in the loop's body, found none",
      body_error("{ c[i] = 0; }", "unrollandjam"))
    assert.are.equal("<string>:3:3: #pragma oclopts unrollandjam: unroll-and-jam needs one for loop in the loop's body, found another on line 4",
      body_error("{ for (int j = 0; j < n; j++) c[j] = i; for (int j = 0; j < n; j++) c[j] = i; }", "unrollandjam"))
    assert.are.equal("<string>:3:3: #pragma oclopts unrollandjam: the inner loop's header uses i (line 4): its copies would differ",
      body_error("{ for (int j = 0; j < i; j++) c[j] = i; }", "unrollandjam"))
    assert.are.equal("<string>:3:3: #pragma oclopts unrollandjam: 'continue' beside the inner loop (line 4) cannot be jammed",
      body_error("{ if (c[i]) continue; for (int j = 0; j < n; j++) c[j] = i; }", "unrollandjam"))
  end)

  it("names the file, and a name its parameter would take from the source", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write("void f(int n) {\n#pragma oclopts unroll 1 2\n}\n")
    f:close()
    local ok, err = pcall(kt.annotated, { file = path })
    os.remove(path)
    assert.is_false(ok)
    assert.are.equal(path:match("[^/]*$") .. ":2:1: #pragma oclopts: step: expected a whole number, got nothing", err)
    assert.are.equal("<string>:3:3: #pragma oclopts: its parameter's name UNROLL_1 is already used in the source",
      error_of(loop("#pragma oclopts unroll 1 2 1", "for (int i = 0; i < UNROLL_1; i++)")))
    assert.are.equal("<string>:1:1: unterminated comment", error_of("/* never closed"))
    assert.are.equal("<string>:1:1: #pragma oclopts unroll: expected a for loop after the pragma, found the end of the source",
      error_of("#pragma oclopts unroll 1 2 1"))
    assert.are.equal("<string>:2:5: '(' is never closed", error_of("#pragma oclopts unroll 1 2 1\nfor (int i = 0; i < n; i++"))
    assert.are.equal("<string>:2:33: unterminated string", error_of("#pragma oclopts unroll 1 2 1\nfor (int i = 0; i < n; i++) x = \"abc"))
    assert.are.equal("kt.annotated: unknown field files", error_of("", { files = "x" }))
  end)
end)

describe("numbers in an annotated source (issue 39, item 10)", function()
  it("refuses a #line C does not allow, naming the line and what is wrong, and counts from one it does", function()
    assert.are.equal("<string>:2:1: #line 99999999999999999999: the line number is out of range (at most 2147483647)",
      error_of("void f(int n, int *c) {\n#line 99999999999999999999\n}\n"))
    assert.are.equal("<string>:2:3: #line 2147483648: the line number is out of range (at most 2147483647)",
      error_of("void f(int n, int *c) {\n  #line 2147483648 \"k.cl\"\n}\n"))
    assert.are.equal("<string>:2:1: #line 12a...: expected a line number (digits), then a file name or nothing",
      error_of("void f(int n, int *c) {\n#line 12abc\n}\n"))
    -- a #line within C's range sets the lines that errors name
    assert.are.equal("<string>:2147483647:1: #pragma oclopts: expected 'unroll' or 'unrollandjam', got 'x'",
      error_of("void f(int n, int *c) {\n#line 2147483647 \"k.cl\"\n#pragma oclopts x\n}\n"))
  end)

  it("writes k steps of a literal step as a product where k times it would pass 64 bits", function()
    local ann = kt.annotated{ source = loop("#pragma oclopts unroll 1 3 1", "for (long i = 0; i < n; i += 4611686018427387904)") }
    local body = ann:body{ UNROLL_1 = 3 }
    assert.is_truthy(body:find("i += 3 * (4611686018427387904)", 1, true), body)
    assert.is_truthy(body:find("c[(i + 4611686018427387904)]", 1, true), body)
    assert.is_nil(body:find("-%d"), body) -- no product wrapped around to a negative number
  end)
end)

describe("reading and rewriting in work linear in the source (issue 39, item 6)", function()
  -- The work is counted (ktlua.oclopts_parse's steps: tokens lexed,
  -- tokens scanned, tokens written), not timed; each measure also runs
  -- under a budget of Lua instructions that only an exponential or
  -- quadratic reading exceeds.
  local P = require "ktlua.oclopts_parse"
  local function work(f)
    local before = P.work and P.work.steps
    debug.sethook(function() error("over the budget of 2e8 Lua instructions", 2) end, "", 200000000)
    local ok, r = pcall(f)
    debug.sethook()
    assert(ok, r)
    assert.is_table(P.work, "the reader counts no work")
    return P.work.steps - before, r
  end

  -- d loops nested in each other, each annotated (factors 1 and 2), around one statement.
  local function nested(d)
    local parts, sum = { "void f(int n, global int *c) {\n" }, {}
    for k = 1, d do
      parts[#parts + 1] = ("#pragma oclopts unroll 1 2 1\nfor (int i%d = 0; i%d < n; i%d++)\n"):format(k, k, k)
      sum[#sum + 1] = "i" .. k
    end
    parts[#parts + 1] = ("c[%s] += 1;\n}\n"):format(table.concat(sum, " + "))
    return table.concat(parts)
  end

  -- An annotated loop after n lines of comments.
  local function commented(n)
    return "void f(int n, global int *c) {\n"
      .. ("/* a comment line of the kernel, as a long header would have */\n"):rep(n)
      .. "#pragma oclopts unroll 1 4 1\nfor (int i = 0; i < n; i++) c[i] = i;\n}\n"
  end

  -- n annotated loops one after the other, unroll and unroll-and-jam.
  local function sequence(n)
    local loop1 = "#pragma oclopts unroll 1 2 1\nfor (int i = 0; i < n; i++) c[i] += i;\n"
    local loop2 = "#pragma oclopts unrollandjam 1 2 1\nfor (int i = 0; i < n; i++) {\n  int s = 0;\n"
      .. "  for (int j = 0; j < n; j++) s += c[j];\n  c[i] = s;\n}\n"
    return "void f(int n, global int *c) {\n" .. (loop1 .. loop2):rep(n // 2) .. "}\n"
  end

  it("reads 7 to 56 nested annotated loops in work proportional to the source, each loop checked once", function()
    local rates = {}
    for _, d in ipairs { 7, 14, 28, 56 } do
      local src = nested(d)
      local steps, ann = work(function() return kt.annotated{ source = src } end)
      assert.are.equal(d, #ann.params)
      rates[d] = steps / #src
      -- a configuration of factors 1 is written in work proportional to it
      local body_steps, body = work(function() return ann:body{} end)
      assert.is_true(body_steps <= #body / 10, ("%d loops: %d steps for %d bytes"):format(d, body_steps, #body))
    end
    assert.is_true(rates[7] < 3, "steps per byte: " .. rates[7])
    for _, d in ipairs { 14, 28, 56 } do -- twice the loops, twice the work: no more per byte
      assert.is_true(rates[d] <= rates[7] * 1.05, ("%d loops: %.3f steps per byte, 7: %.3f"):format(d, rates[d], rates[7]))
    end
  end)

  it("writes a program of nested copies in work proportional to its length", function()
    local rates = {}
    for _, d in ipairs { 5, 6, 7, 8 } do
      local ann = kt.annotated{ source = nested(d) }
      local cfg = {}
      for _, p in ipairs(ann.params) do cfg[p.name] = 2 end
      local steps, body = work(function() return ann:body(cfg) end)
      -- each loop's copies hold copies of the loops inside: 3^d statements
      assert.are.equal(3 ^ d // 1, select(2, body:gsub("%] %+= 1;", "")))
      rates[d] = steps / #body
    end
    assert.is_true(rates[5] < 1, "steps per byte: " .. rates[5])
    for _, d in ipairs { 6, 7, 8 } do
      assert.is_true(rates[d] <= rates[5] * 1.25, ("%d loops: %.3f steps per byte, 5: %.3f"):format(d, rates[d], rates[5]))
    end
  end)

  it("lexes 16,000 lines of comments in work proportional to them, once per source, not per configuration", function()
    local read, written = {}, {}
    for _, n in ipairs { 16000, 32000 } do
      local ann
      read[n], ann = work(function() return kt.annotated{ source = commented(n) } end)
      written[n] = work(function() return ann:body{ UNROLL_1 = 3 } end)
    end
    assert.is_true(read[16000] < 3 * 16000, "steps: " .. read[16000])
    assert.is_true(read[32000] <= 2.05 * read[16000], ("%d steps, then %d"):format(read[16000], read[32000]))
    -- a configuration reads nothing again: its work does not grow with the comments
    assert.are.equal(written[16000], written[32000])
    assert.is_true(written[16000] < 100, "steps: " .. written[16000])
    -- long comments on one line, and a pragma's own comments: each searched once, within itself
    local long = "void f(int n, global int *c) {\n" .. ("/* " .. ("x"):rep(20000) .. " */ "):rep(100)
      .. "\n#pragma oclopts unroll 1 4 1 " .. ("/* */ "):rep(20000) .. ("/*"):rep(20000)
      .. "\nfor (int i = 0; i < n; i++) c[i] = i;\n}\n"
    local steps = work(function() return pcall(kt.annotated, { source = long }) end)
    assert.is_true(steps < 1000, "steps: " .. steps)
  end)

  it("reads and writes 1,000 annotated loops in a row in work proportional to them", function()
    local steps = {}
    for _, n in ipairs { 500, 1000 } do
      local ann
      steps[n], ann = work(function() return kt.annotated{ source = sequence(n) } end)
      local cfg = {}
      for _, p in ipairs(ann.params) do cfg[p.name] = 2 end
      steps[n] = steps[n] + work(function() return ann:body(cfg) end)
    end
    assert.is_true(steps[1000] <= 2.05 * steps[500], ("%d steps, then %d"):format(steps[500], steps[1000]))
  end)
end)

describe("mutated annotated sources", function()
  -- Seeded edits of the examples' kernels: each either reads, and gives a
  -- program for its largest factors, or is refused with where and what.
  local PIECES = { "{", "}", "(", ")", ";", "for", "#pragma oclopts unroll 1 3 1\n", "#pragma oclopts unrollandjam 1 2 1\n",
    "i", "continue;", "break;", "\n", "/*", "*/", '"', "'", "\\\n", "#line 5\n", "do", "while", "else", ",", "=", "++",
    "-=", "<", ">=", "GENINIT(n)", "1e+", "->", "@1", "#", "GENLIMIT(n, l, 1)", "g, ", ", 3" }

  local function mutate(s)
    for _ = 1, math.random(1, 4) do
      local p, r = math.random(1, #s + 1), math.random()
      if r < 0.4 then s = s:sub(1, p - 1) .. PIECES[math.random(#PIECES)] .. s:sub(p)
      elseif r < 0.8 then s = s:sub(1, p - 1) .. s:sub(p + math.random(1, 6))
      else
        local q = math.random(1, #s + 1)
        s = s:sub(1, p - 1) .. s:sub(q, q + 10) .. s:sub(p)
      end
    end
    return s
  end

  it("are read or refused with a position, never a Lua fault", function()
    local seeds = {}
    for _, f in ipairs { "vadd_annotated.cl", "matvec_annotated.cl", "matvec_paper.cl" } do
      local h = assert(io.open("examples/kernels/" .. f))
      seeds[#seeds + 1] = h:read("a")
      h:close()
    end
    math.randomseed(29)
    for case = 1, 400 do
      local s = mutate(seeds[case % #seeds + 1])
      local ok, ann = pcall(kt.annotated, { source = s, distribution = "cyclic" })
      local err = not ok and ann
      if ok then
        local cfg = {}
        for _, p in ipairs(ann.params) do cfg[p.name] = p.values[#p.values] end
        ok, err = pcall(ann.source, ann, cfg)
        err = not ok and err
      end
      if err then assert.matches("^<string>:%d+:%d+: ", err, 1, ("case %d:\n%s"):format(case, s)) end
    end
  end)
end)
