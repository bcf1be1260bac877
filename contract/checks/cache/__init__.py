"""CC2xx: the Inductor cache preflight (`rules`: the records; `check` runs `dirs`, `security` and `remote`)."""
