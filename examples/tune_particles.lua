-- A composition with a host step in Lua between two kernels: `emit` writes
-- particles as an array of structures (a kt.struct), the launcher reads
-- them back, reshapes them into a structure of arrays, writes those, and
-- `energy` reads them. Tuned over both kernels' work-group sizes and the
-- energy kernel's vector width; host time is part of the objective.
--   ktlua examples/tune_particles.lua [--n=N] [--device=ID] [--repeats=N] [--progress]
--   [--search=NAME] [--count=N] [--seconds=S] [--seed=N] [--early_stop] [--output=FILE]
local kt = require "ktlua"
local opt = require("ktlua.cli").tuning(arg, { n = 1 << 14 },
  "examples/tune_particles.lua: AoS -> SoA between two kernels")
local n = opt.n

local particle = kt.struct("particle", { { "pos", "float", 3 }, { "mass", "float" } })
local aos = kt.array(particle, n)
local x, y, z, m = kt.array("float", n), kt.array("float", n), kt.array("float", n), kt.array("float", n)
local e = kt.array("float", n)

local tuner = kt.tuner(opt.device)
local file = tuner.device.backend == "cuda" and "kernels/particles.cu" or "kernels/particles.cl"
-- Any n: the global sizes are rounded up to whole work-groups, and the
-- kernels leave out the work-items past the end.
local emit = tuner:kernel{ file = file, prelude = particle:declaration(), name = "emit",
                           global = n, group = 1, round_global = true,
                           args = { aos:output(), kt.uint(n) } }
local energy = tuner:kernel{ file = file, prelude = particle:declaration(), name = "energy",
                             global = n, group = 1, round_global = true,
                             args = { x:input(), y:input(), z:input(), m:input(), e:output(), kt.uint(n) } }

local steps = tuner:composition{ name = "particles", kernels = { emit, energy } }
steps:param("WG_EMIT", { 32, 64, 128, 256 })
steps:param("WG", { 32, 64, 128, 256 })
steps:param("VEC", { 1, 2, 4, 8 })
steps:constraint({ "VEC" }, function(vec) return n % vec == 0 end) -- whole vectors
steps:modifier(emit, "group_x", "mul", "WG_EMIT")
steps:modifier(energy, "group_x", "mul", "WG")
steps:modifier(energy, "global_x", "div", "VEC")

steps:launcher(function(run)
  run:launch(emit)
  run:read(aos)                         -- waits for emit, then copies to the host
  for i = 0, n - 1 do                   -- the host step: AoS -> SoA
    local p = aos[i]
    x[i], y[i], z[i], m[i] = p.pos[1], p.pos[2], p.pos[3], p.mass
  end
  for _, a in ipairs({ x, y, z, m }) do run:write(a) end
  run:launch(energy)
end)

steps:reference(e, function(ref)
  for i = 0, n - 1 do
    local px, py, pz, mass = i * 0.5, (i % 7) * 1.0, (i % 13) * 0.25, 1 + i % 5
    ref[i] = 0.5 * mass * (px * px + py * py + pz * pz)
  end
end, { method = "relative", tolerance = 1e-5 })

print(("tuning two kernels and a host step over %d particles on %s: %d configurations"):format(
  n, tuner.device.name, steps:space():count()))
opt.tune.objective = "kernel+host"
local results = tuner:tune(steps, opt.tune)
results:print()
local best = results:best()
assert(best, "no configuration of the particle steps ran correctly")
print(("kernels and host step of the best: %.4f ms (median of %d runs); host time of all %d runs %.3f ms"):format(
  best.time_ms, #best.samples_ms, #best.samples_ms + 1, best.overheads_ms.launcher))
