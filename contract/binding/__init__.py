"""Stage 2, the binding: regions resolved to module instances and methods (`resolve` -> `targets.Binding`), applied
in place (`apply`), and the CC5xx records (`rules`). Imports torch."""
