-- The files a user of Kernel Tuner, KTT or BAT brings first (issue 28,
-- "Files"): caches with None and list values and their own objective, T1
-- searcher names, `ktlua run`'s budget and T4 output, kernel names behind
-- macros, and BAT's files that NVRTC or the argument check refused.
local kt = require "ktlua"
local files = require "spec.support.files"
local shell = require "spec.support.shell"
local sig = require "ktlua.t1_signature"

local BAT = "spec/fixtures/t1/bat/"

local function folder()
  local dir = files.tmpname()
  assert(os.execute("mkdir -p " .. dir))
  return dir
end

-- A CUDA T1 problem over source (kernel k), with the given Search, Budget
-- and Arguments (JSON texts) and two parameters.
local function cuda_problem(source, opts)
  opts = opts or {}
  local dir = folder()
  files.write(dir .. "/k.cu", source)
  files.write(dir .. "/p.json", ([[{
  "General": {"BenchmarkName": "k"},
  "ConfigurationSpace": {"TuningParameters": [
    {"Name": "block_size_x", "Type": "int", "Values": "[32, 64, 128]"},
    {"Name": "tile", "Type": "int", "Values": [1, 2]}], "Conditions": []},
  %s%s
  "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu",
    "LocalSize": {"X": "block_size_x"}, "GlobalSize": {"X": "1024 // block_size_x"},
    %s
    "Arguments": %s}
}]]):format(opts.search and ('"Search": %s,'):format(opts.search) or "",
    opts.budget and ('"Budget": %s,'):format(opts.budget) or "", opts.extra or "",
    opts.args or '[{"Name": "a", "Type": "float", "MemoryType": "Vector", "Size": 1024}]'))
  return dir .. "/p.json", dir
end

