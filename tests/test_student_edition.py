"""The student edition (``make student``, ``scripts/student_edition.py``) has no solutions anywhere.

The stripping is tested on made-up notebooks and pages with every form of solution the book uses;
the build on the introduction and one chapter, without execution: no file of the output (pages,
``_sources``, ``.ipynb`` downloads, search index) holds a solution's text, every exercise is there,
and the launch buttons are gone. Every chapter of the book is checked to hash in jupyter-cache
like its stripped copy, so the student edition reads the book's executed chapters.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import nbformat
import pytest
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
    student = student_edition.student_config(config, tmp_path, execute=False)
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
