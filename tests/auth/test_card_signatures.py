"""Signed agent cards (issue: deployable security II, part 1; REFERENCE §5.7, R-CARD-9..22):
RFC 8785 canonical JSON of the card's 1.0 form without `signatures`, a detached JWS with
`alg`, `typ` and `kid`; signed with ES256, RS256 and EdDSA keys, verified by Parley and,
independently, by PyJWT over the canonical bytes computed from the served JSON; a
tampered card, a wrong key and an unsigned card are refused; a card whose members come
in another order verifies; served by `AgentService(sign_card=...)` and `parley serve
--sign-card`, checked by `Client.connect(card_keys=...)` and `parley card --verify`."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import jwt
import pytest
import rfc8785
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from msgspec.structs import replace

from parley.asgi import build_app
from parley.client import Client
from parley.client.card import decode_card
from parley.model import AgentCapabilities, AgentCard, AgentExtension
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.wire.card_signatures import CardSignatureError, CardSigner, canonical, verify_card
from parley.wire.v1_0.card import encode_card
from tests.interop.live import serving
from tests.serving import wait_for_card

ROOT = Path(__file__).resolve().parents[2]
KEYS: dict[str, Callable[[], Any]] = {
    "ES256": lambda: ec.generate_private_key(ec.SECP256R1()),
    "RS256": lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
    "EdDSA": ed25519.Ed25519PrivateKey.generate,
}


def pem(key: Any) -> bytes:
    data: bytes = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return data


def public_pem(key: Any) -> bytes:
    data: bytes = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return data


def example_card() -> AgentCard:
    agent = Agent("Signed Café ✓", description="Plans routes — vite.")
    agent.skill()(_echo)
    card = agent.card("http://127.0.0.1:1")
    extension = AgentExtension(uri="urn:x", params={"ratio": 1.0, "big": 1e21, "n": 3})
    return replace(card, capabilities=replace(card.capabilities, extensions=(extension,)))


async def _echo(task: Any) -> str:
    return str(task.text)


def header_of(protected: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(protected + "=="))
    return loaded


def test_the_spec_s_presence_rules_and_rfc_8785() -> None:
    """R-CARD-10..15: optional fields set to their default kept (capabilities' false
    flags), REQUIRED ones kept when empty, other defaults left out (an empty extension
    list); keys sorted, no whitespace, raw UTF-8, ECMAScript numbers."""
    card = AgentCard(
        name="Example Agent",
        description="",
        version="",
        supported_interfaces=(),
        capabilities=AgentCapabilities(streaming=False, push_notifications=False),
        default_input_modes=(),
        default_output_modes=(),
        skills=(),
    )
    assert canonical(card) == (
        b'{"capabilities":{"pushNotifications":false,"streaming":false},'
        b'"defaultInputModes":[],"defaultOutputModes":[],"description":"",'
        b'"name":"Example Agent","skills":[],"supportedInterfaces":[],"version":""}'
    )
    text = canonical(example_card()).decode()
    assert "Signed Café ✓" in text
    assert '"params":{"big":1e+21,"n":3,"ratio":1}' in text
    assert ": " not in text


@pytest.mark.parametrize("algorithm", list(KEYS))
def test_a_signed_card_verifies_here_and_in_pyjwt(algorithm: str) -> None:
    key = KEYS[algorithm]()
    signer = CardSigner(pem(key))
    signed = signer.sign(example_card())
    (signature,) = signed.signatures
    header = header_of(signature.protected)
    assert header == {"alg": algorithm, "typ": "JOSE", "kid": signer.kid}  # R-CARD-17/18
    assert verify_card(signed, public_pem(key)) == signature
    assert verify_card(signed, signer.jwks()) == signature
    # Independently: the canonical bytes from the card's JSON by rfc8785, the JWS by PyJWT.
    document = encode_card(signed)
    del document["signatures"]
    payload = rfc8785.dumps(document)
    attached = base64.urlsafe_b64encode(payload).rstrip(b"=").decode()
    token = f"{signature.protected}.{attached}.{signature.signature}"
    verified = jwt.api_jws.PyJWS().decode_complete(token, public_pem(key), algorithms=[algorithm])
    assert verified["payload"] == payload


def test_a_signature_made_by_pyjwt_verifies_in_parley() -> None:
    key = KEYS["ES256"]()
    card = example_card()
    token = jwt.api_jws.PyJWS().encode(
        canonical(card), pem(key), algorithm="ES256", headers={"kid": "k1", "typ": "JOSE"}
    )
    protected, _, signature = token.split(".")
    from parley.model import AgentCardSignature  # noqa: PLC0415

    signed = replace(
        card, signatures=(AgentCardSignature(protected=protected, signature=signature),)
    )
    assert verify_card(signed, public_pem(key)).signature == signature


def test_tampered_wrong_key_unsigned_and_none_are_refused() -> None:
    key = KEYS["ES256"]()
    signed = CardSigner(pem(key)).sign(example_card())
    tampered = replace(signed, description="Plans routes, and reads your mail.")
    with pytest.raises(CardSignatureError, match="no signature of the card verifies"):
        verify_card(tampered, public_pem(key))
    with pytest.raises(CardSignatureError, match="no signature of the card verifies"):
        verify_card(signed, public_pem(KEYS["ES256"]()))
    with pytest.raises(CardSignatureError, match="not signed"):
        verify_card(example_card(), public_pem(key))
    none = base64.urlsafe_b64encode(b'{"alg":"none","kid":"x"}').rstrip(b"=").decode()
    (signature,) = signed.signatures
    forged = replace(signed, signatures=(replace(signature, protected=none, signature=""),))
    with pytest.raises(CardSignatureError, match="'none' not allowed"):
        verify_card(forged, public_pem(key))


def test_a_card_with_members_in_another_order_verifies() -> None:
    """The signature is over the canonical form: a peer that writes the card's members in
    another order (or pretty-printed) serves a card that still verifies."""
    key = KEYS["RS256"]()
    signed = CardSigner(pem(key)).sign(example_card())

    def reordered(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: reordered(value[k]) for k in reversed(list(value))}
        if isinstance(value, list):
            return [reordered(v) for v in value]
        return value

    text = json.dumps(reordered(encode_card(signed)), indent=2, ensure_ascii=True)
    assert text.index('"skills"') < text.index('"name"')
    assert verify_card(decode_card(json.loads(text)), public_pem(key)).signature


def test_key_rotation_any_signature_that_verifies_will_do() -> None:
    old, new = KEYS["ES256"](), KEYS["EdDSA"]()
    signed = CardSigner(pem(new), kid="new").sign(
        CardSigner(pem(old), kid="old").sign(example_card())
    )
    assert len(signed.signatures) == 2
    assert header_of(verify_card(signed, public_pem(new)).protected)["kid"] == "new"
    assert header_of(verify_card(signed, public_pem(old)).protected)["kid"] == "old"


def test_a_public_key_cannot_sign() -> None:
    with pytest.raises(CardSignatureError, match="private key"):
        CardSigner(public_pem(KEYS["ES256"]()))


@pytest.fixture
def signed_server() -> Iterator[tuple[str, Any]]:
    key = KEYS["ES256"]()
    agent = Agent("Signed")
    agent.skill()(_echo)

    def make_app(url: str) -> Any:
        signer = CardSigner(pem(key))
        return build_app(AgentService(agent.executor(), agent.card(url), sign_card=signer.sign))

    with serving(make_app) as url:
        yield url, key


def test_the_served_card_verifies_in_the_client(signed_server: tuple[str, Any]) -> None:
    """The hybrid card (1.0 plus the 0.3 members) is signed over its 1.0 projection."""
    url, key = signed_server
    served = httpx.get(url + "/.well-known/agent-card.json").json()
    assert "url" in served  # the 0.3 members are there, outside the signed projection
    assert verify_card(decode_card(served), public_pem(key)).signature

    async def connect(keys: Any) -> AgentCard:
        async with Client.connect(url, card_keys=keys) as client:
            assert client.card is not None
            return client.card

    assert anyio.run(connect, public_pem(key)).signatures
    with pytest.raises(CardSignatureError):
        anyio.run(connect, public_pem(KEYS["ES256"]()))


def test_parley_serve_sign_card_and_parley_card_verify(tmp_path: Path) -> None:
    key = KEYS["RS256"]()
    (tmp_path / "key.pem").write_bytes(pem(key))
    (tmp_path / "public.pem").write_bytes(public_pem(key))
    (tmp_path / "other.pem").write_bytes(public_pem(KEYS["RS256"]()))
    from tests.ports import free_port  # noqa: PLC0415

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "parley.cli", "serve", "examples.echo:agent", "--port"]
    command += [str(port), "--store", "memory", "--sign-card", str(tmp_path / "key.pem")]
    command += ["--sign-card-kid", "main-2026"]
    log = tmp_path / "serve.log"
    with log.open("ab") as errors:
        server = subprocess.Popen(command, cwd=ROOT, stderr=errors)
    try:
        wait_for_card(url, server, log.read_text)

        def card(*extra: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "parley.cli", "card", url, *extra],
                capture_output=True, text=True, timeout=60, check=False, cwd=ROOT,
            )  # fmt: skip

        good = card("--verify", str(tmp_path / "public.pem"))
        assert good.returncode == 0, good.stderr
        assert "signature verified: kid main-2026, RS256" in good.stderr
        bad = card("--verify", str(tmp_path / "other.pem"))
        assert bad.returncode == 5
        assert "parley: signature: no signature of the card verifies" in bad.stderr
        missing = card("--verify", str(tmp_path / "missing.pem"))
        assert missing.returncode == 2
        assert "--verify: No such file or directory" in missing.stderr
    finally:
        server.terminate()
        server.wait(10)
