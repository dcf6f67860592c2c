-- Files in specs: temporary names, reading and writing whole files.
local files = {}

-- A name for a temporary file (not created), ending with ext.
function files.tmpname(ext)
  local path = os.tmpname()
  os.remove(path)
  return path .. (ext or "")
end

function files.read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

function files.write(path, text, mode)
  local f = assert(io.open(path, mode or "wb"))
  f:write(text)
  f:close()
end

function files.exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

function files.lines(path)
  local t = {}
  for line in io.lines(path) do t[#t + 1] = line end
  return t
end

return files
