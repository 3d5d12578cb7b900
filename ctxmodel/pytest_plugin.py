"""pytest plugin entry point (``pytest11``): kept import-light so every pytest run stays fast."""
