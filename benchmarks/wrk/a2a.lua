-- One A2A request, the same on every call, from the environment (benchmarks.targets sets
-- it per binding and version): BENCH_PATH, BENCH_BODY, and BENCH_VERSION (the A2A-Version
-- header; absent for 0.3).
wrk.method = "POST"
wrk.path = os.getenv("BENCH_PATH") or "/"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"
local version = os.getenv("BENCH_VERSION")
if version and version ~= "" then
  wrk.headers["A2A-Version"] = version
end
