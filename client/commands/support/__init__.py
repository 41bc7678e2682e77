"""What the subcommands share and are not commands themselves: the network session
(``session``), argument types (``arguments``) and worker processes (``workers``)."""
