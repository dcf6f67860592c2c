-- Running commands from specs: run(cmd) returns the command's output
-- (stdout and stderr) and its exit status; ktlua is the executable that
-- runs the suite (build/ktlua, or the sanitized one).
local shell = {}

shell.ktlua = arg and arg[-1] or "build/ktlua"

function shell.run(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"exit:$?\"")
  local out = p:read("a")
  p:close()
  local code = tonumber(out:match("exit:(%d+)%s*$"))
  return (out:gsub("exit:%d+%s*$", "")), code
end

-- The output of a command that must succeed (an error with its output if not).
function shell.must(cmd)
  local out, code = shell.run(cmd)
  assert(code == 0, cmd .. ": " .. out)
  return out
end

-- How many times a pattern matches in a command's output.
function shell.count(out, pattern)
  local n = 0
  for _ in out:gmatch(pattern) do n = n + 1 end
  return n
end

return shell
