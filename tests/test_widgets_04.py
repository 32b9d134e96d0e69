"""Headless tests of lesson 04's width slider: moving it re-measures and redraws.

The callback is called through the slider, as a notebook would; only what is shown is
checked, never how fast anything ran.
"""

import re

import numpy as np
import pytest

from speclab.widgets import WidthExplorer

PNG_MAGIC = b"\x89PNG"


def small_explorer(**kwargs) -> WidthExplorer:
    options = {"n_past": 16, "n_new_values": (1, 2, 5), "repeats": 2} | kwargs
    return WidthExplorer(**options)


def test_width_explorer_first_measurement():
    explorer = small_explorer()
    assert list(explorer.measured) == [128]
    assert explorer.measured[128].values.tolist() == [1, 2, 5]
    assert "width <b>128</b>" in explorer.text.value and "2 heads" in explorer.text.value
    assert re.search(r"5 new positions cost <b>\d+\.\d\d\u00d7</b>", explorer.text.value)
    ratio_2 = explorer.measured[128].ratio(2, 1)["median"]
    assert f"2 new positions {ratio_2:.2f}\u00d7" in explorer.text.value
    assert explorer.status.value == "" and not explorer.width.disabled  # done: nothing pending
    assert explorer.picture.value[:4] == PNG_MAGIC


def test_moving_the_slider_remeasures_and_keeps_earlier_widths():
    explorer = small_explorer()
    before = explorer.picture.value
    explorer.width.value = 768
    assert sorted(explorer.measured) == [128, 768]
    assert "width <b>768</b>" in explorer.text.value and "12 heads" in explorer.text.value
    # (12 * 768^2 + 256 * 768) weights of 8 bytes: 58.2 MB read per forward
    assert "58.2 MB of weights" in explorer.text.value
    labels = [t.get_text() for t in explorer.figure.legends[0].get_texts()]  # below both plots
    assert labels[:2] == ["width 128", "width 768"]  # then the reference line and the band
    assert len(labels) == 4
    assert explorer.picture.value != before


def test_width_slider_range_is_up_to_gpt2_small():
    explorer = small_explorer()
    assert (explorer.width.min, explorer.width.max) == (128, 768)
    assert explorer.width.continuous_update is False  # measure once per release, not per pixel


@pytest.mark.parametrize("values", [(1, 2, 4), (1, 5)])  # (1, 5): a KeyError for n_new = 2
def test_width_explorer_needs_the_ratios_it_reports(values):
    with pytest.raises(ValueError, match="include 1, 2 and 5"):
        WidthExplorer(n_new_values=values)


def test_width_explorer_counts_its_blocks():
    assert "1 block," in small_explorer(n_layer=1).text.value
    assert "2 blocks," in small_explorer(n_layer=2).text.value


def test_width_explorer_has_a_notebook_display():
    bundle = small_explorer()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_a_width_typed_off_the_step_snaps_to_it():
    """The readout accepts any number; 608 would give 9 heads that do not divide 608."""
    explorer = small_explorer()
    explorer.width.value = 608
    assert explorer.width.value == 640
    assert "width <b>640</b>" in explorer.text.value
    assert sorted(explorer.measured) == [128, 640]


def test_the_explorer_says_it_is_measuring_while_it_measures():
    explorer = small_explorer()
    seen = []
    measure = explorer.measure

    def watched(width):
        seen.append((explorer.status.value, explorer.width.disabled))
        return measure(width)

    explorer.measure = watched
    explorer.width.value = 256
    assert seen and "Measuring width 256" in seen[0][0] and seen[0][1]  # shown, slider locked
    assert explorer.status.value == "" and not explorer.width.disabled


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"repeats": 10**6}, "repeats"),  # had run for hours
        ({"n_new_values": (1, 2, 5, 10**6)}, "each of n_new_values"),  # had asked for 977 MiB
        ({"n_new_values": (1, 2, 5, 2.5)}, "each of n_new_values"),
        ({"n_new_values": "125"}, "a list of whole numbers"),
        ({"n_layer": 100}, "n_layer"),
        ({"n_past": 10**6}, "n_past"),
        ({"blas_threads": "2"}, "blas_threads"),  # threadpoolctl's own TypeError, at each move
        ({"blas_threads": 0}, "blas_threads"),
    ],
)
def test_width_explorer_refuses_a_measurement_that_would_not_finish(options, named):
    with pytest.raises(ValueError, match=named):
        WidthExplorer(**options)


def test_width_explorer_takes_its_n_new_values_as_an_array_too():
    assert small_explorer(n_new_values=np.array([1, 2, 5])).n_new_values == [1, 2, 5]
