"""Mutual TLS: the `MutualTls` scheme on its own, then served for real the way `parley
serve` builds it (its TLS options, uvicorn with the certificate-handing protocol, the gRPC
server with TLS credentials; certificates from trustme). Without a certificate, or with
one from another CA, a caller is refused — in the handshake when certificates are
required, else with 401 / UNAUTHENTICATED; with a good one it is the certificate's
principal, on JSON-RPC, HTTP+JSON and gRPC in both versions, and its tasks are its own.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import trustme
import uvicorn

from parley.asgi import build_app
from parley.cli.main import build_parser
from parley.cli.security import security_from
from parley.cli.serve import make_handler
from parley.cli.serve_grpc import with_grpc
from parley.cli.tls import (
    TlsFiles,
    grpc_credentials,
    h11_protocol,
    http_protocol,
    mutual_tls_schemes,
    tls_from,
    uvicorn_options,
)
from parley.client import (
    GRPC_BINDING,
    TRANSPORTS,
    CallOptions,
    Client,
    ClientConnectionError,
    JsonRpcTransport,
    RestTransport,
)
from parley.client.connect import grpc_transport
from parley.client.grpc import GrpcTransport
from parley.client.transport import Transport
from parley.grpc import GrpcServer
from parley.model import (
    AgentCard,
    GetTaskRequest,
    Message,
    MutualTlsSecurityScheme,
    Role,
    SendMessageRequest,
    Task,
    TextPart,
)
from parley.protocol.errors import TaskNotFoundError, UnauthenticatedError
from parley.protocol.negotiation import RELEASED_VERSIONS
from parley.server.agent import Agent
from parley.server.auth import ApiKeys, MutualTls, Security
from parley.server.auth.certificates import (
    certificate_dict,
    distinguished_name,
    parse_distinguished_name,
    tls_client_certificate,
)
from parley.server.context import AuthRequest
from parley.server.task_context import TaskContext
from tests.contracts.support import run
from tests.ports import free_port

ROOT = Path(__file__).parents[2]
OPTIONS = CallOptions(timeout=10)


# ---------------------------------------------------------------- certificates


@dataclass
class Pki:
    """A CA for servers, one for clients and a rogue one, their certificates, and the
    PEM files `parley serve` reads."""

    server_ca: trustme.CA
    client_ca: trustme.CA
    leaves: dict[str, trustme.LeafCert]
    files: Path

    def file(self, name: str) -> str:
        return str(self.files / name)

    def tls(self, *, required: bool) -> TlsFiles:
        return TlsFiles(
            self.file("server.pem"), self.file("server.key"), self.file("ca.pem"), required
        )

    def http(self, leaf: str | None) -> httpx.AsyncClient:
        """An httpx client trusting the server CA, presenting `leaf`'s certificate."""
        context = ssl.create_default_context()
        self.server_ca.configure_trust(context)
        if leaf is not None:
            self.leaves[leaf].configure_cert(context)
        return httpx.AsyncClient(verify=context)

    def grpc(self, leaf: str | None) -> grpc.ChannelCredentials:
        roots = self.server_ca.cert_pem.bytes()
        if leaf is None:
            return grpc.ssl_channel_credentials(roots)
        cert = self.leaves[leaf]
        return grpc.ssl_channel_credentials(
            roots, cert.private_key_pem.bytes(), cert.cert_chain_pems[0].bytes()
        )


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    server_ca = trustme.CA(organization_name="Parley test servers")
    client_ca = trustme.CA(organization_name="Parley test clients")
    rogue_ca = trustme.CA(organization_name="Rogue")
    leaves = {
        "alice": client_ca.issue_cert("alice@example.com", common_name="alice"),
        "bob": client_ca.issue_cert(common_name="bob"),
        "nameless": client_ca.issue_cert("nameless.example"),  # no commonName
        "mallory": rogue_ca.issue_cert(common_name="alice"),  # alice's name, wrong CA
    }
    files = tmp_path_factory.mktemp("pki")
    server = server_ca.issue_cert("127.0.0.1", "localhost")
    server.cert_chain_pems[0].write_to_path(str(files / "server.pem"))
    server.private_key_pem.write_to_path(str(files / "server.key"))
    client_ca.cert_pem.write_to_path(str(files / "ca.pem"))
    return Pki(server_ca, client_ca, leaves, files)


def peer(leaf: trustme.LeafCert) -> dict[str, Any]:
    return certificate_dict(leaf.cert_chain_pems[0].bytes())


