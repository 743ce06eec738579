"""Telling someone that a scheduled run failed or raised an alert: the ``notify:`` targets of a
`memlab report all` config.

A target is a program or a URL::

    notify:
      - command: [notify-send, memlab]   # argv, run without a shell; the payload on stdin
      - url: https://hooks.example.com/memlab   # the payload POSTed as application/json
        on: [failure]                    # default: [failure, alert]
        timeout: 10                      # seconds for the whole call (default 30)

The payload is one JSON object (:func:`payload`), encoded once with every non-ASCII and control
character escaped (``ensure_ascii``): store names, file names and error texts reach a target as
JSON string values, never as part of a command line, a shell word or a header. A target that
fails, or does not finish within its deadline, is reported (:class:`Sent`) and the run goes on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from dataclasses import dataclass
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit

__all__ = [
    "NOTIFY_FORMAT",
    "EVENTS",
    "NotifyTarget",
    "Sent",
    "parse_notify",
    "payload",
    "encode",
    "send",
]

#: The ``format`` of the JSON a target receives.
NOTIFY_FORMAT = "memlab-notify/1"
#: What a target can be told about: a report or store that failed, an alert that fired.
EVENTS = ("failure", "alert")
#: Seconds a target may take, start to finish, unless its ``timeout:`` says otherwise.
DEFAULT_TIMEOUT = 30.0
_KEYS = {"command", "url", "on", "timeout"}
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


@dataclass(frozen=True)
class NotifyTarget:
    command: tuple[str, ...] | None = None
    url: str | None = None
    on: tuple[str, ...] = EVENTS
    timeout: float = DEFAULT_TIMEOUT

    def describe(self) -> str:
        """The target without secrets: a program's name, or a URL's scheme, host and port
        (a webhook's path often is its token)."""
        if self.command:
            return f"command {os.path.basename(self.command[0])}"
        parts = urlsplit(self.url or "")
        host = parts.hostname or "?"
        return f"url {parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")


@dataclass(frozen=True)
class Sent:
    target: str
    ok: bool
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "ok": self.ok, "error": self.error}


def parse_notify(items: Any) -> list[NotifyTarget] | str:
    """The config's ``notify:`` as targets, or the one-line reason it is refused."""
    if items is None:
        return []
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list):
        return "`notify:` must be a list of targets (`- command: [...]` or `- url: ...`)"
    out = []
    for n, item in enumerate(items, 1):
        where = f"`notify:` target {n}"
        if not isinstance(item, dict):
            return f"{where} must be a mapping with `command:` or `url:`"
        unknown = sorted(map(str, set(item) - _KEYS))
        if unknown:
            return (
                f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; known: "
                f"{', '.join(sorted(_KEYS))}"
            )
        if ("command" in item) == ("url" in item):
            return f"{where} needs exactly one of `command:` or `url:`"
        command = url = None
        if "command" in item:
            argv = item["command"]
            if (
                not isinstance(argv, list)
                or not argv
                or not all(isinstance(a, str) and a and "\0" not in a for a in argv)
            ):
                return (
                    f"{where}: `command:` must be a list of words, e.g. [notify-send, "
                    "memlab] (it runs without a shell; the payload is on its stdin)"
                )
            command = tuple(argv)
        else:
            url = item["url"]
            parts = urlsplit(url) if isinstance(url, str) else None
            if (
                parts is None
                or parts.scheme not in ("http", "https")
                or not parts.hostname
                or any(c.isspace() or ord(c) < 32 for c in url)
            ):
                return f"{where}: `url:` must be an http:// or https:// URL (got {url!r})"
        on = item.get("on", list(EVENTS))
        if isinstance(on, str):
            on = [on]
        if not isinstance(on, list) or not on or not set(on) <= set(EVENTS):
            return f"{where}: `on:` must list {' and/or '.join(EVENTS)} (got {on!r})"
        timeout = item.get("timeout", DEFAULT_TIMEOUT)
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not 0 < timeout <= 600
        ):
            return (
                f"{where}: `timeout:` must be seconds, more than 0 and at most 600 "
                f"(got {timeout!r})"
            )
        out.append(NotifyTarget(command, url, tuple(e for e in EVENTS if e in on), float(timeout)))
    return out


