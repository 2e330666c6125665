"""The backend fixtures of the contract suite: replicas share a durable store."""

from tests.contracts.conftest import durable_url

__all__ = ["durable_url"]
