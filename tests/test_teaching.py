"""The Teaching part: the course plan against the chapters, the lecture path, and the chapter timer.

``book/teaching/course.ipynb`` plans a four-week module from ``book/teaching/course_plan.py``;
these tests check that the plan reads every chapter in sections that exist, assigns every exercise
at the level its title gives and only after its chapter is read, that the 90-minute lecture runs
through its chapters in order with every reference back to a skipped chapter covered by a primer,
and that ``scripts/chapter_times.py`` writes a valid times file (on tiny generated notebooks, not on
the chapters: the lead measures those on a quiet machine).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
TEACHING = ROOT / "book" / "teaching"
COURSE = TEACHING / "course.ipynb"
CHOOSING = TEACHING / "choosing.ipynb"
SCRIPT = ROOT / "scripts" / "chapter_times.py"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


plan = _load("course_plan", TEACHING / "course_plan.py")
chapter_times = plan.chapter_times

#: ``{ref}`label``` and ``{ref}`text <label>```.
REF = re.compile(r"\{ref\}`(?:[^`<]*<)?([\w.:-]+)>?`")
PRF_REF = re.compile(r"\{prf:ref\}`(?:[^`<]*<)?([\w.:-]+)>?`")
DOC = re.compile(r"\{doc\}`(?:[^`<]*<)?([^`<>]+)>?`")
LEVEL_LINE = re.compile(r"^- \*(basic|intermediate|advanced)\*:(.*)$", re.M)


def _markdown(path: Path) -> list[nbformat.NotebookNode]:
    return [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown"]


def _sessions_markdown() -> dict[str, str]:
    """The course page's session blocks by number ("1.1"), from its ``### Week W, session S`` headings."""
    text = "\n".join(cell.source for cell in _markdown(COURSE))
    parts = re.split(r"^### Week (\d), session (\d)", text, flags=re.M)
    return {f"{week}.{session}": body.split("\n## ", 1)[0]
            for week, session, body in zip(parts[1::3], parts[2::3], parts[3::3])}


# --- the table of contents and the introduction ---------------------------------------------------

def test_teaching_part_follows_the_experiments_and_the_methods_precede_the_reference() -> None:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    captions = [part["caption"] for part in toc["parts"]]
    assert captions.index("Experiments") + 1 == captions.index("Teaching")
    assert captions.index("Teaching") + 1 == captions.index("Methods") == captions.index("Reference") - 1
    teaching = next(part for part in toc["parts"] if part["caption"] == "Teaching")
    files = [chapter["file"] for chapter in teaching["chapters"]]
    assert files == ["book/teaching/course", "book/teaching/choosing"]
    assert all((ROOT / f"{name}.ipynb").exists() for name in files)


def test_introduction_names_the_chapters_the_experiments_refer_back_to() -> None:
    order = plan.chapters()
    experiments = order[7:]
    used = {other for chapter in experiments for other in plan.references(chapter) if other not in experiments}
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    sentence = next(s for s in re.split(r"(?<=\.)\s", intro) if "experiment chapters" in s and "build on" in s)
    named = {int(n) for n in re.findall(r"\b\d+\b", sentence.split("experiment chapters", 1)[1])} - {8, 11}
    assert named == {order.index(chapter) + 1 for chapter in used}, (
        f"intro.md says the experiments build on {sorted(named)}; they refer back to {sorted(used)}")
    assert "teaching/course" in intro and "teaching/choosing" in intro


# --- the course plan ------------------------------------------------------------------------------

def _all_readings() -> list[tuple[str, dict]]:
    """Every reading of the plan: each session's (per group) and each lecture item's, by name."""
    found = [(f"{s.number} {group}", reading) for s in plan.SESSIONS for group, reading in s.readings().items()]
    return found + [(f"lecture: {item.what[:30]}", item.shows) for item in plan.LECTURE.agenda if item.shows]


