"""The connection guard (`parley.cli.connection_guard`) over uvicorn's h11 protocol, in a
module of its own: a server on httptools (the default) never loads h11."""

from __future__ import annotations

from typing import Any

import h11

from parley.cli.connection_guard import _BODY, _HEADERS, _IDLE, _NOT_COUNTING, _RUNNING, Guard


class H11Guard(Guard):
    """The guard over uvicorn's h11 protocol, told by the client's state after each
    round of events."""

    _pipelined_count = _NOT_COUNTING
    conn: Any

    def on_response_complete(self) -> None:
        if self._phase == _RUNNING:
            self._phase = _IDLE
        super().on_response_complete()  # type: ignore[misc]
        if self._timer is None and _HEADERS <= self._phase <= _BODY:
            self._arm()  # a request that came while this one was answered

    def handle_events(self) -> None:
        super().handle_events()  # type: ignore[misc]
        state = self.conn.their_state
        if self._phase <= _HEADERS:
            if state is h11.IDLE or state is h11.ERROR:
                return
            self.headers_complete()
        if self._phase == _BODY and state is not h11.SEND_BODY:
            self.body_complete()
