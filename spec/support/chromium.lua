-- Pages rendered by headless Chromium, and the colours found in the
-- screenshot (report_spec, live_spec).
local files = require "spec.support.files"
local shell = require "spec.support.shell"

local chromium = { path = "/usr/bin/chromium" }

function chromium.installed() return files.exists(chromium.path) end

-- A screenshot of the page, width x height pixels: a table whose find(r,
-- g, b) gives how many pixels have exactly that colour, the first row
-- holding one, and the leftmost and rightmost column.
function chromium.screenshot(page, width, height)
  local dir = files.tmpname("-chromium")
  local shot = dir .. "/shot.png"
  local flags = "--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run "
    .. "--user-data-dir=" .. dir .. (" --window-size=%d,%d "):format(width, height)
  local out, code = shell.run("mkdir -p " .. dir .. " && timeout 120 " .. chromium.path .. " "
    .. flags .. "--screenshot=" .. shot .. " file://" .. page)
  assert(code == 0, out)
  local ppm = dir .. "/shot.ppm"
  out, code = shell.run("pngtopnm " .. shot .. " > " .. ppm)
  assert(code == 0, out)
  local image = files.read(ppm)
  shell.run("rm -rf " .. dir)
  -- P6: width height maxval, then RGB bytes
  local w, h, header = image:match("^P6%s+(%d+)%s+(%d+)%s+255%s()")
  w, h = tonumber(w), tonumber(h)
  local shot_of = { width = w, height = h }
  function shot_of.find(r, g, b)
    local needle, at, n, top, left, right = string.char(r, g, b), header, 0, nil, w, 0
    while true do
      local i = image:find(needle, at, true)
      if not i then break end
      if (i - header) % 3 == 0 then
        local pixel = (i - header) // 3
        local x = pixel % w
        n, top, left, right = n + 1, top or pixel // w, math.min(left, x), math.max(right, x)
        at = i + 3
      else
        at = i + 1
      end
    end
    return n, top, left, right
  end
  return shot_of
end

return chromium
