"""Reading and running time of the book's chapters, for the course plan (``book/teaching/course.ipynb``).

**Running time.** Executes each chapter notebook of ``book/`` in a fresh kernel (nbclient), one
at a time, with one thread per kernel (``OMP_NUM_THREADS=1``, ``MKL_NUM_THREADS=1``) and the
chapters' default budget unless ``SETFUNCS_BUDGET`` says otherwise, and writes the wall seconds of
each, with provenance, to ``results/benchmarks/chapter-times.json``:

* ``provenance``: the command, the git commit, the package versions (nbclient included), the
  hardware, the budget, the thread setting and the date of the run;
* ``chapters``: for each chapter its ``seconds`` (kernel start to last cell), the 1-minute load
  average of the machine just before and just after it (``load_before``, ``load_after``: a
  loaded machine makes the times longer, and these say by how much it was loaded), when it ran
  (``date``) and ``status`` (``"ok"``, or ``"failed"`` with the ``error``'s first line).

A chapter that fails is recorded and the others still run; the exit status is then 1. The
executed notebooks are thrown away: the committed chapters stay clean.

**Nothing lost.** Each chapter's entry goes into the existing ``--out`` file as soon as it is
timed: the file is read, only that chapter's entry is replaced (the others stay as they are, with
their own ``date``; entries written since this rule also carry their ``git_commit``), the
provenance becomes this run's, and the file is replaced
atomically (a temporary file, then :func:`os.replace`). A run killed or interrupted (Ctrl-C,
SIGTERM) while it times a chapter leaves that chapter's earlier entry as it was and exits with
status 130, saying so. An ``--out`` that is not a chapter-times file is refused (exit status 2),
not overwritten, and so is a run whose budget or machine differs from the times it would keep
beside its own. The budget is ``SETFUNCS_BUDGET`` as the chapters read it
(:func:`setfuncs.budget.budget`: ``FULL`` is ``full``, an unknown name is refused). Run it on a
quiet machine::

    python scripts/chapter_times.py                        # every chapter of book/
    python scripts/chapter_times.py --chapters 01_sets --out some.json   # only some, into another file

**Reading time.** :func:`prose_words` counts the words a reader reads in a chapter's Markdown
cells: code blocks, display maths, the exercises' solutions, the answers to the self-check
questions, directive options, labels and HTML comments are left out, inline maths counts as one word.
What a chapter *shows* is read too: the result box, the tables, the printed lines and the figures'
captions. :func:`output_words` counts them per section in the executed notebook, and each
chapter's entry keeps them as ``output_words`` (``{section: words}``, the sections of
:func:`section_words`), since the committed chapters carry no outputs. The course plan adds the two
and divides by a stated reading rate.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import time
from datetime import datetime, timezone
from html.parser import HTMLParser
from importlib.metadata import version
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
#: Where the times are written, and where the course plan reads them.
OUT = ROOT / "results" / "benchmarks" / "chapter-times.json"
#: The command the course plan names when the file is missing.
COMMAND = "python scripts/chapter_times.py"
#: The keys every chapter's entry has.
CHAPTER_KEYS = ("seconds", "load_before", "load_after", "date", "status")
#: The per-kernel thread setting (the README's one thread per kernel).
THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

# --- reading time -------------------------------------------------------------------------------

#: The opening line of a fenced block: its fence (3+ backticks, tildes or colons) and what follows.
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
#: Fenced blocks whose body is prose (MyST directives that hold text).
_PROSE_DIRECTIVES = re.compile(r"^\{(exercise|prf:\w+|admonition|note|tip|important|warning|caution|attention|"
                               r"hint|seealso|dropdown|figure|margin|sidebar|epigraph|topic|glossary)\}")
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE_MATH = re.compile(r"\$[^$\n]+\$")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_OPTION = re.compile(r"^[ \t]*:[\w-]+:.*$")
_LABEL = re.compile(r"^\([\w.:-]+\)=\s*$")
_WORD = re.compile(r"\w")
#: The class of the folded answers to a chapter's self-check questions (left out, like solutions).
_ANSWERS = re.compile(r"^:class:.*\bself-check-answers\b", re.M)


def _options(lines: list[str], start: int) -> str:
    """The option lines (``:name: value``) that follow a directive's opening line at ``start - 1``."""
    found = []
    for line in lines[start:]:
        if not _OPTION.match(line):
            break
        found.append(line.strip())
    return "\n".join(found)