def request_with(certificate: dict[str, Any] | None) -> AuthRequest:
    return AuthRequest("http", "POST", "/", {}, peer_certificate=certificate)


# ---------------------------------------------------------------- the scheme


def test_the_principal_is_the_subject_common_name(pki: Pki) -> None:
    alice = peer(pki.leaves["alice"])
    caller = run(MutualTls().verify(request_with(alice)))
    assert caller is not None
    assert caller.id == "alice"
    assert caller.claims["subject"] == distinguished_name(alice["subject"])
    assert str(caller.claims["subject"]).startswith("CN=alice,")
    assert caller.claims["issuer"] == distinguished_name(alice["issuer"])
    assert caller.claims["serialNumber"] == alice["serialNumber"]


def test_no_certificate_is_no_credential_of_this_kind() -> None:
    assert run(MutualTls().verify(request_with(None))) is None
    assert run(MutualTls().verify(request_with({}))) is None


def test_a_certificate_without_one_principal_is_refused(pki: Pki) -> None:
    with pytest.raises(UnauthenticatedError, match="has no subject commonName values"):
        run(MutualTls().verify(request_with(peer(pki.leaves["nameless"]))))
    two = {"subjectAltName": (("URI", "spiffe://a/x"), ("URI", "spiffe://a/y"))}
    with pytest.raises(UnauthenticatedError, match="has 2 URI subjectAltName entries"):
        run(MutualTls(principal_from="URI").verify(request_with(two)))
    huge = {"subject": ((("commonName", "x" * 513),),)}
    with pytest.raises(UnauthenticatedError, match="cannot name a caller"):
        run(MutualTls().verify(request_with(huge)))


@pytest.mark.parametrize(
    ("source", "principal"),
    [("URI", "spiffe://example.org/agent"), ("DNS", "agent.example"), ("email", "a@example.org")],
)
def test_a_subject_alt_name_type_may_name_the_principal(source: str, principal: str) -> None:
    certificate = {
        "subject": ((("commonName", "ignored"),),),
        "subjectAltName": (
            ("URI", "spiffe://example.org/agent"),
            ("DNS", "agent.example"),
            ("email", "a@example.org"),
        ),
    }
    caller = run(MutualTls(principal_from=source).verify(request_with(certificate)))
    assert caller is not None
    assert caller.id == principal


def test_allow_lists_of_principals_and_issuers(pki: Pki) -> None:
    alice, bob = peer(pki.leaves["alice"]), peer(pki.leaves["bob"])
    only_alice = MutualTls(principals=["alice"])
    assert run(only_alice.verify(request_with(alice))) is not None
    with pytest.raises(UnauthenticatedError, match="'bob' is not accepted"):
        run(only_alice.verify(request_with(bob)))
    issuer = distinguished_name(alice["issuer"])  # CN=...,OU=...,O=Parley test clients
    spaced = issuer.replace(",", ", ")  # the same name, written differently
    assert run(MutualTls(issuers=[spaced]).verify(request_with(bob))) is not None
    with pytest.raises(UnauthenticatedError, match="issuer is not accepted"):
        run(MutualTls(issuers=["CN=Someone else"]).verify(request_with(bob)))
    prefixed = run(
        MutualTls(principals=["bob"], principal_prefix="mtls:").verify(request_with(bob))
    )
    assert prefixed is not None
    assert prefixed.id == "mtls:bob"


def test_an_expired_or_future_certificate_is_refused() -> None:
    def stamp(moment: datetime) -> str:
        return moment.strftime("%b %d %H:%M:%S %Y GMT")

    now = datetime.now(UTC)
    subject = ((("commonName", "alice"),),)
    expired = {"subject": subject, "notAfter": stamp(now - timedelta(minutes=1))}
    future = {"subject": subject, "notBefore": stamp(now + timedelta(days=1))}
    with pytest.raises(UnauthenticatedError, match="expired"):
        run(MutualTls().verify(request_with(expired)))
    with pytest.raises(UnauthenticatedError, match="not valid yet"):
        run(MutualTls().verify(request_with(future)))


def test_bad_settings_are_refused_at_once() -> None:
    with pytest.raises(ValueError, match="principal_from"):
        MutualTls(principal_from="serialNumber")
    with pytest.raises(ValueError, match="RFC 4514"):
        MutualTls(issuers=["not a name"])


