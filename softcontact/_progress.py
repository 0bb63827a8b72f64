"""Progress of long commands: a tqdm bar, or one plain line per finished item with an ETA.

:class:`Progress` reports each finished item (an episode, an optimizer run) with a line of
its own and how far the whole command has come.  With ``bar=True`` and tqdm installed
(optional: ``pip install tqdm``) a tqdm bar with rate and ETA is drawn on stderr and the
lines are written above it; otherwise every line ends with ``[k/N, elapsed, ETA]``, the ETA
being the mean time per finished item times the items left.
"""

from __future__ import annotations

import logging
import math
import sys
import time

__all__ = ["Progress", "format_seconds"]


def format_seconds(s: float) -> str:
    """``42 s``, ``3 min 05 s`` or ``2 h 07 min`` (``?`` when not finite)."""
    if not math.isfinite(s):
        return "?"
    whole = int(round(max(0.0, float(s))))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        m, r = divmod(whole, 60)
        return f"{m} min {r:02d} s"
    h, r = divmod(int(round(whole / 60)), 60)
    return f"{h} h {r:02d} min"


def log_to_stderr(level) -> None:
    """Show the softcontact loggers' messages from ``level`` up on stderr (the root logger
    and other libraries' loggers are left alone)."""
    logger = logging.getLogger("softcontact")
    if not any(getattr(h, "_softcontact_stderr", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
        )
        handler._softcontact_stderr = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False


class Progress:
    """Progress over ``total`` items of a command called ``desc``.

    The ETA is the mean time per finished item times the items left: with items run
    ``k`` at a time (worker processes) it is about ``k`` times too long until the first
    ``k`` have finished.

    Parameters
    ----------
    total : int
        Items the command will finish (>= 0).
    desc : str
        What is counted, e.g. ``"episodes"``.
    stream : file, optional
        Where the item lines go (default: ``sys.stdout`` at the time of each line).
    bar : bool or None
        Draw a tqdm bar on stderr: True (if tqdm is installed), False, or None (default):
        when tqdm is installed, ``stream`` is not given and stderr is a terminal.
    """

    def __init__(self, total, desc, stream=None, bar=None) -> None:
        self.total = int(total)
        self.desc = str(desc)
        self.stream = stream
        self.done = 0
        self.t0 = time.perf_counter()
        self._bar = None
        if bar is None:
            bar = stream is None and sys.stderr.isatty()
        if bar:
            try:
                from tqdm import tqdm  # type: ignore[import-untyped]
            except ImportError:
                tqdm = None
            if tqdm is not None:
                from tqdm.contrib.logging import (  # type: ignore[import-untyped]
                    logging_redirect_tqdm,
                )

                self._bar = tqdm(total=self.total, desc=self.desc, unit="", file=sys.stderr)
                # log records go through the bar (tqdm.write), not across it
                self._redirect = logging_redirect_tqdm(loggers=[logging.getLogger("softcontact")])
                self._redirect.__enter__()

    def eta(self) -> float:
        """Seconds left, from the mean time per finished item (inf before the first)."""
        if self.done == 0:
            return float("inf")
        elapsed = time.perf_counter() - self.t0
        return elapsed / self.done * max(0, self.total - self.done)

    def update(self, line: str) -> None:
        """One item finished: write ``line`` and the progress."""
        self.done += 1
        out = sys.stdout if self.stream is None else self.stream
        if self._bar is not None:
            self._bar.write(line, file=out)
            self._bar.update(1)
            return
        elapsed = time.perf_counter() - self.t0
        left = "done" if self.done >= self.total else f"ETA {format_seconds(self.eta())}"
        print(
            f"{line}  [{self.done}/{self.total} {self.desc}, {format_seconds(elapsed)}, {left}]",
            file=out,
            flush=True,
        )

    def close(self) -> None:
        if self._bar is not None:
            self._redirect.__exit__(None, None, None)
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
