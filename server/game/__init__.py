"""A game in flight: the move path, a game's clock, its feed to every follower, its start and its end."""
