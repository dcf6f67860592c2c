-- Peers' recordings into the database (issue 42, item 4): results read from
-- a Kernel Tuner cache, KTT's JSON or T4 are stored with the kernel, device,
-- backend and size the file says, or those given, by db:store and by
-- `ktlua db store`, so that a team's existing tuning data seeds transfer.
local kt = require "ktlua"
local shell = require "spec.support.shell"
local files = require "spec.support.files"
local sqlite_files = require "spec.support.sqlite_files"

local remove = sqlite_files.remove
local CACHE = "spec/fixtures/small_cache.json" -- "Test GPU", small_kernel, problem_size [1024]
local KTT = "spec/fixtures/ktt_two.json" -- CUDA, an RTX 2080 Ti, pnpoly: BLOCK 128 (0.025 ms), 64
local ktlua = shell.ktlua

-- The cache's configurations, fastest first.
local function ranked(path)
  local ok = {}
  for _, r in ipairs(kt.load(path):list()) do
    if r.status == "ok" then ok[#ok + 1] = r end
  end
  table.sort(ok, function(a, b) return a.time_ms < b.time_ms end)
  return ok
end

describe("results read from a file", function()
  it("say the problem size and backend the file says, nil where it says none", function()
    local cache = kt.load(CACHE)
    assert.are.same({ { 1024 }, "Test GPU", "small_kernel" }, { cache.problem_size, cache.device, cache.task })
    assert.is_nil(cache.backend) -- a Kernel Tuner cache does not say
    local ktt = kt.load(KTT)
    assert.are.same({ "cuda", "NVIDIA GeForce RTX 2080 Ti", "pnpoly" }, { ktt.backend, ktt.device, ktt.task })
    assert.is_nil(ktt.problem_size)
  end)
end)

describe("db:store of a peer's recording", function()
  it("takes the kernel, device and size from a Kernel Tuner cache, the backend given", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    db:store(kt.load(CACHE), { backend = "cuda", top = 3 })
    local list = db:list()
    local best = ranked(CACHE)
    assert.are.equal(3, #list)
    for i, e in ipairs(list) do
      assert.are.same({ "small_kernel", "Test GPU", "cuda", { x = 1024 }, i, best[i].config, "" },
        { e.kernel, e.device, e.backend, e.size, e.rank, e.config, e.source })
      assert.near(best[i].time_ms, e.time_ms, 1e-12)
    end
    -- given, they replace the file's
    db:store(kt.load(CACHE), { backend = "opencl", device = "AMD Radeon RX 7900 XTX", size = { n = 8 }, top = 1 })
    local e = db:best{ kernel = "small_kernel", device = "AMD Radeon RX 7900 XTX", size = { n = 8 } }
    assert.are.same({ "opencl", best[1].config }, { e.backend, e.config })
    db:close()
    remove(path)
  end)

  it("takes the backend from KTT's JSON, and says what is missing", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local ok, err = pcall(db.store, db, kt.load(KTT))
    assert.is_false(ok)
    assert.matches("db:store options.size: the results do not say their problem size %(a Kernel Tuner "
      .. "cache's problem_size%): give it, size = {n = 4096}", err)
    ok, err = pcall(db.store, db, kt.load(CACHE), {})
    assert.is_false(ok)
    assert.matches('db:store: the results do not say on what backend they are of .*backend = "cuda" or "opencl"', err)
    db:store(kt.load(KTT), { size = { n = 20000000 } })
    local e = db:best{ kernel = "pnpoly", device = "NVIDIA GeForce RTX 2080 Ti", size = { n = 20000000 } }
    assert.are.same({ "cuda", 128, 0.025 }, { e.backend, e.config.BLOCK, e.time_ms })
    db:close()
    remove(path)
  end)

  it("seeds transfer: a device the database never saw is answered from the peer's", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    db:store(kt.load(KTT), { size = { n = 20000000 } })
    local e = db:best{ kernel = "pnpoly", device = "NVIDIA GeForce RTX 3090", size = { n = 20000000 },
      nearest = true }
    assert.are.same({ "alike", "NVIDIA GeForce RTX 2080 Ti", 128 }, { e.match, e.device, e.config.BLOCK })
    db:close()
    remove(path)
  end)
end)

describe("ktlua db store", function()
  it("stores each file's best, saying what it stored, and names what a file lacks", function()
    local path = files.tmpname(".db")
    local t4 = files.tmpname(".json")
    kt.load(CACHE):write(t4, "t4")
    local out, code = shell.run(("%s db store %s %s %s --top=2"):format(ktlua, path, KTT, CACHE))
    assert.are.equal(1, code)
    assert.matches(KTT:gsub("%p", "%%%0") .. ": not stored: " .. KTT:gsub("%p", "%%%0")
      .. " does not say its problem size: give it, %-%-size=n=4096\n", out)
    assert.matches(CACHE:gsub("%p", "%%%0") .. ": not stored: .* does not say its backend: give it, "
      .. "%-%-backend=cuda or %-%-backend=opencl\n", out)
    assert.matches("ktlua db store: 2 of 2 files not stored %(above%)", out)
    out = shell.must(("%s db store %s %s --backend=cuda --top=2"):format(ktlua, path, CACHE))
    assert.are.equal(CACHE .. ": stored the best 2 of small_kernel on Test GPU (cuda) {x=1024}\n", out)
    out = shell.must(("%s db store %s %s --size=n=20000000"):format(ktlua, path, KTT))
    assert.are.equal(KTT .. ": stored the best 2 of pnpoly on NVIDIA GeForce RTX 2080 Ti (cuda) {n=20000000}\n", out)
    out = shell.must(("%s db store %s %s --backend=opencl --device='My GPU' --kernel=small --size=x=4096,y=2")
      :format(ktlua, path, t4))
    assert.are.equal(t4 .. ": stored the best 10 of small on My GPU (opencl) {x=4096,y=2}\n", out)
    local db = kt.db(path, { readonly = true })
    local e = db:best{ kernel = "small", device = "My GPU", size = { x = 4096, y = 2 } }
    assert.are.same({ ranked(CACHE)[1].config, "file:" .. t4 }, { e.config, e.origin })
    db:close()
    out, code = shell.run(("%s db store %s"):format(ktlua, path))
    assert.are.equal(1, code)
    assert.matches("ktlua db store: no results file given", out)
    out, code = shell.run(("%s db store %s %s --size=n"):format(ktlua, path, KTT))
    assert.are.equal(1, code)
    assert.matches("ktlua db store: %-%-size: 'n' is no name=number", out)
    os.remove(t4)
    remove(path)
  end)

  it("is in ktlua --help, ktlua db --help and the man page, as is recheck's exit status", function()
    local help = shell.must(ktlua .. " --help")
    assert.matches("ktlua db store DB FILE%.%.%. %[%-%-kernel=NAME%] %[%-%-device=NAME%] %[%-%-backend=B%]", help)
    assert.matches("exit 2: something regressed, 3: nothing is of the device, 4: an entry's", help)
    assert.matches("ktlua db store DB FILE%.%.%.", shell.must(ktlua .. " db --help"))
    assert.matches("usage: ktlua db store DB FILE%.%.%.", shell.must(ktlua .. " db store --help"))
    local man = files.read("doc/ktlua.1")
    assert.truthy(man:find([[.B db store \fIdb\fR \fIfile\fR...]], 1, true))
    assert.truthy(man:find("Exit status: 0 nothing regressed; 2 an entry is slower or invalid; 3 the database",
      1, true))
  end)
end)
