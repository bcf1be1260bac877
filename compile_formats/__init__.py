"""Data formats both `contract` (the startup checker) and `monitor` (the runtime) read and write: the warm manifest,
the compile fingerprint and the text of Dynamo's recompile reasons. They live below both packages so the checker
reads them without importing the runtime, and nothing here imports torch."""
