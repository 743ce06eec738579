"""Write the mem0 fixtures under data/samples/mem0/<version>/ with the real ``mem0ai`` package.

    PYTHONPATH=$PWD /work/main/.venv/bin/python scripts/make_mem0_fixtures.py [VERSION ...]

Each mem0ai version runs in its own venv, ``~/.cache/memlab/envs/mem0-<version>`` (created on
first use with ``python -m venv`` and ``pip install mem0ai==<version> freezegun`` from the package
index, as memlab/sim/releases.py builds elfmem's), never in memlab's own venv. Inside it a small
driver (below) opens ``Memory.from_config`` with

* a local on-disk Qdrant collection (``path=<out>/qdrant``, ``on_disk=True``: mem0's default
  vector store, kept instead of thrown away),
* ``history_db_path=<out>/history.db`` (``MEM0_DIR`` points into a temporary folder, and
  ``MEM0_TELEMETRY=False``, so nothing leaves the machine),
* no LLM call: every memory is added with ``infer=False``; ``update`` and ``delete`` are mem0's
  own API calls, so every row of ``history`` is written by mem0's own code,
* embeddings of the real all-MiniLM-L6-v2 computed here by memlab (:func:`memlab.embed.get_embedder`)
  and handed to the driver, whose embedder object answers mem0's ``embed(text, action)`` from
  them (mem0's huggingface embedder would need torch in the release venv; the vectors are the
  same model's),
* the clock set per step with ``freezegun`` so that events are spread over days as a real
  store's are (mem0 stamps rows with ``datetime.now``).

The scenario is the same for every version: three users, an agent, a run, near-duplicates,
rewrites and deletions (see SCENARIO). The output folder is replaced.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "samples" / "mem0"
VERSIONS = ("0.1.90", "2.2.1")

# (day offset, action, arguments). "add" keys: key (the fixture's name for the memory), text,
# user/agent/run ids, role, name (mem0's actor name, used from 2.x on). "update": key, text.
# "delete": key.
SCENARIO: list[tuple[str, str, dict[str, str]]] = [
    ("2026-09-01T09:00:00", "add", {"key": "diet", "text": "Alice is vegetarian.", "user_id": "alice", "name": "alice"}),
    ("2026-09-01T09:00:05", "add", {"key": "diet2", "text": "Alice is a vegetarian and eats no meat.", "user_id": "alice"}),
    ("2026-09-01T09:01:00", "add", {"key": "city", "text": "Alice lives in Lisbon.", "user_id": "alice", "name": "alice"}),
    ("2026-09-01T09:02:00", "add", {"key": "tea", "text": "Alice drinks green tea every morning.", "user_id": "alice"}),
    ("2026-09-02T14:30:00", "add", {"key": "bob_trip", "text": "Bob is planning a trip to Japan in April.", "user_id": "bob", "agent_id": "travel-agent"}),
    ("2026-09-02T14:31:00", "add", {"key": "bob_seat", "text": "Bob prefers aisle seats on long flights.", "user_id": "bob", "agent_id": "travel-agent"}),
    ("2026-09-02T14:32:00", "add", {"key": "bob_budget", "text": "Bob's travel budget is 3000 euros.", "user_id": "bob", "agent_id": "travel-agent"}),
    ("2026-09-03T10:00:00", "add", {"key": "bot_tone", "text": "Answer support tickets in a friendly, short tone.", "agent_id": "support-bot", "role": "assistant"}),
    ("2026-09-03T11:00:00", "add", {"key": "run_note", "text": "The user asked to debug a failing CSV import.", "user_id": "carol", "run_id": "run-42"}),
    ("2026-09-05T08:00:00", "update", {"key": "city", "text": "Alice moved from Lisbon to Porto."}),
    ("2026-09-09T08:00:00", "update", {"key": "city", "text": "Alice lives in Porto."}),
    ("2026-09-10T16:00:00", "update", {"key": "bob_budget", "text": "Bob's travel budget is 3500 euros."}),
    ("2026-09-14T12:00:00", "delete", {"key": "run_note"}),
    ("2026-09-20T18:00:00", "update", {"key": "bob_budget", "text": "Bob's travel budget is 4000 euros."}),
    ("2026-09-21T09:00:00", "delete", {"key": "bob_seat"}),
    ("2026-09-28T07:45:00", "add", {"key": "tea2", "text": "Alice drinks green tea each morning.", "user_id": "alice"}),
    ("2026-10-02T10:00:00", "update", {"key": "bob_trip", "text": "Bob is planning a trip to Japan in May."}),
    ("2026-10-03T10:00:00", "delete", {"key": "bob_trip"}),
]

DRIVER = r'''
import json, os, sys
spec = json.load(open(sys.argv[1]))
os.environ["MEM0_DIR"] = spec["mem0_dir"]
os.environ["MEM0_TELEMETRY"] = "False"
os.environ["OPENAI_API_KEY"] = "unused-offline"  # mem0 builds an OpenAI client it never calls here
from freezegun import freeze_time
import mem0
from mem0 import Memory

vectors = spec["vectors"]

class LookupEmbedder:
    """all-MiniLM-L6-v2 vectors computed by memlab, by text."""
    def embed(self, text, memory_action=None):
        return vectors[text]
    def embed_batch(self, texts, memory_action=None):
        return [vectors[t] for t in texts]

config = {
    "vector_store": {"provider": "qdrant", "config": {
        "collection_name": "mem0", "path": spec["qdrant"], "on_disk": True,
        "embedding_model_dims": 384}},
    "history_db_path": spec["history"],
}
m = Memory.from_config(config)
LookupEmbedder.config = m.embedding_model.config  # read by mem0's (disabled) telemetry
m.embedding_model = LookupEmbedder()
ids = {}
log = []
for when, action, a in spec["scenario"]:
    with freeze_time(when, tz_offset=0):
        if action == "add":
            msg = {"role": a.get("role", "user"), "content": a["text"]}
            if a.get("name"):
                msg["name"] = a["name"]
            kw = {k: a[k] for k in ("user_id", "agent_id", "run_id") if k in a}
            out = m.add([msg], infer=False, **kw)
            res = out["results"] if isinstance(out, dict) else out
            ids[a["key"]] = res[0]["id"]
        elif action == "update":
            m.update(ids[a["key"]], a["text"])
        else:
            m.delete(ids[a["key"]])
    log.append([when, action, a["key"], ids[a["key"]]])
m.vector_store.client.close()
json.dump({"ids": ids, "log": log, "mem0": mem0.__version__ if hasattr(mem0, "__version__") else None},
          open(spec["result"], "w"), indent=1)
'''


def env_python(version: str) -> Path:
    folder = Path.home() / ".cache" / "memlab" / "envs" / f"mem0-{version}"
    python = folder / "bin" / "python"
    if not (folder / ".memlab-ready").exists():
        if folder.exists():
            shutil.rmtree(folder)
        base = getattr(sys, "_base_executable", None) or sys.executable
        subprocess.run([base, "-m", "venv", str(folder)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             f"mem0ai=={version}", "freezegun"],
            check=True,
        )
        freeze = subprocess.run(
            [str(python), "-m", "pip", "freeze"], capture_output=True, text=True, check=True
        ).stdout
        (folder / ".memlab-ready").write_text(freeze)
    return python


def make(version: str) -> dict[str, object]:
    from memlab.embed import get_embedder

    texts = sorted({a["text"] for _, _, a in SCENARIO if "text" in a})
    vecs = get_embedder().encode(texts)
    out = OUT / version
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="mem0-fixture-") as tmp:
        spec = {
            "mem0_dir": str(Path(tmp) / "mem0dir"),
            "qdrant": str(out / "qdrant"),
            "history": str(out / "history.db"),
            "result": str(Path(tmp) / "result.json"),
            "scenario": SCENARIO,
            "vectors": {t: [float(x) for x in v] for t, v in zip(texts, vecs)},
        }
        (Path(tmp) / "spec.json").write_text(json.dumps(spec))
        (Path(tmp) / "driver.py").write_text(DRIVER)
        subprocess.run(
            [str(env_python(version)), str(Path(tmp) / "driver.py"), str(Path(tmp) / "spec.json")],
            check=True,
            cwd=tmp,
        )
        result = json.loads((Path(tmp) / "result.json").read_text())
    freeze = (Path.home() / ".cache/memlab/envs" / f"mem0-{version}" / ".memlab-ready").read_text()
    pins = [ln for ln in freeze.splitlines() if ln.split("==")[0] in ("mem0ai", "qdrant-client", "freezegun")]
    (out / "scenario.json").write_text(
        json.dumps({"versions": pins, "memory_ids": result["ids"], "steps": result["log"]}, indent=1)
        + "\n"
    )
    return result


def main(argv: list[str]) -> int:
    for version in argv or VERSIONS:
        make(version)
        print(f"wrote {OUT / version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
