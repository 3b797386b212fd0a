"""options(): the fallback policy settings, scoped to a with block, checked on entry."""

import pytest

import mdarray
from mdarray._config import get_options


def test_defaults_and_scoping():
    assert get_options().fallback == "warn"
    assert get_options().fallback_limit == 1 << 30
    with mdarray.options(fallback="raise") as opts:
        assert opts.fallback == "raise"
        assert get_options().fallback == "raise"
        with mdarray.options(fallback_limit=10):
            assert get_options().fallback == "raise"
            assert get_options().fallback_limit == 10
        assert get_options().fallback_limit == 1 << 30
    assert get_options().fallback == "warn"


def test_restored_after_an_error():
    with pytest.raises(KeyError), mdarray.options(fallback="allow"):
        raise KeyError
    assert get_options().fallback == "warn"


@pytest.mark.parametrize(
    ("changes", "error", "words"),
    [
        ({"fallback": "never"}, ValueError, ["fallback", "'never'"]),
        ({"fallback": None}, ValueError, ["fallback"]),
        ({"fallback_limit": -1}, ValueError, ["fallback_limit", "-1"]),
        ({"fallback_limit": 1.5}, ValueError, ["fallback_limit", "1.5"]),
        ({"fallback_limit": True}, ValueError, ["fallback_limit", "True"]),
        ({"fallbak": "raise"}, TypeError, ["fallbak"]),
    ],
)
def test_bad_values(changes, error, words):
    with pytest.raises(error) as info, mdarray.options(**changes):
        pass
    for word in words:
        assert word in str(info.value)
    assert get_options().fallback == "warn"
    assert get_options().fallback_limit == 1 << 30


def test_performance_warning_is_a_user_warning():
    assert issubclass(mdarray.PerformanceWarning, UserWarning)
