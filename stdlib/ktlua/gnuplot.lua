-- ktlua.gnuplot: figures drawn by gnuplot, as SVG text or PNG files.
--
--   local svgs = require("ktlua.gnuplot").draw({
--     { name = "times", width = 640, height = 360,
--       data = { points = { "1 0.5", "2 0.25" } },   -- rows of the datablock $points
--       commands = { "plot $points using 1:2 with lines notitle" } },
--   }, { timeout = 60 })                             -- svgs.times: "<svg ...>...</svg>"
--
-- gnuplot runs once for all the figures, as a program of its own with no
-- shell (ktlua.spawn), reading the script from a file on its standard
-- input, within a time limit (timeout seconds, default 60). The data goes
-- in datablocks of the script, so nothing in it is ever a command; the
-- commands are the caller's own, never text from a results file (labels
-- come from the data: ktlua.gnuplot.label and ktlua.gnuplot.text make one
-- safe). KTLUA_GNUPLOT
-- names another gnuplot program than the one found in PATH.
local gnuplot = {}

local spawn = require("ktlua.spawn")

local function program() return os.getenv("KTLUA_GNUPLOT") or "gnuplot" end

-- A text for a datablock's row, quoted: at most 24 printable characters,
-- with no quote or backslash (what a label needs to show a value).
function gnuplot.label(text)
  text = tostring(text):gsub("[^%w%p ]", "?"):gsub("[\"\\]", "'")
  if #text > 24 then text = text:sub(1, 21) .. "..." end
  return '"' .. text .. '"'
end

-- A row of a datablock that a command shows as text (set ylabel $name[1]):
-- at most 40 printable characters, never the datablock's end. The text is
-- data, so it may come from a results file.
function gnuplot.text(text)
  text = tostring(text):gsub("[^%w%p ]", "?")
  if #text > 40 then text = text:sub(1, 37) .. "..." end
  if text:match("^EOD") then text = " " .. text end
  return text
end

-- gnuplot's own quoting of a path; ours come from os.tmpname or the
-- caller, and a path it cannot quote is refused rather than guessed at.
local function quoted_path(path)
  if path:find("[%c'\\]") then
    error(("ktlua.gnuplot: cannot hand gnuplot the path %q (a quote, backslash or control "
      .. "character)"):format(path), 0)
  end
  return "'" .. path .. "'"
end

local function terminal(kind, fig)
  local size = ("size %d,%d"):format(fig.width or 640, fig.height or 360)
  if kind == "png" then return "set terminal pngcairo " .. size .. " font 'sans,10' noenhanced" end
  return "set terminal svg " .. size .. " font 'sans,11' noenhanced background '#ffffff'"
end

local function script(figures, kind, outputs)
  local lines = {}
  for _, fig in ipairs(figures) do
    lines[#lines + 1] = "reset"
    lines[#lines + 1] = terminal(kind, fig)
    lines[#lines + 1] = "set output " .. quoted_path(outputs[fig.name])
    local names = {}
    for name in pairs(fig.data or {}) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      assert(name:match("^[%a_][%w_]*$"), "a datablock's name must be an identifier")
      lines[#lines + 1] = "$" .. name .. " << EOD"
      for _, row in ipairs(fig.data[name]) do lines[#lines + 1] = row end
      lines[#lines + 1] = "EOD"
    end
    for _, c in ipairs(fig.commands) do lines[#lines + 1] = c end
    lines[#lines + 1] = "unset output"
  end
  return table.concat(lines, "\n") .. "\n"
end

local function read_all(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

local function write_all(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- An SVG that can sit inline in a page beside others: no XML prologue, its
-- ids (gnuplot names them alike in every file) prefixed, its title ours.
local function inline_svg(svg, prefix, title)
  svg = svg:gsub("^%s*<%?xml.-%?>%s*", ""):gsub("<!DOCTYPE.->%s*", "")
  svg = svg:gsub("(%sid=)(['\"])", "%1%2" .. prefix):gsub("(href=)(['\"])#", "%1%2#" .. prefix)
           :gsub("url%(#", "url(#" .. prefix)
  title = title:gsub("[&<>]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;" })
  return (svg:gsub("<title>.-</title>", function() return "<title>" .. title .. "</title>" end, 1))
end

local function failure(code, why, errs)
  local text = errs and read_all(errs) or ""
  text = text:gsub("%s+$", "")
  if #text > 2000 then text = text:sub(1, 2000) .. "\n..." end
  if code == nil and why:match("^cannot run [^:]*: No such file") then
    return ("gnuplot is needed to draw the plots and was not found (%s): install it (Debian: "
      .. "apt-get install gnuplot-nox) or name it in KTLUA_GNUPLOT"):format(why)
  end
  if code == nil then return "gnuplot: " .. why end
  return ("gnuplot failed (exit status %d)%s"):format(code, text ~= "" and (":\n" .. text) or "")
end

-- Whether gnuplot runs (`gnuplot --version`): an error saying what to
-- install where it does not, before work that needs it.
function gnuplot.check(timeout)
  local code, why = spawn.run({ program(), "--version" }, { timeout = timeout or 60 })
  if code ~= 0 then
    error(code == nil and failure(nil, why) or ("gnuplot failed (exit status %d)"):format(code), 0)
  end
end

-- draw(figures[, {timeout =, png = {name = path, ...}}]): with png, each
-- figure is written as a PNG file at its path and nothing is returned;
-- without, a table of each figure's SVG text (ready to put in a page,
-- `title` its title) by name. Errors are Lua errors saying what gnuplot said.
function gnuplot.draw(figures, opts)
  opts = opts or {}
  local base = os.tmpname()
  local files, outputs = { base }, {}
  local function temp(suffix)
    files[#files + 1] = base .. suffix
    return files[#files]
  end
  for i, fig in ipairs(figures) do
    outputs[fig.name] = opts.png and opts.png[fig.name] or temp("-" .. i .. ".svg")
  end
  local gp, errs = temp(".gp"), temp(".err")
  local ok, result = pcall(function()
    write_all(gp, script(figures, opts.png and "png" or "svg", outputs))
    local code, why = spawn.run({ program() }, { stdin = gp, stderr = errs,
                                                 timeout = opts.timeout or 60 })
    if code ~= 0 then error(failure(code, why, errs), 0) end
    if opts.png then return nil end
    local svgs = {}
    for i, fig in ipairs(figures) do
      local svg = read_all(outputs[fig.name])
      if not svg or not svg:find("<svg") then
        error(("gnuplot wrote no SVG for the figure %s"):format(fig.name), 0)
      end
      svgs[fig.name] = inline_svg(svg, "f" .. i .. "-", fig.title or fig.name)
    end
    return svgs
  end)
  for _, f in ipairs(files) do os.remove(f) end
  if not ok then error(result, 0) end
  return result
end

return gnuplot
