"""Signed cards at their edges (`parley.wire.card_signatures`): keys given as joserfc
keys, paths, PEM text, JWKS text or lists; keys that cannot sign; key sources that are
not keys; a `jku` header; and a card whose signatures are malformed or of a forbidden
algorithm, each refused with its reason."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from joserfc.jwk import ECKey, OKPKey
from msgspec.structs import replace

from parley.model import AgentCapabilities, AgentCard, AgentCardSignature, AgentInterface
from parley.wire.card_signatures import (
    CardSignatureError,
    CardSigner,
    load_keys,
    load_private_key,
    protected_header,
    verify_card,
)

CARD = AgentCard(
    name="Signed",
    description="a card to sign",
    version="1.0.0",
    supported_interfaces=(
        AgentInterface(
            url="http://127.0.0.1:9", protocol_binding="JSONRPC", protocol_version="1.0"
        ),
    ),
    capabilities=AgentCapabilities(),
    default_input_modes=("text/plain",),
    default_output_modes=("text/plain",),
    skills=(),
)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_a_joserfc_key_signs_with_a_jku_and_verifies_from_a_joserfc_public_key() -> None:
    key = ECKey.generate_key("P-384")
    signer = CardSigner(key, kid="k1", jku="https://keys.example/jwks.json")
    signed = signer.sign(CARD)
    header = protected_header(signed.signatures[0])
    assert header == {
        "alg": "ES384",
        "typ": "JOSE",
        "kid": "k1",
        "jku": "https://keys.example/jwks.json",
    }
    public = ECKey.import_key(key.as_dict(private=False))
    assert verify_card(signed, public) is signed.signatures[0]
    assert verify_card(signed, [json.dumps(signer.jwks())]) is signed.signatures[0]


def test_keys_are_read_from_paths_given_as_path_or_text(tmp_path: Path) -> None:
    key = ECKey.generate_key("P-256")
    private = tmp_path / "card.pem"
    private.write_bytes(key.as_pem(private=True))
    public = tmp_path / "card.pub.pem"
    public.write_bytes(key.as_pem(private=False))
    jwks = tmp_path / "jwks.json"
    signed_by_path = CardSigner(private).sign(CARD)
    jwks.write_text(json.dumps(CardSigner(str(private)).jwks()))
    assert verify_card(signed_by_path, public)
    assert verify_card(signed_by_path, str(public))
    assert verify_card(signed_by_path, jwks)


def test_a_key_of_another_curve_cannot_sign() -> None:
    with pytest.raises(CardSignatureError, match="cannot sign cards with a OKP key"):
        CardSigner(OKPKey.generate_key("X25519"))
    with pytest.raises(CardSignatureError, match="cannot sign cards with a EC key"):
        CardSigner(ECKey.generate_key("secp256k1"))


def test_a_public_key_or_no_key_cannot_sign() -> None:
    public = ECKey.generate_key("P-256").as_pem(private=False)
    with pytest.raises(CardSignatureError, match="needs a private key"):
        load_private_key(public)
    with pytest.raises(CardSignatureError, match="not a PEM private key"):
        load_private_key(b"-----BEGIN PRIVATE KEY-----\nnonsense\n-----END PRIVATE KEY-----\n")
    with pytest.raises(CardSignatureError, match="not a key: int"):
        load_private_key(42)


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            b"-----BEGIN PUBLIC KEY-----\nnonsense\n-----END PUBLIC KEY-----\n",
            "not a JWKS or a PEM",
        ),
        ("{not json", "not a JWKS: "),
        ('{"keys": {"kty": "EC"}}', "not a JWKS: no keys"),
        ({"keys": [{"kty": "nonsense"}]}, "not a JWKS: "),
        (3.5, "not a key: float"),
    ],
)
def test_what_is_not_a_key_set_is_refused(source: object, reason: str) -> None:
    with pytest.raises(CardSignatureError, match=reason):
        load_keys(source)


def test_a_single_jwk_object_is_a_key_set_of_one() -> None:
    signer = CardSigner(ECKey.generate_key("P-256"), kid="solo")
    [(kid, key)] = load_keys(signer.jwks()["keys"][0])
    assert kid == "solo"
    assert key.key_type == "EC"


def test_malformed_protected_headers_are_refused() -> None:
    not_json = AgentCardSignature(protected=b64(b"not json"), signature="x")
    not_object = AgentCardSignature(protected=b64(b"[1, 2]"), signature="x")
    for signature in (not_json, not_object):
        with pytest.raises(CardSignatureError, match="not a JSON object"):
            protected_header(signature)


def test_a_card_verifies_by_its_good_signature_among_bad_ones_and_names_each_reason() -> None:
    signer = CardSigner(ECKey.generate_key("P-256"), kid="good")
    good = signer.sign(CARD).signatures[0]
    garbled = AgentCardSignature(protected=b64(b"[]"), signature="x")
    hmac = AgentCardSignature(protected=b64(b'{"alg": "HS256", "kid": "good"}'), signature="x")
    unknown = AgentCardSignature(protected=b64(b'{"alg": "ES256", "kid": "other"}'), signature="x")
    card = replace(CARD, signatures=(garbled, hmac, unknown, good))
    assert verify_card(card, signer.jwks()) == good
    bad = replace(CARD, signatures=(garbled, hmac, unknown))
    with pytest.raises(CardSignatureError) as refused:
        verify_card(bad, signer.jwks())
    assert str(refused.value) == (
        "no signature of the card verifies: a protected header that is not a JSON object; "
        "algorithm 'HS256' not allowed; kid 'other': no such key"
    )
