"""The student edition (``make student``, ``scripts/student_edition.py``) has no solutions anywhere.

The stripping is tested on made-up notebooks and pages with every form of solution the book uses;
the build on the introduction and one chapter, without execution: no file of the output (pages,
``_sources``, ``.ipynb`` downloads, search index) holds a solution's text, every exercise is there,
and the launch buttons are gone. The teacher-only course page leaves the table of contents and the
sources, and every reference to it becomes plain text (made-up pages, and the whole book's stripped
copy); the check after the build finds teacher-only words. Every chapter of the book is checked to hash in jupyter-cache
like its stripped copy, so the student edition reads the book's executed chapters.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn
from script_modules import load_script

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "book/03_sum_isomorphism.ipynb"
#: Text of CHAPTER's solutions (prose, and code inside a four-backtick solution) ...
SOLUTION_TEXT = ["geometric = sf.SumIsomorphic(g, g_inv)", "not a member of the formula",
                 "must be handled on its own", "Any population and its duplicate"]
#: ... and of its exercises.
EXERCISE_TEXT = ["Build the geometric mean as a sum in disguise", "Is it a good aggregation for a Deep Set?"]

PAGE = """\
# A page

```{exercise} Doubling — basic
:label: ex-double

Double $x$.
```

```{solution} ex-double
:class: dropdown

SECRET-BACKTICKS: $2x$.
```

````{solution} ex-double
:class: dropdown

SECRET-NESTED:

```python
print("SECRET-CODE")
```
````

:::{solution} ex-double
SECRET-COLONS
:::

Text between the blocks stays.

~~~{solution} ex-double
SECRET-TILDES
~~~

```{solution} ex-double
SECRET-AT-THE-END
```
"""


student_edition = load_script("student_edition")


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _notebook_text(notebook: nbformat.NotebookNode) -> str:
    return _flat("\n".join(cell.source for cell in notebook.cells))


def _toc(tmp_path: Path) -> Path:
    """A table of contents with the introduction and CHAPTER."""
    toc = tmp_path / "toc.yml"
    toc.write_text(f"format: jb-book\nroot: book/intro\nchapters:\n  - file: {CHAPTER[:-6]}\n", encoding="utf-8")
    return toc


def _visible(path: Path) -> str:
    """What a reader gets from ``path``: a page's text, a notebook's cells, any other file as is."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".html":
        return _flat(html.unescape(re.sub(r"<[^>]+>", "", raw)))
    if path.suffix == ".ipynb":
        return _notebook_text(nbformat.reads(raw, as_version=4))
    return _flat(raw)


def test_a_page_keeps_its_exercise_and_text_and_loses_every_solution() -> None:
    stripped = student_edition.strip_solutions(PAGE, "page.md")
    assert "SECRET" not in stripped and "{solution" not in stripped
    assert "```{exercise} Doubling — basic" in stripped and "Double $x$." in stripped
    assert "Text between the blocks stays." in stripped
    assert stripped.endswith("stays.\n") and "\n\n\n" not in stripped


def test_a_solution_that_never_closes_runs_to_the_end_of_its_cell() -> None:
    text = "```{exercise}\nAsk.\n```\n\n```{solution} ex\n:class: dropdown\n\nSECRET\n\n    code\n\nmore"
    assert student_edition.strip_solutions(text, "cell") == "```{exercise}\nAsk.\n```"


def test_a_notebook_loses_solutions_and_solution_only_cells_and_keeps_code() -> None:
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## Exercises\n\n" + PAGE),
        nbformat.v4.new_code_cell('print("```{solution} in a string is code")'),
        nbformat.v4.new_markdown_cell("```{solution} ex-double\n:class: dropdown\n\nSECRET-ALONE\n```"),
        nbformat.v4.new_markdown_cell("After."),
    ])
    stripped = student_edition.strip_notebook(notebook, "made-up.ipynb")
    assert [cell.cell_type for cell in stripped.cells] == ["markdown", "code", "markdown"]
    assert stripped.cells[1] == notebook.cells[1]
    assert "SECRET" not in _notebook_text(stripped) and "Doubling — basic" in _notebook_text(stripped)
    assert "SECRET-ALONE" in _notebook_text(notebook), "the original must stay untouched"


@pytest.mark.parametrize("text", ["```{solution-start} ex\n```\nSECRET\n```{solution-end}\n```",
                                  "```{eval-rst}\n.. solution:: ex\n\n   SECRET\n```"])
def test_solutions_it_cannot_remove_are_errors_that_name_the_file(text: str) -> None:
    with pytest.raises(student_edition.SolutionError, match=r"book/page\.md, cell 3: .*fenced block"):
        student_edition.strip_solutions(text, "book/page.md, cell 3")


