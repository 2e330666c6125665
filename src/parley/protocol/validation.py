"""Semantic request validation: the rules a server checks before doing any work.

Each check raises the spec error (InvalidParamsError naming the field, and the like). No I/O.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Final
from urllib.parse import urlsplit

from msgspec.structs import replace

from parley.model import (
    AgentCard,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Role,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    UrlPart,
)
from parley.protocol import lifecycle, paging
from parley.protocol.errors import (
    ContentTypeNotSupportedError,
    UnsupportedOperationError,
    invalid_field,
)

DEFAULT_MAX_PARTS = 1000
"""Most parts one message may carry (the wire decoder's default limit too)."""

MAX_ID_BYTES = 512
"""Most UTF-8 bytes in one id, context id or tenant, whatever the store.

PostgreSQL refuses a B-tree index entry over about 2,700 bytes (a third of a page), and
its store indexes (tenant, owner, context_id, timestamp, id) as one entry: three values at
this bound leave room for the owner. One bound for every store, so that a request valid on
one is valid on all; 512 is ample for UUIDs, ULIDs, URNs and the like.
"""

_ID_FIELDS: Final[Mapping[str, str]] = {
    "tenant": "tenant",
    "id": "id",
    "task_id": "taskId",
    "context_id": "contextId",
    "message_id": "messageId",
}
"""The identifier fields of requests, messages and push configs, by their 1.0 JSON names."""

MAX_WEBHOOK_URL = 2048
"""Characters of a webhook URL, at most."""
MAX_WEBHOOK_SECRET = 4096
"""Characters of a push config's credentials or token, at most (they travel in headers)."""
_AUTH_SCHEME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}")
"""An HTTP authentication scheme: an RFC 9110 token."""
_URL_REFUSED = re.compile(r"[\s\x00-\x1f\x7f]")
"""What a webhook URL may not contain: whitespace (any, as `str.isspace`) and controls."""
_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
"""C0 controls, DEL, C1 controls and lone surrogates: no store keeps them all (PostgreSQL
text refuses NUL, UTF-8 has no surrogates) and no id needs them."""


def check_ids(request: object) -> None:
    """Every identifier a decoded request carries (tenant, task, context, message and push
    config ids, a ListTasks cursor's task id) is at most MAX_ID_BYTES of UTF-8 without
    control characters or lone surrogates; InvalidParamsError naming the field otherwise.
    Runs on every request at the edge, before any store sees an id."""
    if type(request) is SendMessageRequest:
        # The usual send in one pass: ids that are all printable ASCII within the bound
        # together hold no forbidden character, and each is within MAX_ID_BYTES.
        message = request.message
        config = request.configuration
        ids = request.tenant + message.message_id + message.context_id + message.task_id
        if (
            len(ids) <= MAX_ID_BYTES
            and ids.isascii()
            and ids.isprintable()
            and not message.reference_task_ids
            and (config is None or config.push_notification_config is None)
        ):
            return
    _check_fields(request, "")
    if isinstance(request, SendMessageRequest):
        message = request.message
        _check_fields(message, "message.")
        for index, task_id in enumerate(message.reference_task_ids):
            check_id(task_id, f"message.referenceTaskIds[{index}]")
        config = request.configuration
        if config is not None and config.push_notification_config is not None:
            _check_fields(
                config.push_notification_config, "configuration.taskPushNotificationConfig."
            )
    elif isinstance(request, ListTasksRequest) and request.page_token:
        check_id(paging.decode_page_token(request.page_token).task_id, "pageToken")


def check_id(value: str, field: str) -> None:
    """One identifier: at most MAX_ID_BYTES of UTF-8, none of the forbidden characters."""
    if len(value) * 4 > MAX_ID_BYTES:  # a code point is at most 4 bytes: no encoding below
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > MAX_ID_BYTES:
            raise invalid_field(field, f"must be at most {MAX_ID_BYTES} bytes (UTF-8), got {size}")
    found = _FORBIDDEN.search(value)
    if found is not None:
        raise invalid_field(
            field,
            f"must not contain control characters or lone surrogates "
            f"(U+{ord(found.group()):04X} at index {found.start()})",
        )


def _find_id_fields(model_type: type) -> tuple[tuple[str, str], ...]:
    """A model type's identifier fields with their 1.0 JSON names."""
    names = getattr(model_type, "__struct_fields__", ())
    return tuple((name, _ID_FIELDS[name]) for name in names if name in _ID_FIELDS)


