"""Helpers for testing A2A code without a network: `InMemoryTransport` connects a
`parley.client.Client` straight to a Parley `RequestHandler` (e.g. an `AgentService`)."""

from parley.testing.memory import HandlerEventStream, InMemoryTransport

__all__ = ["HandlerEventStream", "InMemoryTransport"]
