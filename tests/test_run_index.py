"""Dated runs read back: alerts, deltas, retention, the crontab line and the systemd timer.

These use hand-made run records and figures worked out by hand; the end-to-end runs of real
reports are in test_schedule.py (slow).
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from memlab.errors import InvalidArgument, ReportError
from memlab.report._runs import (RUN_FORMAT, delta_rows, evaluate_alerts, parse_alerts,
                                 prune_runs, store_digest, store_metrics)
from memlab.report._timer import CRON_MARK, install_systemd, make_schedule, merge_crontab
from memlab.report.schedule import load_config


def _rules(items):
    rules = parse_alerts(items)
    assert not isinstance(rules, str), rules
    return rules


def test_alert_rules_fire_on_the_value_or_the_change_since_the_previous_run():
    rules = _rules([{"metric": "input_per_corpus_token", "above": 40},
                    {"metric": "blocks_active", "change_above": 5},
                    {"metric": "role_slots_left", "below": 10, "store": "b"}])
    now = {"a": {"input_per_corpus_token": 52.06, "blocks_active": 37, "role_slots_left": 4},
           "b": {"input_per_corpus_token": 15.78, "blocks_active": 43, "role_slots_left": 10}}
    before = {"a": {"input_per_corpus_token": 52.06, "blocks_active": 43}, "b": None}
    alerts = {(a.store, a.rule.metric): a for a in evaluate_alerts(rules, now, before)}
    assert alerts["a", "input_per_corpus_token"].fired
    assert not alerts["b", "input_per_corpus_token"].fired
    assert alerts["a", "blocks_active"].fired  # |37 - 43| = 6 > 5
    assert "43 -> 37 (-6)" in alerts["a", "blocks_active"].line()
    # b has no previous run: the change is not checked, and says why
    assert not alerts["b", "blocks_active"].fired
    assert alerts["b", "blocks_active"].reason == "no previous run of this store"
    # the store: filter: a's role_slots_left (4 < 10) is not b's rule
    assert ("a", "role_slots_left") not in alerts
    assert not alerts["b", "role_slots_left"].fired  # 10 is not below 10


def test_a_null_metric_is_never_read_as_zero():
    rules = _rules([{"metric": "hook_violations", "below": 1},
                    {"metric": "hook_violations", "change_above": 0}])
    alerts = evaluate_alerts(rules, {"repo": {"hook_violations": None}},
                             {"repo": {"hook_violations": 3}})
    assert [a.fired for a in alerts] == [False, False]
    assert all(a.reason == "not recorded in this run" for a in alerts)
    assert all(a.line().startswith("not checked: repo") for a in alerts)
    # a metric no store has (a misspelt name) is one "not checked" row per rule, not silence
    missing = evaluate_alerts(rules, {"db": {"blocks_active": 4}}, {"db": None})
    assert [(a.store, a.fired, a.reason) for a in missing] == [
        ("every store", False, "no store in this run has this metric")] * 2
    [typo] = evaluate_alerts(_rules([{"metric": "blocks_active", "above": 1, "store": "dbb"}]),
                             {"db": {"blocks_active": 4}}, {"db": None})
    assert not typo.fired and "store 'dbb' is not in this run" in typo.line()
    [d] = delta_rows({"hook_violations": None}, {"hook_violations": 2}, ["hook_violations"])
    assert d.change is None and d.reason == "not recorded in the previous run"
    assert delta_rows({}, {}, ["hook_violations"]) == []


@pytest.mark.parametrize("items, message", [
    ({"metric": "x", "above": 1}, "must be a list"),
    ([{"above": 1}], "needs `metric: NAME`"),
    ([{"metric": "x"}], "exactly one of"),
    ([{"metric": "x", "above": 1, "below": 0}], "exactly one of"),
    ([{"metric": "x", "above": "forty"}], "must be a number"),
    ([{"metric": "x", "above": 1, "abvoe": 2}], "unknown key"),
])
def test_bad_alert_rules_say_what_is_wrong(items, message):
    assert message in parse_alerts(items)


def test_config_keys_are_checked_by_name(tmp_path):
    (tmp_path / "a.db").write_bytes(b"")
    for text, message in [("alert:\n  - metric: x\n    above: 1\nstores:\n  a: a.db\n", "unknown key"),
                          ("keep: 0\nstores:\n  a: a.db\n", "keep"),
                          ("metrics:\n  elfmem: [x]\nstores:\n  a: a.db\n", "metrics"),
                          ("alerts:\n  - metric: x\nstores:\n  a: a.db\n", "exactly one")]:
        (tmp_path / "c.yaml").write_text(text)
        with pytest.raises(ReportError, match=message):
            load_config(tmp_path / "c.yaml")


def test_shipped_configs_load_and_the_nightly_one_has_no_as_of(data_dir):
    nightly = load_config(data_dir / "reports-nightly.yaml")
    assert "as_of" not in nightly and nightly["keep"] == 30 and nightly["alerts"]
    assert all(p.exists() for p in nightly["stores"].values())
    assert all(p.exists() for p in load_config(data_dir / "reports.yaml")["stores"].values())


def test_store_metrics_names_and_the_derived_share():
    reports = [{"store": "s", "report": "audit",
                "metrics": {"s.db": {"blocks_active": 37, "archived_superseded": 6,
                                     "blocks_archived": 8, "supersession_to_decay": None,
                                     "store": "s.db", "superseded_by_recorded": True}}},
               {"store": "s", "report": "review", "metrics": {"choices": 5, "digest": "ab"}}]
    m = store_metrics(reports)
    assert m == {"blocks_active": 37, "archived_superseded": 6, "blocks_archived": 8,
                 "supersession_to_decay": None, "review.choices": 5, "supersession_share": 0.75}
    # no archived block: the share is not recorded (null), not 0
    assert store_metrics([{"report": "audit", "metrics": {"archived_superseded": 0,
                                                          "blocks_archived": 0}}])[
        "supersession_share"] is None


def test_store_digest_follows_the_bytes(tmp_path):
    f = tmp_path / "a.db"
    f.write_bytes(b"one")
    first = store_digest(f)
    f.write_bytes(b"two")
    assert store_digest(f) != first
    f.write_bytes(b"one")
    assert store_digest(f) == first
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "sub" / "x.md").write_text("x")
    d = store_digest(repo)
    (repo / "sub" / "x.md").rename(repo / "sub" / "y.md")  # same bytes, other name
    assert store_digest(repo) != d


def _run_folder(root, date, extra=()):
    folder = root / date
    (folder / "demo").mkdir(parents=True)
    (folder / "index.html").write_text("x")
    (folder / "runs.json").write_text(json.dumps({
        "format": RUN_FORMAT, "date": date, "stores": {}, "reports": [],
        "written": ["demo", "index.html", "runs.json"]}))
    for name in extra:
        (folder / name).write_text("mine")
    return folder


def test_keep_deletes_only_memlabs_own_old_run_folders(tmp_path):
    root = tmp_path / "reports"
    for date in ("2026-08-01", "2026-08-02", "2026-08-04", "2026-08-05"):
        _run_folder(root, date)
    _run_folder(root, "2026-08-03", extra=["notes.txt"])  # the user's file inside a run
    foreign = root / "2026-07-30"
    foreign.mkdir()
    (foreign / "runs.json").write_text("[not memlab's]")
    legacy = root / "2026-07-31"
    legacy.mkdir()
    (legacy / "runs.json").write_text(json.dumps([{"store": "demo", "report": "audit"}]))
    (root / "2026-07-29").symlink_to(root / "2026-08-05")
    (root / "other").mkdir()

    assert prune_runs(root, None).deleted == []
    result = prune_runs(root, 2)
    assert result.deleted == ["2026-08-01", "2026-08-02"]
    assert result.kept_back == ["2026-07-31", "2026-08-03"]  # legacy record, a foreign file
    left = sorted(p.name for p in root.iterdir())
    assert left == ["2026-07-29", "2026-07-30", "2026-07-31", "2026-08-03", "2026-08-04",
                    "2026-08-05", "other"]
    assert (root / "2026-08-03" / "notes.txt").read_text() == "mine"
    # a back-dated run just written is spared, whatever its date
    _run_folder(root, "2026-07-01")
    assert prune_runs(root, 1, spare="2026-07-01").deleted == ["2026-08-04"]
    assert (root / "2026-07-01").is_dir() and (root / "2026-08-05").is_dir()


def test_crontab_line_is_one_quoted_line(tmp_path):
    work = tmp_path / "runs 100%"
    work.mkdir()
    config = tmp_path / "c.yaml"
    config.write_text("stores: {}\n")
    s = make_schedule(config, workdir=work, at="6:05", fail_on_alert=True, python="/usr/bin/python3")
    line = s.crontab_line()
    assert line.startswith("5 6 * * * cd '") and "\n" not in line
    assert "100\\%" in line and "100%" not in line.replace("100\\%", "")  # cron's % is escaped
    assert line.endswith("--fail-on-alert")
    # what sh runs, once cron has turned \% back into %: exactly the folder and memlab's words
    command = line.split(" ", 5)[5].replace("\\%", "%")
    assert command.startswith("cd ") and command.count(" && ") == 1
    shown = command.replace("cd ", "printf '%s\\n' ", 1).replace(" && ", "; printf '%s\\n' ", 1)
    echoed = subprocess.run(["sh", "-c", shown], capture_output=True, text=True, check=True)
    # the run writes its reports/ in the folder given, wherever memlab is installed from
    assert echoed.stdout.splitlines() == [str(work), f"MEMLAB_REPORTS_DIR={work}/reports", *s.argv]
    bad = tmp_path / "x\ny"
    bad.mkdir()
    with pytest.raises(InvalidArgument, match="line break"):
        make_schedule(config, workdir=bad)
    with pytest.raises(InvalidArgument, match="HH:MM"):
        make_schedule(config, at="25:00")


def test_merge_crontab_replaces_only_memlabs_entry():
    mine = "MAILTO=me\n0 1 * * * backup\n"
    once = merge_crontab(mine, "0 6 * * * cd /a && run")
    assert once == f"MAILTO=me\n0 1 * * * backup\n{CRON_MARK}\n0 6 * * * cd /a && run\n"
    twice = merge_crontab(once, "30 7 * * * cd /b && run")
    assert twice == f"MAILTO=me\n0 1 * * * backup\n{CRON_MARK}\n30 7 * * * cd /b && run\n"
    assert merge_crontab("", "x") == f"{CRON_MARK}\nx\n"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_systemd_units_install_into_the_folder_given_and_verify(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("stores: {}\n")
    s = make_schedule(config, workdir=tmp_path, at="03:15", python=shutil.which("python3"))
    units = tmp_path / "units"
    files = install_systemd(s, folder=units)
    assert [f.name for f in files] == ["memlab-report.service", "memlab-report.timer"]
    assert "OnCalendar=*-*-* 03:15:00" in files[1].read_text()
    # systemd's own checker reads both units (it fails on a relative or missing ExecStart)
    verify = subprocess.run(["systemd-analyze", "verify", *map(str, files)],
                            capture_output=True, text=True)
    assert verify.returncode == 0, verify.stderr
    install_systemd(s, folder=units)  # the same units again: fine
    other = make_schedule(config, workdir=tmp_path, at="04:00", python=shutil.which("python3"))
    from memlab.errors import OutputExists

    with pytest.raises(OutputExists):
        install_systemd(other, folder=units)
    install_systemd(other, folder=units, force=True)
    assert "04:00:00" in files[1].read_text()


def test_index_shows_store_text_escaped_and_a_failed_store(tmp_path):
    from memlab.report._index import index_page

    hostile = "<script>alert(1)</script>\u202eevil\x1b[31m\u2028line"
    root = tmp_path / "reports"

    def record(date, choices, error=None):
        folder = root / date
        folder.mkdir(parents=True)
        state = {"kind": "elfmem_db", "digest": "ab" * 32, "problems": [], "findings": [hostile],
                 "choices": choices, "headline": ["blocks_active"]}
        if error:
            state = {"kind": None, "error": error}
        rec = {"format": RUN_FORMAT, "date": date, "status": "ok", "stores": {"db": state},
               "reports": [] if error else [{"store": "db", "report": "audit",
                                            "metrics": {"blocks_active": 3}}],
               "alerts": [], "alert_rules": []}
        (folder / "runs.json").write_text(json.dumps(rec))
        return folder, rec

    runs = [record("2026-08-01", {}), record("2026-08-02", {"choice-1": hostile})]
    page = index_page(runs)
    assert "<script>" not in page and "\u202e" not in page and "\x1b" not in page
    assert "\u2028" not in page
    assert "&lt;script&gt;" in page and "\\u202e" in page  # shown, made visible
    assert "review choices appeared: 1" in page
    runs.append(record("2026-08-03", None, error="db.sqlite: not an elfmem database"))
    page = index_page(runs)
    assert "Not read in this run: db.sqlite: not an elfmem database" in page
    # its metrics were not recorded this run: "–" with the reason, not a drop to 0
    row = page[page.index(">blocks_active</td>"):].split("</tr>")[0]
    assert "not recorded in this run" in row and ">0<" not in row


def test_a_new_hook_bypass_and_limit_breach_appear_as_findings(tmp_path):
    """On a real memory repo: a later agent commit made with --no-verify, writing a file over
    its limit and a key the hook refuses, shows up as new finding identities; the ones
    already there stay the same."""
    import memlab
    from memfs_repos import AGENT, _t, _Writer, build_letta_v1

    from memlab.formats.letta_memfs import render_memfs_file
    from memlab.report._runs import changed_sets, finding_keys

    built = build_letta_v1(tmp_path / "repo")
    before = finding_keys(memlab.audit(built.path).tables)
    assert any(k.startswith("hook_violations: ") for k in before)
    writer = _Writer(built.path)  # `git init` again on the built repository: one more commit
    sha = writer.commit("notes", AGENT, _t("2026-04-20"), no_verify=True, files={
        "system/notes.md": render_memfs_file("Scratch notes", "x" * 300 + "\n", limit=100),
        # an unknown frontmatter key: the Letta pre-commit hook refuses it
        "system/mood.md": "---\ndescription: Mood\nmood: cheerful\n---\nCheerful.\n"})
    after = finding_keys(memlab.audit(built.path).tables)
    appeared, gone = changed_sets({"findings": before}, {"findings": after}, "findings")
    assert gone == []
    assert f"limit_breaches: {sha} · system/notes.md" in appeared
    assert "over_limit: system/notes.md" in appeared
    assert f"no_verify_commits: {sha}" in appeared
    assert any(k.startswith(f"hook_violations: {sha} · system/mood.md · ") for k in appeared)


def test_schedule_command_prints_and_installs_only_where_told(tmp_path, monkeypatch, capsys):
    from memlab.cli import main

    config = tmp_path / "c.yaml"
    config.write_text("stores: {}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["schedule", "--config", str(config), "--at", "05:30"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith(f"30 5 * * * cd {tmp_path} && ")
    assert f"report all --config {config}" in out
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert main(["schedule", "--config", str(config), "--systemd"]) == 0
    assert "[Timer]" in capsys.readouterr().out and not (tmp_path / "xdg").exists()
    assert main(["schedule", "--config", str(config), "--systemd", "--install"]) == 0
    assert (tmp_path / "xdg/systemd/user/memlab-report.timer").is_file()
    assert main(["schedule", "--config", str(tmp_path / "nope.yaml")]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("memlab: error:") and "nope.yaml" in err


def test_problem_texts_name_files_relative_to_the_store(tmp_path):
    import pandas as pd

    from memlab.report._runs import problem_keys

    repo = tmp_path / "repo"
    (repo / "system").mkdir(parents=True)
    problems = pd.DataFrame([{"file": str(repo / "system/a.md"), "line": 3, "kind": "bad_yaml",
                              "message": f"cannot parse {repo}/system/a.md"}])
    assert problem_keys(problems, repo) == ["bad_yaml system/a.md: cannot parse system/a.md"]


def test_trend_lines_draw_a_panel_per_metric_with_gaps_for_nulls():
    from memlab import plots
    from memlab.errors import MemlabError

    series = {"2026-08-01": {"a": 1.0, "b": None}, "2026-08-02": {"a": None, "b": None},
              "2026-08-03": {"a": 3.0, "b": None}}
    fig = plots.trend_lines(series, ["a", "b", "absent"], title="db: $x$ headline")
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == ["a", "b"]  # a metric no run has is not drawn
    ys = axes[0].lines[0].get_ydata()
    assert ys[0] == 1.0 and ys[2] == 3.0 and ys[1] != ys[1]  # the null run is a gap (NaN)
    assert "–" in [t.get_text() for t in axes[0].texts]  # ... marked with a dash, not 0
    assert any("not recorded" in t.get_text() for t in axes[1].texts)
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["08-01", "08-02", "08-03"]
    assert fig.get_suptitle() == r"db: \$x\$ headline"  # store text is never mathtext
    fig.savefig(__import__("io").BytesIO(), format="png")  # draws
    with pytest.raises(MemlabError):
        plots.trend_lines(series, ["absent"])


def test_configured_headline_metrics_replace_the_defaults_and_a_misspelt_one_is_named(tmp_path):
    from memlab.report._index import index_page
    from memlab.report._runs import HEADLINE_METRICS, headline_metrics

    (tmp_path / "a.db").write_bytes(b"")
    (tmp_path / "c.yaml").write_text("metrics:\n  elfmem_db: [blocks_active, blocks_activ]\n"
                                     "stores:\n  a: a.db\n")
    overrides = load_config(tmp_path / "c.yaml")["metrics"]
    assert headline_metrics("elfmem_db", overrides) == ["blocks_active", "blocks_activ"]
    assert headline_metrics("letta_memfs", overrides) == list(HEADLINE_METRICS["letta_memfs"])
    assert headline_metrics("letta_server", overrides) == []  # no defaults for that kind

    runs = []
    for date, active in (("2026-08-01", 43), ("2026-08-02", 37)):
        state = {"kind": "elfmem_db", "headline": headline_metrics("elfmem_db", overrides)}
        rec = {"format": RUN_FORMAT, "date": date, "stores": {"a": state},
               "reports": [{"store": "a", "report": "audit",
                            "metrics": {"blocks_active": active, "llm_calls": 9}}]}
        runs.append((tmp_path / date, rec))
    trends = index_page(runs).split('id="trends"')[1]
    assert 'alt="a: trend of blocks_active"' in trends  # the configured list, not the defaults
    assert "llm_calls" not in trends
    assert "No run has blocks_activ: not charted." in trends
