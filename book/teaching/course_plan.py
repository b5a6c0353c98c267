"""The four-week module of ``course.ipynb`` as data, and what the page computes from the chapters.

The page's prose gives each session's goals, activities and homework (the exercises by their
labels); this module holds what is computed: which chapters and sections each session and the
90-minute lecture read (:data:`SESSIONS`, :data:`LECTURE`), their reading time from the chapters'
word counts (``scripts/chapter_times.py``, :func:`prose_words` and :func:`section_words`), the
chapters' exercises with their levels (:func:`exercises`) and the references from one chapter to
another (:func:`references`). ``tests/test_teaching.py`` checks the plan against the chapters.
"""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
#: The reading rate the reading times assume, in words per minute: a careful pace for technical
#: text with maths (inline maths counts as one word).
WORDS_PER_MINUTE = 200
#: A whole chapter, in :data:`SESSIONS` and :data:`LECTURE`.
ALL = "all"

_spec = importlib.util.spec_from_file_location("chapter_times", ROOT / "scripts" / "chapter_times.py")
chapter_times = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(chapter_times)

#: The eight sessions of the module (two a week, 90 minutes each): a title, and for each chapter
#: it needs either :data:`ALL` or the ``##`` sections read, by their headings or the words these
#: begin with (the chapter's opening always counts).
SESSIONS: list[tuple[str, str, dict[str, str | list[str]]]] = [
    ("1.1", "What a set function is", {"01_sets": ALL}),
    ("1.2", "Sum decomposition", {"02_sum_decomposition": ALL}),
    ("2.1", "Sums in disguise", {"03_sum_isomorphism": ALL}),
    ("2.2", "Logsumexp, and divide and conquer", {
        "04_logsumexp": ALL,
        "05_divide_and_conquer": ["Conquering is invariant to division", "Sorting: max, min and every quantile"]}),
    ("3.1", "Gradients, and learnable aggregations", {
        "05_divide_and_conquer": ["What the gradient sees", "A small training comparison", "Summary"],
        "06_learnable_aggregations": ALL}),
    ("3.2", "Universality, and population sizes never seen", {"07_universal_approximation_and_discussion": ALL}),
    ("4.1", "Experiments 1 and 2: reading a findings table", {
        "08_circle": ["The task", "Models", "Table 1", "The paper's findings, tested"],
        "09_mixture": ["The populations", "A network that outputs a distribution",
                       "Why LSE models stay at the start, and what fixes it", "The paper's findings, tested"]}),
    ("4.2", "Experiments 3 and 4, and choosing an aggregation", {
        "10_point_clouds": ["The data", "The model", "Table 2", "The paper's findings, tested", "Discussion"],
        "11_attention": ["The task", "The models", "The results", "The findings",
                         "What it means for choosing an aggregation"]}),
]

#: The 90-minute lecture: chapters 1, 2, 4 and 9 in this order, the sections shown in class.
#: Chapter 4 leans on chapter 3's sum isomorphism and chapter 9 on chapter 6's learnable
#: aggregations; each of the two opens with a primer that says what it uses (:data:`PRIMERS`).
LECTURE: dict[str, str | list[str]] = {
    "01_sets": ["Invariance and equivariance", "An MLP on concatenated particles is no set function"],
    "02_sum_decomposition": ["A first example: the maximum of two numbers", "The Deep Sets theorem",
                             "The Deep Set architecture"],
    "04_logsumexp": ["A sum in an isomorphic space", "Slide over the input range", "Diminishing returns"],
    "09_mixture": ["The populations", "A network that outputs a distribution", "Live: a plain and a learnable model",
                   "Why LSE models stay at the start, and what fixes it"],
}

#: For each chapter of the lecture that uses a chapter the lecture skips: the skipped chapter and
#: words of the primer's title, which :func:`section_of` finds (case ignored).
PRIMERS: dict[str, tuple[str, str]] = {
    "04_logsumexp": ("03_sum_isomorphism", "Primer: sums in another space"),
    "09_mixture": ("06_learnable_aggregations", "A primer on learnable aggregations"),
}


def chapters() -> list[str]:
    """The chapters' names (``01_sets`` …), in order; an experiment's methods page (``08_circle_methods``)
    is a reference for the reviewer, not a chapter a session reads."""
    return [path.stem for path in chapter_times.chapters(BOOK) if not path.stem.endswith("_methods")]


@lru_cache(maxsize=None)
def _notebook(chapter: str) -> nbformat.NotebookNode:
    return nbformat.read(BOOK / f"{chapter}.ipynb", as_version=4)


def _markdown(chapter: str) -> str:
    return "\n".join(cell.source for cell in _notebook(chapter).cells if cell.cell_type == "markdown")


def title(chapter: str) -> str:
    """The chapter's ``#`` heading."""
    return next(line[2:].strip() for line in _markdown(chapter).splitlines() if line.startswith("# "))


