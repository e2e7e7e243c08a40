"""The run itself.

Its model, states and transitions, the walk over its graph, its attempts, effects and events,
and the moves its concepts ask of the engine (:mod:`.moves`).
"""
