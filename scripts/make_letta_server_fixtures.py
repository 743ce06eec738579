#!/usr/bin/env python3
"""Build the Letta server database fixtures under data/samples/letta-server/ with the real server.

One-time build, never needed at test time. Every row is written by the Letta server's own code
(its managers and ORM) with no LLM call; LLM and embedding configs are only stored.

* ``letta-0.16.8.sql``: a plain-SQL ``pg_dump`` of the tables memlab reads, from a PostgreSQL
  database whose schema is Letta 0.16.8's own alembic migrations (``alembic upgrade head``, run
  from the release's ``alembic/`` folder, which the wheel does not ship; pass ``--alembic``).
  0.16.8 is the last release of the Python server. Its schema needs pgvector for the build; the
  dump of memlab's tables restores into a plain PostgreSQL without it.
* ``letta-0.11.7.db``: the ``~/.letta/sqlite.db`` that letta 0.11.7 writes, schema by the server's
  own ``Base.metadata.create_all``. 0.11.7 is the last release that runs on SQLite: 0.12.0
  removed SQLite support (``letta/server/db.py`` builds only a PostgreSQL engine from then on).
* ``letta-0.11.7-nohistory.db``: the same server with agents and blocks but no checkpoint, which
  is what real servers hold (no REST route or agent loop calls checkpoint/undo/redo).
* ``manifest.json``: the row counts each build reported, read back through the server's own
  database session; the tests compare memlab's frames with them.

The scenario (the same on both servers, where the release allows): agents ezra, juno, vega and
orion; blocks with limit, description, read_only, metadata, template fields, hidden and tags; a
block shared by ezra and juno; checkpoints by users (``letta_user``) and agents
(``letta_agent``); undo and redo; an undo followed by a new checkpoint (which truncates the redo
chain); an edit after the last checkpoint; a soft-deleted block (``is_deleted``, through the ORM's
own ``delete``); blocks over their limit (through ``update_block`` lowering the limit, which
0.11.7's pydantic validator refuses: there the refusal is recorded in the manifest instead).

Usage (as root or not; PostgreSQL runs as the ``postgres`` user when started by root)::

    python3 scripts/make_letta_server_fixtures.py --alembic ../shared/vendor/letta-0.16.8-alembic \
        --venvs /tmp/letta-venvs

Needs Debian's ``postgresql`` (15) with pgvector installed into it (build it from the vendored
source: ``make && make install``), and network access to PyPI for the two venvs.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "samples" / "letta-server"
RELEASES = {"postgres": "0.16.8", "sqlite": "0.11.7"}
PIP_SPEC = {"postgres": "letta[postgres,sqlite]==0.16.8", "sqlite": "letta[sqlite]==0.11.7"}
#: The tables memlab reads (kinds/letta_server/_load.py); the dump holds only these.
DUMP_TABLES = ("alembic_version", "organizations", "users", "agents", "agents_tags", "block",
               "blocks_agents", "block_history", "blocks_tags")


# ============================================================================ inside a letta venv

async def _call(obj, name: str, *args, **kwargs):
    """``obj.<name>_async(...)`` when the release has it, else the sync ``obj.<name>(...)``."""
    fn = getattr(obj, f"{name}_async", None) or getattr(obj, name)
    out = fn(*args, **kwargs)
    return await out if inspect.isawaitable(out) else out


async def _populate(scenario: str) -> dict:
    """Write the scenario with the server's managers; return counts read back from its DB."""
    import letta
    from letta.orm.block import Block as BlockModel
    from letta.schemas.block import Block, BlockUpdate, CreateBlock
    from letta.schemas.agent import CreateAgent
    from letta.schemas.embedding_config import EmbeddingConfig
    from letta.schemas.llm_config import LLMConfig
    from letta.schemas.user import User
    from letta.server.db import db_registry
    from letta.services.agent_manager import AgentManager
    from letta.services.block_manager import BlockManager
    from letta.services.organization_manager import OrganizationManager
    from letta.services.user_manager import UserManager

    version = letta.__version__
    if hasattr(db_registry, "initialize_sync"):
        db_registry.initialize_sync()  # 0.11.7: the SQLite schema comes from this create_all
    orgs, users, agents_m, blocks_m = OrganizationManager(), UserManager(), AgentManager(), BlockManager()
    notes: list[str] = []
    org = await _call(orgs, "create_default_organization")
    user = await _call(users, "create_default_actor", org_id=org.id)
    ops_user = User(name="Ops Admin", organization_id=org.id)
    ops = await (users.create_actor_async(ops_user) if hasattr(users, "create_actor_async")
                 else _call(users, "create_user", ops_user))
    llm = LLMConfig.default_config("gpt-4o-mini")
    emb = EmbeddingConfig.default_config(provider="openai")

    async def agent(name: str, description: str, blocks: list[CreateBlock], tags: list[str]):
        return await _call(agents_m, "create_agent", CreateAgent(
            name=name, description=description, agent_type="memgpt_v2_agent", memory_blocks=blocks,
            llm_config=llm, embedding_config=emb, include_base_tools=False, tags=tags), actor=user)

    ezra = await agent("ezra", "Research assistant", [
        CreateBlock(label="human", value="Name: Sam. Works on memory systems.", limit=2000,
                    description="What Ezra knows about the person it talks to."),
        CreateBlock(label="persona", value="I am Ezra, a careful research assistant.", limit=1000,
                    description="Ezra's persona: tone and duties.", read_only=True,
                    metadata={"owner": "ops", "reviewed": True}),
    ], ["research"])
    juno = await agent("juno", "Support agent", [
        CreateBlock(label="human", value="Customer: unknown yet.", limit=500,
                    description="The customer juno is helping."),
        CreateBlock(label="persona", value="I am Juno.\nI answer support tickets.", limit=800,
                    description="Juno's persona.", read_only=True),
    ], ["support"])
    vega = await agent("vega", "Scheduler", [
        CreateBlock(label="scratch", value="todo: " + "plan the week; " * 8, limit=5000,
                    description="Short-lived working notes."),
    ], [])
    orion = await agent("orion", "Never checkpointed", [
        CreateBlock(label="human", value="Orion's human block, only ever created.", limit=5000,
                    description="A block no checkpoint ever touched."),
        CreateBlock(label="persona", value="", limit=5000, description=None),
    ], [])

    def block_of(state, label: str):
        return next(b for b in state.memory.blocks if b.label == label)

    # Standalone blocks with every field, attached afterwards (as the REST API does).
    fields = dict(label="team", value="Team: ezra researches, juno supports.", limit=3000,
                  description="Shared notes for the ezra/juno team.", metadata={"shared": True},
                  tags=["team", "shared"])
    try:
        team = await _call(blocks_m, "create_or_update_block", Block(**fields), actor=user)
    except TypeError:  # 0.11.7's Block has no tags
        fields.pop("tags")
        notes.append("block tags: this release has no blocks_tags table")
        team = await _call(blocks_m, "create_or_update_block", Block(**fields), actor=user)
    tmpl = await _call(blocks_m, "create_or_update_block", Block(
        label="style_guide", value="Write short sentences.", limit=400,
        description="Template-derived style guide.", is_template=True,
        template_name="house-style", hidden=True, metadata={"template_version": 3}), actor=user)
    gone = await _call(blocks_m, "create_or_update_block", Block(
        label="old_notes", value="Superseded notes.", limit=400, description="Deleted later."),
        actor=user)
    for ag, blk in ((ezra, team), (juno, team), (vega, tmpl), (vega, gone)):
        await _call(agents_m, "attach_block", agent_id=ag.id, block_id=blk.id, actor=user)

    async def edit(block_id: str, value: str, who=user):
        await _call(blocks_m, "update_block", block_id, BlockUpdate(value=value), actor=who)

    async def checkpoint(block_id: str, agent_id: str | None = None, who=user):
        fn = getattr(blocks_m, "checkpoint_block_async", None) or blocks_m.checkpoint_block
        out = fn(block_id=block_id, actor=who, **({"agent_id": agent_id} if agent_id else {}))
        return await out if inspect.isawaitable(out) else out

    async def undo(block_id: str):
        out = blocks_m.undo_checkpoint_block(block_id=block_id, actor=user)
        return await out if inspect.isawaitable(out) else out

    async def redo(block_id: str):
        out = blocks_m.redo_checkpoint_block(block_id=block_id, actor=user)
        return await out if inspect.isawaitable(out) else out

    if scenario == "history":
        # ezra/human: user, user, agent, agent checkpoints; undo twice, redo once (seq 3 current).
        h = block_of(ezra, "human").id
        await checkpoint(h)
        await edit(h, "Name: Sam. Works on memory systems. Prefers short answers.")
        await checkpoint(h, who=ops)
        await edit(h, "Name: Sam. Works on memory systems. Prefers short answers.\nTimezone: UTC.")
        await checkpoint(h, agent_id=ezra.id)
        await edit(h, "Name: Sam. Works on memory systems. Prefers short answers.\nTimezone: UTC.\n"
                      "Asked about pgvector twice.")
        await checkpoint(h, agent_id=ezra.id)
        await undo(h)
        await undo(h)
        await redo(h)
        # team (shared): user, then each agent; then an edit nobody checkpointed.
        await checkpoint(team.id)
        await edit(team.id, "Team: ezra researches, juno supports.\nJuno: escalate billing to ops.")
        await checkpoint(team.id, agent_id=juno.id)
        await edit(team.id, "Team: ezra researches, juno supports.\nJuno: escalate billing to ops.\n"
                            "Ezra: cite sources.")
        await checkpoint(team.id, agent_id=ezra.id)
        await edit(team.id, "Team: ezra researches, juno supports.\nJuno: escalate billing to ops.\n"
                            "Ezra: cite sources.\n(edited after the last checkpoint)")
        # juno/human: undo then a new checkpoint truncates the redo chain (2 rows remain).
        jh = block_of(juno, "human").id
        await checkpoint(jh)
        await edit(jh, "Customer: Dana (ticket 4411).")
        await checkpoint(jh, agent_id=juno.id)
        await undo(jh)
        await edit(jh, "Customer: Dana, billing question.")
        try:
            await checkpoint(jh, agent_id=juno.id)
        except Exception as exc:  # noqa: BLE001 - a server bug, recorded in the manifest
            # 0.16.8's checkpoint_block_async calls AsyncSession.delete without await, so the
            # redo chain is never truncated and the new row collides with the old sequence.
            notes.append(f"checkpoint after undo: refused by letta {version}: "
                         f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
        # juno/persona is read_only: a user edits it (allowed), an agent checkpoint follows.
        jp = block_of(juno, "persona").id
        await checkpoint(jp, who=ops)
        await edit(jp, "I am Juno.\nI answer support tickets.\nI never promise refunds.", who=ops)
        await checkpoint(jp, agent_id=juno.id)
        # vega/scratch: an agent checkpoint.
        vs = block_of(vega, "scratch").id
        await edit(vs, "todo: plan the week; book the room")
        await checkpoint(vs, agent_id=vega.id)

    # Over limit: lower the limit below the value (0.16.8 accepts; 0.11.7's validator refuses).
    for blk, limit in ((block_of(vega, "scratch"), 20), (block_of(ezra, "persona"), 30)):
        try:
            await _call(blocks_m, "update_block", blk.id, BlockUpdate(limit=limit), actor=user)
        except Exception as exc:  # noqa: BLE001 - recorded in the manifest
            notes.append(f"over-limit {blk.label}: refused by letta {version}: "
                         f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}")

    # Soft delete with the ORM's own delete (no manager soft-deletes a block).
    if hasattr(db_registry, "async_session") and inspect.iscoroutinefunction(
            getattr(BlockModel, "delete_async", None)):
        async with db_registry.async_session() as session:
            row = await BlockModel.read_async(db_session=session, identifier=gone.id, actor=user)
            await row.delete_async(session, actor=user)
    else:
        with db_registry.session() as session:
            row = BlockModel.read(db_session=session, identifier=gone.id, actor=user)
            row.delete(session, actor=user)
    return await _counts(db_registry, version, notes)


async def _counts(db_registry, version: str, notes: list[str]) -> dict:
    from sqlalchemy import text

    queries = {
        "organizations": "SELECT count(*) FROM organizations",
        "users": "SELECT count(*) FROM users",
        "agents": "SELECT count(*) FROM agents",
        "blocks": "SELECT count(*) FROM block",
        "blocks_deleted": "SELECT count(*) FROM block WHERE is_deleted",
        "blocks_read_only": "SELECT count(*) FROM block WHERE read_only",
        "blocks_over_limit": 'SELECT count(*) FROM block WHERE length(value) > "limit"',
        "block_agents": "SELECT count(*) FROM blocks_agents",
        "shared_blocks": "SELECT count(*) FROM (SELECT block_id FROM blocks_agents GROUP BY "
                         "block_id HAVING count(*) > 1) s",
        "block_history": "SELECT count(*) FROM block_history",
        "history_letta_user": "SELECT count(*) FROM block_history WHERE actor_type = 'letta_user'",
        "history_letta_agent": "SELECT count(*) FROM block_history WHERE actor_type = 'letta_agent'",
        "blocks_with_history": "SELECT count(DISTINCT block_id) FROM block_history",
        "blocks_undone": "SELECT count(*) FROM block b JOIN block_history h ON "
                         "h.id = b.current_history_entry_id WHERE h.sequence_number < "
                         "(SELECT max(sequence_number) FROM block_history x WHERE x.block_id = b.id)",
        "block_tags": "SELECT count(*) FROM blocks_tags",
        "agent_tags": "SELECT count(*) FROM agents_tags",
    }
    out: dict = {}
    async with db_registry.async_session() as session:
        for key, sql in queries.items():
            try:
                out[key] = int((await session.execute(text(sql))).scalar())
            except Exception:  # noqa: BLE001 - a table this release does not have
                await session.rollback()
                out[key] = None
        per_block = await session.execute(text(
            "SELECT b.label, a.name, count(h.id) FROM block b "
            "JOIN blocks_agents ba ON ba.block_id = b.id JOIN agents a ON a.id = ba.agent_id "
            "LEFT JOIN block_history h ON h.block_id = b.id GROUP BY b.id, b.label, a.name"))
        out["history_per_block"] = sorted([f"{r[1]}/{r[0]}", int(r[2])] for r in per_block)
    return {"letta_version": version, "counts": out, "notes": notes}


def populate_main(scenario: str, report: Path) -> None:
    import asyncio

    result = asyncio.run(_populate(scenario))
    report.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")


# ============================================================================ orchestration


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def ensure_venv(venvs: Path, kind: str) -> Path:
    venv = venvs / f"letta-{RELEASES[kind]}"
    py = venv / "bin" / "python"
    if not (venv / ".installed").exists():
        _run([sys.executable, "-m", "venv", venv])
        # The venv's bundled pip crashes resolving lxml[html-clean]; a current pip works.
        _run([py, "-m", "pip", "install", "-q", "-U", "pip"])
        _run([py, "-m", "pip", "install", "-q", PIP_SPEC[kind]])
        (venv / ".installed").touch()
    return py


def _clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LETTA_", "OPENAI"))}
    env.update(extra)
    return env


def build_sqlite(py: Path, scenario: str, dest: Path, work: Path) -> dict:
    home = work / f"home-{scenario}"
    home.mkdir()
    report = work / f"sqlite-{scenario}.json"
    _run([py, __file__, "--populate", scenario, "--report", report], env=_clean_env(HOME=str(home)),
         cwd=work)
    db = home / ".letta" / "sqlite.db"
    shutil.copyfile(db, dest)
    return json.loads(report.read_text())


def build_postgres(py: Path, alembic: Path, dest: Path, work: Path) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    from pg_cluster import SUPERUSER, PgCluster  # the same throwaway cluster the tests start

    with PgCluster(work / "pg") as pg:
        pg.psql("postgres", "CREATE DATABASE letta")
        pg.psql("letta", "CREATE EXTENSION IF NOT EXISTS vector")
        uri = pg.dsn("letta", user=SUPERUSER)  # alembic and the server write: not the reader
        migrations = work / "alembic"
        shutil.copytree(alembic, migrations)
        env = _clean_env(LETTA_PG_URI=uri, HOME=str(work))
        _run([py.parent / "alembic", "upgrade", "head"], env=env, cwd=migrations)
        current = subprocess.run([py.parent / "alembic", "current"], env=env, cwd=migrations,
                                 capture_output=True, text=True, check=True).stdout
        head = re.search(r"^([0-9a-f]{12}) \(head\)", current, re.M).group(1)
        report = work / "postgres.json"
        _run([py, __file__, "--populate", "history", "--report", report], env=env, cwd=work)
        args = [a for t in DUMP_TABLES for a in ("-t", f"public.{t}")]
        sql = pg.run(["pg_dump", "--no-owner", "--no-privileges", "--no-comments",
                      "--format=plain", *args, "letta"])
        dest.write_text(sql, encoding="utf-8")
        result = json.loads(report.read_text())
        result["alembic_head"] = head
        return result


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--populate", choices=["history", "plain"], help=argparse.SUPPRESS)
    ap.add_argument("--report", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--alembic", type=Path, help="Letta 0.16.8's alembic/ folder (with alembic.ini)")
    ap.add_argument("--venvs", type=Path, default=Path(tempfile.gettempdir()) / "letta-venvs")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--only", choices=["sqlite", "postgres"])
    args = ap.parse_args(argv)
    if args.populate:
        populate_main(args.populate, args.report)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    args.venvs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="letta-fixtures-") as tmp:
        work = Path(tmp)
        os.chmod(work, 0o755)
        if args.only in (None, "sqlite"):
            py = ensure_venv(args.venvs, "sqlite")
            for scenario, name in (("history", "letta-0.11.7.db"),
                                   ("plain", "letta-0.11.7-nohistory.db")):
                got = build_sqlite(py, scenario, args.out / name, work)
                manifest[name] = {"server": "sqlite", "scenario": scenario, **got}
        if args.only in (None, "postgres"):
            if args.alembic is None:
                ap.error("--alembic is needed for the PostgreSQL build")
            py = ensure_venv(args.venvs, "postgres")
            got = build_postgres(py, args.alembic.resolve(), args.out / "letta-0.16.8.sql", work)
            manifest["letta-0.16.8.sql"] = {"server": "postgres", "scenario": "history",
                                            "tables": list(DUMP_TABLES), **got}
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    for name, entry in manifest.items():
        print(name, json.dumps(entry["counts"]))


if __name__ == "__main__":
    main()
