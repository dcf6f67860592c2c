-- The HTML report (results:report, `ktlua report`): its numbers against the
-- results file, its plots (gnuplot) rendered by headless Chromium and
-- found in the screenshot, its inputs (JSON, CSV, journals; tunings and
-- replays, with failures), and its errors. Also ktlua.spawn, which runs
-- gnuplot, and the results' elapsed_ms, which the time axis plots.
local kt = require "ktlua"
local files = require "spec.support.files"
local shell = require "spec.support.shell"
local chromium = require "spec.support.chromium"
local ktlua, run = shell.ktlua, shell.run

-- A tiny tuning with failures: VEC = 8 with WG = 64 does not compile.
local function tune(journal)
  local n = 4096
  local a, c = kt.array("float", n):random(1), kt.array("float", n)
  local tuner = kt.tuner()
  local k = tuner:kernel{ name = "twice", global = n, group = 1, args = { a:input(), c:output() },
    source = [[
      #if VEC == 8 && WG == 64
      #error this variant does not exist
      #endif
      __kernel void twice(__global const float *a, __global float *c) {
        int i = get_global_id(0) * VEC;
        for (int v = 0; v < VEC; v++) c[i + v] = 2.0f * a[i + v];
      }]] }
  k:param("WG", { 16, 32, 64 }, { group_x = "mul" })
  k:param("VEC", { 1, 2, 4, 8 }, { global_x = "div" })
  k:param("ONE", { "x" })
  k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = 2 * a[i] end end)
  local r = tuner:tune(k, { repeats = 3, fail_fast = false, journal = journal })
  tuner:close()
  return r
end

local function esc(s) return (s:gsub("%p", "%%%0")) end

local function count(text, pattern)
  local n = 0
  for _ in text:gmatch(pattern) do n = n + 1 end
  return n
end

-- What every page must be: whole, offline, its ids unique.
local function check_page(html)
  assert.matches("^<!DOCTYPE html>", html)
  assert.matches("</html>\n$", html)
  for _, bad in ipairs({ "<script", "<link", "<img", "<iframe", "src=", "@import", "url%(http" }) do
    assert.is_nil(html:find(bad), bad)
  end
  for ref in html:gmatch("href=['\"]([^'\"]*)") do assert.matches("^#", ref) end
  local ids = {}
  for id in html:gmatch("%sid=['\"]([^'\"]+)") do
    assert.is_nil(ids[id], "the id " .. id .. " twice")
    ids[id] = true
  end
end

-- The numbers of a page against the results it was made from.
local function check_numbers(html, results)
  local s, best = results:summary(), results:best()
  assert.matches(('id="evaluated" data%%-count="%d"'):format(s.evaluated), html)
  for status, n in pairs(s.statuses) do
    if n > 0 then assert.matches(('data%%-status="%s">%d<'):format(status, n), html) end
  end
  local first = html:match('<table id="best">.-<tr>.-</tr>%s*(<tr>.-</tr>)')
  assert.matches(('data%%-ms="%s"'):format(esc(("%.17g"):format(best.time_ms))), first)
  for _, p in ipairs(results.params) do
    assert.matches("<td>" .. esc(tostring(best.config[p.name])) .. "</td>", first)
  end
end

-- One tuning for the whole spec (a results file and its journal).
local results, json, journal

setup(function()
  journal = files.tmpname(".jsonl")
  results = tune(journal)
  json = files.tmpname(".json")
  results:write(json)
end)

teardown(function()
  os.remove(json)
  os.remove(journal)
end)

