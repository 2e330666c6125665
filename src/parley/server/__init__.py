"""The server runtime: request handling, task running, event fan-out, authoring API."""
