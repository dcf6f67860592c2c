-- scripts/deps.lua: which files of core/ and bindings/ call each other,
-- from the object files (a .o's undefined symbols resolved, with nm, to
-- the .o that defines them), against the layer map of scripts/layers.lua.
--
--   lua5.4 scripts/deps.lua [OBJDIR]   (OBJDIR: build/obj)
--     prints the groups of files that call each other in a loop (strongly
--     connected components) and the calls from a lower layer up; fails
--     (exit 1) where one is not among the map's allowed exceptions, or a
--     file is in no layer.
--   lua5.4 scripts/deps.lua --folders
--     prints the folders and their files (doc/architecture.md holds
--     the same text).
--
-- A file is named by its base name without .c ("tune", "lk_db"); the
-- map's folder is where it lies (M.misplaced). Required as a module (from a spec)
-- it returns the functions below and runs nothing.
local M = {}

-- Every .c under the source folders, as { name = path } ("tune" = "core/eval/tune.c").
function M.sources(dirs)
  local found = {}
  for _, dir in ipairs(dirs) do
    local p = assert(io.popen("find " .. dir .. " -name '*.c' -type f | LC_ALL=C sort"))
    for path in p:lines() do
      local name = path:match("([^/]+)%.c$")
      if found[name] then
        error("two files named " .. name .. ".c: " .. found[name] .. " and " .. path, 0)
      end
      found[name] = path
    end
    p:close()
  end
  return found
end

