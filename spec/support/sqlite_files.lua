-- Database files for the specs of kt.db: made by the sqlite3 shell from a
-- fixture's SQL, queried by it, and removed with their journal files.
local shell = require "spec.support.shell"
local files = require "spec.support.files"

local M = {}
local fixtures = "spec/fixtures/fuzz/"

-- A database made from spec/fixtures/fuzz/NAME (SQL).
function M.from_sql(name)
  local path = files.tmpname(".db")
  shell.must(("sqlite3 %s < %s%s"):format(path, fixtures, name))
  return path
end

-- What the sqlite3 shell prints for sql on the database at path.
function M.sqlite(path, sql) return shell.must(("sqlite3 %s %q"):format(path, sql)) end

-- The database at path and its -wal and -shm files.
function M.remove(path)
  for _, suffix in ipairs({ "", "-wal", "-shm" }) do os.remove(path .. suffix) end
end

return M