_id_fields: Callable[[type], tuple[tuple[str, str], ...]] = functools.cache(_find_id_fields)
"""`_find_id_fields`, found once per type."""


def _check_fields(model: object, prefix: str) -> None:
    for name, wire in _id_fields(type(model)):
        value = getattr(model, name)
        if value and (len(value) * 4 > MAX_ID_BYTES or _FORBIDDEN.search(value) is not None):
            check_id(value, prefix + wire)  # (the caller's string built only for a bad id)


def validate_send(request: SendMessageRequest, *, max_parts: int = DEFAULT_MAX_PARTS) -> None:
    """SendMessage / SendStreamingMessage: the message and the configuration."""
    validate_message(request.message, max_parts=max_parts)
    config = request.configuration
    if config is None:
        return
    _check_history_length(config.history_length, "configuration.historyLength")
    if config.push_notification_config is not None:
        validate_push_config(
            config.push_notification_config,
            require_task_id=False,
            field="configuration.taskPushNotificationConfig",
        )


def validate_message(
    message: Message, *, max_parts: int = DEFAULT_MAX_PARTS, field: str = "message"
) -> None:
    """A client message: an id, role USER, 1..max_parts parts, URL parts with a URL (R-DATA-10)."""
    if not message.message_id:
        raise invalid_field(f"{field}.messageId", "must not be empty")
    if message.role is not Role.USER:
        raise invalid_field(f"{field}.role", "a client message must have role USER")
    if not message.parts:
        raise invalid_field(f"{field}.parts", "a message needs at least one part")
    if len(message.parts) > max_parts:
        raise invalid_field(
            f"{field}.parts", f"at most {max_parts} parts allowed, got {len(message.parts)}"
        )
    for index, part in enumerate(message.parts):
        if isinstance(part, UrlPart) and not part.url:
            raise invalid_field(f"{field}.parts[{index}].url", "must not be empty")


def validate_get(request: GetTaskRequest) -> None:
    """GetTask: a task id and a non-negative history length."""
    if not request.id:
        raise invalid_field("id", "must not be empty")
    _check_history_length(request.history_length, "historyLength")


def validate_list(request: ListTasksRequest) -> None:
    """ListTasks: page size in range (R-TASK-9), history length, a decodable page token."""
    paging.check_page_size(request.page_size)
    _check_history_length(request.history_length, "historyLength")
    if request.page_token:
        paging.decode_page_token(request.page_token)


def validate_push_config(
    config: TaskPushNotificationConfig,
    *,
    require_task_id: bool = True,
    field: str = "",
) -> None:
    """A webhook config: an absolute http(s) URL, a task id (unless inline), an auth scheme.

    Inline configs of SendMessage carry no task id (R-SEND-7), so pass
    `require_task_id=False` for them. SSRF screening needs DNS and is not done here.
    """
    prefix = f"{field}." if field else ""
    check_webhook_url(config.url, f"{prefix}url")
    if require_task_id and not config.task_id:
        raise invalid_field(f"{prefix}taskId", "must not be empty")
    auth = config.authentication
    if auth is not None:
        if not auth.scheme.strip():
            raise invalid_field(f"{prefix}authentication.scheme", "must not be empty")
        if not _AUTH_SCHEME.fullmatch(auth.scheme):
            raise invalid_field(
                f"{prefix}authentication.scheme",
                "must be an HTTP authentication scheme (e.g. Bearer), up to 64 characters",
            )
        _check_secret(auth.credentials, prefix, "authentication.credentials")
    _check_secret(config.token, prefix, "token")


def _check_secret(value: str, prefix: str, name: str) -> None:
    """Credentials and tokens are sent in headers: bounded, printable ASCII, one line
    (for ASCII, `isprintable` is exactly space to tilde)."""
    if len(value) > MAX_WEBHOOK_SECRET:
        raise invalid_field(prefix + name, f"must be at most {MAX_WEBHOOK_SECRET} characters")
    if not (value.isascii() and value.isprintable()):
        raise invalid_field(prefix + name, "must be printable ASCII on one line")


def check_webhook_url(url: str, field: str = "url") -> None:
    """Raise unless `url` is an absolute http or https URL with a host."""
    if len(url) > MAX_WEBHOOK_URL:
        raise invalid_field(field, f"must be at most {MAX_WEBHOOK_URL} characters")
    problem = _webhook_url_problem(url)
    if problem is not None:
        raise invalid_field(field, problem)


