"""What parsing and training share: items and parser states, symbols, the feature space and the
compiled feature kernel. The search and ``prepare`` both build on it; nothing here knows either."""