def test_the_sessions_read_every_chapter_in_order() -> None:
    read = [page for session in plan.SESSIONS for reading in session.readings().values() for page in reading
            if page in plan.chapters()]
    assert set(read) == set(plan.chapters()), f"chapters no session reads: {set(plan.chapters()) - set(read)}"
    firsts = list(dict.fromkeys(read))
    assert firsts == plan.chapters(), "the sessions should start the chapters in the book's order"
    assert [s.number for s in plan.SESSIONS] == [f"{w}.{s}" for w in range(1, 5) for s in (1, 2)]


@pytest.mark.parametrize("name, reading", _all_readings(), ids=[name for name, _ in _all_readings()])
def test_every_section_the_plan_names_exists(name: str, reading: dict) -> None:
    for page, sections in reading.items():
        headings, missing = plan.find_sections(page, sections)
        assert not missing, f"{name}: {page} has no section {missing}; update course_plan.py"
        assert plan.words_read(page, sections) > 0


def test_a_chapter_split_over_sessions_is_read_whole() -> None:
    read: dict[str, set[str]] = {}
    for session in plan.SESSIONS:
        for reading in session.readings().values():
            for page, sections in reading.items():
                if page in plan.chapters():
                    read.setdefault(page, set()).update(plan.find_sections(page, sections)[0])
    for chapter, headings in read.items():
        body = {h for h in plan.section_words(chapter) if h and h not in ("Further reading", "Exercises")}
        assert body <= headings | {"Summary"}, f"{chapter}: sections no session reads: {body - headings}"


def test_every_page_a_session_reads_has_its_takeaways_and_self_checks_read() -> None:
    read: dict[str, set[str]] = {}
    for session in plan.SESSIONS:
        for reading in session.readings().values():
            for page, sections in reading.items():
                read.setdefault(page, set()).update([""] + plan.find_sections(page, sections)[0])
    for page, sections in read.items():
        for words in ("Key takeaways", "Check yourself"):
            where = plan.section_of(page, words)
            assert where is None or where in sections, (
                f"{page}'s {words} sit in {where!r}, which no session assigns")


def test_every_exercise_is_assigned_once_at_its_level_after_its_chapter() -> None:
    exercises = plan.exercises()
    assert len(exercises) >= 30, f"found only {len(exercises)} exercises in the chapters"
    blocks = _sessions_markdown()
    assert sorted(blocks) == [s.number for s in plan.SESSIONS], f"session headings: {sorted(blocks)}"
    assigned: dict[str, str] = {}
    read_so_far: set[str] = set()
    for session in plan.SESSIONS:
        read_so_far |= session.pages()
        homework = [(level, label) for level, line in LEVEL_LINE.findall(blocks[session.number])
                    for label in REF.findall(line)]
        in_class = [(None, label) for item in session.agenda for label in item.exercises]
        for level, label in homework + in_class:
            assert label in exercises, f"session {session.number} names {label!r}, which is no exercise"
            assert level is None or exercises[label]["level"] == level, (
                f"session {session.number} lists {label!r} as {level}; its title says {exercises[label]['title']!r}")
            assert exercises[label]["chapter"] in read_so_far, (
                f"session {session.number} sets {label!r} before its chapter {exercises[label]['chapter']} is read")
            assert label not in assigned, f"{label!r} is set in sessions {assigned[label]} and {session.number}"
            assigned[label] = session.number
        for _, label in in_class:
            assert REF.search(blocks[session.number]) and label in REF.findall(blocks[session.number]), (
                f"session {session.number}'s text does not name its in-class exercise {label!r}")
    assert set(assigned) == set(exercises), f"exercises no session sets: {sorted(set(exercises) - set(assigned))}"


def test_no_session_assigns_more_than_its_minutes() -> None:
    times = plan.chapter_times.read_times(plan.chapter_times.OUT)
    assert times is not None, "the committed chapter-times file is missing"
    for session in plan.SESSIONS:
        for group, words in plan.session_words(session, times).items():
            assert words is not None and plan.minutes(words) <= plan.READING_MINUTES, (
                f"session {session.number} ({group}) assigns {words} words, {plan.minutes(words):.0f} minutes")
        assert sum(item.minutes for item in session.agenda) == plan.SESSION_MINUTES, session.number
    assert "Every session assigns at most" in plan.budget_line(times)


