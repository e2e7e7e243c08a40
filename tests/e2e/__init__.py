"""End-to-end tests: a real uvicorn server over HTTP on a fresh PostgreSQL database."""
