"""Faulty targets: each misbehaves in one way a real target does, to show the harness survives it."""