def test_reading_time_counts_what_the_sections_show() -> None:
    times = plan.chapter_times.read_times(plan.chapter_times.OUT)
    for page in plan.pages():
        counts = times["chapters"][page].get("output_words")
        assert counts is not None and set(counts) == set(plan.section_words(page)), (
            f"{page}: output_words counted for other sections; rerun scripts/chapter_times.py --chapters {page}")
    for chapter in ("08_circle", "09_mixture", "10_point_clouds", "11_attention"):
        opening = plan.shown_words(chapter, [], times)
        assert opening > 50, f"{chapter}: its result box shows only {opening} words"
        assert plan.reading_words({chapter: plan.ALL}, times) > plan.words_read(chapter, plan.ALL) + opening


def test_output_words_counts_outputs_and_captions_by_section_and_skips_hidden_cells() -> None:
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Title\n\nOpening words."),
        nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output("stream", name="stdout", text="one two\n")]),
        nbformat.v4.new_markdown_cell("## First\n\nText."),
        nbformat.v4.new_code_cell("t", outputs=[nbformat.v4.new_output(
            "display_data", data={"text/html": "<style>p {x: y}</style><table><tr><td>a b</td><td>$x_i$</td></tr></table>",
                                  "text/plain": "<Table object repr with many words>"})]),
        nbformat.v4.new_code_cell("f", metadata={"mystnb": {"figure": {"caption": "A caption of five words"}}},
                                  outputs=[nbformat.v4.new_output("display_data",
                                                                  data={"image/png": "iVBOR", "text/plain": "<Figure>"})]),
        nbformat.v4.new_code_cell("h", metadata={"tags": ["remove-output"]},
                                  outputs=[nbformat.v4.new_output("stream", name="stdout", text="hidden words\n")]),
        nbformat.v4.new_markdown_cell("## Second"),
    ])
    assert chapter_times.output_words(notebook) == {"": 2, "First": 3 + 5, "Second": 0}


def test_a_project_decides_with_its_seeds_even_when_one_seed_dissents() -> None:
    from setfuncs.experiments.paired import holm, sign_flip_test

    for project in plan.PROJECTS:
        def adjusted(n: int) -> float:
            d = [1.0] * (n - 1) + [-0.5]
            p = sign_flip_test(d, "greater") * project.sides
            return float(holm([p] * project.comparisons)[0])
        n = project.seeds()
        assert adjusted(n) <= plan.ALPHA < adjusted(n - 1), (project.number, n)


def test_every_project_trains_configurations_its_experiment_has_and_its_time_was_measured() -> None:
    import importlib

    measured = plan.project_times()
    assert measured is not None, "results/benchmarks/project-times.json is missing: run scripts/project_times.py"
    for project in plan.PROJECTS:
        experiment = importlib.import_module(f"setfuncs.experiments.{project.experiment}").EXPERIMENT
        assert set(project.configurations) <= set(experiment.configurations), project.number
        entry = measured["projects"].get(str(project.number))
        assert entry and entry["status"] == "ok", f"project {project.number} has no measured time"
        assert entry["command"] == project.command(), (
            f"project {project.number} was timed with another command: rerun scripts/project_times.py --projects "
            f"{project.number}")
        assert entry["runs"] == project.seeds() * len(project.configurations) and entry["seconds"] > 0
    assert all(row["seconds"] is not None for row in plan.project_rows(measured))


def test_exercises_are_named_by_their_titles() -> None:
    # A {ref} to an exercise renders its number, which differs between the HTML book, the PDF and
    # JupyterLab; the teaching pages give the title (without its level) as the link's text instead.
    exercises = plan.exercises()
    for path in (COURSE, CHOOSING):
        text = "\n".join(cell.source for cell in _markdown(path))
        for match in re.finditer(r"\{ref\}`(?:(?P<text>[^`<]*?)\s*<)?(?P<label>[\w.:-]+)>?`", text):
            if match.group("label") in exercises:
                title = re.sub(r"\s*—\s*(basic|intermediate|advanced)\s*$", "", exercises[match.group("label")]["title"])
                assert match.group("text") == title, f"{path.name}: {match.group(0)} should read {title!r}"


