"""The ASGI binding: JSON-RPC and HTTP+JSON (both protocol versions), the agent card and
SSE streaming, in plain ASGI for any server (uvicorn, hypercorn, …)."""

from parley.asgi.app import A2AApp, build_app
from parley.asgi.card import CardMode

__all__ = ["A2AApp", "CardMode", "build_app"]
