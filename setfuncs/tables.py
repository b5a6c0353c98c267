"""Tables for the book and the command lines: rows of plain dicts rendered as HTML or fixed-width text (no pandas).

>>> html_table([{"name": "max", "mse": 0.0123}], [("name", "aggregation", "{}"), ("mse", "MSE", "{:.3f}")])[:35]
'<div class="setfuncs-table"><table>'
"""

from __future__ import annotations

from html import escape
from typing import Mapping, Sequence

__all__ = ["html_table", "text_table"]

#: The class of the ``<div>`` around every HTML table: the book's stylesheet (``css/book.css``)
#: condenses such tables, lets wide ones use the page's margin and scrolls the rest with a cue.
TABLE_CLASS = "setfuncs-table"

#: A column: (key in the row dicts, header text, format string for the value).
Column = tuple[str, str, str]


def html_table(rows: Sequence[Mapping], columns: Sequence[Column], caption: str | None = None,
               missing: str = "–", span: str | None = None) -> str:
    """An HTML ``<table>`` with one ``<tr>`` per row and one ``<td>`` per column, in a
    ``<div class="setfuncs-table">`` that the book's stylesheet lays out.

    Values are formatted with the column's format string (``"{:.3f}"``) and escaped; a value that
    is None or a key that a row lacks shows ``missing``. Numbers are right-aligned. With ``span``
    (a column's key), consecutive rows with the same text in that column share one cell
    (``rowspan``), so a long value shared by several rows is printed once.

    Raises ValueError for a column that is not a ``(key, header, format)`` triple, or a ``span``
    that is not one of the columns' keys.
    """
    for column in columns:
        if len(column) != 3 or not all(isinstance(part, str) for part in column):
            raise ValueError(f"each column must be a (key, header, format) triple of strings, got {column!r}")
    keys = [key for key, _, _ in columns]
    if span is not None and span not in keys:
        raise ValueError(f"span must be the key of one of the columns {keys}, got {span!r}")
    head = "".join(f"<th>{escape(title)}</th>" for _, title, _ in columns)
    texts = [[missing if row.get(key) is None else fmt.format(row[key]) for key, _, fmt in columns] for row in rows]
    spanned = keys.index(span) if span is not None else None
    body = []
    for i, row in enumerate(rows):
        cells = []
        for j, (key, _, _) in enumerate(columns):
            value, text = row.get(key), texts[i][j]
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            attributes = ' style="text-align: right"' if number else ""
            if j == spanned:
                if i > 0 and texts[i - 1][j] == text:
                    continue                             # inside the cell of an earlier row
                rowspan = next((k for k in range(i + 1, len(rows)) if texts[k][j] != text), len(rows)) - i
                attributes += f' rowspan="{rowspan}"' if rowspan > 1 else ""
            cells.append(f"<td{attributes}>{escape(text)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    title = f"<caption>{escape(caption)}</caption>" if caption else ""
    return (f'<div class="{TABLE_CLASS}"><table>{title}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def text_table(rows: Sequence[Mapping], columns: Sequence[Column]) -> str:
    """A fixed-width text table: a header line, then one line per row.

    Each column's format string fixes its width and alignment (``"{:>9.3f}"``, ``"{:<12}"``);
    headers are aligned the same way, and a value that is None shows ``-``.
    """
    def width(fmt: str) -> int:
        numeric = fmt.rstrip("}")[-1:] in ("f", "g", "%", "d", "e")
        return len(fmt.format(0.0 if numeric else ""))

    widths = [width(fmt) for _, _, fmt in columns]
    header = "".join(title.ljust(w) if "<" in fmt else title.rjust(w)
                     for (_, title, fmt), w in zip(columns, widths))
    lines = [header]
    for row in rows:
        lines.append("".join("-".rjust(w) if row.get(key) is None else fmt.format(row[key])
                             for (key, _, fmt), w in zip(columns, widths)))
    return "\n".join(lines)
