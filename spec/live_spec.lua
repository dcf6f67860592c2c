-- The live view of a tuning (ktlua.live): `ktlua report --follow JOURNAL`
-- while a tuning holds its journal, written step by step here, and the
-- tune option live, which runs that follower beside the tuning; the
-- running page and the finished one rendered by headless Chromium, hostile
-- names escaped, and the refusals before any work. Waits are on the page
-- changing, with limits that only a failure reaches.
local kt = require "ktlua"
local watch = require "ktlua.watch"
local files = require "spec.support.files"
local shell = require "spec.support.shell"
local chromium = require "spec.support.chromium"
local ktlua, run = shell.ktlua, shell.run

-- A tiny tuning with a failure: VEC = 8 with WG = 64 does not compile.
local SOURCE = [[
  #if VEC == 8 && WG == 64
  #error this variant does not exist
  #endif
  __kernel void twice(__global const float *a, __global float *c) {
    int i = get_global_id(0) * VEC;
    for (int v = 0; v < VEC; v++) c[i + v] = 2.0f * a[i + v];
  }]]

local function kernel(tuner)
  local n = 4096
  local a, c = kt.array("float", n):random(1), kt.array("float", n)
  local k = tuner:kernel{ name = "twice", global = n, group = 1, args = { a:input(), c:output() },
                          source = SOURCE }
  k:param("WG", { 16, 32, 64 }, { group_x = "mul" })
  k:param("VEC", { 1, 2, 4, 8 }, { global_x = "div" })
  k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = 2 * a[i] end end)
  return k
end

-- Until cond() gives something (looking every 50 ms); past limit seconds,
-- which only a failure reaches, the test fails saying what it waited for.
local function wait_for(what, cond, limit)
  local t0 = kt.clock()
  while true do
    local v = cond()
    if v then return v end
    assert(kt.clock() - t0 < (limit or 300), "waited too long for " .. what)
    watch.wait(0.05)
  end
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

-- The page once it is whole and says pattern.
local function page_with(path, pattern)
  return wait_for(path .. " with " .. pattern, function()
    local text = read(path)
    return text and text:find(pattern) and text:match("</html>\n$") and text
  end)
end

