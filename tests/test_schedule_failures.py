"""`memlab report all` as a scheduler: a broken store fails alone (its own error page, listed as
failed), the others are written, the index keeps its last good run, the exit status says so,
and the `notify:` targets (a real program, a real HTTP server on 127.0.0.1) each get one JSON
payload naming the failure. The notification targets are also checked on their own: deadlines,
refusals, redirects, and hostile text that must arrive as a JSON string and nothing else.
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memlab.errors import ReportError
from memlab.report._notify import NotifyTarget, encode, parse_notify, payload, send
from memlab.report.schedule import EXIT_FAILED, load_config

FIRST, SECOND = "2026-11-30", "2026-12-01"
#: A store file name a shell would act on: `$(...)`, quotes, `;`. It reaches the notify command
#: only inside the JSON on its stdin.
HOSTILE = "broken $(touch pwned); 'q' \"dq\".db"


class _Hook(BaseHTTPRequestHandler):
    """Records each POST body; `/slow` never answers in time; `/moved` redirects."""

    bodies: list[bytes] = []
    paths: list[str] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        type(self).paths.append(self.path)
        if self.path == "/slow":
            time.sleep(3)
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/elsewhere")
            self.end_headers()
            return
        type(self).bodies.append(body)
        self.send_response(200 if self.path != "/fail" else 500)
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args):
        pass


@pytest.fixture()
def hook():
    _Hook.bodies, _Hook.paths = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Hook
    server.shutdown()
    server.server_close()


def _recorder(out):
    """A notify command (argv, no shell) appending its stdin as one line to ``out``."""
    return [sys.executable, "-c", "import sys; f = open(sys.argv[1], 'ab'); "
            "f.write(sys.stdin.buffer.read() + b'\\n')", str(out)]


def _config(folder, name, stores, notify):
    lines = [f"as_of: {FIRST}", "simulation: false", "reports: [audit]",
             "notify: " + json.dumps(notify), "stores:"]
    lines += [f"  {n}: {json.dumps(p)}" for n, p in stores.items()]
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_a_broken_store_fails_alone_keeps_the_last_good_index_and_notifies(
        tmp_path, data_dir, hook, capsys, monkeypatch):
    from memlab.cli import main

    url, server = hook
    monkeypatch.chdir(tmp_path)  # where a `$(touch pwned)` run by a shell would write
    shutil.copy(data_dir / "demo/elfmem-demo.db", tmp_path / "demo.db")
    shutil.copy(data_dir / "samples/elfmem/elfmem-0.20.0-schema9.db", tmp_path / "s20.db")
    demo = (data_dir / "demo/elfmem-demo.db").read_bytes()
    (tmp_path / HOSTILE).write_bytes(demo[:40000])  # a truncated copy of the demo database
    got = tmp_path / "notified.jsonl"
    notify = [{"command": _recorder(got)}, {"url": url + "/hook", "timeout": 10}]
    root = tmp_path / "reports"

    # The first run reads one good store: nothing failed, no alert, so nobody is told.
    good = _config(tmp_path, "good.yaml", {"demo": "demo.db"}, notify)
    assert main(["-q", "report", "all", "--config", str(good), "--out", str(root / FIRST)]) == 0
    assert not got.exists() and server.bodies == []
    capsys.readouterr()

    # The second: two good stores and the broken one.
    config = _config(tmp_path, "stores.yaml",
                     {"demo": "demo.db", "broken": HOSTILE, "s20": "s20.db"}, notify)
    code = main(["-q", "report", "all", "--config", str(config), "--out", str(root / SECOND)])
    out, err = capsys.readouterr()
    assert code == EXIT_FAILED == 4
    assert "FAILED broken · load: " in err and "1 of 3 report(s) failed" in err
    run = root / SECOND

    # the good stores are written, each report opening with the parameters it ran with
    import memlab

    for store, file in (("demo", "demo.db"), ("s20", "s20.db")):
        html = (run / store / "audit" / "01-audit.html").read_text()
        panel = html[html.index("<h2>Parameters</h2>"):html.index("</table>", html.index(
            "<h2>Parameters</h2>"))]
        assert html.index("<h2>Parameters</h2>") < html.index("<h2>Headline</h2>")
        for row in (f"<th>stores</th><td>{file}</td>", f"<th>as_of</th><td>'{FIRST}'</td>",
                    "<th>seconds_per_call</th><td>14.0 (default)</td>",
                    f"<th>memlab</th><td>{memlab.__version__}</td>"):
            assert row in panel, (row, panel)
        assert "output_dir" not in panel and str(tmp_path) not in panel
    # the broken one is a page of its own, its error on top, and failed in the run's record
    page = (run / "broken" / "error.html").read_text()
    top = page[:page.index('id="parameters"')]
    assert "<h1>Failed: broken · load</h1>" in top
    assert "not a whole number of 4096-byte pages" in top
    assert "broken $(touch pwned); &#x27;q&#x27; &quot;dq&quot;.db" in top  # escaped, named
    assert str(tmp_path) not in page  # no machine paths
    assert f"<th>as of</th><td>{FIRST}</td>" in page and "<th>memlab</th>" in page
    record = json.loads((run / "runs.json").read_text())
    [failed] = [r for r in record["reports"] if r.get("error")]
    assert (failed["store"], failed["step"], failed["error_page"]) == \
        ("broken", "load", "broken/error.html")
    assert record["status"] == "1 of 3 report(s) failed"
    run_page = (run / "index.html").read_text()
    assert '<a href="broken/error.html">load</a>' in run_page and "<strong>failed</strong>" in run_page

    # the index keeps the last good run as "latest" and says, on top, that the newest failed
    listing = json.loads((root / "runs.json").read_text())
    assert (listing["latest"], listing["newest"]) == (FIRST, SECOND)
    assert [r["ok"] for r in listing["runs"]] == [True, False]
    index = (root / "index.html").read_text()
    assert f'latest good run: <a href="{FIRST}/index.html">{FIRST}</a>' in index
    banner = index[:index.index("run(s); latest good run")]
    assert f"Run <a href=\"{SECOND}/index.html\">{SECOND}</a> failed" in banner
    assert f'href="{SECOND}/broken/error.html"' in banner
    assert (root / FIRST / "demo" / "audit" / "01-audit.html").is_file()  # untouched

    # each target got one payload, naming the failure; the file name arrived as a JSON string
    [line] = got.read_bytes().splitlines()
    assert len(server.bodies) == 1 and server.paths == ["/hook"]
    for body in (json.loads(line), json.loads(server.bodies[0])):
        assert body["events"] == ["failure"] and body["run"] == SECOND
        [f] = body["failures"]
        assert (f["store"], f["step"]) == ("broken", "load") and HOSTILE in f["error"]
        assert "broken load" in body["text"]
        assert body["failures"][0]["page"].endswith("broken/error.html")
    assert line == server.bodies[0]  # the same bytes to both
    assert line.isascii()
    assert not (tmp_path / "pwned").exists()  # no shell ever read it
    assert [n["ok"] for n in json.loads((run / "runs.json").read_text())["notified"]] == \
        [True, True]

    # A third run whose notebook fails at a cell (papermill's error, as execute_notebook raises
    # it, the executed notebook kept): the failure page names the cell and links the store's
    # last good report of that kind (the second run's: that run failed, its demo report did not).
    import memlab.report

    def failing(kind, paths, *, out, **params):
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "01-audit.ipynb").write_text("{}")
        raise ReportError("cell 4 failed with ValueError: boom <b>", path=folder / "01-audit.ipynb",
                          cell_index=4, ename="ValueError", evalue="boom <b>")

    monkeypatch.setattr(memlab.report, "report", failing)
    third = _config(tmp_path, "third.yaml", {"demo": "demo.db"}, [])
    assert main(["-q", "report", "all", "--config", str(third), "--out",
                 str(root / "2026-12-02")]) == EXIT_FAILED
    page = (root / "2026-12-02" / "demo" / "audit" / "error.html").read_text()
    assert "<h1>Failed: demo · audit report, cell 4</h1>" in page
    assert "demo/audit/01-audit.ipynb: cell 4 failed with ValueError: boom &lt;b&gt;" in page
    assert f'Last good report of this store: <a href="../../../{SECOND}/demo/audit/01-audit.html">' \
        f"{SECOND}</a>" in page
    assert '<a href="01-audit.ipynb">01-audit.ipynb</a>' in page
    assert json.loads((root / "runs.json").read_text())["latest"] == FIRST  # still


def test_report_all_still_raises_for_library_callers(tmp_path):
    from memlab.report.schedule import report_all

    (tmp_path / "broken.db").write_text("not a database")
    config = tmp_path / "c.yaml"
    config.write_text("simulation: false\nstores:\n  broken: broken.db\n")
    with pytest.raises(ReportError, match="1 of 1"):
        report_all(config, out=tmp_path / "out")
    page = (tmp_path / "out" / "broken" / "error.html").read_text()
    assert "Failed: broken · load" in page and "No earlier good report" in page


@pytest.mark.parametrize("notify, message", [
    ({"command": "notify-send memlab"}, "must be a list of words"),
    ([{"command": []}], "must be a list of words"),
    ([{"url": "ftp://127.0.0.1/x"}], "http:// or https://"),
    ([{"url": "file:///etc/passwd"}], "http:// or https://"),
    ([{"url": "http://127.0.0.1/x", "command": ["true"]}], "exactly one of"),
    ([{"url": "http://127.0.0.1/x", "on": ["success"]}], "`on:` must list"),
    ([{"url": "http://127.0.0.1/x", "timeout": 0}], "`timeout:`"),
    ([{"url": "http://127.0.0.1/x", "tiemout": 3}], "unknown key"),
    ("http://127.0.0.1/x", "must be a list"),
])
def test_bad_notify_targets_are_refused_by_name(tmp_path, notify, message):
    config = tmp_path / "stores.yaml"
    config.write_text("notify: " + json.dumps(notify) + "\nstores:\n  a: a.db\n")
    with pytest.raises(ReportError, match=message) as info:
        load_config(config)
    assert "stores.yaml" in str(info.value)


def test_a_bad_as_of_is_refused_before_any_report_runs(tmp_path):
    config = tmp_path / "stores.yaml"
    config.write_text("as_of: 08/04/2026\nstores:\n  a: a.db\n")
    with pytest.raises(ReportError, match="`as_of:` .*ambiguous"):
        load_config(config)
    config.write_text("as_of: 2026-08-04\nstores:\n  a: a.db\n")
    assert str(load_config(config)["as_of"]) == "2026-08-04"


def test_reports_key_names_known_report_kinds(tmp_path):
    config = tmp_path / "stores.yaml"
    config.write_text("reports: [audit, reveiw]\nstores:\n  a: a.db\n")
    with pytest.raises(ReportError, match="`reports:` must list"):
        load_config(config)
    config.write_text("reports: [audit]\nnotify:\n  url: http://127.0.0.1:9/x\nstores:\n  a: a.db\n")
    loaded = load_config(config)
    assert loaded["reports"] == ["audit"]
    assert loaded["notify"] == [NotifyTarget(url="http://127.0.0.1:9/x")]


def _body(text="x", alerts=True):
    return payload(run=SECOND, status="ok", index="/r/index.html", memlab_version="0",
                   failures=[], alerts=[{"store": "db", "metric": "m", "text": text}] if alerts
                   else [])


def test_hostile_alert_text_reaches_a_command_as_one_json_string(tmp_path):
    text = "ALERT db: '; rm -rf ~; echo \"$HOME\" `id`\n\x1b[31mred\u2028\u202eevil"
    out = tmp_path / "got"
    [sent] = send([NotifyTarget(command=tuple(_recorder(out)))], _body(text))
    assert sent.ok and sent.error is None
    raw = out.read_bytes().rstrip(b"\n")
    assert raw.isascii() and b"\n" not in raw and b"\x1b" not in raw
    assert json.loads(raw)["alerts"][0]["text"] == text  # exactly what was sent, as data
    assert encode(_body(text)) == raw


def test_targets_are_only_told_what_they_asked_for(tmp_path, hook):
    url, server = hook
    out = tmp_path / "got"
    targets = [NotifyTarget(command=tuple(_recorder(out)), on=("failure",)),
               NotifyTarget(url=url + "/a", on=("alert",))]
    sent = send(targets, _body())  # an alert, no failure
    assert [s.target for s in sent] == [f"url {url}"]  # port kept, path (a token) left out
    assert not out.exists() and server.paths == ["/a"]
    assert send(targets, _body(alerts=False)) == []  # nothing happened: nobody is told


def test_a_target_past_its_deadline_or_failing_is_reported_and_the_rest_go_on(tmp_path, hook):
    url, server = hook
    out = tmp_path / "got"
    started = time.monotonic()
    sent = send([NotifyTarget(command=(sys.executable, "-c", "import time; time.sleep(30)"),
                              timeout=1),
                 NotifyTarget(url=url + "/slow", timeout=1),
                 NotifyTarget(command=(sys.executable, "-c",
                                       "import sys; sys.stderr.write('quota\\n'); sys.exit(3)")),
                 NotifyTarget(url=url + "/fail"),
                 NotifyTarget(url=url + "/moved"),
                 NotifyTarget(command=("/nonexistent/notifier",)),
                 NotifyTarget(command=tuple(_recorder(out)))], _body())
    assert time.monotonic() - started < 10
    assert [s.error for s in sent] == [
        "no answer within 1 s (stopped)", "no answer within 1 s",
        "exited with status 3: quota", "HTTP 500 Internal Server Error",
        "HTTP 302 Found", sent[5].error, None]
    assert sent[5].error.startswith("cannot run '/nonexistent/notifier'")
    assert "/elsewhere" not in server.paths  # a redirect is not followed
    assert len(out.read_bytes().splitlines()) == 1  # the last target still ran


def test_keep_never_deletes_the_last_good_run(tmp_path):
    from memlab.report._runs import RUN_FORMAT, prune_runs, read_runs

    def run(date, error=None):
        folder = tmp_path / date
        (folder / "db").mkdir(parents=True)
        entry = {"store": "db", "report": "audit", **({"error": error} if error else
                                                       {"html": "db/audit/01-audit.html"})}
        (folder / "runs.json").write_text(json.dumps(
            {"format": RUN_FORMAT, "date": date, "reports": [entry], "stores": {"db": {}},
             "written": ["db", "index.html", "runs.json"]}))

    run("2026-12-01")
    run("2026-12-02")
    for day in ("03", "04", "05"):
        run(f"2026-12-{day}", error="load failed")
    pruned = prune_runs(tmp_path, 2, spare="2026-12-05")
    assert pruned.deleted == ["2026-12-01", "2026-12-03"]  # the good 12-02 stays, older goes
    assert [f.name for f, _ in read_runs(tmp_path)] == ["2026-12-02", "2026-12-04", "2026-12-05"]
