"""histview's tests, one package per layer: engine, formats, cli, tui."""
