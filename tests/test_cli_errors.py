"""Every command, given a representative bad argument, says so on one stderr line and exits 2:
no traceback, no usage block. A new command must add its case here (the first test checks)."""

from __future__ import annotations

import pytest

from memlab.cli import COMMANDS, main

# command -> argument lists that a user could plausibly get wrong
BAD = {
    "inspect": [["{tmp}/absent.db"], ["/dev/null"]],
    "audit": [["{data}/demo/elfmem-demo.db", "--as-of", "not-a-date"],
              ["{data}/samples/letta-server/letta-0.11.7.db", "--as-of", "junk"],
              ["{data}/demo/elfmem-demo.db", "{tmp}/absent.db"]],
    "discover": [["{tmp}/no-such-home"]],
    "simulate": [["--iterations", "9"], ["--scenarios", "S99", "--no-real"]],
    "review": [["{data}/samples/letta-server/letta-0.11.7.db", "--out", "{tmp}"],
               ["{data}/demo/elfmem-demo.db", "--near-duplicate", "2", "--out", "{tmp}"],
               ["{data}/samples/elfmem/elfmem-0.20.0-schema9.db", "--as-of", "junk", "--out",
                "{tmp}"]],
    "apply": [["{tmp}/review-2026-08-04.md"]],
    "migrate": [["{data}/demo/elfmem-demo.db", "{tmp}/out", "--to", "nowhere"],
                ["{data}/samples/elfmem-substrate", "{tmp}/out"]],
    "report": [["audit", "{data}/demo/elfmem-demo.db", "-p", "no-equals-sign", "--out", "{tmp}"],
               ["audit", "{data}/demo/elfmem-demo.db", "-p", "x=[1", "--out", "{tmp}"],
               ["audit", "{data}/demo/elfmem-demo.db", "-p", "as_of=2026-13-45", "--out", "{tmp}"],
               ["nonsense"]],
    "fleet": [["{tmp}/no-such-folder", "--out", "{tmp}/lake"],
              ["--manifest", "{tmp}/review-2026-08-04.md", "--out", "{tmp}/lake"]],
    "schedule": [["--at", "25:00"], ["--config", "{tmp}/absent.yaml"]],
    "export": [["parquet", "{tmp}/absent.db", "--out", "{tmp}/lake"],
               ["csv", "{data}/demo/elfmem-demo.db", "--out", "{tmp}/lake"]],
    "browse": [["{tmp}/absent.db", "--build-only", "{tmp}/browse"],
               ["{data}/demo/elfmem-demo.db", "--port", "70000"],
               ["{data}/demo/elfmem-demo.db", "--build-only", "{data}/demo/elfmem-demo.db"]],
}


def test_every_command_has_a_bad_argument_case():
    assert sorted(BAD) == sorted(COMMANDS)


CASES = [(name, args) for name, lists in BAD.items() for args in lists]


@pytest.mark.parametrize("name,args", CASES, ids=[f"{n}:{' '.join(a)[:40]}" for n, a in CASES])
def test_bad_argument_is_one_line_and_exit_2(name, args, tmp_path, data_dir, capsys):
    (tmp_path / "review-2026-08-04.md").write_text("- [x] `abc` not a real proposal\n")
    argv = [name, *(a.format(tmp=tmp_path, data=data_dir) for a in args)]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's refusals
        code = exc.code
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(("memlab: error:", f"memlab {name}: error:")), err


def test_a_usage_error_is_one_line_too(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "invalid choice: 'frobnicate'" in err and "--help" in err


def test_a_bad_environment_setting_is_one_line_too(monkeypatch, tmp_path, data_dir, capsys):
    monkeypatch.setenv("MEMLAB_EMBED_PRECISION", "fp8")
    code = main(["review", str(data_dir / "samples/elfmem/elfmem-0.20.0-schema9.db"),
                 "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "'fp8'" in err and "MEMLAB_EMBED_PRECISION" in err
