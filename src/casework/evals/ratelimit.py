"""Rate limits per model provider: a token bucket every model call of a run takes from."""

from __future__ import annotations

import asyncio
import threading
import time

from langchain_core.rate_limiters import BaseRateLimiter

__all__ = ["DEFAULT_RATE_LIMITS", "TokenBucket", "provider_of"]

DEFAULT_RATE_LIMITS: dict[str, float] = {"openai": 8.0, "anthropic": 4.0, "openrouter": 4.0}
"""Model requests per second per provider; providers not named here are not limited."""


class TokenBucket(BaseRateLimiter):
    """``rate`` requests per second with bursts of up to ``burst``; thread- and task-safe.

    Set as a chat model's ``rate_limiter``, every model call takes one token first.
    """

    def __init__(self, rate: float, burst: int = 1) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = float(rate)
        self.burst = max(1, int(burst))
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def _take(self) -> float:
        """0 when a token was taken, else the seconds until one is due."""
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
            self._last = now
            if self._tokens >= 1:
                self._tokens -= 1
                return 0.0
            return (1 - self._tokens) / self.rate

    def acquire(self, *, blocking: bool = True) -> bool:
        while True:
            wait = self._take()
            if wait == 0.0:
                return True
            if not blocking:
                return False
            time.sleep(wait)

    async def aacquire(self, *, blocking: bool = True) -> bool:
        while True:
            wait = self._take()
            if wait == 0.0:
                return True
            if not blocking:
                return False
            await asyncio.sleep(wait)


def provider_of(spec: str | None) -> str:
    """``openai`` of ``openai:gpt-4o-mini``; ``custom`` when there is no spec."""
    if not spec:
        return "custom"
    return spec.partition(":")[0] if ":" in spec else spec
