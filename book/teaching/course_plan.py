"""The four-week module of ``course.ipynb`` as data, and what the page computes from the chapters.

The page's prose gives each session's goals and homework (the exercises by their labels); this
module holds what is computed:

* **what each session assigns** (:data:`SESSIONS`): the chapters and ``##`` sections read before it
  (in week 4, one experiment per project group, :attr:`Session.groups`), and its 90 minutes in
  class as an agenda (:attr:`Session.agenda`), the in-class exercises with their minutes;
* **the 90-minute lecture** (:data:`LECTURE`): an agenda whose items show chapter sections in class;
* **reading time** over everything a session assigns: the prose of its sections
  (``scripts/chapter_times.py``, :func:`section_words`) *and* what those sections show — the result
  boxes, tables, printed lines and figure captions of the executed chapters, which
  ``scripts/chapter_times.py`` counts per section when it runs them (``output_words`` in
  ``results/benchmarks/chapter-times.json``; :func:`shown_words`) — at :data:`WORDS_PER_MINUTE`;
* **the projects** (:data:`PROJECTS`): each one's command, how many paired comparisons it tests
  and the seeds that can decide them after Holm's correction (:meth:`Project.seeds`);
* the chapters' exercises with their levels (:func:`exercises`) and the references from one chapter
  to another (:func:`references`).

``tests/test_teaching.py`` checks the plan against the chapters: every section exists, no session
assigns more reading than :data:`READING_MINUTES` nor more class time than :data:`SESSION_MINUTES`.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Union

import nbformat

from setfuncs.experiments.views import Lines

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
#: The reading rate the reading times assume, in words per minute: a pace for dense mathematical
#: text, read with its formulas (inline maths counts as one word) and its tables.
WORDS_PER_MINUTE = 100
#: The most reading one session assigns before it, in minutes.
READING_MINUTES = 60
#: One session, and the lecture, in minutes.
SESSION_MINUTES = 90
#: A whole chapter, in a :data:`Reading`.
ALL = "all"
#: The appendix on testing claims and the guide: pages a session reads beside the chapters.
APPENDIX = "appendix_testing"
GUIDE = "teaching/choosing"
#: The family-wise level of a project's tests, as in the book's findings tables.
ALPHA = 0.05

_spec = importlib.util.spec_from_file_location("chapter_times", ROOT / "scripts" / "chapter_times.py")
chapter_times = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(chapter_times)

#: What a session reads: for each page (a chapter's file name without ``.ipynb``, or :data:`APPENDIX`
#: or :data:`GUIDE`) either :data:`ALL` or the ``##`` sections read, by their headings or the words
#: these begin with (the page's opening, with an experiment's result box, always counts).
Reading = Mapping[str, Union[str, list[str]]]


@dataclass(frozen=True)
class Item:
    """One item of a session's agenda: its ``minutes``, what happens (``what``), the sections it
    shows in class (``shows``, a :data:`Reading`) and the exercises done in class (labels)."""

    minutes: int
    what: str
    shows: Reading = field(default_factory=dict)
    exercises: tuple[str, ...] = ()


@dataclass(frozen=True)
class Session:
    """A 90-minute session: its ``number`` ("1.1"), ``title``, the ``reading`` every student does
    before it, the ``groups``' extra reading (one :data:`Reading` per project group; empty: one
    reading for all) and its ``agenda``."""

    number: str
    title: str
    reading: Reading
    agenda: tuple[Item, ...]
    groups: Mapping[str, Reading] = field(default_factory=dict)

    def readings(self) -> dict[str, Reading]:
        """What each student reads: ``{"all": reading}``, or per group the common reading and the group's."""
        if not self.groups:
            return {"all": dict(self.reading)}
        return {group: {**self.reading, **extra} for group, extra in self.groups.items()}

    def pages(self) -> set[str]:
        """Every page some student of the session reads (any group)."""
        return {page for reading in self.readings().values() for page in reading}


#: The experiment each project group works on: the group's name, its chapter.
GROUP_CHAPTERS = {"circle": "08_circle", "mixture": "09_mixture", "point clouds": "10_point_clouds",
                  "attention": "11_attention"}

