-- Every Lua example in the README runs.
describe("the README", function()
  local f = assert(io.open("README.md"))
  local text = f:read("a")
  f:close()
  local n = 0
  for code in text:gmatch("```lua\n(.-)```") do
    n = n + 1
    it("example " .. n .. " runs", function()
      local chunk = assert(load(code, "=README example " .. n))
      local print_ = print
      print = function() end -- keep the suite's output readable
      local ok, err = pcall(chunk)
      print = print_
      assert(ok, err)
    end)
  end
  it("has Lua examples", function() assert.is_true(n > 0) end)
end)
