"""A step that can take more than a couple of seconds shows progress with an ETA from its first
batch (issue 33, item 4): a cold ``memlab review`` draws its step bar and, under it, the
embedding of the texts not in the cache, texts done/total with rate and ETA after the first
model batch. Run in a real pseudo-terminal, as a person at a shell sees it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_progress import DEMO, _env, in_terminal  # noqa: E402  (the pty runner, written once)


@pytest.mark.slow
def test_a_cold_review_shows_the_embedding_batches_with_an_eta(tmp_path):
    env = _env(MEMLAB_CACHE_DIR=str(tmp_path / "cache"), MEMLAB_EMBED_PRECISION="fp32")
    screen = in_terminal(["-m", "memlab", "review", str(DEMO), "--out", str(tmp_path / "out")],
                         env=env)
    frames = [f.strip() for f in re.split(r"[\r\n]", screen)]
    steps = [f for f in frames if f.startswith("reviewing")]
    assert any("0/6" in f and "embedding" in f for f in steps), frames[-5:]
    assert any(re.search(r"\b[1-5]/6\b", f) for f in steps), steps[-3:]  # the later steps too
    # no ETA from the mean step (embedding is minutes, the rest seconds): elapsed and the step
    assert all(re.search(r"\d/6 \[\d\d:\d\d(, [a-z ]+)?\]", f) for f in steps if "/6 [" in f), steps
    embedding = [f for f in frames if f.startswith("embedding")]
    # the demo's live texts, cold, in batches of 64: the first count is one batch, with its
    # rate and ETA (before, the whole call was one update of up to 256 texts, and fewer than
    # 256 texts drew no bar at all)
    total = int(re.search(r"\b0/(\d+) \[", embedding[0]).group(1))
    assert total > 128, embedding[0]  # at least three batches
    first = next((f for f in embedding if re.search(rf"\b64/{total}\b", f)), None)
    assert first is not None, embedding[-5:]
    assert re.search(r"\[\d\d:\d\d<\d\d:\d\d, +[\d.]+ ?(text/s|s/text)", first), first
    assert "choice(s), the top" in screen  # the command's own line, on stdout
    # warm: every text from the cache, no embedding bar
    again = in_terminal(["-m", "memlab", "review", str(DEMO), "--out", str(tmp_path / "out2")],
                        env=env)
    assert not [f for f in re.split(r"[\r\n]", again) if f.strip().startswith("embedding")]