def test_every_reference_of_the_teaching_pages_resolves() -> None:
    labels = set(plan.labels()) | {label for path in (COURSE, CHOOSING) for cell in _markdown(path)
                              for label in re.findall(r"^\(([\w.:-]+)\)=", cell.source, re.M)}
    for path in (COURSE, CHOOSING):
        text = "\n".join(cell.source for cell in _markdown(path))
        targets = REF.findall(text) + PRF_REF.findall(text)
        assert targets, f"{path.name} refers to nothing"
        missing = [t for t in targets if t not in labels]
        assert not missing, f"{path.name} refers to labels that exist nowhere: {missing}"
        for doc in DOC.findall(text):
            assert (path.parent / f"{doc}.ipynb").exists() or (path.parent / f"{doc}.md").exists(), (
                f"{path.name}: {{doc}} {doc!r} names no page")


def test_teaching_notebooks_are_clean_with_unique_cell_ids() -> None:
    for path in (COURSE, CHOOSING):
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
        code = [cell for cell in notebook.cells if cell.cell_type == "code"]
        assert all(cell.outputs == [] and cell.execution_count is None for cell in code), f"{path.name} has outputs"
        ids = [cell.id for cell in notebook.cells]
        assert len(ids) == len(set(ids)), f"{path.name}: duplicate cell ids"
        assert "widgets" not in notebook.metadata
        raw = path.read_text(encoding="utf-8")
        assert raw == json.dumps(json.loads(raw), indent=1, ensure_ascii=False) + "\n", f"{path.name}: not indent=1"


# --- the lecture ----------------------------------------------------------------------------------

def test_the_lecture_runs_through_chapters_1_2_4_9_in_order() -> None:
    path, _ = plan.lecture_path()
    order = plan.chapters()
    assert [order.index(c) + 1 for c in path] == [1, 2, 4, 9]
    course = "\n".join(cell.source for cell in _markdown(COURSE))
    assert "chapters 1, 2, 4 and 9, in this order" in course
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    teaching = readme.split("## Teaching with this book", 1)[1].split("\n## ", 1)[0]
    assert "Chapters 1, 2 and 4, then 9" in teaching


def test_the_lecture_fits_its_90_minutes_with_two_exercises_in_class() -> None:
    times = plan.chapter_times.read_times(plan.chapter_times.OUT)
    assert sum(item.minutes for item in plan.LECTURE.agenda) <= plan.SESSION_MINUTES
    assert len([item for item in plan.LECTURE.agenda if item.exercises]) >= 2
    for row in plan.lecture_rows(times):
        assert row["reading"] is None or row["reading"] <= row["minutes"], row
    assert "Every item's sections can be read in its minutes" in " ".join(plan.lecture_line(times).split())


def test_the_lecture_shows_the_collapse_and_chapter_2_without_its_proofs() -> None:
    _, shown = plan.lecture_path()
    section = "Live: the same model with LSE and with log-mean-exp"
    assert section in plan.find_sections("09_mixture", shown["09_mixture"])[0]
    cells, current, calls = nbformat.read(plan.BOOK / "09_mixture.ipynb", as_version=4).cells, "", []
    for cell in cells:
        if cell.cell_type == "markdown":
            current = next((line[3:].strip() for line in reversed(cell.source.splitlines())
                            if line.startswith("## ")), current)
        elif cell.cell_type == "code" and current == section:
            calls.append(cell.source)
    joined = "\n".join(calls)
    assert "train_lse_pair" in joined and "collapse_lines" in joined, "the collapse is not in the section shown"
    text = plan._section_markdown("02_sum_decomposition", shown["02_sum_decomposition"])
    assert "{prf:theorem}" in text and "{prf:proof}" not in text, "the lecture shows chapter 2's proofs"


