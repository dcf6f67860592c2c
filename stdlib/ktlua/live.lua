-- ktlua.live: the live view of a tuning, an HTML page kept up to date
-- while the tuning runs (tune option live = "tuning.html", `ktlua run
-- --live=PAGE`, `ktlua report --follow JOURNAL`).
--
-- A follower (live.follow, the command `ktlua report --follow`) reads the
-- tuning's journal whenever it has grown and writes the page again: the
-- report of the results so far (ktlua.report_html: best so far against
-- evaluations and time, the statuses, each parameter's configurations),
-- with what a finished report lacks: how far the tuning is, the time left,
-- and a meta refresh, so that the browser reloads it. Each page replaces
-- the last whole (written beside it, then renamed), so a browser never
-- reads half of one. Pages are written at most every second, and no more
-- often than keeps their writing (gnuplot, mostly) under a twentieth of
-- the time; the last is the finished report, which no longer reloads.
--
-- The tune option runs the follower as a process of its own beside the
-- tuning (live.start), at the lowest priority, so that the tuning pays
-- only its journal (one line written per configuration) and on a busy
-- machine the page waits rather than the kernels; when the tuning ends it
-- stops the follower and writes the finished report from the results
-- themselves (live.finish). `ktlua report --follow` follows a journal
-- that a tuning in another process holds (journal.h: its lock), and
-- writes the finished report when no tuning holds it any longer.
local live = {}

local watch = require "ktlua.watch"

local POLL = 0.25    -- seconds between looks at the journal
local SPACING = 1    -- seconds, at least, between two pages
local SHARE = 20     -- ... and at least this many times the last page's writing

local function fmt_duration(s)
  if s < 60 then return ("%.1f s"):format(s) end
  if s < 3600 then return ("%dm%02ds"):format(s // 60, math.floor(s % 60)) end
  return ("%dh%02dm"):format(s // 3600, math.floor(s % 3600) // 60)
end
live.duration = fmt_duration

-- How many configurations the tuning may evaluate: its space, or less by
-- the budget it was given (count, fraction; as the tuning rounds it).
local function budget(space, o)
  local n = space > 0 and space or nil
  if o.count then n = math.min(n or math.huge, o.count) end
  if o.fraction and space > 0 then n = math.min(n, math.ceil(o.fraction * space)) end
  return n
end

-- How far a running tuning is, from its results so far (read from its
-- journal: each result's `finished`, in Unix seconds, and `elapsed_ms`,
-- since the search began) and the time now; since names when the journal
-- was begun, for a tuning without a result yet.
function live.progress(results, o, now, since)
  local list = results:list()
  local done, start, last = #list, nil, nil
  for i = done, 1, -1 do
    local r = list[i]
    if type(r.finished) == "number" and r.elapsed_ms then
      start, last = r.finished - r.elapsed_ms / 1e3, r.finished
      break
    end
  end
  start = start or since
  local total = budget(results:summary().space_valid, o)
  local p = { done = done, budget = total, elapsed = math.max(0, now - start),
              last_ago = last and math.max(0, now - last) }
  -- the rate of this run (a resumed tuning took the others from its journal at once)
  local ran = 0
  for _, r in ipairs(list) do
    if type(r.finished) == "number" and r.finished >= start then ran = ran + 1 end
  end
  if total and ran > 0 and last then
    p.left = math.max(0, (last - start) / ran * math.max(0, total - done) - (now - last))
  end
  if o.seconds then p.left = math.min(p.left or math.huge, math.max(0, o.seconds - p.elapsed)) end
  if total and done >= total then p.left = 0 end
  local report = require "ktlua.report"
  if list[done] and report.busy(list[done], results) then p.busy = report.busy_line(list[done], results) end
  return p
end

-- ---- reading a journal ----

-- The start of the file (its first line, at most 1 MiB), or nil and why.
local function head(path)
  local f, why = io.open(path, "rb")
  if not f then return nil, why end
  local text = f:read(1 << 20) or ""
  f:close()
  return text:match("^[^\n]*")
end

-- Refuses, saying why, a file that is no ktlua journal: what a journal's
-- header begins with, or else what the file seems to be. An empty file is
-- a journal whose tuning has not yet written its header, while one holds it.
local function check_journal(path, who)
  local line, why = head(path)
  if not line then error(("%s: cannot read %s"):format(who, why), 0) end
  if line:match('^{"format":"ktlua%-journal"') then return end
  if line == "" then
    local held = watch.held(path)
    if held then return end
    error(("%s: %s is empty: no tuning has written a journal there (a tuning writes its "
      .. "header first, then a line per configuration)"):format(who, path), 0)
  end
  local format = line:match('^%s*{%s*"format"%s*:%s*"([^"]*)"')
  local what
  if format == "ktlua-results" then
    what = ("it holds a finished tuning's results (format ktlua-results): `ktlua report %s` "
      .. "writes their page"):format(path)
  elseif format then
    what = ("its format is '%s', not ktlua-journal"):format(format)
  elseif line:match("^index,") then
    what = "it is a CSV results file"
  elseif line:match("^%s*[{%[]") then
    what = "it is JSON of another kind (another tool's results?), not a journal's header"
  else
    what = "its first line is no journal header ({\"format\":\"ktlua-journal\", ...})"
  end
  error(("%s: %s is not a ktlua journal: %s"):format(who, path, what), 0)
end
live.check_journal = check_journal

-- ---- following ----

-- live.follow(journal, page, {count =, fraction =, seconds =, top =,
-- timeout =, input =}): writes page while a tuning holds the journal (with
-- input: while standard input is open, until a 'q' comes, which ends the
-- follow without a page more), then the finished report; returns the
-- number of pages written. Errors name who.
function live.follow(journal, page, o, who)
  o = o or {}
  who = who or "ktlua report --follow"
  local kt = require "ktlua"
  local html = require "ktlua.report_html"
  check_journal(journal, who)
  local ok, why = watch.writable(page)
  if not ok then error(who .. ": " .. why, 0) end
  local seen, written_at, spacing, pages = nil, -math.huge, SPACING, 0
  local function final()
    local results = kt.load(journal)
    html.write_page(results, page, { top = o.top, timeout = o.timeout, source = journal }, who)
    return pages + 1
  end
  while true do
    local size, mtime = watch.stat(journal)
    if not size then error(who .. ": " .. mtime, 0) end
    if not o.input then
      local held, why = watch.held(journal)
      if held == nil then error(who .. ": " .. why, 0) end
      if not held then return final() end
    end
    local now = kt.clock()
    local state = size .. ":" .. mtime
    if state ~= seen and now - written_at >= spacing and size > 0 then
      local ok, results = pcall(kt.load, journal)
      -- a header being written is no journal yet; anything else is said
      if not ok and not tostring(results):match(": line 1: ") then error(who .. ": " .. results, 0) end
      if ok then
        local p = live.progress(results, o, watch.now(), mtime)
        p.refresh = math.max(2, math.ceil(spacing))
        html.write_page(results, page, { top = o.top, timeout = o.timeout, source = journal,
                                         live = p }, who)
        pages, seen = pages + 1, state
        written_at = kt.clock()
        spacing = math.max(SPACING, SHARE * (written_at - now))
      end
    end
    local word = watch.wait(POLL, o.input)
    if word == "quit" then return pages end
    if word == "closed" then return final() end -- the tuning's process is gone
  end
end

-- ---- the tune option ----

-- Starts the follower of journal for page: `ktlua report --follow` with
-- --stdin and the tuning's budget (its stop), for the time left. Returns
-- it, or nil and why.
function live.start(page, journal, stop)
  local exe, why = watch.ktlua()
  if not exe then return nil, why end
  local argv = { exe, "report", "--follow", journal, "-o", page, "--stdin" }
  for _, k in ipairs({ "count", "fraction", "seconds" }) do
    if type(stop[k]) == "number" then argv[#argv + 1] = ("--%s=%.17g"):format(k, stop[k]) end
  end
  return watch.start(argv)
end

local Session = {}
Session.__index = Session

-- At each result (lk_live.c's progress hook): the follower starts at the
-- first, once the journal holds the header and a result; one that cannot
-- start is said once, and the tuning goes on (its last page comes all the same).
function Session:result()
  if self.follower or self.why then return end
  self.follower, self.why = live.start(self.page, self.journal, self.stop)
  if not self.follower then
    io.stderr:write("ktlua: tune options.live: no live page until the tuning ends: ", self.why, "\n")
  end
end

-- When the tuning returns: the follower stops (finishing the page it is
-- writing, if any), then the finished report is written from the results,
-- or, where the tuning failed before it had any, a page says so; the
-- journal made for the page is removed.
function Session:finish(results, err)
  local what = "tune options.live"
  if self.follower then
    local code, why = self.follower:stop()
    if code ~= 0 then
      io.stderr:write(("ktlua: %s: the live view's process %s\n"):format(what,
        code and ("ended with status " .. code) or why))
    end
  end
  self.follower, self.why = nil, "finished"
  if self.temp then os.remove(self.temp) end
  local html = require "ktlua.report_html"
  if results then
    html.write_page(results, self.page, {}, what)
  else
    html.write_note(self.page, ("Tuning %s on %s"):format(self.task, self.device),
                    "The tuning stopped before its first result: " .. tostring(err or "?"))
  end
end

-- live.session(page, stop, task, device, journal) -> session, journal: for
-- tuner:tune's option live, before the tuning: the page can be written
-- (its folder exists and takes a file) and drawn (gnuplot is there), and
-- its first page says the tuning is starting. A tuning without a journal
-- gets one of its own, in the temporary folder, removed at its end.
function live.session(page, stop, task, device, journal)
  local what = "tune options.live"
  if type(page) ~= "string" or page == "" then
    error(("%s: expected the path of the page to write, got %s"):format(what, type(page)), 0)
  end
  if journal == page then error(what .. ": the page would replace the journal " .. page, 0) end
  local ok, why = watch.writable(page)
  if not ok then error(what .. ": " .. why, 0) end
  ok, why = pcall(require("ktlua.gnuplot").check)
  if not ok then error(what .. ": " .. tostring(why), 0) end
  require("ktlua.report_html").write_note(page, ("Tuning %s on %s"):format(task, device),
    "The tuning is starting: its first configurations are being compiled and run.", 2)
  local s = setmetatable({ page = page, stop = type(stop) == "table" and stop or {},
                           task = task, device = device }, Session)
  if not journal then
    s.temp = os.tmpname()
    journal = s.temp
  end
  s.journal = journal
  return s, journal
end

return live
