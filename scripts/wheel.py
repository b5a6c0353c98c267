"""Build the wheel of ``setfuncs`` that the book's site serves: the package and its results, no notebook.

Every chapter's first cell (``scripts/install_cell.py``) installs this wheel from the published site
(``_static/wheels/``): the package with the results files the chapters read as package data, in
``setfuncs/results/`` (:data:`setfuncs.repository.RESULTS_DIR` finds them there). It holds nothing
else: no notebook, so no solution reaches a student's disk with it, no page of ``book/``, no test.

* **Built from a staged copy.** ``setfuncs/`` (without caches) and the results files
  (:func:`results_files`) are copied into a temporary folder, as ``setfuncs/`` and
  ``setfuncs/results/``, beside a ``pyproject.toml`` written from the repository's own: the same
  name, version, dependencies and extras (read from it, never typed twice), with the results as
  package data. ``pip wheel --no-deps --no-build-isolation`` builds it with the setuptools of this
  Python (pinned in ``requirements.txt``).
* **Checked.** The wheel is listed before it is kept: a member outside ``setfuncs/`` and its
  ``.dist-info``, an ``.ipynb``, a file with solution text (``SOLUTION_SOURCE`` of
  ``scripts/student_edition.py``) or a missing results file fails the build, naming the file.
* **It deletes only its own wheels.** ``--out`` must be a folder (made if missing); the script
  writes the new wheel there, replacing only a wheel it made, and deletes only older wheels it made
  (``setfuncs-*-py3-none-any.whl`` holding ``setfuncs/results/``), nothing else.

Which results ship: every ``.json`` and ``.txt`` file of ``results/`` and of its folders
``benchmarks/``, ``simulations/`` and ``probes/`` (the chapters and ``setfuncs`` read
``probes/*.json`` through ``results_file``, chapters 10 and 11 print two ``probes/*.txt`` logs);
not ``results/README.md``, which nothing reads, nor sweeps in progress (``results/pending/``).

Usage: ``python scripts/wheel.py [--out _build/static/wheels]`` (``make wheel``); prints the wheel's path.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
PACKAGE = ROOT / "setfuncs"
RESULTS = ROOT / "results"
DEFAULT_OUT = ROOT / "_build" / "static" / "wheels"
#: The folders of ``results/`` whose files ship ("" is ``results/`` itself), and the kinds of file.
RESULTS_FOLDERS = ("", "benchmarks", "simulations", "probes")
RESULTS_SUFFIXES = (".json", ".txt")
#: Where the results lie inside the package.
PACKAGED_RESULTS = "results"
#: Never copied into the stage: caches, notebooks, the lock files of running sweeps.
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.ipynb", "*.lock")
#: The ``[project]`` keys the staged ``pyproject.toml`` leaves out: the README is the book's.
LEFT_OUT_KEYS = ("readme",)
#: The code's licence (MIT), which the wheel carries in its ``.dist-info/licenses/``.
CODE_LICENSE = "LICENSE"
#: A public version in the normal form that setuptools writes into a wheel's name (PEP 440: ``1.2.0``,
#: ``1.2rc1``, ``1.2.post1``, ``1.2.dev3``), so that the name the install cell asks for is the wheel's.
VERSION = re.compile(r"(0|[1-9]\d*)(\.(0|[1-9]\d*))*((a|b|rc)(0|[1-9]\d*))?(\.post(0|[1-9]\d*))?(\.dev(0|[1-9]\d*))?")
#: A wheel this script makes, by name (any version).
WHEEL_FILE = re.compile(r"setfuncs-[^-/]+-py3-none-any\.whl")


def wheel_name(version: str) -> str:
    """The wheel's file name for ``version``: ``setfuncs-<version>-py3-none-any.whl``."""
    return f"setfuncs-{version}-py3-none-any.whl"