describe("results:report", function()
  local page

  it("writes a page whose numbers are the results file's", function()
    page = files.tmpname(".html")
    local out, code = run(ktlua .. " report " .. json .. " -o " .. page)
    assert.are.equal(0, code, out)
    assert.are.equal(page .. "\n", out)
    local html, loaded = files.read(page), kt.load(json)
    check_page(html)
    check_numbers(html, loaded)
    assert.are.equal(12, loaded:summary().evaluated)
    assert.are.equal(1, loaded:summary().statuses.compile_failed)
    -- the failure, with the compiler's reason
    assert.matches('<table id="failures">.-<td>WG=64 VEC=8 ONE=x</td><td>compile_failed</td>', html)
    assert.matches("this variant does not exist", html)
    -- plots: two convergences, the distribution, WG and VEC (ONE has one value)
    assert.are.equal(5, count(html, "<svg"))
    for _, id in ipairs({ "fig-convergence", "fig-convergence-time", "fig-distribution",
                          "param-WG", "param-VEC", "param-ONE" }) do
      assert.matches('id="' .. esc(id) .. '"', html)
    end
    assert.matches("<title>WG: time by value</title>", html)
    assert.matches("time since the search began", html)
    assert.matches("no plot: only one of its values came out ok", html)
    -- VEC = 8: two ok, one failed, and its best time
    local vec = html:match('<table class="values" data%-param="VEC">(.-)</table>')
    local best8 = math.huge
    for _, r in ipairs(loaded:list()) do
      if r.config.VEC == 8 and r.status == "ok" then best8 = math.min(best8, r.time_ms) end
    end
    assert.matches(('<tr><td>8</td><td class="n">2</td><td class="n">1</td><td class="n" data%%-ms="%s"')
      :format(esc(("%.17g"):format(best8))), vec)
  end)

  it("renders in headless Chromium: the plots are in the screenshot", function()
    if not chromium.installed() then
      return pending("Chromium is not installed (scripts/setup.sh installs Debian's chromium; "
        .. "it could not here)")
    end
    assert.is_truthy(page, "the page of the test before")
    local shot = chromium.screenshot(page, 1300, 3000)
    local w = shot.width
    assert.are.same({ 1300, 3000 }, { shot.width, shot.height })
    -- Where each plot colour is (exact pixels: line and bar interiors).
    local red, red_top, red_left, red_right = shot.find(214, 39, 40) -- best so far
    local grey = shot.find(140, 157, 181)           -- each configuration
    local blue, blue_top = shot.find(31, 119, 180)  -- the distribution's bars
    local green, green_top = shot.find(44, 160, 44) -- the parameters' boxes
    local orange = shot.find(255, 127, 14)          -- the failed configuration
    assert.is_true(red > 300, "red pixels: " .. red)
    assert.is_true(grey > 20, "grey pixels: " .. grey)
    assert.is_true(blue > 1000, "blue pixels: " .. blue)
    assert.is_true(green > 300, "green pixels: " .. green)
    assert.is_true(orange > 4, "orange pixels: " .. orange)
    -- the two convergence plots side by side, then the distribution, then the parameters
    assert.is_true(red_left < w // 2 and red_right > w // 2, ("red from x %d to %d"):format(red_left, red_right))
    assert.is_true(red_top < blue_top and blue_top < green_top,
      ("tops: red %d, blue %d, green %d"):format(red_top, blue_top, green_top))
  end)

  it("takes a journal and a CSV file; a CSV's time axis sums the configurations' times", function()
    local r = results
    local from_journal = files.tmpname(".html")
    local out, code = run(ktlua .. " report " .. journal .. " -o " .. from_journal)
    assert.are.equal(0, code, out)
    local html = files.read(from_journal)
    check_page(html)
    check_numbers(html, r)
    assert.matches("time since the search began", html)
    local csv = files.tmpname(".csv")
    r:write(csv)
    out, code = run(ktlua .. " report --top=2 " .. csv)
    local default = csv:gsub("%.csv$", ".html")
    assert.are.equal(0, code, out)
    assert.are.equal(default .. "\n", out)
    html = files.read(default)
    check_numbers(html, kt.load(csv))
    assert.are.equal(2 + 1, count(html:match('<table id="best">.-</table>'), "<tr>"))
    assert.matches("summed time of the configurations", html)
    assert.matches("records no time of evaluation", html)
    for _, p in ipairs({ from_journal, csv, default }) do os.remove(p) end
  end)

  it("reports a replay, and writes PNG files with --png", function()
    local rec = kt.replay("spec/fixtures/small_cache.json")
    local r = rec:tune{ search = "random", seed = 2 }
    assert.are.equal(rec:count(), #r)
    local path = files.tmpname(".html")
    local written = r:report(path, { png = true, top = 3 })
    local stem = path:gsub("%.html$", "")
    local names = { "convergence", "convergence-time", "distribution", "effect-block_x",
                    "effect-block_y", "effect-unroll" }
    local expect = { path }
    for _, n in ipairs(names) do expect[#expect + 1] = stem .. "-" .. n .. ".png" end
    assert.are.same(expect, written)
    for i = 2, #written do
      local png = files.read(written[i])
      assert.are.equal("\137PNG\r\n\26\n", png:sub(1, 8))
      local w, h = string.unpack(">I4I4", png, 17)
      assert.are.same(i <= 4 and { 600, 340 } or { 400, 280 }, { w, h })
      os.remove(written[i])
    end
    local html = files.read(path)
    check_page(html)
    check_numbers(html, r)
    -- the replay's clock: the recorded times, summed
    local clock = 0
    for i, x in ipairs(r:list()) do
      clock = clock + x.overheads_ms.total
      assert.is_true(math.abs(x.elapsed_ms - clock) <= 1e-9 * clock, "elapsed_ms of result " .. i)
    end
    assert.matches("runtime_failed", html)
    assert.matches("compile_failed", html)
    os.remove(path)
  end)

  it("ranks and draws the convergence by the results' objective when it is a metric", function()
    -- a made-up metric whose order is known: 10 VEC + WG / 16, maximised
    local function per_vec(_, cfg) return cfg.VEC * 10 + cfg.WG // 16 end
    local r = kt.replay(json):tune{ search = "exhaustive", metrics = { per_vec = per_vec },
                                    objective = "per_vec", maximize = true }
    local path = files.tmpname(".html")
    r:report(path)
    local html = files.read(path)
    check_page(html)
    check_numbers(html, r)
    local best = html:match('<table id="best">.-</table>')
    local values = {}
    for v in best:gmatch('data%-value="([^"]+)"') do values[#values + 1] = tonumber(v) end
    assert.are.same({ 82, 81, 44, 42, 41, 24, 22, 21, 14, 12 }, values) -- VEC 8 with WG 64 failed
    assert.matches("<th class=\"n\">per_vec</th>", best)
    local rows = {}
    for tr in best:gmatch("<tr>(.-)</tr>") do rows[#rows + 1] = tr end
    assert.matches("<td>32</td><td>8</td>", rows[2])
    assert.matches('<td class="n">1.00x</td>$', rows[2])
    assert.matches(('<td class="n">%.2fx</td>$'):format(82 / 81), rows[3])
    assert.matches("<td>objective</td><td>per_vec, maximised</td>", html)
    assert.matches("<td>best</td><td>per_vec 82, ", html)
    -- the convergence by it, its axis named; the distribution stays in time
    assert.matches("<title>best per_vec so far against evaluations</title>", html)
    assert.matches("<title>best per_vec so far against time</title>", html)
    local conv = html:match('<figure id="fig%-convergence".-</figure>')
    assert.matches(">per_vec<", conv)
    assert.is_nil(conv:find(">time %(ms%)<"))
    assert.matches("Best per_vec so far %(red%)", conv)
    assert.matches(">time %(ms%)<", html:match('<figure id="fig%-distribution".-</figure>'))
    -- a CSV file names no objective: the command takes one
    local csv = files.tmpname(".csv")
    r:write(csv)
    local out, code = run(ktlua .. " report --objective=per_vec --maximize " .. csv .. " -o " .. path)
    assert.are.equal(0, code, out)
    html = files.read(path)
    check_numbers(html, kt.load(csv, { objective = "per_vec", maximize = true }))
    assert.matches('<table id="best">.-data%-value="82"', html)
    assert.matches("<title>best per_vec so far against evaluations</title>", html)
    out, code = run(ktlua .. " report --objective=speed " .. csv .. " -o " .. path)
    assert.are.equal(1, code)
    assert.matches("ktlua report: load options.objective: expected 'kernel' or a recorded metric "
      .. "%(per_vec%), got 'speed'", out)
    os.remove(csv)
    -- by the time, as before
    kt.load(json):report(path)
    html = files.read(path)
    conv = html:match('<figure id="fig%-convergence".-</figure>')
    assert.matches("<title>best time so far against evaluations</title>", conv)
    assert.matches(">time %(ms%)<", conv)
    assert.is_nil(html:find("data-value=", 1, true))
    os.remove(path)
  end)

  it("needs no gnuplot for results with nothing ok, and says when gnuplot is missing", function()
    local rec = kt.replay("spec/fixtures/small_cache.json")
    local failed = files.tmpname(".json")
    rec:tune{ search = "exhaustive" }:write(failed)
    -- keep only the failed records
    local text = files.read(failed)
    local kept = {}
    for line in text:gmatch("[^\n]+") do
      if not line:find('"status":"ok"') then kept[#kept + 1] = line end
    end
    text = table.concat(kept, "\n"):gsub(",\n%]", "\n]"):gsub('"best":%d+', '"best":null')
    files.write(failed, text .. "\n")
    local page_path = files.tmpname(".html")
    local env = "KTLUA_GNUPLOT=/nonexistent/gnuplot "
    local out, code = run(env .. ktlua .. " report " .. failed .. " -o " .. page_path)
    assert.are.equal(0, code, out)
    local html = files.read(page_path)
    check_page(html)
    assert.matches("No configuration came out ok", html)
    assert.are.equal(0, count(html, "<svg"))
    assert.matches('data%-status="compile_failed">1<', html)
    out, code = run(env .. ktlua .. " report " .. json .. " -o " .. page_path)
    assert.are.equal(1, code)
    assert.matches("ktlua report: gnuplot is needed to draw the plots and was not found %(cannot "
      .. "run /nonexistent/gnuplot: No such file or directory%): install it %(Debian: apt%-get "
      .. "install gnuplot%-nox%) or name it in KTLUA_GNUPLOT", out)
    for _, p in ipairs({ failed, page_path }) do os.remove(p) end
  end)

  it("stops a gnuplot that takes too long, and says what a failing one said", function()
    local slow = files.tmpname(".sh")
    files.write(slow, "#!/bin/sh\nsleep 900\n")
    local bad = files.tmpname(".sh")
    files.write(bad, "#!/bin/sh\necho 'line 3: undefined variable: x' >&2\nexit 1\n")
    run("chmod +x " .. slow .. " " .. bad)
    local page_path = files.tmpname(".html")
    local t0 = kt.clock()
    local out, code = run("KTLUA_GNUPLOT=" .. slow .. " " .. ktlua .. " report --timeout=0.5 "
      .. json .. " -o " .. page_path)
    assert.is_true(kt.clock() - t0 < 300) -- killed, not waited for (even a busy machine is quicker)
    assert.are.equal(1, code)
    assert.matches("ktlua report: gnuplot: " .. esc(slow) .. " did not finish within 0.5 s %(killed%)", out)
    out, code = run("KTLUA_GNUPLOT=" .. bad .. " " .. ktlua .. " report " .. json .. " -o " .. page_path)
    assert.are.equal(1, code)
    assert.matches("ktlua report: gnuplot failed %(exit status 1%):\nline 3: undefined variable: x", out)
    assert.is_false(files.exists(page_path))
    os.remove(slow)
    os.remove(bad)
  end)

  it("refuses bad options and arguments", function()
    assert.has_error(function() results:report() end,
      "results:report: expected the path of the page to write")
    assert.has_error(function() results:report("x.html", { tops = 3 }) end,
      "results:report: unknown option 'tops'")
    assert.has_error(function() results:report("x.html", { top = 0 }) end,
      "results:report: option top must be a positive integer")
    assert.has_error(function() results:report("x.html", { png = "yes" }) end,
      "results:report: option png must be a boolean, got string")
    local ok, err = pcall(results.report, results, "/nonexistent/dir/page.html")
    assert.is_false(ok)
    assert.matches("results:report: cannot write /nonexistent/dir/page.html: ", err)
    local out, code = run(ktlua .. " report")
    assert.are.equal(1, code)
    assert.matches("ktlua report: no results file given\nusage: ktlua report", out)
    out, code = run(ktlua .. " report --bogus " .. json)
    assert.are.equal(1, code)
    assert.matches("ktlua report: unexpected argument '%-%-bogus'", out)
    out, code = run(ktlua .. " report /nonexistent.json")
    assert.are.equal(1, code)
    assert.matches("^ktlua: ktlua report: cannot read /nonexistent.json: No such file or directory\n$", out)
    out, code = run(ktlua .. " report " .. json .. " -o " .. json)
    assert.are.equal(1, code)
    assert.matches("the page would replace the results file", out)
    out = run(ktlua .. " report --help")
    assert.matches("^usage: ktlua report %[%-o PAGE%]", out)
  end)

  it("is in the help and the man page", function()
    local out = run(ktlua .. " --help")
    assert.matches("ktlua report [-o PAGE] [--png] [--top=N] [--timeout=S]\n"
      .. "                    [--objective=NAME [--maximize]] RESULTS", out, 1, true)
    assert.matches("KTLUA_GNUPLOT", out, 1, true)
    out = run("groff -man -Tascii doc/ktlua.1 | col -b")
    assert.matches("ktlua%s+report%s+%[%-o%s+page%]%s+%[%-%-png%]%s+%[%-%-top=n%]%s+%[%-%-timeout=s%]%s+"
      .. "%[%-%-objec%-?%s*tive=name%s+%[%-%-maximize%]%]%s+results", out)
    assert.matches("KTLUA_GNUPLOT", out, 1, true)
  end)
end)

describe("results' elapsed_ms", function()
  it("grows through a tuning and survives JSON and journals", function()
    local r = results
    local last = 0
    for _, x in ipairs(r:list()) do
      assert.is_true(x.elapsed_ms >= last and x.elapsed_ms <= r:summary().wall_ms)
      last = x.elapsed_ms
    end
    local json = files.tmpname(".json")
    r:write(json)
    for _, back in ipairs({ kt.load(json), kt.load(journal) }) do
      for i, x in ipairs(r:list()) do assert.are.equal(x.elapsed_ms, back[i].elapsed_ms) end
    end
    -- a file without it (older ktlua) reads as unknown, and writes back without it
    local text = files.read(json):gsub(',"elapsed_ms":[^,]+', "")
    files.write(json, text)
    local old = kt.load(json)
    assert.is_nil(old[1].elapsed_ms)
    old:write(json)
    assert.are.equal(text:match('"results":.*'), files.read(json):match('"results":.*'))
    files.write(json, (text:gsub('"compile_ms":', '"elapsed_ms":1e999,"compile_ms":', 1)))
    assert.has_error(function() kt.load(json) end)
    os.remove(json)
  end)
end)

describe("ktlua.spawn", function()
  local spawn = require "ktlua.spawn"

  it("runs a program with its arguments as they are, with no shell", function()
    local out = files.tmpname(".txt")
    assert.are.equal(0, spawn.run({ "printf", "%s|", "a b", "$(echo no); rm -rf /x", "'q'" },
                                  { stdout = out }))
    assert.are.equal("a b|$(echo no); rm -rf /x|'q'|", files.read(out))
    local input = files.tmpname(".txt")
    files.write(input, "from a file\n")
    assert.are.equal(0, spawn.run({ "cat" }, { stdin = input, stdout = out }))
    assert.are.equal("from a file\n", files.read(out))
    assert.are.equal(3, spawn.run({ "sh", "-c", "exit 3" }))
    assert.are.equal(128 + 9, spawn.run({ "sh", "-c", "kill -9 $$" }))
    os.remove(out)
    os.remove(input)
  end)

  it("says why a program did not run or was stopped", function()
    assert.are.same({ nil, "cannot run no-such-program-here: No such file or directory" },
                    { spawn.run({ "no-such-program-here" }) })
    assert.are.same({ nil, "cannot run cat: cannot read /nonexistent/in: No such file or directory" },
                    { spawn.run({ "cat" }, { stdin = "/nonexistent/in" }) })
    local t0 = kt.clock()
    assert.are.same({ nil, "sleep did not finish within 0.2 s (killed)" },
                    { spawn.run({ "sleep", "900" }, { timeout = 0.2 }) })
    assert.is_true(kt.clock() - t0 < 300) -- killed, not waited for
    assert.has_error(function() spawn.run({}) end)
    assert.has_error(function() spawn.run({ "true" }, { time = 1 }) end,
      "spawn options: unknown field 'time' (expected one of: stdin, stdout, stderr, timeout)")
  end)
end)
