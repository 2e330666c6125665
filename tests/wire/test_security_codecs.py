"""The security codecs walk the shared scheme and flow tables: 1.0 leaves out the optional
URLs of the deprecated flows when empty, 0.3 always writes them; neither encodes a model
that is not a security scheme."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from parley import model as m
from parley.protocol.errors import InternalError
from parley.wire.v0_3 import security as v0_3
from parley.wire.v1_0 import security as v1_0


def test_deprecated_flows_without_urls() -> None:
    implicit = m.OAuthFlows(implicit=m.ImplicitOAuthFlow())
    password = m.OAuthFlows(password=m.PasswordOAuthFlow(refresh_url="https://r"))
    assert v1_0.encode_flows(implicit) == {"implicit": {}}
    assert v1_0.encode_flows(password) == {"password": {"refreshUrl": "https://r"}}
    assert v0_3.encode_flows(implicit) == {"implicit": {"authorizationUrl": "", "scopes": {}}}
    assert v0_3.decode_flows(v0_3.encode_flows(password)) == password


def test_device_code_is_1_0_only() -> None:
    flow = m.DeviceCodeOAuthFlow(
        device_authorization_url="https://d", token_url="https://t", scopes={}
    )
    flows = m.OAuthFlows(device_code=flow)
    encoded = {
        "deviceCode": {"deviceAuthorizationUrl": "https://d", "tokenUrl": "https://t", "scopes": {}}
    }
    assert v1_0.encode_flows(flows) == encoded
    assert v1_0.decode_flows(encoded) == flows
    assert v0_3.encode_flows(flows) == {}


@pytest.mark.parametrize("encode", [v1_0.encode_scheme, v0_3.encode_scheme])
def test_not_a_scheme(encode: Callable[[Any], object]) -> None:
    with pytest.raises(InternalError, match="Not a security scheme: AgentProvider"):
        encode(m.AgentProvider(url="https://p", organization="o"))