def _prose_lines(text: str) -> list[str]:
    """``text`` without its code blocks, display-maths blocks, solutions and answers to self-checks:
    the lines of prose, directive bodies that hold prose (exercises, proofs, admonitions) kept,
    their options dropped."""
    lines = text.splitlines()
    kept: list[str] = []
    closing: list[str] = []                    # the fences of the open prose directives
    skipping_until: str | None = None          # the fence of the skipped block we are in
    for i, line in enumerate(lines):
        if skipping_until is not None:
            bare = line.strip()
            if bare and set(bare) == {skipping_until[0]} and len(bare) >= len(skipping_until):
                skipping_until = None
            continue
        fence = _FENCE.match(line)
        if fence:
            info = fence.group("info").strip()
            if closing and fence.group("fence")[0] == closing[-1][0] and len(fence.group("fence")) >= len(
                    closing[-1]) and not info:
                closing.pop()                  # the end of a prose directive
                continue
            if _PROSE_DIRECTIVES.match(info) and not _ANSWERS.search(_options(lines, i + 1)):
                closing.append(fence.group("fence"))
                kept.append(info.split("}", 1)[1])   # a directive's title is prose
                continue
            skipping_until = fence.group("fence")    # code, maths, a solution, answers or another directive
            continue
        if _OPTION.match(line) or _LABEL.match(line):
            continue
        kept.append(line)
    return kept


def _reading_lines(source: str) -> list[str]:
    """The lines of a Markdown cell's ``source`` that a reader reads, maths replaced by ``x``."""
    text = "\n".join(_prose_lines(_COMMENT.sub(" ", source)))
    return _INLINE_MATH.sub(" x ", _DISPLAY_MATH.sub(" ", text)).splitlines()


def _words(line: str) -> int:
    return sum(1 for token in line.split() if _WORD.search(token))


def _markdown_sources(notebook: Path | dict) -> list[str]:
    nb = nbformat.read(notebook, as_version=4) if isinstance(notebook, (str, Path)) else notebook
    return ["".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for cell in nb["cells"] if cell["cell_type"] == "markdown"]


def prose_words(notebook: Path | dict) -> int:
    """The number of words a reader reads in the Markdown cells of ``notebook`` (a path or a loaded
    notebook): prose, headings, the exercises' statements and the statements and proofs of theorems;
    not code blocks, display maths (``$$ … $$`` and ``{math}`` blocks), solutions, the answers to
    self-check questions (class ``self-check-answers``), directive options, labels or HTML comments. Inline maths (``$x_i$``) and a role with its target count as one word."""
    return sum(_words(line) for source in _markdown_sources(notebook) for line in _reading_lines(source))


def section_words(notebook: Path | dict) -> dict[str, int]:
    """:func:`prose_words` split by the chapter's sections: ``{heading: words}`` for every ``##``
    heading, in order, its ``###`` subsections included; ``""`` holds what comes before the first
    ``##`` (the title and the chapter's opening). The values add up to :func:`prose_words`."""
    sections = {"": 0}
    current = ""
    for source in _markdown_sources(notebook):
        for line in _reading_lines(source):
            if line.startswith("## "):
                current = line[3:].strip()
                sections.setdefault(current, 0)
            sections[current] += _words(line)
    return sections