def test_every_reference_back_to_a_skipped_chapter_is_covered_by_a_primer_the_lecture_shows() -> None:
    path, shown = plan.lecture_path()
    for chapter, skipped in plan.skipped_before(path, shown).items():
        if not skipped:
            continue
        assert chapter in plan.PRIMERS, f"{chapter} refers back to {sorted(skipped)}, which the lecture skips, " \
                                        "and has no primer"
        covers, words = plan.PRIMERS[chapter]
        assert set(skipped) <= {covers}, f"{chapter}'s primer covers {covers}, it refers back to {sorted(skipped)}"
        section = plan.section_of(chapter, words)
        assert section is not None, f"{chapter} has no primer {words!r}"
        headings, _ = plan.find_sections(chapter, shown[chapter])
        assert section == "" or section in headings, f"{chapter}'s primer sits in {section!r}, which the lecture skips"


def test_skipped_before_finds_a_reference_back() -> None:
    # Chapter 4 cites chapter 3's corollary: a path without chapter 3 must see it.
    assert "03_sum_isomorphism" in plan.skipped_before(["01_sets", "04_logsumexp"])["04_logsumexp"]
    assert plan.skipped_before(["03_sum_isomorphism", "04_logsumexp"])["04_logsumexp"].get("03_sum_isomorphism") is None


# --- reading time ---------------------------------------------------------------------------------

def _notebook(*markdown: str, code: str = "x = 1") -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(m) for m in markdown]
                                    + [nbformat.v4.new_code_cell(code)])


def test_prose_words_counts_prose_and_leaves_out_code_maths_solutions_and_answers() -> None:
    notebook = _notebook(
        "# Title here\n\nOne two three $x_i$ four.\n\n$$\na + b = c\n$$\n\n(some-label)=\n## Section two",
        "```python\nnot counted at all\n```\n\n```{exercise} Exercise title — basic\n:label: ex-x\n\nShow it now.\n```\n\n"
        "````{solution} ex-x\n:class: dropdown\n\nHidden words here\n```python\nmore\n```\n````",
        ":::{admonition} Check yourself\n:class: self-check\n1. Why so?\n:::\n\n"
        ":::{admonition} Answers\n:class: dropdown self-check-answers\n1. Because secret.\n:::\n\n"
        "```{math}\n\\sum_i x_i\n```\n<!-- a comment with words -->\n## Exercises")
    # Title here (2) + One two three x four (5) + Section two (2) + Exercise title basic (3; the dash is
    # no word) + Show it now (3) + Check yourself (2) + 1. Why so (3) + Exercises (1)
    assert chapter_times.prose_words(notebook) == 2 + 5 + 2 + 3 + 3 + 2 + 3 + 1
    sections = chapter_times.section_words(notebook)
    assert list(sections) == ["", "Section two", "Exercises"]
    assert sections[""] == 7 and sum(sections.values()) == chapter_times.prose_words(notebook)


def test_reading_times_of_the_chapters_are_positive_and_add_up() -> None:
    for chapter in plan.chapters():
        sections = plan.section_words(chapter)
        assert sum(sections.values()) == chapter_times.prose_words(plan.BOOK / f"{chapter}.ipynb") > 300
        assert "Exercises" in sections, f"{chapter} has no Exercises section"


# --- running time ---------------------------------------------------------------------------------

def _tiny_book(folder: Path) -> Path:
    folder.mkdir()
    ok = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Tiny"), nbformat.v4.new_code_cell(
        "import os\nassert os.environ['OMP_NUM_THREADS'] == '1', os.environ['OMP_NUM_THREADS']\nprint(1 + 1)")])
    fails = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("raise RuntimeError('on purpose')")])
    nbformat.write(ok, folder / "01_tiny.ipynb")
    nbformat.write(fails, folder / "02_fails.ipynb")
    nbformat.write(ok, folder / "notes.ipynb")           # not a chapter (no NN_ prefix): never run
    return folder


