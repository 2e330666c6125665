"""`MutualTls`: callers identified by the client certificate their TLS connection
presented. The TLS layer verifies the certificate (chain to a trusted client CA, validity,
proof of the private key); this scheme only reads the verified certificate a binding hands
over (`AuthRequest.peer_certificate`), so behind a server that verifies no client
certificates it accepts nobody.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable, Mapping
from typing import Any

from parley.model import MutualTlsSecurityScheme
from parley.protocol.errors import InvalidParamsError, UnauthenticatedError
from parley.protocol.validation import check_id
from parley.server.auth.certificates import (
    Name,
    check_available,
    distinguished_name,
    parse_distinguished_name,
)
from parley.server.context import AuthRequest, Caller

PRINCIPAL_SOURCES = ("commonName", "URI", "DNS", "email")
"""Where a principal may come from: the subject's commonName, or a subjectAltName entry
of one type (as `ssl.getpeercert()` names the types)."""


class MutualTls:
    """Client certificates, each naming its principal: by default the subject's
    commonName; `principal_from="URI"` (e.g. a SPIFFE ID), `"DNS"` or `"email"` take the
    subjectAltName entry of that type instead. The source must hold exactly one value: a
    certificate naming none, or several, is refused rather than guessed at.

    `principals`: the only principals accepted (default: any the client CA vouches for);
    `issuers`: the only issuing CAs accepted, as RFC 4514 names (`CN=Team CA,O=Example`),
    for a server that trusts more CAs than this scheme should. The caller's id is
    `principal_prefix` + the principal (default: the bare principal, which the operator's
    CA assigned; a prefix such as `"mtls:"` keeps certificate principals apart from other
    schemes' or other CAs'). A certificate past its `notAfter` is refused on every
    request, so that a long-lived connection does not outlive it.
    """

    def __init__(
        self,
        *,
        principal_from: str = "commonName",
        principals: Iterable[str] | None = None,
        issuers: Iterable[str] | None = None,
        principal_prefix: str = "",
        scheme_name: str = "mtls",
        description: str = "",
    ) -> None:
        if principal_from not in PRINCIPAL_SOURCES:
            raise ValueError(
                f"principal_from must be one of {PRINCIPAL_SOURCES}, got {principal_from!r}"
            )
        check_available()
        self.name = scheme_name
        self.principal_from = principal_from
        self.principal_prefix = principal_prefix
        self.description = description or "Mutual TLS: a client certificate from a trusted CA"
        self._principals = frozenset(principals) if principals is not None else None
        self._issuers = (
            frozenset(parse_distinguished_name(i) for i in issuers) if issuers is not None else None
        )

    def declaration(self) -> MutualTlsSecurityScheme:
        return MutualTlsSecurityScheme(description=self.description)

    def challenge(self) -> str:
        """HTTP has no scheme for a credential of the TLS layer, but a 401 must name one
        (RFC 9110 §11.6.1): `MutualTLS`, as the 0.3 card names the scheme's type."""
        return 'MutualTLS realm="a2a"'

    async def verify(self, request: AuthRequest) -> Caller | None:
        certificate = request.peer_certificate
        if not certificate:
            return None
        principal = self.principal(certificate)
        _check_validity(certificate)
        issuer = _name(certificate, "issuer")
        if self._issuers is not None and issuer not in self._issuers:
            raise UnauthenticatedError("The client certificate's issuer is not accepted")
        if self._principals is not None and principal not in self._principals:
            raise UnauthenticatedError(
                f"The client certificate's principal {principal!r} is not accepted"
            )
        claims = {
            "subject": distinguished_name(_name(certificate, "subject")),
            "issuer": distinguished_name(issuer),
            "serialNumber": str(certificate.get("serialNumber", "")),
        }
        caller = self.principal_prefix + principal
        try:
            check_id(caller, "principal")  # it keys the task store, as any id does
        except InvalidParamsError:
            raise UnauthenticatedError(
                "The client certificate's principal cannot name a caller"
            ) from None
        return Caller(id=caller, claims=claims)

    def principal(self, certificate: Mapping[str, Any]) -> str:
        """The one principal `certificate` names; UnauthenticatedError without exactly one."""
        if self.principal_from == "commonName":
            subject = _name(certificate, "subject")
            values = [v for rdn in subject for k, v in rdn if k == "commonName" and v]
            where = "subject commonName values"
        else:
            sans = certificate.get("subjectAltName") or ()
            values = [v for kind, v in sans if kind == self.principal_from and v]
            where = f"{self.principal_from} subjectAltName entries"
        if len(values) != 1:
            count = str(len(values)) if values else "no"
            raise UnauthenticatedError(
                f"The client certificate has {count} {where} (the principal needs exactly one)"
            )
        return str(values[0])


def _name(certificate: Mapping[str, Any], key: str) -> Name:
    return tuple(tuple((str(k), str(v)) for k, v in rdn) for rdn in certificate.get(key) or ())


def _check_validity(certificate: Mapping[str, Any]) -> None:
    now = time.time()
    not_after = certificate.get("notAfter")
    if not_after and ssl.cert_time_to_seconds(not_after) < now:
        raise UnauthenticatedError("The client certificate has expired")
    not_before = certificate.get("notBefore")
    if not_before and ssl.cert_time_to_seconds(not_before) > now:
        raise UnauthenticatedError("The client certificate is not valid yet")
