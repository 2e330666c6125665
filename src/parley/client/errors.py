"""What the client raises when the failure is not the server's answer: the transport's own
errors, as a small tree. Errors the server answers are raised as `parley.protocol.errors`.

    ClientError
    ├── ClientConnectionError       the server could not be reached, or the connection broke
    │                               before the answer was complete (a dropped stream)
    ├── ClientTimeoutError          no complete answer within the call's timeout
    │   └── StreamIdleError         a stream received nothing (not even a keep-alive)
    │                               for longer than its idle limit
    ├── ClientProtocolError         an answer that is not A2A: an HTTP status no A2A error
    │                               uses (401 from a proxy, 503 from a load balancer), a body
    │                               that is not JSON, a payload the codec cannot read, a
    │                               JSON-RPC response with another id, a stream that is not SSE
    └── NoCompatibleInterfaceError  the agent card lists no interface this client can use

A server's A2A error (TaskNotFoundError, …) is never wrapped: `except TaskNotFoundError`
works the same against a local handler, a JSON-RPC or a REST server.
"""

from __future__ import annotations


class ClientError(Exception):
    """Base of the client's own errors (never raised itself)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ClientConnectionError(ClientError):
    """The server could not be reached, or the connection broke mid-answer."""


class ClientTimeoutError(ClientError):
    """The call did not complete within its timeout (connect, send, or the whole call).

    `task_id`: the task the call was about, when the client knows it ("" otherwise): the
    task may still be running, to follow with `Client.wait` or `Client.subscribe`."""

    def __init__(self, message: str, *, task_id: str = "") -> None:
        super().__init__(message)
        self.task_id = task_id


class StreamIdleError(ClientTimeoutError):
    """A stream was silent for longer than its idle limit (`idle_timeout`)."""


class ClientProtocolError(ClientError):
    """The server answered, but not in A2A form.

    `status_code` is the HTTP status when there was one; `retry_after` the seconds a
    `Retry-After` header asked to wait (None without one).
    """

    def __init__(
        self, message: str, *, status_code: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after


class NoCompatibleInterfaceError(ClientError):
    """The agent card offers no (binding, version) this client was allowed to use."""
