-- Streaming: POST SendStreamingMessage (stream skill: 100 chunks); one request = one whole
-- SSE stream (wrk reads the chunked body to its end), so events/s = requests/s x 100.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":'
  .. '{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}],'
  .. '"metadata":{"skill":"stream"}}}}'
