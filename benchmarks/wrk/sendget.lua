-- Send + get over 1.0 JSON-RPC: a non-blocking SendMessage (returnImmediately), then a
-- GetTask of the task it answered. Each answered send queues its task id; the next request
-- on any connection reads the oldest queued task, else sends. So requests alternate
-- send / get, and pairs/s = requests/s / 2.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
local send = '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
  .. '{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]},'
  .. '"configuration":{"returnImmediately":true}}}'
local queued = {}

request = function()
  local id = table.remove(queued, 1)
  if id then
    return wrk.format(nil, "/", nil,
      '{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"' .. id .. '"}}')
  end
  return wrk.format(nil, "/", nil, send)
end

response = function(status, headers, body)
  local id = string.match(body, '"task":{"id":"([^"]+)"')
  if id then
    table.insert(queued, id)
  end
end