def test_chapter_times_writes_a_valid_file_and_records_a_failed_chapter(tmp_path: Path) -> None:
    book = _tiny_book(tmp_path / "book")
    before = (book / "01_tiny.ipynb").read_text(encoding="utf-8")
    out = tmp_path / "times.json"
    env = {**os.environ, "OMP_NUM_THREADS": "4"}        # the script must give each kernel one thread anyway
    done = subprocess.run([sys.executable, str(SCRIPT), "--book", str(book), "--out", str(out), "--timeout", "120"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 1, f"one chapter fails, so the exit status is 1:\n{done.stdout}\n{done.stderr}"
    data = chapter_times.read_times(out)
    assert chapter_times.check_times(data) == []
    assert list(data["chapters"]) == ["01_tiny", "02_fails"]
    tiny, fails = data["chapters"]["01_tiny"], data["chapters"]["02_fails"]
    assert tiny["status"] == "ok" and 0 < tiny["seconds"] < 120
    assert fails["status"] == "failed" and "RuntimeError" in fails["error"] + done.stdout
    for entry in (tiny, fails):
        assert isinstance(entry["load_before"], float) and isinstance(entry["load_after"], float)
    prov = data["provenance"]
    assert prov["threads"] == {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert {"nbclient", "torch", "python"} <= set(prov["versions"]) and prov["hardware"]["cpu_count"]
    assert prov["command"][1].endswith("chapter_times.py") and "--book" in prov["command"]
    assert (book / "01_tiny.ipynb").read_text(encoding="utf-8") == before, "the script changed a notebook"


def test_chapter_times_runs_only_the_chapters_named(tmp_path: Path) -> None:
    book = _tiny_book(tmp_path / "book")
    out = tmp_path / "times.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "--book", str(book), "--out", str(out), "--chapters", "01_tiny"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert list(json.loads(out.read_text(encoding="utf-8"))["chapters"]) == ["01_tiny"]
    wrong = subprocess.run([sys.executable, str(SCRIPT), "--book", str(book), "--out", str(out), "--chapters", "99_x"],
                           capture_output=True, text=True, timeout=300)
    assert wrong.returncode == 2 and "01_tiny" in wrong.stderr, "an unknown chapter should be refused, naming the chapters"


@pytest.mark.parametrize("held", [{"chapters": {"01_tiny": {}, "02_fails": {}}}, "not json"])
def test_chapter_times_does_not_drop_the_times_of_chapters_it_does_not_run(tmp_path: Path, held,
                                                                         capsys: pytest.CaptureFixture) -> None:
    book = _tiny_book(tmp_path / "book")
    out = tmp_path / "times.json"
    out.write_text(held if isinstance(held, str) else json.dumps(held))
    before = out.read_text()
    with pytest.raises(SystemExit) as stopped:
        chapter_times.main(["--book", str(book), "--out", str(out), "--chapters", "01_tiny"])
    error = capsys.readouterr().err
    assert stopped.value.code == 2 and str(out) in error and "pass another --out" in error
    assert ("02_fails" in error) if isinstance(held, dict) else ("not a chapter-times file" in error)
    assert "01_tiny," not in error and out.read_text() == before


def test_read_times_refuses_a_file_without_what_the_page_needs(tmp_path: Path) -> None:
    assert chapter_times.read_times(tmp_path / "missing.json") is None
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"provenance": {}, "chapters": {"01_sets": {"seconds": -1, "status": "ok"}}}))
    with pytest.raises(ValueError, match="chapter_times.py"):
        chapter_times.read_times(bad)
    problems = chapter_times.check_times({"provenance": {}, "chapters": {"01_sets": {"seconds": -1, "status": "ok"}}})
    assert any("lacks" in p for p in problems) and any("git_commit" in p for p in problems)


def test_course_page_names_the_command_when_the_times_file_is_missing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(chapter_times, "OUT", tmp_path / "results" / "benchmarks" / "chapter-times.json")
    monkeypatch.setattr(plan, "ROOT", tmp_path)
    cell = next(c for c in nbformat.read(COURSE, as_version=4).cells if c.get("id") == "course-imports")
    printed, namespace = io.StringIO(), {}
    with contextlib.redirect_stdout(printed):
        exec(compile(cell.source, "course-imports", "exec"), namespace)
    text = printed.getvalue()
    assert "results/benchmarks/chapter-times.json is missing" in text and chapter_times.COMMAND in text
    assert len(namespace["rows"]) == len(plan.pages())
    assert all(row["seconds"] is None and row["shown"] is None and row["prose"] > 0
               for row in namespace["rows"]), "no time may be made up"
