"""The gRPC binding: both versions' `A2AService` over one RequestHandler (needs the grpc
extra: `pip install 'parley-a2a[grpc]'`)."""

try:
    import grpc as _grpc  # noqa: F401 - only to fail early, naming the extra
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("gRPC needs the grpc extra: pip install 'parley-a2a[grpc]'") from exc

from parley.grpc.server import GrpcServer, serve_grpc
from parley.grpc.servicer import A2AServicer

__all__ = ["A2AServicer", "GrpcServer", "serve_grpc"]
