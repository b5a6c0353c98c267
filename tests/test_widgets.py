"""setfuncs.widgets: sliders that switch between precomputed figures in the browser, and draw
any value of a range once a browser is attached to a running kernel."""

import base64

import ipywidgets as widgets
import matplotlib.pyplot as plt
import pytest
from IPython.core.formatters import DisplayFormatter
from ipywidgets.widgets.widget import _instances
from ipywidgets.widgets.widget_link import DirectionalLink, Link

from setfuncs.widgets import STILL_DPI, LiveRange, figure_png, slider_figure, slider_grid

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def draw_line(*slopes: float) -> plt.Figure:
    """A small figure that differs for every combination of slopes."""
    fig, ax = plt.subplots(figsize=(2, 2))
    for slope in slopes:
        ax.plot([0, 1], [0, slope])
    ax.set_ylim(-3, 3)
    return fig


def links_between(source: widgets.Widget, target: widgets.Widget) -> list[Link]:
    """The browser-side links from ``source.index`` to ``target.selected_index``."""
    return [w for w in _instances.values() if isinstance(w, Link)
            and w.source == (source, "index") and w.target == (target, "selected_index")]


def test_figure_png_renders_and_closes() -> None:
    fig = draw_line(1.0)
    png = figure_png(fig)
    assert png.startswith(PNG_SIGNATURE)
    assert not plt.fignum_exists(fig.number)


def test_slider_figure_has_one_image_per_value_and_a_linked_slider() -> None:
    values = [-2.0, 0.0, 2.0]
    box = slider_figure(draw_line, values, label="slope", fmt=lambda v: f"{v:+.0f}")
    slider, stack = box.children
    assert isinstance(slider, widgets.SelectionSlider)
    assert [label for label, _ in slider.options] == ["-2", "+0", "+2"]
    assert slider.description == "slope"
    assert isinstance(stack, widgets.Stack) and stack.selected_index == 0
    assert len(stack.children) == len(values)
    assert all(isinstance(image, widgets.Image) and image.format == "png"
               for image in stack.children)
    assert len(links_between(slider, stack)) == 1


def test_frames_differ() -> None:
    box = slider_figure(draw_line, [-2.0, 0.0, 2.0])
    frames = [bytes(image.value) for image in box.children[1].children]
    assert all(frame.startswith(PNG_SIGNATURE) for frame in frames)
    assert len(set(frames)) == len(frames)


def test_slider_grid_nests_one_stack_per_axis() -> None:
    box = slider_grid(draw_line, {"a": [-1.0, 1.0], "b": [-2.0, 0.0, 2.0]})
    outer_slider, inner_slider, outer = box.children
    assert len(outer.children) == 2 and len(links_between(outer_slider, outer)) == 1
    for inner in outer.children:
        assert isinstance(inner, widgets.Stack) and len(inner.children) == 3
        assert len(links_between(inner_slider, inner)) == 1
    frames = [bytes(image.value) for inner in outer.children for image in inner.children]
    assert len(set(frames)) == 6


def test_empty_axes_are_rejected() -> None:
    with pytest.raises(ValueError):
        slider_figure(draw_line, [])
    with pytest.raises(ValueError):
        slider_grid(draw_line, {})


def attach_browser(slider: widgets.SelectionSlider) -> None:
    """Do what the browser does when it creates the one-way links from ``slider``: copy the
    source's value into the target, which a kernel with a frontend receives as a change."""
    for link in [w for w in _instances.values() if type(w) is DirectionalLink]:
        (source, source_trait), (target, target_trait) = link.source, link.target
        if source is slider:
            setattr(target, target_trait, getattr(source, source_trait))


def frames(box: widgets.VBox) -> list[bytes]:
    """The PNG bytes of the precomputed frames of a :func:`slider_figure` box."""
    return [bytes(image.value) for image in box.children[1].children]


def test_live_range_keeps_the_frames_until_a_browser_attaches() -> None:
    values = [0.5, 1.0, 2.0]
    static = slider_figure(draw_line, values)
    box = slider_figure(draw_line, values, live=LiveRange(0.1, 3.0, log=True))
    slider, stack = box.children
    assert isinstance(slider, widgets.SelectionSlider) and isinstance(stack, widgets.Stack)
    assert frames(box) == frames(static)
    assert len(links_between(slider, stack)) == 1


