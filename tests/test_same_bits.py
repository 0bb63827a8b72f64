"""The compiled core's outputs are bitwise those recorded in tests/data/same_bits.json
(tests/same_bits.py: the SSDF, separation field, contact model, steps, rollouts, inverse
dynamics and energies on fixed cases, every supported instruction set, dense and pruned),
for the platform the tests run on (same_bits.platform_tag).

A deliberate change of results re-records the fixture (``python tests/same_bits.py
--write``, on each platform it holds) in the same commit, which says why."""

import pytest
import same_bits

PLATFORMS = same_bits.fixture()
TAG = same_bits.platform_tag()
CASES = PLATFORMS.get(TAG, {})
KINDS = ("ssdf", "separation", "contact", "step", "rollout", "model")

pytestmark = [
    pytest.mark.skipif(
        not CASES, reason=f"no digests recorded for {TAG} (recorded: {', '.join(PLATFORMS)})"
    ),
    # the fixture's scenes step past the explicit integrator's limits on purpose
    pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning"),
]


def test_fixture_covers_every_kind_and_isa():
    supported = {isa for isa, _ in same_bits._variants()}
    for kind in KINDS:
        for isa in supported:
            for tag in (isa, f"{isa}-dense"):
                assert any(n.startswith(kind + "/") and n.endswith("/" + tag) for n in CASES), (
                    kind,
                    tag,
                )


@pytest.mark.parametrize("kind", KINDS)
def test_same_bits(kind):
    got = same_bits.digests(same_bits.compute(kind + "/"))
    assert got, kind
    # every case of this kind recorded for an instruction set this CPU runs is computed
    expected = {
        n
        for n in CASES
        if n.startswith(kind + "/")
        and n.rsplit("/", 1)[1].split("-")[0] in {v[0] for v in same_bits._variants()}
    }
    assert set(got) == expected
    differ = sorted(n for n in got if got[n] != CASES[n])
    assert not differ, f"{len(differ)} of {len(got)} cases differ, e.g. {differ[:10]}"