#: The eight sessions of the module, two a week.
SESSIONS: list[Session] = [
    Session("1.1", "What a set function is", {"01_sets": ALL}, (
        Item(10, "the chapter's Check yourself questions, in pairs"),
        Item(25, "populations as tensors with a mask; invariance and equivariance; the recipe of every Deep Set"),
        Item(15, "live: an MLP on concatenated particles, a test population shuffled"),
        Item(15, "in class, in pairs", exercises=("sets-ex-which",)),
        Item(20, "another population size: what it does to each model"),
        Item(5, "homework set"))),
    Session("1.2", "Sum decomposition", {"02_sum_decomposition": ALL}, (
        Item(10, "Check yourself, in pairs"),
        Item(10, "the maximum of two numbers as a first example"),
        Item(25, "the Deep Sets theorem on a countable space; why the reals cost dimensions"),
        Item(15, "in class", exercises=("sumdec-ex-max2",)),
        Item(25, "the maximum decomposed by hand, its conditioning; the architecture: embed, combine, aggregate, "
                 "process"),
        Item(5, "homework set"))),
    Session("2.1", "Sums in disguise", {"03_sum_isomorphism": ALL}, (
        Item(10, "Check yourself, in pairs"),
        Item(30, "the sum isomorphism corollary, strict and weak; the mean forgets the count"),
        Item(15, "in class", exercises=("sumiso-ex-geometric",)),
        Item(30, "logsumexp shifted by the maximum; power means and the softmax-weighted sum (the slider)"),
        Item(5, "homework set"))),
    Session("2.2", "Logsumexp, and divide and conquer", {
        "04_logsumexp": ALL,
        "05_divide_and_conquer": ["Conquering is invariant to division", "Sorting: max, min and every quantile",
                                  "What the gradient sees"]}, (
        Item(10, "Check yourself, in pairs"),
        Item(20, "the paper's Figure 2 and the slider from max to the sum; diminishing returns and ln N"),
        Item(10, "in class", exercises=("ex-lse-bounds",)),
        Item(20, "commutative, associative operations; floating-point sums are invariant up to rounding"),
        Item(10, "in class", exercises=("dac-ex-boolean",)),
        Item(15, "which particles receive a gradient through each aggregation"),
        Item(5, "homework set"))),
    Session("3.1", "Learnable aggregations", {
        "05_divide_and_conquer": ["A small training comparison", "Summary", "Further reading"],
        "06_learnable_aggregations": ALL}, (
        Item(10, "Check yourself, in pairs"),
        Item(10, "live: does a sparse gradient slow training? (chapter 5's small comparison)"),
        Item(30, "read-process-write; the recurrent and query aggregations; why they are invariant"),
        Item(15, "live: the toy task and where the attention goes"),
        Item(15, "in class", exercises=("learn-ex-mean",)),
        Item(10, "projects handed out; groups formed (one experiment per group)"))),
    Session("3.2", "Universality, and population sizes never seen", {
        "07_universal_approximation_and_discussion": ALL,
        APPENDIX: ["A claim, seed by seed", "The exact tests", "Families and their correction", "The verdict words"]}, (
        Item(10, "Check yourself, in pairs"),
        Item(25, "universality is a theorem about the sum; max is no sum in disguise"),
        Item(20, "live: twelve small models and the extrapolation plot"),
        Item(20, "how the book tests a claim: pairing by seed, the exact test, one correction per family"),
        Item(10, "in class", exercises=("univ-ex-idempotent",)),
        Item(5, "homework set; groups run their project's command at the quick budget"))),
    Session("4.1", "One experiment per group", {APPENDIX: ["What the seeds cannot tell"]}, (
        Item(10, "Check yourself of the group's chapter, within the group"),
        Item(20, "reading a result box, the findings figure and a verdict (the appendix's words)"),
        Item(45, "groups: the project's runs, the paired comparisons and their correction"),
        Item(15, "each group states its question, its comparisons and its seeds")),
        groups={name: {chapter: ALL} for name, chapter in GROUP_CHAPTERS.items()}),
    Session("4.2", "Choosing an aggregation, and the projects", {GUIDE: ALL}, (
        Item(48, "the four groups present (12 minutes each, questions included)"),
        Item(30, "the guide: which aggregation for which task, and the evidence for each"),
        Item(12, "what the seeds could not decide; the module's close"))),
]

