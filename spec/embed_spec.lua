-- ktlua's core embedded in a C program (examples/embed/tune_vadd.c), built
-- as ktlua.pc says (the headers as <ktlua/...>, libktlua.a and its
-- libraries): kt_devices() and then an isolated tuner, from plain C.
local kt = require "ktlua"
local shell = require "spec.support.shell"
local files = require "spec.support.files"
local run = shell.run

-- A hang (a device process forked after the driver started its threads)
-- is a failure, not a stuck suite.
local LIMIT = "timeout 300 "

describe("a C program that embeds the core", function()
  local tmp, prog, workers

  setup(function()
    tmp = files.tmpname()
    -- the headers of core/'s folders side by side, as make install puts them
    assert(os.execute("mkdir -p " .. tmp .. "/include/ktlua"))
    local root = run("pwd"):gsub("\n$", "")
    assert(os.execute(("ln -s %s/core/*/*.h %s/include/ktlua/"):format(root, tmp)))
    local libs = files.read("build/ktlua.pc"):match("\nLibs: %-L%${libdir} %-lktlua ([^\n]*)")
    assert.is_string(libs)
    prog = tmp .. "/tune_vadd"
    local out, code = run(("cc -std=c11 -Wall -Wextra -Werror -I%s/include -o %s examples/embed/tune_vadd.c "
      .. "build/libktlua.a %s"):format(tmp, prog, libs))
    assert.are.equal(0, code, out)
    workers = tmp .. "/embed_workers"
    out, code = run(("cc -std=c11 -Wall -Wextra -Werror -I%s/include -o %s "
      .. "spec/support/embed_workers.c build/libktlua.a %s"):format(tmp, workers, libs))
    assert.are.equal(0, code, out)
  end)

  teardown(function()
    if tmp then os.execute("rm -rf " .. tmp) end
  end)

  it("tunes, keeps the best of each size in kt.db, and runs the nearest at run time", function()
    local db = tmp .. "/kt.db"
    local out, code = run(("%s%s %s tune cpu"):format(LIMIT, prog, db))
    assert.are.equal(0, code, out)
    assert.matches("tuning vadd on opencl:%d+:%d+", out)
    assert.matches('n = 4096: best {"WG":%d+}', out)
    assert.matches('n = 262144: best {"WG":%d+}', out)
    local rows = kt.db(db):list { kernel = "vadd" }
    assert.are.equal(2, #rows)
    local stored = {}
    for _, row in ipairs(rows) do stored[row.size.n] = row.config.WG end
    assert.is_number(stored[4096])
    assert.is_number(stored[262144])

    out, code = run(("%s%s %s run 100000 cpu"):format(LIMIT, prog, db))
    assert.are.equal(0, code, out)
    assert.matches(('n = 100000: {"WG":%d} from the size {"n":262144} (nearest), ok'):format(stored[262144]),
      out, 1, true)
    out, code = run(("%s%s %s run 4096 cpu"):format(LIMIT, prog, db))
    assert.are.equal(0, code, out)
    assert.matches(('n = 4096: {"WG":%d} from the size {"n":4096} (exact), ok'):format(stored[4096]),
      out, 1, true)
  end)

  it("says so when nothing is stored for the device", function()
    local out, code = run(("%s%s %s/empty.db run 5000 cpu"):format(LIMIT, prog, tmp))
    assert.are.equal(1, code, out)
    assert.matches("tune_vadd: no configuration of vadd on .- is stored", out)
  end)

  it("tunes with compiler processes: fresh images of the ktlua executable, not forks of it",
     function()
    -- The program is no ktlua and has none beside it: KTLUA_EXE names the one to run.
    local exe = run("readlink -f build/ktlua"):gsub("\n$", "")
    local out, code = run(("%senv KTLUA_EXE=%s %s cpu 2"):format(LIMIT, exe, workers))
    assert.are.equal(0, code, out)
    -- one compile thread: the first process compiled everything, the second nothing
    assert.are.equal("ok\nok\nok\ncompile workers: 1\n", out:match("^(.-)worker: "))
    local seen = {}
    for line in out:gmatch("worker: [^\n]*") do seen[#seen + 1] = line end
    table.sort(seen)
    assert.are.same({ ("worker: %s --compile-worker drivers=no"):format(exe),
                      ("worker: %s --compile-worker drivers=yes"):format(exe) }, seen)
  end)

  it("compiles in its device process, and says why, without a ktlua executable to run", function()
    local out, code = run(("%senv KTLUA_EXE=%s/none %s cpu 2"):format(LIMIT, tmp, workers))
    assert.are.equal(0, code, out)
    assert.are.equal(("ok\nok\nok\ncompile workers: 0\ncompile workers: KTLUA_EXE=%s/none is "
      .. "no executable file (an absolute path); compiled in the device process instead\n")
      :format(tmp), out)
  end)
end)
