"""``secure_rng``: a numpy Generator over ChaCha20 (randomgen) for production clients."""
from __future__ import annotations

import copy
import subprocess
import sys

import numpy as np
import pytest

from ldpplan.mechanisms import _sampling as S
from ldpplan.mechanisms import secure_rng
from ldpplan.mechanisms._secure import is_secure


def test_secure_rng_is_a_numpy_generator_over_chacha20():
    rng = secure_rng()
    assert isinstance(rng, np.random.Generator)
    assert type(rng.bit_generator).__name__ == "ChaCha"
    assert rng.bit_generator.state["state"]["rounds"] == 20
    assert is_secure(rng)
    assert not is_secure(np.random.default_rng(0))
    assert not is_secure(np.random.Generator(np.random.MT19937(0)))


def test_top_level_secure_rng_is_the_runtime_one():
    import ldpplan

    assert ldpplan.secure_rng is secure_rng


def test_unseeded_calls_differ():
    a = secure_rng().integers(0, 2**63, size=4)
    b = secure_rng().integers(0, 2**63, size=4)
    assert not np.array_equal(a, b)  # 2^-252 chance of a false failure


def test_seeded_calls_reproduce_and_seeds_differ():
    a = secure_rng(12345).integers(0, 2**63, size=16)
    b = secure_rng(12345).integers(0, 2**63, size=16)
    c = secure_rng(12346).integers(0, 2**63, size=16)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_unseeded_key_comes_from_the_os_csprng(monkeypatch):
    # seed=None draws a 256-bit key from secrets.randbits: with that function pinned, the
    # stream is the one of the pinned key (and the key is 256 bits wide).
    import ldpplan.mechanisms._secure as secure_module

    calls = []

    def fake_randbits(k: int) -> int:
        calls.append(k)
        return 2**255 + 7

    monkeypatch.setattr(secure_module.secrets, "randbits", fake_randbits)
    got = secure_rng().integers(0, 2**63, size=8)
    monkeypatch.undo()
    np.testing.assert_array_equal(got, secure_rng(2**255 + 7).integers(0, 2**63, size=8))
    assert calls == [256]


def test_sampler_is_exact_under_secure_rng():
    from test_sampling import reference_bits

    p = np.array([k / 2**48 for k in (0, 1, 3 * 2**40 + 2**39, 2**47, 2**48 - 1, 2**48)])
    rng = secure_rng(99)
    twin = copy.deepcopy(rng)
    np.testing.assert_array_equal(S.bernoulli_columns(rng, p, 500), reference_bits(twin, p, 500))
    # and in expectation: a tie-heavy probability, 2e5 draws, 5 sd
    q = (3 * 2**40 + 2**39) / 2**48
    x = S.bernoulli_iid(secure_rng(100), q, 200_000)
    assert abs(x.mean() - q) < 5 * np.sqrt(q * (1 - q) / x.size)


def test_missing_randomgen_is_a_one_line_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "randomgen", None)  # makes `from randomgen import ...` fail
    with pytest.raises(ImportError) as info:
        secure_rng()
    message = str(info.value)
    assert "\n" not in message
    assert "pip install 'ldpplan[secure]'" in message
    assert "randomgen" in message
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no chained traceback


def test_runtime_imports_without_randomgen():
    # randomgen is imported only when secure_rng is called: a client without it can load
    # plans and perturb with another generator.
    code = ("import sys; sys.modules['randomgen'] = None\n"
            "import ldpplan.mechanisms as m\n"
            "try:\n    m.secure_rng()\nexcept ImportError as e:\n    print('IMPORT-ERROR', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr
    assert "IMPORT-ERROR" in out.stdout and "ldpplan[secure]" in out.stdout


def _key_words(key: int) -> list[int]:
    """The 256-bit key as randomgen's ``keysetup``: 8 little-endian 32-bit words."""
    return [(key >> (32 * i)) & 0xFFFFFFFF for i in range(8)]


def test_the_chacha_key_is_the_whole_256_bit_secret(monkeypatch):
    # finding 11 of issue 16: the secret is ChaCha's key (randomgen key=), not a seed that
    # numpy's SeedSequence would mix through its 128-bit pool
    import ldpplan.mechanisms._secure as secure_module

    secret = (0xDEADBEEF << 224) | (0x0123456789ABCDEF << 64) | 0xFEDCBA9876543210
    monkeypatch.setattr(secure_module.secrets, "randbits", lambda k: secret if k == 256 else 1 / 0)
    state = secure_rng().bit_generator.state["state"]
    assert [int(w) for w in state["keysetup"]] == _key_words(secret)
    assert state["ctr"].tolist() == [0, 0] and state["rounds"] == 20


def test_secrets_differing_only_in_the_high_128_bits_give_different_streams():
    low = 0x0123456789ABCDEF0123456789ABCDEF
    streams = [secure_rng((high << 128) | low).integers(0, 2**63, size=8) for high in (0, 1, 2**127)]
    assert not np.array_equal(streams[0], streams[1])
    assert not np.array_equal(streams[0], streams[2]) and not np.array_equal(streams[1], streams[2])
    # the keys are what the generators hold, all 256 bits of each
    for high in (1, 2**127):
        key = (high << 128) | low
        assert [int(w) for w in secure_rng(key).bit_generator.state["state"]["keysetup"]] == _key_words(key)


@pytest.mark.parametrize("seed", [-1, 2**256, 1.5, True, "7"])
def test_a_seed_outside_the_key_range_is_refused(seed):
    with pytest.raises(ValueError, match=r"seed: must be an integer in \[0, 2\*\*256\)"):
        secure_rng(seed)
