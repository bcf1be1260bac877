"""CC3xx: the static scan of each region's hot path (`rules`: the records; `check` turns `scan`'s hazards into
findings)."""
