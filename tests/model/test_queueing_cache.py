"""What the model's exact algorithms (convolution.py, chains.py, phase_type.py) cache is
read-only: a caller that wrote into a cached array would change every later chain that asks
for the same thing."""

from __future__ import annotations

import numpy as np
import pytest

from landscape_model.phase_type import fit_phase_type


@pytest.mark.parametrize("scv", [0.3, 0.5, 1.0, 4.0])
def test_a_cached_phase_type_cannot_be_written(scv: float) -> None:
    ph = fit_phase_type(scv)
    assert fit_phase_type(scv) is ph  # the cached object itself
    alpha, t = ph.alpha.copy(), ph.t.copy()
    for array in (ph.alpha, ph.t):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 7.0
        with pytest.raises(ValueError, match="read-only"):
            array *= 2.0
    again = fit_phase_type(scv)
    np.testing.assert_array_equal(again.alpha, alpha)
    np.testing.assert_array_equal(again.t, t)
    # Still a unit-mean distribution with the SCV asked for (alpha (-T)^-1 1 = 1).
    m = np.linalg.inv(-again.t)
    first, second = again.alpha @ m.sum(axis=1), 2 * again.alpha @ (m @ m).sum(axis=1)
    assert first == pytest.approx(1.0) and second - 1.0 == pytest.approx(scv)
