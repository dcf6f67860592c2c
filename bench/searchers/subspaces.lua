-- bench/searchers/subspaces.lua: harder held-out proxies from recorded
-- spaces (Kernel Tuner cache files): for each parameter of two or more values,
-- the subspace that fixes it to the value of the fastest configuration NOT
-- sharing the optimum's value, so that the subspace's optimum lies elsewhere
-- (as if the kernel had been designed without the optimum's choice). Failed
-- configurations stay. Subspaces of fewer than MIN configurations are left out.
--   build/ktlua bench/searchers/subspaces.lua OUTDIR [MIN] FILE.json.gz ...
-- Each subspace is OUTDIR/DATASET~PARAM=VALUE.json (a Kernel Tuner cache file).
-- A space of a tiled convolution (block_size_x/y and tile_size_x/y, a 15x15
-- filter) also gives DATASET~smem24k.json: the configurations whose input tile
-- ((bx * tx + 14) * (by * ty + 14) floats) needs over 24 KiB of shared memory
-- fail, as on a GPU with half the shared memory per block: a larger invalid
-- region, with the optimum often at its edge. These are proxies of other
-- designs and GPUs, not recordings.
local kt = require "ktlua"
local outdir, min = arg[1], tonumber(arg[2]) or 1000
local first = tonumber(arg[2]) and 3 or 2
assert(outdir and arg[first], "usage: subspaces.lua OUTDIR [MIN] FILE.json.gz ...")

-- Names and values from the files are data: escaped in patterns, and
-- only letters, digits, '.', '_' and '-' of them in file names.
local function literal(text) return (text:gsub("%p", "%%%0")) end
local function safe(text) return (tostring(text):gsub("[^%w%._%-]", "_")) end

local function lines_of(path)
  local f = assert(io.popen("gzip -dc '" .. path:gsub("'", "'\\''") .. "'"))
  local list = {}
  for l in f:lines() do list[#list + 1] = l end
  f:close()
  return list
end

local function smem_bytes(l)
  local v = {}
  for _, k in ipairs{"block_size_x", "block_size_y", "tile_size_x", "tile_size_y"} do
    v[k] = tonumber(l:match('"' .. literal(k) .. '": ?([%d.]+)'))
    if not v[k] then return nil end
  end
  if l:match('"use_shmem": ?0') then return 0 end -- no shared memory
  return (v.block_size_x * v.tile_size_x + 14) * (v.block_size_y * v.tile_size_y + 14) * 4
end

-- The space with the configurations over 24 KiB of shared memory failed.
local function less_shared(outdir, name, lines, cache_at)
  if not smem_bytes(lines[cache_at + 1]) then return end
  local out = assert(io.open(("%s/%s~smem24k.json"):format(outdir, safe(name)), "w"))
  for j, l in ipairs(lines) do
    local b = j > cache_at and smem_bytes(l)
    if b and b > 24576 then l = l:gsub('"time": ?[%d.eE+-]+', '"time": "RuntimeFailedConfig"') end
    out:write(l, "\n")
  end
  out:close()
end

-- The space cut to a diagonal band: the configurations whose value
-- positions, each scaled to [0, 1] and summed over the parameters, lie in the
-- middle 40% of the configurations. As where products of parameters are
-- bounded (threads a block, tile sizes), a step along the band needs two
-- parameters changed together: the valid configurations are sparse among
-- their one-change neighbours.
local function band(outdir, name, lines, cache_at, params)
  local pos = {}
  for _, p in ipairs(params) do
    local at = {}
    for k, v in ipairs(p.values) do at[tostring(v)] = #p.values > 1 and (k - 1) / (#p.values - 1) or 0 end
    pos[#pos + 1] = {name = p.name, at = at}
  end
  local sums, entry = {}, {}
  for j = cache_at + 1, #lines do
    local sum = 0
    for _, p in ipairs(pos) do
      local v = lines[j]:match('"' .. literal(p.name) .. '": ?([^,}]+)')
      sum = v and p.at[tostring(tonumber(v))] and sum + p.at[tostring(tonumber(v))] or nil
      if not sum then break end
    end
    if sum then entry[j] = sum; sums[#sums + 1] = sum end
  end
  table.sort(sums)
  local lo, hi = sums[math.floor(0.3 * #sums) + 1], sums[math.ceil(0.7 * #sums)]
  local keep = {}
  for j = cache_at + 1, #lines do
    if entry[j] and entry[j] >= lo and entry[j] <= hi then
      keep[#keep + 1] = lines[j]:gsub(",%s*$", ""):gsub("}}%s*$", "}")
    end
  end
  local out = assert(io.open(("%s/%s~band.json"):format(outdir, safe(name)), "w"))
  for j = 1, cache_at do out:write(lines[j], "\n") end
  out:write(table.concat(keep, ",\n"), "\n}\n}\n")
  out:close()
end

for i = first, #arg do
  local path = arg[i]
  local name = path:match("([^/]+)%.json[%.gz]*$")
  local rec = kt.replay(path)
  local best = rec:optimum().config
  local lines = lines_of(path)
  local cache_at
  for j, l in ipairs(lines) do if l:match('^"cache": {') then cache_at = j break end end
  assert(cache_at, path .. ": not a Kernel Tuner cache file with one entry a line")
  less_shared(outdir, name, lines, cache_at)
  band(outdir, name, lines, cache_at, rec:space():params())
  for _, p in ipairs(rec:space():params()) do
    if #p.values > 1 then
      -- the fastest configuration with another value of p
      local other, other_ms
      for _, r in ipairs(rec:records():list()) do
        if r.status == "ok" and r.config[p.name] ~= best[p.name] and (not other_ms or r.time_ms < other_ms) then
          other, other_ms = r.config[p.name], r.time_ms
        end
      end
      local keep, pat = {}, ('"%s": ?([^,}]+)'):format(literal(p.name))
      for j = cache_at + 1, #lines do
        local v = lines[j]:match(pat)
        if v and tonumber(v) == other then keep[#keep + 1] = lines[j]:gsub(",%s*$", ""):gsub("}}%s*$", "}") end
      end
      if other and #keep >= min then
        local out = assert(io.open(("%s/%s~%s=%s.json"):format(outdir, safe(name), safe(p.name), safe(other)), "w"))
        for j = 1, cache_at do out:write(lines[j], "\n") end
        out:write(table.concat(keep, ",\n"), "\n}\n}\n")
        out:close()
      end
    end
  end
end
