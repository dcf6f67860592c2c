-- ktlua.report_html: a tuning's results as one self-contained HTML page
-- (results:report(path[, options]) and `ktlua report`): what was tuned, the
-- best configurations, the statuses and the failures, and plots drawn by
-- gnuplot (ktlua.gnuplot) as inline SVG: the best time so far against the
-- evaluations and against the time since the search began, the
-- distribution of the times, and each parameter's effect (the times of
-- the configurations with each of its values). Inline CSS, no script, no
-- link: the page shows the same anywhere, offline. Without gnuplot it is an
-- error that says so (a page without its plots would hide that they are
-- missing). Options: top (best configurations listed, default 10), png
-- (also write each plot as a PNG file beside the page: PAGE-NAME.png),
-- timeout (seconds gnuplot may take, default 60). Results whose objective
-- is a metric (results.objective, results.maximize) rank their best
-- configurations and draw their convergence by it; the other plots show
-- the times.
local page = {}

local gnuplot = require("ktlua.gnuplot")

local STATUSES = { "ok", "compile_failed", "launch_failed", "runtime_failed", "timeout",
                   "invalid_output", "too_many_threads", "out_of_bounds", "generator_failed",
                   "too_much_local_memory", "compile_deferred" }
-- The plots' colours (the browser test looks for them in a screenshot).
local EFFECT_WIDTH = 400 -- pixels, of each parameter's plot
local COLOURS = { best = "#d62728", each = "#8c9db5", failed = "#ff7f0e", bars = "#1f77b4",
                  boxes = "#2ca02c" }

local function esc(s)
  return (tostring(s):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
                                         ['"'] = "&quot;", ["'"] = "&#39;" }))
end

local function num(x) return ("%.10g"):format(x) end
-- Times as the page shows them; data-ms attributes keep every digit.
local function ms(x) return x and ("%.4g"):format(x) or "-" end

local function value_text(v)
  if math.type(v) == "float" then return ("%g"):format(v) end
  return tostring(v)
end

-- ---- what the page shows, from the results ----

