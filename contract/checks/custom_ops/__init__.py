"""CC6xx: custom operators a region calls (`rules`: the records; `check`: CC601)."""
