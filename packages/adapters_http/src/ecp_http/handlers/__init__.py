"""Route handlers, one module per area; each builds its Operations from the runtime."""
