"""Launching a chapter elsewhere works from the repository's own files.

``repository:`` in ``_config.yml`` names the repository once; the first code cell of every chapter
(``scripts/install_cell.py``), the README's launch links and Binder's environment (``binder/``)
follow it. Binder and Colab themselves are not reachable from the tests: these check the files
they read.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest
import yaml
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
    original = (ROOT / FIRST_CHAPTER).read_text(encoding="utf-8")
    notebook = json.loads(original)
    notebook["cells"] = [c for c in notebook["cells"] if c.get("id") != install_cell.TAG]
    copy = tmp_path / "chapter.ipynb"
    copy.write_text(json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    (problem,) = install_cell.check([copy])
    assert str(copy) in problem and "no install cell" in problem and "--write" in problem
    assert install_cell.write(copy)
    assert copy.read_text(encoding="utf-8") == original, "--write changed more than the install cell"
    assert not install_cell.write(copy), "a second --write changed the notebook again"


def test_install_command_installs_the_package_from_a_clone_of_the_configured_repository() -> None:
    url, branch = install_cell.repository()
    folder = install_cell.clone_folder()
    assert install_cell.clone_command() == f"!git clone --quiet --depth 1 --branch {branch} {url} {folder}"
    match = re.fullmatch(r'%pip install --quiet -e "\./([^\[]+)\[(.+)\]"', install_cell.install_command())
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert match and match.group(1) == folder and url.endswith("/" + folder)
    assert set(match.group(2).split(",")) <= set(extras), "the install cell names extras pyproject.toml lacks"


def _config(tmp_path: Path, url: object, branch: object) -> Path:
    """A ``_config.yml`` whose ``repository:`` holds ``url`` and ``branch``."""
    path = tmp_path / "_config.yml"
    path.write_text(yaml.safe_dump({"title": "T", "repository": {"url": url, "branch": branch}}), encoding="utf-8")
    return path


@pytest.mark.parametrize("url, branch", [
    ("https://github.com/deep-sets-book/deep-sets-book", "main"),
    ("https://git.example.org:8443/some_owner/Repo.name.git", "release/1.0-rc_2"),
])
def test_the_clone_line_passes_the_configured_values_to_git_as_three_words(tmp_path: Path, url: str,
                                                                           branch: str) -> None:
    config = _config(tmp_path, url, branch)
    words = shlex.split(install_cell.clone_command(config).removeprefix("!"))
    assert words == ["git", "clone", "--quiet", "--depth", "1", "--branch", branch, url,
                     url.rsplit("/", 1)[-1].removesuffix(".git")]
    assert "'" not in install_cell.clone_command(config), (
        "a safe value should stay unquoted (the committed cells keep their text)")


@pytest.mark.parametrize("key, url, branch", [
    ("repository.branch", "https://github.com/o/r", "main;touch${IFS}/x"),
    ("repository.branch", "https://github.com/o/r", "main && rm -rf ~"),
    ("repository.branch", "https://github.com/o/r", "$(id)"),
    ("repository.branch", "https://github.com/o/r", "{__import__('os').system('id')}"),
    ("repository.branch", "https://github.com/o/r", "-upload-pack=touch /x"),
    ("repository.branch", "https://github.com/o/r", "--upload-pack=x"),
    ("repository.branch", "https://github.com/o/r", "a..b"),
    ("repository.branch", "https://github.com/o/r", "topic.lock"),
    ("repository.branch", "https://github.com/o/r", ".hidden"),
    ("repository.branch", "https://github.com/o/r", "trailing/"),
    ("repository.branch", "https://github.com/o/r", "main\nid"),
    ("repository.branch", "https://github.com/o/r", ""),
    ("repository.branch", "https://github.com/o/r", None),
    ("repository.url", "https://github.com/o/r;id", "main"),
    ("repository.url", "https://github.com/o/r x", "main"),
    ("repository.url", "https://github.com/o/$HOME", "main"),
    ("repository.url", "https://github.com/o/{x}", "main"),
    ("repository.url", "https://github.com/o/-r", "main"),
    ("repository.url", "https://github.com/o", "main"),
    ("repository.url", "https://github.com/o/r/tree/main", "main"),
    ("repository.url", "http://github.com/o/r", "main"),
    ("repository.url", "https://github.com/o/r`id`", "main"),
    ("repository.url", 7, "main"),
])
def test_a_config_value_that_could_reach_the_shell_is_refused_in_one_line_naming_its_key(
        tmp_path: Path, key: str, url: object, branch: object) -> None:
    config = _config(tmp_path, url, branch)
    with pytest.raises(ValueError) as refused:
        install_cell.clone_command(config)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{config}: {key} ") and "; set it to" in message


def test_the_command_refuses_a_planted_branch_before_it_writes_a_notebook(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture) -> None:
    notebook = tmp_path / "01_chapter.ipynb"
    notebook.write_text((ROOT / FIRST_CHAPTER).read_text(encoding="utf-8"), encoding="utf-8")
    before = notebook.read_text(encoding="utf-8")
    monkeypatch.setattr(install_cell, "CONFIG", _config(tmp_path, "https://github.com/o/r", "main;touch${IFS}/x"))
    monkeypatch.setattr(install_cell, "NOTEBOOK_DIRS", (tmp_path,))
    with pytest.raises(SystemExit) as stopped:
        install_cell.main(["--write"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2 and "repository.branch" in error and "set it to" in error
    assert notebook.read_text(encoding="utf-8") == before and ";touch" not in before


def test_install_cell_is_a_no_op_where_setfuncs_is_importable(tmp_path: Path) -> None:
    """Run in a real kernel, as nbmake and the book build run it, with ``!git`` and ``%pip`` recorded, not run."""
    source = install_cell.install_source()
    record = ("import importlib.util, json\ncalls = []\n"
              "get_ipython().run_line_magic = lambda name, line, _stack_depth=1: calls.append([name, line])\n"
              "get_ipython().system = lambda line: calls.append(['!', line])")
    hide = ("real_find_spec = importlib.util.find_spec\n"
            "importlib.util.find_spec = lambda name, package=None: "
            "None if name == 'setfuncs' else real_find_spec(name, package)")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in (
        record, source, "print(json.dumps(calls))", hide, source, "print(json.dumps(calls))")])
    NotebookClient(notebook, timeout=60, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = [json.loads(cell.outputs[0]["text"]) for cell in notebook.cells[2::3]]
    assert notebook.cells[1].outputs == [], "the install cell printed something where setfuncs is installed"
    assert printed[0] == [], "the install cell ran %pip although setfuncs is importable"
    assert printed[1] == [["!", install_cell.clone_command().removeprefix("!")],
                          ["pip", install_cell.install_command().removeprefix("%pip ")]], (
        "without setfuncs, the install cell should clone the repository once, then run its %pip line once")


def test_readme_launch_and_run_instructions_follow_the_config() -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    url, branch = install_cell.repository()
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
