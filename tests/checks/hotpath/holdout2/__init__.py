"""Second hold-out corpus: hot-path hazards reduced from real reports, written apart from the scanner (README.md)."""