#: The 90-minute lecture: chapters 1, 2, 4 and 9 in this order, each item with the sections it
#: shows and the exercises done in class. Chapter 2 is cut to the first example and the theorems'
#: statements; chapter 9 ends with the collapse of the models with logsumexp inside their layers.
LECTURE = Session("lecture", "A single 90-minute lecture", {}, (
    Item(18, "what a set function is: invariance, equivariance, and an MLP that is none",
         shows={"01_sets": ["Invariance and equivariance", "An MLP on concatenated particles is no set function"]}),
    Item(8, "in class, in pairs", exercises=("sets-ex-which",)),
    Item(12, "the maximum of two numbers as a sum; the Deep Sets theorems, stated; the architecture",
         shows={"02_sum_decomposition": ["A first example: the maximum of two numbers", "The Deep Sets theorem",
                                         "The Deep Set architecture"]}),
    Item(15, "logsumexp as a sum in another space, sliding from max to the sum; diminishing returns",
         shows={"04_logsumexp": ["A sum in an isomorphic space", "Slide over the input range", "Diminishing returns"]}),
    Item(8, "in class, in pairs", exercises=("ex-lse-bounds",)),
    Item(25, "mixture weights: the task, and models with logsumexp in their layers that stay at the start "
             "(live, then the sweep's count of collapsed runs) while log-mean-exp learns",
         shows={"09_mixture": ["The populations", "A network that outputs a distribution",
                               "A primer on learnable aggregations",
                               "Why LSE models stay at the start, and what fixes it",
                               "Live: the same model with LSE and with log-mean-exp"]}),
    Item(4, "questions")))

#: For each chapter of the lecture that uses a chapter the lecture skips: the skipped chapter and
#: words of the primer's title, which :func:`section_of` finds (case ignored).
PRIMERS: dict[str, tuple[str, str]] = {
    "04_logsumexp": ("03_sum_isomorphism", "Primer: sums in another space"),
    "09_mixture": ("06_learnable_aggregations", "A primer on learnable aggregations"),
}


@dataclass(frozen=True)
class Project:
    """A project: its ``number``, the ``experiment`` package it runs, the ``chapter``, its
    ``question``, the ``configurations`` it trains, further sweep ``options``, and how many paired
    comparisons it tests (``comparisons``, computed from the experiment's quick budget) with
    ``sides`` (1: one-sided, 2: two-sided), all under one Holm correction at :data:`ALPHA`."""

    number: int
    experiment: str
    chapter: str
    question: str
    configurations: tuple[str, ...]
    comparisons: int
    sides: int
    options: tuple[str, ...] = ()

    def seeds(self) -> int:
        r"""The fewest seeds with which every comparison can be decided at Holm's first step even
        when one seed, the one with the smallest difference, goes the other way. The exact
        sign-flip test's one-sided p-value is then :math:`2 \cdot 2^{-n}` (the observed pattern and
        the one with every sign agreeing), so :math:`n = \lceil \log_2(2\, s\, m / \alpha) \rceil`
        for :math:`m` comparisons with :math:`s` sides. With fewer seeds than
        :math:`\lceil \log_2(s\, m / \alpha) \rceil` nothing can be decided at all."""
        return math.ceil(math.log2(2 * self.sides * self.comparisons / ALPHA) - 1e-12)

    def command(self, out: str | None = None, jobs: int | None = None) -> list[str]:
        """The sweep's command line at the quick budget, ``out`` its results file."""
        line = ["python", "-m", f"setfuncs.experiments.{self.experiment}", "sweep", "--budget", "quick",
                "--runs", str(self.seeds()), *self.options, "--configurations", *self.configurations,
                "--out", out or f"{self.experiment}-project.json"]
        return line + (["--jobs", str(jobs)] if jobs else [])


def _quick(experiment: str):
    """The quick budget of an experiment package (``circle``, ``pointcloud``, ``attention``)."""
    module = importlib.import_module(f"setfuncs.experiments.{experiment}")
    return module.EXPERIMENT.budgets["quick"]


