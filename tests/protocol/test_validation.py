"""Semantic request validation before any work is done (REFERENCE §8, §9, §13)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from msgspec.structs import replace

from parley.model import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    AuthenticationInfo,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    RawPart,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TextPart,
    UrlPart,
)
from parley.protocol import validation as v
from parley.protocol.errors import (
    ContentTypeNotSupportedError,
    InvalidParamsError,
    UnsupportedOperationError,
)
from parley.protocol.paging import PageCursor, encode_page_token
from tests.strategies import Flavor, send_configurations

TEXT: tuple[Part, ...] = (TextPart(text="hi"),)


def message(
    *,
    message_id: str = "m1",
    role: Role = Role.USER,
    parts: tuple[Part, ...] = TEXT,
    task_id: str = "",
    context_id: str = "",
) -> Message:
    return Message(
        message_id=message_id, role=role, parts=parts, task_id=task_id, context_id=context_id
    )


def field_of(error: InvalidParamsError) -> str:
    assert len(error.field_violations) == 1
    return error.field_violations[0].field


def send(msg: Message, config: SendMessageConfiguration | None = None) -> SendMessageRequest:
    return SendMessageRequest(message=msg, configuration=config)


def test_a_plain_send_is_valid() -> None:
    v.validate_send(send(message()))
    v.validate_send(send(message(), SendMessageConfiguration(history_length=0)))


def _header_safe(text: str) -> bool:
    return len(text) <= v.MAX_WEBHOOK_SECRET and all(" " <= char <= "~" for char in text)


@given(send_configurations(Flavor.V1_0))
def test_generated_configurations_are_valid_unless_the_webhook_is_not_http(
    config: SendMessageConfiguration,
) -> None:
    """Valid, unless the URL is not http(s) or a value sent in a header could not be
    (line breaks, control characters, non-ASCII: header injection)."""
    push = config.push_notification_config
    auth = push.authentication if push is not None else None
    field = "configuration.taskPushNotificationConfig."
    if push is None:
        bad = None
    elif not push.url.startswith(("http://", "https://")):
        bad = "url"  # e.g. a bare `host:port`
    elif auth is not None and not _header_safe(auth.credentials):
        bad = "authentication.credentials"
    elif not _header_safe(push.token):
        bad = "token"
    else:
        bad = None
    if bad is None:
        v.validate_send(send(message(), config))
        return
    with pytest.raises(InvalidParamsError) as caught:
        v.validate_send(send(message(), config))
    assert field_of(caught.value) == field + bad


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (send(message(message_id="")), "message.messageId"),
        (send(message(role=Role.AGENT)), "message.role"),
        (send(message(parts=())), "message.parts"),
        (send(message(parts=TEXT * 3)), "message.parts"),
        (send(message(parts=(UrlPart(url=""),))), "message.parts[0].url"),
        (
            send(message(), SendMessageConfiguration(history_length=-1)),
            "configuration.historyLength",
        ),
        (
            send(
                message(),
                SendMessageConfiguration(
                    push_notification_config=TaskPushNotificationConfig(url="ftp://x/")
                ),
            ),
            "configuration.taskPushNotificationConfig.url",
        ),
    ],
)
def test_send_rejections_name_the_field(request_: SendMessageRequest, field: str) -> None:
    """R-DATA-9/10: required fields present, parts non-empty; §8.4 negative historyLength."""
    with pytest.raises(InvalidParamsError) as caught:
        v.validate_send(request_, max_parts=2)
    assert field_of(caught.value) == field


def test_max_parts_is_inclusive() -> None:
    v.validate_send(send(message(parts=TEXT * 2)), max_parts=2)
    v.validate_send(send(message(parts=TEXT * 1000)))
    with pytest.raises(InvalidParamsError):
        v.validate_send(send(message(parts=TEXT * 1001)))


def test_get() -> None:
    v.validate_get(GetTaskRequest(id="t", history_length=0))
    with pytest.raises(InvalidParamsError) as caught:
        v.validate_get(GetTaskRequest(id=""))
    assert field_of(caught.value) == "id"
    with pytest.raises(InvalidParamsError) as caught:
        v.validate_get(GetTaskRequest(id="t", history_length=-2))
    assert field_of(caught.value) == "historyLength"


@pytest.mark.parametrize("size", [None, 1, 50, 100])
def test_list_accepts_page_sizes_in_range(size: int | None) -> None:
    """R-TASK-9: 1 ≤ pageSize ≤ 100."""
    v.validate_list(ListTasksRequest(page_size=size))


@pytest.mark.parametrize("size", [0, -1, 101, 150])
def test_list_rejects_page_sizes_out_of_range(size: int) -> None:
    """R-TASK-9: out of range is InvalidParams, never clamped (the spec example rejects 150)."""
    with pytest.raises(InvalidParamsError) as caught:
        v.validate_list(ListTasksRequest(page_size=size))
    assert field_of(caught.value) == "pageSize"


def test_list_checks_history_length_and_page_token() -> None:
    with pytest.raises(InvalidParamsError) as caught:
        v.validate_list(ListTasksRequest(history_length=-1))
    assert field_of(caught.value) == "historyLength"
    with pytest.raises(InvalidParamsError) as caught:
        v.validate_list(ListTasksRequest(page_token="garbage!"))
    assert field_of(caught.value) == "pageToken"
    token = encode_page_token(PageCursor(timestamp=None, task_id="t"))
    v.validate_list(ListTasksRequest(page_token=token))


@pytest.mark.parametrize(
    "url",
    [
        "https://client.example.com/webhook/a2a",
        "http://localhost:8080/hook",
        "HTTPS://example.com",
        "https://[::1]:9000/x?y=1",
    ],
)
def test_push_config_accepts_absolute_http_urls(url: str) -> None:
    v.validate_push_config(TaskPushNotificationConfig(url=url, task_id="t"))


@pytest.mark.parametrize(
    "url",
    [
        "",
        "/relative/path",
        "example.com/hook",
        "ftp://example.com/x",
        "javascript:alert(1)",
        "https://",
        "https:///path",
        "https://example.com:99999/x",
        "https://exa mple.com/",
        "https://example.com/\n",
    ],
)
def test_push_config_rejects_other_urls(url: str) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        v.validate_push_config(TaskPushNotificationConfig(url=url, task_id="t"))
    assert field_of(caught.value) == "url"


def test_push_config_needs_task_id_and_auth_scheme() -> None:
    """R-SEND-7: inline configs leave taskId empty; Create needs one."""
    inline = TaskPushNotificationConfig(url="https://h/x")
    v.validate_push_config(inline, require_task_id=False)
    with pytest.raises(InvalidParamsError) as caught:
        v.validate_push_config(inline)
    assert field_of(caught.value) == "taskId"
    bad_auth = TaskPushNotificationConfig(
        url="https://h/x", task_id="t", authentication=AuthenticationInfo(scheme=" ")
    )
    with pytest.raises(InvalidParamsError) as caught:
        v.validate_push_config(bad_auth)
    assert field_of(caught.value) == "authentication.scheme"


@pytest.mark.parametrize(
    ("config", "field"),
    [
        (TaskPushNotificationConfig(url="https://h/" + "x" * 2048), "url"),
        (TaskPushNotificationConfig(url="https://h/x", token="t" * 4097), "token"),
        (TaskPushNotificationConfig(url="https://h/x", token="a\r\nX-Evil: 1"), "token"),
        (TaskPushNotificationConfig(url="https://h/x", token="caf\u00e9"), "token"),
        (
            TaskPushNotificationConfig(
                url="https://h/x", authentication=AuthenticationInfo(scheme="Bearer x")
            ),
            "authentication.scheme",
        ),
        (
            TaskPushNotificationConfig(
                url="https://h/x", authentication=AuthenticationInfo(scheme="B" * 65)
            ),
            "authentication.scheme",
        ),
        (
            TaskPushNotificationConfig(
                url="https://h/x",
                authentication=AuthenticationInfo(scheme="Bearer", credentials="a\nb"),
            ),
            "authentication.credentials",
        ),
        (
            TaskPushNotificationConfig(
                url="https://h/x",
                authentication=AuthenticationInfo(scheme="Bearer", credentials="c" * 4097),
            ),
            "authentication.credentials",
        ),
    ],
)
def test_push_config_values_sent_in_headers_are_bounded_and_one_line(
    config: TaskPushNotificationConfig, field: str
) -> None:
    """A config's URL, token and credentials are bounded; what travels in a header is
    printable ASCII on one line (no header injection into the webhook request)."""
    with pytest.raises(InvalidParamsError) as caught:
        v.validate_push_config(config, require_task_id=False)
    assert field_of(caught.value) == field
    fine = TaskPushNotificationConfig(
        url="https://h/x",
        token="t" * 4096,
        authentication=AuthenticationInfo(scheme="Bearer", credentials="c d" * 1000),
    )
    v.validate_push_config(fine, require_task_id=False)


def task_in(state: TaskState) -> Task:
    return Task(id="t1", context_id="c1", status=TaskStatus(state=state))


def test_follow_up_without_context_inherits_it() -> None:
    """R-CTX-12: infer contextId from the task when only taskId is given."""
    follow = v.check_follow_up(task_in(TaskState.INPUT_REQUIRED), message(task_id="t1"))
    assert (follow.task_id, follow.context_id) == ("t1", "c1")


def test_follow_up_with_the_same_context_is_unchanged() -> None:
    sent = message(task_id="t1", context_id="c1")
    assert v.check_follow_up(task_in(TaskState.WORKING), sent) is sent


def test_follow_up_with_another_context_is_rejected() -> None:
    """R-CTX-13, R-DATA-13: a contextId that differs from the task's is rejected."""
    with pytest.raises(InvalidParamsError) as caught:
        v.check_follow_up(task_in(TaskState.WORKING), message(task_id="t1", context_id="c2"))
    assert field_of(caught.value) == "message.contextId"


