r"""ModelNet40 (Wu et al. 2015) as point clouds: OFF meshes in, uniform surface samples out.

The official archive (``ModelNet40.zip`` from the Princeton ModelNet page,
https://modelnet.cs.princeton.edu/) unpacks to one folder per class with the split inside,
``<root>/<class>/{train,test}/<class>_<number>.off``: 9,843 training and 2,468 test CAD meshes of
40 classes. :func:`load_modelnet40` samples ``points`` particles from every mesh of a split
(:func:`~setfuncs.experiments.pointcloud.surface.sample_surface`; mesh ``i`` in sorted order with
``numpy.random.default_rng([seed, i])``) and caches the result in one compressed ``.npz`` per
``(split, points, seed)``, so that only the first call parses the meshes.

**The header quirk.** Some ModelNet files carry the counts on the header line, ``OFF490 518 0``
instead of ``OFF`` and then ``490 518 0``; :func:`fix_off_header` splits that line before trimesh
parses the text.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import numpy as np
import trimesh
from tqdm.auto import tqdm

from ..sweeps import positive_int
from .surface import sample_surface

__all__ = ["SPLITS", "MODELNET_URL", "LAYOUT", "fix_off_header", "read_off", "mesh_files",
           "cache_path", "load_modelnet40"]

#: The two splits of the official layout.
SPLITS = ("train", "test")
#: Where ModelNet40 is published.
MODELNET_URL = "https://modelnet.cs.princeton.edu/"
#: The folder layout :func:`load_modelnet40` reads.
LAYOUT = "<root>/<class>/{train,test}/*.off, e.g. <root>/airplane/train/airplane_0001.off"
#: ``OFF`` followed by anything but a line break on the header line (the counts).
_JOINED_HEADER = re.compile(r"\A(\s*)OFF[ \t]*(?=\S)")


def fix_off_header(text: str) -> str:
    """``text`` with its header line split when the counts follow ``OFF`` on it.

    ``fix_off_header("OFF490 518 0\\n...") == "OFF\\n490 518 0\\n..."``; a well-formed file comes
    back unchanged. Raises ValueError if the text does not start with ``OFF``.
    """
    if not text.lstrip().startswith("OFF"):
        first = text.lstrip().split("\n", 1)[0][:40]
        raise ValueError(f"an OFF file starts with 'OFF', this one with {first!r}")
    return _JOINED_HEADER.sub(r"\1OFF\n", text, count=1)


def read_off(path: str | os.PathLike) -> trimesh.Trimesh:
    """The triangle mesh of one OFF file (polygons are triangulated, nothing else is changed).

    Raises ValueError naming the file if it is not a readable OFF mesh.
    """
    path = Path(path)
    advice = ("the file is probably damaged (a truncated download or extraction): extract it again "
              f"from ModelNet40.zip ({MODELNET_URL}), or delete it to leave this mesh out")
    try:
        text = fix_off_header(path.read_bytes().decode("ascii"))
        mesh = trimesh.load(io.BytesIO(text.encode("ascii")), file_type="off", process=False,
                            force="mesh")
    except (ValueError, NameError, IndexError, TypeError) as err:     # what trimesh raises on bad text
        raise ValueError(f"cannot read the mesh {path}: {err}; {advice}") from err
    if not isinstance(mesh, trimesh.Trimesh):
        raise ValueError(f"cannot read the mesh {path}: trimesh returned a {type(mesh).__name__}; {advice}")
    return mesh


def mesh_files(root: str | os.PathLike, split: str = "train") -> tuple[list[Path], np.ndarray, list[str]]:
    """The ``.off`` files of one split in sorted order, their labels and the sorted class names.

    Raises FileNotFoundError if ``root`` is missing, holds no class folder with a ``split``
    subfolder, or a class's split folder holds no ``.off`` file; ValueError for an unknown split.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(
            f"no ModelNet40 folder at {root}. Download ModelNet40.zip from the Princeton ModelNet "
            f"page, {MODELNET_URL}, unzip it and pass the folder that holds one folder per class: "
            f"{LAYOUT}")
    classes = sorted(d.name for d in root.iterdir() if (d / split).is_dir())
    if not classes:
        raise FileNotFoundError(
            f"{root} holds no class folder with a '{split}' subfolder; expected {LAYOUT} "
            f"(pass the folder that contains the class folders, e.g. .../ModelNet40)")
    files, labels = [], []
    for label, name in enumerate(classes):
        found = sorted((root / name / split).glob("*.off"))
        if not found:
            raise FileNotFoundError(f"{root / name / split} holds no .off mesh; expected {LAYOUT}. "
                                    f"Extract ModelNet40.zip again, or remove the folder {root / name}")
        files += found
        labels += [label] * len(found)
    return files, np.array(labels, dtype=np.int64), classes


def cache_path(cache_dir: str | os.PathLike, split: str, points: int, seed: int) -> Path:
    """The cache file of one ``(split, points, seed)``:
    ``<cache_dir>/modelnet40-<split>-<points>points-seed<seed>.npz``."""
    return Path(cache_dir) / f"modelnet40-{split}-{points}points-seed{seed}.npz"


def load_modelnet40(root: str | os.PathLike, split: str = "train", points: int = 1000, seed: int = 0,
                    cache_dir: str | os.PathLike | None = None, progress: bool = True
                    ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Point clouds of one ModelNet40 split: ``(clouds [M, points, 3] float32, labels [M] int64, class_names)``.

    Args:
        root: the folder of the official layout, ``<root>/<class>/{train,test}/*.off``.
        split: ``"train"`` or ``"test"``.
        points: particles per cloud, uniform on each mesh's surface.
        seed: mesh ``i`` (in sorted file order) is sampled with ``numpy.random.default_rng([seed, i])``.
        cache_dir: where the ``.npz`` cache lives (default: ``root``); a cache whose file list no
            longer matches the folder is rebuilt.
        progress: a tqdm bar while meshes are parsed.

    Raises FileNotFoundError for a missing or empty folder and ValueError for a mesh that cannot
    be read or has zero surface area (both name the file).
    """
    positive_int("points", points)
    files, labels, classes = mesh_files(root, split)
    names = np.array([str(f.relative_to(root)) for f in files])
    cache = cache_path(root if cache_dir is None else cache_dir, split, points, seed)
    if cache.is_file():
        with np.load(cache) as stored:
            if np.array_equal(stored["files"], names):
                return stored["clouds"], stored["labels"], [str(c) for c in stored["class_names"]]
    clouds = np.empty((len(files), points, 3), dtype=np.float32)
    for i, path in enumerate(tqdm(files, desc=f"sampling ModelNet40 {split}", unit="mesh",
                                  disable=not progress)):
        clouds[i] = sample_surface(read_off(path), points, np.random.default_rng([seed, i]), name=str(path))
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_name(cache.stem + ".partial.npz")
    np.savez_compressed(partial, clouds=clouds, labels=labels, class_names=np.array(classes), files=names)
    os.replace(partial, cache)
    return clouds, labels, classes
