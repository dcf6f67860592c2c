-- busted output handler: the plain terminal output, then the line that
-- scripts/check.sh and CI read: "N passed, N failed".
return function(options)
  local busted = require 'busted'
  local handler = require 'busted.outputHandlers.plainTerminal'(options)
  busted.subscribe({ 'suite', 'end' }, function()
    io.write(("%d passed, %d failed\n"):format(handler.successesCount,
      handler.failuresCount + handler.errorsCount))
    io.flush()
    return nil, true
  end)
  return handler
end
