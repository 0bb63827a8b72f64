"""Draw the README's picture: its 3D quickstart at t = 0 and t = 2 s.

    python docs/make_figures.py          # writes docs/quickstart_3d.png

The scene is the README's own code block (run here as written), so the picture shows
exactly what the quickstart computes.
"""

import contextlib
import io
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def quickstart_3d():
    """The namespace of the README's 3D quickstart after it ran (its own figure closed)."""
    text = (ROOT / "README.md").read_text()
    code = re.search(r"## Quickstart in 3D.*?```python\n(.*?)```", text, re.S).group(1)
    ns: dict = {"__name__": "readme"}
    with contextlib.redirect_stdout(io.StringIO()):  # its prints are test_readme.py's
        exec(compile(code, "README.md", "exec"), ns)
    plt.close("all")
    return ns


def main(out=ROOT / "docs" / "quickstart_3d.png"):
    ns = quickstart_3d()
    model, states = ns["model"], ns["ro"].states
    fig = plt.figure(figsize=(9, 4.2))
    for k, (t, title) in enumerate(
        ((0, "t = 0 s"), (-1, f"t = {model.dt * (len(states) - 1):g} s"))
    ):
        ax = fig.add_subplot(1, 2, k + 1, projection="3d")
        model.plot(states[t], ax, title=title)
    fig.suptitle("A 10 cm box and an octahedral mesh dropped on a floor (implicit step, dt = 5 ms)")
    fig.tight_layout()
    fig.savefig(out, dpi=80)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
