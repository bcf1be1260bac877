"""`compile-contract upgrade`: the comparison (pure), the command between torch 2.13 and 2.15, and its bad input."""
