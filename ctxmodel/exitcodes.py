"""Exit codes of every command (contract §9), so `git bisect run` and CI can rely on them."""

__all__ = ["FAILED", "INTERRUPTED", "OK", "TARGET", "TERMINATED", "USAGE"]

#: Every property held / the input is clean.
OK = 0
#: A property failed (a fixture was written) / violations were found.
FAILED = 1
#: Usage or input error.
USAGE = 2
#: The target could not be started or broke the protocol before any property ran.
TARGET = 3
#: The run was interrupted (Ctrl-C); the summary, the seed and the JUnit file were still written.
INTERRUPTED = 130
#: The run was stopped by SIGTERM (a CI job's timeout), with the same guarantees as an interrupt.
TERMINATED = 143
