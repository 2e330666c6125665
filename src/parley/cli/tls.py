"""`parley serve`'s TLS options: the server's certificate and key, and the CA that client
certificates must chain to. They apply to uvicorn and to the gRPC server alike, and a
client CA adds a `MutualTls` scheme to the served agent's `Security`.

uvicorn verifies client certificates but does not hand them to the app; `http_protocol`
is its HTTP/1.1 protocol adding the ASGI TLS extension (`scope["extensions"]["tls"]`,
with `client_cert_chain`) to every request of a TLS connection, which is where the
HTTP bindings read the verified certificate (`tls_client_certificate`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import ssl
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from parley.model import MutualTlsSecurityScheme
from parley.server.auth.certificates import distinguished_name

if TYPE_CHECKING:
    import grpc

    from parley.server.auth import Scheme, Security

log = logging.getLogger("parley")

ASGIApp = Any
"""An ASGI application (uvicorn's own alias is not importable without uvicorn)."""

_TLS_VERSIONS = {"TLSv1": 0x0301, "TLSv1.1": 0x0302, "TLSv1.2": 0x0303, "TLSv1.3": 0x0304}
"""`SSLObject.version()` names to the numbers the ASGI TLS extension reports."""


class TlsFiles(Struct, frozen=True):
    """PEM files: the server's certificate (chain) and key; the CA bundle client
    certificates are verified against (None: none are asked for); and whether a
    connection without a client certificate is refused during the handshake. (A frozen
    Struct, not a dataclass: a dataclass compiles its methods when the module loads.)"""

    cert: str
    key: str
    client_ca: str | None = None
    require_client_cert: bool = False


def add_tls_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "TLS", "serve HTTPS (and gRPC over TLS); with --tls-client-ca, accept client certificates"
    )
    group.add_argument("--tls-cert", metavar="FILE", help="the server's certificate chain (PEM)")
    group.add_argument("--tls-key", metavar="FILE", help="the server's private key (PEM)")
    group.add_argument(
        "--tls-client-ca",
        metavar="FILE",
        help="verify client certificates against the CAs in FILE (PEM) and accept their "
        "subject's commonName as the caller (mutual TLS); gRPC then requires one",
    )
    group.add_argument(
        "--tls-require-client-cert",
        action="store_true",
        help="refuse HTTP connections without a client certificate, during the handshake",
    )


def tls_from(arguments: argparse.Namespace) -> TlsFiles | None:
    """The TLS files the options name, checked now (a server that cannot load them should
    not start); None without `--tls-cert`."""
    cert, key = arguments.tls_cert, arguments.tls_key
    client_ca, required = arguments.tls_client_ca, arguments.tls_require_client_cert
    if not cert or not key:
        if cert or key or client_ca or required:
            raise SystemExit("parley serve: TLS needs both --tls-cert and --tls-key")
        return None
    if required and not client_ca:
        raise SystemExit("parley serve: --tls-require-client-cert needs --tls-client-ca")
    tls = TlsFiles(cert, key, client_ca, required)
    server_context(tls)
    return tls


