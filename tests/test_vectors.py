"""The language-neutral test vectors (vectors/<plan format>/*.json, issue 32).

Each vector pins a plan, its inputs and the exact bytes of randomness every ``perturb`` call
consumed; the Python runtime must reproduce the reports bit for bit, consume exactly those
bytes (no more, no fewer), and give the recorded aggregate (exact integers) and estimate.
Every plan mechanism of ``ldpplan.mechanisms.RUNTIMES`` must have a vector.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "vectors"))
import reference  # noqa: E402
import vectorlib  # noqa: E402

from ldpplan.mechanisms import RUNTIMES, load  # noqa: E402
from ldpplan.mechanisms._sampling import bernoulli_iid, refine40, uniform_below, uniform_bytes, uniform_unit  # noqa: E402

FOLDER = ROOT / "vectors" / "2.0"
FILES = sorted(FOLDER.glob("*.json"))
# the slowest vectors (huge domains: a 10^7-entry aggregate and estimate) run in the slow tier
SLOW = {"rr-large", "glh-large"}


def _param(path: Path):
    marks = [pytest.mark.slow] if path.stem in SLOW else []
    return pytest.param(path, id=path.stem, marks=marks)


def _without_vectors() -> set[str]:
    """Plan mechanisms whose family's conformance module declares ``VECTORS = False`` (with ``NO_VECTORS_REASON``):
    not in the TypeScript client yet, so no vector is pinned for them (their runtime is tested in Python)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from _family_helpers import conformance_of

    return {m for m in RUNTIMES if getattr(conformance_of(m), "VECTORS", True) is False}


def test_every_runtime_mechanism_has_a_vector():
    covered = {json.loads(p.read_text())["mechanism"] for p in FILES}
    assert sorted(set(RUNTIMES) - covered - _without_vectors()) == []
    assert covered <= set(RUNTIMES)


def test_vectors_are_small():
    sizes = {p.name: p.stat().st_size for p in FILES}
    assert max(sizes.values()) < 64_000, sizes
    assert sum(sizes.values()) < 2_000_000