@functools.lru_cache(maxsize=4096)
def _webhook_url_problem(url: str) -> str | None:
    """What is wrong with a webhook URL of bounded length (None: nothing); remembered, as
    every send with a config asks again."""
    if not url:
        return "must not be empty"
    if _URL_REFUSED.search(url):
        return "must not contain whitespace or control characters"
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a malformed port
    except ValueError as exc:
        return f"not a valid URL: {exc}"
    if parts.scheme.lower() not in ("http", "https"):
        return "must be an absolute http or https URL"
    if not parts.hostname:
        return "must name a host"
    return None


def check_follow_up(task: Task, message: Message) -> Message:
    """A message sent to an existing task, checked and completed (R-SEND-8, R-CTX-12/13).

    A terminal task takes no more messages: UnsupportedOperationError. A `contextId`
    other than the task's is rejected; an empty one is inherited from the task.
    """
    if lifecycle.is_terminal(task.status.state):
        raise UnsupportedOperationError(
            f"Task {task.id} is {task.status.state.name} and accepts no further messages",
            metadata={"taskId": task.id, "state": task.status.state.name},
        )
    if message.task_id and message.task_id != task.id:
        raise invalid_field("message.taskId", f"does not name task {task.id!r}")
    if message.context_id and message.context_id != task.context_id:
        raise invalid_field(
            "message.contextId",
            f"{message.context_id!r} does not match the task's context {task.context_id!r}",
        )
    if message.context_id and message.task_id:
        return message
    return replace(message, task_id=task.id, context_id=task.context_id)


class ContentModes:
    """A card's input and output modes (its defaults plus every skill's), worked out once,
    and the checks a SendMessage takes against them (R-SEND-9, R-SEND-6)."""

    __slots__ = ("inputs", "outputs")

    def __init__(self, card: AgentCard) -> None:
        self.inputs = _declared(card.default_input_modes, (s.input_modes for s in card.skills))
        self.outputs = _declared(card.default_output_modes, (s.output_modes for s in card.skills))

    def check(self, request: SendMessageRequest) -> None:
        """ContentTypeNotSupportedError for a part or an output the agent cannot take."""
        if self.inputs:
            self.check_input(request.message)
        configuration = request.configuration
        if configuration is not None and configuration.accepted_output_modes and self.outputs:
            self.check_output(configuration.accepted_output_modes)

    def check_input(self, message: Message) -> None:
        declared = self.inputs
        if not declared:
            return
        for part in message.parts:
            if part.media_type and not _accepts(declared, part.media_type):
                raise ContentTypeNotSupportedError(
                    f"Media type {part.media_type} is not supported; "
                    f"supported input modes: {', '.join(declared)}",
                    metadata={"mediaType": part.media_type},
                )

    def check_output(self, accepted: Iterable[str]) -> None:
        wanted = tuple(m for m in accepted if m.strip())
        declared = self.outputs
        if not wanted or not declared or any(_accepts(wanted, mode) for mode in declared):
            return
        raise ContentTypeNotSupportedError(
            f"None of the accepted output modes ({', '.join(wanted)}) is produced by this "
            f"agent; it produces: {', '.join(declared)}",
            metadata={"acceptedOutputModes": ",".join(wanted)},
        )


def _check_history_length(history_length: int | None, field: str) -> None:
    if history_length is not None and history_length < 0:
        raise invalid_field(field, f"must be >= 0, got {history_length}")


def _declared(defaults: Iterable[str], per_skill: Iterable[Iterable[str]]) -> tuple[str, ...]:
    seen: dict[str, None] = dict.fromkeys(m for m in defaults if m.strip())
    for modes in per_skill:
        seen.update(dict.fromkeys(m for m in modes if m.strip()))
    return tuple(seen)


def _media(value: str) -> tuple[str, str]:
    """(type, subtype) of a media type or range, lower-cased, parameters dropped."""
    essence = value.split(";", 1)[0].strip().lower()
    kind, _, sub = essence.partition("/")
    return kind, sub or "*"


def _accepts(ranges: Iterable[str], media_type: str) -> bool:
    """Whether any media range (`*/*`, `type/*`, `type/sub`) matches `media_type` either way."""
    kind, sub = _media(media_type)
    for candidate in ranges:
        c_kind, c_sub = _media(candidate)
        if "*" in (kind, c_kind) or (c_kind == kind and "*" in (sub, c_sub)):
            return True
        if (c_kind, c_sub) == (kind, sub):
            return True
    return False
