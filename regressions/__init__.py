"""regressions package."""
