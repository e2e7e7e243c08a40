"""The retry schedule: exponential backoff with jitter, a cap, and ``Retry-After`` honoured."""

import random

import attrs


@attrs.frozen(kw_only=True)
class RetrySchedule:
    """The server's ``ECP_WEBHOOK_MAX_ATTEMPTS`` (5), ``…_BACKOFF_BASE_SECONDS`` (2), ``…_BACKOFF_MAX_SECONDS`` (3600)."""

    max_attempts: int = 5
    base_seconds: float = 2.0
    max_seconds: float = 3600.0

    def ceiling(self, attempt: int) -> float:
        """The longest wait after failed attempt ``attempt`` (1-based): base * 2 ** (attempt - 1), capped."""
        return min(self.max_seconds, self.base_seconds * 2.0 ** min(attempt - 1, 64))


def next_delay(
    policy: RetrySchedule,
    attempt: int,
    *,
    retry_after: float | None = None,
    rng: random.Random | None = None,
) -> float:
    """Seconds to wait after failed attempt ``attempt``.

    "Equal jitter": uniformly between half the ceiling and the ceiling, so waits grow but never
    line up. A receiver's ``Retry-After`` is honoured as a floor, up to the cap.
    """
    if attempt < 1:
        msg = "attempts count from 1"
        raise ValueError(msg)
    ceiling = policy.ceiling(attempt)
    delay = (rng or random.SystemRandom()).uniform(ceiling / 2, ceiling)
    if retry_after is not None and retry_after > 0:
        delay = max(delay, min(retry_after, policy.max_seconds))
    return delay
