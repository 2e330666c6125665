"""Client certificates in one shape for every binding: the dict `ssl.getpeercert()` gives
for a verified peer (`subject`, `issuer` as tuples of RDNs of `(long name, value)` pairs,
`subjectAltName`, `serialNumber`, `notBefore`, `notAfter`), built from PEM where a server
hands over PEM (gRPC's auth context, the ASGI TLS extension); and distinguished names as
RFC 4514 strings. Parsing PEM needs `cryptography` (the `auth` extra), imported only
when a certificate is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import Any

Name = tuple[tuple[tuple[str, str], ...], ...]
"""A distinguished name as `ssl.getpeercert()` gives it: RDNs in certificate order
(most significant first), each a tuple of `(attribute long name, value)` pairs."""

_LONG_NAMES = {
    "2.5.4.3": "commonName",
    "2.5.4.4": "surname",
    "2.5.4.5": "serialNumber",
    "2.5.4.6": "countryName",
    "2.5.4.7": "localityName",
    "2.5.4.8": "stateOrProvinceName",
    "2.5.4.9": "streetAddress",
    "2.5.4.10": "organizationName",
    "2.5.4.11": "organizationalUnitName",
    "2.5.4.12": "title",
    "2.5.4.42": "givenName",
    "0.9.2342.19200300.100.1.1": "userId",
    "0.9.2342.19200300.100.1.25": "domainComponent",
    "1.2.840.113549.1.9.1": "emailAddress",
}
"""Attribute OIDs to the long names OpenSSL (and so `ssl.getpeercert()`) uses; any other
attribute is named by its dotted OID, as OpenSSL names it."""

_SHORT_NAMES = {
    "commonName": "CN",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "countryName": "C",
    "streetAddress": "STREET",
    "domainComponent": "DC",
    "userId": "UID",
}
"""The RFC 4514 §3 short names; other attributes keep their long name (OpenSSL's way)."""

_CACHED_CERTIFICATES = 256


def _require_cryptography() -> Any:
    try:
        from cryptography import x509  # noqa: PLC0415 - optional, needed only for certificates
    except ImportError:
        raise ImportError(
            "client certificates need the auth extra: pip install 'parley-a2a[auth]'"
        ) from None
    return x509


def check_available() -> None:
    """ImportError, with the line to fix it, unless certificates can be read here."""
    _require_cryptography()


def _name(value: Any) -> Name:
    return tuple(
        tuple(
            (_LONG_NAMES.get(a.oid.dotted_string, a.oid.dotted_string), str(a.value)) for a in rdn
        )
        for rdn in value.rdns
    )


def certificate_dict(pem: bytes | str) -> dict[str, Any]:
    """A PEM certificate as `ssl.getpeercert()` would describe it."""
    x509 = _require_cryptography()
    data = pem.encode("ascii") if isinstance(pem, str) else pem
    cert = x509.load_pem_x509_certificate(data)
    out: dict[str, Any] = {
        "subject": _name(cert.subject),
        "issuer": _name(cert.issuer),
        "serialNumber": format(cert.serial_number, "X"),
        "notBefore": cert.not_valid_before_utc.strftime("%b %d %H:%M:%S %Y GMT"),
        "notAfter": cert.not_valid_after_utc.strftime("%b %d %H:%M:%S %Y GMT"),
    }
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return out
    alt: list[tuple[str, str]] = [("DNS", n) for n in sans.get_values_for_type(x509.DNSName)]
    alt += [("URI", u) for u in sans.get_values_for_type(x509.UniformResourceIdentifier)]
    alt += [("email", m) for m in sans.get_values_for_type(x509.RFC822Name)]
    alt += [("IP Address", str(a)) for a in sans.get_values_for_type(x509.IPAddress)]
    out["subjectAltName"] = tuple(alt)
    return out


@lru_cache(maxsize=_CACHED_CERTIFICATES)
def parsed_certificate(pem: str) -> Mapping[str, Any]:
    """`certificate_dict`, read-only and remembered: a client sends the same certificate
    with every request of a connection, and parsing costs more than the lookup."""
    return MappingProxyType(certificate_dict(pem))


def tls_client_certificate(scope: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The verified client certificate of an ASGI connection, from the ASGI TLS extension
    (`scope["extensions"]["tls"]`): the first of `client_cert_chain`, unless the server
    reported a `client_cert_error` (a certificate it did not verify is no certificate).
    None without the extension or a certificate."""
    tls = (scope.get("extensions") or {}).get("tls") or {}
    chain = tls.get("client_cert_chain") or ()
    first = next(iter(chain), None)
    if first is None or tls.get("client_cert_error") is not None:
        return None
    return parsed_certificate(first)


def distinguished_name(name: Iterable[Iterable[tuple[str, str]]]) -> str:
    """A `getpeercert()` name as an RFC 4514 string (least significant RDN first:
    `CN=alice,O=Example`)."""
    return ",".join(
        "+".join(f"{_SHORT_NAMES.get(key, key)}={_escaped(value)}" for key, value in rdn)
        for rdn in reversed(tuple(name))
    )


def parse_distinguished_name(text: str) -> Name:
    """An RFC 4514 string (`CN=Parley CA,O=Example`; spaces after a separator allowed, as
    OpenSSL writes names) as a `getpeercert()` name, to compare with a certificate's;
    ValueError if it is not one."""
    x509 = _require_cryptography()
    overrides = {long: x509.ObjectIdentifier(dotted) for dotted, long in _LONG_NAMES.items()}
    try:
        return _name(x509.Name.from_rfc4514_string(_compact(text), attr_name_overrides=overrides))
    except ValueError as exc:
        raise ValueError(f"not a distinguished name (RFC 4514): {text!r}: {exc}") from None


def _compact(text: str) -> str:
    """`text` without the spaces that follow an unescaped `,` or `+` (a value cannot start
    with an unescaped space, so they belong to no value)."""
    out: list[str] = []
    escaped = skipping = False
    for char in text.strip():
        if skipping and char == " ":
            continue
        skipping = not escaped and char in ",+"
        escaped = not escaped and char == "\\"
        out.append(char)
    return "".join(out)


def _escaped(value: str) -> str:
    out = "".join(f"\\{c}" if c in ',+"\\<>;' else "\\00" if c == "\0" else c for c in value)
    if out.startswith(("#", " ")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out
