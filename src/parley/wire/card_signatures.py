"""Signed agent cards (A2A 1.0 §8.4; REFERENCE §5.7, R-CARD-9..22): a detached JWS
(RFC 7515) over the card's canonical JSON.

What is signed: the card's 1.0 JSON form (REQUIRED fields always present, optional ones
present when set, other defaults left out — what the 1.0 codec writes), without its
`signatures` member, canonicalized by RFC 8785 (the `rfc8785` library). A dual-version
card is signed over that 1.0 projection: its 0.3 members are not part of it. The
protected header carries `alg`, `typ: "JOSE"` and `kid` (by default the key's RFC 7638
thumbprint), and `jku` when given; the payload is not stored. Several signatures may sit
side by side (key rotation): a card verifies when one of them does, with a key of the
caller's key set and an algorithm of the allow-list (never `none`, never HMAC).

Keys and JOSE are `joserfc`'s (the `auth` extra: `pip install 'parley-a2a[auth]'`).
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from parley.model import AgentCard, AgentCardSignature
from parley.wire.v1_0.card import encode_card

ALGORITHMS = (
    "ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "EdDSA", "Ed25519",
)  # fmt: skip
"""What a signature may be made with, and verified: asymmetric algorithms only."""


class CardSignatureError(ValueError):
    """A card that does not verify, or a key that cannot sign or verify one."""


def canonical(card: AgentCard) -> bytes:
    """The bytes a card's signatures are over: its 1.0 JSON without `signatures`, by RFC
    8785."""
    import rfc8785  # noqa: PLC0415 - the auth extra

    return rfc8785.dumps(encode_card(replace(card, signatures=())))


def protected_header(signature: AgentCardSignature) -> dict[str, Any]:
    """A signature's protected header (`alg`, `kid`, ...); CardSignatureError if it is not
    a base64url JSON object."""
    try:
        header = json.loads(_unb64(signature.protected))
    except ValueError:
        header = None
    if not isinstance(header, dict):
        raise CardSignatureError("a protected header that is not a JSON object")
    return header


@contextmanager
def _quiet() -> Iterator[None]:
    """joserfc warns that `EdDSA` is superseded by `Ed25519` (RFC 9864); cards use the
    name every JOSE library knows (the spec's examples, the official SDKs' verifiers)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="EdDSA is deprecated")
        yield


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _algorithm(key: Any) -> str:
    kty = key.key_type
    if kty == "RSA":
        return "RS256"
    if kty == "OKP" and key.as_dict(private=False).get("crv") == "Ed25519":
        return "EdDSA"
    if kty == "EC":
        curve = key.as_dict(private=False).get("crv")
        by_curve = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}
        if curve in by_curve:
            return by_curve[curve]
    raise CardSignatureError(f"cannot sign cards with a {kty} key (EC, RSA or Ed25519)")


class CardSigner:
    """Signs cards with one private key: `key` is PEM text or bytes, a path to a PEM
    file, or a joserfc key. `kid` defaults to the key's RFC 7638 thumbprint; `jku` is put
    in the header when given (a URL of a JWKS with the public key)."""

    def __init__(self, key: Any, *, kid: str | None = None, jku: str | None = None) -> None:
        self.key = load_private_key(key)
        self.algorithm = _algorithm(self.key)
        self.kid = kid or self.key.thumbprint()
        self.jku = jku

    def sign(self, card: AgentCard) -> AgentCard:
        """The card with this key's signature added to any it has."""
        from joserfc import jws  # noqa: PLC0415 - the auth extra

        header: dict[str, Any] = {"alg": self.algorithm, "typ": "JOSE", "kid": self.kid}
        if self.jku:
            header["jku"] = self.jku
        with _quiet():
            compact = jws.serialize_compact(
                header, canonical(card), self.key, algorithms=[self.algorithm]
            )
        protected, _, signature = compact.split(".")
        made = AgentCardSignature(protected=protected, signature=signature)
        return replace(card, signatures=(*card.signatures, made))

    def jwks(self) -> dict[str, Any]:
        """The public key as a JWKS (with its `kid`, `alg` and `use`), for verifiers."""
        public = self.key.as_dict(private=False)
        return {"keys": [{**public, "kid": self.kid, "alg": self.algorithm, "use": "sig"}]}


