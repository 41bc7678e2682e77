"""The imperative shell around the engine: websocket server, races, Redis store."""

__all__: list[str] = []
