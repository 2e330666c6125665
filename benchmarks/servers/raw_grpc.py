"""The gRPC ceiling: a bare `grpc.aio` server with no A2A machinery. `SendMessage` parses
the request and answers a same-sized completed Task; `SendStreamingMessage` parses it and
writes the same 103 events Parley's streaming agent produces (submitted task, working,
100 artifact chunks, completed), serialized once at start. What grpcio itself costs.

    python -m benchmarks.servers.raw_grpc PORT
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import grpc
from a2a.types import a2a_pb2 as pb

from benchmarks.servers import STREAM_CHUNKS

SERVICE = "lf.a2a.v1.A2AService"


def _answers() -> tuple[bytes, tuple[bytes, ...]]:
    user = pb.Message(message_id="m-1", role=pb.ROLE_USER, parts=[pb.Part(text="hello")])
    reply = pb.Message(message_id="m-2", role=pb.ROLE_AGENT, parts=[pb.Part(text="hello")])
    ids = {"task_id": "0" * 36, "context_id": "1" * 36}
    task = pb.Task(
        id=ids["task_id"],
        context_id=ids["context_id"],
        status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED, message=reply),
        history=[user, reply],
    )
    task.status.timestamp.GetCurrentTime()
    send = pb.SendMessageResponse(task=task).SerializeToString()
    submitted = pb.Task(
        id=ids["task_id"],
        context_id=ids["context_id"],
        status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED),
        history=[user],
    )
    events = [pb.StreamResponse(task=submitted)]
    working = pb.TaskStatusUpdateEvent(status=pb.TaskStatus(state=pb.TASK_STATE_WORKING), **ids)
    events.append(pb.StreamResponse(status_update=working))
    for index in range(STREAM_CHUNKS):
        chunk = pb.TaskArtifactUpdateEvent(
            artifact=pb.Artifact(artifact_id="a-1", parts=[pb.Part(text="hello")]),
            append=index > 0,
            last_chunk=index == STREAM_CHUNKS - 1,
            **ids,
        )
        events.append(pb.StreamResponse(artifact_update=chunk))
    done = pb.TaskStatusUpdateEvent(status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED), **ids)
    events.append(pb.StreamResponse(status_update=done))
    return send, tuple(event.SerializeToString() for event in events)


SEND, EVENTS = _answers()


async def send_message(data: bytes, context: Any) -> bytes:
    pb.SendMessageRequest.FromString(data)
    return SEND


async def send_streaming_message(data: bytes, context: Any) -> None:
    pb.SendMessageRequest.FromString(data)
    for event in EVENTS:
        await context.write(event)


async def main(port: int) -> None:
    server = grpc.aio.server()
    methods: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {
        "SendMessage": grpc.unary_unary_rpc_method_handler(send_message),
        "SendStreamingMessage": grpc.unary_stream_rpc_method_handler(send_streaming_message),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, methods),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover
        pass
    asyncio.run(main(int(sys.argv[1])))
