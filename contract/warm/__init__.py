"""`compile-contract warm`: run the contract's steps once under a recording monitor, save the warm manifest, the
portable cache artifacts, a verified precompiled bundle where the installed torch supports one, and on CPU the kernel
pack (`run`: the command; `precompile` and `precompile_worker`: the bundle and its verification in a fresh process;
`kernels`: the pack). What `enforce` does with them at the next start lives in `contract/checks/warm/`."""