def server_context(tls: TlsFiles) -> ssl.SSLContext:
    """An SSL context with the files loaded, as uvicorn builds one (SystemExit naming the
    option whose file is unusable)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(tls.cert, tls.key)
    except (OSError, ssl.SSLError) as exc:
        raise SystemExit(f"parley serve: --tls-cert/--tls-key: {exc}") from None
    if tls.client_ca:
        try:
            context.load_verify_locations(tls.client_ca)
        except (OSError, ssl.SSLError) as exc:
            raise SystemExit(f"parley serve: --tls-client-ca: {exc}") from None
        context.verify_mode = ssl.CERT_REQUIRED if tls.require_client_cert else ssl.CERT_OPTIONAL
    return context


def uvicorn_options(tls: TlsFiles | None) -> dict[str, Any]:
    """`uvicorn.Config` keywords for `tls` (none without): the files, the client
    certificate requirement, and the protocol that hands the certificate to the app."""
    if tls is None:
        return {}
    options: dict[str, Any] = {
        "ssl_certfile": tls.cert,
        "ssl_keyfile": tls.key,
        "http": http_protocol(),
    }
    if tls.client_ca:
        options["ssl_ca_certs"] = tls.client_ca
        options["ssl_cert_reqs"] = (
            ssl.CERT_REQUIRED if tls.require_client_cert else ssl.CERT_OPTIONAL
        )
    return options


def grpc_credentials(tls: TlsFiles) -> grpc.ServerCredentials:
    """The gRPC server's TLS credentials. grpcio verifies client certificates only when it
    requires them, so with a client CA every gRPC connection needs one."""
    import grpc  # noqa: PLC0415 - the grpc extra, checked by the caller

    pairs = [(Path(tls.key).read_bytes(), Path(tls.cert).read_bytes())]
    if tls.client_ca is None:
        return grpc.ssl_server_credentials(pairs)
    roots = Path(tls.client_ca).read_bytes()
    if not tls.require_client_cert:
        log.info("gRPC requires a client certificate (grpcio verifies none it does not require)")
    return grpc.ssl_server_credentials(pairs, root_certificates=roots, require_client_auth=True)


def mutual_tls_schemes(tls: TlsFiles | None, own: Security | None) -> Sequence[Scheme]:
    """The scheme a client CA adds to the agent's `Security`: `MutualTls` (principal: the
    subject's commonName), unless the agent declares a mutual TLS scheme of its own."""
    if tls is None or tls.client_ca is None:
        return ()
    if own is not None and any(
        isinstance(s.declaration(), MutualTlsSecurityScheme) for s in own.schemes.values()
    ):
        return ()
    try:
        from parley.server.auth.mtls import MutualTls  # noqa: PLC0415 - with a client CA only

        return (MutualTls(),)
    except ImportError as exc:
        raise SystemExit(f"parley serve: --tls-client-ca: {exc}") from None


def tls_extension(ssl_object: ssl.SSLObject) -> dict[str, Any]:
    """The ASGI TLS extension of a connection. `client_cert_chain` holds the client's
    certificate when the handshake verified it (Python exposes the leaf only); the server
    certificate and, when unknown, the cipher suite are reported as None, as the extension
    allows."""
    verified = ssl_object.getpeercert()  # None without a certificate, {} if not verified
    der = ssl_object.getpeercert(binary_form=True) if verified else None
    subject: Any = verified.get("subject", ()) if verified else ()
    return {
        "server_cert": None,
        "client_cert_chain": (ssl.DER_cert_to_PEM_cert(der),) if der else (),
        "client_cert_name": distinguished_name(subject) if verified else None,
        "client_cert_error": None,
        "tls_version": _TLS_VERSIONS.get(ssl_object.version() or ""),
        "cipher_suite": _cipher_suite(ssl_object),
    }


def _cipher_suite(ssl_object: ssl.SSLObject) -> int | None:
    cipher = ssl_object.cipher()
    if cipher is None:
        return None
    for known in ssl_object.context.get_ciphers():
        if known.get("name") == cipher[0] and "id" in known:
            return int(known["id"]) & 0xFFFF
    return None


def with_tls(app: ASGIApp, tls: Mapping[str, Any]) -> ASGIApp:
    """`app`, with the TLS extension `tls` in every HTTP scope (the server's scope is
    copied, not changed)."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            extensions = {**(scope.get("extensions") or {}), "tls": dict(tls)}
            scope = {**scope, "extensions": extensions}
        await app(scope, receive, send)

    return asgi


class _HandsOverCertificates(asyncio.Protocol):
    """Mixed into a uvicorn HTTP protocol: once a TLS connection is made, the app it
    calls sees the connection's TLS extension."""

    app: ASGIApp

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        if isinstance(ssl_object, ssl.SSLObject):
            self.app = with_tls(self.app, tls_extension(ssl_object))


def http_protocol() -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol, as its `auto` choice picks it (httptools if installed,
    else h11), handing client certificates to the app."""
    try:
        from uvicorn.protocols.http.httptools_impl import (  # noqa: PLC0415 - the server extra
            HttpToolsProtocol,
        )
    except ImportError:  # pragma: no cover - depends on the installed extras
        return h11_protocol()

    class HttpTools(_HandsOverCertificates, HttpToolsProtocol):
        pass

    return HttpTools


def h11_protocol() -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, handing client certificates to the app."""
    from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: PLC0415 - the server extra

    class H11(_HandsOverCertificates, H11Protocol):
        pass

    return H11
