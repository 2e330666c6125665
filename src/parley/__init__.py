"""Parley: the A2A (Agent2Agent) protocol for Python.

The canonical data model lives in `parley.model`; the protocol core (operations,
lifecycle, errors, negotiation) in `parley.protocol`; the wire codecs in `parley.wire`.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