local function quantile(sorted, q)
  local pos = 1 + (#sorted - 1) * q
  local lo = math.floor(pos)
  local hi = math.min(lo + 1, #sorted)
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo)
end

-- Per parameter, per value (in the parameter's order): the ok times and
-- how many configurations with it failed.
local function effects(list, params)
  local out = {}
  for p, param in ipairs(params) do
    local by = {}
    for v, value in ipairs(param.values) do by[v] = { value = value, times = {}, failed = 0 } end
    local at = {}
    for v, value in ipairs(param.values) do at[value] = v end
    for _, r in ipairs(list) do
      local e = by[at[r.config[param.name]]]
      if e and r.status == "ok" then e.times[#e.times + 1] = r.time_ms
      elseif e then e.failed = e.failed + 1 end
    end
    for _, e in ipairs(by) do table.sort(e.times) end
    out[p] = { name = param.name, values = by }
  end
  return out
end

-- The objective the results were tuned for: the time, or a metric by
-- name, maximised or not. value(r) is r's (nil when r has none).
local function objective(results)
  local name = results.objective
  if name == "kernel" or name == "kernel+host" then
    return { metric = false, label = "time (ms)", name = "time",
             value = function(r) return r.time_ms end }
  end
  return { metric = true, label = name, name = name, maximize = results.maximize,
           value = function(r) return r.metrics and r.metrics[name] end }
end

-- a before b in the ranking: the better value, then the lower index
local function ranker(obj)
  return function(a, b)
    local va, vb = obj.value(a), obj.value(b)
    if va ~= vb then
      if obj.maximize then return va > vb end
      return va < vb
    end
    return a.index < b.index
  end
end

local function better(obj, v, than) return than == nil or (obj.maximize and v > than or not obj.maximize and v < than) end

local function gather(results, opts)
  local list, s = results:list(), results:summary()
  local obj = objective(results)
  local m = { results = results, list = list, summary = s, params = results.params,
              ok = {}, failed = {}, top = opts.top or 10, objective = obj }
  -- The time axis: elapsed_ms, or where any result lacks it (a CSV file, a
  -- file written before ktlua recorded it) the configurations' own times summed.
  local best, clock, walled = nil, 0, true
  for _, r in ipairs(list) do walled = walled and r.elapsed_ms ~= nil end
  m.steps = {}
  for i, r in ipairs(list) do
    clock = clock + (r.overheads_ms.total or 0)
    r.clock_ms = walled and r.elapsed_ms or clock
    if r.status == "ok" then
      m.ok[#m.ok + 1] = r
      local v = obj.value(r)
      if v ~= nil and better(obj, v, best and obj.value(best)) then
        best = r
        m.steps[#m.steps + 1] = { i = i, r = r }
      end
    else
      m.failed[#m.failed + 1] = r
    end
  end
  m.walled = walled
  m.best = best
  -- ranked by the objective (the ok results that have its value); sorted by time
  m.ranked, m.sorted = {}, {}
  for i, r in ipairs(m.ok) do
    m.sorted[i] = r
    if obj.value(r) ~= nil then m.ranked[#m.ranked + 1] = r end
  end
  table.sort(m.sorted, function(a, b)
    if a.time_ms ~= b.time_ms then return a.time_ms < b.time_ms end
    return a.index < b.index
  end)
  table.sort(m.ranked, ranker(obj))
  m.effects = effects(list, m.params)
  return m
end

-- ---- the figures ----

local function range_is_wide(lo, hi) return lo > 0 and hi / lo > 20 end

-- Best so far: a step after each improvement, held to the last evaluation;
-- of the objective (the time, or the metric the results were tuned for).
local function convergence(m, by_time)
  local n, obj = #m.list, m.objective
  local seconds = by_time and m.list[n].clock_ms >= 2000
  local scale = seconds and 1e-3 or 1
  local function x(i) return by_time and m.list[i].clock_ms * scale or i end
  local each, steps, failed = {}, {}, {}
  for i, r in ipairs(m.list) do
    local v = r.status == "ok" and obj.value(r)
    if v then each[#each + 1] = num(x(i)) .. " " .. num(v)
    elseif r.status ~= "ok" then failed[#failed + 1] = num(x(i)) end
  end
  for _, st in ipairs(m.steps) do steps[#steps + 1] = num(x(st.i)) .. " " .. num(obj.value(st.r)) end
  steps[#steps + 1] = num(x(n)) .. " " .. num(obj.value(m.best))
  local xlabel = not by_time and "evaluations"
    or (m.walled and "time since the search began" or "summed time of the configurations")
       .. (seconds and " (s)" or " (ms)")
  local lo, hi = obj.value(m.ranked[1]), obj.value(m.ranked[#m.ranked])
  if lo > hi then lo, hi = hi, lo end
  local what = obj.metric and "best " .. obj.name .. " so far" or "best time so far"
  return {
    name = by_time and "convergence-time" or "convergence",
    title = what .. (by_time and " against time" or " against evaluations"),
    width = 600, height = 340,
    data = { each = each, best = steps, failed = failed, ylabel = { gnuplot.text(obj.label) } },
    commands = {
      "set xlabel '" .. xlabel .. "'", "set ylabel $ylabel[1]", "set grid",
      "set key top right", range_is_wide(lo, hi) and "set logscale y"
        or (lo >= 0 and "set yrange [0:*]" or "set yrange [*:*]"),
      by_time and "set xrange [0:*]" or "set xrange [0.5:" .. num(n + 0.5) .. "]",
      "set y2range [0:1]", -- failures along the bottom, whatever the time axis
      ("plot $each using 1:2 with points pt 7 ps 0.5 lc rgb '%s' title 'each ok configuration', "
        .. "$best using 1:2 with steps lw 3 lc rgb '%s' title 'best so far'"):format(COLOURS.each,
        COLOURS.best)
        .. (#failed > 0 and (", $failed using 1:(0.03) axes x1y2 with points pt 9 ps 0.7 lc rgb "
          .. "'%s' title 'failed'"):format(COLOURS.failed) or ""),
    },
  }
end

-- Bins of the ok times: even in time, or in log time when they span more
-- than a factor of 20.
local function histogram(m)
  local times = {}
  for i, r in ipairs(m.sorted) do times[i] = r.time_ms end
  local lo, hi = times[1], times[#times]
  if hi <= lo then lo, hi = lo * 0.95, hi * 1.05 + 1e-12 end
  local wide = range_is_wide(lo, hi)
  local k = math.max(1, math.min(40, math.ceil(math.sqrt(#times))))
  local f = wide and math.log or function(x) return x end
  local g = wide and math.exp or function(x) return x end
  local a, b = f(lo), f(hi)
  local counts = {}
  for i = 1, k do counts[i] = 0 end
  for _, t in ipairs(times) do
    local bin = math.min(k, math.floor((f(t) - a) / (b - a) * k) + 1)
    counts[bin] = counts[bin] + 1
  end
  local rows = {}
  for i = 1, k do
    rows[i] = ("%s %s %d"):format(num(g(a + (b - a) * (i - 1) / k)), num(g(a + (b - a) * i / k)),
                                  counts[i])
  end
  return {
    name = "distribution", title = "distribution of the times", width = 600, height = 340,
    data = { bins = rows }, bins = k,
    commands = {
      "set xlabel 'time (ms)'", "set ylabel 'configurations'", "set grid ytics",
      wide and "set logscale x" or "set xrange [" .. num(lo) .. ":" .. num(hi) .. "]",
      "set yrange [0:*]", "set style fill solid 1.0 border rgb '#ffffff'",
      ("plot $bins using (($1+$2)/2):($3/2):1:2:(0):3 with boxxyerror lc rgb '%s' notitle")
        :format(COLOURS.bars),
    },
  }
end

-- A box per value that some ok configuration has: quartiles, whiskers to
-- the fastest and slowest, a line at the median.
local function effect_figure(m, p, e)
  local rows, shown, lo, hi = {}, 0, math.huge, 0
  for _, v in ipairs(e.values) do
    local t = v.times
    if #t > 0 then
      shown = shown + 1
      lo, hi = math.min(lo, t[1]), math.max(hi, t[#t])
      rows[#rows + 1] = ("%d %s %s %s %s %s %s"):format(shown, num(t[1]), num(quantile(t, 0.25)),
        num(quantile(t, 0.5)), num(quantile(t, 0.75)), num(t[#t]), gnuplot.label(value_text(v.value)))
    end
  end
  if shown < 2 then return nil end -- one box compares nothing: its table says it all
  return {
    name = "effect-" .. (e.name:match("^[%w_]+$") and e.name or p), title = e.name .. ": time by value",
    width = EFFECT_WIDTH, height = 280,
    data = { boxes = rows },
    commands = {
      "set ylabel 'time (ms)'", "set grid ytics", "set boxwidth 0.5 absolute",
      "set xrange [0.4:" .. num(shown + 0.6) .. "]",
      range_is_wide(lo, hi) and "set logscale y" or "set yrange [0:*]",
      shown > 8 and "set xtics rotate by -45" or "set xtics",
      "set style fill solid 1.0 border rgb '#1b5e20'",
      ("plot $boxes using 1:3:2:6:5:xticlabels(7) with candlesticks whiskerbars lc rgb '%s' "
        .. "notitle, $boxes using 1:4:4:4:4 with candlesticks lt -1 lw 2 notitle"):format(COLOURS.boxes),
    },
  }
end

local function figures(m)
  if not m.best then return {} end
  local list = { convergence(m, false), convergence(m, true), histogram(m) }
  for p, e in ipairs(m.effects) do
    local fig = effect_figure(m, p, e)
    if fig then list[#list + 1] = fig; e.figure = fig.name end
  end
  return list
end

-- ---- the page ----

local CSS = [[
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.figs { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; max-width: 100%; } /* as wide as its plot (inline), its caption wraps */
figcaption { font-size: 0.9em; color: #555; }
svg { max-width: 100%; height: auto; }
.note { color: #555; font-size: 0.9em; }
.error { font-family: monospace; white-space: pre-wrap; max-width: 60em; }
.live { background: #fff8e1; border: 1px solid #f0c36d; padding: 0.5em 0.8em; max-width: 60em; }
]]

local function row(cells, tag)
  local out = {}
  for _, c in ipairs(cells) do
    local attrs = c.attrs and (" " .. c.attrs) or ""
    out[#out + 1] = ("<%s%s>%s</%s>"):format(tag or "td", attrs, c.html or esc(c[1]), tag or "td")
  end
  return "<tr>" .. table.concat(out) .. "</tr>"
end

local function no_best(m)
  if #m.ok > 0 then return "no ok configuration has a value of " .. m.objective.name end
  return "no configuration came out ok"
end

local function best_value(m)
  return m.objective.metric and (m.objective.name .. " " .. ("%.6g"):format(m.objective.value(m.best)) .. ", ") or ""
end

local function overview(m, source)
  local s, r = m.summary, m.results
  local items = {
    { "task", r.task }, { "device", r.device }, { "searcher", r.searcher },
    { "evaluated", s.space_valid > 0
        and ("%d of %s valid configurations"):format(s.evaluated, tostring(s.space_valid))
        or ("%d configurations (the space's size unknown)"):format(s.evaluated),
      attrs = ('id="evaluated" data-count="%d"'):format(s.evaluated) },
    { "stopped", s.stopped },
    -- a journal records no wall time (its tuning may still run): unknown, not 0
    { "wall time", s.wall_ms > 0 and ms(s.wall_ms) .. " ms" or nil },
    { "best", m.best and (best_value(m) .. ms(m.best.time_ms) .. " ms: " .. require("ktlua.report").config(
        m.best.config, m.params)) or "none: " .. no_best(m) },
  }
  if m.objective.metric then
    table.insert(items, 6, { "objective", m.objective.name .. (m.objective.maximize and ", maximised" or "") })
  end
  if source then table.insert(items, 1, { "results", source }) end
  local out = { '<table id="overview">' }
  for _, it in ipairs(items) do
    if it[2] and it[2] ~= "" then out[#out + 1] = row({ { it[1] }, { it[2], attrs = it.attrs } }) end
  end
  out[#out + 1] = "</table>"
  return table.concat(out, "\n")
end

-- How far r is from the best, as a factor of 1 or more.
local function versus(m, r)
  local obj, v, b = m.objective, m.objective.value(r), m.objective.value(m.best)
  if obj.maximize then return b / v end
  return v / b
end

local function best_table(m)
  if not m.best then return "<p>" .. esc((no_best(m):gsub("^n", "N"))) .. ".</p>" end
  local obj = m.objective
  local head = { { "rank" }, { "index", attrs = 'class="n"' } }
  for _, p in ipairs(m.params) do head[#head + 1] = { p.name } end
  if obj.metric then head[#head + 1] = { obj.name, attrs = 'class="n"' } end
  head[#head + 1] = { "time (ms)", attrs = 'class="n"' }
  head[#head + 1] = { "runs", attrs = 'class="n"' }
  head[#head + 1] = { "spread", attrs = 'class="n"' }
  head[#head + 1] = { "vs best", attrs = 'class="n"' }
  local out = { '<table id="best">', row(head, "th") }
  for rank = 1, math.min(m.top, #m.ranked) do
    local r = m.ranked[rank]
    local cells = { { rank }, { r.index, attrs = 'class="n"' } }
    for _, p in ipairs(m.params) do cells[#cells + 1] = { value_text(r.config[p.name]) } end
    if obj.metric then
      cells[#cells + 1] = { ("%.6g"):format(obj.value(r)),
                            attrs = ('class="n objective" data-value="%.17g"'):format(obj.value(r)) }
    end
    cells[#cells + 1] = { ms(r.time_ms), attrs = ('class="n time" data-ms="%.17g"'):format(r.time_ms) }
    -- a CSV file keeps no samples: unknown, not none
    cells[#cells + 1] = { #r.samples_ms > 0 and #r.samples_ms or "-", attrs = 'class="n"' }
    -- half the middle half of its runs around their median (ktlua.report's spread)
    local spread = require("ktlua.report").spread(r)
    cells[#cells + 1] = { require("ktlua.report").fmt_spread(r), attrs = 'class="n"'
      .. (spread and (' data-spread="%.6g"'):format(spread) or "") }
    cells[#cells + 1] = { ("%.2fx"):format(versus(m, r)), attrs = 'class="n"' }
    out[#out + 1] = row(cells)
  end
  out[#out + 1] = "</table>"
  if #m.ranked > m.top then
    out[#out + 1] = ('<p class="note">%d more ok configurations.</p>'):format(#m.ranked - m.top)
  end
  return table.concat(out, "\n")
end

local function status_table(m)
  local s = m.summary
  local out = { '<table id="statuses">', row({ { "status" }, { "configurations", attrs = 'class="n"' },
                                               { "share", attrs = 'class="n"' } }, "th") }
  for _, name in ipairs(STATUSES) do
    local n = s.statuses[name] or 0
    if n > 0 then
      out[#out + 1] = row({ { name }, { n, attrs = ('class="n" data-status="%s"'):format(name) },
                            { ("%.1f%%"):format(100 * n / s.evaluated), attrs = 'class="n"' } })
    end
  end
  out[#out + 1] = "</table>"
  return table.concat(out, "\n")
end

local function failures(m)
  if #m.failed == 0 then return "" end
  local limit = 20
  local out = { "<h2>Failed configurations</h2>", '<table id="failures">',
                row({ { "index" }, { "configuration" }, { "status" }, { "why" } }, "th") }
  for i = 1, math.min(limit, #m.failed) do
    local r = m.failed[i]
    local why = (r.error or ""):match("^[^\n]*")
    if #why > 200 then why = why:sub(1, 197) .. "..." end
    out[#out + 1] = row({ { r.index }, { require("ktlua.report").config(r.config, m.params) },
                          { r.status }, { why, attrs = 'class="error"' } })
  end
  out[#out + 1] = "</table>"
  if #m.failed > limit then
    out[#out + 1] = ('<p class="note">%d more failed configurations (the first %d are listed, in '
      .. 'the order evaluated).</p>'):format(#m.failed - limit, limit)
  end
  return table.concat(out, "\n")
end

local function figure(svgs, fig, caption)
  return ('<figure id="fig-%s" style="width: %dpx">%s<figcaption>%s</figcaption></figure>'):format(
    fig.name, fig.width, svgs[fig.name], caption)
end

local function value_table(e)
  local out = { ('<table class="values" data-param="%s">'):format(esc(e.name)),
                row({ { e.name }, { "ok", attrs = 'class="n"' }, { "failed", attrs = 'class="n"' },
                      { "best (ms)", attrs = 'class="n"' }, { "median (ms)", attrs = 'class="n"' } }, "th") }
  for _, v in ipairs(e.values) do
    local t = v.times
    if #t + v.failed > 0 then
      out[#out + 1] = row({ { value_text(v.value) }, { #t, attrs = 'class="n"' },
        { v.failed, attrs = 'class="n"' },
        { t[1] and ms(t[1]) or "-", attrs = 'class="n"' .. (t[1] and (' data-ms="%.17g"'):format(t[1]) or "") },
        { t[1] and ms(quantile(t, 0.5)) or "-", attrs = 'class="n"' } })
    end
  end
  out[#out + 1] = "</table>"
  return table.concat(out, "\n")
end

local function plots(m, figs, svgs)
  if not m.best then return "" end
  local by = {}
  for _, f in ipairs(figs) do by[f.name] = f end
  local time_note = m.walled and "" or (" This file records no time of evaluation: the time axis "
    .. "sums the configurations' own times.")
  local out = {
    "<h2>Convergence</h2>", '<div class="figs">',
    figure(svgs, by.convergence, ("Best %s so far (red) and each ok configuration's %s (grey), ")
      :format(esc(m.objective.name), esc(m.objective.name))
      .. "by evaluation" .. (#m.failed > 0 and "; failed configurations are the orange triangles "
      .. "along the bottom." or ".")),
    figure(svgs, by["convergence-time"], "The same against time." .. time_note), "</div>",
    "<h2>Time distribution</h2>", '<div class="figs">',
    figure(svgs, by.distribution, ("The %d ok configurations' times in %d bins."):format(#m.ok,
      by.distribution.bins)),
    "</div>", "<h2>Parameters</h2>",
    '<p class="note">Each box spans the middle half of the ok times of the configurations with '
      .. "that value, its whiskers the fastest and slowest, the black line the median.</p>",
    '<div class="figs">',
  }
  for _, e in ipairs(m.effects) do
    local ok_values = 0
    for _, v in ipairs(e.values) do ok_values = ok_values + (#v.times > 0 and 1 or 0) end
    local body = e.figure and svgs[e.figure] or ('<p class="note">no plot: %s</p>'):format(
      ok_values == 0 and "no configuration with it came out ok" or "only one of its values came out ok")
    out[#out + 1] = ('<figure id="param-%s" style="width: %dpx">%s%s<figcaption>%s</figcaption>'
      .. '</figure>'):format(esc(e.name), EFFECT_WIDTH, body, value_table(e), esc(e.name) .. ": time by value")
  end
  out[#out + 1] = "</div>"
  return table.concat(out, "\n")
end

-- A running tuning's page (ktlua.live): how far it is, and that the page
-- reloads itself.
local function live_block(p)
  local duration = require("ktlua.live").duration
  local done = p.budget and ("%d of %d configurations (%d%%)"):format(p.done, p.budget,
    math.floor(100 * p.done / math.max(p.budget, 1))) or ("%d configurations so far"):format(p.done)
  local left = p.left and ("about %s left"):format(duration(p.left)) or "the time left unknown"
  local last = p.last_ago and ("; the last result came %s ago"):format(duration(p.last_ago)) or
    "; no result yet"
  return ('<p id="live" class="live" data-state="running" data-done="%d"%s><strong>Running</strong>: '
    .. "%s, %s since the search began, %s%s. This page is written again as results come in and "
    .. "reloads itself every %d s; the finished report takes its place when the tuning ends.%s</p>")
    :format(p.done, p.budget and (' data-budget="%d"'):format(p.budget) or "", done,
            duration(p.elapsed), left, last, p.refresh,
            p.busy and ('<br><span id="busy">%s.</span>'):format(esc(p.busy:gsub("^t", "T"))) or "")
end

local function head(title, refresh)
  return (table.concat({
    "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
    refresh and ('<meta http-equiv="refresh" content="%d">'):format(refresh) or "",
    "<title>" .. esc(title) .. "</title>", "<style>" .. CSS .. "</style>", "</head>", "<body>",
  }, "\n"):gsub("\n\n", "\n"))
end

local function html(m, svgs, figs, source, live)
  local r = m.results
  return table.concat({
    head(("ktlua %s: %s on %s"):format(live and "live" or "report", r.task, r.device),
         live and live.refresh),
    "<h1>" .. esc(("Tuning %s on %s"):format(r.task, r.device)) .. "</h1>",
    live and live_block(live) or "",
    overview(m, source), "<h2>Best configurations</h2>", best_table(m),
    "<h2>Statuses</h2>", status_table(m), plots(m, figs, svgs), failures(m),
    ('<p class="note">Written by ktlua %s.</p>'):format(esc(require("ktlua").version)),
    "</body>", "</html>", "",
  }, "\n")
end

-- ---- writing ----

local OPTIONS = { top = "number", png = "boolean", timeout = "number" }

local function check_options(opts)
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    error("results:report: expected a table of options {top =, png =, timeout =}, got " .. type(opts), 0)
  end
  for k, v in pairs(opts) do
    if not OPTIONS[k] then error(("results:report: unknown option '%s'"):format(tostring(k)), 0) end
    if type(v) ~= OPTIONS[k] then
      error(("results:report: option %s must be a %s, got %s"):format(k, OPTIONS[k], type(v)), 0)
    end
  end
  if opts.top and (opts.top < 1 or math.type(opts.top) ~= "integer") then
    error("results:report: option top must be a positive integer", 0)
  end
  if opts.timeout and opts.timeout <= 0 then error("results:report: option timeout must be positive", 0) end
  return opts
end

-- Where the PNG of each figure goes: beside the page, PAGE-NAME.png.
local function png_paths(path, figs)
  local stem = path:gsub("%.html?$", "")
  local out, list = {}, {}
  for _, f in ipairs(figs) do
    out[f.name] = stem .. "-" .. f.name .. ".png"
    list[#list + 1] = out[f.name]
  end
  return out, list
end

-- Replaces path whole: the page is written beside it, then renamed over
-- it, so that a browser reading it meanwhile reads the old page or the new.
local function replace(path, text, fail)
  local tmp = path .. ".tmp"
  local f, why = io.open(tmp, "wb")
  if not f then fail(("cannot write %s: %s"):format(path, why)) end
  local ok, err = f:write(text)
  local closed, why_not = f:close()
  if ok and not closed then ok, err = nil, why_not end
  if ok then ok, err = os.rename(tmp, path) end
  if not ok then
    os.remove(tmp)
    fail(("cannot write %s: %s"):format(path, err))
  end
end

-- Writes the page (and, with png, the images); returns the paths written,
-- the page first. Errors name `who` (the method, or the command).
local function write(results, path, opts, who)
  local function fail(msg) error(who .. ": " .. msg, 0) end
  if type(path) ~= "string" or path == "" then fail("expected the path of the page to write") end
  local m = gather(results, opts)
  local figs = figures(m)
  local function draw(png)
    local ok, out = pcall(gnuplot.draw, figs, { timeout = opts.timeout, png = png })
    if not ok then fail(tostring(out)) end
    return out
  end
  local svgs = #figs > 0 and draw(nil) or {}
  local written = { path }
  if opts.png and #figs > 0 then
    local pngs, list = png_paths(path, figs)
    draw(pngs)
    for _, p in ipairs(list) do written[#written + 1] = p end
  end
  replace(path, html(m, svgs, figs, opts.source, opts.live), fail)
  return written
end

-- ktlua.live's pages: the report of results (opts.live: how far the
-- running tuning is, and the page reloads itself) ...
function page.write_page(results, path, opts, who)
  return write(results, path, opts, who)
end

-- ... and a page of a line, without results: a tuning starting (it reloads
-- itself every refresh seconds) or one that failed before its first result.
function page.write_note(path, title, text, refresh)
  replace(path, head(title, refresh) .. "\n<h1>" .. esc(title) .. "</h1>\n"
    .. ('<p id="live" class="live" data-state="%s">%s</p>\n'):format(refresh and "starting" or
       "failed", esc(text)) .. "</body>\n</html>\n", function(msg) error(msg, 0) end)
end

-- results:report(path[, options]) (lk_results.c).
function page.write(results, path, opts)
  local ok, written = pcall(function() return write(results, path, check_options(opts), "results:report") end)
  if not ok then error(written, 3) end -- the caller's line (2 is the method, in C)
  return written
end

-- ---- the command ----

local usage = [==[
usage: ktlua report [-o PAGE] [--png] [--top=N] [--timeout=S]
                    [--objective=NAME [--maximize]] RESULTS
       ktlua report --follow JOURNAL [-o PAGE] [--top=N] [--timeout=S]
                    [--count=N] [--fraction=F] [--seconds=S] [--stdin]
  writes the results of a tuning or a replay (a results file, JSON or CSV,
  or a journal) as one self-contained HTML page, PAGE (default: RESULTS
  with .html for its extension): the best configurations, the statuses,
  the failures and plots drawn by gnuplot (the best time so far against
  evaluations and against time, the distribution of the times, each
  parameter's effect); --png also writes each plot as PAGE-NAME.png;
  --top=N lists the N best configurations (default 10); --timeout=S gives
  gnuplot S seconds (default 60); --objective=NAME ranks the configurations
  and draws the best so far by the metric NAME of the results (or the time:
  kernel), --maximize maximises it; without them, by the objective the
  results file names (a CSV file names none: the time)
  --follow keeps the page of a tuning that another process runs up to date
  while it holds JOURNAL (its journal): the results so far, how far it is
  and the time left, reloading itself in the browser; then the finished
  report. --count, --fraction and --seconds give the tuning's budget (its
  stop options) for the time left (default: its space's size); --stdin
  follows while standard input is open instead (a 'q' on it ends the
  follow at once): how the tune option live runs it
]==]

local function number_option(a, name, integer)
  local v = tonumber(a:match("^%-%-" .. name .. "=(.*)"))
  if integer then v = math.tointeger(v) end
  if not v or v <= 0 or v == math.huge then
    error(("ktlua report: --%s needs a positive %s"):format(name, integer and "integer" or "number"), 0)
  end
  return v
end

function page.main(args)
  local output, path, opts, load, follow = nil, nil, {}, {}, nil
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "-o" and args[i + 1] then output = args[i + 1]; i = i + 1
    elseif a == "--png" then opts.png = true
    elseif a:match("^%-%-objective=.") then load.objective = a:match("^%-%-objective=(.*)")
    elseif a == "--maximize" then load.maximize = true
    elseif a:match("^%-%-timeout=") then opts.timeout = number_option(a, "timeout")
    elseif a:match("^%-%-top=") then opts.top = number_option(a, "top", true)
    elseif a == "--follow" and args[i + 1] and not follow then
      follow = { journal = args[i + 1] }; i = i + 1
    elseif a:match("^%-%-follow=.") and not follow then follow = { journal = a:match("=(.*)") }
    elseif a:match("^%-%-count=") then opts.count = number_option(a, "count", true)
    elseif a:match("^%-%-fraction=") then opts.fraction = number_option(a, "fraction")
    elseif a:match("^%-%-seconds=") then opts.seconds = number_option(a, "seconds")
    elseif a == "--stdin" then opts.input = true
    elseif a == "-h" or a == "--help" then io.write(usage); return
    elseif not path and not a:match("^%-.") then path = a
    else error(("ktlua report: unexpected argument '%s'\n%s"):format(a, usage), 0) end
    i = i + 1
  end
  local followed = { "count", "fraction", "seconds", "input" }
  if follow then
    if path then error(("ktlua report: --follow takes a journal, and no RESULTS ('%s')"):format(path), 0) end
    for _, bad in ipairs({ "png", "objective", "maximize" }) do
      if opts[bad] or load[bad] then error(("ktlua report: --%s is not for --follow"):format(bad), 0) end
    end
    path = follow.journal
  else
    for _, name in ipairs(followed) do
      if opts[name] then
        error(("ktlua report: --%s goes with --follow JOURNAL"):format(name == "input" and "stdin" or name), 0)
      end
    end
  end
  if not path then error("ktlua report: no results file given\n" .. usage, 0) end
  output = output or (path:gsub("%.gz$", ""):gsub("%.[^./]*$", "") .. ".html")
  if output == path then
    error(("ktlua report: the page would replace the %s %s"):format(follow and "journal" or "results file",
      path), 0)
  end
  if follow then
    require("ktlua.live").follow(path, output, opts)
    if not opts.input then io.write(output, "\n") end -- a tuning's follower says nothing
    return
  end
  local ok, results = pcall(require("ktlua").load, path, load)
  if not ok then error("ktlua report: " .. tostring(results), 0) end
  opts.source = path
  local written = write(results, output, opts, "ktlua report")
  for _, p in ipairs(written) do io.write(p, "\n") end
end

return page
