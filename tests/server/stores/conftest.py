"""The backend fixtures of the contract suite, for these tests too."""

from tests.contracts.conftest import durable_url, store_url

__all__ = ["durable_url", "store_url"]