def test_follow_up_for_another_task_is_rejected() -> None:
    with pytest.raises(InvalidParamsError) as caught:
        v.check_follow_up(task_in(TaskState.WORKING), message(task_id="t9"))
    assert field_of(caught.value) == "message.taskId"


@pytest.mark.parametrize(
    "state",
    [TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED],
    ids=lambda s: s.name,
)
def test_follow_up_to_a_terminal_task_is_unsupported(state: TaskState) -> None:
    """R-SEND-8: messages for terminal tasks ⇒ UnsupportedOperationError."""
    with pytest.raises(UnsupportedOperationError):
        v.check_follow_up(task_in(state), message(task_id="t1"))


def card(
    inputs: tuple[str, ...] = (), outputs: tuple[str, ...] = (), skill_modes: tuple[str, ...] = ()
) -> AgentCard:
    skill = AgentSkill(
        id="s", name="s", description="", tags=(), input_modes=skill_modes, output_modes=skill_modes
    )
    return AgentCard(
        name="a",
        description="",
        version="1",
        supported_interfaces=(),
        capabilities=AgentCapabilities(),
        default_input_modes=inputs,
        default_output_modes=outputs,
        skills=(skill,),
    )


def test_input_modes() -> None:
    """R-SEND-9: unsupported part media types ⇒ ContentTypeNotSupportedError."""
    png = message(parts=(RawPart(raw=b"x", media_type="image/png"),))
    untyped = message(parts=(TextPart(text="x"),))
    v.ContentModes(card()).check_input(png)  # no declared modes: anything goes
    v.ContentModes(card(("text/plain",))).check_input(untyped)  # no media type: not checked
    v.ContentModes(card(("text/plain",), skill_modes=("image/*",))).check_input(png)
    v.ContentModes(card(("IMAGE/PNG; q=1",))).check_input(png)
    with pytest.raises(ContentTypeNotSupportedError):
        v.ContentModes(card(("text/plain", "application/json"))).check_input(png)


