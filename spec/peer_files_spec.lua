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

describe("BAT's files that NVRTC or the argument check refused (issue 28, 10)", function()
  local nvrtc = pcall(kt.cuda_compile, { source = "" })

  it("gives NVRTC <math.h>: CUDA's math functions are builtins, the M_ constants are added", function()
    if not nvrtc then return pending("NVRTC is not available here") end
    local out, log = kt.cuda_compile{ arch = "sm_90", names = { "k" }, source = "#include <math.h>\n" ..
      "#define M_SQRT1_2 0.70710678118654752440\n" ..
      "extern \"C\" __global__ void k(float *a) { a[0] = sinf(a[1]) * M_PI + M_SQRT1_2; }" }
    assert.is_not_nil(out, log)
    out, log = kt.cuda_compile{ arch = "sm_90", names = { "k" }, source = "#include \"math.h\"\n" ..
      "extern \"C\" __global__ void k(float *a) { a[0] = no_such(a[1]); }" }
    assert.is_nil(out)
    assert.matches("identifier \"no_such\" is undefined", log)
    assert.matches("%(ktlua: <math.h> was given as NVRTC's built%-in CUDA math functions and the C " ..
      "library's M_ constants; NVRTC has no host headers%)\n$", log)
    -- a header NVRTC has no contents of stays a header it cannot open
    out, log = kt.cuda_compile{ arch = "sm_90", names = { "k" }, source = "#include <stdio.h>\n" ..
      "extern \"C\" __global__ void k(float *a) { }" }
    assert.is_nil(out)
    assert.matches("cannot open source file \"stdio.h\"", log)
    assert.is_nil(log:find("ktlua:", 1, true))
  end)

  it("compiles BAT's FFT as BAT does: math.h, and BenchmarkConfig's PRECISION as a macro", function()
    local fft = kt.t1_read(BAT .. "others/FFT/FFT-CAFF.json")
    assert.are.equal("-std=c++11 -DN=131072 -DPRECISION=32 -DdataSize=73728 -Dhalf_n_cmplx=65536 " ..
      "-Dhalfnffts=128 -Diterations=3000 -Dnffts=256 -Dused_bytes=1048576", fft.options)
    assert.are.same({}, fft.defects)
    if not nvrtc then return pending("NVRTC is not available here") end
    local out, code = shell.run(shell.ktlua .. " run --check " .. BAT .. "others/FFT/FFT-CAFF.json")
    assert.are.equal(0, code, out)
    assert.matches("\nnvrtc: the first valid configuration compiles %(sm_90%)\n", out)
  end)

  it("passes a vector's bytes where the kernel's pointer reads another type, with a note", function()
    local source = "__global__ void k(unsigned int d, int *found, unsigned char *key) " ..
      "{ key[0] = block_size_x * tile; }"
    local function problem(key_type, d_type)
      return kt.t1_read((cuda_problem(source, { args = ([[[
        {"Name": "d", "Type": "%s", "MemoryType": "Scalar", "FillValue": 7},
        {"Name": "found", "Type": "int32", "MemoryType": "Vector", "Size": 1},
        {"Name": "key", "Type": "%s", "MemoryType": "Vector", "Size": 8}] ]]):format(d_type or "uint32",
        key_type) })))
    end
    local p = problem("int8") -- MD5Hash's foundKey: int8 is one byte
    assert.are.same({ "char", 8 }, { p.args[3].type, p.args[3].bytes })
    assert.are.same({}, p.defects)
    assert.are.same({ "Arguments[3] (key) is a char vector where k in k.cu takes `unsigned char *key`: " ..
      "the kernel gets its 8 bytes as 8 uchar elements" }, p.notes)
    p = problem("int32")
    assert.are.same({}, p.defects)
    assert.are.same({ "Arguments[3] (key) is an int vector where k in k.cu takes `unsigned char *key`: " ..
      "the kernel gets its 32 bytes as 32 uchar elements" }, p.notes)
    assert.are.same({ "long", 8 }, { problem("int64").args[3].type, problem("int64").args[3].size })
    p = problem("uint8", "float") -- a scalar of another type is no bytes the kernel can take
    assert.are.equal(1, #p.defects)
    assert.matches("Arguments%[1%] %(d%) is a float scalar where k in k.cu takes `unsigned int d`$",
      p.defects[1])
    assert.are.same({}, problem("uint8").notes)
  end)

  it("says that BAT's Python writes MD's data file, naming the file and the field", function()
    local dir = folder()
    files.write(dir .. "/MD-CAFF.json", files.read(BAT .. "others/MD/MD-CAFF.json"))
    files.write(dir .. "/md_kernel.cu", "__global__ void compute_lj_force(float3 *force3, " ..
      "float4 *position, int neighCount, int *neighList, float cutsq, float lj1, float lj2, " ..
      "int nAtom) { }\n")
    local p = kt.t1_read(dir .. "/MD-CAFF.json")
    assert.are.same({ ("the data file %s/MD-neighList-data.txt is not there (BAT's Python writes it " ..
      "when it runs the benchmark)"):format(dir) }, { p.notes[1] })
    local tuner = kt.tuner()
    local ok, err = pcall(kt.t1, p, { tuner = tuner })
    tuner:close()
    assert.is_false(ok)
    assert.are.equal(dir .. "/MD-CAFF.json: Arguments[4] (neighList).path 'MD-neighList-data.txt': " ..
      "No such file or directory; BAT's Python writes this file when it runs the benchmark (it is " ..
      "not in BAT's tree): run that once, or put the data there", err)
  end)
end)
