"""The compiled core's outputs are bitwise those recorded in tests/data/same_bits.json
(tests/same_bits.py: the SSDF, separation field, contact model, steps, rollouts, inverse
dynamics and energies on fixed cases, every supported instruction set, dense and pruned).

A deliberate change of results re-records the fixture (``python tests/same_bits.py
--write``) in the same commit, which says why."""

import json

import pytest
import same_bits

FIXTURE = json.loads(same_bits.FIXTURE.read_text())
KINDS = ("ssdf", "separation", "contact", "step", "rollout", "model")

pytestmark = [
    pytest.mark.skipif(
        FIXTURE["platform"] != same_bits.platform_tag(),
        reason=f"digests recorded on {FIXTURE['platform']}, this is {same_bits.platform_tag()}",
    ),
    # the fixture's scenes step past the explicit integrator's limits on purpose
    pytest.mark.filterwarnings("ignore::softcontact.SoftContactWarning"),
]


def test_fixture_covers_every_kind_and_isa():
    names = FIXTURE["cases"]
    assert len(names) >= 200
    for kind in KINDS:
        for isa in same_bits.ISAS:
            assert any(n.startswith(kind + "/") and n.endswith("/" + isa) for n in names), (
                kind,
                isa,
            )
            assert any(n.startswith(kind + "/") and n.endswith(f"/{isa}-dense") for n in names)


@pytest.mark.parametrize("kind", KINDS)
def test_same_bits(kind):
    got = same_bits.digests(same_bits.compute(kind + "/"))
    assert got, kind
    # every case of this kind recorded for an instruction set this CPU runs is computed
    expected = {
        n
        for n in FIXTURE["cases"]
        if n.startswith(kind + "/")
        and n.rsplit("/", 1)[1].split("-")[0] in {v[0] for v in same_bits._variants()}
    }
    assert set(got) == expected
    differ = sorted(n for n in got if got[n] != FIXTURE["cases"][n])
    assert not differ, f"{len(differ)} of {len(got)} cases differ, e.g. {differ[:10]}"