class _Text(HTMLParser):
    """The text of an HTML fragment, without the contents of ``<style>`` and ``<script>``."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self._skipping += tag in ("style", "script")

    def handle_endtag(self, tag: str) -> None:
        self._skipping -= tag in ("style", "script") and self._skipping > 0

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def _html_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    parser.close()
    return " ".join(parser.parts)


#: Tags of cells the rendered book does not show (their outputs are not read).
_HIDDEN = {"remove-cell", "remove-output"}


def _output_text(output: dict) -> str:
    """What a reader reads of one cell output: a stream's text, an HTML table's or a Markdown
    box's text, or plain text that stands for nothing else; a figure's image and a widget's
    Python stand-in (``VBox(...)``) are not read."""
    if output.get("output_type") == "stream":
        text = output.get("text", "")
        return "".join(text) if isinstance(text, list) else text
    data = output.get("data", {})
    def joined(key: str) -> str:
        value = data[key]
        return "".join(value) if isinstance(value, list) else value
    if "text/html" in data:
        return _html_text(joined("text/html"))
    if "text/markdown" in data:
        return joined("text/markdown")
    if any(key.startswith("image/") or "widget" in key for key in data):
        return ""
    return joined("text/plain") if "text/plain" in data else ""


def output_words(notebook: Path | dict) -> dict[str, int]:
    """The words of what an *executed* ``notebook`` shows, by the sections of :func:`section_words`:
    ``{heading: words}`` with ``""`` for the opening; every section of the chapter is a key.

    Counted: the outputs of every code cell the book shows (not ``remove-cell`` or
    ``remove-output``; :func:`_output_text`) and the captions of its figures (a cell's
    ``mystnb.figure.caption``), inline maths as one word as in :func:`prose_words`.
    """
    nb = nbformat.read(notebook, as_version=4) if isinstance(notebook, (str, Path)) else notebook
    sections = {heading: 0 for heading in section_words(nb)}
    current = ""
    for cell in nb["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown":
            for line in _reading_lines(source):
                if line.startswith("## "):
                    current = line[3:].strip()
            continue
        if cell["cell_type"] != "code" or _HIDDEN & set(cell.get("metadata", {}).get("tags", [])):
            continue
        caption = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption", "")
        texts = [caption] + [_output_text(output) for output in cell.get("outputs", [])]
        sections[current] += sum(_words(line) for text in texts
                                 for line in _INLINE_MATH.sub(" x ", text).splitlines())
    return sections


def chapters(book: Path = BOOK) -> list[Path]:
    """The chapter notebooks of ``book`` (``NN_name.ipynb``), in order."""
    return sorted(path for path in book.glob("*.ipynb") if re.match(r"\d\d_", path.name))


def pages(book: Path = BOOK) -> dict[str, Path]:
    """Every page this script times, by name: the chapters (``01_sets``), then the appendices
    (``appendix_testing``) and the teaching pages (``teaching/choosing``), which the course plan
    assigns too; a name is the path below ``book`` without ``.ipynb``."""
    found = chapters(book) + sorted(book.glob("appendix_*.ipynb")) + sorted(book.glob("teaching/*.ipynb"))
    return {path.relative_to(book).with_suffix("").as_posix(): path for path in found}


# --- running time -------------------------------------------------------------------------------

def load_average() -> float | None:
    """The machine's 1-minute load average (None where the platform has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


#: The signals (``"SIGINT"``, ``"SIGTERM"``) that have stopped this run (:func:`_interrupt`).
_STOPPED_BY: list[str] = []


def _interrupt(signum: int, frame: object) -> None:
    """The handler of SIGINT and SIGTERM while :func:`main` times chapters: note the signal, then stop
    as Ctrl-C does, so that the chapter being timed leaves no entry."""
    _STOPPED_BY.append(signal.Signals(signum).name)
    raise KeyboardInterrupt(signal.Signals(signum).name)


def run_chapter(path: Path, timeout: int) -> dict:
    """Execute the notebook at ``path`` in a fresh kernel (its folder as the working directory) and
    return its entry: seconds, load averages before and after, date, status (and error), and the
    words of its outputs by section (:func:`output_words`) where it ran to its end.

    Raises:
        KeyboardInterrupt: Where the run is interrupted (SIGINT, as Ctrl-C sends, or SIGTERM): an
            interrupted chapter has no time. While it executes, nbclient handles both signals
            itself: it shuts the kernel down (and notes that in ``_async_cleanup_kernel_future``),
            and the waiting cell then fails with another error, such as an empty AssertionError;
            that failure is an interruption, not a time. So is a cell that fails with
            ``KeyboardInterrupt`` (the kernel's own Ctrl-C), and any error after :func:`_interrupt`
            has noted a signal.
    """
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    entry = {"load_before": load_average(), "date": _now()}
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    try:
        client.execute()
        entry["status"] = "ok"
    except Exception as error:  # noqa: BLE001 - recorded, and the other chapters still run
        entry["status"] = "failed"
        # A cell's error carries its exception's name and message; anything else, its own message.
        name, value = getattr(error, "ename", type(error).__name__), getattr(error, "evalue", str(error))
        if name == "KeyboardInterrupt" or _signalled(client):
            raise KeyboardInterrupt(*_STOPPED_BY) from error
        entry["error"] = f"{name}: {(str(value).strip().splitlines() or [''])[0]}"[:300]
    except BaseException as error:             # nbclient's cleanup on a signal cancels its tasks
        if _signalled(client) and not isinstance(error, KeyboardInterrupt):
            raise KeyboardInterrupt(*_STOPPED_BY) from error
        raise
    if _signalled(client):
        raise KeyboardInterrupt(*_STOPPED_BY)
    entry["seconds"] = round(time.perf_counter() - start, 1)
    entry["load_after"] = load_average()
    if entry["status"] == "ok":
        entry["output_words"] = output_words(notebook)
    return entry


