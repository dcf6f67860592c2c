-- T1 tuning problems (ktlua.t1, `ktlua run`): Python list values, the real
-- files of BAT and benchmark_hub with their defects, an OpenCL problem that
-- runs here, and errors that say where a file is wrong.
local kt = require "ktlua"
local files = require "spec.support.files"
local shell = require "spec.support.shell"
local datasets = require "spec.support.datasets"

local FIX = "spec/fixtures/t1/"
local BAT = FIX .. "bat/"

local function space_of(problem)
  return kt.space{ params = problem.params, constraints = problem.constraints }
end

-- A T1 file written from a table of replacements over the OpenCL fixture.
local function variant(edit)
  local dir = files.tmpname()
  assert(os.execute("mkdir -p " .. dir))
  files.write(dir .. "/vadd.cl", files.read(FIX .. "vadd.cl"))
  files.write(dir .. "/vadd_expected.bin", files.read(FIX .. "vadd_expected.bin"))
  local text = files.read(FIX .. "vadd_T1.json")
  for from, to in pairs(edit) do
    local at = assert(text:find(from, 1, true), from)
    text = text:sub(1, at - 1) .. to .. text:sub(at + #from)
  end
  files.write(dir .. "/p.json", text)
  return dir .. "/p.json", dir
end

local function load_error(edit)
  local path = variant(edit)
  local ok, err = pcall(kt.t1_read, path)
  assert.is_false(ok)
  return err, path
end

describe("kt.python_list", function()
  it("evaluates the list expressions of real T1 files", function()
    assert.are.same({ 32, 64, 128, 256, 512, 1024 }, kt.python_list("[2**i for i in range(5, 11)]"))
    assert.are.same({ 1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20 },
      kt.python_list("[1] + [2*i for i in range(1,11)]"))
    local l = kt.python_list("[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))")
    assert.are.equal(5 + 32, #l)
    assert.are.same({ 1, 2, 4, 8, 16, 32, 64 }, { table.unpack(l, 1, 7) })
    assert.are.equal(1024, l[#l])
    assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, kt.python_list("[i for i in range(1, 10+1)]"))
    assert.are.same({ 10, 7, 4, 1 }, kt.python_list("range(10, 0, -3)"))
    assert.are.same({}, kt.python_list("list(range(5, 5))"))
    assert.are.same({ "float", "double" }, kt.python_list("['float', \"double\"]"))
    assert.are.same({ 1, 0 }, kt.python_list("[True, False]"))
    assert.are.same({ 1.5, 0.5 }, kt.python_list("[1.5, 2**-1,]"))
    assert.are.same({ 0, 2, 0, 6 },
      kt.python_list("[a*b for a in range(1,4) for b in range(a) if (a+b) % 2 == 1]"))
    assert.are.same({ 1, 3, 9 }, kt.python_list("[x for x in [1, 2, 3, 9] if x not in [2]]"))
    assert.are.same({ 16, 64 }, kt.python_list("[4**i for i in (range(2, 4))]"))
    assert.are.equal("integer", math.type(kt.python_list("[2**3]")[1]))
  end)

  it("refuses what is not a list, naming the character, and bounds the work", function()
    local function err(text)
      local ok, e = pcall(kt.python_list, text)
      assert.is_false(ok, text)
      return e
    end
    assert.matches("python_list '%[1, 2': at character 6: expected ',' or '%]' in the list at " ..
      "character 1", err("[1, 2"))
    assert.matches("at character 7: range%(%) takes integers", err("range(1.5)"))
    assert.matches("at character 2: unknown name 'j'", err("[j for i in range(3)]"))
    assert.matches("at character 1: range%(%) gives 1000000000 values, more than 1048576",
      err("range(0, 10**9)"))
    assert.matches("at character 6: expected a list", err("[1] +"))
    assert.matches("at character 1: expected a list", err("__import__('os')"))
    assert.matches("at character 23: the list has more than 1048576 values",
      err("list(range(1048576)) + [1]"))
    assert.matches("at character 1: range%(%) step must not be zero", err("range(1, 2, 0)"))
    assert.matches("at character 4: unexpected '%]' after the list", err("[1]]"))
    assert.matches("at character 25: the comprehension runs more than 1048576 iterations",
      err("[1 for i in range(2000) for j in range(2000) if i < 0]"))
    assert.matches("nest more than 16 names deep",
      err("[1" .. (" for i in range(1)"):rep(17) .. "]"))
    assert.matches("the lists nest more than 64 levels deep",
      err(("list("):rep(100) .. "[1]" .. (")"):rep(100)))
  end)
end)

describe("kt.python_list on mutated list expressions", function()
  it("gives a list or an error naming a character, never more than it may", function()
    local seeds = { "[ 2 ** i for i in range ( 5 , 11 ) ]", "[ 1 ] + [ 2 * i for i in range ( 1 , 11 ) ]",
                    "list ( range ( 32 , 1024 + 1 , 32 ) )", "[ 1 , 2 , 4 , 8 ]",
                    "[ a * b for a in range ( 4 ) for b in range ( a ) if a % 2 == 1 ]",
                    "[ x for x in [ 1 , 2 ] if x not in [ 2 ] ]" }
    local tokens = { "[", "]", "(", ")", ",", "+", "for", "in", "if", "i", "range", "list", "1",
                     "-1", "**", "//", "%", "==", "not", "True", "'s'", "10" }
    local rng = 12345
    local function random(n)
      rng = (rng * 1103515245 + 12345) % 2147483648
      return rng % n + 1
    end
    local lists, errors = 0, 0
    for _ = 1, 3000 do
      local t = {}
      for w in seeds[random(#seeds)]:gmatch("%S+") do t[#t + 1] = w end
      for _ = 1, random(3) - 1 do -- up to two edits: delete, insert or replace a token
        local at, op = random(#t), random(3)
        if op == 1 and #t > 1 then table.remove(t, at)
        elseif op == 2 then table.insert(t, at, tokens[random(#tokens)])
        else t[at] = tokens[random(#tokens)] end
      end
      local text = table.concat(t, " ")
      local ok, v = pcall(kt.python_list, text)
      if ok then
        assert.is_true(type(v) == "table" and #v <= 1048576, text)
        lists = lists + 1
      else
        assert.is_truthy(v:find("^python_list '.*': at character %d+: "), text .. " -> " .. v)
        errors = errors + 1
      end
    end
    assert.is_true(lists > 300 and errors > 300, lists .. " lists, " .. errors .. " errors")
  end)
end)

-- Each of BAT's files: its space (valid of all), and what ktlua finds wrong.
local bat = {
  ["GEMM/GEMM-CAFF.json"] = { 15, 10312, 20736 },
  ["GEMM/GEMM-CAFF-matmul.json"] = { 4, 1, 1 },
  ["MD5Hash/MD5Hash-CAFF.json"] = { 8, 165888, 165888 },
  ["TRIAD/TRIAD-CAFF.json"] = { 3, 4320, 7680 },
  ["convolution/convolution-CAFF.json"] = { 8, 6768, 16896 },
  ["expdist/expdist-CAFF.json"] = { 13, 349853, 22200000 },
  ["hotspot/hotspot-CAFF.json"] = { 13, 349853, 22200000 },
  ["nbody/nbody-CAFF.json"] = { 8, 1568, 3136 },
  ["pnpoly/pnpoly-CAFF.json"] = { 4, 4092, 4092 },
  ["others/FFT/FFT-CAFF.json"] = { 21, 806215680000, 806215680000 },
  ["others/MD/MD-CAFF.json"] = { 3, 60, 60 },
  ["others/Reduction/Reduction-CAFF.json"] = { 3, 72, 72 },
  ["others/builtin_vectors/builtin_vectors-CAFF.json"] = { 1, 32, 32 },
}

describe("kt.t1_read", function()
  it("loads each of BAT's 13 files, with their variants of the format", function()
    local n = 0
    for file, want in pairs(bat) do
      local p = kt.t1_read(BAT .. file)
      local s = space_of(p)
      assert.are.same(want, { #p.params, s:count(), s:count_all() }, file)
      assert.are.equal("CUDA", p.language, file)
      n = n + 1
    end
    assert.are.equal(13, n)
  end)

  it("reads the sizes: blocks in CUDA files, ProblemSize over GridDiv as Kernel Tuner does", function()
    local gemm = kt.t1_read(BAT .. "GEMM/GEMM-CAFF.json")
    assert.are.equal("cuda", gemm.notation)
    local cfg = { MDIMC = 16, NDIMC = 8, MWG = 64, NWG = 128 }
    assert.are.same({ 4096, 1024 }, { gemm.global[1].fn(cfg), gemm.global[2].fn(cfg) })
    assert.are.same({ 16, 8, 1 }, { gemm.group[1].fn(cfg), gemm.group[2].fn(cfg), gemm.group[3].value })
    assert.are.equal(16384, gemm.shared)
    assert.are.same({ count = 200 }, gemm.stop)
    -- BAT's pnpoly says OpenCL, but its ProblemSize and GridDivX decide (as in BAT and Kernel Tuner)
    local pn = kt.t1_read(BAT .. "pnpoly/pnpoly-CAFF.json")
    assert.are.equal("cuda", pn.notation)
    assert.are.equal(math.ceil(20000000 / (96 * 4)), pn.global[1].fn{ block_size_x = 96, tile_size = 4 })
    -- nbody's grid counts threads (GlobalSizeType OpenCL)
    local nb = kt.t1_read(BAT .. "nbody/nbody-CAFF.json")
    assert.is_nil(nb.notation)
    assert.are.equal(128 * 1024 // 4, nb.global[1].fn{ OUTER_UNROLL_FACTOR = 4 })
    assert.are.same({ count = 10 }, nb.stop)
    assert.are.equal(10, kt.t1_read(BAT .. "hotspot/hotspot-CAFF.json").repeats) -- iterations
    -- MD: lower-case kernelSpecification, blockSize/gridSize, length/value, a file to fill from
    local md = kt.t1_read(BAT .. "others/MD/MD-CAFF.json")
    assert.are.equal("compute_lj_force", md.kernel_name)
    assert.are.equal(73728 // 64 // 2, md.global[1].fn{ BLOCK_SIZE = 64, WORK_PER_THREAD = 2 })
    assert.are.same({ "float", 3, 73728 }, { md.args[1].type, md.args[1].components, md.args[1].size })
    assert.are.same({ "scalar", 128 }, { md.args[3].memory, md.args[3].value })
    assert.are.same({ "file", "MD-neighList-data.txt" }, { md.args[4].fill, md.args[4].source })
    assert.are.same({ 0 }, md.values.TEXTURE_MEMORY) -- Values as a JSON list
    local fft = kt.t1_read(BAT .. "others/FFT/FFT-CAFF.json")
    assert.are.same({ "float", 2, 262144 }, { fft.args[1].type, fft.args[1].components, fft.args[1].size })
  end)

  it("says what a file gets wrong, and where", function()
    local red = kt.t1_read(BAT .. "others/Reduction/Reduction-CAFF.json")
    assert.are.same({ BAT .. "others/Reduction/Reduction-CAFF.json: SharedMemory: '8*BLOCK_SIZE_X' " ..
      "reads BLOCK_SIZE_X, which is no tuning parameter" }, red.defects)
    local pn = kt.t1_read(BAT .. "pnpoly/pnpoly-CAFF.json")
    assert.are.same({}, pn.defects) -- its kernel, pnpoly.cu, is not in BAT's tree
    assert.matches("the kernel file .*pnpoly/pnpoly.cu is not there", pn.notes[1])
    local hot = kt.t1_read(BAT .. "hotspot/hotspot-CAFF.json")
    assert.are.same({}, hot.defects)
    assert.matches("^hotspot_kernel.cu never names the parameters BLOCK_SIZE_X, BLOCK_SIZE_Y, .* %(it " ..
      "names block_size_x, block_size_y, ", hot.notes[1])
    assert.are.same({}, kt.t1_read(BAT .. "GEMM/GEMM-CAFF-matmul.json").defects)
    -- with its kernel beside it, BAT's pnpoly passes a float array where the kernel takes int n
    local conv, pnpoly = datasets.path("formats/convolution.cu"), datasets.path("formats/pnpoly.cu")
    if not pnpoly then return pending("the datasets' kernels are not there") end
    local dir = files.tmpname()
    assert(os.execute("mkdir -p " .. dir))
    files.write(dir .. "/pnpoly.cu", files.read(pnpoly))
    files.write(dir .. "/p.json", files.read(BAT .. "pnpoly/pnpoly-CAFF.json"))
    assert.are.same({
      dir .. "/p.json: KernelSpecification.Arguments passes 4 (bitmap, points, vertex_xy, size); " ..
        "the kernel cn_pnpoly in pnpoly.cu takes 3 (int* bitmap, float2* points, int n)",
      dir .. "/p.json: Arguments[3] (vertex_xy) is a float vector where cn_pnpoly in pnpoly.cu " ..
        "takes `int n`" }, kt.t1_read(dir .. "/p.json").defects)
    files.write(dir .. "/convolution.cu", files.read(conv))
    files.write(dir .. "/c.json", files.read(BAT .. "convolution/convolution-CAFF.json"))
    assert.are.same({}, kt.t1_read(dir .. "/c.json").defects)
    assert.are.same({}, kt.t1_read(dir .. "/c.json").notes)
  end)

  it("loads benchmark_hub's T1 files, whose spaces are the recorded datasets'", function()
    local conv, why = datasets.path("formats/convolution_T1.json")
    if not conv then return pending(why) end
    local c = kt.t1_read(conv)
    assert.are.same({ 6768, 16896 }, { space_of(c):count(), space_of(c):count_all() })
    assert.are.same({}, c.defects)
    assert.are.same({ 4096 * 4096, 4110 * 4110, 225 }, { c.args[1].size, c.args[2].size, c.args[3].size })
    assert.is_true(c.args[3].constant)
    assert.are.equal(4096 // (16 * 3), c.global[1].fn{ block_size_x = 16, tile_size_x = 3 } - 1)
    local p = kt.t1_read(datasets.path("formats/pnpoly_T1.json"))
    assert.are.equal(4092, space_of(p):count())
    assert.matches("pnpoly_T1.json: KernelSpecification.Arguments passes 0 %(%); the kernel " ..
      "cn_pnpoly in pnpoly.cu takes 3 %(int%* bitmap, float2%* points, int n%)", p.defects[1])
  end)

  it("refuses a file that is wrong, saying what and where", function()
    assert.matches("p.json: TuningParameters%[2%] %(VEC%): Values: python_list '%[1, 2%] %+ %[4 %* i " ..
      "for i in rang%(1, 3%)%]': at character 26: expected a list",
      load_error{ ["range(1, 3)"] = "rang(1, 3)" })
    -- what leaves the space readable is a defect, which kt.t1 refuses
    local function defects(edit) return kt.t1_read((variant(edit))).defects end
    assert.matches("p.json: GlobalSize.X: 'ProblemSize%[0%] // VECS' reads VECS, which is no tuning " ..
      "parameter", defects{ ["// VEC\""] = "// VECS\"" }[1])
    assert.matches("p.json: Conditions%[1%]: expression '32 <= WG %* VEC <= 256 <': at character 24: " ..
      "expected a value", load_error{ ["<= 256\""] = "<= 256 <\"" })
    assert.matches("p.json: TuningParameters%[1%] %(WG%): value 1 %(8.5%) is not an integer, as Type " ..
      "int says", load_error{ ["[2**i for i in range(3, 8)]"] = "[8.5]" })
    assert.matches("p.json: TuningParameters%[2%]: parameter WG is defined twice",
      load_error{ ["\"Name\": \"VEC\""] = "\"Name\": \"WG\"" })
    assert.matches("p.json: Arguments%[3%] %(x%).Type: 'float5x' is not one of",
      defects{ ["\"Type\": \"float\", \"MemoryType\": \"Vector\", \"AccessType\": \"ReadOnly\""] =
        "\"Type\": \"float5x\", \"MemoryType\": \"Vector\", \"AccessType\": \"ReadOnly\"" }[1])
    assert.matches("p.json: Language 'Vulkan': ktlua runs CUDA and OpenCL kernels",
      load_error{ ["\"OpenCL\",\n        \"CompilerOptions\""] = "\"Vulkan\",\n        \"CompilerOptions\"" })
    assert.matches("p.json: JSON: line 2, column 15: expected ':' after a member name", load_error{ ["\"General\": {"] = "\"General\" {" })
    local path = variant{ ["},\n            { \"Name\": \"y\", \"Type\": \"float\", \"MemoryType\": \"Vector\", " ..
      "\"AccessType\": \"ReadWrite\",\n              \"Size\": 4096, \"FillType\": \"Constant\", " ..
      "\"FillValue\": 1.0 }"] = "}" }
    local defect = path .. ": KernelSpecification.Arguments passes 3 (n, a, x); the kernel saxpy " ..
      "in vadd.cl takes 4 (const int n, const float a, __global const float *x, __global float *y)"
    local reference = path .. ": ReferenceArguments[1] (y_expected).TargetName: 'y' is no vector argument"
    assert.are.same({ reference, defect }, kt.t1_read(path).defects)
    local ok, err = pcall(kt.t1, path)
    assert.is_false(ok)
    assert.are.equal(reference .. "\n" .. defect, err)
  end)
end)

describe("kt.t1", function()
  it("tunes an OpenCL problem here: budget, searcher, fills, sizes and its reference", function()
    local k, options, problem = kt.t1(FIX .. "vadd_T1.json")
    assert.are.same({ stop = { count = 6 }, search = "random" }, options)
    local annealing = kt.t1_read((variant{ ["{ \"Name\": \"RandomSearch\" }"] =
      "{ \"Name\": \"SimulatedAnnealing\", \"Attributes\": [{ \"Name\": \"alpha\", \"Value\": \"0.9\" }] }" }))
    assert.are.same({ "annealing", alpha = 0.9 }, annealing.search)
    assert.are.equal(13, k:space():count())
    assert.are.equal(3.0, problem.arrays.x[10])          -- Generator "i % 7"
    assert.are.equal(1.0, problem.arrays.y[4095])        -- Constant 1.0
    options.seed = 3
    local results = problem.tuner:tune(k, options)
    assert.are.equal(6, #results)
    for _, r in ipairs(results) do
      assert.are.equal("ok", r.status)
      assert.are.same({ 4096 // r.config.VEC, 1, 1 }, r.global)
      assert.are.same({ r.config.WG, 1, 1 }, r.group)
      assert.is_true(r.config.WG * r.config.VEC >= 32 and r.config.WG * r.config.VEC <= 256)
      assert.is_true(r.config.VEC ~= 8 or r.config.WG <= 16)
    end
    problem.tuner:close()
  end)

  it("validates against ReferenceArguments: a wrong reference is invalid_output", function()
    local path, dir = variant{ ["\"ValidationThreshold\": 0.0001"] = "\"ValidationThreshold\": 0.25" }
    local bytes = files.read(dir .. "/vadd_expected.bin")
    files.write(dir .. "/vadd_expected.bin", string.pack("<f", 1.5) .. bytes:sub(5))
    local k, options, problem = kt.t1(path)
    options.stop.count = 2
    local results = problem.tuner:tune(k, options)
    for _, r in ipairs(results) do assert.are.equal("invalid_output", r.status) end
    problem.tuner:close()
  end)

  it("builds a CUDA problem without a device to run it, and refuses a file with defects", function()
    local tuner = kt.tuner()
    local k, options, problem = kt.t1(BAT .. "GEMM/GEMM-CAFF-matmul.json", { tuner = tuner })
    assert.are.equal(1, k:space():count())
    assert.are.same({ stop = { count = 200 } }, options)
    assert.are.equal(2048 * 2048, #problem.arrays.A)
    local ok, err = pcall(kt.t1, BAT .. "others/Reduction/Reduction-CAFF.json", { tuner = tuner })
    assert.is_false(ok)
    assert.matches("Reduction%-CAFF.json: SharedMemory: '8%*BLOCK_SIZE_X' reads BLOCK_SIZE_X", err)
    ok, err = pcall(kt.t1, BAT .. "MD5Hash/MD5Hash-CAFF.json", { tuner = tuner })
    assert.is_false(ok)
    assert.are.equal(BAT .. "MD5Hash/MD5Hash-CAFF.json: KernelFile 'md5hash_kernel.h': No such file or " ..
      "directory", err)
    tuner:close()
  end)
end)

describe("ktlua run", function()
  local ktlua = shell.ktlua

  it("tunes a T1 file, its budget and searcher overridden by options", function()
    local out, code = shell.run(ktlua .. " run " .. FIX .. "vadd_T1.json --count=3 --search=exhaustive")
    assert.are.equal(0, code, out)
    assert.matches("saxpy on .-: 3 of 13 configurations %(exhaustive search, stopped: count%)", out)
    assert.matches("best: WG=%d+ VEC=%d+", out)
  end)

  it("checks a file without a device, and refuses a CUDA file on an OpenCL device", function()
    local out, code = shell.run(ktlua .. " run --check " .. BAT .. "others/Reduction/Reduction-CAFF.json")
    assert.are.equal(1, code, out) -- its defect refuses the run
    assert.matches("Reduction%-CAFF.json: kernel reduce %(CUDA%) in .-reduction_kernel.cu, 3 parameters, " ..
      "72 of 72 configurations valid\n", out)
    assert.matches("defect: .-SharedMemory: '8%*BLOCK_SIZE_X' reads BLOCK_SIZE_X", out)
    out, code = shell.run(ktlua .. " run --device=cpu " .. BAT .. "GEMM/GEMM-CAFF-matmul.json")
    assert.are.equal(1, code)
    assert.matches("ktlua run: .-GEMM%-CAFF%-matmul.json is a CUDA kernel and opencl:%d+:%d+ is an " ..
      "opencl device: name another with %-%-device", out)
    out, code = shell.run(ktlua .. " run --count=x " .. FIX .. "vadd_T1.json")
    assert.are.equal(1, code)
    assert.matches("ktlua run: unexpected argument '%-%-count=x'", out)
    out = shell.run(ktlua .. " run --check " .. BAT .. "GEMM/GEMM-CAFF-matmul.json")
    if out:find("nvrtc:") then -- NVRTC is installed: matmul.cu includes a header it lacks
      assert.matches("nvrtc: the first valid configuration does not compile: .-cannot open " ..
        "source file \"stdio.h\"", out)
      out = shell.run(ktlua .. " run --check " .. BAT .. "GEMM/GEMM-CAFF.json")
      assert.matches("nvrtc: the first valid configuration compiles %(sm_90%)", out)
    end
    out = shell.run(ktlua .. " run --help")
    assert.matches("usage: ktlua run PROBLEM.json", out)
  end)
end)

describe("the T1 fixtures", function()
  it("follow Kernel Tuner's T1 schema where they claim to", function()
    local ok = os.execute("/usr/bin/python3 -c 'import jsonschema' 2>/dev/null")
    if not ok then return pending("python3-jsonschema is not installed") end
    local function valid(path)
      local cmd = ("/usr/bin/python3 -c \"import json, jsonschema; jsonschema.validate(" ..
        "json.load(open('%s')), json.load(open('%sinput-schema.json')))\" 2>&1"):format(path, FIX)
      local out, code = shell.run(cmd)
      return code == 0, out
    end
    assert.is_true(valid(FIX .. "vadd_T1.json"))
    for _, f in ipairs({ "convolution/convolution-CAFF.json", "MD5Hash/MD5Hash-CAFF.json",
                         "nbody/nbody-CAFF.json", "others/FFT/FFT-CAFF.json" }) do
      assert.is_true(valid(BAT .. f), f)
    end
    -- BAT's others are variants the schema refuses (and ktlua reads)
    local ok2, out = valid(BAT .. "others/MD/MD-CAFF.json")
    assert.is_false(ok2)
    assert.matches("'KernelSpecification' is a required property", out)
  end)
end)
