"""`parley serve --wire-compat`: the spec release whose 1.0 error statuses the server
emits (REFERENCE §6.2, D17): v1.0.1's by default; v1.0.0's for peers and kits that still
check that table (409/415/502 over HTTP+JSON, `UNIMPLEMENTED` over gRPC for some errors)."""

from __future__ import annotations

import argparse

from parley.wire.errors import DEFAULT_WIRE_COMPAT, WIRE_COMPAT


def add_wire_compat_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wire-compat",
        choices=list(WIRE_COMPAT),
        default=DEFAULT_WIRE_COMPAT,
        metavar="RELEASE",
        help=f"the spec release whose error table the server emits: "
        f"{' or '.join(WIRE_COMPAT)} (default {DEFAULT_WIRE_COMPAT})",
    )