def test_a_browser_attached_kernel_redraws_values_between_the_frames() -> None:
    values = [0.5, 1.0, 2.0]
    box = slider_figure(draw_line, values, label="slope", live=LiveRange(0.1, 3.0, log=True))
    slider, stack = box.children
    precomputed = frames(box)
    attach_browser(slider)
    continuous, image = box.children
    assert isinstance(continuous, widgets.FloatLogSlider) and continuous.description == "slope"
    assert continuous.value == values[0] and bytes(image.value) == precomputed[0]
    continuous.value = 0.7
    assert bytes(image.value) == figure_png(draw_line(0.7))
    assert bytes(image.value) not in precomputed
    assert [bytes(frame.value) for frame in stack.children] == precomputed


def test_a_linear_live_range_starts_at_the_selected_frame() -> None:
    box = slider_figure(draw_line, [-2.0, 0.0, 2.0], live=LiveRange(-2.0, 2.0, steps=40))
    slider = box.children[0]
    slider.index = 2
    attach_browser(slider)
    continuous, image = box.children
    assert isinstance(continuous, widgets.FloatSlider)
    assert (continuous.min, continuous.max, continuous.step) == (-2.0, 2.0, 0.1)
    assert continuous.value == 2.0
    continuous.value = -0.3
    assert bytes(image.value) == figure_png(draw_line(-0.3))


@pytest.mark.parametrize("low, high, log, steps", [(1.0, 1.0, False, 10), (0.0, 1.0, True, 10),
                                                   (0.0, 1.0, False, 0)])
def test_bad_live_ranges_are_rejected(low: float, high: float, log: bool, steps: int) -> None:
    with pytest.raises(ValueError):
        LiveRange(low, high, log=log, steps=steps)


def test_values_outside_the_live_range_are_rejected() -> None:
    with pytest.raises(ValueError, match="must lie in"):
        slider_figure(draw_line, [0.5, 5.0], live=LiveRange(0.1, 3.0))


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def displayed(box: widgets.Widget) -> dict:
    """The MIME bundle IPython displays for ``box``."""
    data, _ = DisplayFormatter().format(box)
    return data


def test_a_slider_displays_with_a_still_frame_of_its_first_value() -> None:
    box = slider_figure(draw_line, [-2.0, 0.0, 2.0], label="slope", fmt=lambda v: f"{v:+.0f}")
    data = displayed(box)
    assert data[WIDGET_VIEW]["model_id"] == box.model_id
    still = base64.b64decode(data["image/png"])
    assert still == figure_png(draw_line(-2.0), dpi=STILL_DPI)
    assert still not in frames(box)  # drawn again, sharper than the frames
    assert data["text/plain"] == ("Still frame at slope = -2 "
                                  "(the slider in the online book shows the others).")


def test_a_grid_still_frame_shows_the_first_value_of_every_axis() -> None:
    box = slider_grid(draw_line, {"a": [-1.0, 1.0], "b": [-2.0, 0.0, 2.0]})
    data = displayed(box)
    assert base64.b64decode(data["image/png"]) == figure_png(draw_line(-1.0, -2.0), dpi=STILL_DPI)
    assert data["text/plain"] == ("Still frame at a = -1.0, b = -2.0 "
                                  "(the sliders in the online book show the others).")


def test_an_unlabelled_slider_names_only_the_value() -> None:
    assert displayed(slider_figure(draw_line, [0.5, 1.0]))["text/plain"].startswith(
        "Still frame at 0.5 (")


def test_a_live_slider_keeps_its_still_frame_in_a_kernel() -> None:
    box = slider_figure(draw_line, [0.5, 1.0, 2.0], live=LiveRange(0.1, 3.0))
    before = displayed(box)
    attach_browser(box.children[0])
    assert isinstance(box.children[0], widgets.FloatSlider)
    after = displayed(box)
    assert after["image/png"] == before["image/png"] and after[WIDGET_VIEW] == before[WIDGET_VIEW]
