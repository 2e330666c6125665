"""Hypothesis strategies for every model type.

`Flavor.V1_0` draws anything the model can hold that 1.0 can express; `Flavor.V0_3`
restricts to what 0.3 can express (see docs/decisions.md for what each cannot).
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any

from hypothesis import strategies as st

from parley import model as m


class Flavor(enum.Enum):
    V1_0 = "1.0"
    V0_3 = "0.3"


text = st.text(max_size=12)
nonempty = st.text(min_size=1, max_size=12)
ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=10)
urls = st.sampled_from(
    ["https://example.com/a", "https://agent.example.org/x?y=1", "grpc.example.com:443"]
)
media = st.sampled_from(["", "text/plain", "application/json", "image/png"])
modes = st.lists(st.sampled_from(["text/plain", "application/json", "image/png"]), max_size=3).map(
    tuple
)
str_tuples = st.lists(nonempty, max_size=3).map(tuple)

json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | text
json_floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars | json_floats,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text, children, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(text, json_values, max_size=3)
metadata = st.none() | json_objects
timestamps = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 1, 1), timezones=st.just(UTC)
)
ms_timestamps = timestamps.map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))
scopes = st.dictionaries(nonempty, text, max_size=2)


def part_kinds(flavor: Flavor) -> dict[type[m.Model], st.SearchStrategy[Any]]:
    """One strategy per kind of part."""
    v1 = flavor is Flavor.V1_0
    extra: dict[str, Any] = {"metadata": metadata}
    if v1:
        text_part = st.builds(m.TextPart, text=text, media_type=media, filename=text, **extra)
        data_part = st.builds(
            m.DataPart, data=json_values, media_type=media, filename=text, **extra
        )
    else:
        text_part = st.builds(m.TextPart, text=text, **extra)
        data_part = st.builds(m.DataPart, data=json_objects, **extra)
    raw = st.builds(m.RawPart, raw=st.binary(max_size=16), media_type=media, filename=text, **extra)
    url = st.builds(m.UrlPart, url=urls, media_type=media, filename=text, **extra)
    return {m.TextPart: text_part, m.RawPart: raw, m.UrlPart: url, m.DataPart: data_part}


def parts(flavor: Flavor) -> st.SearchStrategy[m.Part]:
    return st.one_of(*part_kinds(flavor).values())


def messages(flavor: Flavor) -> st.SearchStrategy[m.Message]:
    return st.builds(
        m.Message,
        message_id=ids,
        role=st.sampled_from(m.Role),
        parts=st.lists(parts(flavor), min_size=1, max_size=3).map(tuple),
        context_id=st.just("") | ids,
        task_id=st.just("") | ids,
        metadata=metadata,
        extensions=str_tuples,
        reference_task_ids=st.lists(ids, max_size=2).map(tuple),
    )


def states(flavor: Flavor) -> st.SearchStrategy[m.TaskState]:
    return st.sampled_from([s for s in m.TaskState if s is not m.TaskState.UNSPECIFIED])


def statuses(flavor: Flavor) -> st.SearchStrategy[m.TaskStatus]:
    return st.builds(
        m.TaskStatus,
        state=states(flavor),
        message=st.none() | messages(flavor),
        timestamp=st.none() | timestamps,
    )


def artifacts(flavor: Flavor) -> st.SearchStrategy[m.Artifact]:
    return st.builds(
        m.Artifact,
        artifact_id=ids,
        parts=st.lists(parts(flavor), min_size=1, max_size=3).map(tuple),
        name=text,
        description=text,
        metadata=metadata,
        extensions=str_tuples,
    )


def tasks(flavor: Flavor) -> st.SearchStrategy[m.Task]:
    return st.builds(
        m.Task,
        id=ids,
        context_id=ids,
        status=statuses(flavor),
        artifacts=st.lists(artifacts(flavor), max_size=2).map(tuple),
        history=st.lists(messages(flavor), max_size=2).map(tuple),
        metadata=metadata,
    )


def status_events(flavor: Flavor) -> st.SearchStrategy[m.TaskStatusUpdateEvent]:
    return st.builds(
        m.TaskStatusUpdateEvent,
        task_id=ids,
        context_id=ids,
        status=statuses(flavor),
        metadata=metadata,
    )


def artifact_events(flavor: Flavor) -> st.SearchStrategy[m.TaskArtifactUpdateEvent]:
    return st.builds(
        m.TaskArtifactUpdateEvent,
        task_id=ids,
        context_id=ids,
        artifact=artifacts(flavor),
        append=st.booleans(),
        last_chunk=st.booleans(),
        metadata=metadata,
    )


def stream_events(flavor: Flavor) -> st.SearchStrategy[m.StreamEvent]:
    return tasks(flavor) | messages(flavor) | status_events(flavor) | artifact_events(flavor)


def auth_infos(flavor: Flavor) -> st.SearchStrategy[m.AuthenticationInfo]:
    return st.builds(
        m.AuthenticationInfo, scheme=st.sampled_from(["Bearer", "Basic"]), credentials=text
    )


def push_configs(
    flavor: Flavor, *, task_id: bool = True
) -> st.SearchStrategy[m.TaskPushNotificationConfig]:
    v1 = flavor is Flavor.V1_0
    return st.builds(
        m.TaskPushNotificationConfig,
        url=urls,
        task_id=ids if task_id else st.just(""),
        # 0.3 has no tenant.
        id=(st.just("") | ids) if v1 else ids,
        token=text,
        authentication=st.none() | auth_infos(flavor),
        tenant=(st.just("") | ids) if v1 else st.just(""),
    )


def _flows(flavor: Flavor) -> st.SearchStrategy[m.OAuthFlows]:
    code = st.builds(
        m.AuthorizationCodeOAuthFlow,
        authorization_url=urls,
        token_url=urls,
        scopes=scopes,
        refresh_url=st.just("") | urls,
        pkce_required=st.booleans() if flavor is Flavor.V1_0 else st.just(False),
    )
    client = st.builds(
        m.ClientCredentialsOAuthFlow, token_url=urls, scopes=scopes, refresh_url=st.just("") | urls
    )
    device = st.builds(
        m.DeviceCodeOAuthFlow,
        device_authorization_url=urls,
        token_url=urls,
        scopes=scopes,
        refresh_url=st.just("") | urls,
    )
    implicit = st.builds(
        m.ImplicitOAuthFlow, authorization_url=urls, scopes=scopes, refresh_url=st.just("") | urls
    )
    password = st.builds(
        m.PasswordOAuthFlow, token_url=urls, scopes=scopes, refresh_url=st.just("") | urls
    )
    if flavor is Flavor.V1_0:  # exactly one flow per scheme
        return (
            code.map(lambda f: m.OAuthFlows(authorization_code=f))
            | client.map(lambda f: m.OAuthFlows(client_credentials=f))
            | device.map(lambda f: m.OAuthFlows(device_code=f))
            | implicit.map(lambda f: m.OAuthFlows(implicit=f))
            | password.map(lambda f: m.OAuthFlows(password=f))
        )
    return st.builds(
        m.OAuthFlows,
        authorization_code=st.none() | code,
        client_credentials=st.none() | client,
        implicit=st.none() | implicit,
        password=st.none() | password,
    )


def security_schemes(flavor: Flavor) -> st.SearchStrategy[m.SecurityScheme]:
    return (
        st.builds(
            m.APIKeySecurityScheme,
            name=nonempty,
            location=st.sampled_from(["header", "query", "cookie"]),
            description=text,
        )
        | st.builds(
            m.HTTPAuthSecurityScheme,
            scheme=st.sampled_from(["Bearer", "Basic"]),
            bearer_format=text,
            description=text,
        )
        | st.builds(
            m.OAuth2SecurityScheme,
            flows=_flows(flavor),
            oauth2_metadata_url=st.just("") | urls,
            description=text,
        )
        | st.builds(m.OpenIdConnectSecurityScheme, open_id_connect_url=urls, description=text)
        | st.builds(m.MutualTlsSecurityScheme, description=text)
    )


requirements = st.builds(
    m.SecurityRequirement, schemes=st.dictionaries(nonempty, str_tuples, min_size=1, max_size=2)
)


def interfaces(flavor: Flavor) -> st.SearchStrategy[m.AgentInterface]:
    v1 = flavor is Flavor.V1_0
    return st.builds(
        m.AgentInterface,
        url=urls,
        protocol_binding=st.sampled_from(["JSONRPC", "HTTP+JSON", "GRPC"]),
        protocol_version=st.sampled_from(["1.0", "0.3"]) if v1 else st.just("0.3"),
        tenant=(st.just("") | ids) if v1 else st.just(""),
    )


def extensions() -> st.SearchStrategy[m.AgentExtension]:
    return st.builds(
        m.AgentExtension, uri=urls, description=text, required=st.booleans(), params=metadata
    )


def capabilities(flavor: Flavor) -> st.SearchStrategy[m.AgentCapabilities]:
    v1 = flavor is Flavor.V1_0
    maybe = st.none() | st.booleans()
    return st.builds(
        m.AgentCapabilities,
        streaming=maybe,
        push_notifications=maybe,
        # 0.3 carries it as the top-level supportsAuthenticatedExtendedCard flag.
        extended_agent_card=maybe,
        extensions=st.lists(extensions(), max_size=2).map(tuple),
        state_transition_history=st.none() if v1 else maybe,
    )


def skills(flavor: Flavor) -> st.SearchStrategy[m.AgentSkill]:
    return st.builds(
        m.AgentSkill,
        id=ids,
        name=nonempty,
        description=text,
        tags=str_tuples,
        examples=str_tuples,
        input_modes=modes,
        output_modes=modes,
        security_requirements=st.lists(requirements, max_size=2).map(tuple),
    )


def cards(flavor: Flavor) -> st.SearchStrategy[m.AgentCard]:
    signature = st.builds(
        m.AgentCardSignature, protected=nonempty, signature=nonempty, header=metadata
    )
    return st.builds(
        m.AgentCard,
        name=nonempty,
        description=text,
        version=nonempty,
        supported_interfaces=st.lists(interfaces(flavor), min_size=1, max_size=3, unique=True).map(
            tuple
        ),
        capabilities=capabilities(flavor),
        default_input_modes=modes,
        default_output_modes=modes,
        skills=st.lists(skills(flavor), max_size=2).map(tuple),
        provider=st.none() | st.builds(m.AgentProvider, organization=nonempty, url=urls),
        documentation_url=st.none() | urls,
        icon_url=st.none() | urls,
        security_schemes=st.dictionaries(nonempty, security_schemes(flavor), max_size=3),
        security_requirements=st.lists(requirements, max_size=2).map(tuple),
        signatures=st.lists(signature, max_size=2).map(tuple),
    )


def send_configurations(flavor: Flavor) -> st.SearchStrategy[m.SendMessageConfiguration]:
    return st.builds(
        m.SendMessageConfiguration,
        accepted_output_modes=modes,
        push_notification_config=st.none() | push_configs(flavor, task_id=False),
        history_length=st.none() | st.integers(0, 1000),
        return_immediately=st.booleans(),
    )


def _tenant(flavor: Flavor) -> st.SearchStrategy[str]:
    return (st.just("") | ids) if flavor is Flavor.V1_0 else st.just("")


def _request_metadata(flavor: Flavor) -> st.SearchStrategy[Any]:
    # 1.0 requests other than SendMessage/CancelTask carry no metadata; 0.3 ones do.
    return st.none() if flavor is Flavor.V1_0 else metadata


def requests(flavor: Flavor) -> dict[type[m.Model], st.SearchStrategy[Any]]:
    """A strategy per request/response model type this flavor can express."""
    v1 = flavor is Flavor.V1_0
    out: dict[type[m.Model], st.SearchStrategy[Any]] = {
        m.SendMessageRequest: st.builds(
            m.SendMessageRequest,
            message=messages(flavor),
            configuration=st.none() | send_configurations(flavor),
            metadata=metadata,
            tenant=_tenant(flavor),
        ),
        m.GetTaskRequest: st.builds(
            m.GetTaskRequest,
            id=ids,
            history_length=st.none() | st.integers(0, 1000),
            metadata=_request_metadata(flavor),
            tenant=_tenant(flavor),
        ),
        m.CancelTaskRequest: st.builds(
            m.CancelTaskRequest, id=ids, metadata=metadata, tenant=_tenant(flavor)
        ),
        m.SubscribeToTaskRequest: st.builds(
            m.SubscribeToTaskRequest,
            id=ids,
            metadata=_request_metadata(flavor),
            tenant=_tenant(flavor),
        ),
        m.GetTaskPushNotificationConfigRequest: st.builds(
            m.GetTaskPushNotificationConfigRequest,
            task_id=ids,
            id=ids,
            metadata=_request_metadata(flavor),
            tenant=_tenant(flavor),
        ),
        m.ListTaskPushNotificationConfigsRequest: st.builds(
            m.ListTaskPushNotificationConfigsRequest,
            task_id=ids,
            page_size=st.integers(0, 100) if v1 else st.just(0),
            page_token=(st.just("") | ids) if v1 else st.just(""),
            metadata=_request_metadata(flavor),
            tenant=_tenant(flavor),
        ),
        m.DeleteTaskPushNotificationConfigRequest: st.builds(
            m.DeleteTaskPushNotificationConfigRequest,
            task_id=ids,
            id=ids,
            metadata=_request_metadata(flavor),
            tenant=_tenant(flavor),
        ),
        m.GetExtendedAgentCardRequest: st.builds(
            m.GetExtendedAgentCardRequest, tenant=_tenant(flavor)
        ),
        m.ListTaskPushNotificationConfigsResponse: st.builds(
            m.ListTaskPushNotificationConfigsResponse,
            configs=st.lists(push_configs(flavor), max_size=2).map(tuple),
            next_page_token=(st.just("") | ids) if v1 else st.just(""),
        ),
    }
    if v1:
        out[m.ListTasksRequest] = st.builds(
            m.ListTasksRequest,
            context_id=st.just("") | ids,
            status=st.none() | states(flavor),
            page_size=st.none() | st.integers(1, 100),
            page_token=st.just("") | ids,
            history_length=st.none() | st.integers(0, 100),
            status_timestamp_after=st.none() | timestamps,
            include_artifacts=st.none() | st.booleans(),
            tenant=_tenant(flavor),
        )
        out[m.ListTasksResponse] = st.builds(
            m.ListTasksResponse,
            tasks=st.lists(tasks(flavor), max_size=2).map(tuple),
            next_page_token=st.just("") | ids,
            page_size=st.integers(0, 100),
            total_size=st.integers(0, 10_000),
        )
    return out


def all_models(flavor: Flavor) -> dict[type[m.Model], st.SearchStrategy[Any]]:
    """A strategy for every model type this flavor can express on its own."""
    return {
        **part_kinds(flavor),
        m.Message: messages(flavor),
        m.TaskStatus: statuses(flavor),
        m.Artifact: artifacts(flavor),
        m.Task: tasks(flavor),
        m.TaskStatusUpdateEvent: status_events(flavor),
        m.TaskArtifactUpdateEvent: artifact_events(flavor),
        m.AuthenticationInfo: auth_infos(flavor),
        m.TaskPushNotificationConfig: push_configs(flavor),
        m.AgentCard: cards(flavor),
        m.AgentSkill: skills(flavor),
        m.AgentCapabilities: capabilities(flavor),
        m.AgentInterface: interfaces(flavor),
        m.AgentExtension: extensions(),
        m.SecurityRequirement: requirements,
        m.SendMessageConfiguration: send_configurations(flavor),
        **requests(flavor),
    }