@pytest.mark.parametrize("path", sorted((ROOT / "book").glob("*.ipynb")), ids=lambda p: p.name)
def test_every_stripped_chapter_hits_the_books_execution_cache(path: Path, tmp_path: Path) -> None:
    cache = get_cache(tmp_path / "cache")
    notebook = nbformat.read(path, as_version=4)
    stripped = student_edition.strip_notebook(notebook, path.name)
    assert "{solution" not in _notebook_text(stripped)
    assert cache.create_hashed_notebook(stripped)[1] == cache.create_hashed_notebook(notebook)[1]


def test_the_student_configuration_turns_off_what_opens_the_repository(tmp_path: Path) -> None:
    config = {"title": "T", "execute": {"execute_notebooks": "cache"}, "html": {"extra_footer": "MIT."},
              "launch_buttons": {"binderhub_url": "https://mybinder.org"},
              "sphinx": {"config": {"html_static_path": ["_build/static"]}}}
    config["html"]["baseurl"] = "https://owner.github.io/book/"
    student = student_edition.student_config(config, tmp_path, execute=False)
    assert "baseurl" not in student["html"], "a student page must not name the teacher's edition as its canonical page"
    assert not any(student["launch_buttons"].values())
    assert student["html"]["use_repository_button"] is False
    assert student["html"]["extra_footer"] == f"{student_edition.FOOTER_NOTE} MIT."
    assert student["execute"] == {"execute_notebooks": "off", "cache": str(tmp_path)}
    assert student["sphinx"]["config"]["html_static_path"] == [str(ROOT / "_build" / "static")]
    assert config["launch_buttons"]["binderhub_url"], "the book's configuration must stay untouched"


