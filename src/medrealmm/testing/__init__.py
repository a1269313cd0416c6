"""Test doubles that speak real wire protocols (used by tests and benchmarks)."""

from medrealmm.testing.fake_openai import FakeOpenAIServer, FakeReply

__all__ = ["FakeOpenAIServer", "FakeReply"]
