-- Devices: listing, properties, choosing by string or table.
local kt = require "ktlua"

describe("devices", function()
  local list = kt.devices()

  it("include the PoCL CPU device with its properties as a plain table", function()
    local d = kt.device("opencl:0:0")
    assert.are.equal("opencl:0:0", d.id)
    assert.are.equal("opencl", d.backend)
    assert.are.equal("table", type(d))
    for _, key in ipairs({ "name", "vendor", "type", "platform", "driver_version", "version",
                           "extensions" }) do
      assert.are.equal("string", type(d[key]), key)
    end
    for _, key in ipairs({ "compute_units", "max_group_size", "local_memory", "global_memory",
                           "constant_memory", "max_alloc", "clock_mhz", "group_multiple" }) do
      assert.are.equal("integer", math.type(d[key]), key)
      assert.is_true(d[key] > 0, key)
    end
    assert.are.equal(3, #d.max_group_dims)
    assert.is_true(#list >= 1)
  end)

  it("are chosen by backend, type, default or a table", function()
    local first_cpu
    for _, d in ipairs(list) do
      if d.type == "cpu" and not first_cpu then first_cpu = d end
    end
    assert.are.equal(first_cpu.id, kt.device("cpu").id)
    assert.are.equal(list[1].backend == "opencl" and list[1].id or nil, kt.device("opencl").id)
    assert.are.equal("opencl:0:0", kt.device{ backend = "opencl", platform = 0, index = 0 }.id)
    assert.are.equal("opencl:0:0", kt.device{ id = "opencl:0:0" }.id)
    assert.are.equal(kt.device("default").id, kt.device().id)
  end)

  it("say what exists when a device is not found", function()
    local ok, err = pcall(kt.device, "opencl:7:3")
    assert.is_false(ok)
    assert.matches("no device 'opencl:7:3': no device has that id; the devices here: opencl:0:0 %(", err)
    assert.has_error(function() kt.device(42) end)
  end)

  it("say which kind of device is missing, never listing the name asked for as there", function()
    local types = {}
    for _, d in ipairs(list) do types[d.type] = true end
    local have = list[1].id .. " (" .. list[1].name .. ", " .. list[1].type .. ")"
    for _, what in ipairs({ "gpu", "cpu", "accelerator" }) do
      if not types[what] then
        local ok, err = pcall(kt.device, what)
        assert.is_false(ok)
        assert.matches("no device '" .. what .. "': no device of type " .. what
          .. " is here; the devices here: " .. have, err, 1, true)
        assert.is_nil(err:match("'gpu', 'cpu'"))
      end
    end
    local ok, err = pcall(kt.device, "nonesuch")
    assert.is_false(ok)
    assert.matches("no device 'nonesuch': it is no device id, backend (opencl, cuda), type (gpu, "
      .. "cpu, accelerator) or 'default'; the devices here: " .. have, err, 1, true)
  end)

  it("open a tuner that knows its device", function()
    local t = kt.tuner(list[1])
    assert.are.equal(list[1].id, t.device.id)
    assert.matches("^tuner on " .. list[1].id, tostring(t))
  end)
end)