def test_the_card_declares_mutual_tls() -> None:
    scheme = MutualTls(description="client certificates from the team CA")
    card = Security(scheme).apply(Agent("A").card("https://a.example"))
    assert card.security_schemes == {
        "mtls": MutualTlsSecurityScheme(description="client certificates from the team CA")
    }


def test_distinguished_names_follow_rfc_4514() -> None:
    name = (
        (("countryName", "US"),),
        (("organizationName", "Example, Inc."),),
        (("commonName", " #x "),),
    )
    text = distinguished_name(name)
    assert text == "CN=\\ #x\\ ,O=Example\\, Inc.,C=US"
    assert parse_distinguished_name(text) == name
    email = parse_distinguished_name("emailAddress=a@example.org,DC=example")
    assert email == ((("domainComponent", "example"),), (("emailAddress", "a@example.org"),))


def test_the_asgi_tls_extension_gives_only_a_verified_certificate(pki: Pki) -> None:
    pem = pki.leaves["alice"].cert_chain_pems[0].bytes().decode()
    assert tls_client_certificate({"type": "http"}) is None
    assert tls_client_certificate({"extensions": {"tls": {"client_cert_chain": []}}}) is None
    verified = {"extensions": {"tls": {"client_cert_chain": [pem], "client_cert_error": None}}}
    certificate = tls_client_certificate(verified)
    assert certificate is not None
    assert certificate["subject"] == peer(pki.leaves["alice"])["subject"]
    failed = {"extensions": {"tls": {"client_cert_chain": [pem], "client_cert_error": "expired"}}}
    assert tls_client_certificate(failed) is None


# ---------------------------------------------------------------- parley serve's options


def serve_arguments(pki: Pki, *extra: str) -> argparse.Namespace:
    argv = ["serve", "examples.echo:agent", "--tls-cert", pki.file("server.pem")]
    argv += ["--tls-key", pki.file("server.key"), *extra]
    return build_parser().parse_args(argv)


def test_the_tls_options_are_checked_before_serving(pki: Pki) -> None:
    parser = build_parser()
    with pytest.raises(SystemExit, match="both --tls-cert and --tls-key"):
        tls_from(parser.parse_args(["serve", "x:y", "--tls-cert", pki.file("server.pem")]))
    with pytest.raises(SystemExit, match="needs --tls-client-ca"):
        tls_from(serve_arguments(pki, "--tls-require-client-cert"))
    with pytest.raises(SystemExit, match="--tls-client-ca"):
        tls_from(serve_arguments(pki, "--tls-client-ca", pki.file("missing.pem")))
    with pytest.raises(SystemExit, match="--tls-cert/--tls-key"):
        tls_from(serve_arguments(pki, "--tls-key", pki.file("ca.pem")))
    assert tls_from(parser.parse_args(["serve", "x:y"])) is None
    assert uvicorn_options(None) == {}
    plain = tls_from(serve_arguments(pki))
    assert plain is not None
    assert "ssl_ca_certs" not in uvicorn_options(plain)
    assert mutual_tls_schemes(plain, None) == ()


def test_a_client_ca_adds_mutual_tls_beside_the_agents_own_schemes(pki: Pki) -> None:
    arguments = serve_arguments(pki, "--tls-client-ca", pki.file("ca.pem"), "--allow-anonymous")
    tls = tls_from(arguments)
    own = Security(ApiKeys({"k": "kim"}))
    security = security_from(arguments, own, mutual_tls_schemes(tls, own))
    assert security is not None
    assert list(security.schemes) == ["apiKey", "mtls"]
    assert security.anonymous
    declared = Security(MutualTls(principal_from="URI"))
    assert mutual_tls_schemes(tls, declared) == ()  # the agent's own mutual TLS is kept
    options = uvicorn_options(tls)
    assert options["ssl_cert_reqs"] == ssl.CERT_OPTIONAL
    assert options["ssl_ca_certs"] == pki.file("ca.pem")


# ---------------------------------------------------------------- served for real


def certified_agent() -> Agent:
    agent = Agent("Certified")

    @agent.skill()
    async def whoami(task: TaskContext) -> str:
        return task.caller.id

    return agent


@dataclass
class Served:
    url: str
    grpc_address: str
    pki: Pki

    def transports(self, leaf: str | None) -> tuple[list[Transport], httpx.AsyncClient]:
        http = self.pki.http(leaf)
        credentials = self.pki.grpc(leaf)
        out: list[Transport] = []
        for version in RELEASED_VERSIONS:
            out.append(JsonRpcTransport(self.url + "/", version, http=http))
            out.append(RestTransport(self.url, version, http=http))
            out.append(GrpcTransport(self.grpc_address, version, credentials=credentials))
        return out, http


