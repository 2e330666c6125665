"""The project's `.proto` files and the modules generated from them: regenerated they are
byte-identical to the committed ones (the CI check), wire-identical to the vendored spec
protos, and loaded into private descriptor pools, so that they coexist with the official
SDK's copies of the same packages in one process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc_tools
import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as sdk_v03
from a2a.types import a2a_pb2 as sdk_v10
from google.api import annotations_pb2
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_tools import protoc

from parley.wire.v0_3._pb import a2a_pb2 as ours_v03
from parley.wire.v1_0._pb import a2a_pb2 as ours_v10

ROOT = Path(__file__).parents[2]
SRC = ROOT / "src"
PROTOS = {
    "v1_0": ("parley/wire/v1_0/_pb/a2a.proto", ROOT / "spec" / "a2a-v1.0.proto"),
    "v0_3": ("parley/wire/v0_3/_pb/a2a.proto", ROOT / "spec" / "a2a-v0.3.proto"),
}
WELL_KNOWN = Path(grpc_tools.__file__).parent / "_proto"
GOOGLEAPIS = Path(annotations_pb2.__file__).parents[2]  # google/api/*.proto ship with it


def test_the_generated_modules_are_up_to_date(tmp_path: Path) -> None:
    """`scripts/protos` regenerated into a temp dir gives the committed files exactly."""
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "protos.py"), str(tmp_path)],
        check=True,
        capture_output=True,
    )
    for proto, _ in PROTOS.values():
        module = Path(proto).with_name("a2a_pb2.py")
        fresh = (tmp_path / module).read_text()
        assert fresh == (SRC / module).read_text(), f"run scripts/protos: {module} is stale"


def _compile(proto: Path, include: Path, out: Path) -> descriptor_pb2.FileDescriptorProto:
    args = ["protoc", f"-I{include}", f"-I{WELL_KNOWN}", f"-I{GOOGLEAPIS}"]
    assert protoc.main([*args, f"--descriptor_set_out={out}", str(proto)]) == 0
    return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]


def _fields(message: descriptor_pb2.DescriptorProto) -> dict[str, Any]:
    oneofs = [oneof.name for oneof in message.oneof_decl]
    return {
        field.name: (
            field.number,
            field.type,
            field.type_name,
            field.label,
            field.json_name,
            field.proto3_optional,
            oneofs[field.oneof_index] if field.HasField("oneof_index") else None,
        )
        for field in message.field
    }


def _messages(messages: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for message in messages:
        name = prefix + message.name
        out[name] = (_fields(message), message.options.map_entry)
        out |= _messages(message.nested_type, name + ".")
        out |= {f"{name}.{e.name}": _values(e) for e in message.enum_type}
    return out


def _values(enum: descriptor_pb2.EnumDescriptorProto) -> dict[str, int]:
    return {value.name: value.number for value in enum.value}


def _shape(file: descriptor_pb2.FileDescriptorProto) -> dict[str, Any]:
    """Everything that decides the bytes on the wire and the service's method paths."""
    return {
        "package": file.package,
        "services": {
            service.name: {
                method.name: (
                    method.input_type,
                    method.output_type,
                    method.client_streaming,
                    method.server_streaming,
                )
                for method in service.method
            }
            for service in file.service
        },
        "messages": _messages(file.message_type),
        "enums": {enum.name: _values(enum) for enum in file.enum_type},
    }


@pytest.mark.parametrize("version", PROTOS)
def test_the_project_protos_are_wire_identical_to_the_spec(version: str, tmp_path: Path) -> None:
    project, spec = PROTOS[version]
    copy = tmp_path / "spec" / spec.name
    copy.parent.mkdir()
    copy.write_bytes(spec.read_bytes())
    ours = _compile(SRC / project, SRC, tmp_path / "ours.pb")
    theirs = _compile(copy, copy.parent, tmp_path / "theirs.pb")
    assert _shape(ours) == _shape(theirs)
    assert len(_shape(ours)["messages"]) > 30  # the comparison saw the whole file
    # The only imports dropped are the google.api annotations'.
    assert set(theirs.dependency) - set(ours.dependency) <= {
        "google/api/annotations.proto",
        "google/api/client.proto",
        "google/api/field_behavior.proto",
    }


@pytest.mark.parametrize(
    ("ours", "theirs"), [(ours_v10, sdk_v10), (ours_v03, sdk_v03)], ids=["v1_0", "v0_3"]
)
def test_parley_and_the_official_sdk_share_a_process(ours: Any, theirs: Any) -> None:
    """Both register the same package; Parley's lives in its own pool, and the messages
    of either parse the other's bytes."""
    default = descriptor_pool.Default()
    assert ours.DESCRIPTOR.pool is ours.POOL is not default
    assert theirs.Task.DESCRIPTOR.file.pool is default
    assert ours.Task.DESCRIPTOR.full_name == theirs.Task.DESCRIPTOR.full_name
    with pytest.raises(KeyError):
        default.FindFileByName(ours.DESCRIPTOR.name)
    task = ours.Task(id="t-1", context_id="c-1")
    task.status.state = ours.TaskState.Value("TASK_STATE_WORKING")
    task.metadata.update({"n": 1, "list": ["x", True]})
    parsed = theirs.Task.FromString(task.SerializeToString())
    assert (parsed.id, parsed.context_id, parsed.status.state) == ("t-1", "c-1", 2)
    assert dict(parsed.metadata) == {"n": 1.0, "list": ["x", True]}
    back = ours.Task.FromString(parsed.SerializeToString())
    assert back == task