def _signalled(client: object) -> bool:
    """Whether SIGINT or SIGTERM came while ``client`` (an nbclient ``NotebookClient``) ran: nbclient's
    own handler of both started its cleanup of the kernel, or :func:`_interrupt` noted one."""
    return bool(_STOPPED_BY) or getattr(client, "_async_cleanup_kernel_future", None) is not None


def current_budget() -> str:
    """The budget the chapters run at: ``SETFUNCS_BUDGET`` as :func:`setfuncs.budget.budget` reads it
    (stripped, lower case, one of :data:`setfuncs.budget.BUDGETS`; a ValueError naming the variable
    otherwise)."""
    sys.path.insert(0, str(ROOT))
    from setfuncs.budget import budget

    return budget()


def provenance() -> dict:
    """The command, git commit, versions, hardware, budget (:func:`current_budget`), threads and
    date of this run."""
    sys.path.insert(0, str(ROOT))
    from setfuncs.experiments.provenance import environment

    found = environment(nbclient=version("nbclient"), ipykernel=version("ipykernel"))
    found["command"] = [COMMAND.split()[0], *sys.argv]
    found["budget"] = current_budget()
    found["threads"] = dict(THREADS)
    found["date"] = _now()
    found["memory_gb"] = _memory_gb()
    return found


def _memory_gb() -> float | None:
    meminfo = Path("/proc/meminfo")
    if not meminfo.exists():
        return None
    for line in meminfo.read_text().splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 2**20, 1)
    return None


def check_times(data: dict) -> list[str]:
    """What is wrong with a chapter-times file's contents (an empty list: nothing)."""
    problems = []
    if not isinstance(data, dict) or not isinstance(data.get("chapters"), dict) or not data["chapters"]:
        return ["no 'chapters' table"]
    prov = data.get("provenance")
    if not isinstance(prov, dict):
        problems.append("no 'provenance'")
    else:
        problems += [f"provenance lacks {key!r}" for key in ("command", "git_commit", "versions", "hardware", "date",
                                                              "threads") if key not in prov]
    for name, entry in data["chapters"].items():
        missing = [key for key in CHAPTER_KEYS if key not in entry]
        if missing:
            problems.append(f"{name}: lacks {missing}")
            continue
        if not (isinstance(entry["seconds"], (int, float)) and entry["seconds"] >= 0):
            problems.append(f"{name}: seconds is {entry['seconds']!r}")
        if entry["status"] not in ("ok", "failed"):
            problems.append(f"{name}: status is {entry['status']!r}")
        words = entry.get("output_words")
        if words is not None and not (isinstance(words, dict) and all(
                isinstance(key, str) and isinstance(value, int) and value >= 0 for key, value in words.items())):
            problems.append(f"{name}: output_words is not a table of sections and word counts")
    return problems


def read_times(path: Path = OUT) -> dict | None:
    """The chapter-times file at ``path``, checked; None if it does not exist (a ValueError if it is
    not valid)."""
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    problems = check_times(data)
    if problems:
        raise ValueError(f"{path}: {'; '.join(problems)}; rerun `{COMMAND}`")
    return data


def _held_times(path: Path) -> dict | None:
    """The chapter-times file at ``path`` that this run adds to; None where there is none.

    Raises:
        ValueError: One line naming ``--out`` and the fix, where ``path`` is something else (not
            JSON, or not a valid chapter-times file: :func:`check_times`), which a run would lose.
    """
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        problems = [f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"]
    else:
        problems = check_times(data)
    if problems:
        raise ValueError(f"--out {path} is not a chapter-times file ({'; '.join(problems)}), which this run would "
                         "overwrite: pass another --out, or delete the file yourself")
    return data


def _mismatch(held: dict, found: dict, kept: list[str]) -> str | None:
    """Why this run (provenance ``found``) may not write beside the ``kept`` chapters of the file
    ``held``: another budget or another machine; None where it may (or nothing is kept)."""
    if not kept:
        return None
    theirs = held["provenance"]
    budget = str(theirs.get("budget", "quick")).strip().lower()
    if budget != found["budget"]:
        return f"the {budget} budget, and this run's is {found['budget']} (SETFUNCS_BUDGET)"
    machine = {key: (theirs.get("hardware") or {}).get(key) for key in ("cpu_model", "cpu_count")}
    ours = {key: found["hardware"].get(key) for key in machine}
    if machine != ours:
        return f"a machine with {machine}, and this one has {ours}"
    return None


def write_times(data: dict, path: Path) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, path)