def load_private_key(key: Any) -> Any:
    from joserfc.jwk import ECKey, OKPKey, RSAKey  # noqa: PLC0415 - the auth extra

    if isinstance(key, ECKey | OKPKey | RSAKey):
        return key
    data = _read(key)
    for kind in (ECKey, RSAKey, OKPKey):
        try:
            loaded = kind.import_key(data)
        except Exception:  # noqa: S112 - not this kind: try the next
            continue
        if loaded.is_private:
            return loaded
        raise CardSignatureError("signing a card needs a private key, not a public one")
    raise CardSignatureError("not a PEM private key (EC P-256/384/521, RSA or Ed25519)")


def load_keys(source: Any) -> list[tuple[str | None, Any]]:
    """The keys to verify with, each with its `kid` (None: any signature may be tried with
    it): a JWKS (dict, JSON text or file), a PEM public key (text, bytes or file), a
    joserfc key, or a list of those."""
    from joserfc.jwk import ECKey, JWKRegistry, OKPKey, RSAKey  # noqa: PLC0415 - auth extra

    if isinstance(source, list):
        return [each for item in source for each in load_keys(item)]
    if isinstance(source, ECKey | OKPKey | RSAKey):
        return [(None, source)]
    if not isinstance(source, dict):
        data = _read(source)
        text = data.decode(errors="replace").strip()
        if not text.startswith("{"):
            for kind in (ECKey, RSAKey, OKPKey):
                try:
                    return [(None, kind.import_key(data))]
                except Exception:  # noqa: S112 - not this kind: try the next
                    continue
            raise CardSignatureError("not a JWKS or a PEM public key")
        try:
            source = json.loads(text)
        except ValueError as exc:
            raise CardSignatureError(f"not a JWKS: {exc}") from None
    entries = source.get("keys", [source]) if isinstance(source, dict) else None
    if not isinstance(entries, list):
        raise CardSignatureError("not a JWKS: no keys")
    try:
        return [(entry.get("kid"), JWKRegistry.import_key(entry)) for entry in entries]
    except Exception as exc:
        raise CardSignatureError(f"not a JWKS: {exc}") from None


def _read(key: Any) -> bytes:
    if isinstance(key, Path):
        return key.read_bytes()
    if isinstance(key, str):
        if "-----BEGIN" in key or key.lstrip().startswith("{"):
            return key.encode()
        return Path(key).read_bytes()
    if isinstance(key, bytes):
        return key
    raise CardSignatureError(f"not a key: {type(key).__name__}")


def verify_card(
    card: AgentCard, keys: Any, *, algorithms: Collection[str] = ALGORITHMS
) -> AgentCardSignature:
    """The first of the card's signatures that verifies with `keys` (see `load_keys`) and
    an allowed algorithm; CardSignatureError when the card has none that does."""
    from joserfc import jws  # noqa: PLC0415 - the auth extra

    if not card.signatures:
        raise CardSignatureError("the card is not signed")
    known = load_keys(keys)
    payload = _b64(canonical(card))
    reasons: list[str] = []
    for signature in card.signatures:
        try:
            header = protected_header(signature)
        except CardSignatureError as exc:
            reasons.append(str(exc))
            continue
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in algorithms or algorithm == "none":
            reasons.append(f"algorithm {algorithm!r} not allowed")
            continue
        value = f"{signature.protected}.{payload}.{signature.signature}"
        kid = header.get("kid")
        candidates = [key for key_id, key in known if key_id in (kid, None)]
        for key in candidates:
            try:
                with _quiet():
                    jws.deserialize_compact(value, key, algorithms=[algorithm])
            except Exception:  # noqa: S112 - not this key: the next one
                continue
            return signature
        reasons.append(f"kid {kid!r}: " + ("no key verifies" if candidates else "no such key"))
    raise CardSignatureError("no signature of the card verifies: " + "; ".join(reasons))


__all__ = [
    "ALGORITHMS",
    "CardSignatureError",
    "CardSigner",
    "canonical",
    "load_keys",
    "load_private_key",
    "protected_header",
    "verify_card",
]
