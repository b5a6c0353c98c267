"""A downloaded chapter's first cell installs ``setfuncs`` and its results, and no solution, on a student's disk.

The wheel is built as ``make book`` builds it (``scripts/wheel.py``) into a temporary folder and served
from a local HTTP server (127.0.0.1, a free port). The exact cell ``scripts/install_cell.py`` generates
runs the way a kernel runs it: in IPython's ``InteractiveShell``, whose ``%pip`` magic hands
``python -m pip install ...`` to a shell, in a subprocess whose working folder is a fresh folder, with
``SETFUNCS_WHEEL_URL`` naming the local server. Nothing is downloaded from elsewhere and the test's
environment is untouched: ``PIP_TARGET`` sends the package into ``<tmp>/site``, ``PIP_NO_DEPS`` and
``PIP_NO_INDEX`` keep pip off any index, pip's cache and IPython's profile go to the temporary folder.

The cell must take its install branch, though ``.venv`` holds ``setfuncs`` (editable: a
``.pth`` file in ``site-packages`` installs a finder for the working tree). So the subprocess starts as
``python -I -S`` (no ``site``: no ``.pth`` file runs, no user site, no ``PYTHONPATH``, the working folder
not on ``sys.path``) and appends ``.venv``'s ``site-packages`` itself, for IPython; there
``importlib.util.find_spec("setfuncs")`` sees nothing, which the test checks before it runs the cell.
Then no file the run left (the working folder, the installed package, pip's cache, IPython's profile)
is a notebook or holds solution text, and the package imported from ``<tmp>/site`` (first on
``sys.path``, with ``.venv``'s torch) finds every results file the chapters read inside itself.
"""

from __future__ import annotations

import functools
import http.server
import importlib
import json
import re
import subprocess
import sys
import sysconfig
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from script_modules import load_script

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "book" / "03_sum_isomorphism.ipynb"
#: Literal text of CHAPTER's solutions (prose, and code inside a four-backtick solution).
SOLUTION_TEXT = ["geometric = sf.SumIsomorphic(g, g_inv)", "not a member of the formula",
                 "must be handled on its own", "Any population and its duplicate"]
#: Results files the chapters name literally in their code cells: ``results_file("...")`` and
#: ``RESULTS_DIR / "folder" / "file"``.
LITERAL_NAME = re.compile(r'results_file\(\s*"([^"]+)"\s*\)|RESULTS_DIR((?:\s*/\s*"[^"]+")+)')

wheel_script = load_script("wheel")
install_cell = load_script("install_cell")
student_edition = load_script("student_edition")

#: The subprocess that runs the cell: ``python -I -S``, then ``.venv``'s site-packages appended (argv[1])
#: without running its .pth files; prints whether setfuncs was importable before, and pip's exit status.
RUN_CELL = """\
import json, sys
sys.path.append(sys.argv[1])
import importlib.util
before = importlib.util.find_spec("setfuncs")
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
result = shell.run_cell(open(sys.argv[2], encoding="utf-8").read())
print("RESULT " + json.dumps({"before": None if before is None else str(before.origin), "success": result.success,
                              "pip_exit": shell.user_ns.get("_exit_code")}))
"""
#: The subprocess that imports the installed package from argv[1] (first on sys.path) and resolves the
#: results names of argv[2] (JSON) with ``results_file``.
IMPORT_INSTALLED = """\
import json, sys
sys.path.insert(0, sys.argv[1])
import setfuncs
from setfuncs.repository import RESULTS_DIR, results_file
from setfuncs.runtime import run_time_line
names = json.loads(sys.argv[2])
print("RESULT " + json.dumps({"package": setfuncs.__file__, "results_dir": str(RESULTS_DIR),
                              "files": {name: str(results_file(name)) for name in names},
                              "run_time": run_time_line("01_sets")}))
"""


def _result(completed: subprocess.CompletedProcess) -> dict:
    """The JSON a subprocess printed after ``RESULT``; its output in the failure message otherwise."""
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    assert completed.returncode == 0 and lines, f"stdout:\n{completed.stdout}\nstderr:\n{completed.stderr}"
    return json.loads(lines[-1].removeprefix("RESULT "))


