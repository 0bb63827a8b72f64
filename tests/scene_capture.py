"""The Scene behind a task's model (for the JAX oracle and the benchmark scenes).

``softcontact.tasks.push_t.make`` returns a compiled, immutable ``Model``; comparisons
with other engines need the ``Scene`` it was built from (bodies, clouds, parameters)."""

from unittest import mock

from softcontact.scene import Scene


def capture_scene(fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)`` (e.g. ``softcontact.tasks.push_t.make``) and return
    ``(its result, the last Scene it built)``: ``Scene.build`` is wrapped for the call, so
    the scene is exactly the one behind the task's model."""
    built = []
    orig = Scene.build

    def build(self, *args, **kwargs):
        built.append(self)
        return orig(self, *args, **kwargs)

    with mock.patch.object(Scene, "build", build):
        out = fn(*args, **kwargs)
    if not built:
        raise RuntimeError(f"{fn!r} built no Scene")
    return out, built[-1]
