"""`memlab schedule`: a crontab line or a systemd user timer that runs `memlab report all`.

Printed by default. ``install`` writes it: into the user's crontab (through the ``crontab``
program, replacing memlab's own earlier entry and keeping every other line), or as
``memlab-report.service`` / ``.timer`` in the systemd user unit folder
(``$XDG_CONFIG_HOME/systemd/user``, default ``~/.config/systemd/user``). Every path is checked
to be one printable line, then quoted for the shell (cron) or for systemd's own rules
(``%`` doubled, ``$`` doubled only where systemd expands it), so a folder name cannot add a
command or a line.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from memlab.errors import InvalidArgument, MemlabError, OutputExists
from memlab.report._paths import REPORTS_ENV

__all__ = [
    "Schedule",
    "make_schedule",
    "merge_crontab",
    "install_crontab",
    "install_systemd",
    "unit_folder",
    "UNIT",
    "CRON_MARK",
]

#: The systemd unit name (``memlab-report.service`` and ``memlab-report.timer``).
UNIT = "memlab-report"
#: The comment line above memlab's crontab entry; ``--install`` replaces the line after it.
CRON_MARK = "# memlab schedule: report all (memlab schedule --install replaces the next line)"
_AT = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


@dataclass(frozen=True)
class Schedule:
    """The command a scheduled run executes, where, and when (daily at ``hour:minute``)."""

    argv: tuple[str, ...]
    workdir: Path
    hour: int
    minute: int

    def crontab_line(self) -> str:
        # cron reads an unescaped '%' as a line break: none may reach the line.
        # sh reads the rest: an assignment is NAME=value with only the value quoted (a quoted
        # 'NAME=value' is a command name, and sh exits 127 every night).
        command = " ".join(shlex.quote(a) for a in self.argv).replace("%", "\\%")
        workdir = shlex.quote(str(self.workdir)).replace("%", "\\%")
        env = f"{REPORTS_ENV}={shlex.quote(str(self.reports))}".replace("%", "\\%")
        return f"{self.minute} {self.hour} * * * cd {workdir} && {env} {command}"

    @property
    def reports(self) -> Path:
        """The runs folder: ``reports/`` in the working folder, named to the run through
        ``$MEMLAB_REPORTS_DIR`` (the one default-output rule, ``memlab.report.reports_root``)."""
        return self.workdir / "reports"

    def service(self) -> str:
        return (
            "[Unit]\nDescription=memlab report all (every report, the run index, alerts)\n\n"
            "[Service]\nType=oneshot\n"
            f"WorkingDirectory={_systemd_path(self.workdir)}\n"
            f"Environment={_systemd_word(f'{REPORTS_ENV}={self.reports}', expands=False)}\n"
            f"ExecStart={_systemd_word(self.argv[0], expands=False)} "
            f"{' '.join(_systemd_word(a) for a in self.argv[1:])}\n"
        )

    def timer(self) -> str:
        return (
            "[Unit]\nDescription=Run memlab report all daily\n\n"
            f"[Timer]\nOnCalendar=*-*-* {self.hour:02d}:{self.minute:02d}:00\n"
            "Persistent=true\n\n[Install]\nWantedBy=timers.target\n"
        )


def _one_line(value: str, what: str) -> str:
    if not value.isprintable():
        raise InvalidArgument(
            f"{what} holds a line break or control character: "
            f"{value.encode('unicode_escape').decode()}",
            hint="a scheduled command must be one line",
        )
    return value


def _systemd_word(arg: str, *, expands: bool = True) -> str:
    """``arg`` as one double-quoted systemd word: ``\\`` and ``"`` escaped, ``%`` (a specifier
    everywhere) doubled, and ``$`` doubled only where systemd expands variables (``expands``:
    ExecStart='s arguments; not its program path, not an ``Environment=`` assignment, where
    ``$$`` would stay two dollars)."""
    inner = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    if expands:
        inner = inner.replace("$", "$$")
    return f'"{inner}"'


def _systemd_path(path: Path) -> str:
    # WorkingDirectory= takes the rest of the line as the path (no unquoting; the ends are
    # trimmed): spaces and any letter are kept, quotes, backslashes and end spaces are not sure.
    text = str(path)
    if any(c in text for c in "\"'\\") or text != text.strip():
        raise InvalidArgument(
            f"systemd's WorkingDirectory= cannot hold quotes, backslashes or end spaces: {text}",
            hint="pick a folder with a plainer name",
        )
    return text.replace("%", "%%")


def make_schedule(
    config: str | Path,
    *,
    workdir: str | Path | None = None,
    at: str = "06:00",
    fail_on_alert: bool = False,
    python: str | None = None,
) -> Schedule:
    """The daily `report all` for ``config``: run in ``workdir`` (default: here), so each run
    writes ``reports/<date>/`` and ``reports/index.html`` there, at ``at`` (HH:MM, local time
    of the cron daemon or systemd)."""
    match = _AT.match(at)
    if not match:
        raise InvalidArgument(f"--at {at!r} is not HH:MM (24-hour)", hint="e.g. --at 06:30")
    config_path = Path(config).expanduser().resolve()
    if not config_path.is_file():
        raise InvalidArgument(
            "no such reports config",
            path=config_path,
            hint="the config `report all` reads (default data/reports.yaml)",
        )
    work = Path(workdir).expanduser().resolve() if workdir else Path.cwd().resolve()
    if not work.is_dir():
        raise InvalidArgument(
            "no such folder for the scheduled runs",
            path=work,
            hint="--dir names the folder reports/ is written into",
        )
    exe = python or sys.executable
    argv: tuple[str, ...] = (
        exe,
        "-m",
        "memlab",
        "-q",
        "report",
        "all",
        "--config",
        str(config_path),
    )
    if fail_on_alert:
        argv += ("--fail-on-alert",)
    for a in (*argv, str(work)):
        _one_line(a, "a path in the command")
    return Schedule(argv, work, int(match.group(1)), int(match.group(2)))


def merge_crontab(current: str, line: str) -> str:
    """``current`` crontab text with memlab's entry (:data:`CRON_MARK` and the line after it)
    replaced by ``line``, or appended; every other line is kept as it was."""
    lines = current.splitlines()
    out: list[str] = []
    skip = False
    for text in lines:
        if skip:
            skip = False
            continue
        if text == CRON_MARK:
            skip = True
            continue
        out.append(text)
    while out and not out[-1].strip():
        out.pop()
    out += [CRON_MARK, line]
    return "\n".join(out) + "\n"


def install_crontab(schedule: Schedule, *, program: str = "crontab") -> str:
    """Put the entry into the user's crontab (``crontab -l``, merged, ``crontab -``); returns
    the installed text."""
    try:
        listed = subprocess.run([program, "-l"], capture_output=True, text=True, timeout=30)
    except FileNotFoundError as exc:
        raise MemlabError(
            f"no {program!r} program: cron is not installed",
            hint="apt-get install cron, or use --systemd",
        ) from exc
    # `crontab -l` exits 1 with "no crontab for USER" when there is none yet.
    current = listed.stdout if listed.returncode == 0 else ""
    if listed.returncode != 0 and "no crontab" not in listed.stderr:
        raise MemlabError(f"`{program} -l` failed: {listed.stderr.strip()}")
    text = merge_crontab(current, schedule.crontab_line())
    done = subprocess.run([program, "-"], input=text, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise MemlabError(f"`{program} -` refused the crontab: {done.stderr.strip()}")
    return text


def unit_folder() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def install_systemd(
    schedule: Schedule, *, folder: Path | None = None, force: bool = False
) -> list[Path]:
    """Write ``memlab-report.service`` and ``.timer`` into the user unit folder; a different
    unit already there is refused unless ``force``. Returns the two files (enable them with
    ``systemctl --user enable --now memlab-report.timer``)."""
    folder = folder or unit_folder()
    files = {
        folder / f"{UNIT}.service": schedule.service(),
        folder / f"{UNIT}.timer": schedule.timer(),
    }
    for path, text in files.items():
        if path.exists() and not force and path.read_text(encoding="utf-8") != text:
            raise OutputExists(
                "a different unit of this name is already installed",
                path=path,
                hint="pass --force to replace it",
            )
    folder.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return list(files)
