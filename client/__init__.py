"""Clients of Scorpion Race: the async client library, the terminal client and tools."""

__all__: list[str] = []
