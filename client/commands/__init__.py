"""Subcommands of the ``scorpion`` command line, one module each.

Each module defines ``register(subparsers)``, which adds its parser and sets ``handler``
(a function taking the parsed arguments and returning an exit code).
"""

__all__ = ["COMMAND_MODULES"]

COMMAND_MODULES = (
    "client.commands.deal",
    "client.commands.solve",
    "client.commands.study",
    "client.commands.play",
    "client.commands.race",
    "client.commands.quick",
    "client.commands.daily",
    "client.commands.challenge",
    "client.commands.watch",
    "client.commands.replay",
    "client.commands.analyze",
    "client.commands.leaderboard",
    "client.commands.stats",
    "client.commands.profile",
    "client.commands.ratings",
    "client.commands.forget_me",
    "client.commands.account",
    "client.commands.bot",
)