@pytest.mark.parametrize("path", [_param(p) for p in FILES])
def test_runtime_reproduces_vector(path):
    vector = json.loads(path.read_text())
    assert vector["format"] == vectorlib.FORMAT and vector["plan_format"] == vector["plan"]["format_version"]
    assert vector["name"] == path.stem and vector["mechanism"] == vector["plan"]["mechanism"]
    produced = vectorlib.replay(vector)  # raises unless every call consumes exactly its bytes
    for i, (want, got) in enumerate(zip(vector["calls"], produced["calls"], strict=True)):
        assert got["reports"] == want["reports"], f"call {i}: reports differ"
        assert got.get("memo_after") == want.get("memo_after"), f"call {i}: memo differs"
    assert produced["aggregate"] == vector["aggregate"]
    want, got = vector["estimate"], produced["estimate"]
    assert {k: got[k] for k in ("method", "n", "size", "index")} == {k: want[k] for k in ("method", "n", "size", "index")}
    for key in ("frequency", "std_error", "mean"):
        assert (got[key] is None) == (want[key] is None)
        if want[key] is not None:
            np.testing.assert_allclose(got[key], want[key], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_reference_client_from_the_specification_reproduces_vector(path):
    """vectors/reference.py, written from docs/REPORTS.md in plain Python integers (no numpy, nothing of
    ldpplan), gives every vector's reports from its plan, inputs and bytes, using up every byte."""
    vector = json.loads(path.read_text())
    got = reference.Client(vector["plan"]).run(vector["calls"])
    for i, (want, out) in enumerate(zip(vector["calls"], got, strict=True)):
        assert out["reports"] == want["reports"], f"call {i}"


@pytest.mark.parametrize("path", [_param(p) for p in FILES if p.stem not in SLOW])
def test_a_changed_byte_is_noticed(path):
    """Tampering: flip one recorded random byte of the first call; the reports or the byte count change."""
    vector = json.loads(path.read_text())
    vector["calls"] = vector["calls"][:1]
    call = vector["calls"][0]
    stream = sorted(call["random"])[-1]
    raw = bytearray(bytes.fromhex(call["random"][stream]))
    if not raw:
        pytest.skip("no randomness consumed")
    changed = False
    for pos in range(len(raw)):  # some bytes are discarded by the procedure (the tail of a word)
        raw[pos] ^= 0xFF
        call["random"][stream] = raw.hex()
        try:
            got = vectorlib.replay(vector)["calls"][0]["reports"]
            changed = got != call["reports"]
        except ValueError:  # a different number of words consumed (e.g. a tie refined)
            changed = True
        raw[pos] ^= 0xFF
        if changed:
            break
    assert changed


def test_replay_refuses_short_and_long_streams():
    vector = json.loads((FOLDER / "rr-small.json").read_text())
    coins = vector["calls"][0]["random"]["coins"]
    vector["calls"][0]["random"]["coins"] = coins[:-16]
    with pytest.raises(ValueError, match="overrun 1"):
        vectorlib.replay(vector)
    vector["calls"][0]["random"]["coins"] = coins + "00" * 8
    with pytest.raises(ValueError, match="consumed"):
        vectorlib.replay(vector)


# ------------------------------------------------------------ the byte procedure itself
def _stream(*words: int):
    return vectorlib.WordStream(data=np.asarray(words, dtype="<u8").tobytes())


def test_uniform_bytes_take_whole_little_endian_words():
    s = _stream(0x0807060504030201, 0x1817161514131211)
    assert uniform_bytes(s.generator, 3).tolist() == [1, 2, 3]
    assert uniform_bytes(s.generator, 8).tolist() == [0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18]
    assert s.exhausted()


def test_uniform_below_modulo_rejection():
    """m = 3: 2^64 mod 3 = 1, so the word 2^64 - 1 is rejected and the next one used."""
    s = _stream(2**64 - 1, 2**64 - 2, 10)
    assert uniform_below(s.generator, 3, 2).tolist() == [10 % 3, (2**64 - 2) % 3]
    assert s.exhausted()
    s = _stream(2**64 - 1, 5)  # a power of two never rejects: 2^64 mod 4 = 0
    assert uniform_below(s.generator, 4, 2).tolist() == [3, 1]
    s = _stream(7, 2**64 - 1, 9)  # per-entry bounds, rejection of entry 1 only (bound 3)
    assert uniform_below(s.generator, np.array([5, 3])).tolist() == [2, 0]
    assert s.exhausted()


def test_uniform_below_is_exactly_uniform_on_residues():
    """Every residue of m is hit by exactly floor(2^64 / m) accepted words: checked on the top words."""
    m = 6
    r = 2**64 % m
    top = [2**64 - r - 1 - i for i in range(2 * m)]  # the last accepted words: every residue twice
    s = _stream(*top)
    assert sorted(uniform_below(s.generator, m, len(top)).tolist()) == sorted(list(range(m)) * 2)


def test_refine_and_unit_use_the_top_bits():
    s = _stream(0xFFFFFF0000000000 | 0x123456, 2**64 - 1)
    assert refine40(s.generator, 1).tolist() == [0xFFFFFF0000]
    assert uniform_unit(s.generator, 1).tolist() == [(2**53 - 1) / 2**53]


def test_bernoulli_byte_then_tie_break():
    """p = k / 2^48 with k >> 40 = 0x80: byte 0x7F gives 1, 0x81 gives 0, 0x80 asks a 40-bit tie-break."""
    k = (0x80 << 40) | 5
    p = k / 2**48
    s = _stream(0x80817F, 4 << 24)  # bytes 7F, 81, 80 (the word's other 5 bytes discarded); the tie: 4 < 5
    assert bernoulli_iid(s.generator, p, 3).tolist() == [True, False, True]
    assert s.exhausted()
    s2 = _stream(0x80, 5 << 24)
    assert bernoulli_iid(s2.generator, p, 1).tolist() == [False]


def test_python_runtime_draws_only_whole_words_with_a_secure_generator():
    """The replay path is the production path: the same runtime call on a ChaCha generator works."""
    import ldpplan

    plan = json.loads((FOLDER / "rr-small.json").read_text())["plan"]
    reports = load(plan).perturb(np.arange(6), ldpplan.secure_rng(1))
    assert reports.to_arrays()["y"].shape == (6,)