def project(pyproject: Path = PYPROJECT) -> dict[str, Any]:
    """The ``[project]`` table of ``pyproject``.

    Raises:
        ValueError: In one line naming the file, when its name is not ``setfuncs`` or its version is
            not a static version in normal form (:data:`VERSION`): the wheel's name and the install
            cell's URL are made from it.
    """
    table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    found = table.get("version")
    if table.get("name") != "setfuncs" or not (isinstance(found, str) and VERSION.fullmatch(found)):
        raise ValueError(f"{pyproject}: [project] needs name = \"setfuncs\" and a static version in normal form "
                         f"such as \"0.1.0\" (found name {table.get('name')!r}, version {found!r}); set them there")
    return table


def version(pyproject: Path = PYPROJECT) -> str:
    """The package's version, from ``pyproject``."""
    return project(pyproject)["version"]


def results_files(results: Path = RESULTS) -> list[Path]:
    """The results files that ship, relative to ``results``: :data:`RESULTS_SUFFIXES` files of
    :data:`RESULTS_FOLDERS`, sorted."""
    return sorted(path.relative_to(results) for folder in RESULTS_FOLDERS for path in (results / folder).glob("*")
                  if path.is_file() and path.suffix in RESULTS_SUFFIXES)


def _toml(value: Any) -> str:
    """``value`` (a string, number, boolean, list or table of these) as a TOML value; JSON's strings
    are TOML's basic strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(key)} = {_toml(item)}" for key, item in value.items()) + "}"
    raise ValueError(f"{PYPROJECT}: a [project] value of type {type(value).__name__} cannot be staged; "
                     "extend _toml in scripts/wheel.py")


def staged_pyproject(pyproject: Path = PYPROJECT) -> str:
    """The stage's ``pyproject.toml``: ``pyproject``'s build system and ``[project]`` (its dependencies
    and extras as they are, without :data:`LEFT_OUT_KEYS`), the package, and as its data the results and
    ``pyproject``'s own package data (the explorables' ES modules)."""
    whole = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    table = {key: value for key, value in project(pyproject).items() if key not in LEFT_OUT_KEYS}
    data = [f"{PACKAGED_RESULTS}/{folder + '/' if folder else ''}*{suffix}"
            for folder in RESULTS_FOLDERS for suffix in RESULTS_SUFFIXES]
    data += whole.get("tool", {}).get("setuptools", {}).get("package-data", {}).get("setfuncs", [])
    lines = ["# Written by scripts/wheel.py from the repository's pyproject.toml: the wheel the book's site serves.",
             "[build-system]"]
    lines += [f"{key} = {_toml(value)}" for key, value in whole.get("build-system", {}).items()]
    lines += ["", "[project]"] + [f"{json.dumps(key)} = {_toml(value)}" for key, value in table.items()]
    lines += ["", "[tool.setuptools]", 'packages.find.include = ["setfuncs*"]',
              f"package-data.setfuncs = {_toml(data)}", ""]
    return "\n".join(lines)


def stage(folder: Path, pyproject: Path = PYPROJECT, package: Path = PACKAGE, results: Path = RESULTS) -> Path:
    """Copy ``package`` (without :data:`IGNORED`) and :func:`results_files` into ``folder`` with the
    :func:`staged_pyproject` and the code's licence (:data:`CODE_LICENSE`, beside ``pyproject``);
    the stage's folder."""
    shutil.copytree(package, folder / "setfuncs", ignore=IGNORED)
    if (folder / "setfuncs" / PACKAGED_RESULTS).exists():      # only the repository's results ship
        shutil.rmtree(folder / "setfuncs" / PACKAGED_RESULTS)
    for relative in results_files(results):
        target = folder / "setfuncs" / PACKAGED_RESULTS / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(results / relative, target)
    (folder / "pyproject.toml").write_text(staged_pyproject(pyproject), encoding="utf-8")
    shutil.copy2(pyproject.with_name(CODE_LICENSE), folder / CODE_LICENSE)   # setuptools puts it in .dist-info
    return folder


