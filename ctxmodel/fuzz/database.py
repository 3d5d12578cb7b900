"""The campaign's example database: a cache shared by every worker, never the memory.

``PATH`` is a ``DirectoryBasedExampleDatabase`` (embedded, safe for many processes: one file per
entry); ``redis://host:port/N`` is Hypothesis's own ``RedisExampleDatabase``, so workers on other
machines replay what any of them found. Either way the database is set explicitly on every run:
Hypothesis's built-in ``ci`` profile (auto-loaded when ``CI`` is set) has none.
Redis entries expire after 8 days without runs: fixtures, not the database, are the
memory.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from pathlib import Path

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from ctxmodel.errors import UsageError

__all__ = ["DEFAULT_DB", "KeepingDatabase", "check_database", "describe_database", "is_redis", "open_database"]

#: In the working tree, next to the code it caches for (gitignore it).
DEFAULT_DB = ".ctxmodel/db"
#: Hypothesis's own default; said here so the report shows it.
REDIS_EXPIRY = datetime.timedelta(days=8)


def is_redis(spec: str) -> bool:
    return spec.startswith(("redis://", "rediss://", "unix://"))


def open_database(spec: str) -> ExampleDatabase:
    """The database a ``--db`` value names; one line naming the value when it cannot be used (exit 2)."""
    if is_redis(spec):
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError:
            raise UsageError(f"--db {spec}: needs the redis package (pip install 'ctxmodel[fuzz]')") from None
        try:
            client = redis.Redis.from_url(spec)
        except ValueError as exc:
            raise UsageError(f"--db {spec}: {exc}") from None
        return RedisExampleDatabase(client, expire_after=REDIS_EXPIRY, key_prefix=b"ctxmodel-fuzz:")
    path = Path(spec)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--db {spec}: exists and is not a directory")
    return DirectoryBasedExampleDatabase(str(path))


class KeepingDatabase(ExampleDatabase):
    """The campaign's database as a worker sees it once the campaign holds kinds: a saved input of a
    known kind no longer fails there (known kinds are not raised), and Hypothesis would delete it as
    fixed, from every machine's cache. Deletes are dropped; saves and the shrinker's moves (an
    input replaced by a smaller one) pass through."""

    def __init__(self, inner: ExampleDatabase) -> None:
        super().__init__()
        self.inner = inner

    def save(self, key: bytes, value: bytes) -> None:
        self.inner.save(key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self.inner.fetch(key)

    def delete(self, key: bytes, value: bytes) -> None:
        """Kept: see the class."""

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.inner.move(src, dest, value)


def check_database(spec: str) -> None:
    """Fail fast, before any worker starts, when a Redis database cannot be reached (exit 2)."""
    if not is_redis(spec):
        return
    open_database(spec)  # the package is there and the URL parses
    import redis

    try:
        redis.Redis.from_url(spec, socket_connect_timeout=5).ping()
    except redis.RedisError as exc:
        raise UsageError(f"--db {spec}: cannot reach the Redis server: {exc}") from None


def describe_database(spec: str) -> str:
    return spec if is_redis(spec) else f"directory:{spec}"
