"""The full-screen terminal client (textual): race, play solo, watch."""

from .app import ScorpionApp

__all__ = ["ScorpionApp"]
