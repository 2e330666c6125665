"""The web inspector: a page an agent's server serves at `/inspector/` when asked to
(`parley serve --inspector`, or `with_inspector(build_app(...))`)."""

from parley.inspector.app import InspectedApp, with_inspector

__all__ = ["InspectedApp", "with_inspector"]
