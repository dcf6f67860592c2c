-- T1 files made hostile one field at a time (issue 32, items 11 and 13): each
-- bad value gives an error naming the T1 file and the field, kt.t1_read
-- lists it as a defect (or refuses the file, where no space can be read),
-- kt.t1 refuses it with the same words, and no message is a place in
-- ktlua's own sources. The files a T1 file names are read only as regular
-- files of bounded size: a directory, a named pipe or /dev/zero is refused
-- at once.
local kt = require "ktlua"
local files = require "spec.support.files"
local shell = require "spec.support.shell"

local FIX = "spec/fixtures/t1/"
local BAT = FIX .. "bat/"
local FUZZ = "spec/fixtures/fuzz/"

local DELETE = {} -- a field removed
local EMPTY_LIST = "\1[]" -- JSON's [], which an empty Lua table is not

local function tmpdir()
  local dir = files.tmpname()
  assert(os.execute("mkdir -p " .. dir))
  return dir
end

-- doc with the value at the path (keys and 1-based indexes) replaced.
local function set(doc, path, value)
  local t = doc
  for i = 1, #path - 1 do t = t[path[i]] end
  if value == DELETE then value = nil end
  t[path[#path]] = value
end

-- The T1 file base (with the files beside it) in a new folder (or in dir,
-- where an earlier call put them), edited.
local function mutant(base, edits, dir)
  if not dir then
    dir = tmpdir()
    assert(os.execute(("cp -r %s/. %s/"):format(base:match("^(.*)/") or ".", dir)))
  end
  local doc = kt.json.read(base)
  for _, e in ipairs(edits) do set(doc, e[1], e[2]) end
  local text = kt.json.encode(doc):gsub('"\\u0001%[%]"', "[]")
  files.write(dir .. "/p.json", text)
  return dir .. "/p.json", dir
end

local function internal(msg)
  return msg:find("%[?ktlua[%w%._]*%]?:%d+:") or msg:find("%.lua:%d+:") or msg:find("stack traceback")
end

-- What kt.t1_read says of path: {raised = message} or its defects.
local function verdict(path, opts)
  local ok, problem = pcall(kt.t1_read, path, opts)
  if not ok then return { raised = problem } end
  return problem.defects, problem
end

-- That path's bad field is named: an error that kt.t1_read raises, or a
-- defect of kt.t1_read that kt.t1 refuses with.
local function assert_named(path, field, says, opts)
  local prefix = path .. ": " .. field .. ": "
  local v = verdict(path, opts)
  local messages = v.raised and { v.raised } or v
  local found
  for _, m in ipairs(messages) do
    assert.is_falsy(internal(m), m)
    if m:sub(1, #prefix) == prefix and m:find(says, #prefix, true) then found = m end
  end
  assert.is_truthy(found, ("%s: %s: %s\nnot among:\n%s"):format(field, says, path,
    table.concat(messages, "\n")))
  if not v.raised then
    local ok, err = pcall(kt.t1, path, opts)
    assert.is_false(ok, field)
    assert.is_truthy(err:find(found, 1, true), err)
  end
  return found
end

local KS = "KernelSpecification"
local ARGS = { KS, "Arguments" }
local function arg(i, field) return { KS, "Arguments", i, field } end
local function ref(field) return { KS, "ReferenceArguments", 1, field } end

-- { edits, field, what the message says }: over vadd_T1.json, whose
-- arguments are n (int32 scalar), a (float scalar), x (Generator) and y
-- (Constant), and whose reference fills y_expected from a binary file.
local vadd_cases = {
  -- the space: no space, no problem (raised)
  { { { { "ConfigurationSpace", "TuningParameters", 1, "Values" }, EMPTY_LIST } },
    "TuningParameters[1] (WG)", "Values is empty" },
  { { { { "ConfigurationSpace", "TuningParameters", 1, "Values" }, { { 1 } } } },
    "TuningParameters[1] (WG)", "value 1 is a list, not a number or a string" },
  { { { { "ConfigurationSpace", "TuningParameters", 1, "Values" }, 5 } },
    "TuningParameters[1] (WG)", "Values must be a list or a list expression" },
  { { { { "ConfigurationSpace", "TuningParameters", 1, "Name" }, 5 } },
    "TuningParameters[1]", "Name must be an identifier, found 5" },
  { { { { "ConfigurationSpace", "TuningParameters" }, "x" } },
    "ConfigurationSpace", "has no TuningParameters list", "ConfigurationSpace has" },
  { { { { "ConfigurationSpace", "Conditions" }, 5 } }, "Conditions", "expected a list, found 5" },
  { { { { "ConfigurationSpace", "Conditions", 1, "Expression" }, 5 } },
    "Conditions[1]", "has no Expression", "Conditions[1] has" },
  { { { { KS, "Language" }, { 1 } } }, "Language", "a list: ktlua runs CUDA and OpenCL kernels",
    "Language a list" },
  { { { { KS, "KernelName" }, "(x" } }, "KernelName", "'(x' is no function's name" },
  { { { { KS, "KernelName" }, 5 } }, "KernelSpecification", "needs KernelName and KernelFile",
    "KernelSpecification needs" },
  -- the kernel: defects
  { { { { KS, "KernelName" }, "a b" } }, "KernelName 'a b'", "vadd.cl defines no such kernel" },
  { { { { KS, "CompilerOptions" }, { 1 } } }, "CompilerOptions[1]", "1 is not a string" },
  { { { { KS, "CompilerOptions" }, 5 } }, "CompilerOptions", "expected a list, found 5" },
  { { { { KS, "ProblemSize" }, { "x" } } }, "ProblemSize[0]", "the size 'x' is not an integer" },
  { { { { KS, "GlobalSize", "X" }, 0 } }, "GlobalSize.X", "the size 0 is not positive" },
  { { { { KS, "GlobalSize", "X" }, "-4" } }, "GlobalSize.X", "the size -4 is not positive" },
  { { { { KS, "GlobalSize", "X" }, 1.5 } }, "GlobalSize.X", "expected an integer or an expression, found 1.5" },
  { { { { KS, "LocalSize", "Y" }, { 2 } } }, "LocalSize.Y", "found a list" },
  { { { { KS, "LocalSize" }, DELETE } }, "KernelSpecification", "needs GlobalSize",
    "KernelSpecification needs" },
  { { { { KS, "SharedMemory" }, -1 } }, "SharedMemory", "the size -1 is not positive" },
  { { { { KS, "SharedMemory" }, "WG +" } }, "SharedMemory", "expression 'WG +'" },
  { { { { KS, "Device" }, 5 } }, "Device", "expected an object, found 5" },
  { { { { KS, "Device" }, { DeviceId = -1 } } }, "Device.DeviceId", "-1 is negative" },
  { { { { KS, "Device" }, { PlatformId = "x" } } }, "Device.PlatformId", "the id 'x' is not an integer" },
  -- arguments
  { { { ARGS, 5 } }, "Arguments", "expected a list, found 5" },
  { { { arg(1), 5 } }, "Arguments[1]", "expected an object, found 5" },
  { { { arg(1, "Name"), "a b" } }, "Arguments[1].Name", "'a b' is not an identifier" },
  { { { arg(1, "Name"), "x\n;" } }, "Arguments[1].Name", "'x\\010;' is not an identifier" },
  { { { arg(2, "Name"), "n" } }, "Arguments[2] (n).Name", "another argument has the name n" },
  { { { arg(1, "MemoryType"), "Texture" } }, "Arguments[1] (n).MemoryType", "'Texture' is not Scalar" },
  { { { arg(1, "Type"), "int7x" } }, "Arguments[1] (n).Type", "'int7x' is not one of" },
  { { { arg(1, "Type"), "float99" } }, "Arguments[1] (n).Type", "'float99' is not one of" },
  { { { arg(1, "Type"), { "int" } } }, "Arguments[1] (n).Type", "a list is not one of" },
  { { { arg(1, "FillValue"), "abc" } }, "Arguments[1] (n).FillValue", "'abc' is not a number" },
  { { { arg(1, "FillValue"), 1.5 } }, "Arguments[1] (n).FillValue", "1.5 is not an integer, as int is" },
  { { { arg(1, "FillValue"), 1e10 } }, "Arguments[1] (n).FillValue", "is outside int's range" },
  { { { arg(1, "FillValue"), DELETE } }, "Arguments[1] (n).FillValue", "missing: a int scalar" },
  { { { arg(1, "AccessType"), "Both" } }, "Arguments[1] (n).AccessType", "'Both' is not ReadOnly" },
  { { { arg(3, "Size"), 0 } }, "Arguments[3] (x).Size", "the size 0 is not positive" },
  { { { arg(3, "Size"), -5 } }, "Arguments[3] (x).Size", "the size -5 is not positive" },
  { { { arg(3, "Size"), "ProblemSize[0] - 4096" } }, "Arguments[3] (x).Size", "the size 0 is not positive" },
  { { { arg(3, "Size"), "WG" } }, "Arguments[3] (x).Size", "'WG' reads tuning parameters" },
  { { { arg(3, "Size"), 1 << 62 } }, "Arguments[3] (x).Size", "more than the limit of" },
  { { { arg(3, "Size"), true } }, "Arguments[3] (x).Size", "found true" },
  { { { arg(3, "Size"), "4096 / 3" } }, "Arguments[3] (x).Size", "is not an integer" },
  { { { arg(3, "Size"), DELETE } }, "Arguments[3] (x).Size", "a vector argument needs a Size" },
  { { { arg(3, "FillType"), "Magic" } }, "Arguments[3] (x).FillType", "'Magic' is not Constant" },
  { { { arg(3, "FillType"), 5 } }, "Arguments[3] (x).FillType", "5 is not Constant" },
  { { { arg(3, "DataSource"), "j" } }, "Arguments[3] (x).DataSource", "reads j; a Generator reads only i" },
  { { { arg(3, "DataSource"), "i +" } }, "Arguments[3] (x).DataSource", "expression 'i +'" },
  { { { arg(3, "DataSource"), 5 } }, "Arguments[3] (x).DataSource", "5 is no expression" },
  { { { arg(4, "FillValue"), "x" } }, "Arguments[4] (y).FillValue", "'x' is not a number" },
  { { { arg(4, "FillType"), "Random" }, { arg(4, "FillValue"), -1 } },
    "Arguments[4] (y).FillValue", "-1 is negative" },
  { { { arg(4, "RandomSeed"), 1.5 } }, "Arguments[4] (y).RandomSeed", "RandomSeed 1.5 is not an integer" },
  { { { arg(4, "Output"), "yes" } }, "Arguments[4] (y).Output", "'yes' is not 0, 1, true or false" },
  { { { arg(4, "MemType"), 5 } }, "Arguments[4] (y).MemType", "5 is not a memory type" },
  { { { arg(4, "Type"), "custom" }, { arg(4, "TypeSize"), 0 } },
    "Arguments[4] (y).TypeSize", "the size 0 is not positive" },
  { { { arg(4, "FillType"), "BinaryRaw" } }, "Arguments[4] (y).DataSource", "a binaryraw fill needs a file, found nil" },
  { { { arg(4, "FillType"), "BinaryRaw" }, { arg(4, "DataSource"), "." } },
    "Arguments[4] (y).DataSource '.'", "not a regular file (a directory)" },
  { { { arg(4, "FillType"), "BinaryRaw" }, { arg(4, "DataSource"), "/dev/zero" } },
    "Arguments[4] (y).DataSource '/dev/zero'", "not a regular file (a character device)" },
  { { { arg(4, "FillType"), "BinaryRaw" }, { arg(4, "DataSource"), "vadd.cl" } },
    "Arguments[4] (y).DataSource 'vadd.cl'", "bytes, the argument 16384" },
  { { { arg(4, "FillType"), "File" }, { arg(4, "DataSource"), "vadd.cl" } },
    "Arguments[4] (y).DataSource 'vadd.cl'", "not a number" },
  { { { arg(4, "Type"), "half" }, { arg(4, "FillType"), "BinaryRaw" } },
    "Arguments[4] (y).FillType", "BinaryRaw of half is not supported" },
  -- references
  { { { { KS, "ReferenceArguments" }, 5 } }, "ReferenceArguments", "expected a list, found 5" },
  { { { ref("TargetName"), "n" } }, "ReferenceArguments[1] (y_expected).TargetName",
    "'n' is no vector argument" },
  { { { ref("TargetName"), DELETE } }, "ReferenceArguments[1] (y_expected).TargetName",
    "nil is no vector argument" },
  { { { ref("ValidationMethod"), "Eyeball" } }, "ReferenceArguments[1] (y_expected).ValidationMethod",
    "'Eyeball' is not AbsoluteDifference" },
  { { { ref("ValidationThreshold"), -1 } }, "ReferenceArguments[1] (y_expected).ValidationThreshold",
    "-1 is not a number >= 0" },
  { { { ref("DataSource"), "." } }, "ReferenceArguments[1] (y_expected).DataSource '.'",
    "not a regular file (a directory)" },
  { { { ref("FillType"), "Constant" }, { ref("FillValue"), "big" } },
    "ReferenceArguments[1] (y_expected).FillValue", "'big' is not a number" },
  -- the kernel file
  { { { { KS, "KernelFile" }, "." } }, "KernelFile '.'", "not a regular file (a directory)" },
  { { { { KS, "KernelFile" }, "/dev/zero" } }, "KernelFile '/dev/zero'",
    "not a regular file (a character device)" },
  { { { { KS, "KernelFile" }, "vadd_expected.bin" } }, "KernelFile 'vadd_expected.bin'",
    "holds a NUL byte at offset" },
  -- budget, search, benchmark
  { { { { "Budget" }, 5 } }, "Budget", "expected a list, found 5" },
  { { { { "Budget", 1, "BudgetValue" }, 0 } }, "Budget[1].BudgetValue", "0 is not a positive number" },
  { { { { "Budget", 1, "BudgetValue" }, "x" } }, "Budget[1].BudgetValue", "'x' is not a positive number" },
  { { { { "Budget", 1, "Type" }, "Forever" } }, "Budget[1].Type", "'Forever' is not ConfigurationCount" },
  { { { { "Budget", 1, "Type" }, "ConfigurationFraction" }, { { "Budget", 1, "BudgetValue" }, 2 } },
    "Budget[1].BudgetValue", "2 is more than 1" },
  { { { { "Search" }, 5 } }, "Search", "expected an object, found 5" },
  { { { { "Search", "Name" }, 5 } }, "Search.Name", "5 is no searcher's name" },
  { { { { "Search", "Attributes" }, 5 } }, "Search.Attributes", "expected a list, found 5" },
  { { { { "Search", "Attributes" }, { { Name = 5, Value = 1 } } } }, "Search.Attributes[1].Name",
    "5 is not an option's name" },
  { { { { "Search", "Attributes" }, { { Name = "alpha", Value = { 1 } } } } },
    "Search.Attributes[1].Value", "a list is not a number" },
  { { { { "BenchmarkConfig" }, { iterations = 0 } } }, "BenchmarkConfig.iterations",
    "the count 0 is not positive" },
}

describe("a T1 file with one bad field", function()
  it("names the file and the field; kt.t1_read lists it, kt.t1 refuses it", function()
    for _, case in ipairs(vadd_cases) do
      local path = mutant(FIX .. "vadd_T1.json", case[1])
      local field, says = case[2], case[3]
      if case[4] then -- a message that runs the field into its words
        local v = verdict(path)
        local messages = v.raised and { v.raised } or v
        assert.is_truthy(#messages > 0 and messages[1]:find(path .. ": " .. case[4], 1, true),
          case[4] .. ": " .. table.concat(messages, "\n"))
        assert.is_falsy(internal(messages[1]))
      else
        assert_named(path, field, says)
      end
    end
  end)

  it("is refused at once when a file it names is a named pipe", function()
    local path, dir = mutant(FIX .. "vadd_T1.json", {
      { arg(4, "FillType"), "BinaryRaw" }, { arg(4, "DataSource"), "pipe" } })
    assert(os.execute("mkfifo " .. dir .. "/pipe"))
    assert_named(path, "Arguments[4] (y).DataSource 'pipe'", "not a regular file (a named pipe)")
    path = mutant(FIX .. "vadd_T1.json", { { { KS, "KernelFile" }, dir .. "/pipe" } })
    assert_named(path, "KernelFile '" .. dir .. "/pipe'", "not a regular file (a named pipe)")
    -- and from the command line, which would wait for a writer if it opened the pipe
    local out, code = shell.run(shell.ktlua .. " run --check " .. path)
    assert.are.equal(1, code, out) -- which the run refuses
    assert.matches("defect: " .. path:gsub("%p", "%%%0") .. ": KernelFile '.-pipe': not a regular " ..
      "file %(a named pipe%)", out)
  end)

  it("reads a data file only up to max_bytes, and the option is checked", function()
    local path, dir = mutant(FIX .. "vadd_T1.json", {
      { arg(4, "FillType"), "BinaryRaw" }, { arg(4, "DataSource"), "vadd_expected.bin" } })
    assert.are.same({}, (verdict(path)))
    assert_named(path, "Arguments[4] (y).Size", "4096 elements of 4 bytes are more than the limit of " ..
      "1000 bytes (max_bytes)", { max_bytes = 1000 })
    path, dir = mutant(FIX .. "vadd_T1.json", { { arg(4, "FillType"), "File" },
      { arg(4, "DataSource"), "big.txt" }, { arg(4, "Size"), 2 } })
    files.write(dir .. "/big.txt", ("1 "):rep(2000))
    assert_named(path, "Arguments[4] (y).DataSource 'big.txt'", "4000 bytes, more than the limit of 1000",
      { max_bytes = 1000 })
    assert_named(path, "Arguments[4] (y).DataSource 'big.txt'", "holds more numbers, the argument 2")
    local ok, err = pcall(kt.t1_read, path, { max_bytes = 0 })
    assert.is_false(ok)
    assert.matches("t1_read: max_bytes must be a positive integer, got 0", err)
    local out, code = shell.run(shell.ktlua .. " run --check --max-bytes=1000 " .. path)
    assert.are.equal(1, code, out)
    assert.matches("defect: .-big.txt': 4000 bytes, more than the limit of 1000", out)
  end)

  it("leaves an absent data file a note, and kt.t1 names it", function()
    local path = mutant(FIX .. "vadd_T1.json", { { ref("DataSource"), "nothing.bin" } })
    local defects, problem = verdict(path)
    assert.are.same({}, defects)
    assert.matches("the data file .*/nothing.bin is not there", problem.notes[1])
    local ok, err = pcall(kt.t1, path, { tuner = kt.tuner() })
    assert.is_false(ok)
    assert.are.equal(path .. ": ReferenceArguments[1] (y_expected).DataSource 'nothing.bin': No such " ..
      "file or directory", err)
  end)
end)

-- `ktlua run PATH --check` and `ktlua run PATH` (refusing before a device
-- opens) fail alike, with kt.t1's words on stderr, for what kt.t1 refuses.
local function assert_refused(path, kt_t1_says)
  for _, check in ipairs { " --check", "" } do
    local out, code = shell.run("(" .. shell.ktlua .. " run " .. path .. check .. " 2>&1 >/dev/null)")
    assert.are.equal(1, code, path .. check .. ": " .. out)
    assert.are.equal("ktlua: " .. kt_t1_says .. "\n", out, path .. check)
  end
end

describe("ktlua run --check", function()
  it("fails for every defect that ktlua run refuses, with the same words", function()
    local n = 0
    for _, case in ipairs(vadd_cases) do
      local path = mutant(FIX .. "vadd_T1.json", case[1])
      if not verdict(path).raised then
        local ok, err = pcall(kt.t1, path)
        assert.is_false(ok, path)
        assert_refused(path, err)
        n = n + 1
      end
    end
    assert.is_true(n >= 20, n)
  end)

  it("fails for a kernel or data file that is not there, and a generator that fails", function()
    local dir = tmpdir()
    local cases = {
      { { ref("DataSource"), "nothing.bin" } },
      { { { KS, "KernelFile" }, dir .. "/none.cl" } },
      { { arg(3, "DataSource"), "1/0" } },
    }
    for _, edits in ipairs(cases) do
      local path = mutant(FIX .. "vadd_T1.json", edits)
      local ok, err = pcall(kt.t1, path)
      assert.is_false(ok)
      assert_refused(path, err)
    end
    local path = mutant(FIX .. "vadd_T1.json", cases[3])
    assert.are.same({ path .. ": Arguments[3] (x).DataSource: expression '1/0': at character 2: "
      .. "division by zero, for i = 0" }, (verdict(path)))
    local out, code = shell.run(shell.ktlua .. " run --check " .. FIX .. "vadd_T1.json")
    assert.are.equal(0, code, out) -- and passes a file the run takes
  end)
end)

describe("every field of a T1 file, given each hostile value", function()
  it("gives an error or defects naming the file, or builds; never a place in ktlua", function()
    local base = kt.json.read(FIX .. "vadd_T1.json")
    local paths = {}
    local function walk(t, at)
      for k, v in pairs(t) do
        local here = { table.unpack(at) }
        here[#here + 1] = k
        paths[#paths + 1] = here
        if type(v) == "table" then walk(v, here) end
      end
    end
    walk(base, {})
    local values = { 0, -1, 1.5, "x", "", {}, { 1 }, { a = 1 }, true, 1e300, math.maxinteger,
                     math.mininteger, "\0", ("9"):rep(400), "1/0", "WG", "i", ".", "/dev/zero",
                     "ProblemSize[9]", "max(WG)", DELETE }
    local tuner, dir = kt.tuner(), select(2, mutant(FIX .. "vadd_T1.json", {}))
    local n = 0
    for _, at in ipairs(paths) do
      for _, v in ipairs(values) do
        local path = mutant(FIX .. "vadd_T1.json", { { at, v } }, dir)
        local ok, problem = pcall(kt.t1_read, path)
        local messages = ok and problem.defects or { problem }
        if ok and #problem.defects == 0 then
          local built, err = pcall(kt.t1, problem, { tuner = tuner })
          if not built then messages = { err } end
        end
        for _, m in ipairs(messages) do
          local what = table.concat(at, ".") .. " = " .. kt.json.encode({ v ~= DELETE and v or nil })
          assert.are.equal(path .. ": ", m:sub(1, #path + 2), what .. ": " .. m)
          assert.is_falsy(internal(m), what .. ": " .. m)
          n = n + 1
        end
      end
    end
    assert.is_true(n > 1000, n)
    tuner:close()
  end)
end)

-- Each argument of each of BAT's files, one field at a time: the field as
-- the file spells its alias (BAT's MD has length and value).
describe("BAT's T1 files with one bad argument field", function()
  local bat = { "GEMM/GEMM-CAFF.json", "GEMM/GEMM-CAFF-matmul.json", "MD5Hash/MD5Hash-CAFF.json",
                "TRIAD/TRIAD-CAFF.json", "convolution/convolution-CAFF.json", "nbody/nbody-CAFF.json",
                "pnpoly/pnpoly-CAFF.json", "others/FFT/FFT-CAFF.json", "others/MD/MD-CAFF.json",
                "others/builtin_vectors/builtin_vectors-CAFF.json" }

  local function key_of(t, name)
    for k in pairs(t) do if k:lower() == name:lower() then return k end end
    return name
  end

  it("names the file and the argument's field, and kt.t1_read lists it", function()
    local n = 0
    for _, file in ipairs(bat) do
      local doc = kt.json.read(BAT .. file)
      local spec_key = key_of(doc, KS)
      for i, a in ipairs(doc[spec_key][key_of(doc[spec_key], "Arguments")]) do
        local name = a[key_of(a, "Name")]
        local memory = tostring(a[key_of(a, "MemoryType")] or "vector"):lower()
        local fields = { { "Type", "bogus", "'bogus' is not one of" },
                         { "MemoryType", "bogus", "'bogus' is not Scalar" } }
        if memory == "scalar" then
          fields[#fields + 1] = { "FillValue", "bogus", "'bogus' is not a number", "value" }
        else
          fields[#fields + 1] = { "Size", 0, "the size 0 is not positive", "length" }
          fields[#fields + 1] = { "FillType", "bogus", "'bogus' is not Constant" }
        end
        for _, f in ipairs(fields) do
          local key = a[f[1]] == nil and f[4] and a[f[4]] ~= nil and f[4] or key_of(a, f[1])
          local shown = key:lower() == f[1]:lower() and f[1] or key
          local path = mutant(BAT .. file, { { { spec_key, key_of(doc[spec_key], "Arguments"), i, key },
                                               f[2] } })
          assert_named(path, ("Arguments[%d] (%s).%s"):format(i, name, shown), f[3])
          n = n + 1
        end
      end
    end
    assert.is_true(n > 150, n)
  end)
end)

describe("the fixed hostile T1 files", function()
  it("are refused with the file and the field named", function()
    local cases = {
      { "t1_size_zero.json", "Arguments[3] (x).Size", "the size 0 is not positive" },
      { "t1_kernelfile_directory.json", "KernelFile '.'", "not a regular file (a directory)" },
      { "t1_datasource_dev_zero.json", "Arguments[4] (y).DataSource '/dev/zero'",
        "not a regular file (a character device)" },
      { "t1_generator_reads_j.json", "Arguments[3] (x).DataSource", "reads j; a Generator reads only i" },
      { "t1_scalar_out_of_range.json", "Arguments[1] (n).FillValue", "outside int's range" },
    }
    for _, case in ipairs(cases) do assert_named(FUZZ .. case[1], case[2], case[3]) end
  end)
end)
