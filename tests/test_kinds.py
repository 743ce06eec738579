"""The kind registry: one register() line makes a new store kind loadable, auditable,
migratable and discoverable, and every built-in kind is reached through it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import memlab
from memlab import kinds
from memlab.audits import Audit
from memlab.errors import MigrationError, UnknownOption, UnrecognizedStore
from memlab.report._runs import finding_keys
from memlab.store import Store

# --- a toy kind, in a few lines: "*.toy" files, one block per line ---------------------------


def _load_toy(path: Path) -> Store:
    lines = path.read_text(encoding="utf-8").splitlines()
    return Store("toy", path, {"blocks": pd.DataFrame({"content": lines}, dtype="string")})


def _audit_toy(store: Store, *, as_of=None) -> Audit:
    return Audit("toy", store.name, {}, {"blocks": len(store.blocks)},
                 f"{len(store.blocks)} blocks")


def _find_toy(search: kinds.Search):
    for f in sorted((search.home / ".toy").glob("*.toy")):
        yield {"agent_id": f.stem, "path": str(f), "files": 1}


@pytest.fixture
def toy():
    kind = kinds.register("toy", display="toy store", load=_load_toy, audit=_audit_toy,
                          find=_find_toy, priority=50,
                          detect=lambda p: "starts with TOY" if p.head.startswith(b"TOY") else None)
    yield kind
    kinds.unregister("toy")


def test_a_toy_kind_is_loaded_audited_and_discovered(toy, tmp_path):
    (tmp_path / ".toy").mkdir()
    f = tmp_path / ".toy" / "agent7.toy"
    f.write_text("TOY\nremember the milk\nbuy bread\n")

    store = memlab.load(f)
    assert store.kind == "toy" and list(store.blocks.content) == ["TOY", "remember the milk",
                                                                  "buy bread"]
    assert store.meta["detected"] == {"kind": "toy", "evidence": "starts with TOY"}
    assert memlab.audit(f).headline["blocks"] == 3

    inventory = memlab.discover(tmp_path)
    row = inventory[inventory.kind == "toy"].iloc[0]
    assert (row.agent_id, row.path, row.files) == ("agent7", str(f), 1)
    assert pd.isna(row.last_commit)

    with pytest.raises(MigrationError, match="does not migrate from this toy store"):
        memlab.migrate(f, tmp_path / "out")


def test_without_the_registration_the_same_file_is_unrecognised(tmp_path):
    f = tmp_path / "agent7.toy"
    f.write_text("TOY\nremember the milk\n")
    with pytest.raises(UnrecognizedStore, match="elfmem database"):
        memlab.load(f)


def test_priority_lets_a_specific_sqlite_kind_go_before_elfmem(data_dir):
    db = data_dir / "demo/elfmem-demo.db"
    assert kinds.detect(db).kind == "elfmem_db"
    kinds.register("sqlite_toy", display="toy SQLite", load=_load_toy, priority=1,
                   detect=lambda p: "SQLite, toy" if p.head.startswith(b"SQLite") else None)
    try:
        assert kinds.detect(db).kind == "sqlite_toy"
    finally:
        kinds.unregister("sqlite_toy")
    assert kinds.detect(db).kind == "elfmem_db"


def test_built_in_kinds_record_what_they_saw(data_dir, tmp_path):
    assert kinds.detect(data_dir / "demo/elfmem-demo.db").reason == "starts with the SQLite header"
    blocks = tmp_path / "blocks.json"
    blocks.write_text('  [{"label": "persona", "value": "x"}]')
    ev = kinds.detect(blocks)
    assert (ev.kind, ev.reason) == ("letta_blocks", "JSON list")
    assert memlab.load(blocks).kind == "letta_blocks"
    (tmp_path / "proj" / ".elfmem").mkdir(parents=True)
    with pytest.raises(UnrecognizedStore):  # an .elfmem with no memory/ nor ledger/
        kinds.detect(tmp_path / "proj")
    (tmp_path / "proj" / ".elfmem" / "memory").mkdir()
    ev = kinds.detect(tmp_path / "proj")
    assert (ev.kind, ev.reason) == ("elfmem_substrate", "holds .elfmem/memory/")


def test_migration_targets_come_from_the_kinds():
    assert kinds.targets() == ("substrate", "letta", "souveraine", "claude_memory")
    assert kinds.get("elfmem_db").default_target == "substrate"
    assert kinds.get("letta_blocks").default_target == "letta"
    # a Letta Code memfs repository moves to v2 (memlab.kinds.letta_memfs._upgrade) or to a
    # Claude Code memory folder (memlab.kinds.letta_memfs._claude)
    assert list(kinds.get("letta_memfs").migrations) == ["letta", "claude_memory"]
    assert kinds.get("souveraine").migrations == {}


def test_a_name_is_registered_once(toy):
    with pytest.raises(ValueError, match="already registered"):
        kinds.register("toy", display="again", load=_load_toy)


def test_a_letta_server_sqlite_goes_before_elfmem_and_a_dsn_touches_no_file(data_dir):
    ev = kinds.detect(data_dir / "samples/letta-server/letta-0.11.7.db")
    assert (ev.kind, ev.reason) == ("letta_server", "SQLite with a Letta server's tables")
    ev = kinds.detect(" postgresql://memlab_ro@localhost:5432/letta")
    assert (ev.kind, ev.source) == ("letta_server", "postgresql://memlab_ro@localhost:5432/letta")


# --- options: one a kind's load or audit does not take is an error naming the kind ----------


def test_a_misspelt_audit_option_names_the_kind_and_the_option(data_dir):
    from memlab.errors import UnknownOption

    af = data_dir / "samples/letta-af/customer_service.af"
    with pytest.raises(UnknownOption) as info:
        memlab.audit(af, seconds_per_call=7.0)  # an elfmem database's option, not an .af's
    assert str(info.value) == (f"{af}: auditing a store of kind 'agent_file' (Letta Agent File) "
                               "takes no seconds_per_call option (it takes none)")
    store = memlab.load(data_dir / "demo/elfmem-demo.db")
    with pytest.raises(UnknownOption, match="kind 'elfmem_db'.* takes no seconds_per_cal "
                                            r"option \(its options: seconds_per_call\)"):
        kinds.get("elfmem_db").audit(store, as_of="2026-08-04", seconds_per_cal=7.0)
    # the option spelt right still reaches the audit
    assert memlab.audit(store, as_of="2026-08-04",
                        seconds_per_call=7.0).headline["seconds_per_call"] == 7.0


def test_a_misspelt_load_option_names_the_kind_and_the_option(data_dir):
    from memlab.errors import InvalidArgument, UnknownOption

    db = data_dir / "demo/elfmem-demo.db"
    with pytest.raises(UnknownOption) as info:
        memlab.load(db, embedding=True)
    assert isinstance(info.value, InvalidArgument)
    assert str(info.value) == (f"{db}: loading a store of kind 'elfmem_db' (elfmem database) "
                               "takes no embedding option (its options: embeddings)")


def test_the_cli_refuses_an_option_the_kind_does_not_take_in_one_line(data_dir, capsys):
    from memlab.cli import main

    af = data_dir / "samples/letta-af/customer_service.af"
    assert main(["audit", str(af), "--seconds-per-call", "7"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "takes no seconds_per_call option" in err
    # without the option the same file audits as before
    assert main(["audit", str(af)]) == 0


def test_what_a_scheduled_run_does_with_a_kind_is_declared_on_the_kind(tmp_path):
    """`memlab report all` renders each store's reports and charts its headline metrics from
    the kind's own ``reports`` and ``headline``: a kind registered with them is scheduled and
    its metrics are configurable; the same kind without them is neither."""
    from memlab.errors import ReportError
    from memlab.report._runs import HEADLINE_METRICS, headline_metrics
    from memlab.report.schedule import REPORTS_BY_KIND, load_config

    config = tmp_path / "c.yaml"
    (tmp_path / "a.toy").write_text("TOY\n", encoding="utf-8")
    config.write_text("metrics:\n  toy: [blocks]\nstores:\n  a: a.toy\n", encoding="utf-8")
    assert "toy" not in REPORTS_BY_KIND and "toy" not in HEADLINE_METRICS
    with pytest.raises(ReportError, match="must map a store kind"):
        load_config(config)
    kinds.register("toy", display="toy store", load=_load_toy, audit=_audit_toy,
                   reports=("audit",), headline=("blocks", "problems"))
    try:
        assert REPORTS_BY_KIND["toy"] == ("audit",)
        assert HEADLINE_METRICS["toy"] == ("blocks", "problems")
        assert headline_metrics("toy") == ["blocks", "problems"]
        assert load_config(config)["metrics"] == {"toy": ["blocks"]}
        # the built-in kinds keep theirs, in registration order
        assert REPORTS_BY_KIND["letta_memfs"] == ("memfs", "review")
        assert "letta_server" not in REPORTS_BY_KIND  # loaded by a run, no report of its own
    finally:
        kinds.unregister("toy")
    assert "toy" not in HEADLINE_METRICS


def test_a_migrated_copy_names_the_target_it_came_from():
    assert dict(kinds.by_kind("copy_of")) == {"elfmem_substrate": "substrate",
                                              "souveraine": "souveraine", "letta_memfs": "letta"}
    assert set(kinds.by_kind("copy_of").values()) <= set(kinds.targets())
    with pytest.raises(ValueError, match="no field"):
        kinds.by_kind("colour")


# --- a kind written as a class: the protocol's methods, called by the engines -----------------


class _ClassToy(kinds.KindBase):
    """``*.ctoy`` files; loads, audits and finds with its own methods, no ``*_ref``."""

    name = "class_toy"
    display = "class toy store"
    priority = 50
    headline = ("blocks",)

    def detect(self, probe):
        return "starts with CTOY" if probe.head.startswith(b"CTOY") else None

    def load(self, source, *, upper: bool = False):
        store = _load_toy(source)
        store = Store(self.name, store.path, store.frames)
        if upper:
            store.blocks["content"] = store.blocks.content.str.upper()
        return store

    def audit(self, store, *, as_of=None):
        return Audit(self.name, store.name, {}, {"blocks": len(store.blocks)}, "class toy")

    def find(self, search):
        return [{"agent_id": f.stem, "path": str(f)} for f in sorted(search.home.glob("*.ctoy"))]


def test_a_kind_written_as_a_class_is_loaded_audited_and_discovered(tmp_path):
    f = tmp_path / "agent9.ctoy"
    f.write_text("CTOY\nkeep it short\n")
    kind = kinds.register(_ClassToy())
    try:
        assert kinds.get("class_toy") is kind and kinds.by_kind("headline")["class_toy"] == \
            ("blocks",)
        store = memlab.load(f, upper=True)
        assert store.kind == "class_toy" and list(store.blocks.content) == ["CTOY",
                                                                            "KEEP IT SHORT"]
        assert store.meta["detected"] == {"kind": "class_toy", "evidence": "starts with CTOY"}
        assert memlab.audit(f).headline == {"blocks": 2}
        inventory = memlab.discover(tmp_path)
        assert list(inventory[inventory.kind == "class_toy"].agent_id) == ["agent9"]
        with pytest.raises(MigrationError, match="does not migrate from this class toy store"):
            memlab.migrate(f, tmp_path / "out")
        with pytest.raises(ValueError, match="already registered"):
            kinds.register(_ClassToy())
    finally:
        kinds.unregister("class_toy")
    with pytest.raises(UnrecognizedStore):
        memlab.load(f)


def test_a_class_kind_is_registered_alone_and_checked():
    with pytest.raises(TypeError, match="pass it alone"):
        kinds.register(_ClassToy(), display="other name")
    bad = _ClassToy()
    bad.default_target = "nowhere"
    with pytest.raises(ValueError, match="not one of class_toy's migrations"):
        kinds.register(bad)
    with pytest.raises(TypeError, match="needs display= and load="):
        kinds.register("half_toy", display="half")
    assert kinds.lookup("class_toy") is None and kinds.lookup("half_toy") is None


def test_letta_blocks_is_a_class_kind_detecting_json_lists_only(tmp_path):
    kind = kinds.get("letta_blocks")
    assert isinstance(kind, kinds.KindBase) and not isinstance(kind, kinds.Kind)
    blocks = tmp_path / "blocks.txt"
    blocks.write_bytes(b"\xef\xbb\xbf  \n[{\"label\": \"human\", \"value\": \"x\"}]")
    assert kinds.detect(blocks) == kinds.Evidence("letta_blocks", blocks, "JSON list")
    # negative controls: an object (an agent file) named .json, a folder named .json, a list
    # in a file named .af is still a list, and a file that is not JSON and not named .json
    obj = tmp_path / "agent.json"
    obj.write_text('{"agents": []}')
    assert kinds.detect(obj).kind == "agent_file"
    folder = tmp_path / "list.json"
    folder.mkdir()
    assert kind.detect(kinds.Probe(folder)) is None
    text = tmp_path / "notes.txt"
    text.write_text("- [ ] not json")
    assert kind.detect(kinds.Probe(text)) is None
    named = tmp_path / "empty.json"
    named.write_text("")
    assert kinds.detect(named) == kinds.Evidence("letta_blocks", named, "named .json")


def test_a_class_kinds_own_methods_refuse_an_unknown_option_by_name(tmp_path):
    f = tmp_path / "agent9.ctoy"
    f.write_text("CTOY\nkeep it short\n")
    kinds.register(_ClassToy())
    try:
        with pytest.raises(UnknownOption, match="loading a store of kind 'class_toy' "
                                                r"\(class toy store\) takes no uper option"):
            memlab.load(f, uper=True)
        store = memlab.load(f)
        with pytest.raises(UnknownOption, match="auditing a store of kind 'class_toy' "
                                                r"\(class toy store\) takes no seconds_per_call "
                                                "option"):
            memlab.audit(store, seconds_per_call=7)
        assert memlab.audit(store, as_of="2026-08-04").headline == {"blocks": 2}
    finally:
        kinds.unregister("class_toy")


def test_letta_blocks_names_its_findings_and_a_run_records_each(tmp_path):
    from memlab import _metrics

    identities = kinds.get("letta_blocks").findings()
    assert dict(identities) == {"blocks_over_limit": ("block_id", "label"),
                                "orphan_blocks": ("block_id", "label")}
    assert all(_metrics.FINDINGS[t] == c for t, c in identities.items())
    assert kinds.get("agent_file").findings() == identities  # the kind whose audit it shares
    assert dict(kinds.Kind(name="rec", display="a record", load_ref="m:f").findings()) == _metrics.FINDINGS  # all
    path = tmp_path / "blocks.json"
    path.write_text('[{"id": "block-aa", "label": "human", "value": "ppp", "limit": 2},'
                    ' {"id": "block-bb", "label": "persona", "value": "q", "limit": 9}]')
    tables = memlab.audit(path).tables
    assert finding_keys(tables, identities) == ["blocks_over_limit: block-aa · human"]
    assert finding_keys(tables, identities) == finding_keys(tables)  # nothing of its lost
    # a table the kind does not name is not a finding of it
    tables = {**tables, "over_limit": pd.DataFrame({"path": ["x.md"]})}
    assert finding_keys(tables, identities) == ["blocks_over_limit: block-aa · human"]


def test_the_kind_record_declares_what_kindbase_declares_and_nothing_else():
    """``Kind`` repeats ``KindBase``'s declarations (a dataclass cannot take its fields from a
    plain class's annotations, and ``KindBase`` cannot be a dataclass: a kind class sets its
    fields as class attributes and is made with no arguments). This keeps the two the same:
    the same names (:data:`FIELDS`), the same types (``load_ref`` narrowed: a record needs a
    loader) and the same defaults."""
    import dataclasses

    from memlab.kinds import Kind, KindBase
    from memlab.kinds._base import FIELDS

    declared = {n: str(a) for n, a in KindBase.__annotations__.items()
                if not str(a).startswith("ClassVar")}
    fields = {f.name: str(f.type) for f in dataclasses.fields(Kind)}
    assert set(fields) == set(declared) == set(FIELDS)
    assert {n: t for n, t in fields.items() if declared[n] != t} == {"load_ref": "Ref"}
    assert declared["load_ref"] == "Ref | None"
    for f in dataclasses.fields(Kind):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            assert f.name in ("name", "display", "load_ref"), f.name  # register() requires them
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        assert default == getattr(KindBase, f.name), f.name
