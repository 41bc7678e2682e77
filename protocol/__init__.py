"""Pure core of Scorpion Race: the rules engine and the wire contract.

Nothing in this package performs I/O, reads a clock or draws randomness of its own;
the server and the clients wrap it.
"""

__all__: list[str] = []
