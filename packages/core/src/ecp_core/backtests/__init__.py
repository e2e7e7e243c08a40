"""Bounded model backtests (``observed-replay-policy/1``): replay labeled cases, judge, decide."""
