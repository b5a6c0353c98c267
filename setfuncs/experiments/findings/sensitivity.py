"""How far a findings table's verdicts depend on the analysis' choices: each verdict beside the verdicts of
the same claims analysed another way.

A verdict rests on choices the data did not make: which claims share a Holm correction (the family), how
a failed run counts, and, where a chapter has two, the summary of a run. :func:`sensitivity` judges the
table again under each alternative and sets every claim of the paper's family beside itself, so that a
verdict that moves with a choice says so in the table, not only in the prose.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from .claims import Finding

__all__ = ["POOLED", "sensitivity", "sensitivity_html"]

#: The alternative every table has, the paper's and the book's claims in one Holm correction.
POOLED = "one correction over the paper's and the book's claims"


def sensitivity(findings_of: Callable[..., Sequence[Finding]],
                alternatives: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per tested claim of the paper's family, in the table's order: keys ``key``, ``words``,
    ``verdict`` (``findings_of()``'s), one key per alternative (``findings_of(**options)``'s verdict of the
    same claim and variant) and ``moves``, the alternatives under which the verdict differs (``[]``: it
    holds under every one). Where an alternative cannot be judged at all (its claims raise a ValueError:
    e.g. leaving failed runs out leaves a comparison without a run), every row says so, with the reason
    (``"no table"``, the reason in the row's ``notes``), and the alternative is not counted in ``moves``. A ValueError names an
    alternative whose table lacks one of the claims."""
    main = [f for f in findings_of() if f.family == "paper" and f.seeds > 0]
    rows = [{"key": f.key, "words": f.words, "variant": f.variant, "verdict": f.verdict, "notes": []} for f in main]
    untestable = set()
    for name, options in alternatives.items():
        try:
            other = {(f.key, f.variant): f.verdict for f in findings_of(**options)}
        except ValueError as err:
            untestable.add(name)
            for row in rows:
                row[name] = "no table"
                row["notes"].append(f"{name}: no table, {str(err).split(' [')[0]}")
            continue
        for row in rows:
            verdict = other.get((row["key"], row["variant"]))
            if verdict is None:
                raise ValueError(f"the table under {name!r} has no row {row['key']!r} ({row['variant']})")
            row[name] = verdict
    for row in rows:
        row["moves"] = [name for name in alternatives if name not in untestable and row[name] != row["verdict"]]
    return rows


def sensitivity_html(rows: Sequence[dict[str, Any]], caption: str | None = None) -> str:
    """The rows of :func:`sensitivity` as an HTML table: the claim, its variant, its verdict, its verdict
    under each alternative, and whether it moves (``"holds"``, or the alternatives it moves under); the
    reasons an alternative has no table, once, after the caption."""
    from setfuncs.tables import html_table

    from .claims import VARIANT_LABELS

    fixed = {"key", "words", "variant", "verdict", "notes", "moves"}
    alternatives = [k for k in (rows[0] if rows else {}) if k not in fixed]
    notes = list(dict.fromkeys(note for row in rows for note in row["notes"]))
    if notes:
        caption = "; ".join(([caption] if caption else []) + notes)
    shown = [{**row, "variant": VARIANT_LABELS[row["variant"]],
              "moves": "moves under: " + "; ".join(row["moves"]) if row["moves"] else "holds"} for row in rows]
    return html_table(shown, [("words", "the paper's claim", "{}"), ("variant", "with", "{}"),
                              ("verdict", "verdict", "{}")] + [(a, a, "{}") for a in alternatives]
                      + [("moves", "the verdict", "{}")], caption=caption)
