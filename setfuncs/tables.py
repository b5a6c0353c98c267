"""Tables for the book: rows of plain dicts rendered as HTML (no pandas).

>>> html_table([{"name": "max", "mse": 0.0123}], [("name", "aggregation", "{}"), ("mse", "MSE", "{:.3f}")])[:7]
'<table>'
"""

from __future__ import annotations

from html import escape
from typing import Mapping, Sequence

__all__ = ["html_table"]

#: A column: (key in the row dicts, header text, format string for the value).
Column = tuple[str, str, str]


def html_table(rows: Sequence[Mapping], columns: Sequence[Column], caption: str | None = None,
               missing: str = "–") -> str:
    """An HTML ``<table>`` with one ``<tr>`` per row and one ``<td>`` per column.

    Values are formatted with the column's format string (``"{:.3f}"``) and escaped; a value that
    is None or a key that a row lacks shows ``missing``. Numbers are right-aligned.

    Raises ValueError for a column that is not a ``(key, header, format)`` triple.
    """
    for column in columns:
        if len(column) != 3 or not all(isinstance(part, str) for part in column):
            raise ValueError(f"each column must be a (key, header, format) triple of strings, got {column!r}")
    head = "".join(f"<th>{escape(title)}</th>" for _, title, _ in columns)
    body = []
    for row in rows:
        cells = []
        for key, _, fmt in columns:
            value = row.get(key)
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            text = missing if value is None else fmt.format(value)
            align = ' style="text-align: right"' if number else ""
            cells.append(f"<td{align}>{escape(text)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    title = f"<caption>{escape(caption)}</caption>" if caption else ""
    return f"<table>{title}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
