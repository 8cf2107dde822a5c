"""Vision: frames in, observations out. Never imports the games."""
