"""The adapter's own wire models and their description as JSON Schema (ADR 0055).

Query strings as models, the models the core does not define, and the JSON Schema of any
wire model: its constraints, its kinds, its fields' descriptions. The OpenAPI document
and the schemas that actions check their output against are both built from here.
"""
