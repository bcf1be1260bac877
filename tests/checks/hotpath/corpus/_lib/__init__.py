"""Helper modules of the corpus cases: code in other modules than the model's (helpers, a vendored metrics library)."""
