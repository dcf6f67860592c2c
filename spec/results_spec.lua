-- Results: what is recorded, printed and written, and running once.
local kt = require "ktlua"

local tuner = kt.tuner()

local function tmpname(ext)
  return os.tmpname() .. ext
end

local function read(path)
  local f = assert(io.open(path))
  local s = f:read("a")
  f:close()
  os.remove(path)
  return s
end

describe("results", function()
  local out = kt.array("float", 32)
  local k = tuner:kernel{ source = "__kernel void f(__global float *o) { o[get_global_id(0)] = V; }",
                          name = "f", global = 32, group = 1, args = { out:output() } }
  k:param("WG", { 4, 8 }, { group_x = "mul" })
  k:param("V", { 1, 2 })
  k:reference(out, function(ref) ref:fill(1) end)
  local r = tuner:tune(k, { repeats = 3 })

  it("record everything about each configuration", function()
    assert.are.equal(4, #r)
    local x = r[1]
    assert.are.same({ WG = 4, V = 1 }, x.config)
    assert.are.equal(0, x.index)
    assert.are.equal("ok", x.status)
    assert.are.equal(3, #x.samples_ms)
    assert.is_true(x.time_ms > 0)
    assert.are.same({ 32 }, x.global)
    assert.are.same({ 4 }, x.group)
    assert.are.equal(1, x.launches)
    assert.are.same({ { kernel = "f", global = { 32 }, group = { 4 } } }, x.sizes)
    assert.is_true(x.build_ms > 0)
    for _, key in ipairs({ "build", "data", "validation", "launcher", "wait", "searcher", "framework", "total" }) do
      assert.is_true(x.overheads_ms[key] >= 0, key)
    end
    assert.is_nil(x.error)
    assert.are.equal("invalid_output", r[2].status)
    assert.is_nil(r[5])
  end)

  it("give the best configuration and a summary", function()
    local best = r:best()
    assert.are.equal(1, best.config.V)
    local s = r:summary()
    assert.are.equal(4, s.evaluated)
    assert.are.equal(2, s.statuses.ok)
    assert.are.equal(2, s.statuses.invalid_output)
    assert.are.equal(0, s.statuses.compile_failed)
    assert.are.equal(4, s.space_valid)
    assert.are.equal("space explored", s.stopped)
    assert.is_true(s.wall_ms >= s.build_ms)
    assert.are.equal("f", r.task)
    assert.are.equal(tuner.device.name, r.device)
    assert.are.same({ { name = "WG", values = { 4, 8 } }, { name = "V", values = { 1, 2 } } }, r.params)
  end)

  it("print a table a person reads", function()
    local path = tmpname(".txt")
    local f = assert(io.open(path, "w"))
    r:print{ out = f }
    f:close()
    local text = read(path)
    assert.matches("f on .-: 4 of 4 configurations %(exhaustive search, stopped: space explored%)", text)
    assert.matches("2 ok, 2 invalid_output", text)
    assert.matches("#%s+WG%s+V%s+status%s+time_ms", text)
    assert.matches("best: WG=%d V=1", text)
    assert.matches("time: wall", text)
  end)

  -- The headline of results read back printed "(exhaustive search, stopped: )"
  -- (the reason lost) and "results on : 4 of 0 configurations ( search, stopped: )".
  it("read back from a file print what the file knows, and no more", function()
    local function headline(results)
      local f = io.tmpfile()
      results:print{ out = f }
      f:seek("set")
      local line = f:read("l")
      f:close()
      return line
    end
    local dev = tuner.device.name
    local json, csv, journal = tmpname(".json"), tmpname(".csv"), tmpname(".jsonl")
    local tuned = tuner:tune(k, { repeats = 1, output = { json, csv }, journal = journal })
    local want = ("f on %s: 4 of 4 configurations (exhaustive search, stopped: space explored)"):format(dev)
    assert.are.equal(want, headline(tuned))
    local back = kt.load(json)
    assert.are.same({ want, "space explored", "space explored" },
      { headline(back), back.stopped, back:summary().stopped })
    back = kt.load(journal) -- a journal does not say why its tuning stopped
    assert.are.same({ ("f on %s: 4 of 4 configurations (exhaustive search)"):format(dev), nil },
      { headline(back), back.stopped })
    back = kt.load(csv) -- nor its task, device, space or searcher
    assert.are.same({ "results: 4 configurations", nil }, { headline(back), back:summary().stopped })
    for _, path in ipairs({ json, csv, journal }) do os.remove(path) end
  end)

  it("write CSV with a row per configuration", function()
    local path = tmpname(".csv")
    r:write(path)
    local lines = {}
    for line in read(path):gmatch("[^\n]+") do lines[#lines + 1] = line end
    assert.are.equal(5, #lines)
    -- (then, on a CPU device, the columns of its waits for a processor: issue 45)
    assert.are.equal("index,WG,V,status,time_ms,samples,global,local,build_ms,data_ms,validation_ms,"
      .. "launcher_ms,wait_ms,searcher_ms,framework_ms,total_ms,error",
      (lines[1]:gsub(",waited_ms", ""):gsub(",crowded$", "")))
    assert.matches("^0,4,1,ok,[%d.e-]+,3,32,4,", lines[2])
    assert.matches("^1,4,2,invalid_output,,0,32,4,.*\"element 0: got 2, expected 1", lines[3])
  end)

  it("write JSON with every sample", function()
    local path = tmpname(".json")
    r:write(path)
    local text = read(path)
    assert.matches('^{"format":"ktlua%-results","version":1,"task":"f"', text)
    assert.matches('"parameters":%[{"name":"WG","values":%[4,8%]},{"name":"V","values":%[1,2%]}%]', text)
    assert.matches('"space":{"valid":4,"all":4,"pruned":{"group_dims":0,"group_size":0,"local_memory":0,"divisible":0}}', text, 1, true)
    assert.matches('{"index":0,"config":{"WG":4,"V":1},"status":"ok","time_ms":[%d.e-]+,"samples_ms":%[[%d.e-]+,[%d.e-]+,[%d.e-]+%]', text)
    assert.matches('"error":"element 0: got 2', text)
    assert.has_error(function() r:write("results.xlsx") end,
      "cannot tell the format of 'results.xlsx': name it .csv or .json, or give the format")
    assert.has_error(function() r:write("/nonexistent/dir/r.csv") end)
  end)

  it("are written by the tuning itself when asked", function()
    local csv, json = tmpname(".csv"), tmpname(".json")
    tuner:tune(k, { repeats = 1, output = { csv, json } })
    assert.matches("^index,WG,V", read(csv))
    assert.matches("^{\"format\":\"ktlua%-results\"", read(json))
  end)

  it("run the best configuration once and read its outputs back", function()
    out:fill(-1)
    local once = tuner:run(k, r:best())
    assert.are.equal("ok", once.status)
    assert.are.same(r:best().config, once.config)
    assert.are.equal(1, out[31])
    tuner:run(k, { WG = 8, V = 2 })
    assert.are.equal(2, out[0])
    tuner:run(k, 0)
    assert.are.equal(1, out[0])
    assert.has_error(function() tuner:run(k, { WG = 3, V = 1 }) end,
      "configuration: WG = 3 is not one of its values (4, 8)")
    assert.has_error(function() tuner:run(k, { WG = 4 }) end, "configuration has no value for parameter V")
  end)

  it("report progress after each configuration", function()
    local seen = {}
    tuner:tune(k, { repeats = 1, progress = function(res, all) seen[#seen + 1] = res.index .. "/" .. #all end })
    assert.are.same({ "0/1", "1/2", "2/3", "3/4" }, seen)
  end)
end)
