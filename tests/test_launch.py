"""Launching a chapter elsewhere works from the repository's own files.

``repository:`` in ``_config.yml`` names the repository once; the README's launch links and
Binder's environment (``binder/``) follow it. The first code cell of every chapter
(``scripts/install_cell.py``) installs the wheel that ``make book`` publishes under ``html.baseurl``
(``tests/test_student_install.py`` runs it against a local server). Binder and Colab themselves are
not reachable from the tests: these check the files they read.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
import tomllib
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest
import yaml
from IPython.core.inputtransformer2 import TransformerManager
from nbclient import NotebookClient
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from script_modules import load_script

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "install_cell.py"
BINDER = ROOT / "binder"
#: The chapter the README's launch links open.
FIRST_CHAPTER = "book/01_sets.ipynb"


install_cell = load_script("install_cell")


def _pins(path: Path) -> dict[str, Requirement]:
    """The requirements of a pip requirements file by canonical name; options and ``-e`` skipped."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    requirements = [Requirement(line) for line in lines if line and not line.startswith("-")]
    return {canonicalize_name(r.name): r for r in requirements}


def _pinned_version(requirement: Requirement) -> Version:
    (specifier,) = requirement.specifier
    assert specifier.operator == "==", f"{requirement} is not pinned with =="
    return Version(specifier.version)


def test_every_chapter_starts_with_the_install_cell() -> None:
    assert install_cell.notebooks(), "no notebooks in book/ or drafts/"
    problems = install_cell.check()
    assert not problems, "\n".join(problems)


