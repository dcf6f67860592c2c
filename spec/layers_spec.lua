-- The layer map of scripts/layers.lua holds: no new group of files that
-- call each other in a loop, no new call from a lower layer up (see
-- scripts/deps.lua, which reads the build's object files).
local deps = require "scripts.deps"

describe("scripts/deps.lua", function()
  local map = dofile("scripts/layers.lua")

  it("finds no loop or upward call beyond the map's allowed ones", function()
    local graph = deps.graph_from_objects(deps.sources(map.sources), "build/obj")
    local r, ok = deps.check(graph, map)
    assert(ok, deps.report(r, map))
    assert.are.same({}, r.unplaced)
  end)

  it("finds no include from a lower layer up beyond the map's allowed ones", function()
    local incs, unused = deps.upward_includes(map.sources, map)
    for _, i in ipairs(incs) do
      assert(i.allowed, "new upward include: " .. i.from .. " -> " .. i.to)
    end
    assert.are.same({}, unused)
    assert(#map.upward + #map.includes <= map.limits.upward, "more upward arrows than allowed")
  end)

  it("allows no upward call, and no include of core/multi below it (issue 44)", function()
    assert.are.same({}, map.upward)
    for _, i in ipairs(map.includes) do
      assert.is_nil(i.to:match("^mpi") or i.to:match("^fleet"), i.from .. " -> " .. i.to)
    end
  end)

  it("finds every file in the folder the map gives it", function()
    assert.are.same({}, deps.misplaced(deps.sources(map.sources), map))
    local small = { layers = { { { folder = "core/low", what = "", files = { "a" } } } } }
    assert.are.same({ "core/a.c (map: core/low)" },
      deps.misplaced({ a = "core/a.c", b = "core/b.c" }, small))
  end)

  it("reports loops, upward calls, files in no layer and exceptions no longer needed", function()
    local small = {
      layers = { { { folder = "low", what = "", files = { "a", "b" } } },
                 { { folder = "high", what = "", files = { "c", "d" } } } },
      loops = { { files = { "d", "c" }, why = "test" }, { files = { "a", "x" }, why = "gone" } },
      upward = { { from = "a", to = "c", why = "test" }, { from = "b", to = "d", why = "gone" } },
    }
    local graph = {
      a = { b = { "f_b" }, c = { "f_c" } }, b = { a = { "f_a" } },   -- a <-> b: new
      c = { d = { "f_d" } }, d = { c = { "f_c" } },                  -- c <-> d: allowed
      e = { b = { "f_b" }, d = { "f_d" } },                          -- e: in no layer
    }
    local r, ok = deps.check(graph, small)
    assert.is_false(ok)
    assert.are.same({ { files = { "a", "b" }, allowed = false },
                      { files = { "c", "d" }, allowed = true } }, r.loops)
    assert.are.same({ { from = "a", to = "c", symbols = { "f_c" }, allowed = true } }, r.upward)
    assert.are.same({ "e" }, r.unplaced)
    assert.are.same({ "loop a x", "upward b -> d" }, r.unused)
    graph.b.a, graph.b.c = nil, { "f_c" }                            -- b -> c: new upward
    r, ok = deps.check(graph, small)
    assert.is_false(ok)
    assert.are.equal(1, #r.loops)
    assert.are.same({ from = "b", to = "c", symbols = { "f_c" }, allowed = false }, r.upward[2])
    assert.matches("NEW UPWARD: b (low) -> c (high): f_c", deps.report(r, small), 1, true)
  end)

  it("refuses more allowed exceptions than the map's limits", function()
    local small = {
      layers = { { { folder = "low", what = "", files = { "a", "b" } } } },
      loops = { { files = { "a", "b" }, why = "test" } },
      limits = { loops = 0, upward = 6 },
    }
    local r, ok = deps.check({ a = { b = { "f_b" } }, b = { a = { "f_a" } } }, small)
    assert.is_false(ok)
    assert.are.same({ "1 allowed loops, at most 0" }, r.over)
    assert.matches("TOO MANY EXCEPTIONS in scripts/layers.lua: 1 allowed loops, at most 0",
      deps.report(r, small), 1, true)
    small.limits.loops = 1
    r, ok = deps.check({ a = { b = { "f_b" } }, b = { a = { "f_a" } } }, small)
    assert.is_true(ok)
  end)

  it("refuses a file placed in two folders", function()
    local twice = { layers = { { { folder = "one", what = "", files = { "a" } } },
                               { { folder = "two", what = "", files = { "a" } } } } }
    assert.has_error(function() deps.check({}, twice) end, "scripts/layers.lua: a is in one and two")
  end)

  it("agrees with doc/architecture.md's list of folders", function()
    local f = assert(io.open("doc/architecture.md"))
    local doc = f:read("a")
    f:close()
    assert(doc:find(deps.folders(map), 1, true),
      "doc/architecture.md: the list of folders differs from `lua5.4 scripts/deps.lua --folders`")
  end)
end)