def record_entry(path: Path, chapter: str, entry: dict, found: dict) -> None:
    """Put ``chapter``'s ``entry`` into the chapter-times file at ``path`` (made where missing): read
    it, replace only that chapter's entry (chapters in file-name order), set the provenance to
    ``found`` (this run's), write it atomically (:func:`write_times`)."""
    held = _held_times(path)
    chapters = dict(held["chapters"]) if held else {}
    chapters[chapter] = entry
    write_times({"provenance": found, "chapters": dict(sorted(chapters.items()))}, path)


def main(argv: list[str] | None = None) -> int:
    """Command line: time the chapters; the exit status is 0, 1 (a chapter failed), 2 (a bad argument,
    nothing run) or 130 (interrupted: the chapter being timed keeps its earlier entry)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--book", type=Path, default=BOOK, help="the folder of the chapter notebooks (default: book/)")
    parser.add_argument("--chapters", nargs="+", metavar="NAME",
                        help="only these pages, by their path below book/ without .ipynb (e.g. 01_sets, "
                             "teaching/choosing); default: all")
    parser.add_argument("--out", type=Path, default=OUT,
                        help=f"the JSON file to add the times to (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds a cell may run (default: 1800)")
    args = parser.parse_args(argv)

    if args.out.is_dir():
        parser.error(f"--out {args.out} is a folder; pass the JSON file to write, e.g. --out {args.out / OUT.name}")
    available = pages(args.book)
    if not available:
        parser.error(f"no chapter notebooks (NN_name.ipynb) in {args.book}")
    unknown = [name for name in args.chapters or () if name not in available]
    if unknown:
        parser.error(f"no chapter {unknown} in {args.book}; chapters: {', '.join(available)}")
    selected = [available[name] for name in args.chapters] if args.chapters else list(available.values())
    try:
        current_budget()
        held = _held_times(args.out)
    except ValueError as error:
        parser.error(str(error))
    found = provenance()
    names = {path: name for name, path in available.items()}
    kept = [name for name in (held or {"chapters": {}})["chapters"] if name not in {names[path] for path in selected}]
    mismatch = held and _mismatch(held, found, kept)
    if mismatch:
        parser.error(f"--out {args.out} holds times of {', '.join(kept)} measured at {mismatch}: pass another "
                     "--out, or measure every chapter it holds (no --chapters)")

    os.environ.update(THREADS, SETFUNCS_BUDGET=found["budget"])   # kernels inherit this process's environment
    _STOPPED_BY.clear()
    previous = {number: signal.signal(number, _interrupt) for number in (signal.SIGINT, signal.SIGTERM)}
    statuses, chapter = [], None
    try:
        for path in selected:
            chapter = names[path]
            entry = {**run_chapter(path, args.timeout), "git_commit": found.get("git_commit")}
            for number in previous:                             # nbclient leaves the default handlers
                signal.signal(number, _interrupt)
            record_entry(args.out, chapter, entry, found)      # at once: a killed run keeps what it has
            statuses.append(entry["status"])
            print(f"{chapter}: {entry['status']}, {entry['seconds']:.1f} s (load {entry['load_before']} -> "
                  f"{entry['load_after']})" + (f": {entry['error']}" if "error" in entry else ""), flush=True)
            chapter = None
    except KeyboardInterrupt:
        where = (f"while timing {chapter}: its earlier entry in {args.out} is kept as it was" if chapter else
                 f"between chapters: {args.out} holds every chapter timed so far")
        print(f"interrupted {where}; {len(statuses)} chapter(s) of this run were written", file=sys.stderr, flush=True)
        return 130
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    print(f"wrote {args.out}")
    return 0 if all(status == "ok" for status in statuses) else 1


if __name__ == "__main__":
    sys.exit(main())
