"""Small objects that the experiment chapters' report functions return, each rendering itself: a table
(:class:`Table`) and a few sentences (:class:`Lines`), as HTML for the book and JupyterLab and as text
for ``print``.
"""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from setfuncs.tables import html_table

__all__ = ["Table", "Lines", "table", "WIDTH"]

#: The most characters of a printed line, the text column's width in the book's monospace — a longer
#: sentence of :class:`Lines` wraps, its continuation indented.
WIDTH = 100


def _cell(value: Any, fmt: str) -> str:
    return "–" if value is None else fmt.format(value)


@dataclass(frozen=True)
class Table:
    """A narrow table: ``rows`` (plain dicts), ``columns`` (``(key, header, format)`` triples, as
    :func:`setfuncs.tables.html_table` takes them), a caption and notes printed under it."""

    rows: tuple[Mapping[str, Any], ...]
    columns: tuple[tuple[str, str, str], ...]
    caption: str = ""
    notes: tuple[str, ...] = ()

    def column(self, key: str) -> list[Any]:
        """The values of the column ``key``, one per row; a KeyError naming the columns for another key."""
        if key not in {k for k, _, _ in self.columns}:
            raise KeyError(f"no column {key!r}; the columns are {[k for k, _, _ in self.columns]}")
        return [row.get(key) for row in self.rows]

    def __str__(self) -> str:
        texts = [[header for _, header, _ in self.columns]]
        texts += [[_cell(row.get(key), fmt) for key, _, fmt in self.columns] for row in self.rows]
        widths = [max(len(line[j]) for line in texts) for j in range(len(self.columns))]
        numeric = [all(isinstance(row.get(key), (int, float)) or row.get(key) is None for row in self.rows)
                   for key, _, _ in self.columns]
        lines = ["  ".join(t.rjust(w) if right else t.ljust(w) for t, w, right in zip(line, widths, numeric)).rstrip()
                 for line in texts]
        return "\n".join(([self.caption] if self.caption else []) + lines + list(self.notes))

    def _repr_html_(self) -> str:
        notes = "".join(f'<p class="table-note">{html.escape(note)}</p>' for note in self.notes)
        return html_table(list(self.rows), list(self.columns), caption=self.caption or None) + notes


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str, str]], caption: str = "",
          notes: Sequence[str] = ()) -> Table:
    """A :class:`Table` of ``rows`` and ``columns``; a ValueError for no columns, or a column that is not a
    ``(key, header, format)`` triple."""
    if not columns or any(len(c) != 3 for c in columns):
        raise ValueError(f"columns must be (key, header, format) triples, got {columns!r}")
    return Table(tuple(dict(r) for r in rows), tuple(tuple(c) for c in columns), caption, tuple(notes))


@dataclass(frozen=True)
class Lines:
    """A few sentences that state results, each computed: a paragraph each in HTML, a line each in text."""

    lines: tuple[str, ...]

    def __str__(self) -> str:
        return "\n".join(textwrap.fill(line, WIDTH, subsequent_indent="  ", break_long_words=False,
                                        break_on_hyphens=False) for line in self.lines)

    def _repr_html_(self) -> str:
        return "".join(f"<p>{html.escape(line)}</p>" for line in self.lines)