def test_the_built_student_edition_holds_exercises_and_no_solution(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    chapter = _notebook_text(nbformat.read(ROOT / CHAPTER, as_version=4))
    missing = [text for text in SOLUTION_TEXT + EXERCISE_TEXT if _flat(text) not in chapter]
    assert not missing, f"{CHAPTER} no longer says {missing}: pick other text of its solutions and exercises"
    monkeypatch.setattr(student_edition, "BOOK_CACHE", tmp_path / "cache")

    output = student_edition.build(tmp_path / "student", _toc(tmp_path), execute=False)

    assert (tmp_path / "student" / student_edition.MARKER).is_file(), "a later build must find its marker"
    files = [path for path in output.rglob("*") if path.suffix in {".html", ".ipynb", ".md", ".js", ".txt"}]
    leaks = [(str(path.relative_to(output)), text) for path in files for text in SOLUTION_TEXT
             if _flat(text) in _visible(path)]
    assert not leaks, f"solution text in the student edition: {leaks}"
    page, source = output / CHAPTER.replace(".ipynb", ".html"), output / "_sources" / CHAPTER
    for text in EXERCISE_TEXT:
        assert _flat(text) in _visible(page)
        assert _flat(text) in _visible(source)
    assert len(re.findall(r'class="exercise', page.read_text(encoding="utf-8"))) == chapter.count("{exercise}")
    assert not re.search(r"mybinder\.org|colab\.research", page.read_text(encoding="utf-8"))
    assert not (tmp_path / "cache").exists(), "a build without execution must not touch the cache"
    assert json.loads(source.read_text(encoding="utf-8"))["cells"], "the download is a notebook"


def test_the_student_edition_reads_outputs_from_the_books_cache(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The book's chapter, cached with a made-up output, renders that output: nothing executes."""
    notebook = nbformat.read(ROOT / CHAPTER, as_version=4)
    last = [cell for cell in notebook.cells if cell.cell_type == "code"][-1]
    last.outputs = [nbformat.v4.new_output("stream", name="stdout", text="OUTPUT-FROM-THE-CACHE\n")]
    get_cache(tmp_path / "cache").cache_notebook_bundle(CacheBundleIn(notebook, str(ROOT / CHAPTER)),
                                                        check_validity=False)
    monkeypatch.setattr(student_edition, "BOOK_CACHE", tmp_path / "cache")

    output = student_edition.build(tmp_path / "student", _toc(tmp_path), execute=True)

    assert "OUTPUT-FROM-THE-CACHE" in (output / CHAPTER.replace(".ipynb", ".html")).read_text(encoding="utf-8")


# --- what the build may delete --------------------------------------------------------------------

class _Wrote(Exception):
    """Raised by a stand-in for ``write_sources``: the build got as far as writing."""


def _no_writing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the build stop, with :class:`_Wrote`, where it would start writing the sources."""
    def write_sources(*args, **kwargs) -> None:
        raise _Wrote
    monkeypatch.setattr(student_edition, "write_sources", write_sources)


def _tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with its text."""
    return {path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_a_bad_toc_is_refused_before_out_is_deleted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture) -> None:
    """``--out ~/my-thesis --toc /no/such.yml`` used to delete the folder, then fail on the toc."""
    _no_writing(monkeypatch)
    out = tmp_path / "my-thesis"
    (out / "chapters").mkdir(parents=True)
    (out / "chapters" / "one.tex").write_text("my thesis", encoding="utf-8")
    (out / ".student-edition").write_text("even with the marker, nothing goes before the toc is read\n",
                                          encoding="utf-8")
    before = _tree(out)
    with pytest.raises(SystemExit) as stopped:
        student_edition.main(["--out", str(out), "--toc", str(tmp_path / "no" / "such.yml")])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2 and ": error: --toc " in error
    assert "such.yml" in error and "_toc.yml" in error
    assert _tree(out) == before


@pytest.mark.parametrize("name, files", [("my-thesis", {"thesis.tex": "chapter 1"}),
                                         ("results", {"circle.json": "{}"}),
                                         (".git", {"HEAD": "ref: refs/heads/main", "objects/ab": "x"})])
def test_an_existing_folder_without_the_marker_is_refused_and_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture, name: str,
                                                                    files: dict[str, str]) -> None:
    _no_writing(monkeypatch)
    out = tmp_path / name
    for relative, text in files.items():
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        (out / relative).write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        student_edition.main(["--out", str(out), "--no-execute"])
    error = capsys.readouterr().err.strip().splitlines()[-1]       # after argparse's usage
    assert stopped.value.code == 2 and f": error: --out {out} " in error
    assert "empty or new folder" in error and "delete it yourself" in error
    assert _tree(out) == files


@pytest.mark.parametrize("out", [ROOT, ROOT.parent, ROOT / "_build", ROOT / "book"], ids=lambda p: p.name or "/")
def test_the_repository_and_what_holds_the_book_or_its_cache_are_refused(out: Path, monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture) -> None:
    _no_writing(monkeypatch)

    def rmtree(path, *args, **kwargs) -> None:
        raise AssertionError(f"the build tried to delete {path}")
    monkeypatch.setattr(student_edition.shutil, "rmtree", rmtree)      # whatever breaks, nothing goes
    assert not (out / student_edition.MARKER).exists(), f"{out} holds the marker; remove it"
    with pytest.raises(SystemExit) as stopped:
        student_edition.main(["--out", str(out)])
    assert stopped.value.code == 2 and f"--out {out} " in capsys.readouterr().err


def test_a_marked_folder_is_rebuilt_and_a_new_or_empty_one_is_marked(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The build deletes a folder it made before (with the marker) and marks every folder it makes."""
    def write_sources(src: Path, *args, **kwargs) -> None:
        (src / "book").mkdir(parents=True)
        (src / "book" / "page.md").write_text("# Page\n", encoding="utf-8")
    monkeypatch.setattr(student_edition, "write_sources", write_sources)
    monkeypatch.setattr(student_edition.subprocess, "run", lambda command, check: None)
    toc = _toc(tmp_path)
    empty, new = tmp_path / "empty", tmp_path / "new" / "student"
    empty.mkdir()
    for out in (empty, new):
        student_edition.build(out, toc, execute=False)
        assert _tree(out) == {".student-edition": student_edition.MARKER_TEXT, "src/book/page.md": "# Page\n"}
    (new / "src" / "stale.md").write_text("from the last build", encoding="utf-8")
    student_edition.build(new, toc, execute=False)
    assert "src/stale.md" not in _tree(new) and (new / student_edition.MARKER).is_file()


# --- the teacher-only pages ---------------------------------------------------------------------

TEACHER_PAGE = """\
(teaching-course)=
# A four-week module

Teach from the teacher's edition.

(teaching-projects)=

## Projects: one per experiment

```{figure} plan.png
:name: teaching-figure
```
"""

REFERENCES = """\
See {ref}`the course's projects <teaching-projects>`, {ref}`teaching-projects`, {numref}`teaching-figure`,
{doc}`the plan <course>`, {doc}`/book/teaching/course`, [the plan](course.ipynb#week-1) and
[projects](#teaching-projects).
Kept: {ref}`other-label`, {doc}`the guide <choosing>`, {doc}`../01_sets`, [a site](https://example.org/course),
[the guide](choosing.ipynb).
"""


def _teacher_targets(tmp_path: Path) -> "student_edition.TeacherTargets":
    page = tmp_path / "book" / "teaching" / "course.ipynb"
    page.parent.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(TEACHER_PAGE),
                                                   nbformat.v4.new_code_cell("import course_plan")]), page)
    return student_edition.teacher_targets(tmp_path)


def test_the_teacher_pages_labels_and_titles_are_read_from_the_page(tmp_path: Path) -> None:
    targets = _teacher_targets(tmp_path)
    assert targets.pages == {"book/teaching/course": "A four-week module"}
    assert targets.labels == {"teaching-course": "A four-week module",
                              "teaching-projects": "Projects: one per experiment", "teaching-figure": "teaching-figure"}


def test_references_to_a_teacher_only_page_become_plain_text_and_others_stay(tmp_path: Path) -> None:
    targets = _teacher_targets(tmp_path)
    stripped = student_edition.strip_teacher_references(REFERENCES, "book/teaching/choosing", targets)
    assert stripped == (
        "See the course's projects, Projects: one per experiment, teaching-figure,\n"
        "the plan, A four-week module, the plan and\nprojects.\n" + REFERENCES.split("\n", 3)[3])


def test_a_doc_reference_is_resolved_from_the_page_that_makes_it(tmp_path: Path) -> None:
    targets = _teacher_targets(tmp_path)
    text = "{doc}`plan <teaching/course>` and {doc}`plan <course>`"
    assert student_edition.strip_teacher_references(text, "book/intro", targets) == "plan and {doc}`plan <course>`"


def test_the_student_table_of_contents_leaves_out_the_teacher_pages_at_any_depth() -> None:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    student = student_edition.student_toc(toc)
    files = re.findall(r"file: (\S+)", yaml.safe_dump(student))
    assert "book/teaching/course" not in files and "book/teaching/choosing" in files
    assert len(files) == len(re.findall(r"file: (\S+)", yaml.safe_dump(toc))) - 1
    nested = {"format": "jb-book", "root": "book/intro",
              "parts": [{"caption": "Teaching", "chapters": [{"file": "book/teaching/course.ipynb"}]},
                        {"caption": "Other", "chapters": [{"file": "book/a", "sections": [
                            {"file": "book/teaching/course"}, {"file": "book/b"}]}]}]}
    assert student_edition.student_toc(nested)["parts"] == [
        {"caption": "Other", "chapters": [{"file": "book/a", "sections": [{"file": "book/b"}]}]}]
    assert nested["parts"][0]["chapters"], "the book's table of contents must stay untouched"


def test_the_student_sources_hold_no_teacher_page_and_no_teacher_only_words(tmp_path: Path) -> None:
    """The whole book's stripped copy, without a build: what -W -n and the check after the build need."""
    student_edition.write_sources(tmp_path / "src", ROOT / "_toc.yml", execute=False)
    book = tmp_path / "src" / "book"
    left = [page for page in student_edition.TEACHER_PAGES + student_edition.TEACHER_FILES
            if (tmp_path / "src" / page).with_suffix(".ipynb").exists() or (tmp_path / "src" / page).exists()]
    assert not left, f"teacher-only files in the student sources: {left}"
    labels = student_edition.teacher_targets(ROOT).labels
    assert labels, "book/teaching/course.ipynb defines no label: update TEACHER_PAGES"
    found = []
    for path in sorted(book.rglob("*")):
        if path.suffix in {".md", ".ipynb"}:
            text = _visible(path) if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")
            found += [f"{path.name}: {m.group()}" for m in student_edition.TEACHER_ONLY_WORDS.finditer(text)]
            found += [f"{path.name}: {label}" for label in labels if re.search(rf"[<`#]{re.escape(label)}[>`)]", text)]
            found += [f"{path.name}: teaching/course" for _ in re.finditer(r"teaching/course\b|\(course\.ipynb", text)]
    assert not found, f"teacher-only references in the student edition: {found}"
    assert "teaching/course" not in (tmp_path / "src" / "_toc.yml").read_text(encoding="utf-8")


def test_the_check_after_the_build_finds_teacher_only_words(tmp_path: Path) -> None:
    (tmp_path / "_sources").mkdir()
    (tmp_path / "page.html").write_text("<p>Exercises and their hints.</p>", encoding="utf-8")
    student_edition.check_no_teacher_pages(tmp_path)
    (tmp_path / "_sources" / "intro.md").write_text("Teach from the book.", encoding="utf-8")
    (tmp_path / "lecture.html").write_text("<p>In the teacher\u2019s edition</p>", encoding="utf-8")
    with pytest.raises(student_edition.SolutionError) as found:
        student_edition.check_no_teacher_pages(tmp_path)
    message = str(found.value)
    assert "intro.md ('Teach from')" in message and "lecture.html ('teacher\u2019s edition')" in message
    assert "page.html" not in message