def test_check_names_a_notebook_without_the_cell_and_write_restores_it(tmp_path: Path) -> None:
    notebook = json.loads((ROOT / FIRST_CHAPTER).read_text(encoding="utf-8"))
    (index,) = [i for i, cell in enumerate(notebook["cells"]) if cell.get("id") == install_cell.TAG]
    expected = copy.deepcopy(notebook)
    expected["cells"][index] = install_cell.install_cell()
    notebook["cells"].pop(index)
    chapter = tmp_path / "chapter.ipynb"
    chapter.write_text(json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    (problem,) = install_cell.check([chapter])
    assert str(chapter) in problem and "no install cell" in problem and "--write" in problem
    assert install_cell.write(chapter)
    assert json.loads(chapter.read_text(encoding="utf-8")) == expected, "--write changed more than the install cell"
    assert install_cell.check([chapter]) == []
    assert not install_cell.write(chapter), "a second --write changed the notebook again"


def test_the_cell_installs_the_wheel_make_book_publishes_with_the_chapters_extras_and_clones_nothing() -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wheel = f"setfuncs-{project['version']}-py3-none-any.whl"
    assert install_cell.wheel_url() == f"{config['html']['baseurl']}_static/wheels/{wheel}"
    source = install_cell.install_source()
    assert f'"{install_cell.wheel_url()}"' in source and "SETFUNCS_WHEEL_URL" in source
    assert not re.search(r"\bgit\b|clone|^\s*!", source, re.M), "the install cell must not clone the repository"
    assert set(install_cell.EXTRAS) <= set(project["optional-dependencies"]), (
        "the install cell names extras pyproject.toml lacks")
    # make book puts the wheel where Sphinx copies it to _static/: _build/static/wheels/
    assert "_build/static" in config["sphinx"]["config"]["html_static_path"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "STATIC := _build/static\n" in makefile and "$(PY) scripts/wheel.py --out $(STATIC)/wheels\n" in makefile
    assert "WHEEL := $(STATIC)/wheels/setfuncs-$(SETFUNCS_VERSION)-py3-none-any.whl\n" in makefile
    for rule in ("book: setup $(WHEEL) ", "student: setup $(WHEEL)\n", "test: setup $(WHEEL) "):
        assert rule in makefile, f"the Makefile's {rule.split(':')[0]} must build the wheel first"


def _config(tmp_path: Path, baseurl: object) -> Path:
    """A ``_config.yml`` whose ``html.baseurl`` is ``baseurl``."""
    path = tmp_path / "_config.yml"
    path.write_text(yaml.safe_dump({"title": "T", "html": {"baseurl": baseurl}}), encoding="utf-8")
    return path


def _cell_code(source: str) -> str:
    """``source`` as IPython runs it: magics turned into calls (``get_ipython().run_line_magic``)."""
    return TransformerManager().transform_cell(source)


@pytest.mark.parametrize("baseurl", ["https://deep-sets-book.github.io/deep-sets-book/",
                                     "https://mirror.example.org:8443/a_b/c.d~e-f/", "https://example.org/"])
def test_an_accepted_baseurl_reaches_the_cell_as_one_python_string(tmp_path: Path, baseurl: str) -> None:
    source = install_cell.install_source(_config(tmp_path, baseurl))
    code = _cell_code(source)
    compile(code, "install cell", "exec")
    (literal,) = re.findall(r'^\s+"(https://[^"]*)"\)$', source, re.M)
    assert literal == f"{baseurl}_static/wheels/{Path(install_cell.wheel_url()).name}"
    assert "get_ipython().run_line_magic('pip', 'install --quiet {requirement}')" in code


@pytest.mark.parametrize("baseurl", [
    "http://example.org/", "https://example.org", "https://example.org/book", "https://example.org/$HOME/",
    "https://example.org/{__import__('os').system('id')}/", "https://example.org/a;id/", "https://example.org/a b/",
    "https://example.org/`id`/", "https://example.org/'a'/", 'https://example.org/"a"/', "https://example.org/../",
    "https://example.org/.hidden/", "https://example.org/a/?q=1", "https://example.org/#a",
    "https://example.org/a\nid/", "https://example.org/a\\b/", "https://-example.org/", "https://user@example.org/",
    "", None, 7,
])
def test_a_baseurl_that_could_reach_ipython_or_the_shell_is_refused_in_one_line(tmp_path: Path,
                                                                                 baseurl: object) -> None:
    config = _config(tmp_path, baseurl)
    with pytest.raises(ValueError) as refused:
        install_cell.install_source(config)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{config}: html.baseurl ") and "; set it to" in message


def test_the_command_refuses_a_planted_baseurl_before_it_writes_a_notebook(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           capsys: pytest.CaptureFixture) -> None:
    notebook = tmp_path / "01_chapter.ipynb"
    notebook.write_text((ROOT / FIRST_CHAPTER).read_text(encoding="utf-8"), encoding="utf-8")
    before = notebook.read_text(encoding="utf-8")
    monkeypatch.setattr(install_cell, "CONFIG", _config(tmp_path, "https://example.org/$(id)/"))
    monkeypatch.setattr(install_cell, "NOTEBOOK_DIRS", (tmp_path,))
    with pytest.raises(SystemExit) as stopped:
        install_cell.main(["--write"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2 and "html.baseurl" in error and "set it to" in error
    assert notebook.read_text(encoding="utf-8") == before and "$(id)" not in before


def test_install_cell_is_a_no_op_where_setfuncs_is_importable(tmp_path: Path) -> None:
    """Run in a real kernel, as nbmake and the book build run it, with ``%pip`` recorded, not run; then
    with setfuncs hidden, once with the site's wheel and once with a mirror (a path with a space)."""
    source = install_cell.install_source()
    mirror = "file:///tmp/a mirror/setfuncs-0.1.0-py3-none-any.whl"
    record = ("import importlib.util, json, os\ncalls = []\n"
              "get_ipython().run_line_magic = lambda name, line, _stack_depth=1: "
              "calls.append([name, line, globals().get('requirement')])\n"
              "get_ipython().system = lambda line: calls.append(['!', line])")
    hide = ("real_find_spec = importlib.util.find_spec\n"
            "importlib.util.find_spec = lambda name, package=None: "
            "None if name == 'setfuncs' else real_find_spec(name, package)")
    show = "print(json.dumps(calls)); calls.clear()"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in (
        record, source, show, hide, source, show, f"os.environ['SETFUNCS_WHEEL_URL'] = {mirror!r}", source, show)])
    NotebookClient(notebook, timeout=60, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = [json.loads(cell.outputs[0]["text"]) for cell in notebook.cells if cell.source == show]
    assert notebook.cells[1].outputs == [], "the install cell printed something where setfuncs is installed"
    assert printed[0] == [], "the install cell ran %pip although setfuncs is importable"
    for calls, url in zip(printed[1:], (install_cell.wheel_url(), mirror)):
        assert len(calls) == 1 and calls[0][:2] == ["pip", "install --quiet {requirement}"], (
            "without setfuncs, the install cell should run its %pip line once, and nothing else")
        assert shlex.split(calls[0][2]) == [install_cell.requirement(url)], "pip must get the requirement as one word"


def test_readme_launch_and_run_instructions_follow_the_config() -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    url, branch = config["repository"]["url"], config["repository"]["branch"]
    org, repo = urlparse(url).path.strip("/").split("/")
    buttons = config["launch_buttons"]
    interface = {"classic": "tree", "jupyterlab": "lab/tree"}[buttons["notebook_interface"]]
    expected = [
        f"git clone {url}",
        f"{buttons['binderhub_url']}/v2/gh/{org}/{repo}/{branch}?urlpath={interface}/{FIRST_CHAPTER}",
        f"{buttons['colab_url']}/github/{org}/{repo}/blob/{branch}/{FIRST_CHAPTER}",
    ]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_section = readme.split("\n## ")[1]
    missing = [text for text in expected if text not in first_section]
    assert not missing, f"README.md's first section lacks {missing}; make its links follow _config.yml"


def test_binder_runtime_is_a_python_the_package_supports() -> None:
    runtime = (BINDER / "runtime.txt").read_text(encoding="utf-8").strip()
    match = re.fullmatch(r"python-(3\.\d+)", runtime)
    assert match, f"binder/runtime.txt holds {runtime!r}, not python-3.X"
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    assert Requirement(f"setfuncs{requires}").specifier.contains(match.group(1) + ".0")


def test_binder_requirements_pin_what_requirements_txt_pins() -> None:
    path = BINDER / "requirements.txt"
    lines = [line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines, "binder/ must take PyTorch's CPU wheels"
    assert "-e ." in lines, "binder/ must install the package editable: chapters 8-11 read results/ beside it"
    binder, local = _pins(path), _pins(ROOT / "requirements.txt")
    differ = {name: (str(r), str(local.get(name))) for name, r in binder.items()
              if name not in local or _pinned_version(r).public != _pinned_version(local[name]).public}
    assert not differ, f"binder/requirements.txt and requirements.txt pin differently: {differ}"
    assert _pinned_version(binder["torch"]).local == "cpu", "binder/ must pin torch's +cpu build"


def test_binder_installs_everything_the_package_and_its_extras_need() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    needed = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    missing = {canonicalize_name(Requirement(r).name) for r in needed} - set(_pins(BINDER / "requirements.txt"))
    assert not missing, f"binder/requirements.txt lacks {sorted(missing)}"


@pytest.mark.parametrize("name", ["jupyterlab", "jupyterlab-myst"])
def test_jupyterlab_is_pinned_for_reading_locally(name: str) -> None:
    assert name in _pins(ROOT / "requirements.txt"), f"requirements.txt must pin {name} (`make lab`)"
