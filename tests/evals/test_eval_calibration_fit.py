"""``casework.runtime.calibration``: the isotonic fit, applying it, cross-fitting, JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from casework.errors import InputError
from casework.runtime.calibration import (
    Calibration,
    calibration_path,
    cross_fit,
    fit_calibration,
    load_calibration,
    save_calibration,
)


def test_isotonic_fit_pools_violators_and_interpolates() -> None:
    pairs = [(90.0, True)] * 6 + [(90.0, False)] * 4 + [(60.0, True)] * 3 + [(60.0, False)]
    cal = fit_calibration(pairs)
    # 60% was right 3 of 4 times, 90% only 6 of 10: not monotone, so the two pool into one
    assert cal.knots == (81.4286,) and cal.values == (64.2857,)
    assert cal.apply(10) == cal.apply(99) == 64.2857
    ordered = fit_calibration([(50.0, False)] * 5 + [(95.0, True)] * 5)
    assert ordered.knots == (50.0, 95.0) and ordered.values == (0.0, 100.0)
    assert ordered.apply(72.5) == pytest.approx(50.0) and ordered.apply(120) == 100.0


def test_cross_fit_scores_each_pair_with_a_fit_that_did_not_see_it() -> None:
    pairs = [(50.0, False), (95.0, True)] * 5
    out = cross_fit(pairs, folds=5)
    # every fold leaves both kinds in the training part: the map is the same step each time
    assert out == [0.0, 100.0] * 5


def test_too_few_pairs_is_one_sentence() -> None:
    with pytest.raises(InputError, match=r"at least 10 decisions .* got 3\.$"):
        fit_calibration([(80.0, True)] * 3)


def test_save_load_and_where(tmp_path: Path) -> None:
    cal = fit_calibration([(50.0, False)] * 5 + [(95.0, True)] * 5, source="run-1")
    path = calibration_path(tmp_path, "receipts", "agent", "local:qwen2.5 1.5b")
    assert path == tmp_path / "calibration" / "receipts" / "agent--local_qwen2.5_1.5b.json"
    save_calibration(cal, path)
    assert load_calibration(path) == cal
    assert load_calibration(tmp_path / "none.json") is None
    path.write_text('{"knots": [2, 1], "values": [0, 1]}')
    with pytest.raises(InputError, match="damaged"):
        load_calibration(path)
    assert Calibration.from_dict(cal.to_dict()).source == "run-1"