-- Whole, offline, no script: what every page must be (report_spec's rules).
local function check_page(html)
  assert.matches("^<!DOCTYPE html>", html)
  assert.matches("</html>\n$", html)
  for _, bad in ipairs({ "<script", "<link", "<img", "<iframe", "src=", "@import", "url%(http" }) do
    assert.is_nil(html:find(bad), bad)
  end
end

local function count(text, pattern)
  local n = 0
  for _ in text:gmatch(pattern) do n = n + 1 end
  return n
end

-- The lines of a journal: its header, then its results.
local journal_lines

setup(function()
  local journal = files.tmpname(".jsonl")
  local tuner = kt.tuner()
  tuner:tune(kernel(tuner), { repeats = 3, fail_fast = false, journal = journal, progress = false })
  tuner:close()
  journal_lines = files.lines(journal)
  os.remove(journal)
end)

-- A holder of a journal's lock, as a tuning holds it: flock(1), until closed.
-- (Let go however the test ends: a follower of a journal still held would
-- follow it for ever, and the test's end waits for the follower.)
local function hold(path)
  local holder = io.popen("exec flock -x " .. path .. " cat", "w")
  finally(function() if io.type(holder) == "file" then holder:close() end end)
  wait_for("the lock of " .. path, function() return watch.held(path) end)
  return holder
end

describe("ktlua report --follow", function()
  it("keeps the page of a held journal up to date, then writes the finished report", function()
    assert.are.equal(13, #journal_lines) -- the header and 12 configurations
    local journal, page = files.tmpname(".jsonl"), files.tmpname(".html")
    -- the tuning half way: six results and half of the seventh's line; the sixth's runs were
    -- cut short by a busy machine (busy_machine_spec)
    local sixth = journal_lines[7]:gsub('"launches":', '"crowded":true,"launches":', 1)
    if not sixth:find('"waited_ms":', 1, true) then -- a CPU device's waits, where there were any
      sixth = sixth:gsub('"elapsed_ms":', '"waited_ms":3.5,"elapsed_ms":', 1)
    end
    files.write(journal, table.concat(journal_lines, "\n", 1, 6) .. "\n" .. sixth .. "\n"
      .. journal_lines[8]:sub(1, 40))
    local holder = hold(journal)
    local follower = io.popen(ktlua .. " report --follow " .. journal .. " -o " .. page
      .. " --count=12 2>&1; echo exit:$?")
    local html = page_with(page, 'data%-done="6"')
    check_page(html)
    assert.matches('<meta http%-equiv="refresh" content="%d+">', html)
    assert.matches('<p id="live" class="live" data%-state="running" data%-done="6" data%-budget="12">'
      .. "<strong>Running</strong>: 6 of 12 configurations %(50%%%), ", html)
    assert.matches("the last result came [%d.]+ s ago", html)
    local half = kt.load(journal)
    -- the PoCL threads ktlua gave the device process, which the journal keeps, where it gave any
    local threads = half.device_threads
    local pocl = threads and ("; PoCL runs %d threads?, the processors free when its device process "
      .. "started %%(POCL_MAX_PTHREAD_COUNT sets them%%)"):format(threads) or ""
    assert.matches('<br><span id="busy">The machine is busy %(load average [%d.]+ on %d+ processors?; '
      .. "the device&#39;s threads waited %d+%% of a configuration&#39;s runs for a processor%)" .. pocl
      .. "; a configuration whose threads wait that long stops at 10 timed runs", html)
    assert.are.equal(6, #half)
    assert.matches(('id="evaluated" data%%-count="%d"'):format(6), html)
    assert.matches('<table id="best">', html)
    assert.are.equal(3 + 2, count(html, "<svg")) -- convergences, distribution, WG and VEC
    if chromium.installed() then
      local shot = chromium.screenshot(page, 1300, 3000)
      local live, live_top = shot.find(255, 248, 225) -- the running tuning's box
      local red, red_top = shot.find(214, 39, 40)       -- best so far
      local blue = shot.find(31, 119, 180)              -- the distribution's bars
      local green = shot.find(44, 160, 44)              -- the parameters' boxes
      assert.is_true(live > 5000, "the box's pixels: " .. live)
      assert.is_true(red > 300 and blue > 1000 and green > 300,
        ("red %d, blue %d, green %d pixels"):format(red, blue, green))
      assert.is_true(live_top < red_top, "the box above the plots")
    end
    -- the rest, step by step: the seventh's line ends, then the others come
    files.write(journal, journal_lines[8]:sub(41) .. "\n", "ab")
    -- the seventh was not crowded: busy only where ktlua gave PoCL fewer threads (as the
    -- tuning's progress says it, report.busy)
    local waited = journal_lines[8]:find('"waited_ms":', 1, true) ~= nil
    assert.are.equal(threads ~= nil and waited, page_with(page, 'data%-done="7"'):find('id="busy"', 1, true) ~= nil)
    files.write(journal, table.concat(journal_lines, "\n", 9, 13) .. "\n", "ab")
    html = page_with(page, 'data%-done="12"')
    assert.matches("12 of 12 configurations %(100%%%), .-, about 0%.0 s left", html)
    -- the tuning ends: the follower writes the finished report and exits
    holder:close()
    local out = follower:read("a")
    follower:close()
    assert.are.equal(page .. "\nexit:0\n", out)
    html = read(page)
    check_page(html)
    assert.is_nil(html:find("refresh", 1, true))
    assert.is_nil(html:find('id="live"', 1, true))
    -- the page `ktlua report JOURNAL` writes
    local report = files.tmpname(".html")
    out = run(ktlua .. " report " .. journal .. " -o " .. report)
    assert.are.equal(read(report), html)
    if chromium.installed() then
      local shot = chromium.screenshot(page, 1300, 3000)
      assert.are.equal(0, (shot.find(255, 248, 225)))
      assert.is_true(shot.find(214, 39, 40) > 300 and shot.find(255, 127, 14) > 4,
        "the best so far and the failed configuration in the finished page")
    end
    for _, p in ipairs({ journal, page, report }) do os.remove(p) end
  end)

  it("escapes hostile names as the report does", function()
    local hostile = [[<script>alert("x")</script>&<b>]]
    local json = kt.json.encode(hostile)
    local journal, page = files.tmpname(".jsonl"), files.tmpname(".html")
    local lines = {}
    for i = 1, 7 do lines[i] = journal_lines[i]:gsub('"twice"', (json:gsub("%%", "%%%%"))) end
    -- and a parameter S whose one value is hostile
    local j = json:gsub("%%", "%%%%")
    lines[1] = lines[1]:gsub('("values":%[1,2,4,8%]})%]', '%1,{"name":"S","values":[' .. j .. ']}]')
    for i = 2, 7 do lines[i] = lines[i]:gsub('("config":{[^}]*)}', '%1,"S":' .. j .. '}') end
    files.write(journal, table.concat(lines, "\n") .. "\n")
    assert.are.equal(hostile, kt.load(journal).task)
    local holder = hold(journal)
    local follower = io.popen(ktlua .. " report --follow " .. journal .. " -o " .. page .. " 2>&1")
    local html = page_with(page, 'data%-done="6"')
    check_page(html)
    assert.matches("<h1>Tuning &lt;script&gt;alert%(&quot;x&quot;%)&lt;/script&gt;&amp;&lt;b&gt; on ", html)
    local ok, failed = 0, 0
    for _, r in ipairs(kt.load(journal):list()) do
      if r.status == "ok" then ok = ok + 1 else failed = failed + 1 end
    end
    assert.are.equal(6, ok + failed)
    assert.matches(('<table class="values" data%%-param="S">%%s*<tr>.-</tr>%%s*<tr><td>&lt;script&gt;'
      .. 'alert%%(&quot;x&quot;%%)&lt;/script&gt;&amp;&lt;b&gt;</td><td class="n">%d</td><td class="n">%d'
      .. '</td>'):format(ok, failed), html)
    assert.is_nil(html:find(hostile, 1, true))
    holder:close()
    follower:read("a")
    follower:close()
    html = read(page)
    check_page(html)
    assert.is_nil(html:find(hostile, 1, true))
    os.remove(journal)
    os.remove(page)
  end)

  it("refuses what is no ktlua journal, saying what it is, and bad options", function()
    local results, csv = files.tmpname(".json"), files.tmpname(".csv")
    local whole = files.tmpname(".jsonl")
    files.write(whole, table.concat(journal_lines, "\n") .. "\n")
    local r = kt.load(whole)
    os.remove(whole)
    r:write(results)
    r:write(csv)
    local out, code = run(ktlua .. " report --follow " .. results)
    assert.are.equal(1, code)
    assert.are.equal(("ktlua: ktlua report --follow: %s is not a ktlua journal: it holds a finished "
      .. "tuning's results (format ktlua-results): `ktlua report %s` writes their page\n")
      :format(results, results), out)
    out, code = run(ktlua .. " report --follow " .. csv)
    assert.are.equal(1, code)
    assert.are.equal(("ktlua: ktlua report --follow: %s is not a ktlua journal: it is a CSV results "
      .. "file\n"):format(csv), out)
    local text = files.tmpname(".jsonl")
    files.write(text, "hello\n")
    out = run(ktlua .. " report --follow " .. text)
    assert.matches("is not a ktlua journal: its first line is no journal header", out)
    files.write(text, "")
    out = run(ktlua .. " report --follow " .. text)
    assert.matches("is empty: no tuning has written a journal there", out)
    out = run(ktlua .. " report --follow /nonexistent.jsonl")
    assert.are.equal("ktlua: ktlua report --follow: cannot read /nonexistent.jsonl: No such file or "
      .. "directory\n", out)
    out, code = run(ktlua .. " report --follow " .. text .. " --png")
    assert.are.equal(1, code)
    assert.matches("ktlua report: %-%-png is not for %-%-follow", out)
    out = run(ktlua .. " report --count=3 " .. results)
    assert.matches("ktlua report: %-%-count goes with %-%-follow JOURNAL", out)
    out = run(ktlua .. " report --follow " .. text .. " -o " .. text)
    assert.matches("the page would replace the journal", out)
    out = run(ktlua .. " report --follow " .. text .. " --seconds=0")
    assert.matches("ktlua report: %-%-seconds needs a positive number", out)
    -- a page that cannot be written, before anything is followed
    local whole_journal = files.tmpname(".jsonl")
    files.write(whole_journal, table.concat(journal_lines, "\n") .. "\n")
    out, code = run(ktlua .. " report --follow " .. whole_journal .. " -o /nonexistent/dir/page.html")
    assert.are.equal(1, code)
    assert.matches("^ktlua: ktlua report %-%-follow: cannot write /nonexistent/dir/page.html: ", out)
    os.remove(whole_journal)
    for _, p in ipairs({ results, csv, text }) do os.remove(p) end
  end)
end)

describe("tune option live", function()
  it("keeps the page up to date while the tuning runs, then makes it the finished report", function()
    local page, journal = files.tmpname(".html"), files.tmpname(".jsonl")
    local tuner = kt.tuner()
    local k = kernel(tuner)
    local first, running
    local results = tuner:tune(k, { repeats = 3, fail_fast = false, journal = journal,
      live = page, stop = { count = 10 }, search = "exhaustive",
      progress = function(_, so_far)
        first = first or read(page) -- written before the tuning began
        if #so_far == 5 then running = page_with(page, 'data%-state="running"') end
      end })
    check_page(first)
    assert.matches('<meta http%-equiv="refresh" content="2">', first)
    assert.matches('<p id="live" class="live" data%-state="starting">The tuning is starting', first)
    assert.matches("<h1>Tuning twice on ", first)
    check_page(running)
    local done = tonumber(running:match('data%-done="(%d+)"'))
    assert.is_true(done >= 1 and done <= 5, "done: " .. tostring(done))
    assert.matches(('data%%-budget="10"><strong>Running</strong>: %d of 10 configurations'):format(done),
      running)
    -- the finished report, as results:report writes it
    assert.are.equal(10, #results)
    local report = files.tmpname(".html")
    results:report(report)
    assert.are.equal(read(report), read(page))
    assert.are.equal(10, #kt.load(journal))
    tuner:close()
    for _, p in ipairs({ page, journal, report }) do os.remove(p) end
  end)

  it("is refused before the tuning where the page cannot be written or drawn", function()
    local tuner = kt.tuner()
    local k = kernel(tuner)
    local journal = files.tmpname(".jsonl")
    local ran = false
    local function tune(live)
      return pcall(tuner.tune, tuner, k, { journal = journal, live = live,
                                            progress = function() ran = true end })
    end
    local ok, err = tune("/nonexistent/folder/page.html")
    assert.is_false(ok)
    assert.matches("^tune options.live: cannot write /nonexistent/folder/page.html: ", err)
    ok, err = tune(3)
    assert.is_false(ok)
    assert.are.equal("tune options.live: expected the path of the page to write, got number", err)
    ok, err = tune(journal)
    assert.is_false(ok)
    assert.are.equal("tune options.live: the page would replace the journal " .. journal, err)
    assert.is_false(ran)
    assert.is_false(files.exists(journal))
    tuner:close()
    -- without gnuplot: said before the tuning, as the report says it
    local script = files.tmpname(".lua")
    files.write(script, ([[
      local kt = require "ktlua"
      local tuner = kt.tuner()
      local c = kt.array("float", 64)
      local k = tuner:kernel{ name = "z", global = 64, group = 1, args = { c:output() },
        source = "__kernel void z(__global float *c) { c[get_global_id(0)] = 0; }" }
      k:param("WG", { 1, 2 }, { group_x = "mul" })
      tuner:tune(k, { live = %q, progress = function() print("ran") end })]]):format(
      files.tmpname(".html")))
    local out, code = run("KTLUA_GNUPLOT=/nonexistent/gnuplot " .. ktlua .. " " .. script)
    assert.are.equal(1, code)
    assert.matches("tune options.live: gnuplot is needed to draw the plots and was not found", out)
    assert.is_nil(out:find("ran", 1, true))
    os.remove(script)
  end)

  it("is ktlua run's --live and the examples' --live", function()
    local page = files.tmpname(".html")
    local out, code = run(ktlua .. " run spec/fixtures/t1/vadd_T1.json --count=3 --search=exhaustive "
      .. "--live=" .. page)
    assert.are.equal(0, code, out)
    local html = read(page)
    check_page(html)
    assert.matches('id="evaluated" data%-count="3"', html)
    assert.is_nil(html:find("refresh", 1, true))
    out, code = run(ktlua .. " examples/tune_vectoradd.lua --n=4096 --count=3 --live=" .. page)
    assert.are.equal(0, code, out)
    html = read(page)
    assert.matches('id="evaluated" data%-count="3"', html)
    assert.matches("<h1>Tuning vadd on ", html)
    os.remove(page)
  end)

  it("is in the help, the man page and ktlua run's usage", function()
    local out = run(ktlua .. " --help")
    assert.matches("ktlua report --follow JOURNAL [-o PAGE]", out, 1, true)
    out = run(ktlua .. " report --help")
    assert.matches("--follow keeps the page of a tuning", out, 1, true)
    out = run(ktlua .. " run --help")
    assert.matches("[--live=PAGE]", out, 1, true)
    out = run("groff -man -Tascii doc/ktlua.1 | col -b")
    assert.matches("ktlua%s+report%s+%-%-follow%s+journal", out)
    assert.matches("%-%-live=page", out)
  end)
end)