@contextmanager
def serving(pki: Pki, *, required: bool) -> Iterator[Served]:
    """`certified_agent` as `parley serve` builds it with the TLS options, over HTTPS and
    gRPC with TLS, in a thread."""
    extra = ["--tls-client-ca", pki.file("ca.pem")]
    arguments = serve_arguments(pki, *extra, *(["--tls-require-client-cert"] * required))
    tls = tls_from(arguments)
    assert tls is not None
    agent = certified_agent()
    security = security_from(arguments, agent.security, mutual_tls_schemes(tls, agent.security))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"https://127.0.0.1:{sock.getsockname()[1]}"
    grpc_address = f"127.0.0.1:{free_port()}"
    handler = make_handler(agent, url, store="memory", grpc_address=grpc_address, security=security)
    config = uvicorn.Config(
        build_app(handler),
        log_config=None,
        log_level="warning",
        loop="asyncio",
        ws="none",
        timeout_graceful_shutdown=2,
        **uvicorn_options(tls),
    )
    grpc_server = GrpcServer(
        handler, port=int(grpc_address.rsplit(":", 1)[1]), credentials=grpc_credentials(tls)
    )
    server, failures = with_grpc(config, grpc_server)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        assert thread.is_alive(), "the server did not start"
        time.sleep(0.01)
    try:
        yield Served(url, grpc_address, pki)
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
    assert not failures


def send(text: str) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(message_id=f"m-{text}", role=Role.USER, parts=(TextPart(text=text),))
    )


def answer(result: object) -> str:
    assert isinstance(result, Task), result
    part = result.artifacts[0].parts[0]
    assert isinstance(part, TextPart)
    return part.text


def label(transport: Transport) -> str:
    return f"{type(transport).__name__} {transport.version.value}"


async def outcomes(served: Served, leaf: str | None) -> dict[str, str]:
    """What each transport gets for a SendMessage as `leaf`: the principal, or the error."""
    transports, http = served.transports(leaf)
    got: dict[str, str] = {}
    try:
        for transport in transports:
            try:
                got[label(transport)] = answer(await transport.send_message(send("x"), OPTIONS))
            except (UnauthenticatedError, ClientConnectionError) as error:
                got[label(transport)] = type(error).__name__
            finally:
                await transport.aclose()
    finally:
        await http.aclose()
    return got


def every(value: str) -> dict[str, str]:
    names = ("JsonRpcTransport", "RestTransport", "GrpcTransport")
    return {f"{name} {v.value}": value for v in RELEASED_VERSIONS for name in names}


def test_required_client_certificates_are_checked_in_the_handshake(pki: Pki) -> None:
    async def scenario(served: Served) -> list[dict[str, str]]:
        return [await outcomes(served, leaf) for leaf in (None, "mallory", "alice", "bob")]

    with serving(pki, required=True) as served:
        nobody, mallory, alice, bob = run(scenario(served))
    assert nobody == every("ClientConnectionError")
    assert mallory == every("ClientConnectionError")
    assert alice == every("alice")
    assert bob == every("bob")


def test_optional_client_certificates_leave_the_refusal_to_the_agent(pki: Pki) -> None:
    async def scenario(served: Served) -> tuple[list[dict[str, str]], httpx.Response]:
        results = [await outcomes(served, leaf) for leaf in (None, "nameless", "mallory")]
        async with served.pki.http(None) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
            refused = await http.post(served.url + "/", json=body, headers={"A2A-Version": "1.0"})
        return results, refused

    with serving(pki, required=False) as served:
        (nobody, nameless, mallory), refused = run(scenario(served))
    # gRPC asks for client certificates only when it requires them: see docs
    grpc_refused = {k: "ClientConnectionError" for k in every("") if k.startswith("Grpc")}
    assert nobody == {**every("UnauthenticatedError"), **grpc_refused}
    assert nameless == every("UnauthenticatedError")
    assert mallory == every("ClientConnectionError")
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == 'MutualTLS realm="a2a"'


