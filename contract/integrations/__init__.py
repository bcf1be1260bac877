"""Adapters for engines that own the training or generation loop: Lightning (`contract.integrations.lightning`),
Hugging Face Trainer and `generate()` (`contract.integrations.hf`); torchtitan and hand-written loops call the
engine-agnostic session (`contract.integrations.session.Session`) after `parallelize` and after each step.

Each adapter runs the same session (`contract.integrations.session`): `enforce` once the engine has built (and, for
`compiled_by = "engine"` regions, compiled) the model and before its first compile, the monitor for the run, warm-up
ended after a number of steps, and a `fail` breach turned into the engine's own clean stop. Nothing here is imported by
`import contract`; each adapter imports its engine only when it is imported itself.
"""
