"""An edition a lecturer can cite and pin: one version and one date, the same everywhere.

The front page (``book/intro.md``) names the edition under its title, ``CITATION.cff`` gives its
version and release date, the package (``pyproject.toml``) carries the version, and the newest entry
of "What changed" (``book/changes.md``) is that edition; the page is in the table of contents.
"""

from __future__ import annotations

import re
import tomllib
from datetime import datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
#: "Edition 1.0.0, 6 December 2026", as the front page and "What changed" write it.
EDITION = re.compile(r"Edition (?P<version>\d+\.\d+\.\d+), (?P<date>\d{1,2} [A-Z][a-z]+ \d{4})")


def _edition(text: str, where: str) -> tuple[str, str]:
    found = EDITION.search(text)
    assert found, f"{where} names no edition ('Edition X.Y.Z, D Month YYYY')"
    return found["version"], datetime.strptime(found["date"], "%d %B %Y").date().isoformat()


def test_the_version_and_date_agree_everywhere() -> None:
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    package = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    front = _edition(intro.split("\n## ", 1)[0], "book/intro.md, before its first section")
    changes = (ROOT / "book" / "changes.md").read_text(encoding="utf-8")
    headings = [_edition(line, "book/changes.md") for line in changes.splitlines() if line.startswith("## Edition")]
    assert headings, "book/changes.md has no '## Edition' section"
    assert front == headings[0] == (citation["version"], str(citation["date-released"])), (front, headings[0])
    assert package == citation["version"], f"pyproject.toml's version {package} is not the edition's"
    init = re.search(r'^__version__ = "([^"]+)"', (ROOT / "setfuncs" / "__init__.py").read_text(encoding="utf-8"), re.M)
    assert init and init.group(1) == package, "setfuncs.__version__ is not pyproject.toml's version"


def test_the_editions_of_what_changed_are_newest_first_and_distinct() -> None:
    changes = (ROOT / "book" / "changes.md").read_text(encoding="utf-8")
    editions = [_edition(line, "book/changes.md") for line in changes.splitlines() if line.startswith("## Edition")]
    versions = [tuple(map(int, version.split("."))) for version, _ in editions]
    assert versions == sorted(set(versions), reverse=True)
    assert [date for _, date in editions] == sorted((date for _, date in editions), reverse=True)


def test_the_citation_file_names_the_book_and_the_paper() -> None:
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and citation["title"] and citation["authors"]
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert citation["repository-code"] == config["repository"]["url"]
    paper = citation["references"][0]
    assert paper["title"] == "On Deep Set Learning and the Choice of Aggregations" and paper["year"] == 2019


def test_what_changed_is_in_the_table_of_contents() -> None:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [entry["file"] for part in toc["parts"] for entry in part["chapters"]]
    assert "book/changes" in files