def _projects() -> list[Project]:
    circle, pointcloud, attention = _quick("circle"), _quick("pointcloud"), _quick("attention")
    smaller = [n for n in pointcloud.curve_sizes if n < pointcloud.points]
    return [
        Project(1, "circle", "08_circle",
                "Is log-mean-exp better than LSE at every test size, or only at the training size?",
                ("mean/lse", "mean/lme", "lse/mean", "lme/mean"),
                comparisons=2 * len(circle.test_population_sizes), sides=2),
        Project(2, "mixture", "09_mixture",
                "Do recurrent equivariant layers boost the mean, and do LSE layers collapse at this budget too?",
                ("mean/mean", "r-mean/mean", "mean/max", "r-mean/max", "lse/mean", "lme/mean"),
                comparisons=2, sides=1),
        Project(3, "pointcloud", "10_point_clouds",
                "Does a learnable final aggregation lose less accuracy than max/max on clouds smaller than in "
                "training?", ("max/max", "max/r-lse", "max/r-lme"),
                comparisons=2 * len(smaller), sides=1, options=("--data", "shapes")),
        Project(4, "attention", "11_attention",
                "Which localisers get better as the population grows from 5 to 1,000 particles?",
                ("mean", "lse", "lme", "r-lse", "r-lme"),
                comparisons=5 * (len(attention.eval_sizes) - 1), sides=1),
    ]


#: The four projects, one per experiment.
PROJECTS: list[Project] = _projects()


def chapters() -> list[str]:
    """The chapters' names (``01_sets`` …), in order; an experiment's methods page (``08_circle_methods``)
    is a reference for the reviewer, not a chapter a session reads."""
    return [path.stem for path in chapter_times.chapters(BOOK) if not path.stem.endswith("_methods")]


@lru_cache(maxsize=None)
def _notebook(page: str) -> nbformat.NotebookNode:
    return nbformat.read(BOOK / f"{page}.ipynb", as_version=4)


def _markdown(page: str) -> str:
    return "\n".join(cell.source for cell in _notebook(page).cells if cell.cell_type == "markdown")


def title(page: str) -> str:
    """The page's ``#`` heading."""
    return next(line[2:].strip() for line in _markdown(page).splitlines() if line.startswith("# "))


def section_words(page: str) -> dict[str, int]:
    """Words of prose per ``##`` section of ``page`` (``""``: its opening), as ``scripts/chapter_times.py`` counts them."""
    return chapter_times.section_words(_notebook(page))


def find_sections(page: str, sections: str | list[str]) -> tuple[list[str], list[str]]:
    """The ``##`` headings of ``page`` that ``sections`` names (:data:`ALL`, or headings or the
    words they begin with), and the names that match no heading."""
    headings = [s for s in section_words(page) if s]
    if sections == ALL:
        return headings, []
    found = {name: [h for h in headings if h == name or h.startswith(name)] for name in sections}
    return [h for name in sections for h in found[name][:1]], [name for name in sections if not found[name]]


def words_read(page: str, sections: str | list[str], strict: bool = True) -> int:
    """The words of prose of ``page`` a reader reads: all of them, or its opening and ``sections``
    (:func:`find_sections`). A KeyError names a section the page does not have, unless not
    ``strict`` (then it counts the sections it finds)."""
    words = section_words(page)
    headings, missing = find_sections(page, sections)
    if missing and strict:
        raise KeyError(f"{page} has no section {missing}; its sections: {[s for s in words if s]}")
    return words[""] + sum(words[h] for h in headings)


def measured(times: dict | None = None) -> dict:
    """The chapter-times file's entries by page (``results/benchmarks/chapter-times.json``); empty
    where the file is missing."""
    times = chapter_times.read_times(chapter_times.OUT) if times is None else times
    return times["chapters"] if times else {}


def shown_words(page: str, sections: str | list[str], times: dict | None = None) -> int | None:
    """The words ``page`` *shows* in its opening and ``sections``: outputs and figure captions of the
    executed page, as ``scripts/chapter_times.py`` counted them; None where there is no times file.

    Raises:
        KeyError: Naming the page and the command, where the times file has no count for it or
            its count is of other sections than the page has now (a renamed or new section).
    """
    if not measured(times):
        return None
    counts = measured(times).get(page, {}).get("output_words")
    fix = f"run `{chapter_times.COMMAND} --chapters {page}` on a quiet machine and commit the file"
    if counts is None:
        raise KeyError(f"{chapter_times.OUT.name} has no output_words for {page}: {fix}")
    if set(counts) != set(section_words(page)):
        raise KeyError(f"{chapter_times.OUT.name} counted the outputs of {page} in sections {sorted(counts)}, "
                       f"and it has {sorted(section_words(page))} now: {fix}")
    headings, _ = find_sections(page, sections)
    return counts[""] + sum(counts[h] for h in headings)


