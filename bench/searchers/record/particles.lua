-- bench/searchers/record/particles.lua: the space of record/particles.cu, a
-- particle push of n particles (2^24, 512 MiB; 2^16 for a CPU) for 4 time
-- steps, after the idea of examples/kernels/particles.*, one source for CUDA
-- and OpenCL: block_size_x 32-1024 (6 values), work_per_thread 1-8 (4),
-- contiguous (only with more than one), layout (structures, arrays, or
-- structures of 32 particles' arrays: three arrays, one a layout, of random
-- particles), aos_load (structures read by floats, by float4, or staged in
-- shared memory: only with layout 0), steps_per_launch 1, 2, 4 (4 /
-- steps_per_launch launches, a launcher: every configuration moves the
-- particles 4 steps): 630 configurations. Staging over 48 KiB of shared
-- memory does not compile through CUDA: those stay in the space as failed.
-- opt.layout (0-2) keeps one layout; with it and opt.check, that layout's
-- particles are checked against Lua's (relative 1e-4).
local kt = require "ktlua"
local lib = require "record.lib"

return {particles = function(tuner, opt)
  local n, steps, dt = lib.size(opt, 1 << 24, 1 << 16), 4, 0.01
  local function at(layout, i, f)
    return layout == 0 and 8 * i + f or layout == 1 and f * n + i or (i // 32) * 256 + f * 32 + i % 32
  end
  local arrays = {} -- every field of every particle in [1, 2), each layout's its own
  for layout = 0, 2 do arrays[layout] = kt.array("float", 8 * n):random(21 + layout, 1, 2) end
  local k = tuner:kernel{file = lib.here .. "/particles.cu", prelude = lib.portable .. ("#define nparticles %d\n"):format(n),
    name = "particles", global = n, group = 1,
    args = {arrays[0]:inout(), arrays[1]:inout(), arrays[2]:inout(), kt.float(dt)}}
  k:param("block_size_x", {32, 64, 128, 256, 512, 1024}, {group_x = "mul"})
  k:param("work_per_thread", {1, 2, 4, 8}, {global_x = "div"})
  k:param("contiguous", {0, 1})
  k:param("layout", opt.layout and {opt.layout} or {0, 1, 2})
  k:param("aos_load", {0, 1, 2})
  k:param("steps_per_launch", {1, 2, 4})
  k:constraint({"work_per_thread", "contiguous"}, function(w, c) return w > 1 or c == 0 end)
  k:constraint({"layout", "aos_load"}, function(l, a) return l == 0 or a == 0 end)
  k:launcher(function(run, cfg)
    for _ = 1, steps // cfg.steps_per_launch do run:launch(k) end
  end)
  if opt.check and opt.layout then
    local a = arrays[opt.layout]
    k:reference(a, function(ref)
      ref:copy_from(a)
      for i = 0, n - 1 do
        local function field(f) return a[at(opt.layout, i, f)] end
        local x, y, z, vx, vy, vz, m = field(0), field(1), field(2), field(3), field(4), field(5), field(6)
        local drag = 0.1 / m
        for _ = 1, steps do
          vx, vy, vz = vx - dt * drag * vx, vy - dt * drag * vy, vz - dt * (9.81 + drag * vz)
          x, y, z = x + dt * vx, y + dt * vy, z + dt * vz
        end
        for f, v in ipairs{x, y, z, vx, vy, vz} do ref[at(opt.layout, i, f - 1)] = v end
      end
    end, {method = "close", atol = 1e-5, rtol = 1e-4})
  end
  return k, {n}
end}
