-- kt.json: JSON for scripts through the core's own reader and writer.
local kt = require "ktlua"
local files = require "spec.support.files"
local json = kt.json

describe("kt.json", function()
  it("decodes objects, arrays, numbers, strings, booleans and null", function()
    local v = json.decode('{"a": [1, 2.5, "x\\u00e9", null, true, false], "b": {"c": {}}, "n": -3, "e": 1e3}')
    assert.same({ 1, 2.5, "xé", json.null, true, false }, v.a)
    assert.equal("integer", math.type(v.a[1]))
    assert.equal("float", math.type(v.e))
    assert.equal(1000, v.e)
    assert.same({ c = {} }, v.b)
    assert.equal(-3, v.n)
    assert.equal(json.null, json.decode("null"))
  end)

  it("encodes what it decodes, keys sorted, numbers as result files write them", function()
    local text = '{"a":[1,2.5,"x\\"y\\n",null,true],"b":{"c":{}},"n":-3}'
    assert.equal(text, json.encode(json.decode(text)))
    assert.equal('{"10":3,"a":2,"b":1}', json.encode({ b = 1, a = 2, [10] = 3 }))
    assert.equal("[1,2,3]", json.encode({ 1, 2, 3 }))
    assert.equal('{"1":"a","3":"c"}', json.encode({ [1] = "a", [3] = "c" }))
    assert.equal("{}", json.encode({}))
    assert.equal("0.1", json.encode(0.1))
    assert.equal("null", json.encode(nil))
    local shared = { 1 }
    assert.equal('[[1],[1],{"x":[1]}]', json.encode({ shared, shared, { x = shared } }))
  end)

  it("reads files, gzipped or not", function()
    local path = files.tmpname(".json")
    files.write(path, '{"x": [1, 2]}')
    assert.same({ x = { 1, 2 } }, json.read(path))
    os.remove(path)
    assert.equal(4, #json.read("spec/fixtures/schemas/T4-1.0.0-results-schema.json").properties.results.items.required)
  end)

  it("says what is wrong and where", function()
    assert.has_error(function() json.decode('{"a": [1,}') end,
      "kt.json.decode: JSON: line 1, column 10: expected a value")
    assert.has_error(function() json.decode('{"a": 1}\n x') end,
      "kt.json.decode: JSON: line 2, column 2: unexpected text after the value")
    assert.has_error(function() json.read("spec/fixtures/nothing.json") end,
      "kt.json.read: cannot read spec/fixtures/nothing.json: No such file or directory")
    assert.has_error(function() json.encode({ x = { y = 0 / 0 } }) end,
      "kt.json.encode: the value.x.y is not a finite number (JSON has none)")
    assert.has_error(function() json.encode({ print }) end,
      "kt.json.encode: the value[1] is a function (JSON has none)")
    assert.has_error(function() json.encode({ [true] = 1 }) end,
      "kt.json.encode: the value has a key of type boolean (JSON's are strings)")
    local t = {}
    t.t = { t }
    assert.has_error(function() json.encode(t) end,
      "kt.json.encode: the value.t[1] holds itself (JSON has no cycles)")
  end)
end)