def reading_words(reading: Reading, times: dict | None = None) -> int | None:
    """The words of ``reading``: prose and what it shows, on every page; None without a times file."""
    shown = [shown_words(page, sections, times) for page, sections in reading.items()]
    if None in shown:
        return None
    return sum(words_read(page, sections) for page, sections in reading.items()) + sum(shown)


def session_words(session: Session, times: dict | None = None) -> dict[str, int | None]:
    """The words each reader of ``session`` reads before it (prose and what it shows), by group
    (``"all"`` where the session has no groups)."""
    return {group: reading_words(reading, times) for group, reading in session.readings().items()}


def agenda_words(item: Item, times: dict | None = None) -> int | None:
    """The words of prose and outputs of the sections an agenda item shows in class."""
    return reading_words(item.shows, times)


def section_of(page: str, words: str) -> str | None:
    """The ``##`` section of ``page`` with a title holding ``words`` — a heading, or the title of a
    directive such as an admonition — (case ignored; ``""``: the page's opening), or None where no
    title holds them."""
    current = ""
    for line in _markdown(page).splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
        if re.match(r"\s*(#|`{3,}|:{3,})", line) and words.lower() in line.lower():
            return current
    return None


def minutes(words: int | None) -> float | None:
    """Reading minutes at :data:`WORDS_PER_MINUTE` (None for None: not measured)."""
    return None if words is None else words / WORDS_PER_MINUTE


_EXERCISE = re.compile(r"^[ \t]*(`{3,}|:{3,})\{exercise\}[ \t]*(?P<title>.*)\n(?:[ \t]*:[\w-]+:.*\n)*?"
                       r"[ \t]*:label:[ \t]*(?P<label>\S+)", re.M)
_LEVEL = re.compile(r"—\s*(basic|intermediate|advanced)\s*$")


def exercises() -> dict[str, dict]:
    """Every exercise of the chapters by label: ``{"chapter", "title", "level", "name"}`` (the level the
    title ends in, or None; the name is the title without it, as the course page names an exercise)."""
    found = {}
    for chapter in chapters():
        for match in _EXERCISE.finditer(_markdown(chapter)):
            title = match.group("title").strip()
            level = _LEVEL.search(title)
            found[match.group("label")] = {"chapter": chapter, "title": title,
                                           "level": level.group(1) if level else None,
                                           "name": title[:level.start()].strip() if level else title}
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


def _section_markdown(chapter: str, sections: str | list[str] | None) -> str:
    """The Markdown of ``chapter``'s opening and ``sections`` (None or :data:`ALL`: all of it)."""
    if sections is None or sections == ALL:
        return _markdown(chapter)
    shown = set(find_sections(chapter, sections)[0])
    kept, current = [], ""
    for line in _markdown(chapter).splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
        if current == "" or current in shown:
            kept.append(line)
    return "\n".join(kept)


def references(chapter: str, sections: str | list[str] | None = None) -> dict[str, set[str]]:
    """The other chapters ``chapter`` (its opening and ``sections``; None: all of it) refers to
    (``{doc}`` links, and references to labels defined there), each with what refers to it:
    ``{other: {"doc", "cor-sum-isomorphism", …}}``."""
    defined = labels()
    text = _section_markdown(chapter, sections)
    found: dict[str, set[str]] = {}
    for match in _DOC.finditer(text):
        if match.group("doc") != chapter and match.group("doc") in chapters():
            found.setdefault(match.group("doc"), set()).add("doc")
    for match in _REF.finditer(text):
        other = defined.get(match.group("label"))
        if other and other != chapter:
            found.setdefault(other, set()).add(match.group("label"))
    return found


