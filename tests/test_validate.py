"""sim.validate: one range check for every config dataclass."""

import math

import numpy as np
import pytest

from sim.tinylm.sft import SFTConfig
from sim.validate import check_choice, check_number


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, True, "1", None])
def test_non_numbers_are_refused_with_the_field_name(value):
    with pytest.raises(ValueError, match=r"lr must be a finite number in \[0, 1\]"):
        check_number("lr", value, 0, 1)


def test_ranges_are_inclusive_unless_low_open():
    check_number("x", 0, 0, 1)
    check_number("x", 1.0, 0, 1)
    check_number("x", np.float64(0.5), 0, 1)
    with pytest.raises(ValueError, match=r"x must be in \(0, 1\], got 0"):
        check_number("x", 0, 0, 1, low_open=True)
    with pytest.raises(ValueError, match=r"x must be in \[0, 1\], got 1.5"):
        check_number("x", 1.5, 0, 1)


def test_integers_compare_exactly_and_refuse_floats():
    check_number("seed", 2**63 - 1, 0, 2**63 - 1, integer=True)  # float(2**63 - 1) would exceed the bound
    check_number("seed", np.int64(7), 0, 10, integer=True)
    with pytest.raises(ValueError, match="seed must be an integer"):
        check_number("seed", 3.0, 0, 10, integer=True)


def test_choice_names_the_options():
    check_choice("scale", "group", ("group", "none"))
    with pytest.raises(ValueError, match=r"scale must be one of \('group', 'none'\), got 'std'"):
        check_choice("scale", "std", ("group", "none"))


def test_sft_config_refuses_nan():  # the SFT config used to let NaN through its range check
    with pytest.raises(ValueError, match="lr"):
        SFTConfig(lr=math.nan)