def test_each_principal_sees_only_its_own_tasks(pki: Pki) -> None:
    async def scenario(served: Served) -> list[str]:
        problems: list[str] = []
        owners, alice_http = served.transports("alice")
        others, bob_http = served.transports("bob")
        for owner, other in zip(owners, others, strict=True):
            task = await owner.send_message(send(label(owner)), OPTIONS)
            assert isinstance(task, Task)
            mine = await owner.get_task(GetTaskRequest(id=task.id), OPTIONS)
            if answer(mine) != "alice":
                problems.append(f"{label(owner)}: the owner cannot read its task")
            try:
                await other.get_task(GetTaskRequest(id=task.id), OPTIONS)
                problems.append(f"{label(other)}: bob read alice's task")
            except TaskNotFoundError:
                pass
        for transport in (*owners, *others):
            await transport.aclose()
        await alice_http.aclose()
        await bob_http.aclose()
        return problems

    with serving(pki, required=True) as served:
        assert run(scenario(served)) == []


def test_the_public_card_needs_no_certificate_when_they_are_optional(pki: Pki) -> None:
    async def scenario(served: Served) -> AgentCard:
        async with served.pki.http(None) as http:
            client = await Client.connect(served.url, http=http)
            await client.aclose()
            assert client.card is not None
            return client.card

    with serving(pki, required=False) as served:
        card = run(scenario(served))
    assert card.security_schemes == {
        "mtls": MutualTlsSecurityScheme(description=MutualTls().description)
    }
    urls = [i.url for i in card.supported_interfaces if i.protocol_binding != "GRPC"]
    assert urls
    assert all(u.startswith("https://127.0.0.1:") for u in urls)


@pytest.mark.parametrize("make", [http_protocol, h11_protocol])
def test_both_http_protocols_hand_over_the_tls_extension(pki: Pki, make: Any) -> None:
    seen: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            return
        seen.append(scope["extensions"]["tls"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def call(url: str) -> int:
        async with pki.http("alice") as http:
            return (await http.get(url)).status_code

    options = {**uvicorn_options(pki.tls(required=True)), "http": make()}
    config = uvicorn.Config(app, log_config=None, lifespan="off", loop="asyncio", **options)
    server = uvicorn.Server(config)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            assert thread.is_alive()
            time.sleep(0.01)
        try:
            assert run(call(f"https://127.0.0.1:{sock.getsockname()[1]}/")) == 204
        finally:
            server.should_exit = True
            thread.join(10)
    [tls_scope] = seen
    assert tls_scope["client_cert_name"] == distinguished_name(peer(pki.leaves["alice"])["subject"])
    assert tls_scope["client_cert_error"] is None
    assert tls_scope["tls_version"] == 0x0304
    assert isinstance(tls_scope["cipher_suite"], int)
    [pem] = tls_scope["client_cert_chain"]
    assert certificate_dict(pem)["subject"] == peer(pki.leaves["alice"])["subject"]


# ---------------------------------------------------------------- the command


def test_parley_serve_with_tls_options(pki: Pki) -> None:
    port, grpc_port = free_port(), free_port()
    url = f"https://127.0.0.1:{port}"
    command = [sys.executable, "-m", "parley.cli.main", "serve", "examples.echo:agent"]
    command += ["--port", str(port), "--grpc-port", str(grpc_port), "--store", "memory"]
    command += ["--tls-cert", pki.file("server.pem"), "--tls-key", pki.file("server.key")]
    command += ["--tls-client-ca", pki.file("ca.pem")]

    async def scenario() -> tuple[str, str, str]:
        async with pki.http("alice") as http:
            client = await Client.connect(url, http=http)
            over_http = answer(await client.send("over https"))
            await client.aclose()
            grpc_with_alice = partial(grpc_transport, credentials=pki.grpc("alice"))
            transports = {**TRANSPORTS, GRPC_BINDING: grpc_with_alice}
            client = await Client.connect(
                url, http=http, bindings=[GRPC_BINDING], transports=transports
            )
            over_grpc = answer(await client.send("over grpc"))
            await client.aclose()
        async with pki.http(None) as http:
            client = await Client.connect(url, http=http)
            try:
                await client.send("anonymous")
                refused = "accepted"
            except UnauthenticatedError:
                refused = "UnauthenticatedError"
            await client.aclose()
        return over_http, over_grpc, refused

    with subprocess.Popen(
        command, cwd=ROOT, stderr=subprocess.PIPE, env=os.environ.copy()
    ) as process:
        try:
            _wait_until_listening(port, process)
            results = run(scenario())
        finally:
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=20)
    assert code in (0, -signal.SIGTERM)
    assert results == ("over https", "over grpc", "UnauthenticatedError")


def _wait_until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the server did not start")
