"""Runnable scenarios for torch-compile-contract (one script per scenario) and the models they use."""
