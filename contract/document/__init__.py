"""Stage 1, the contract document: its schema (`schema`), loading it into findings and a `Contract` (`load`), the
model/step references it names (`refs`), and the CC0xx records (`rules`)."""
