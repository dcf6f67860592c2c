-- bench/searchers/record/conv2d.lua: records the complete space of conv2d.cu
-- (a 2-D convolution of the newer benchmark_hub kind: shared/constant memory,
-- padding and read-only variants with tile sizes) as a Kernel Tuner cache
-- file, failed configurations included, for the searcher benchmarks.
--   ktlua bench/searchers/record/conv2d.lua [--device=ID] [--repeats=N] [--n=N] [--fw=N] OUTPUT.json
local kt = require "ktlua"
local usage = "usage: conv2d.lua [--device=ID] [--repeats=N] [--n=N] [--fw=N] OUTPUT.json"
local opt, out = {device = os.getenv("KTLUA_DEVICE") or "cuda:0", repeats = 3, n = 4096, fw = 15}, nil
for _, a in ipairs(arg) do
  local k, v = a:match("^%-%-(%w+)=(.+)$")
  if k and opt[k] ~= nil then opt[k] = tonumber(v) or v
  elseif not k and not out then out = a
  else error("unknown argument " .. a .. " (" .. usage .. ")") end
end
assert(out, usage)

local n, fw = opt.n, opt.fw
local here = arg[0]:match("^(.*)/[^/]*$") or "."
local filter = kt.array("float", fw * fw):random(3)
local values = {}
for i = 0, fw * fw - 1 do values[#values + 1] = ("%.9gf"):format(filter[i]) end
local input = kt.array("float", (n + fw - 1) * (n + fw - 1)):random(5)
local output = kt.array("float", n * n)

local tuner = kt.tuner(opt.device)
local k = tuner:kernel{
  file = here .. "/conv2d.cu", name = "conv2d", prelude = ("#define FW %d\n#define FH %d\n#define CFILTER %s\n"):format(fw, fw, table.concat(values, ",")),
  global = {n, n}, group = {1, 1}, round_global = true,
  args = {output:output(), input:input(), filter:input(), kt.int(n), kt.int(n)},
}
k:param("block_size_x", {16, 32, 48, 64, 96, 128}, {group_x = "mul"})
k:param("block_size_y", {1, 2, 4, 8, 16}, {group_y = "mul"})
k:param("tile_size_x", {1, 2, 3, 4}, {global_x = "div"})
k:param("tile_size_y", {1, 2, 3, 4}, {global_y = "div"})
k:param("use_shmem", {0, 1})
k:param("use_padding", {0, 1})
k:param("read_only", {0, 1})
k:param("use_cmem", {0, 1})
k:constraint({"block_size_x", "block_size_y"}, function(x, y) return x * y >= 32 and x * y <= 1024 end)
k:constraint({"use_shmem", "use_padding"}, function(s, p) return p <= s end) -- padding pads shared memory
k:prune{divisible = false}

print(("recording conv2d %dx%d, filter %dx%d, on %s: %d configurations"):format(n, n, fw, fw, tuner.device.name, #k:space()))
local t0 = os.time()
local results = tuner:tune(k, {repeats = opt.repeats, fail_fast = false})
local ok = 0
for _, r in ipairs(results) do if r.status == "ok" then ok = ok + 1 end end
print(("%d configurations, %d ok, %d failed, in %d s"):format(#results, ok, #results - ok, os.time() - t0))
results:write(out, "kernel-tuner-cache", {problem_size = {n, n}})
