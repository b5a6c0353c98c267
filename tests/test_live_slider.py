"""The live slider (``setfuncs.widgets.LiveRange`` in a kernel with a browser) matches the static one:
it runs the same way (chapter 4's frames go from 100 down to 0.1, so does its live slider) and the
figures it draws read like its readout (a title says 0.525, not 0.524807)."""

import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import pytest
from ipywidgets.widgets.widget import _instances
from ipywidgets.widgets.widget_link import DirectionalLink

from setfuncs.widgets import LiveRange, significant, slider_figure


def attach_browser(slider: widgets.SelectionSlider) -> None:
    """What the browser does when it creates the one-way links from ``slider``."""
    for link in [w for w in _instances.values() if type(w) is DirectionalLink]:
        (source, source_trait), (target, target_trait) = link.source, link.target
        if source is slider:
            setattr(target, target_trait, getattr(source, source_trait))


class Recorder:
    """A draw function that remembers the values it was asked to draw."""

    def __init__(self) -> None:
        self.drawn: list[float] = []

    def __call__(self, value: float) -> plt.Figure:
        self.drawn.append(value)
        fig, ax = plt.subplots(figsize=(1, 1))
        ax.set_title(f"[-{value:g}, {value:g}]")
        return fig


#: Chapter 4's slider: the half-width from 100 (left) down to 0.1, and its live range.
STATIC = [100, 30, 10, 3, 1, 0.3, 0.1]
LIVE = LiveRange(0.1, 100, log=True)


@pytest.mark.parametrize("value, rounded", [(0.524807, 0.525), (52.4807, 52.5), (-15.96, -16.0),
                                            (0.0, 0.0), (100.0, 100.0), (0.30000000000000004, 0.3)])
def test_significant_keeps_three_digits(value: float, rounded: float) -> None:
    assert significant(value) == rounded


def test_the_grid_is_rounded_covers_the_range_and_holds_the_frames() -> None:
    grid = LIVE.grid(STATIC)
    assert grid == sorted(set(grid)) and grid[0] == 0.1 and grid[-1] == 100
    assert set(STATIC) <= set(grid)
    assert all(value == significant(value) for value in grid)
    assert len(grid) > 250  # 300 steps over three decades, few merged by rounding
    ratios = [b / a for a, b in zip(grid, grid[1:])]
    assert max(ratios) < 1.05, "no gap wider than about two steps of the log scale"


def test_a_descending_static_slider_gets_a_live_slider_that_also_runs_downwards() -> None:
    draw = Recorder()
    box = slider_figure(draw, STATIC, label="half-width λ", fmt=lambda w: f"{w:g}", live=LIVE)
    static = box.children[0]
    assert [label for label, _ in static.options][:2] == ["100", "30"]  # 100 on the left
    attach_browser(static)
    live, image = box.children
    assert isinstance(live, widgets.SelectionSlider) and isinstance(image, widgets.Image)
    values = [value for _, value in live.options]
    assert values[0] == 100 and values[-1] == 0.1, "100 on the left, 0.1 on the right, as the frames"
    assert values == sorted(values, reverse=True)
    assert live.value == 100 and live.description == "half-width λ"
    labels = [label for label, _ in live.options]
    assert all(label == f"{value:g}" and len(label.replace(".", "").lstrip("0")) <= 3
               for label, value in live.options), labels
    live.index = 1  # one step to the right: a little below 100, above the next frame (30)
    assert 30 < draw.drawn[-1] < 100 and draw.drawn[-1] == live.value
    live.value = min(values, key=lambda v: abs(v - 0.5248))
    assert draw.drawn[-1] == 0.525


def test_a_descending_slider_starts_at_the_frame_the_reader_left_it_on() -> None:
    box = slider_figure(Recorder(), STATIC, fmt=lambda w: f"{w:g}", live=LIVE)
    box.children[0].index = 3  # the frame for 3
    attach_browser(box.children[0])
    assert box.children[0].value == 3


def test_an_ascending_live_slider_draws_its_readouts_value() -> None:
    draw = Recorder()
    box = slider_figure(draw, [0.5, 1.0, 2.0], live=LiveRange(0.1, 3.0, log=True))
    attach_browser(box.children[0])
    live = box.children[0]
    assert isinstance(live, widgets.FloatLogSlider) and live.readout_format == ".3g"
    live.value = 0.524807
    assert draw.drawn[-1] == 0.525
    assert math.isclose(live.value, 0.524807)
