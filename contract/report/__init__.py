"""Stage 4, the report: the allow-list and --strict (`allow`), text and JSON renderers (`render`), and every rule
record in code order for `rules`/`explain` (`catalog`)."""
