-- ktlua.search_tabu: tabu search, written in Lua as the worked example of
-- a searcher that is a Lua table (doc/searchers.md tells the whole story).
--
--   local tabu = require "ktlua.search_tabu"
--   local results = tuner:tune(k, {search = tabu.new{tenure = 8}, seed = 1,
--                                  stop = {count = 200}})
--
-- From a random start, each step evaluates every unexplored neighbour of
-- the current configuration (one parameter changed), then moves to the
-- fastest neighbour that is not tabu, even when it is slower than the
-- current one: that is how tabu search leaves local optima. The
-- configuration it leaves becomes tabu for `tenure` steps, so that the
-- walk does not fall straight back; a tabu neighbour is still taken when
-- it is the fastest configuration found so far (aspiration). When every
-- neighbour is tabu or failed, or when the walk has wandered through
-- MAX_IDLE explored configurations in a row without finding anything new
-- to evaluate, it restarts from a random unexplored configuration.
--
-- Options: tenure (8), adjacent (false: any other value of a parameter is
-- a neighbour; true: only the values listed next to it).

local MAX_IDLE = 50

local Tabu = {}
Tabu.__index = Tabu

local M = {}

function M.new(options)
  options = options or {}
  for k in pairs(options) do
    if k ~= "tenure" and k ~= "adjacent" then
      error(("search_tabu.new: unknown option '%s' (expected tenure, adjacent)"):format(k), 2)
    end
  end
  local tenure = options.tenure or 8
  if math.type(tenure) ~= "integer" or tenure < 0 then
    error("search_tabu.new: tenure must be a non-negative integer", 2)
  end
  return setmetatable({tenure = tenure, adjacent = options.adjacent and true or false}, Tabu)
end

-- init(space): the space view of the kernel (or replay) being tuned. Its
-- helpers (neighbors, random_unexplored, explored, ...) follow the tuning:
-- what has been evaluated is "explored". State is reset here, so that one
-- searcher table may serve several tunings.
function Tabu:init(space)
  self.space = space
  self.current = nil -- configuration index of the walk, nil before a start
  self.queue = nil   -- neighbours of current still to evaluate
  self.tabu = {}     -- index -> the step until which it is tabu
  self.step = 0
  self.idle = 0      -- moves since the last proposal
  self.waiting = 0   -- proposals whose results have not come back
  self.best_ms = math.huge
end

-- The neighbour to move to once all neighbours are known, or nil.
function Tabu:choose()
  local best, best_ms
  for _, i in ipairs(self.space:neighbors(self.current, {adjacent = self.adjacent})) do
    local _, ms = self.space:explored(i) -- ms is nil when it failed
    local allowed = (self.tabu[i] or 0) <= self.step or (ms and ms <= self.best_ms)
    if allowed and ms and (not best or ms < best_ms) then best, best_ms = i, ms end
  end
  return best
end

-- next(n): up to n configuration indices to evaluate (0-based); none while
-- results are awaited (the tuning asks again after the next one), and nil
-- when the searcher has nothing left (the tuning then ends).
function Tabu:next(n)
  while true do
    if self.waiting > 0 and not (self.queue and #self.queue > 0) then return {} end
    if not self.current then
      self.current = self.space:random_unexplored()
      if not self.current then return nil end -- everything is explored
      self.idle = 0
      self.waiting = 1
      return {self.current}
    end
    if not self.queue then
      self.queue = self.space:neighbors(self.current, {adjacent = self.adjacent, unexplored = true})
    end
    if #self.queue > 0 then
      local batch = {}
      while #batch < n and #self.queue > 0 do batch[#batch + 1] = table.remove(self.queue) end
      self.idle = 0
      self.waiting = self.waiting + #batch
      return batch
    end
    self.step = self.step + 1
    self.idle = self.idle + 1
    self.tabu[self.current] = self.step + self.tenure
    self.current = self.idle <= MAX_IDLE and self:choose() or nil -- nil: restart
    self.queue = nil
  end
end

-- report(index, result): how a proposal went. result.status is "ok" (then
-- result.time_ms is the time) or why it failed; result.config has the
-- parameter values.
function Tabu:report(index, result)
  self.waiting = math.max(0, self.waiting - 1) -- also told of proposals evaluated before
  if result.time_ms and result.time_ms < self.best_ms then self.best_ms = result.time_ms end
end

return M