-- The graph: graph[a][b] = { symbol, ... } where a's object file uses
-- symbols b's defines. Reads every object with one nm.
function M.graph_from_objects(sources, objdir)
  local objs, owner = {}, {}
  for name, path in pairs(sources) do
    local o = objdir .. "/" .. path:gsub("%.c$", ".o")
    local f = io.open(o, "rb")
    if not f then error(o .. " is missing: build first (make all)", 0) end
    f:close()
    objs[#objs + 1] = o
    owner[o] = name
  end
  table.sort(objs)
  local p = assert(io.popen("nm -P -A " .. table.concat(objs, " ")))
  local defs, uses = {}, {}
  for line in p:lines() do
    -- "build/obj/core/eval/tune.o: kt_tune T 0 10"
    local o, sym, kind = line:match("^(.-%.o):%s+(%S+)%s+(%a)")
    local name = o and owner[o]
    if name then
      if kind == "U" then
        uses[#uses + 1] = { name, sym }
      elseif kind:match("[TDBRCWVG]") then
        defs[sym] = name
      end
    end
  end
  assert(p:close(), "nm failed")
  local graph = {}
  for name in pairs(sources) do graph[name] = {} end
  for _, u in ipairs(uses) do
    local from, to = u[1], defs[u[2]]
    if to and to ~= from then
      local syms = graph[from][to] or {}
      syms[#syms + 1] = u[2]
      graph[from][to] = syms
    end
  end
  return graph
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

-- Strongly connected components of more than one file (Tarjan), each
-- sorted, in order of their first file.
function M.loops(graph)
  local index, low, onstack, stack, n, out = {}, {}, {}, {}, 0, {}
  local function visit(v)
    n = n + 1
    index[v], low[v] = n, n
    stack[#stack + 1] = v
    onstack[v] = true
    for _, w in ipairs(sorted_keys(graph[v] or {})) do
      if graph[w] then
        if not index[w] then
          visit(w)
          low[v] = math.min(low[v], low[w])
        elseif onstack[w] then
          low[v] = math.min(low[v], index[w])
        end
      end
    end
    if low[v] == index[v] then
      local group = {}
      repeat
        local w = table.remove(stack)
        onstack[w] = nil
        group[#group + 1] = w
      until w == v
      if #group > 1 then
        table.sort(group)
        out[#out + 1] = group
      end
    end
  end
  for _, v in ipairs(sorted_keys(graph)) do
    if not index[v] then visit(v) end
  end
  table.sort(out, function(a, b) return a[1] < b[1] end)
  return out
end

-- The map's files by name: { name = { folder =, rank = } }; errors on a
-- file named twice.
function M.placement(map)
  local at = {}
  for rank, layer in ipairs(map.layers) do
    for _, folder in ipairs(layer) do
      for _, name in ipairs(folder.files) do
        if at[name] then
          error("scripts/layers.lua: " .. name .. " is in " .. at[name].folder .. " and "
            .. folder.folder, 0)
        end
        at[name] = { folder = folder.folder, rank = rank }
      end
    end
  end
  return at
end

-- What the graph breaks of the map: { loops = { {files, allowed} },
-- upward = { {from, to, symbols, allowed} }, unplaced = { name },
-- unused = { text }, over = { text } }, and whether all of it is allowed.
-- over names the exceptions beyond the map's limits (at most
-- limits.loops allowed loops, limits.upward allowed upward calls).
function M.check(graph, map)
  local at = M.placement(map)
  local r = { loops = {}, upward = {}, unplaced = {}, unused = {}, over = {} }
  local limits = map.limits or {}
  for _, kind in ipairs({ "loops", "upward" }) do
    local n, most = #(map[kind] or {}), limits[kind]
    if most and n > most then
      r.over[#r.over + 1] = string.format("%d allowed %s, at most %d", n, kind, most)
    end
  end
  for _, name in ipairs(sorted_keys(graph)) do
    if not at[name] then r.unplaced[#r.unplaced + 1] = name end
  end
  local allowed_loop, seen_loop = {}, {}
  for _, l in ipairs(map.loops or {}) do
    local files = {}
    for _, f in ipairs(l.files) do files[#files + 1] = f end
    table.sort(files)
    allowed_loop[table.concat(files, " ")] = l
  end
  local ok = #r.unplaced == 0 and #r.over == 0
  for _, group in ipairs(M.loops(graph)) do
    local key = table.concat(group, " ")
    local allowed = allowed_loop[key] ~= nil
    seen_loop[key] = true
    ok = ok and allowed
    r.loops[#r.loops + 1] = { files = group, allowed = allowed }
  end
  for key in pairs(allowed_loop) do
    if not seen_loop[key] then r.unused[#r.unused + 1] = "loop " .. key end
  end
  local allowed_up, seen_up = {}, {}
  for _, u in ipairs(map.upward or {}) do allowed_up[u.from .. " -> " .. u.to] = u end
  for _, from in ipairs(sorted_keys(graph)) do
    for _, to in ipairs(sorted_keys(graph[from])) do
      if at[from] and at[to] and at[from].rank < at[to].rank then
        local key = from .. " -> " .. to
        local allowed = allowed_up[key] ~= nil
        seen_up[key] = true
        ok = ok and allowed
        local syms = graph[from][to]
        table.sort(syms)
        r.upward[#r.upward + 1] = { from = from, to = to, symbols = syms, allowed = allowed }
      end
    end
  end
  for key in pairs(allowed_up) do
    if not seen_up[key] then r.unused[#r.unused + 1] = "upward " .. key end
  end
  table.sort(r.unused)
  return r, ok
end

-- The files of sources ({ name = path }) that do not lie in the folder
-- the map gives them, as "path (map: folder)", sorted.
function M.misplaced(sources, map)
  local at, out = M.placement(map), {}
  for _, name in ipairs(sorted_keys(sources)) do
    local path = sources[name]
    if at[name] and path:match("^(.*)/[^/]+$") ~= at[name].folder then
      out[#out + 1] = path .. " (map: " .. at[name].folder .. ")"
    end
  end
  return out
end

-- The quoted includes from a lower layer's file to a higher layer's header,
-- as { from = "result.h", to = "task.h", allowed = }, against map.includes;
-- a file's layer is its folder's. Also the allowed ones no longer there.
function M.upward_includes(dirs, map)
  local rank, paths = {}, {}
  for r, layer in ipairs(map.layers) do
    for _, folder in ipairs(layer) do rank[folder.folder] = r end
  end
  for _, dir in ipairs(dirs) do
    local p = assert(io.popen("find " .. dir .. " -name '*.[ch]' -type f | LC_ALL=C sort"))
    for path in p:lines() do paths[#paths + 1] = path end
    p:close()
  end
  local where = {}
  for _, path in ipairs(paths) do where[path:match("[^/]+$")] = path:match("^(.*)/") end
  local allowed, seen, out, unused = {}, {}, {}, {}
  for _, i in ipairs(map.includes or {}) do allowed[i.from .. " -> " .. i.to] = true end
  for _, path in ipairs(paths) do
    local f = assert(io.open(path))
    local from, name = path:match("^(.*)/([^/]+)$")
    for header in f:read("a"):gmatch('#include "([^"]+)"') do
      local to = where[header:match("[^/]+$")]
      if to and rank[from] and rank[to] and rank[from] < rank[to] then
        local key = name .. " -> " .. header:match("[^/]+$")
        seen[key] = true
        out[#out + 1] = { from = name, to = header:match("[^/]+$"), allowed = allowed[key] == true }
      end
    end
    f:close()
  end
  for key in pairs(allowed) do
    if not seen[key] then unused[#unused + 1] = "include " .. key end
  end
  table.sort(unused)
  return out, unused
end

-- The report check() makes, as text.
function M.report(r, map)
  local at = M.placement(map)
  local lines = {}
  local function add(s) lines[#lines + 1] = s end
  local infiles = 0
  for _, l in ipairs(r.loops) do infiles = infiles + #l.files end
  add(string.format("%d loops (%d files), %d upward calls", #r.loops, infiles, #r.upward))
  for _, l in ipairs(r.loops) do
    add((l.allowed and "  allowed loop: " or "  NEW LOOP: ") .. table.concat(l.files, " "))
  end
  for _, u in ipairs(r.upward) do
    add(string.format("  %s %s (%s) -> %s (%s): %s", u.allowed and "allowed up:" or "NEW UPWARD:",
      u.from, at[u.from].folder, u.to, at[u.to].folder, table.concat(u.symbols, " ")))
  end
  for _, name in ipairs(r.unplaced) do
    add("  NOT IN scripts/layers.lua: " .. name .. " (give it a folder)")
  end
  for _, s in ipairs(r.over) do add("  TOO MANY EXCEPTIONS in scripts/layers.lua: " .. s) end
  for _, s in ipairs(r.unused) do
    add("  no longer needed, remove from scripts/layers.lua: " .. s)
  end
  return table.concat(lines, "\n")
end

-- The folders, lowest layer first, as markdown lines.
function M.folders(map)
  local lines = {}
  for rank, layer in ipairs(map.layers) do
    for _, folder in ipairs(layer) do
      local files = {}
      for _, f in ipairs(folder.files) do files[#files + 1] = f end
      table.sort(files)
      lines[#lines + 1] = string.format("- %d `%s/`: %s  \n  %s", rank, folder.folder, folder.what,
        table.concat(files, " "))
    end
  end
  return table.concat(lines, "\n")
end

function M.main(args)
  local map = dofile("scripts/layers.lua")
  if args[1] == "--folders" then
    print(M.folders(map))
    return 0
  end
  local sources = M.sources(map.sources)
  local graph = M.graph_from_objects(sources, args[1] or "build/obj")
  local r, ok = M.check(graph, map)
  print(M.report(r, map))
  local misplaced = M.misplaced(sources, map)
  for _, m in ipairs(misplaced) do print("  NOT WHERE scripts/layers.lua PUTS IT: " .. m) end
  local incs, unused = M.upward_includes(map.sources, map)
  for _, i in ipairs(incs) do
    print(("  %s %s -> %s"):format(i.allowed and "allowed include up:" or "NEW INCLUDE UP:",
      i.from, i.to))
    ok = ok and i.allowed
  end
  for _, u in ipairs(unused) do print("  no longer needed, remove from scripts/layers.lua: " .. u) end
  local arrows = #(map.upward or {}) + #(map.includes or {})
  if map.limits and map.limits.upward and arrows > map.limits.upward then
    print(("  TOO MANY EXCEPTIONS in scripts/layers.lua: %d upward calls and includes, at most %d")
      :format(arrows, map.limits.upward))
    ok = false
  end
  return ok and #misplaced == 0 and #unused == 0 and 0 or 1
end

if not pcall(debug.getlocal, 4, 1) then
  local ok, rc = pcall(M.main, arg)
  if not ok then io.stderr:write("scripts/deps.lua: ", tostring(rc), "\n") end
  os.exit(ok and rc or 2)
end
return M
