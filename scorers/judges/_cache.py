"""Result cache: a redelivered or re-run judge job is answered without calling the provider again.

Key = (rubric tag, provider:model, prompt hash), so a new rubric version, another model or any change
of the rendered prompt is a miss. Only *validated* replies are stored; errors never are, so a retry of
a failed job really retries. In memory (LRU) and, optionally, in SQLite (survives restarts; accessed in
a worker thread so the event loop never waits on disk).
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path


def cache_key(rubric_tag: str, judge: str, prompt_hash: str) -> str:
    return hashlib.sha256(f"{rubric_tag}\x1f{judge}\x1f{prompt_hash}".encode()).hexdigest()


class ResultCache:
    def __init__(self, max_entries: int = 50_000, path: str | Path | None = None) -> None:
        self.max_entries = max_entries
        self._mem: OrderedDict[str, str] = OrderedDict()
        self._db: sqlite3.Connection | None = None
        self._db_lock = threading.Lock()
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), check_same_thread=False)
            with self._db_lock:
                self._db.execute("CREATE TABLE IF NOT EXISTS judge_results (key TEXT PRIMARY KEY, reply TEXT)")
                self._db.commit()

    def _remember(self, key: str, reply: str) -> None:
        self._mem[key] = reply
        self._mem.move_to_end(key)
        while len(self._mem) > self.max_entries:
            self._mem.popitem(last=False)

    def _db_get(self, key: str) -> str | None:
        assert self._db is not None
        with self._db_lock:
            row = self._db.execute("SELECT reply FROM judge_results WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _db_put(self, key: str, reply: str) -> None:
        assert self._db is not None
        with self._db_lock:
            self._db.execute("INSERT OR REPLACE INTO judge_results (key, reply) VALUES (?, ?)", (key, reply))
            self._db.commit()

    async def get(self, key: str) -> str | None:
        hit = self._mem.get(key)
        if hit is not None:
            self._mem.move_to_end(key)
            return hit
        if self._db is None:
            return None
        hit = await asyncio.to_thread(self._db_get, key)
        if hit is not None:
            self._remember(key, hit)
        return hit

    async def put(self, key: str, reply: str) -> None:
        self._remember(key, reply)
        if self._db is not None:
            await asyncio.to_thread(self._db_put, key, reply)

    def __len__(self) -> int:
        return len(self._mem)

    def close(self) -> None:
        if self._db is not None:
            with self._db_lock:
                self._db.close()
            self._db = None
