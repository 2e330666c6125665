-- Blocking send: POST the 1.0 JSON-RPC SendMessage (echo skill) on every request.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
  .. '{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}'
