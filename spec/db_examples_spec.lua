-- doc/database.md's worked examples (issue 42, item 5) do what they say:
-- the library's C function selects from the header the Lua example exports,
-- the new GPU is answered from the colleague's RTX 3090 and tries its best
-- first, and the CI job's shell script says and exits as it claims after a
-- driver upgrade (made here by storing an older driver and a time no
-- measurement can beat), where nothing is of the GPU and where a T1 file is
-- gone. (docs_spec runs the Lua snippets too, without looking.)
local kt = require "ktlua"
local shell = require "spec.support.shell"
local files = require "spec.support.files"
local sqlite_files = require "spec.support.sqlite_files"

local sqlite, remove = sqlite_files.sqlite, sqlite_files.remove

local page = files.read("doc/database.md")

-- The first block of the language after the heading.
local function snippet(heading, lang)
  local at = assert(page:find("\n### " .. heading .. "\n", 1, true), heading)
  local code = page:match("```" .. lang .. "\n(.-)```", at)
  assert(code, heading .. ": no " .. lang)
  return code
end

-- Runs a Lua snippet; what it printed, a line per call, and the names os.tmpname gave it.
local function run(code)
  local printed, names = {}, {}
  local function tmpname()
    names[#names + 1] = files.tmpname("")
    return names[#names]
  end
  local env = setmetatable({
    print = function(...)
      local t = table.pack(...)
      for i = 1, t.n do t[i] = tostring(t[i]) end
      printed[#printed + 1] = table.concat(t, "\t")
    end,
    os = setmetatable({ tmpname = tmpname }, { __index = os }),
  }, { __index = _G })
  assert(load(code, "=example", "t", env))()
  return printed, names
end

describe("doc/database.md's worked examples", function()
  local device = kt.tuner().device

  it("a library shipped with a header: the C function selects the nearest size's best", function()
    local _, names = run(snippet("A library shipped with a header", "lua"))
    local db_path, header = names[1], names[2]
    local dir = files.tmpname("")
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    assert(os.execute(("cp %s %s/scale_tuned.h"):format(header, dir)))
    local f = assert(io.open(dir .. "/lib.c", "w"))
    f:write(snippet("A library shipped with a header", "c"), [[
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  (void)argc;
  printf("%d\n", scale_work_group(argv[1], atof(argv[2])));
  return 0;
}
]])
    f:close()
    local out, code = shell.run(("cc -std=c11 -Wall -Wextra -Werror -o %s/lib %s/lib.c -lm"):format(dir, dir))
    assert.are.equal(0, code, out)
    local db = kt.db(db_path, { readonly = true })
    for _, n in ipairs({ 3000, 1 << 20, 1 << 24 }) do
      local want = db:best{ kernel = "scale", device = device.name, size = { n = n } }
      assert.are.equal(want.config.WG .. "\n", shell.must(("%s/lib %q %d"):format(dir, device.name, n)))
    end
    -- another device's: the nearest of any device
    local want = db:best{ kernel = "scale", device = device.name, size = { n = 4096 } }
    assert.are.equal(want.config.WG .. "\n", shell.must(("%s/lib 'Another GPU' 4096"):format(dir)))
    db:close()
    os.execute("rm -rf " .. dir)
    remove(db_path)
    os.remove(header)
  end)

  it("a new GPU arriving: answered from the RTX 3090's cache, whose best it tries first", function()
    local printed, names = run(snippet("A new GPU arriving", "lua"))
    assert.are.same({ "alike\tNVIDIA GeForce RTX 3090\t64", "64" }, printed)
    local db = kt.db(names[2], { readonly = true })
    local mine = db:list{ kernel = "scale", device = device.name }
    assert.are.same({ x = 65536 }, mine[1].size) -- the new GPU's own, stored
    db:close()
    os.remove(names[1])
    remove(names[2])
  end)

  describe("a driver upgrade in CI", function()
    local dir, script
    before_each(function()
      dir = files.tmpname("")
      os.remove(dir)
      assert(os.execute("mkdir -p " .. dir))
      script = dir .. "/ci.sh"
      local f = assert(io.open(script, "w"))
      f:write(snippet("A driver upgrade in CI", "sh"))
      f:close()
      shell.must(("%s run spec/fixtures/t1/vadd_T1.json --db=%s/tuned.db --count=2 > /dev/null")
        :format(shell.ktlua, dir))
    end)
    after_each(function() os.execute("rm -rf " .. dir) end)

    -- The job as CI runs it, ktlua on the PATH.
    local function job()
      local bin = shell.must("dirname $(realpath " .. shell.ktlua .. ")"):gsub("\n$", "")
      return shell.run(("cd %s && PATH=%s:$PATH sh ci.sh"):format(dir, bin))
    end

    it("passes where nothing changed", function()
      local out, code = job()
      assert.are.equal(0, code)
      assert.matches("\ntuned.db: nothing regressed\n$", "\n" .. out)
    end)

    it("fails after an upgrade that made the stored best slower, having tuned it again", function()
      sqlite(dir .. "/tuned.db", "UPDATE tuned SET driver = '0.0-old', time_ms = 1e-9")
      local out, code = job()
      assert.are.equal(1, code)
      assert.matches("saxpy on .*: slower %(.* ms, was 1e%-09 ms; driver 0%.0%-old %-> .*%); retuned: ", out)
      assert.matches("\ntuned.db: regressed, tuned again above: ship it\n$", out)
      local db = kt.db(dir .. "/tuned.db", { readonly = true })
      local e = db:best{ kernel = "saxpy", device = device.name, size = { x = 4096 } }
      assert.are.equal(device.driver_version, e.driver)
      assert.is_true(e.time_ms > 1e-9)
      db:close()
    end)

    it("passes, saying so, where nothing is tuned for the GPU; fails where a T1 file is gone", function()
      sqlite(dir .. "/tuned.db", "UPDATE tuned SET device = 'NVIDIA H100 80GB HBM3'")
      local out, code = job()
      assert.are.equal(0, code)
      assert.matches("\ntuned.db: nothing tuned for this GPU\n$", out)
      sqlite(dir .. "/tuned.db", "UPDATE tuned SET device = '" .. device.name:gsub("'", "''")
        .. "', origin = 't1:/nonexistent/gone_T1.json'")
      out, code = job()
      assert.are.equal(1, code)
      assert.matches("could not be made again from /nonexistent/gone_T1%.json", out)
      assert.matches("\ntuned.db: not rechecked %(above%)\n$", out)
    end)
  end)
end)
