"""Figures re-laid for a phone (setfuncs.phone) and the pages that show them (scripts/phone_figures.py).

That the built chapters show the phone variants at 390 px, with their text size printed, is checked
in ``tests/test_browser.py``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from setfuncs.phone import PHONE_MIME, PHONE_WIDTH, _wrap, phone_grid, phone_layout, phone_svg  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("phone_figures", ROOT / "scripts" / "phone_figures.py")
phone_figures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(phone_figures)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def svg_of(fig) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "test", "svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def row_of_plots(n: int = 3, **subplots):
    fig, axes = plt.subplots(1, n, figsize=(7, 2.4), layout="constrained", **subplots)
    for k, ax in enumerate(np.atleast_1d(axes)):
        ax.plot(np.arange(5), np.arange(5) ** (k + 1))
        ax.set_title(f"panel {k} with a title that is long")
        ax.set_xlabel("particles in the population")
    return fig, axes


def test_a_row_of_plots_becomes_a_column_at_the_phones_width() -> None:
    fig, axes = row_of_plots()
    assert phone_grid(fig)[0] == 1
    with phone_layout(fig) as laid:
        assert laid
        fig.canvas.draw()
        boxes = [ax.get_position() for ax in axes]
        assert fig.get_size_inches()[0] == pytest.approx(PHONE_WIDTH)
    assert all(a.y0 > b.y1 for a, b in zip(boxes, boxes[1:])), "stacked top to bottom in reading order"
    assert all(abs(a.x0 - b.x0) < 0.05 for a, b in zip(boxes, boxes[1:]))


def test_many_plots_take_two_columns_and_pictures_three() -> None:
    fig, _ = plt.subplots(3, 4, figsize=(7, 5), layout="constrained")
    assert phone_grid(fig)[0] == 2
    fig, axes = plt.subplots(2, 6, figsize=(7, 2.6), layout="constrained")
    for ax in axes.flat:
        ax.imshow(np.eye(4))
        ax.axis("off")
    columns, heights = phone_grid(fig)
    assert columns == 3 and len(heights) == 4


def test_the_figure_is_restored_after_its_phone_variant() -> None:
    fig, axes = row_of_plots(sharey=True)
    fig.suptitle("a figure title that is long enough to be wrapped on a phone's column")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=4)
    axes[2].legend(["a line with a long label"], loc="upper left", bbox_to_anchor=(1.02, 1))
    before = svg_of(fig)
    phone = phone_svg(fig)
    assert phone is not None and phone != before
    assert svg_of(fig) == before


def test_shared_y_tick_labels_come_back_on_each_row() -> None:
    fig, axes = row_of_plots(sharey=True)
    assert not axes[1].yaxis.get_tick_params(which="major").get("labelleft", True)
    with phone_layout(fig):
        assert all(ax.yaxis.get_tick_params(which="major").get("labelleft", True) for ax in axes)
    assert not axes[1].yaxis.get_tick_params(which="major").get("labelleft", True)


def test_the_variant_is_about_the_phones_width() -> None:
    fig, _ = row_of_plots()
    phone = phone_svg(fig, bbox_inches="tight")
    width = float(re.search(r'width="([0-9.]+)pt"', phone).group(1)) / 72
    assert PHONE_WIDTH * 0.6 < width < PHONE_WIDTH * 1.15


@pytest.mark.parametrize("kind", ["narrow", "by hand"])
def test_no_variant_where_none_is_needed_or_the_rule_cannot_re_lay(kind: str) -> None:
    if kind == "narrow":
        fig, _ = plt.subplots(1, 2, figsize=(PHONE_WIDTH, 2))
    else:
        fig = plt.figure(figsize=(7, 3))
        fig.add_axes((0.1, 0.1, 0.4, 0.8))
        fig.add_axes((0.55, 0.1, 0.4, 0.8))
    assert phone_svg(fig) is None


def test_wrapping_keeps_mathematics_whole() -> None:
    wrapped = _wrap(r"(e) L$\Sigma$E on $[-0.1, 0.1]^2$ and a longer tail", 1.2, 11)
    assert len(wrapped.split("\n")) >= 2
    for line in wrapped.split("\n"):
        assert line.count("$") % 2 == 0, wrapped
    assert wrapped.replace("\n", " ") == r"(e) L$\Sigma$E on $[-0.1, 0.1]^2$ and a longer tail"


def notebook_with(svg: str, phone: str | None) -> dict:
    data = {"image/svg+xml": svg, "image/png": "AAAA", "text/plain": "<Figure>"}
    metadata = {} if phone is None else {PHONE_MIME: {"svg": phone}}
    return {"cells": [{"cell_type": "code", "outputs": [{"output_type": "display_data", "data": data,
                                                         "metadata": metadata}]}]}


def test_the_page_shows_the_phone_variant_below_the_break_and_keeps_its_image() -> None:
    svg, other = "<svg>book</svg>", "<svg>no phone</svg>"
    variants = phone_figures.phone_variants(notebook_with(svg, "<svg>phone</svg>"))
    digest = hashlib.sha256(svg.encode()).hexdigest()
    assert variants == {digest: "<svg>phone</svg>"}
    assert phone_figures.phone_variants(notebook_with(other, None)) == {}
    kept = hashlib.sha256(other.encode()).hexdigest()
    body = (f'<img alt="A figure." src="../_images/{digest}.svg" />\n'
            f'<img alt="Another." src="../_images/{kept}.svg" />')
    page = phone_figures.with_phone_source(body, set(variants))
    assert page.count("<picture>") == 1 and f'srcset="../_images/{digest}-phone.svg"' in page
    assert f'(max-width: {phone_figures.PHONE_BREAK - 0.02}px)' in page
    assert f'<img alt="A figure." src="../_images/{digest}.svg" /></picture>' in page
    assert f'<img alt="Another." src="../_images/{kept}.svg" />' in page and page.count("<img") == 2


def test_a_variant_that_does_not_fit_the_phone_is_not_used() -> None:
    fig, axes = row_of_plots()
    axes[0].text(1.05, 0.5, "a note placed beside the panel at a fixed size, far too long for a phone",
                 transform=axes[0].transAxes)
    assert phone_grid(fig) is not None, "the rule re-lays it"
    assert phone_svg(fig, bbox_inches="tight") is None, "but what it draws is wider than the phone"


def test_the_kernel_puts_the_variant_in_the_outputs_metadata() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from setfuncs.phone import register

    shell = InteractiveShell.instance()
    register(shell)
    fig, _ = row_of_plots()
    data, metadata = shell.display_formatter.format(fig)
    assert PHONE_MIME not in data, "never data: a viewer would try to show it"
    assert metadata[PHONE_MIME]["svg"].lstrip().startswith("<?xml")
    narrow, _ = plt.subplots(figsize=(PHONE_WIDTH, 2))
    assert PHONE_MIME not in shell.display_formatter.format(narrow)[1]


def test_legends_fit_the_phone_in_fewer_columns_and_those_beside_a_panel_go_below() -> None:
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3), layout="constrained")
    for k in range(6):
        axes[0].plot([0, 1], [k, k + 1], label=f"a label of model {k}")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=6)
    axes[1].plot([0, 1], label="beside the panel")
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.02, 1))
    fig.canvas.draw()
    assert fig.legends[0].get_window_extent().width > PHONE_WIDTH * fig.dpi, "the book's legend is wider than a phone"
    with phone_layout(fig):
        fig.canvas.draw()
        assert all(legend.get_window_extent().width <= PHONE_WIDTH * fig.dpi for legend in fig.legends)
        assert not axes[1].get_legend().get_visible() and len(fig.legends) == 2
        below = fig.legends[1]
        assert [text.get_text() for text in below.get_texts()] == ["beside the panel"]
        assert below.get_window_extent().y1 <= min(ax.get_window_extent().y0 for ax in axes), "below the panels"
    assert len(fig.legends) == 1 and axes[1].get_legend().get_visible()
    assert phone_svg(fig, bbox_inches="tight") is not None


def test_a_diagram_in_one_picture_keeps_its_layout() -> None:
    fig, ax = plt.subplots(figsize=(7, 2), layout="constrained")
    ax.text(0.1, 0.5, "embed", fontsize=11)
    ax.text(0.5, 0.5, "aggregate", fontsize=11)
    ax.axis("off")
    assert phone_grid(fig) is None and phone_svg(fig) is None


def test_long_y_labels_are_wrapped_to_the_panels_height() -> None:
    fig, axes = row_of_plots()
    axes[0].set_ylabel("a y label far too long for the height of a panel on a phone")
    with phone_layout(fig):
        assert "\n" in axes[0].get_ylabel()
    assert "\n" not in axes[0].get_ylabel()


def test_a_note_beside_a_panel_goes_above_its_right_end_and_comes_back() -> None:
    fig, axes = plt.subplots(3, 1, figsize=(6.2, 3), layout="constrained")
    notes = [ax.text(1.01, 0.5, "✓ reproduced", transform=ax.transAxes, va="center") for ax in axes]
    for ax in axes:
        ax.set_title("a claim long enough to need wrapping when its verdict shares the line", loc="left")
    with phone_layout(fig):
        assert all(note.get_position() == (1.0, 1.0) and note.get_horizontalalignment() == "right" for note in notes)
        assert all("\n" in ax._left_title.get_text() for ax in axes)
    assert all(note.get_position() == (1.01, 0.5) and note.get_horizontalalignment() == "left" for note in notes)
    assert phone_svg(fig, bbox_inches="tight") is not None


def test_category_names_that_would_overlap_are_turned_and_come_back() -> None:
    fig, axes = plt.subplots(1, 2, figsize=(7, 2.5), layout="constrained")
    names = ["plain/plain", "plain/recurrent", "recurrent/plain", "recurrent/recurrent"]
    axes[0].bar(names, [1, 2, 3, 4])
    axes[1].bar(["a", "b"], [1, 2])
    with phone_layout(fig):
        assert axes[0].xaxis.get_tick_params(which="major").get("rotation") == 30
        assert {label.get_horizontalalignment() for label in axes[0].get_xticklabels()} == {"right"}
        assert axes[1].xaxis.get_tick_params(which="major").get("rotation", 0) == 0, "short names stay"
    assert axes[0].xaxis.get_tick_params(which="major").get("rotation", 0) == 0
    assert {label.get_horizontalalignment() for label in axes[0].get_xticklabels()} == {"center"}


def test_panels_without_tick_labels_are_re_laid_too() -> None:
    fig, axes = plt.subplots(1, 3, figsize=(7, 2.5), layout="constrained")
    axes[0].set_xticks([])
    axes[1].plot([0, 1])
    axes[2].imshow(np.eye(3))
    assert phone_svg(fig, bbox_inches="tight") is not None
