"""The transparency log: every audit record's digest as a leaf of a per-tenant Merkle log.

Pure parts: RFC 9162 hashing and proofs (:mod:`.merkle`), the tree as C2SP tiles
(:mod:`.tiles`), signed notes and cosignatures (:mod:`.notes`) and checkpoints
(:mod:`.checkpoints`).
"""