def skipped_before(path: list[str], shown: Reading | None = None) -> dict[str, dict[str, set[str]]]:
    """For each chapter of a reading ``path``, the *earlier* chapters it refers to that the path
    skips, with the references: what a reader of the path has not read. ``shown`` limits each
    chapter to the sections read (default: all of it)."""
    order = chapters()
    return {chapter: {other: refs for other, refs in sorted(references(chapter, (shown or {}).get(chapter)).items())
                      if other not in path and order.index(other) < order.index(chapter)}
            for chapter in path}


def lecture_path() -> tuple[list[str], dict[str, list[str]]]:
    """The lecture's chapters in order, and the sections of each it shows."""
    shown: dict[str, list[str]] = {}
    for item in LECTURE.agenda:
        for chapter, sections in item.shows.items():
            shown.setdefault(chapter, []).extend(sections)
    return list(shown), shown


# --- the page's tables ------------------------------------------------------------------------------

def pages() -> list[str]:
    """Every page a session reads: the chapters, the appendix on testing claims and the guide."""
    return chapters() + [APPENDIX, GUIDE]


def page_name(page: str) -> str:
    """A page as the tables name it: ``ch. 4`` for a chapter, else its title."""
    return f"ch. {int(page[:2])}" if re.match(r"\d\d_", page) else title(page)


def running(page: str, times: dict | None = None) -> float | None:
    """The measured seconds of a page that ran to its end; None where it was not measured."""
    entry = measured(times).get(page)
    return entry["seconds"] if entry and entry["status"] == "ok" else None


def page_rows(times: dict | None = None) -> list[dict]:
    """Per page: its prose, what it shows, the reading minutes of both and its running seconds."""
    rows = []
    for page in pages():
        prose, shown = words_read(page, ALL), shown_words(page, ALL, times)
        rows.append({"page": f"{page_name(page)}: {title(page)}" if page[:2].isdigit() else title(page),
                     "prose": prose, "shown": shown, "minutes": None if shown is None else minutes(prose + shown),
                     "seconds": running(page, times)})
    return rows


def _reading_text(reading: Reading) -> str:
    parts = []
    for page, sections in reading.items():
        headings, _ = find_sections(page, sections)
        what = "all" if sections == ALL else ", ".join(headings) or "its opening"
        parts.append(f"{page_name(page)}: {what}")
    return "; ".join(parts)


def session_rows(times: dict | None = None) -> list[dict]:
    """Per session, and per group where the session has groups: what is read, its words, the reading
    minutes against :data:`READING_MINUTES`, and the class minutes of its agenda."""
    rows = []
    for session in SESSIONS:
        words = session_words(session, times)
        for group, reading in session.readings().items():
            rows.append({"session": f"{session.number} {session.title}" + (f" ({group} group)" if session.groups else ""),
                         "reading": _reading_text(reading), "words": words[group],
                         "minutes": minutes(words[group]), "class": sum(item.minutes for item in session.agenda)})
    return rows


def lecture_rows(times: dict | None = None) -> list[dict]:
    """The lecture's agenda: minutes, what happens, the sections shown (their words and the minutes
    they take to read at :data:`WORDS_PER_MINUTE`) and the exercises done in class."""
    names = {label: entry["name"] for label, entry in exercises().items()}
    rows = []
    for item in LECTURE.agenda:
        words = agenda_words(item, times)
        rows.append({"minutes": item.minutes, "what": item.what,
                     "shows": _reading_text(item.shows) if item.shows else "",
                     "exercises": ", ".join(names[label] for label in item.exercises),
                     "words": words if item.shows else None, "reading": minutes(words) if item.shows else None})
    return rows


def project_rows(project_times: dict | None) -> list[dict]:
    """Per project: its comparisons, the seeds they need, the seconds its sweep took on one core
    (None where it was not measured with today's command) and the runs it trains."""
    measured_projects = (project_times or {}).get("projects", {})
    rows = []
    for project in PROJECTS:
        entry = measured_projects.get(str(project.number), {})
        current = entry.get("command") == project.command() and entry.get("status") == "ok"
        rows.append({"project": f"{project.number}. {project.experiment}", "comparisons": project.comparisons,
                     "sides": "two-sided" if project.sides == 2 else "one-sided", "seeds": project.seeds(),
                     "runs": project.seeds() * len(project.configurations),
                     "seconds": entry["seconds"] if current else None})
    return rows


