"""CC7xx: warm starts, the warm manifest (`manifest`, shared with the monitor), the environment fingerprint."""
