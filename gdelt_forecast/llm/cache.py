"""The answer cache: ``<data_root>/llm_cache/<hash[:2]>/<hash>.json``, one file per request
hash, written as soon as its request settles, so a re-run, or a run resumed after a crash,
sends nothing for work already done.

Only settled answers (``ok`` and ``fallback``) are cached: a failure may be the server's
passing trouble, so a re-run asks again. A file is written to a temporary name beside its
final one and renamed over it, so a killed run never leaves a half-written answer; a file
that cannot be read anyway is treated as missing (and replaced when its request settles).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from gdelt_forecast.ground.files import replacing
from gdelt_forecast.llm.request import Request, Result

log = logging.getLogger(__name__)
_CACHED = ("ok", "fallback")


class AnswerCache:
    def __init__(self, root: Path):
        self.root = root

    def path(self, digest: str) -> Path:
        return self.root / digest[:2] / f"{digest}.json"

    def get(self, digest: str, request: Request) -> Result | None:
        """The cached result of ``request`` (hash ``digest``), marked cached, or None."""
        path = self.path(digest)
        try:
            record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("llm cache: ignoring unreadable %s: %s", path, exc)
            return None
        if record.get("hash") != digest or record.get("status") not in _CACHED:
            log.warning("llm cache: ignoring %s, which holds no settled answer", path)
            return None
        return Result(
            hash=digest,
            key=request.key,
            step=request.step,
            model=record["model"],
            status=record["status"],
            answer=record["answer"],
            raw=record["raw"],
            reason=record.get("reason", ""),  # answers cached before reasons had none
            prompt_tokens=record["prompt_tokens"],
            completion_tokens=record["completion_tokens"],
            latency_s=record["latency_s"],
            attempts=record["attempts"],
            cached=True,
        )

    def put(self, result: Result) -> None:
        if result.status not in _CACHED:
            return
        record = {
            "hash": result.hash,
            "model": result.model,
            "status": result.status,
            "answer": result.answer,
            "raw": result.raw,
            "reason": result.reason,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "latency_s": round(result.latency_s, 3),
            "attempts": result.attempts,
        }
        with replacing(self.path(result.hash)) as tmp, tmp.open("w", encoding="utf-8") as out:
            json.dump(record, out, ensure_ascii=False, sort_keys=True)