def test_accepted_output_modes() -> None:
    """R-SEND-6: the agent tailors output; a request no declared mode satisfies is refused."""
    agent = card(outputs=("text/plain", "application/json"))
    v.ContentModes(agent).check_output(())
    v.ContentModes(agent).check_output(("application/json",))
    v.ContentModes(agent).check_output(("text/*",))
    v.ContentModes(agent).check_output(("*/*",))
    v.ContentModes(card()).check_output(("image/png",))
    with pytest.raises(ContentTypeNotSupportedError):
        v.ContentModes(agent).check_output(("image/png", "audio/*"))


# Ids at the edge: one bound and one character set for every store (issue: NUL and 1 MB
# ids crashed the PostgreSQL store).


@pytest.mark.parametrize(
    "value",
    ["a" * v.MAX_ID_BYTES, "é" * (v.MAX_ID_BYTES // 2), "urn:uuid:0-1", "日本", "🙂" * 128],
)
def test_ids_up_to_the_bound_are_accepted(value: str) -> None:
    v.check_id(value, "id")


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ("a" * (v.MAX_ID_BYTES + 1), "got 513"),
        ("é" * (v.MAX_ID_BYTES // 2 + 1), "got 514"),  # 257 code points, 514 bytes
        ("🙂" * 129, "got 516"),
        ("x" * 1_000_000, "got 1000000"),
    ],
)
def test_ids_over_the_bound_are_refused_in_utf8_bytes(value: str, detail: str) -> None:
    with pytest.raises(InvalidParamsError, match=rf"^contextId: must be at most 512 .*{detail}$"):
        v.check_id(value, "contextId")


@pytest.mark.parametrize(
    ("char", "code"),
    [("\x00", "0000"), ("\n", "000A"), ("\x7f", "007F"), ("\x85", "0085"), ("\ud800", "D800")],
)
def test_control_characters_and_lone_surrogates_are_refused(char: str, code: str) -> None:
    with pytest.raises(InvalidParamsError, match=rf"^tenant: .*U\+{code} at index 3\)$"):
        v.check_id("abc" + char + "def", "tenant")


def test_check_ids_names_each_field_of_a_send() -> None:
    base = message()
    fields = {
        "message.messageId": replace(base, message_id="\x00"),
        "message.taskId": replace(base, task_id="\x00"),
        "message.contextId": replace(base, context_id="\x00"),
        "message.referenceTaskIds[1]": replace(base, reference_task_ids=("ok", "\x00")),
    }
    for field, msg in fields.items():
        with pytest.raises(InvalidParamsError, match=rf"^{re.escape(field)}: "):
            v.check_ids(SendMessageRequest(message=msg))
    config = SendMessageConfiguration(
        push_notification_config=TaskPushNotificationConfig(url="https://h.example/", id="\x00")
    )
    with pytest.raises(
        InvalidParamsError, match=r"^configuration\.taskPushNotificationConfig\.id: "
    ):
        v.check_ids(SendMessageRequest(message=base, configuration=config))
    with pytest.raises(InvalidParamsError, match=r"^tenant: "):
        v.check_ids(SendMessageRequest(message=base, tenant="\x00"))
    v.check_ids(SendMessageRequest(message=replace(base, task_id="t", context_id="c")))


def test_check_ids_of_a_send_past_the_one_pass_check_still_bound_each_id() -> None:
    """Ids that together pass the bound, or are not ASCII, are each checked on their own."""
    long = "t" * v.MAX_ID_BYTES
    v.check_ids(SendMessageRequest(message=replace(message(), task_id=long, context_id=long)))
    v.check_ids(SendMessageRequest(message=replace(message(), context_id="é" * 256)))
    v.check_ids(SendMessageRequest(message=message(), tenant="\u00a0"))
    with pytest.raises(InvalidParamsError, match=r"^message\.contextId: .*got 514$"):
        v.check_ids(SendMessageRequest(message=replace(message(), context_id="é" * 257)))
    with pytest.raises(InvalidParamsError, match=r"^message\.taskId: .*U\+0085 at index 1\)$"):
        v.check_ids(SendMessageRequest(message=replace(message(), task_id="t\x85")))


def test_check_ids_covers_other_requests_and_the_page_token_cursor() -> None:
    with pytest.raises(InvalidParamsError, match=r"^id: "):
        v.check_ids(GetTaskRequest(id="\x00"))
    with pytest.raises(InvalidParamsError, match=r"^contextId: "):
        v.check_ids(ListTasksRequest(context_id="c" * 600))
    with pytest.raises(InvalidParamsError, match=r"^taskId: "):
        v.check_ids(TaskPushNotificationConfig(url="https://h.example/", task_id="\x1f"))
    token = encode_page_token(PageCursor(timestamp=None, task_id="t" * 600))
    with pytest.raises(InvalidParamsError, match=r"^pageToken: "):
        v.check_ids(ListTasksRequest(page_token=token))
    v.check_ids(
        ListTasksRequest(page_token=encode_page_token(PageCursor(timestamp=None, task_id="t-1")))
    )