def payload(
    *,
    run: str,
    status: str,
    index: str,
    memlab_version: str,
    failures: Sequence[Mapping[str, Any]],
    alerts: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """What every target receives: why it is told (``events``), one summary line (``text``,
    the key chat webhooks show), the run, its page, and each failure and fired alert."""
    events = [e for e, what in (("failure", failures), ("alert", alerts)) if what]
    parts = []
    if failures:
        parts.append(
            f"{len(failures)} failed ("
            + "; ".join(f"{f.get('store')} {f.get('step')}" for f in failures)
            + ")"
        )
    if alerts:
        parts.append(f"{len(alerts)} alert(s): " + "; ".join(str(a.get("text")) for a in alerts))
    text = f"memlab report all {run}: " + (", ".join(parts) or status)
    return {
        "format": NOTIFY_FORMAT,
        "events": events,
        "text": text,
        "run": run,
        "status": status,
        "index": index,
        "memlab_version": memlab_version,
        "failures": [dict(f) for f in failures],
        "alerts": [dict(a) for a in alerts],
    }


def encode(body: Mapping[str, Any]) -> bytes:
    """The payload as bytes: JSON, ASCII only (every other character and every control
    character escaped), so no target reads a store's text as anything but a string value."""
    return json.dumps(body, ensure_ascii=True, sort_keys=True, default=str).encode("ascii")


def send(targets: Sequence[NotifyTarget], body: Mapping[str, Any]) -> list[Sent]:
    """Send ``body`` to each target whose ``on:`` names one of its ``events``, one after the
    other, each within its deadline. Never raises for a target: its failure is a :class:`Sent`."""
    events = set(body.get("events") or ())
    data = encode(body)
    out = []
    for target in targets:
        if not events & set(target.on):
            continue
        try:
            error = (
                _run(target.command, data, target.timeout)
                if target.command
                else _post(target.url or "", data, target.timeout)
            )
        except Exception as exc:  # a notification must never end the run that reports
            error = f"{type(exc).__name__}: {exc}"
        out.append(Sent(target.describe(), error is None, error))
    return out


def _last_line(raw: bytes) -> str:
    lines = [ln for ln in raw.decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1].strip()[:200] if lines else ""


def _run(argv: tuple[str, ...], data: bytes, timeout: float) -> str | None:
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        return f"cannot run {argv[0]!r}: {exc.strerror or exc}"
    try:
        _, err = proc.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: the program and its children
        except OSError:
            proc.kill()
        proc.communicate()
        return f"no answer within {timeout:g} s (stopped)"
    if proc.returncode != 0:
        last = _last_line(err)
        return f"exited with status {proc.returncode}" + (f": {last}" if last else "")
    return None


def _no_redirects() -> Any:
    """A redirect is not followed: the payload goes to the configured URL or nowhere."""
    import urllib.request

    class Refuse(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kw: Any) -> None:
            return None

    return Refuse()


def _post(url: str, data: bytes, timeout: float) -> str | None:
    import urllib.error
    import urllib.request

    import memlab

    handlers: list[Any] = [_no_redirects()]
    if (urlsplit(url).hostname or "") in _LOOPBACK:
        handlers.append(urllib.request.ProxyHandler({}))  # this machine: never via a proxy
    opener = urllib.request.build_opener(*handlers)
    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": f"memlab/{memlab.__version__}"},
    )
    result: dict[str, str | None] = {}

    def call() -> None:
        try:
            with opener.open(request, timeout=timeout) as answer:
                answer.read(1 << 16)
                result["error"] = None
        except urllib.error.HTTPError as exc:
            result["error"] = f"HTTP {exc.code} {exc.reason}"
        except urllib.error.URLError as exc:
            result["error"] = f"cannot reach it: {exc.reason}"
        except Exception as exc:
            result["error"] = f"{type(exc).__name__}: {exc}"

    # The socket timeout bounds each read; the thread bounds the whole call (a server that
    # answers one byte at a time cannot hold the run).
    thread = threading.Thread(target=call, name="memlab-notify", daemon=True)
    thread.start()
    thread.join(timeout)
    if "error" not in result:
        return f"no answer within {timeout:g} s"
    return result["error"]
