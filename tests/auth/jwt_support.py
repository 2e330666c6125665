"""What the JWT tests share: signing keys made with `cryptography`, tokens signed with them,
and a real JWKS (and OpenID Connect discovery) endpoint on 127.0.0.1 whose key set the
test changes at will and whose requests it counts."""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from joserfc import jwt
from joserfc.jwk import ECKey, Key, OKPKey, RSAKey
from joserfc.jws import JWSRegistry

ISSUER = "https://issuer.example"
AUDIENCE = "urn:agent:reports"


@dataclass
class SigningKey:
    """A private key, its id and the algorithm it signs with."""

    kid: str
    alg: str
    key: Key

    def public(self) -> dict[str, Any]:
        """Its public JWK, as a JWKS lists it."""
        return {**self.key.as_dict(private=False), "kid": self.kid, "use": "sig"}

    def sign(self, claims: Mapping[str, Any], **header: Any) -> str:
        """A JWT of these claims, with `kid` and `alg` in its header unless overridden
        (a header value of None is left out)."""
        protected = {"alg": self.alg, "kid": self.kid, "typ": "JWT", **header}
        protected = {name: value for name, value in protected.items() if value is not None}
        with warnings.catch_warnings():  # signing with EdDSA warns (RFC 9864)
            warnings.simplefilter("ignore")
            return jwt.encode(protected, dict(claims), self.key, algorithms=[protected["alg"]])

    def sign_raw(self, header: Mapping[str, Any], payload: bytes) -> str:
        """A compact JWS of any header and payload, signed with this key and algorithm
        (no check of what they say: for tokens a library would refuse to make)."""
        head = b64(json.dumps(dict(header)).encode())
        signing_input = f"{head}.{b64(payload)}".encode()
        signature = JWSRegistry.algorithms[self.alg].sign(signing_input, self.key)
        return f"{signing_input.decode()}.{b64(signature)}"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def rsa_key(kid: str, alg: str = "RS256") -> SigningKey:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return SigningKey(kid, alg, RSAKey.import_key(private))


def ec_key(kid: str) -> SigningKey:
    return SigningKey(kid, "ES256", ECKey.import_key(ec.generate_private_key(ec.SECP256R1())))


def ed_key(kid: str, alg: str = "EdDSA") -> SigningKey:
    return SigningKey(kid, alg, OKPKey.import_key(ed25519.Ed25519PrivateKey.generate()))


def jwks(*keys: SigningKey) -> bytes:
    return json.dumps({"keys": [key.public() for key in keys]}).encode()


def claims(**changes: Any) -> dict[str, Any]:
    """Valid claims for ISSUER and AUDIENCE (a key set to None is left out), with a
    `jti` of their own: each token is new to the verifier (none is a remembered one)."""
    now = int(time.time())
    base: dict[str, Any] = {
        "jti": uuid.uuid4().hex,
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "alice",
        "iat": now,
        "nbf": now,
        "exp": now + 600,
        "scope": "reports:read",
    }
    base.update(changes)
    return {name: value for name, value in base.items() if value is not None}


@dataclass
class Endpoint:
    """What the JWKS server answers, and what it was asked."""

    url: str
    body: bytes = b'{"keys": []}'
    status: int = 200
    cache_control: str = ""
    delay: float = 0.0
    discovery: dict[str, Any] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)

    @property
    def jwks_url(self) -> str:
        return self.url + "/jwks.json"

    @property
    def discovery_url(self) -> str:
        return self.url + "/.well-known/openid-configuration"

    def count(self, path: str = "/jwks.json") -> int:
        return self.hits.get(path, 0)


@contextmanager
def jwks_server(body: bytes = b'{"keys": []}') -> Iterator[Endpoint]:
    """A JWKS endpoint (`/jwks.json`) and a discovery document on 127.0.0.1."""
    lock = threading.Lock()
    endpoint: Endpoint

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with lock:
                endpoint.hits[self.path] = endpoint.hits.get(self.path, 0) + 1
            time.sleep(endpoint.delay)
            if self.path == "/.well-known/openid-configuration":
                payload, status = json.dumps(endpoint.discovery).encode(), 200
            elif self.path == "/jwks.json":
                payload, status = endpoint.body, endpoint.status
            else:
                payload, status = b"not found", 404
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            if endpoint.cache_control:
                self.send_header("Cache-Control", endpoint.cache_control)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    endpoint = Endpoint(url=f"http://127.0.0.1:{server.server_address[1]}", body=body)
    endpoint.discovery = {"issuer": endpoint.url, "jwks_uri": endpoint.jwks_url}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
