"""The payloads every codec benchmark uses, in both protocol versions."""

from __future__ import annotations

from typing import Any


def task_v10(artifacts: int = 10, history: int = 20) -> dict[str, Any]:
    """A 1.0 Task: `artifacts` artifacts of two parts each, `history` messages."""
    return {
        "id": "task-1",
        "contextId": "ctx-1",
        "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2025-10-28T10:30:00.000Z"},
        "artifacts": [
            {
                "artifactId": f"artifact-{i}",
                "name": f"result {i}",
                "parts": [
                    {"text": "The quick brown fox jumps over the lazy dog. " * 2},
                    {"data": {"index": i, "score": 0.5, "tags": ["a", "b"]}},
                ],
            }
            for i in range(artifacts)
        ],
        "history": [
            {
                "messageId": f"message-{i}",
                "role": "ROLE_USER" if i % 2 == 0 else "ROLE_AGENT",
                "contextId": "ctx-1",
                "taskId": "task-1",
                "parts": [{"text": f"Turn {i}: please summarise the report."}],
            }
            for i in range(history)
        ],
    }


def task_v03(artifacts: int = 10, history: int = 20) -> dict[str, Any]:
    """The same Task in 0.3 JSON-RPC form."""
    return {
        "kind": "task",
        "id": "task-1",
        "contextId": "ctx-1",
        "status": {"state": "completed", "timestamp": "2025-10-28T10:30:00.000Z"},
        "artifacts": [
            {
                "artifactId": f"artifact-{i}",
                "name": f"result {i}",
                "parts": [
                    {"kind": "text", "text": "The quick brown fox jumps over the lazy dog. " * 2},
                    {"kind": "data", "data": {"index": i, "score": 0.5, "tags": ["a", "b"]}},
                ],
            }
            for i in range(artifacts)
        ],
        "history": [
            {
                "kind": "message",
                "messageId": f"message-{i}",
                "role": "user" if i % 2 == 0 else "agent",
                "contextId": "ctx-1",
                "taskId": "task-1",
                "parts": [{"kind": "text", "text": f"Turn {i}: please summarise the report."}],
            }
            for i in range(history)
        ],
    }


def send_v10() -> dict[str, Any]:
    """A 1.0 SendMessageRequest (JSON-RPC params / REST body)."""
    return {
        "message": {
            "messageId": "message-1",
            "role": "ROLE_USER",
            "contextId": "ctx-1",
            "parts": [{"text": "Plan a route from Paris to Berlin avoiding tolls."}],
            "metadata": {"client": "bench"},
        },
        "configuration": {
            "acceptedOutputModes": ["text/plain", "application/json"],
            "historyLength": 5,
        },
    }


def send_v03() -> dict[str, Any]:
    """The same request as 0.3 MessageSendParams."""
    return {
        "message": {
            "kind": "message",
            "messageId": "message-1",
            "role": "user",
            "contextId": "ctx-1",
            "parts": [
                {"kind": "text", "text": "Plan a route from Paris to Berlin avoiding tolls."}
            ],
            "metadata": {"client": "bench"},
        },
        "configuration": {
            "acceptedOutputModes": ["text/plain", "application/json"],
            "historyLength": 5,
            "blocking": True,
        },
    }
