-- ktlua.cache_cli: `ktlua cache info` and `ktlua cache clear`, the program
-- cache on disk that tunings load compiled programs from (kt.program_cache).
local M = {}

local usage = [[
usage: ktlua cache info    where the program cache is, its entries and bytes
       ktlua cache clear   removes every entry
The folder: KTLUA_CACHE, else $XDG_CACHE_HOME/ktlua, else ~/.cache/ktlua;
KTLUA_CACHE=off turns the cache off; KTLUA_CACHE_SIZE bounds it (default 1G).
]]

local function size_text(n)
  local units, i = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" }, 1
  while n >= 1024 and i < #units do n, i = n / 1024, i + 1 end
  return i == 1 and ("%d bytes"):format(n) or ("%.1f %s"):format(n, units[i])
end

function M.main(args)
  local kt = require("ktlua")
  local what = args[1]
  if what == "-h" or what == "--help" then io.write(usage) return end
  if #args ~= 1 or (what ~= "info" and what ~= "clear") then
    error(("ktlua cache: expected info or clear, got %s\n%s"):format(
      what and ("'" .. table.concat(args, " ") .. "'") or "nothing", usage), 0)
  end
  local info, why = kt.program_cache()
  if not info then
    print(why)
    return
  end
  if what == "clear" then
    local removed = kt.program_cache_clear()
    print(("removed %d entr%s from %s"):format(removed, removed == 1 and "y" or "ies", info.place))
    return
  end
  print(("place:   %s"):format(info.place))
  print(("entries: %d"):format(info.entries))
  print(("size:    %s (%d bytes) of at most %s"):format(size_text(info.bytes), info.bytes,
                                                        size_text(info.limit)))
end

return M
