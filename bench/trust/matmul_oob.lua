-- The trust reproduction of issue 12: a tiled matrix multiplication ported
-- without its restrictions, so that many configurations write past C (into
-- whatever the device placed after it). Tunes the whole space, then tunes
-- again without the configurations that overflow, and checks that every
-- configuration of the second tuning got the same verdict in the first:
-- no correct configuration was recorded wrong because an earlier one wrote
-- over its inputs.
--
--   ktlua bench/trust/matmul_oob.lua [--n=256] [--device=ID]
local kt = require "ktlua"
local o = require("ktlua.cli").options(arg, { n = 256, device = "default" },
  "bench/trust/matmul_oob.lua: out-of-bounds configurations among correct ones")
local n = o.n

local tuner = kt.tuner(o.device)
local A = kt.array("float", n * n):random(1, -1, 1)
local B = kt.array("float", n * n):random(2, -1, 1)
local C = kt.array("float", n * n)

local function task(restricted)
  local k = tuner:kernel{ name = "matmul",
                          file = "bench/kernels/matmul." .. (tuner.device.backend == "cuda" and "cu" or "cl"),
                          global = { n, n }, group = { 1, 1 }, round_global = true,
                          args = { C:output(), A:input(), B:input(), kt.int(n) } }
  k:param("block_size_x", { 16, 32, 64 }, { group_x = "mul" })
  k:param("block_size_y", { 1, 2, 4, 8 }, { group_y = "mul" })
  k:param("tile_size_x", { 1, 2, 4, 8 }, { global_x = "div" })
  k:param("tile_size_y", { 1, 2, 4, 8 }, { global_y = "div" })
  if restricted then
    k:constraint(("%d %% (block_size_x * tile_size_x) == 0 and %d %% (block_size_y * tile_size_y) == 0")
      :format(n, n))
  end
  k:reference(C, function(ref)
    for r = 0, n - 1 do
      for c = 0, n - 1 do
        local s = 0.0
        for i = 0, n - 1 do s = s + A[r * n + i] * B[i * n + c] end
        ref[r * n + c] = s
      end
    end
  end, { method = "absolute", tolerance = 1e-3 })
  return k
end

local function key(cfg)
  return ("%d,%d,%d,%d"):format(cfg.block_size_x, cfg.block_size_y, cfg.tile_size_x, cfg.tile_size_y)
end

local t0 = os.time()
local all = tuner:tune(task(false), { search = "exhaustive", repeats = 3, fail_fast = false })
local clean = tuner:tune(task(true), { search = "exhaustive", repeats = 3 })
local s, verdict = all:summary(), {}
for i = 1, #all do verdict[key(all[i].config)] = all[i].status end
local differ = 0
for i = 1, #clean do
  local got = verdict[key(clean[i].config)]
  if got ~= clean[i].status then
    differ = differ + 1
    print(("differs: %s: %s in the whole space, %s without the overflowing ones"):format(
      key(clean[i].config), got, clean[i].status))
  end
end
local parts = {}
for _, name in ipairs({ "ok", "out_of_bounds", "invalid_output", "runtime_failed", "timeout",
                        "launch_failed", "compile_failed", "too_many_threads" }) do
  if s.statuses[name] > 0 then parts[#parts + 1] = ("%d %s"):format(s.statuses[name], name) end
end
local retried = 0
for i = 1, #all do if all[i].retried then retried = retried + 1 end end
print(("matmul %dx%d on %s (%s)"):format(n, n, tuner.device.id, tuner.device.name))
print(("whole space: %d configurations: %s"):format(#all, table.concat(parts, ", ")))
print(("inputs checked %d times, found changed %d times; %d configurations run twice"):format(
  s.input_checks, s.inputs_changed, retried))
print(("without the overflowing configurations: %d, %d ok; %d got another verdict in the whole space")
  :format(#clean, clean:summary().statuses.ok, differ))
print(("validation (checks included) %.1f ms of a %.1f ms tuning; both tunings %d s"):format(
  s.validation_ms, s.wall_ms, os.time() - t0))
for i = 1, #all do
  if all[i].status == "invalid_output" then
    print(("first invalid_output: %s: %s"):format(key(all[i].config), all[i].error))
    break
  end
end
if s.device_log then print("the device process wrote on stderr:\n" .. s.device_log:sub(1, 2000)) end
assert(differ == 0, "a correct configuration got another verdict in the whole space")
