"""A run's audit trail.

The writer that seals each attempt into the run's chain, the trail's reads and verification, and
whether the trail can be signed as the deployments need.
"""
