"""The book is published: the GitHub Pages workflow is valid and builds what ``make book`` builds,
and the licences the README names are there.

GitHub itself is not reachable from the tests: the workflow is checked against GitHub's workflow
schema (``check-jsonschema``'s built-in copy, pinned in requirements.txt) and, beyond the schema,
for what a valid file can still get wrong: the trigger, the build command, the cache and the
artifact paths.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
#: SHA-256 of the CC BY 4.0 legal code as Creative Commons' plain text (legalcode.txt), copied
#: unchanged from scancode-toolkit-mini 32.5.0 (``dist-info/licenses/cc-by-4.0.LICENSE``).
CC_BY_4_SHA256 = "2a82ac9bbc3e3ee066908381e8d373896db5a6025d083fbd59692fe9ccfb9111"


def _validate(path: Path) -> subprocess.CompletedProcess[str]:
    """``check-jsonschema`` with GitHub's workflow schema on ``path``, offline."""
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                           "vendor.github-workflows", str(path)], capture_output=True, text=True)


def _workflow() -> dict:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    # YAML 1.1 (PyYAML) reads the key `on` as True.
    workflow["on"] = workflow.pop(True, workflow.get("on"))
    return workflow


def _steps() -> list[dict]:
    (job,) = _workflow()["jobs"].values()
    return job["steps"]


def _step(action: str, path: str | None = None) -> tuple[int, dict]:
    """The position and the step that uses ``action`` (``owner/name``, any version), and with
    ``path`` the one whose ``with: path`` it is (e.g. one of several ``actions/cache`` steps)."""
    found = [(i, s) for i, s in enumerate(_steps()) if s.get("uses", "").split("@")[0] == action
             and (path is None or s.get("with", {}).get("path") == path)]
    what = action if path is None else f"{action} with path {path}"
    assert len(found) == 1, f"{WORKFLOW.name}: expected one step that uses {what}, found {len(found)}"
    return found[0]


def _run_step(command: str) -> int:
    found = [i for i, s in enumerate(_steps()) if command in s.get("run", "").splitlines()]
    assert len(found) == 1, f"{WORKFLOW.name}: expected one step that runs `{command}`"
    return found[0]


def test_workflow_matches_githubs_schema() -> None:
    result = _validate(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_rejects_a_broken_workflow(tmp_path: Path) -> None:
    broken = _workflow()
    (job,) = broken["jobs"].values()
    del job["runs-on"]
    path = tmp_path / "broken.yml"
    path.write_text(yaml.safe_dump(broken), encoding="utf-8")
    assert _validate(path).returncode != 0


def test_workflow_runs_on_push_to_main_and_by_hand() -> None:
    triggers = _workflow()["on"]
    assert "main" in triggers["push"]["branches"]
    assert "workflow_dispatch" in triggers


def test_workflow_may_deploy_pages_one_run_at_a_time() -> None:
    workflow = _workflow()
    assert workflow["permissions"]["pages"] == "write"
    assert workflow["permissions"]["id-token"] == "write"
    assert workflow["concurrency"]["group"]


def test_workflow_builds_with_make_book_then_uploads_and_deploys_its_html() -> None:
    build = _run_step("make book")
    python, setup_python = _step("actions/setup-python")
    node, setup_node = _step("actions/setup-node")
    cache, _ = _step("actions/cache", "_build/.jupyter_cache")
    uv_cache, uv_cached = _step("actions/cache", "~/.cache/uv")
    upload, uploaded = _step("actions/upload-pages-artifact")
    deploy, _ = _step("actions/deploy-pages")
    assert setup_python["with"]["python-version"] == "3.11"
    # make installs with uv (Makefile, UV_INSTALL): its cache, keyed on the pins and uv's version
    assert "hashFiles('requirements.txt', 'Makefile')" in uv_cached["with"]["key"]
    assert "$(UV_INSTALL) -r requirements.txt" in (ROOT / "Makefile").read_text(encoding="utf-8")
    assert setup_node["with"]["cache"] == "npm"
    assert setup_node["with"]["cache-dependency-path"] == "package-lock.json"
    assert uploaded["with"]["path"] == "_build/html"
    assert max(python, node, cache, uv_cache) < build < upload < deploy


def test_the_cached_path_is_where_make_book_keeps_executed_chapters() -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["execute"]["execute_notebooks"] == "cache"
    # Unset, Jupyter Book keeps the cache in <build folder>/_build/.jupyter_cache.
    assert not config["execute"].get("cache"), "_config.yml moved the cache: update book.yml's cache path"
    book = (ROOT / "Makefile").read_text(encoding="utf-8").split("\nbook:", 1)[1].split("\n\n", 1)[0]
    assert "$(JB) build . " in book and "--path-output" not in book


@pytest.mark.parametrize("name", ["LICENSE", "LICENSE-CC-BY-4.0.txt"])
def test_licence_files_exist_and_the_readme_names_them(name: str) -> None:
    assert (ROOT / name).is_file()
    assert f"[`{name}`]({name})" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_code_licence_is_mit_for_the_books_authors() -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert pyproject["project"]["license"]["text"] == "MIT" and text.startswith("MIT License")
    assert f"Copyright (c) {config['copyright']} {config['author']}" in text


def test_text_licence_is_the_cc_by_4_legal_code_unchanged() -> None:
    data = (ROOT / "LICENSE-CC-BY-4.0.txt").read_bytes()
    assert data.startswith(b"Attribution 4.0 International")
    assert hashlib.sha256(data).hexdigest() == CC_BY_4_SHA256, \
        "LICENSE-CC-BY-4.0.txt must stay the verbatim legal code: restore it, do not edit it"