def times_line(times: dict | None) -> str:
    """The whole reading of the pages, and where and when the running times were measured."""
    rows = page_rows(times)
    prose = sum(row["prose"] for row in rows)
    line = f"Every page a session reads: {prose:,} words of prose"
    if times:
        shown = sum(row["shown"] for row in rows)
        prov = times["provenance"]
        line += (f" and {shown:,} shown, {minutes(prose + shown) / 60:.1f} hours at {WORDS_PER_MINUTE} words a "
                 f"minute. Running times measured on {prov['date'][:10]} at commit {str(prov['git_commit'])[:12]}, "
                 f"{prov['hardware'].get('cpu_model')}, budget {prov.get('budget')}, one thread per kernel.")
    return wrapped(line + ("" if times else "."))


def agenda_text(session: Session) -> str:
    """A session's agenda on one line: each item's minutes and what happens (an exercise by its title)."""
    names = {label: entry["name"] for label, entry in exercises().items()}
    return " · ".join(f"{item.minutes}: " + (f"exercise {', '.join(names[label] for label in item.exercises)} "
                                             f"({item.what})" if item.exercises else item.what)
                      for item in session.agenda)


def agenda_rows() -> list[dict]:
    """Per session, its agenda (:func:`agenda_text`)."""
    return [{"session": f"{session.number} {session.title}", "agenda": agenda_text(session)} for session in SESSIONS]


def budget_line(times: dict | None) -> str:
    """Which sessions, if any, assign more reading than :data:`READING_MINUTES` or run past
    :data:`SESSION_MINUTES` in class."""
    over = [f"{row['session']} ({row['minutes']:.0f} min of reading)" for row in session_rows(times)
            if row["minutes"] is not None and row["minutes"] > READING_MINUTES]
    long = [f"{s.number} ({sum(i.minutes for i in s.agenda)} min)" for s in SESSIONS
            if sum(i.minutes for i in s.agenda) > SESSION_MINUTES]
    if over or long:
        return wrapped("Over the plan's limits: " + "; ".join(over + long) + ".")
    return wrapped(f"Every session assigns at most {READING_MINUTES} minutes of reading"
                   + (" (as measured)" if times else " (prose only: no times file)")
                   + f" and {SESSION_MINUTES} in class.")


def wrapped(text: str) -> str:
    """``text`` broken into lines that fit the book's column, as the experiment chapters print
    (:class:`setfuncs.experiments.views.Lines`)."""
    return str(Lines((text,)))


#: The projects' measured wall times, which ``scripts/project_times.py`` writes.
PROJECT_TIMES = ROOT / "results" / "benchmarks" / "project-times.json"


def project_times(path: Path | None = None) -> dict | None:
    """The measured wall times of the projects (``results/benchmarks/project-times.json``, which
    ``scripts/project_times.py`` writes), or None where there is none."""
    path = PROJECT_TIMES if path is None else path
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def lecture_line(times: dict | None) -> str:
    """Whether the lecture fits: its agenda's minutes, each item's reading against its minutes, and
    every reference back to a chapter the path skips covered by a primer it shows."""
    path, shown = lecture_path()
    total = sum(item.minutes for item in LECTURE.agenda)
    tight = [row["what"].split(":")[0] for row in lecture_rows(times)
             if row["reading"] is not None and row["reading"] > row["minutes"]]
    uncovered = [chapter for chapter, skipped in skipped_before(path, shown).items() if skipped
                 and (chapter not in PRIMERS or section_of(chapter, PRIMERS[chapter][1]) not in shown[chapter] + [""])]
    exercises_minutes = sum(item.minutes for item in LECTURE.agenda if item.exercises)
    return wrapped(f"The agenda takes {total} of {SESSION_MINUTES} minutes, {exercises_minutes} of them for the "
                   "exercises done in class. "
                   + ("Every item's sections can be read in its minutes. " if not tight else
                      f"Items whose sections take longer to read than their minutes: {'; '.join(tight)}. ")
                   + ("Every reference back to a skipped chapter is covered by a primer the lecture shows."
                      if not uncovered else f"Not covered by a primer: {', '.join(uncovered)}."))
