"""Parley: the A2A (Agent2Agent) protocol for Python.

The everyday names are here: `from parley import Agent, TaskContext, Client`. Each is
imported when first used, so `import parley` stays cheap. The canonical data model lives
in `parley.model`; the protocol core (operations, lifecycle, errors, negotiation) in
`parley.protocol`; the wire codecs in `parley.wire`.
"""

TYPE_CHECKING = False  # as `typing.TYPE_CHECKING`, without importing typing
if TYPE_CHECKING:
    from parley.asgi.embedding import AgentApp, mount_into
    from parley.client import Client, StreamPolicy, user_message
    from parley.model import (
        AgentCard,
        Artifact,
        DataPart,
        Message,
        Part,
        RawPart,
        Role,
        Task,
        TaskState,
        TextPart,
        UrlPart,
    )
    from parley.protocol.errors import A2AError
    from parley.protocol.negotiation import Version
    from parley.server.agent import Agent
    from parley.server.service import AgentService
    from parley.server.stores import open_store
    from parley.server.task_context import TaskContext

__version__ = "0.1.0"

_HOMES = {
    "A2AError": "parley.protocol.errors",
    "Agent": "parley.server.agent",
    "AgentApp": "parley.asgi.embedding",
    "AgentCard": "parley.model",
    "AgentService": "parley.server.service",
    "Artifact": "parley.model",
    "Client": "parley.client",
    "DataPart": "parley.model",
    "Message": "parley.model",
    "Part": "parley.model",
    "RawPart": "parley.model",
    "Role": "parley.model",
    "StreamPolicy": "parley.client",
    "Task": "parley.model",
    "TaskContext": "parley.server.task_context",
    "TaskState": "parley.model",
    "TextPart": "parley.model",
    "UrlPart": "parley.model",
    "Version": "parley.protocol.negotiation",
    "mount_into": "parley.asgi.embedding",
    "open_store": "parley.server.stores",
    "user_message": "parley.client",
}
"""Where each name exported here is defined (imported on first access)."""

__all__ = [
    "A2AError",
    "Agent",
    "AgentApp",
    "AgentCard",
    "AgentService",
    "Artifact",
    "Client",
    "DataPart",
    "Message",
    "Part",
    "RawPart",
    "Role",
    "StreamPolicy",
    "Task",
    "TaskContext",
    "TaskState",
    "TextPart",
    "UrlPart",
    "Version",
    "__version__",
    "mount_into",
    "open_store",
    "user_message",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'parley' has no attribute {name!r}")
    from importlib import import_module  # noqa: PLC0415 - only on first access

    value = getattr(import_module(home), name)
    globals()[name] = value  # the next access skips this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
