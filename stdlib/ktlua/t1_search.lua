-- ktlua.t1_search: the searcher names of T1 files (Kernel Tuner's
-- strategies, KTT's searchers, ktlua's own) and the ktlua searcher each
-- runs as. Where the algorithm is not the same, `differs` says what ktlua
-- runs instead, and the reader notes it. doc/peers.md ("Strategies")
-- shows this table.
local search = {}

-- name (lower case, without spaces, '_' or '-') -> {ktlua searcher, differs}
local names = {
  -- the same algorithm
  bruteforce = { "exhaustive" }, exhaustive = { "exhaustive" },
  deterministic = { "exhaustive" }, -- KTT: every configuration in order
  randomsample = { "random" }, random = { "random" }, randomsearch = { "random" },
  simulatedannealing = { "annealing" }, annealing = { "annealing" },
  geneticalgorithm = { "genetic" }, genetic = { "genetic" },
  pso = { "pso" }, particleswarm = { "pso" },
  diffevo = { "differential" }, differentialevolution = { "differential" },
  differential = { "differential" },
  greedy = { "greedy" }, mcmc = { "mcmc" }, bestfirst = { "bestfirst" }, staged = { "staged" }, model = { "model" },
  -- the nearest ktlua has
  dualannealing = { "annealing", "simulated annealing, without dual annealing's local searches" },
  greedyils = { "greedy", "descent restarted from the best of a random sample, not from " ..
    "perturbations of the best" },
  greedymls = { "greedy", "descent restarted from the best of a random sample, not from one " ..
    "random configuration" },
  mls = { "greedy", "descent restarted from the best of a random sample, not from one random " ..
    "configuration" },
  basinhopping = { "greedy", "greedy descent with restarts, for basin hopping" },
  minimize = { "greedy", "greedy descent, for a local minimiser" },
  fireflyalgorithm = { "pso", "a particle swarm, for the firefly algorithm's swarm" },
  bayesopt = { "model", "a neural-network ensemble model (Falch and Elster), not a Gaussian " ..
    "process" },
}

-- The ktlua searcher for a file's name, and what differs (nil where the
-- algorithm is the same); nil where there is none.
function search.of(name)
  local key = name:lower():gsub("[%s_%-]", ""):gsub("searcher$", "")
  local t = names[key]
  if not t then return nil end
  return t[1], t[2]
end

return search
