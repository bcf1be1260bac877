"""CC1xx: compile settings against the installed torch (`rules`: the records; `check`: the checks)."""
