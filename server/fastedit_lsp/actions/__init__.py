"""One module per action: its prompt and its stream filters (pure)."""
