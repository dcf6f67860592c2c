-- The options every example takes (ktlua.cli's tuning options): a budget
-- (--count, --seconds), a searcher, a device; and `make demo`'s bounded run.
local shell = require "spec.support.shell"
local files = require "spec.support.files"
local ktlua, run = shell.ktlua, shell.run

-- Each example at a small size, and what its last tuning line says.
local small = {
  ["tune_vectoradd.lua"] = { "--n=4096", "vadd on .-: COUNT of 25 configurations %(random search, stopped: count%)" },
  ["tune_reduction.lua"] = { "--n=8192", "reduce on .-: COUNT of 175 configurations %(random search, stopped: count%)" },
  ["tune_sort.lua"] = { "--n=4096", "radix_sort on .-: COUNT of %d+ configurations %(random search, stopped: count%)" },
  ["tune_particles.lua"] = { "--n=2000", "particles on .-: COUNT of 64 configurations %(random search, stopped: count%)" },
  ["tune_annotated_vadd.lua"] = { "--n=10000", "vadd on .-: COUNT of 32 configurations %(random search, stopped: count%)" },
  ["tune_annotated_matvec.lua"] = { "--rows=300 --cols=37", "matvec on .-: COUNT of 32 configurations %(random search, stopped: count%)" },
  ["tune_annotated_paper.lua"] = { "--n=100", "matvec on .-: COUNT of 288 configurations %(random search, stopped: count%)" },
  ["online_heat.lua"] = { "--n=32 --steps=20", ": COUNT configurations tried online" },
}

local function examples()
  local list = {}
  for name in run("ls examples"):gmatch("[^\n]+") do
    if name:match("%.lua$") then list[#list + 1] = name end
  end
  table.sort(list)
  return list
end

describe("every example", function()
  it("is run here at a small size", function()
    local names = examples()
    assert.is_true(#names >= 5)
    for _, name in ipairs(names) do assert.is_table(small[name], name) end
  end)

  it("lists the tuning options with --help", function()
    for _, name in ipairs(examples()) do
      local out, code = run(ktlua .. " examples/" .. name .. " --help")
      assert.are.equal(0, code, out)
      for _, option in ipairs { "--count=N", "--search=TEXT", "--seconds=N", "--device=TEXT", "--seed=N" } do
        assert.is_truthy(out:find(option, 1, true), name .. ": " .. option .. "\n" .. out)
      end
    end
  end)

  it("tunes with --count, --search, --seed and --device", function()
    for _, name in ipairs(examples()) do
      local args, shown = small[name][1], small[name][2]
      local out, code = run(("%s examples/%s %s --count=3 --search=random --seed=5 --seconds=600 --device=cpu")
        :format(ktlua, name, args))
      assert.are.equal(0, code, name .. "\n" .. out)
      assert.matches((shown:gsub("COUNT", "3")), out, 1, name)
    end
  end)

  it("refuses a budget that is not one, naming the option", function()
    local out, code = run(ktlua .. " examples/tune_vectoradd.lua --count=-1")
    assert.are_not.equal(0, code)
    assert.matches("option %-%-count: expected a whole number >= 0, got %-1", out)
    out, code = run(ktlua .. " examples/tune_sort.lua --count=2.5")
    assert.are_not.equal(0, code)
    assert.matches("option %-%-count: expected a whole number >= 0, got 2%.5", out)
    out, code = run(ktlua .. " examples/tune_particles.lua --seconds=-3")
    assert.are_not.equal(0, code)
    assert.matches("option %-%-seconds: expected a number of seconds >= 0, got %-3", out)
    out, code = run(ktlua .. " examples/tune_reduction.lua --n=64 --search=nonesuch")
    assert.are_not.equal(0, code)
    assert.matches("unknown searcher 'nonesuch'", out)
    -- a step of the online tuning is timed once and written nowhere
    out, code = run(ktlua .. " examples/online_heat.lua --n=32 --steps=4 --output=x.json")
    assert.are_not.equal(0, code)
    assert.matches("%-%-output applies to %-%-offline only", out)
  end)
end)

describe("make demo", function()
  it("tunes the reduction within a budget", function()
    local recipe = files.read("Makefile"):match("\ndemo:[^\n]*\n(.-)\n\n")
    local args = recipe and recipe:match("%$%(B%)/ktlua (examples/[^\n]+)")
    assert.is_string(args, recipe)
    assert.matches("%-%-count=%d+", args)
    local out, code = run(ktlua .. " " .. args)
    assert.are.equal(0, code, out)
    local budget = tonumber(args:match("%-%-count=(%d+)"))
    assert.matches(("reduce on .-: %d of 175 configurations %%(forest search, stopped: count%%)"):format(budget), out)
  end)
end)