def _solution_pattern() -> re.Pattern[str]:
    """``SOLUTION_SOURCE`` of ``scripts/student_edition.py``: what a solution leaves in a source file."""
    spec = importlib.util.spec_from_file_location("student_edition", Path(__file__).with_name("student_edition.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SOLUTION_SOURCE


def problems(wheel: Path, expected: list[Path] | None = None) -> list[str]:
    """What is wrong with ``wheel``, one line per member: outside the package and its metadata, a
    notebook, solution text, or a results file of ``expected`` (relative to ``results/``) missing."""
    solution = _solution_pattern()
    found = []
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        for name in names:
            top = name.split("/", 1)[0]
            if top != "setfuncs" and not (top.startswith("setfuncs-") and top.endswith(".dist-info")):
                found.append(f"{name}: not part of the package")
            if name.endswith(".ipynb"):
                found.append(f"{name}: a notebook")
            elif (match := solution.search(archive.read(name).decode("utf-8", errors="replace"))):
                found.append(f"{name}: solution text {match.group()!r}")
    for relative in expected or []:
        if f"setfuncs/{PACKAGED_RESULTS}/{relative.as_posix()}" not in names:
            found.append(f"setfuncs/{PACKAGED_RESULTS}/{relative.as_posix()}: missing")
    return found


def _made_here(path: Path) -> bool:
    """Whether ``path`` is a setfuncs wheel this script made: the name, and results inside."""
    if not (path.is_file() and WHEEL_FILE.fullmatch(path.name) and zipfile.is_zipfile(path)):
        return False
    with zipfile.ZipFile(path) as archive:
        return any(name.startswith(f"setfuncs/{PACKAGED_RESULTS}/") for name in archive.namelist())


def check_out(out: Path, name: str | None = None) -> None:
    """Refuse, in one line with the fix, an ``--out`` that is not a folder (a file, or below a file), or
    that holds something named ``name`` (the new wheel's name) which this script did not make."""
    for path in (out, *out.parents):
        if path.exists() and not path.is_dir():
            raise ValueError(f"--out {out}: {path} is a file, not a folder; pass a folder for the wheel, "
                             f"such as {DEFAULT_OUT.relative_to(ROOT)}")
    if name and (out / name).exists() and not _made_here(out / name):
        raise ValueError(f"--out {out}: it holds {name}, which scripts/wheel.py did not make (no setfuncs/results/ "
                         f"inside) and would replace; move it away or pass another folder")


def build(out: Path = DEFAULT_OUT) -> Path:
    """Build, check and keep the wheel in ``out``; the wheel's path.

    Raises:
        ValueError: ``out`` is not a folder or holds a file of the wheel's name that this script did
            not make (:func:`check_out`), or the wheel fails :func:`problems` (then ``out`` is left as
            it was).
        subprocess.CalledProcessError: pip could not build the wheel (its messages are above).
    """
    name = wheel_name(version())
    check_out(out, name)
    with tempfile.TemporaryDirectory(prefix="setfuncs-wheel-") as temporary:
        staged = stage(Path(temporary) / "stage")
        dist = Path(temporary) / "dist"
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                        "--disable-pip-version-check", "--wheel-dir", str(dist), str(staged)], check=True)
        built = dist / name
        if not built.is_file():
            raise ValueError(f"pip wrote {sorted(p.name for p in dist.iterdir())}, not {name}; check "
                             f"{PYPROJECT}'s name and version")
        found = problems(built, results_files())
        if found:
            raise ValueError(f"the wheel {name} may not be served: " + "; ".join(found)
                             + "; remove these files from setfuncs/ or results/ (scripts/wheel.py)")
        out.mkdir(parents=True, exist_ok=True)
        for older in out.glob("setfuncs-*.whl"):
            if older.name != name and _made_here(older):
                older.unlink()
        shutil.copyfile(built, out / name)
    return out / name


def main(argv: list[str] | None = None) -> int:
    """Command line: build the wheel into ``--out`` and print its path."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"folder for the wheel (default: {DEFAULT_OUT.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    try:
        check_out(out, wheel_name(version()))
    except ValueError as error:
        parser.error(str(error))
    print(build(out))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ValueError as error:
        sys.exit(f"error: {error}")
    except subprocess.CalledProcessError as error:
        sys.exit(f"error: pip wheel failed (exit status {error.returncode}); its messages are above")
