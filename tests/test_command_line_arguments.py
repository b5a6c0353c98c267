"""Every experiment's command line refuses a path argument that cannot be what it names, before
anything runs: one usage line that names the argument and the fix, exit status 2, nothing written.

``sweep --out`` must name a JSON file to write: not an empty or blank name (``Path("")`` is the
current folder) and not a folder (one that exists, or a name ending in ``/``, which used to become a
file of that name). ``table RESULTS`` must name a file: not an empty name, not a folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from setfuncs.experiments.attention.__main__ import main as attention_main
from setfuncs.experiments.circle.__main__ import main as circle_main
from setfuncs.experiments.mixture.__main__ import main as mixture_main
from setfuncs.experiments.pointcloud.__main__ import main as pointcloud_main

MAINS: dict[str, Callable[[list[str]], None]] = {"circle": circle_main, "mixture": mixture_main,
                                                 "pointcloud": pointcloud_main, "attention": attention_main}


def usage_error(main: Callable[[list[str]], None], argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The error line of the usage message ``main(argv)`` ends with, exiting with status 2."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.splitlines()[0].startswith("usage: "), err
    return err.splitlines()[-1]


@pytest.mark.parametrize("name", list(MAINS))
def test_out_must_name_a_json_file(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    sweep = ["sweep", "--budget", "quick", "--runs", "1", "--out"]
    for out, says in (("", "the name is empty; pass the path of a JSON file, e.g. results/sweep.json"),
                      ("  ", "the name is empty; pass the path of a JSON file"),
                      ("folder", f"folder is a folder; pass the path of a JSON file in it, e.g. "
                                 f"{Path('folder', 'sweep.json')}"),
                      (str(tmp_path), f"{tmp_path} is a folder; pass the path of a JSON file in it"),
                      ("new/", "new/ is a folder; pass the path of a JSON file in it, e.g. new/sweep.json")):
        line = usage_error(MAINS[name], [*sweep, out], capsys)
        assert line.startswith(f"python -m setfuncs.experiments.{name} sweep: error: argument --out: {says}"), line
    assert sorted(os.listdir(tmp_path)) == ["folder"] and os.listdir(tmp_path / "folder") == []


@pytest.mark.parametrize("name", list(MAINS))
def test_the_tables_results_must_name_a_file(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for results, says in (("", "the name is empty; pass the path of a JSON file"),
                          (str(tmp_path), f"{tmp_path} is a folder; pass the path of a JSON file"),
                          (str(tmp_path / "none.json"), f"no such file: {tmp_path / 'none.json'}")):
        line = usage_error(MAINS[name], ["table", results], capsys)
        assert line.endswith(f"table: error: argument results: {says}"), line


def test_a_modelnet_tree_without_a_test_split_is_a_usage_error(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The sweep reads (and caches) the clouds before anything runs: a class folder without
    ``test/`` ends in the loader's one line, not a traceback from inside the sweep."""
    root = tmp_path / "ModelNet40"
    (root / "cube" / "train").mkdir(parents=True)
    (root / "cube" / "train" / "cube_0001.off").write_text(
        "OFF\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 1 2\n3 0 1 3\n3 0 2 3\n3 1 2 3\n")
    with pytest.raises(SystemExit) as stopped:             # after the train split's sampling bar
        pointcloud_main(["sweep", "--budget", "quick", "--runs", "1", "--data", "modelnet40", "--root", str(root),
                         "--out", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "Traceback" not in err
    assert f"error: --root {root}: no folder {root / 'cube' / 'test'}" in err.splitlines()[-1]
    assert not (tmp_path / "r.json").exists()


def test_a_truncated_mnist_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    images = tmp_path / "t10k-images-idx3-ubyte"
    header = b"".join(v.to_bytes(4, "big") for v in (0x00000803, 3, 28, 28))
    images.write_bytes(header + bytes(28 * 28 * 2))                       # two and a bit images of three
    line = usage_error(attention_main, ["sweep", "--budget", "quick", "--runs", "1", "--digits", "mnist",
                                        "--mnist", str(images), "--out", str(tmp_path / "r.json")], capsys)
    assert f"--mnist {images}: " in line and "truncated" in line
    assert not (tmp_path / "r.json").exists()