class _Quiet(http.server.SimpleHTTPRequestHandler):
    """Serves a folder, records the paths asked for, logs nothing."""

    requested: list[str] = []

    def log_message(self, format: str, *args: object) -> None:
        self.requested.append(self.path)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, list[str]]]:
    """The wheel, built into a folder that a local HTTP server serves: its URL, its path, the requests."""
    folder = tmp_path_factory.mktemp("served")
    wheel = wheel_script.build(folder)
    requested: list[str] = []
    handler = type("Handler", (_Quiet,), {"requested": requested})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/{wheel.name}", wheel, requested
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def installed(served: tuple[str, Path, list[str]], tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The install cell run in a fresh folder against the local server: the folders and what it printed."""
    url, _, requested = served
    run = tmp_path_factory.mktemp("student")
    work, site = run / "work", run / "site"
    work.mkdir()
    source = run / "install_cell.py"
    source.write_text(install_cell.install_source(), encoding="utf-8")
    environment = {
        "PATH": "/usr/bin:/bin", "HOME": str(run / "home"), "IPYTHONDIR": str(run / "ipython"),
        "SETFUNCS_WHEEL_URL": url, "PIP_TARGET": str(site), "PIP_NO_DEPS": "1", "PIP_NO_INDEX": "1",
        "PIP_CACHE_DIR": str(run / "pip-cache"), "PIP_CONFIG_FILE": "/dev/null",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1", "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
    }
    completed = subprocess.run([sys.executable, "-I", "-S", "-c", RUN_CELL, sysconfig.get_paths()["purelib"],
                                str(source)], cwd=work, env=environment, capture_output=True, text=True, timeout=120)
    return {"run": run, "work": work, "site": site, "source": source, "printed": _result(completed),
            "requested": list(requested), "output": completed.stdout + completed.stderr}


def _texts(path: Path) -> Iterator[tuple[str, str]]:
    """Every text ``path`` holds, by name: the file itself, and each member of a wheel or zip file. (pip's
    cache keeps the downloaded wheel inside a file of its own, compressed: the served wheel is that one.)"""
    raw = path.read_bytes()
    yield str(path), raw.decode("utf-8", errors="replace")
    if path.suffix in {".whl", ".zip"}:
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                yield f"{path}!{name}", archive.read(name).decode("utf-8", errors="replace")


def _solutions(folder: Path) -> list[str]:
    """The notebooks under ``folder`` and the files (or wheel members) there that hold solution text:
    what a solution leaves in a source or a page (``scripts/student_edition.py``) or CHAPTER's own words."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        for name, text in _texts(path):
            if name.endswith(".ipynb"):
                found.append(f"{name}: a notebook")
                continue
            flat = re.sub(r"\s+", " ", text)
            match = student_edition.SOLUTION_SOURCE.search(text) or student_edition.SOLUTION_HTML.search(text)
            phrase = match.group() if match else next((words for words in SOLUTION_TEXT if words in flat), None)
            if phrase:
                found.append(f"{name}: {phrase!r}")
    return found


def _chapters_names() -> set[str]:
    """The results files the chapters read: named in their code cells, or by the constants they read."""
    names = {"paper-results.json", importlib.import_module("setfuncs.runtime").TIMES_FILE}
    for path in sorted((ROOT / "book").rglob("*.ipynb")):
        code = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")
        for match in LITERAL_NAME.finditer(code):
            names.add(match.group(1) or "/".join(re.findall(r'"([^"]+)"', match.group(2))))
    names |= set(importlib.import_module("setfuncs.experiments.overview").RESULTS.values())
    for module, attributes in {"circle.report": ("SWEEP", "FULL_SWEEP", "PROBE"), "mixture.report": ("SWEEP",),
                               "mixture.sensitivity": ("RESULTS_NAME",), "pointcloud.report": ("SWEEP",),
                               "attention.report": ("SWEEP", "SURROGATE_SWEEP")}.items():
        loaded = importlib.import_module(f"setfuncs.experiments.{module}")
        names |= {getattr(loaded, attribute) for attribute in attributes}
    return names


def test_the_solution_check_finds_a_notebook_and_solution_text(tmp_path: Path) -> None:
    """The check below can fail: it finds the chapter, its solutions' text in a plain file and in a zip."""
    chapter = nbformat.read(CHAPTER, as_version=4)
    text = re.sub(r"\s+", " ", "\n".join(cell.source for cell in chapter.cells))
    missing = [phrase for phrase in SOLUTION_TEXT if phrase not in text]
    assert not missing, f"{CHAPTER.name} no longer says {missing}: pick other text of its solutions"
    (tmp_path / "chapter.ipynb").write_text(CHAPTER.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "notes.txt").write_text(f"copied: {SOLUTION_TEXT[0]}\n", encoding="utf-8")
    with zipfile.ZipFile(tmp_path / "pack.whl", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("pkg/page.md", "```{solution} ex\nAnswer.\n```\n")
    found = _solutions(tmp_path)
    assert any("chapter.ipynb: a notebook" in line for line in found)
    assert any("notes.txt" in line and SOLUTION_TEXT[0] in line for line in found)
    assert any("pack.whl!pkg/page.md" in line for line in found)


def test_the_cell_takes_its_install_branch_and_installs_the_served_wheel(installed: dict,
                                                                        served: tuple[str, Path, list[str]]) -> None:
    printed = installed["printed"]
    assert printed["before"] is None, f"setfuncs was importable in the isolated subprocess ({printed['before']})"
    assert printed["success"] and printed["pip_exit"] == 0, f"the install cell failed:\n{installed['output']}"
    assert f"/{served[1].name}" in installed["requested"], "pip did not fetch the wheel from SETFUNCS_WHEEL_URL"
    assert (installed["site"] / "setfuncs" / "__init__.py").is_file()
    assert (installed["site"] / "setfuncs" / "results" / "paper-results.json").is_file()
    assert list(installed["work"].iterdir()) == [], "the cell left files in the notebook's folder"


def test_no_notebook_and_no_solution_is_left_on_disk(installed: dict, served: tuple[str, Path, list[str]]) -> None:
    assert not _solutions(installed["run"]), "solutions on the student's disk"
    assert not _solutions(served[1].parent), "solutions in the wheel the site serves"


def test_the_installed_package_reads_every_results_file_from_inside_itself(installed: dict) -> None:
    names = _chapters_names()
    shipped = {path.as_posix() for path in wheel_script.results_files()}
    assert names <= shipped, f"the chapters read results files the wheel leaves out: {sorted(names - shipped)}"
    site = installed["site"]
    completed = subprocess.run([sys.executable, "-I", "-c", IMPORT_INSTALLED, str(site), json.dumps(sorted(names))],
                               cwd=installed["work"], capture_output=True, text=True, timeout=120)
    printed = _result(completed)
    package = site / "setfuncs"
    assert Path(printed["package"]) == package / "__init__.py", "setfuncs was not imported from the install"
    assert Path(printed["results_dir"]) == package / "results"
    outside = {name: path for name, path in printed["files"].items()
               if not (Path(path).is_relative_to(package / "results") and Path(path).is_file())}
    assert not outside, f"results files not found inside the installed package: {outside}"
    assert printed["run_time"].startswith("Run time: ") and " s on one core" in printed["run_time"]


# --- scripts/wheel.py: what it refuses, keeps and deletes ------------------------------------------

def test_the_wheel_check_names_a_notebook_solution_text_a_stray_file_and_a_missing_result(tmp_path: Path) -> None:
    wheel = tmp_path / "setfuncs-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("setfuncs/__init__.py", "")
        archive.writestr("setfuncs/results/paper-results.json", "{}")
        archive.writestr("setfuncs/chapter.ipynb", "{}")
        archive.writestr("setfuncs/notes.md", "```{solution} ex\nAnswer.\n```\n")
        archive.writestr("book/intro.md", "# Intro\n")
    found = wheel_script.problems(wheel, [Path("paper-results.json"), Path("benchmarks/chapter-times.json")])
    assert found == ["setfuncs/chapter.ipynb: a notebook", "setfuncs/notes.md: solution text '{solution}'",
                     "book/intro.md: not part of the package",
                     "setfuncs/results/benchmarks/chapter-times.json: missing"]


def test_the_served_wheel_passes_the_check_and_holds_only_the_package(served: tuple[str, Path, list[str]]) -> None:
    wheel = served[1]
    assert wheel_script.problems(wheel, wheel_script.results_files()) == []
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    assert tops == {"setfuncs", wheel.name.removesuffix("-py3-none-any.whl") + ".dist-info"}


def test_an_out_that_is_a_file_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "wheels"
    out.write_text("not a folder", encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        wheel_script.main(["--out", str(out)])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2 and f"--out {out}: " in error and "is a file, not a folder" in error
    assert out.read_text(encoding="utf-8") == "not a folder"


def test_a_build_deletes_only_older_wheels_it_made(tmp_path: Path, served: tuple[str, Path, list[str]],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """pip is replaced by a copy of the served wheel; every other file in --out stays."""
    def pip_wheel(command: list[str], check: bool) -> None:
        dist = Path(command[command.index("--wheel-dir") + 1])
        dist.mkdir(parents=True, exist_ok=True)
        (dist / served[1].name).write_bytes(served[1].read_bytes())
    monkeypatch.setattr(wheel_script.subprocess, "run", pip_wheel)
    out = tmp_path / "wheels"
    out.mkdir()
    (out / "setfuncs-0.0.9-py3-none-any.whl").write_bytes(served[1].read_bytes())       # made here: goes
    with zipfile.ZipFile(out / "setfuncs-0.0.8-py3-none-any.whl", "w") as archive:      # made elsewhere: stays
        archive.writestr("setfuncs/__init__.py", "")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    (out / "setfuncs-0.0.7-py3-none-any.whl").mkdir()                                   # a folder: stays
    wheel = wheel_script.build(out)
    assert wheel == out / served[1].name
    assert sorted(path.name for path in out.iterdir()) == sorted(
        [served[1].name, "setfuncs-0.0.8-py3-none-any.whl", "notes.txt", "setfuncs-0.0.7-py3-none-any.whl"])


def test_a_wheel_of_the_same_name_made_elsewhere_is_refused_and_kept(tmp_path: Path) -> None:
    out = tmp_path / "wheels"
    out.mkdir()
    foreign = out / wheel_script.wheel_name(wheel_script.version())
    with zipfile.ZipFile(foreign, "w") as archive:
        archive.writestr("setfuncs/__init__.py", "# built by someone else")
    before = foreign.read_bytes()
    with pytest.raises(ValueError, match=rf"^--out {re.escape(str(out))}: it holds {re.escape(foreign.name)}, which "):
        wheel_script.build(out)
    assert foreign.read_bytes() == before
