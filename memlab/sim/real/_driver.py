"""Driver for one shipped elfmem release, run *inside that release's venv* (not memlab's).

memlab starts ``<env>/bin/python _driver.py`` and talks to it in JSON lines:

* memlab -> driver: ``{"id": n, "op": NAME, "args": {...}}``
* driver -> memlab: ``{"id": n, "ok": RESULT}`` or ``{"id": n, "error": {"type", "message"}}``
* driver -> memlab, in the middle of a command: ``{"embed": [texts]}``; memlab answers with
  ``{"vectors": [base64 float32, ...]}``. The sentence model and its cache stay in memlab's
  process, so the release's venv needs no torch.
* ``preload`` (``{"texts": [...]}``): before a step, the driver asks in **one** ``embed``
  request for every form of those texts the release will embed and it does not hold yet
  (:func:`embedded_forms`: the text, ``text.strip().lower()`` which consolidation and edit
  embed, and the lowercased summary :class:`RuleLLM` gives it, which consolidation embeds), so
  the release never waits on one text at a time. The release still asks for whatever it
  needs; a text it asks for that was not preloaded costs one request, as before.

This file imports only the standard library, numpy and the release's own ``elfmem`` package;
it must not import memlab. (memlab's tests import it for :func:`embedded_forms`; importing it
starts nothing.) Nothing here reaches a network.

The LLM is :class:`RuleLLM`, a deterministic local adapter implementing the release's
``LLMService`` protocol. Its answers follow one documented rule per method:

* ``process_block``: summary = the block's first sentence (at most 200 characters); tags = none;
  alignment = 0.8 when at least 3 of the block's words of 5+ letters appear in the self context,
  else 0.3.
* ``detect_contradiction`` (0.19.x only): 0.9 when exactly one of the two blocks contains a
  negation word (not, never, no, don't, avoid, stop) and they share at least 40% of their words
  of 4+ letters (Jaccard), else 0.1.
* ``propose_amendment``: proposes the block unchanged ("no drift to correct").
* ``propose_goal_directed_edges`` (0.20.x): proposes none.

Every call is counted, per method, with tokens counted exactly under a stated rule: input =
ceil(len(prompt) / 4) where prompt is the release's own prompt template for that method
(``elfmem.prompts``) with the call's arguments substituted; output = ceil(len(answer JSON) / 4).
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import math
import os
import re
import sys
import traceback
from typing import Any

import numpy as np

__all__ = ["embedded_forms", "ParentEmbedding", "RuleLLM", "Driver"]

_PROTO_OUT = sys.stdout  # the protocol's channel; __main__ points sys.stdout at stderr

_NEG = {"not", "never", "no", "don't", "dont", "avoid", "stop", "cannot", "can't"}


def _send(obj) -> None:
    _PROTO_OUT.write(json.dumps(obj) + "\n")
    _PROTO_OUT.flush()


def _recv():
    line = sys.stdin.readline()
    if not line:
        raise SystemExit(0)
    return json.loads(line)


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _words(text: str, n: int) -> set[str]:
    return {w for w in re.findall(r"[a-z']+", text.lower()) if len(w) >= n}


def _summary(block: str) -> str:
    """RuleLLM's summary of a block: its first sentence, at most 200 characters."""
    return re.split(r"(?<=[.!?])\s+", block.strip(), maxsplit=1)[0][:200]


def embedded_forms(text: str) -> list[str]:
    """The texts a release embeds for a block of content ``text``: the text itself (recall's
    query), ``text.strip().lower()`` (consolidation's and edit's content vector) and the
    lowercased :func:`_summary` (consolidation's summary vector, from RuleLLM's summary)."""
    return list(dict.fromkeys((text, text.strip().lower(), _summary(text).strip().lower())))


