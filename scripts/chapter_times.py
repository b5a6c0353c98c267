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
executed notebooks are thrown away: the committed chapters stay clean. An ``--out`` file that holds
chapters this run would not measure again is refused (exit status 2), not overwritten: every
chapter prints its time from the committed file. Run it on a quiet machine::

    python scripts/chapter_times.py                        # every chapter of book/
    python scripts/chapter_times.py --chapters 01_sets --out some.json   # only some, into another file

**Reading time.** :func:`prose_words` counts the words a reader reads in a chapter's Markdown
cells: code blocks, display maths, the exercises' solutions, the answers to the self-check
questions, directive options, labels and HTML comments are left out, inline maths counts as one word. The course plan divides it by a stated
reading rate.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from datetime import datetime, timezone
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


def chapters(book: Path = BOOK) -> list[Path]:
    """The chapter notebooks of ``book`` (``NN_name.ipynb``), in order."""
    return sorted(path for path in book.glob("*.ipynb") if re.match(r"\d\d_", path.name))


# --- running time -------------------------------------------------------------------------------

def load_average() -> float | None:
    """The machine's 1-minute load average (None where the platform has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def run_chapter(path: Path, timeout: int) -> dict:
    """Execute the notebook at ``path`` in a fresh kernel (its folder as the working directory) and
    return its entry: seconds, load averages before and after, date, status (and error)."""
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    entry = {"load_before": load_average(), "date": _now()}
    start = time.perf_counter()
    try:
        NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        entry["status"] = "ok"
    except Exception as error:  # noqa: BLE001 - recorded, and the other chapters still run
        entry["status"] = "failed"
        # A cell's error carries its exception's name and message; anything else, its own message.
        name, value = getattr(error, "ename", type(error).__name__), getattr(error, "evalue", str(error))
        entry["error"] = f"{name}: {(str(value).strip().splitlines() or [''])[0]}"[:300]
    entry["seconds"] = round(time.perf_counter() - start, 1)
    entry["load_after"] = load_average()
    return entry


def provenance() -> dict:
    """The command, git commit, versions, hardware, budget, threads and date of this run."""
    sys.path.insert(0, str(ROOT))
    from setfuncs.experiments.provenance import environment

    found = environment(nbclient=version("nbclient"), ipykernel=version("ipykernel"))
    found["command"] = [COMMAND.split()[0], *sys.argv]
    found["budget"] = os.environ.get("SETFUNCS_BUDGET", "quick")
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


def _dropped_chapters(path: Path, names: list[str]) -> list[str]:
    """The chapters whose times the file at ``path`` holds and a run of ``names`` would not write again
    (an empty list where the file does not exist; a file that is not a chapter-times file counts as
    holding something, ``"its contents"``, so that it is not overwritten either)."""
    if not path.exists():
        return []
    try:
        held = json.loads(path.read_text(encoding="utf-8"))["chapters"]
        return [name for name in held if name not in names]
    except (ValueError, KeyError, TypeError):
        return ["its contents (not a chapter-times file)"]


def write_times(data: dict, path: Path) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--book", type=Path, default=BOOK, help="the folder of the chapter notebooks (default: book/)")
    parser.add_argument("--chapters", nargs="+", metavar="NAME",
                        help="only these chapters, by file name without .ipynb (e.g. 01_sets); default: all")
    parser.add_argument("--out", type=Path, default=OUT, help=f"the JSON file to write (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds a cell may run (default: 1800)")
    args = parser.parse_args(argv)

    available = {path.stem: path for path in chapters(args.book)}
    if not available:
        parser.error(f"no chapter notebooks (NN_name.ipynb) in {args.book}")
    unknown = [name for name in args.chapters or () if name not in available]
    if unknown:
        parser.error(f"no chapter {unknown} in {args.book}; chapters: {', '.join(available)}")
    selected = [available[name] for name in args.chapters] if args.chapters else list(available.values())
    dropped = _dropped_chapters(args.out, [path.stem for path in selected])
    if dropped:
        parser.error(f"{args.out} holds the times of {', '.join(dropped)}, which this run would drop (the file "
                     f"holds the chapters of one run): pass another --out, or measure every chapter (no --chapters)")

    os.environ.update(THREADS)           # kernels inherit this process's environment
    data = {"provenance": provenance(), "chapters": {}}
    for path in selected:
        entry = run_chapter(path, args.timeout)
        data["chapters"][path.stem] = entry
        print(f"{path.stem}: {entry['status']}, {entry['seconds']:.1f} s (load {entry['load_before']} -> "
              f"{entry['load_after']})" + (f": {entry['error']}" if "error" in entry else ""), flush=True)
        write_times(data, args.out)      # after every chapter: an interrupted run keeps what it has
    print(f"wrote {args.out}")
    return 0 if all(entry["status"] == "ok" for entry in data["chapters"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
