"""`compile-contract init`: a commented contract generated from the model (regions cut from its module tree, defaults
for the installed torch and this environment's cache), optionally recorded from a run of the step under the monitor
(warm-up, budgets, break sites, compile times); `--update` re-records an existing contract and changes only what the
run contradicts.

Modules: `build` (meta-device build), `propose` (regions from the module tree), `record` (the monitored run),
`environment` (torch defaults, cache), `write` (TOML text with comments), `notes` (comments, placing findings),
`update` (in-place edits), `files` (atomic write, diff), `generate` (the command's two flows).
"""