# ---------------------------------------------------------------------------------------------
class ParentEmbedding:
    """elfmem's EmbeddingService, answered by memlab's sentence model over the protocol."""

    def __init__(self, name: str) -> None:
        self._name = name
        self.cache: dict[str, np.ndarray] = {}
        self.requests = 0
        self.texts = 0

    @property
    def model_name(self) -> str:
        return self._name

    def preload(self, texts: list[str], vectors: list[str]) -> None:
        for t, v in zip(texts, vectors):
            self.cache[t] = np.frombuffer(base64.b64decode(v), dtype=np.float32).copy()

    def warm(self, texts: list[str]) -> int:
        """Fetch every :func:`embedded_forms` of ``texts`` not held yet, in one request."""
        forms = list(dict.fromkeys(f for t in texts for f in embedded_forms(t)))
        missing = [f for f in forms if f not in self.cache]
        self._fetch(missing)
        return len(missing)

    def _fetch(self, texts: list[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if not missing:
            return
        self.requests += 1
        self.texts += len(missing)
        _send({"embed": missing})
        reply = _recv()
        self.preload(missing, reply["vectors"])

    async def embed(self, text: str) -> np.ndarray:
        self._fetch([text])
        return self.cache[text]

    async def embed_batch(self, texts: list[str]) -> list[np.ndarray]:
        self._fetch(list(texts))
        return [self.cache[t] for t in texts]


class RuleLLM:
    """The deterministic local LLM (rules in the module docstring)."""

    def __init__(self, prompts) -> None:
        self.prompts = prompts
        self.calls: dict[str, int] = {}
        self.input_tokens = 0
        self.output_tokens = 0
        # The release's TokenCounter, when it has one. Any here and for the release's objects
        # below: the driver runs against each release, whose classes differ.
        self.counter: Any = None

    def _count(self, method: str, prompt: str, answer) -> None:
        self.calls[method] = self.calls.get(method, 0) + 1
        tin, tout = _tokens(prompt), _tokens(json.dumps(answer, default=str))
        self.input_tokens += tin
        self.output_tokens += tout
        if self.counter is not None:
            self.counter.record_llm(input_tokens=tin, output_tokens=tout)

    def _prompt(self, name: str, **kw) -> str:
        template = getattr(self.prompts, name, None)
        if isinstance(template, str):
            try:
                return template.format(**kw)
            except (KeyError, IndexError, ValueError):
                pass
        return (template or "") + "\n".join(str(v) for v in kw.values())

    async def process_block(self, block: str, self_context: str):
        from elfmem.types import BlockAnalysis

        first = _summary(block)
        shared = len(_words(block, 5) & _words(self_context or "", 5))
        answer: dict[str, Any] = {
            "alignment_score": 0.8 if shared >= 3 else 0.3,
            "tags": [],
            "summary": first,
        }
        self._count(
            "process_block",
            self._prompt("BLOCK_ANALYSIS_PROMPT", block=block, self_context=self_context),
            answer,
        )
        return BlockAnalysis(**answer)

    async def detect_contradiction(self, block_a: str, block_b: str) -> float:
        neg_a = bool(set(re.findall(r"[a-z']+", block_a.lower())) & _NEG)
        neg_b = bool(set(re.findall(r"[a-z']+", block_b.lower())) & _NEG)
        wa, wb = _words(block_a, 4), _words(block_b, 4)
        jac = len(wa & wb) / max(1, len(wa | wb))
        score = 0.9 if (neg_a != neg_b and jac >= 0.4) else 0.1
        self._count(
            "detect_contradiction",
            self._prompt("CONTRADICTION_PROMPT", block_a=block_a, block_b=block_b),
            {"score": score},
        )
        return score

    async def propose_amendment(
        self, *, block_content, block_summary, drift_score, evidence_summaries
    ):
        answer = {"proposed_content": block_content, "rationale": "no drift to correct"}
        self._count(
            "propose_amendment",
            self._prompt(
                "AMENDMENT_PROPOSAL_PROMPT",
                block_content=block_content,
                block_summary=block_summary,
                drift_score=drift_score,
                evidence="\n".join(evidence_summaries),
            ),
            answer,
        )
        return answer

    async def propose_goal_directed_edges(
        self, *, block_content, block_summary, self_goals, candidates, max_edges
    ):
        self._count(
            "propose_goal_directed_edges",
            self._prompt(
                "GOAL_DIRECTED_EDGE_PROMPT", block_content=block_content, candidates=candidates
            ),
            [],
        )
        return []

    def stats(self) -> dict:
        return {
            "calls": dict(self.calls),
            "total_calls": sum(self.calls.values()),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }


class _Clock:
    """A stand-in for the ``time`` module seen by elfmem.api / elfmem.session: sessions last
    exactly as long as the script says (the decay clock advances only inside sessions)."""

    def __init__(self, real) -> None:
        self._real = real
        self.offset = 0.0

    def monotonic(self) -> float:
        return self.offset

    def __getattr__(self, name):
        return getattr(self._real, name)


# ---------------------------------------------------------------------------------------------
class Driver:
    def __init__(self) -> None:
        import elfmem

        self.elfmem = elfmem
        self.version = getattr(elfmem, "__version__", None)
        if self.version is None:
            from importlib.metadata import version

            self.version = version("elfmem")
        self.embedding = ParentEmbedding("all-MiniLM-L6-v2")
        import elfmem.prompts as prompts

        self.llm = RuleLLM(prompts)
        self.system: Any = None  # the release's MemorySystem, once a store is open
        self.engine: Any = None  # its database engine
        import time as _time

        import elfmem.api
        import elfmem.session

        self.clock = _Clock(_time)
        # The release's modules read ``time``: both get the session clock in its place.
        setattr(elfmem.api, "time", self.clock)
        setattr(elfmem.session, "time", self.clock)

    # ---- helpers ------------------------------------------------------------------------------
    async def _await(self, value):
        return await value if inspect.isawaitable(value) else value

    # ---- ops ----------------------------------------------------------------------------------
    async def op_hello(self):
        from elfmem.api import MemorySystem

        methods = sorted(n for n in dir(MemorySystem) if not n.startswith("_"))
        import elfmem.db.models as models

        cols = sorted(c.name for c in models.blocks.columns)
        return {
            "version": self.version,
            "methods": methods,
            "block_columns": cols,
            "python": sys.version.split()[0],
        }

    async def op_open(self, db: str, project: str | None = None):
        """Open ``db``. ``project``: a project root holding ``.elfmem/config.yaml``; the
        store is then opened as the release opens one inside a project: its config is read
        from that file, and its project root is found by the release's own discovery
        (``elfmem.api._discover_project_root`` on the config path, which 0.20.0's
        ``from_config`` runs) and dropped when the config's ``project.db`` is another
        database (its ``_db_matches_project``), so its ledger and file substrate are on."""
        from elfmem.api import MemorySystem
        from elfmem.db import migrate as _migrate
        from elfmem.db import models, queries
        from elfmem.db.engine import create_engine
        from elfmem.token_counter import TokenCounter

        fresh = not os.path.exists(db)
        # elfmem's create_engine opens the URL f"sqlite+aiosqlite:///{path}": a '?' in the path
        # starts the URL's query and '%41' is unquoted, so /tmp/run?2/x.db would open (and
        # create) /tmp/run. The driver runs in the database's folder (ReleaseProcess starts it
        # there), so the name relative to it carries none of the folder names.
        name = os.path.relpath(db)
        if "?" in name or "%" in name:
            raise ValueError(f"elfmem cannot open a database named {name!r} ('?' or '%')")
        self.engine = await self._await(create_engine(name))
        if fresh:
            async with self.engine.begin() as conn:
                await conn.run_sync(models.metadata.create_all)
                await queries.seed_builtin_data(conn)
                await _migrate.ensure_schema_current(conn)
        counter = TokenCounter()
        self.llm.counter = counter
        extra: dict[str, Any] = {}
        root = None
        if project is not None:
            import elfmem.api as api
            from elfmem.config import ElfmemConfig

            if "project_root" not in inspect.signature(MemorySystem.__init__).parameters:
                raise ValueError(
                    f"elfmem {self.version} has no project mode "
                    "(MemorySystem takes no project_root)"
                )
            config_path = os.path.join(project, ".elfmem", "config.yaml")
            cfg = ElfmemConfig.from_yaml(config_path)
            root = api._discover_project_root(config_path)
            if root is not None and not api._db_matches_project(cfg, os.path.abspath(db)):
                root = None
            extra = {"config": cfg, "project_root": root}
        self.system = MemorySystem(
            engine=self.engine,
            llm_service=self.llm,
            embedding_service=self.embedding,
            token_counter=counter,
            **extra,
        )
        out: dict[str, Any] = {"fresh": fresh}
        if project is not None:
            out.update(
                project_root=None if root is None else str(root),
                ledger_dir=None
                if self.system._ledger_dir is None
                else str(self.system._ledger_dir),
                files_authoritative=bool(self.system._files_authoritative),
            )
        return out

    async def op_call(self, method: str, args: list | None = None, kwargs: dict | None = None):
        """Call any public MemorySystem method; the result goes back as a plain summary."""
        fn = getattr(self.system, method)
        kwargs = dict(kwargs or {})
        if method == "forget" and "reason" in kwargs:
            from elfmem.types import ArchiveReason

            kwargs["reason"] = ArchiveReason(kwargs["reason"])
        result = await self._await(fn(*(args or []), **kwargs))
        return _plain(result)

    async def op_learn(self, items: list[dict]):
        ids = []
        for item in items:
            res = await self.system.learn(
                item["content"],
                tags=item.get("tags") or None,
                category=item.get("category", "knowledge"),
            )
            ids.append(getattr(res, "block_id", None))
        return ids

    async def op_consolidate(self, batch: int = 50):
        """consolidate() until the inbox is empty; totals of what it reported."""
        totals: dict[str, float] = {}
        runs = 0
        while True:
            res = await self.system.consolidate(max_inbox_per_run=batch)
            runs += 1
            for k, v in _plain(res).items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    totals[k] = totals.get(k, 0) + v
            remaining = getattr(res, "inbox_remaining", 0) or 0
            if remaining <= 0 or runs > 10_000:
                break
        totals["runs"] = runs
        return totals

    async def op_session(self, hours: float, curate: bool = False, consolidate: bool = False):
        """One session lasting ``hours`` on the release's clock; ``consolidate()`` and then
        ``curate()`` run at its end, inside the session, as an agent's maintenance would."""
        await self.system.begin_session()
        self.clock.offset += float(hours) * 3600.0
        out: dict = {"hours": hours}
        if consolidate:
            out["consolidate"] = await self.op_consolidate()
        if curate:
            out["curate"] = _plain(await self.system.curate())
        await self.system.end_session()
        return out

    async def op_read_block(self, block_id: str):
        from elfmem.db.queries import get_block

        async with self.engine.connect() as conn:
            block = await get_block(conn, block_id)
        return (
            None
            if block is None
            else {"id": block["id"], "content": block["content"], "status": block["status"]}
        )

    async def op_stats(self):
        return {
            "llm": self.llm.stats(),
            "embedding": {"requests": self.embedding.requests, "texts": self.embedding.texts},
        }

    async def op_preload(self, texts: list[str], vectors: list[str] | None = None):
        """``vectors`` given: hold them for ``texts``. Without: :meth:`ParentEmbedding.warm`
        (one embed request for the forms of ``texts`` not held yet). Returns how many vectors
        it received."""
        if vectors is not None:
            self.embedding.preload(texts, vectors)
            return len(texts)
        return self.embedding.warm(texts)

    async def op_release_llm(self, base_url: str, model: str, env: dict):
        """Swap in the release's own LLM adapter (``make_llm_adapter``), built from a config
        the way every entry point builds it, under the given environment."""
        from elfmem.adapters.factory import make_llm_adapter
        from elfmem.config import ElfmemConfig
        from elfmem.token_counter import TokenCounter

        for key in [k for k in os.environ if k.endswith("_API_KEY")]:
            del os.environ[key]
        os.environ.update(env)
        cfg = ElfmemConfig.model_validate({"llm": {"model": model, "base_url": base_url}})
        adapter = make_llm_adapter(cfg, TokenCounter())
        self.system._llm = adapter
        for name in ("_llm_service", "llm_service"):
            if hasattr(self.system, name):
                setattr(self.system, name, adapter)
        out = {"adapter": type(adapter).__name__, "probe_error_type": None, "probe_error": None}
        try:  # the first call any LLM-needing step makes
            await adapter.process_block("A probe block.", "")
        except Exception as exc:  # what the release's adapter says is the point of the probe
            out["probe_error_type"] = type(exc).__name__
            out["probe_error"] = str(exc)[:500]
        return out

    async def op_close(self):
        if self.system is not None:
            await self.system.close()
        self.system = None
        return True


def _plain(value, depth: int = 0):
    """A JSON-safe view of a release's result object."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth > 4:
        return repr(value)
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v, depth + 1) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(getattr(value, k), depth + 1) for k in value.__dataclass_fields__}
    if hasattr(value, "model_dump"):
        return _plain(value.model_dump(), depth + 1)
    if hasattr(value, "value") and hasattr(value, "name"):  # enums
        return _plain(value.value, depth + 1)
    return repr(value)


async def _main() -> None:
    driver = Driver()
    _send({"ready": driver.version})
    while True:
        msg = _recv()
        op = getattr(driver, "op_" + msg["op"], None)
        try:
            if op is None:
                raise AttributeError(f"unknown op {msg['op']!r}")
            result = await op(**(msg.get("args") or {}))
            _send({"id": msg.get("id"), "ok": result})
        except Exception as exc:  # every failure goes back to memlab, which decides
            _send(
                {
                    "id": msg.get("id"),
                    "error": {
                        "type": type(exc).__name__,
                        "module": type(exc).__module__,
                        "message": str(exc)[:2000],
                        "trace": traceback.format_exc()[-4000:],
                    },
                }
            )
        if msg["op"] == "close" and msg.get("args", {}).get("exit"):
            break


if __name__ == "__main__":
    sys.stdout = sys.stderr  # anything the release prints must not corrupt the protocol
    asyncio.run(_main())
