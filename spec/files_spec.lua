-- Nothing lost: journals and result files that survive kills, concurrent
-- writers and changed kernels.
local kt = require "ktlua"
local shell = require "spec.support.shell"

local tuner = kt.tuner()

local function tmp(ext)
  local path = os.tmpname()
  os.remove(path)
  return path .. ext
end

local function lines(path)
  local t = {}
  for line in io.lines(path) do t[#t + 1] = line end
  return t
end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function spit(path, text, mode)
  local f = assert(io.open(path, mode or "wb"))
  f:write(text)
  f:close()
end

local function exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

-- Waits (at most 30 s) until the file exists: a child process signals
-- that it reached a point by creating it.
local function wait_for(path)
  for _ = 1, 600 do
    if exists(path) then return true end
    os.execute("sleep 0.05")
  end
  return false
end

local function script(code)
  local path = tmp(".lua")
  spit(path, code)
  return path
end

-- Six configurations, X = 1..6; the source can be changed by `extra`.
local function kernel(extra, name)
  local o = kt.array("int", 4)
  local k = tuner:kernel{ source = "__kernel void k(__global int *o) { o[0] = X" .. (extra or "") .. "; }",
                          name = name or "k", global = 1, args = { o:output() } }
  k:param("X", { 1, 2, 3, 4, 5, 6 })
  return k
end

local function indices(r)
  local t = {}
  for i = 1, #r do t[i] = r[i].index end
  table.sort(t)
  return t
end

describe("a results file", function()
  -- 20,000 results: a rewrite takes long enough to be killed in the middle.
  local function big_journal(path, n)
    local f = assert(io.open(path, "w"))
    f:write('{"format":"ktlua-journal","version":1,"task":"big","device":"d","kernels":["big"],',
      '"parameters":[{"name":"X","values":[')
    for i = 1, n do f:write(i > 1 and "," or "", i) end
    f:write(']}],"space":{"valid":', n, ',"all":', n, '}}\n')
    for i = 1, n do
      f:write(('{"index":%d,"config":{"X":%d},"status":"ok","time_ms":1.5,"samples_ms":[1.5,1.25],'
        .. '"sizes":[{"global":[64],"local":[8]}],"error":null}\n'):format(i - 1, i))
    end
    f:close()
  end

  it("is replaced whole: a kill while it is rewritten leaves the previous one", function()
    local journal, out = tmp(".jsonl"), tmp(".json")
    big_journal(journal, 20000)
    local small = kt.load(journal)
    local child = script([[
local kt = require "ktlua"
local r = kt.load((...))
io.write(io.open("/proc/self/stat"):read("n"), "\n")
io.flush()
while true do r:write(select(2, ...)) end]])
    for round = 1, 4 do
      -- the previous file: one result, or the whole set of the last round
      if round == 1 then
        local one = tmp(".jsonl")
        big_journal(one, 1)
        kt.load(one):write(out)
        os.remove(one)
      end
      local p = io.popen(("exec %s %s %s %s 2>&1"):format(shell.ktlua, child, journal, out))
      local pid = p:read("l")
      os.execute("sleep 0.0" .. round)
      os.execute("kill -KILL " .. pid)
      p:close()
      local n = #kt.load(out)
      assert.is_true(n == 1 or n == #small, "round " .. round .. ": " .. n .. " results")
    end
    os.execute("rm -f " .. out .. ".tmp-*")
    for _, f in ipairs({ journal, out, child }) do os.remove(f) end
  end)
end)
