"""Progress lines of long commands (softcontact._progress), with and without tqdm."""

import io

import pytest

from softcontact import _progress
from softcontact._progress import Progress, format_seconds


def test_format_seconds():
    assert format_seconds(0.4) == "0 s"
    assert format_seconds(42.2) == "42 s"
    assert format_seconds(185) == "3 min 05 s"
    assert format_seconds(7620) == "2 h 07 min"
    assert format_seconds(-3) == "0 s"
    assert format_seconds(59.6) == "1 min 00 s"  # rounded before the unit is chosen
    assert format_seconds(3599.6) == "1 h 00 min"
    assert format_seconds(float("inf")) == "?" and format_seconds(float("nan")) == "?"


def test_plain_lines_with_eta(monkeypatch):
    clock = iter([100.0, 110.0, 110.0, 130.0, 130.0, 160.0, 160.0])
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: next(clock))
    out = io.StringIO()
    with Progress(3, "episodes", out, bar=False) as p:
        assert p.eta() == float("inf")
        p.update("seed 0: success")  # 10 s for 1 item: 2 left, 20 s
        p.update("seed 1: success")  # 30 s for 2: 1 left, 15 s
        p.update("seed 2: FAIL")
    assert out.getvalue().splitlines() == [
        "seed 0: success  [1/3 episodes, 10 s, ETA 20 s]",
        "seed 1: success  [2/3 episodes, 30 s, ETA 15 s]",
        "seed 2: FAIL  [3/3 episodes, 1 min 00 s, done]",
    ]


def test_tqdm_bar_when_installed(monkeypatch, capsys):
    pytest.importorskip("tqdm")
    out = io.StringIO()
    with Progress(2, "runs", out, bar=True) as p:
        p.update("first")
        p.update("second")
    # the item lines go to the stream as they are; the bar (with its rate) to stderr
    assert out.getvalue().splitlines() == ["first", "second"]
    err = capsys.readouterr().err
    assert "runs" in err and "2/2" in err


def test_bar_falls_back_to_lines_without_tqdm(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tqdm", None)
    out = io.StringIO()
    with Progress(1, "runs", out, bar=True) as p:
        p.update("only")
    assert out.getvalue().startswith("only  [1/1 runs, ")


def test_default_is_plain_when_a_stream_is_given():
    out = io.StringIO()
    p = Progress(1, "x", out)
    assert p._bar is None
    p.close()