def section_words(chapter: str) -> dict[str, int]:
    """Words per ``##`` section of ``chapter`` (``""``: its opening), as ``scripts/chapter_times.py`` counts them."""
    return chapter_times.section_words(_notebook(chapter))


def find_sections(chapter: str, sections: str | list[str]) -> tuple[list[str], list[str]]:
    """The ``##`` headings of ``chapter`` that ``sections`` names (:data:`ALL`, or headings or the
    words they begin with), and the names that match no heading."""
    headings = [s for s in section_words(chapter) if s]
    if sections == ALL:
        return headings, []
    found = {name: [h for h in headings if h == name or h.startswith(name)] for name in sections}
    return [h for name in sections for h in found[name][:1]], [name for name in sections if not found[name]]


def words_read(chapter: str, sections: str | list[str], strict: bool = True) -> int:
    """The words of ``chapter`` a reader reads: all of them, or its opening and ``sections``
    (:func:`find_sections`). A KeyError names a section the chapter does not have, unless not
    ``strict`` (then it counts the sections it finds)."""
    words = section_words(chapter)
    headings, missing = find_sections(chapter, sections)
    if missing and strict:
        raise KeyError(f"{chapter} has no section {missing}; its sections: {[s for s in words if s]}")
    return words[""] + sum(words[h] for h in headings)


def section_of(chapter: str, words: str) -> str | None:
    """The ``##`` section of ``chapter`` whose prose holds ``words`` (case ignored; ``""``: the
    chapter's opening), or None where the chapter does not hold them."""
    current = ""
    for line in _markdown(chapter).splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
        if words.lower() in line.lower():
            return current
    return None


def minutes(words: int) -> float:
    """Reading minutes at :data:`WORDS_PER_MINUTE`."""
    return words / WORDS_PER_MINUTE


_EXERCISE = re.compile(r"^[ \t]*(`{3,}|:{3,})\{exercise\}[ \t]*(?P<title>.*)\n(?:[ \t]*:[\w-]+:.*\n)*?"
                       r"[ \t]*:label:[ \t]*(?P<label>\S+)", re.M)
_LEVEL = re.compile(r"—\s*(basic|intermediate|advanced)\s*$")


def exercises() -> dict[str, dict]:
    """Every exercise of the chapters by label: ``{"chapter", "title", "level"}`` (the level the
    title ends in, or None)."""
    found = {}
    for chapter in chapters():
        for match in _EXERCISE.finditer(_markdown(chapter)):
            level = _LEVEL.search(match.group("title"))
            found[match.group("label")] = {"chapter": chapter, "title": match.group("title").strip(),
                                           "level": level.group(1) if level else None}
    return found


_LABELS = re.compile(r"^[ \t]*:label:[ \t]*(\S+)|^\((?P<target>[\w.:-]+)\)=\s*$", re.M)
_DOC = re.compile(r"\{doc\}`(?:[^`<]*<)?(?:\.\./)?(?P<doc>\d\d_[\w]+)>?`")
_REF = re.compile(r"\{(?:prf:ref|ref|numref|eq)\}`(?:[^`<]*<)?(?P<label>[\w.:-]+)>?`")


def labels() -> dict[str, str]:
    """The chapter each label is defined in: directive labels, ``(label)=`` targets and the names of
    figures (a code cell's ``mystnb.figure.name``)."""
    found = {}
    for chapter in chapters():
        notebook = _notebook(chapter)
        for cell in notebook.cells:
            if cell.cell_type == "markdown":
                for match in _LABELS.finditer(cell.source):
                    found[match.group(1) or match.group("target")] = chapter
            name = cell.metadata.get("mystnb", {}).get("figure", {}).get("name")
            if name:
                found[name] = chapter
    return found


def references(chapter: str) -> dict[str, set[str]]:
    """The other chapters ``chapter`` refers to (``{doc}`` links, and references to labels defined
    there), each with what refers to it: ``{other: {"doc", "cor-sum-isomorphism", …}}``."""
    defined = labels()
    text = _markdown(chapter)
    found: dict[str, set[str]] = {}
    for match in _DOC.finditer(text):
        if match.group("doc") != chapter and match.group("doc") in chapters():
            found.setdefault(match.group("doc"), set()).add("doc")
    for match in _REF.finditer(text):
        other = defined.get(match.group("label"))
        if other and other != chapter:
            found.setdefault(other, set()).add(match.group("label"))
    return found


def skipped_before(path: list[str]) -> dict[str, dict[str, set[str]]]:
    """For each chapter of a reading ``path``, the *earlier* chapters it refers to that the path
    skips, with the references: what a reader of the path has not read."""
    order = chapters()
    return {chapter: {other: refs for other, refs in sorted(references(chapter).items())
                      if other not in path and order.index(other) < order.index(chapter)}
            for chapter in path}
