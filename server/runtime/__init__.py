"""The node's infrastructure, with no game knowledge.

The embedded store, worker processes, background tasks, metrics, pub/sub and the plain
HTTP side of the port.
"""
