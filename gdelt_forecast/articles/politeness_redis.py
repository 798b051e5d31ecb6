"""The politeness store in Redis (``articles.politeness_store: redis://...``), shared by the
fetch processes of every machine: each step of :mod:`politeness` is one Lua script, so it
is atomic, and its clock is the server's (``TIME``).

A host's keys share a hash tag (``{host}``), so a Redis Cluster keeps them in one slot, and
they expire a day after their last use. Imported only where a store is a Redis URL: the
``redis`` client comes with the ``celery`` extra, whose broker is Redis.
"""

from __future__ import annotations

from gdelt_forecast.articles.politeness import POLL_S, ROBOTS_TTL_S, Answer, Store
from gdelt_forecast.ground.config import ArticlesConfig
from gdelt_forecast.ground.errors import StageError

PREFIX = "gdelt-forecast:politeness:"
KEEP_S = 24 * 3600  # a host's keys outlive their last use by a day

_NOW = "local t = redis.call('TIME'); local now = tonumber(t[1]) + tonumber(t[2]) / 1e6\n"

# KEYS: the host's state and leases. ARGV: token, per_host, delay, lease_s, poll, keep.
_TAKE = (
    _NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local h = redis.call('HMGET', KEYS[1], 'next_at', 'not_before', 'down_until')
local next_at, not_before = tonumber(h[1]) or 0, tonumber(h[2]) or 0
if (tonumber(h[3]) or 0) > now then return {'down', '0'} end
local ready = math.max(next_at, not_before)
if ready > now then return {'wait', tostring(ready - now)} end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return {'wait', ARGV[5]} end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])
redis.call('HSET', KEYS[1], 'next_at', tostring(now + tonumber(ARGV[3])))
redis.call('EXPIRE', KEYS[1], ARGV[6]); redis.call('EXPIRE', KEYS[2], ARGV[6])
return {'ok', '0'}
"""
)

# KEYS: the host's state and leases. ARGV: token, pause_s, failed (0/1), down_after, down_s,
# next_in_s.
_DONE = (
    _NOW
    + """
redis.call('ZREM', KEYS[2], ARGV[1])
local h = redis.call('HMGET', KEYS[1], 'next_at', 'not_before')
redis.call('HSET', KEYS[1],
  'next_at', tostring(math.max(tonumber(h[1]) or 0, now + tonumber(ARGV[6]))),
  'not_before', tostring(math.max(tonumber(h[2]) or 0, now + tonumber(ARGV[2]))))
if ARGV[3] == '1' then
  local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
  local after = tonumber(ARGV[4])
  if after > 0 and failures >= after then
    redis.call('HSET', KEYS[1], 'down_until', tostring(now + tonumber(ARGV[5])))
  end
else
  redis.call('HSET', KEYS[1], 'failures', 0)
end
return (tonumber(redis.call('HGET', KEYS[1], 'down_until')) or 0) > now and 1 or 0
"""
)

# KEYS: the host's leases. ARGV: lease_s, then its tokens held.
_RENEW = (
    _NOW
    + """
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i]) end
return 0
"""
)


class RedisStore(Store):
    def __init__(self, cfg: ArticlesConfig, url: str):
        try:
            import redis
        except ImportError:
            raise StageError(
                "articles.politeness_store is a Redis URL, but the redis client is not "
                "installed: pip install 'gdelt-forecast[celery]'"
            ) from None
        self._redis = redis.Redis.from_url(url, socket_timeout=30)
        self._redis.ping()  # a wrong URL fails here, naming itself, not mid-fetch
        self._scripts = {n: self._redis.register_script(s) for n, s in
                         (("take", _TAKE), ("done", _DONE), ("renew", _RENEW))}  # fmt: skip
        super().__init__(cfg)

    @staticmethod
    def _keys(host: str) -> list[str]:
        return [f"{PREFIX}{{{host}}}:state", f"{PREFIX}{{{host}}}:leases"]

    def _take(self, host: str, token: str) -> Answer:
        args = [token, self.per_host, self.delay, self.lease_s, POLL_S, KEEP_S]
        kind, wait = self._scripts["take"](keys=self._keys(host), args=args)
        if kind == b"down":
            return Answer(down=True)
        return Answer(wait_s=float(wait)) if kind == b"wait" else Answer(token=token)

    def _done(self, host: str, token: str, next_in_s: float, pause_s: float,
              failed: bool) -> bool:  # fmt: skip
        args = [token, pause_s, int(failed), self.down_after, self.down_s, next_in_s]
        return bool(self._scripts["done"](keys=self._keys(host), args=args))

    def _renew(self, held: dict[str, str]) -> None:
        by_host: dict[str, list[str]] = {}
        for token, host in held.items():
            by_host.setdefault(host, []).append(token)
        for host, tokens in by_host.items():  # one host a call: one hash slot a script
            self._scripts["renew"](keys=self._keys(host)[1:], args=[self.lease_s, *tokens])

    def robots(self, origin: str) -> str | None:
        text = self._redis.get(f"{PREFIX}robots:{origin}")
        return None if text is None else text.decode("utf-8")

    def keep_robots(self, origin: str, text: str) -> None:
        self._redis.set(f"{PREFIX}robots:{origin}", text.encode("utf-8"), ex=int(ROBOTS_TTL_S))

    def close(self) -> None:
        super().close()
        self._redis.close()