describe("Kernel Tuner caches (issue 28, 6)", function()
  local cache = [==[{"device_name": "d", "kernel_name": "k", "tune_params_keys": ["a", "b", "c"],
 "tune_params": {"a": [1, 2], "b": [null, [1, 2], "s", [0.5, "x", true, null]], "c": [true, false]},
 "objective": "GFLOP/s", "objective_higher_is_better": true,
 "cache": {
 "1,None,True": {"a": 1, "b": null, "c": true, "time": 1.0, "GFLOP/s": 10},
 "2,[1, 2],False": {"a": 2, "b": [1, 2], "c": false, "time": 2.0, "GFLOP/s": 30},
 "2,s,True": {"a": 2, "b": "s", "c": true, "time": 0.5, "GFLOP/s": 20},
 "1,[0.5, 'x', True, None],True": {"a": 1, "b": [0.5, "x", true, null], "c": true,
   "time": 3.0, "GFLOP/s": 5}}}]==]

  local function written(text)
    local path = files.tmpname(".json")
    files.write(path, text)
    return path
  end

  it("reads None, lists, strings and booleans, each value as Python's str() writes it", function()
    local r = kt.load(written(cache))
    assert.are.equal(4, #r)
    local got = {}
    for _, x in ipairs(r:list()) do got[#got + 1] = tostring(x.config.b) .. "/" .. tostring(x.config.c) end
    table.sort(got)
    assert.are.same({ "None/true", "[0.5, 'x', True, None]/true", "[1, 2]/false", "s/true" }, got)
  end)

  it("goes by the cache's objective and direction; an explicit objective wins", function()
    local r = kt.load(written(cache))
    assert.are.same({ "GFLOP/s", true }, { r.objective, r.maximize })
    assert.are.equal("[1, 2]", r:best().config.b) -- 30 GFLOP/s, not the fastest
    assert.are.equal("s", kt.load(written(cache), { objective = "kernel" }):best().config.b)
    local lower = cache:gsub('"objective_higher_is_better": true', '"objective_higher_is_better": false')
    assert.are.equal("[0.5, 'x', True, None]", kt.load(written(lower)):best().config.b)
    local time = cache:gsub('"objective": "GFLOP/s"', '"objective": "time"')
    assert.are.equal("s", kt.load(written(time)):best().config.b)
  end)

  it("names the value, not its position, that is not among the parameter's", function()
    local path = written((cache:gsub('"b": %[1, 2%], "c": false', '"b": [3], "c": false')))
    local ok, err = pcall(kt.load, path)
    assert.is_false(ok)
    assert.are.equal(path .. ": cache entry '2,[1, 2],False': b = [3] is not one of the " ..
      "parameter's values (tune_params)", err)
    path = written((cache:gsub('"objective_higher_is_better": true', '"objective_higher_is_better": 1')))
    ok, err = pcall(kt.load, path)
    assert.are.equal(path .. ": objective_higher_is_better is not true or false", err)
  end)
end)

describe("a kernel's name behind macros and attributes (issue 28, 9)", function()
  local function types(source)
    local params = sig.signature(source, "k")
    if not params then return nil end
    local out = {}
    for i, p in ipairs(params) do out[i] = p.text .. ":" .. tostring(p.type) end
    return out
  end

  it("finds the kernel past #if blocks, __launch_bounds__ and macros, as benchmark_hub writes them", function()
    -- dedispersion_milo's shape
    assert.are.same({ "const float *in:float", "float *out:float" }, types([[
extern "C" __global__ void
#if loop_unroll_factor_channel == 0
__launch_bounds__(block_size_x * block_size_y * block_size_z)
#endif
k(const float *in, float *out) { }]]))
    assert.are.same({ "int n:int" }, types("__global__ void __launch_bounds__(256, 2) k(int n) {}"))
    assert.are.same({ "__global float *a:float" },
      types("__kernel void __attribute__((vec_type_hint(float4))) k(__global float *a) {}"))
    assert.are.same({ "int n:int" }, types("__global__ void [[nodiscard]] k(int n) {}"))
    -- a continued directive, a macro call, a directive between the list and its body
    assert.are.same({ "float *a:float" }, types("#define B \\\n 256\n__global__ void\n#if X \\\n" ..
      "  > 1\nKBOUNDS(B)\n#endif\nk(float *a)\n#if 1\n{\n#endif\n}"))
    -- comments are no declarations; a declaration without a body is passed over
    assert.are.same({ "double *d:double" },
      types("/* __global__ void k(int a) {} */ __global__ void k(double *d) {}"))
    assert.are.same({ "int n:int" },
      types("__global__ void k(int n); void f() { k(3); } __global__ void k(int n) { }"))
    assert.is_nil(types("__device__ float k(int n) { return 0; }"))
    assert.is_nil(types("__global__ void k2(int n) { }"))
  end)

  it("reads a T1 file whose kernel is declared so, with no defect", function()
    local path = cuda_problem("extern \"C\" __global__ void\n#if tile == 1\n" ..
      "__launch_bounds__(block_size_x)\n#endif\nk(float *a) { a[0] = block_size_x * tile; }\n")
    local p = kt.t1_read(path)
    assert.are.same({}, p.defects)
  end)
end)

describe("T1 searcher names of Kernel Tuner and KTT (issue 28, 7)", function()
  local function read(name, attributes)
    local search = ('{"Name": "%s"%s}'):format(name, attributes or "")
    return kt.t1_read((cuda_problem("__global__ void k(float *a) { a[0] = block_size_x * tile; }",
      { search = search })))
  end

  it("runs the same algorithm under ktlua's name, with no note", function()
    local same = { random_sample = "random", diff_evo = "differential", genetic_algorithm = "genetic",
                   simulated_annealing = "annealing", pso = "pso", Deterministic = "exhaustive",
                   DeterministicSearcher = "exhaustive", brute_force = "exhaustive", MCMC = "mcmc" }
    for name, ours in pairs(same) do
      local p = read(name)
      assert.are.equal(ours, p.search, name)
      assert.are.same({}, p.notes, name)
    end
  end)

  it("runs the nearest searcher where the algorithm differs, and says which in one line", function()
    local near = { dual_annealing = "annealing", greedy_ils = "greedy", firefly_algorithm = "pso",
                   bayes_opt = "model" }
    for name, ours in pairs(near) do
      local p = read(name)
      assert.are.equal(ours, p.search, name)
      assert.are.equal(1, #p.notes, name)
      assert.matches("^Search '" .. name .. "' runs as ktlua's " .. ours .. ": [^\n]+$", p.notes[1])
    end
    local p = read("bayes_opt", ', "Attributes": [{"Name": "popsize", "Value": 20}]')
    assert.are.equal("model", p.search) -- a Gaussian process's options are no options of model
    assert.are.equal("Search 'bayes_opt' runs as ktlua's model: a neural-network ensemble model " ..
      "(Falch and Elster), not a Gaussian process (its Attributes are left out)", p.notes[1])
    p = read("ProfileBased")
    assert.is_nil(p.search)
    assert.are.same({ "Search 'ProfileBased' has no ktlua counterpart: the default searcher is used" },
      p.notes)
  end)
end)

describe("ktlua run's budget and output (issue 28, 8)", function()
  local FIX = "spec/fixtures/t1/"
  -- the OpenCL fixture with its Budget replaced
  local function with_budget(budget)
    local dir = folder()
    for _, f in ipairs({ "vadd.cl", "vadd_expected.bin" }) do
      files.write(dir .. "/" .. f, files.read(FIX .. f))
    end
    local text = files.read(FIX .. "vadd_T1.json")
    local from = '"Budget": [ { "Type": "ConfigurationCount", "BudgetValue": 6 } ]'
    local at = assert(text:find(from, 1, true))
    files.write(dir .. "/p.json", text:sub(1, at - 1) .. '"Budget": ' .. budget .. text:sub(at + #from))
    return dir .. "/p.json", dir
  end

  it("replaces the file's whole budget with --count, not adding to it", function()
    local path = with_budget('[{"Type": "TuningDuration", "BudgetValue": 1e-9}]')
    local out, code = shell.run(shell.ktlua .. " run " .. path .. " --count=5 --search=exhaustive")
    assert.are.equal(0, code, out)
    assert.matches(": 5 of 13 configurations %(exhaustive search, stopped: count%)", out)
  end)

  it("writes T4 with --output and --format=t4, and refuses a format it does not know", function()
    local path, dir = with_budget('[{"Type": "ConfigurationCount", "BudgetValue": 3}]')
    local t4 = dir .. "/out.json"
    local out, code = shell.run(shell.ktlua .. " run " .. path .. " --search=exhaustive --output=" ..
      t4 .. " --format=t4")
    assert.are.equal(0, code, out)
    local doc = kt.json.read(t4)
    assert.are.equal(3, #doc.results)
    assert.is_not_nil(doc.schema_version)
    assert.are.equal(3, #kt.load(t4))
    out, code = shell.run(shell.ktlua .. " run " .. path .. " --output=" .. t4 .. " --format=xml")
    assert.are.equal(1, code)
    assert.matches("tune options.output%[1%]: unknown format 'xml' %(expected csv, json, t4 or " ..
      "kernel%-tuner%-cache%)", out)
    out, code = shell.run(shell.ktlua .. " run " .. path .. " --format=t4")
    assert.are.equal(1, code)
    assert.matches("ktlua run: %-%-format needs %-%-output=FILE", out)
  end)
end)
