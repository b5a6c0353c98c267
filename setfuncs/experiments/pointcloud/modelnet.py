r"""ModelNet40 (Wu et al. 2015) as point clouds: OFF meshes in, uniform surface samples out.

The official archive (``ModelNet40.zip`` from the Princeton ModelNet page,
https://modelnet.cs.princeton.edu/) unpacks to one folder per class with the split inside,
``<root>/<class>/{train,test}/<class>_<number>.off``: 9,843 training and 2,468 test CAD meshes of
40 classes. :func:`load_modelnet40` samples ``points`` particles from every mesh of a split
(:func:`~setfuncs.experiments.pointcloud.surface.sample_surface`; mesh ``i`` in sorted order with
``numpy.random.default_rng([seed, i])``) and caches the result in one compressed ``.npz`` per
``(split, points, seed)``, so that only the first call parses the meshes. The cache also records
the relative path, size and modification time of every mesh file it was made from; a cache that
no longer matches the folder, or that cannot be read, is rebuilt with a warning.
:func:`mesh_digest` names a folder's contents (every mesh file's path and bytes), which a results
file's identity holds: a sweep resumes on a moved copy of its folder, never on another folder.

The meshes are read by :func:`~setfuncs.experiments.pointcloud.off.read_off`, which checks every line.
"""

from __future__ import annotations

import hashlib
import json
import numbers
import os
import secrets
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
from ...bars import bar as progress_bar

from ..tasks import positive_int
from .off import MODELNET_URL, read_off
from .surface import sample_surface

__all__ = ["SPLITS", "LAYOUT", "mesh_files", "mesh_digest", "cache_path", "load_modelnet40"]

#: The two splits of the official layout.
SPLITS = ("train", "test")
#: The folder layout :func:`load_modelnet40` reads.
LAYOUT = "<root>/<class>/{train,test}/*.off, e.g. <root>/airplane/train/airplane_0001.off"
#: The layout version of the cache files; a cache of another version is rebuilt.
_CACHE_FORMAT = 2
#: The arrays of a cache file.
_CACHE_KEYS = frozenset({"clouds", "labels", "class_names", "manifest"})
#: How a zip archive (what :func:`numpy.load` reads as an ``.npz``) starts: a file, or an empty archive.
_ZIP_STARTS = (b"PK\x03\x04", b"PK\x05\x06")
#: What reading a damaged ``.npz`` raises (numpy, zipfile and zlib; found by truncating a good
#: cache and changing its bytes one at a time).
_UNREADABLE = (OSError, EOFError, ValueError, NotImplementedError, RuntimeError, zipfile.BadZipFile,
               zlib.error)


def mesh_files(root: str | os.PathLike, split: str = "train") -> tuple[list[Path], np.ndarray, list[str]]:
    """The ``.off`` files of one split in sorted order, their labels and the sorted class names.

    A class folder is a folder of ``root`` that holds a ``train`` or a ``test`` folder; every class
    folder must hold both, so that both splits have the same classes and labels.

    Raises FileNotFoundError if ``root`` is missing or holds no class folder, if a class folder
    lacks its ``split`` folder (the message names the first one missing), if a class's split folder
    holds no ``.off`` file, or if a ``.off`` entry is a broken symbolic link; ValueError for an
    unknown split or a ``.off`` entry that is not a file (e.g. a folder). Every message names the
    path and says what to do.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(
            f"no ModelNet40 folder at {root}. Download ModelNet40.zip from the Princeton ModelNet "
            f"page, {MODELNET_URL}, unzip it and pass the folder that holds one folder per class: "
            f"{LAYOUT}")
    classes = sorted(d.name for d in root.iterdir() if any((d / s).is_dir() for s in SPLITS))
    if not classes:
        raise FileNotFoundError(
            f"{root} holds no class folder with a '{split}' subfolder; expected {LAYOUT} "
            f"(pass the folder that contains the class folders, e.g. .../ModelNet40)")
    missing = [root / name / split for name in classes if not (root / name / split).is_dir()]
    if missing:
        others = f" (the first of {len(missing)} class folders without one)" if len(missing) > 1 else ""
        raise FileNotFoundError(
            f"no folder {missing[0]}{others}: every class folder holds a train and a test folder, "
            f"{LAYOUT}. Extract ModelNet40.zip ({MODELNET_URL}) again, or remove the class folder "
            f"{missing[0].parent}")
    files, labels = [], []
    for label, name in enumerate(classes):
        found = sorted((root / name / split).glob("*.off"))
        if not found:
            raise FileNotFoundError(f"{root / name / split} holds no .off mesh; expected {LAYOUT}. "
                                    f"Extract ModelNet40.zip again, or remove the folder {root / name}")
        for path in found:
            _check_mesh_entry(path)
        files += found
        labels += [label] * len(found)
    return files, np.array(labels, dtype=np.int64), classes


def mesh_digest(root: str | os.PathLike) -> str:
    """The SHA-256 (hex) of a ModelNet40 folder's contents: for both splits in turn, every mesh file of
    :func:`mesh_files` in its sorted order, each as its path relative to ``root`` (with ``/``) and its
    bytes, both preceded by their lengths. A moved or copied folder has the digest of the original;
    a folder with another mesh, a mesh fewer or one byte changed has another. Reads every mesh file
    once (seconds per GB); raises as :func:`mesh_files` does for a folder without the layout."""
    root = Path(root)
    digest = hashlib.sha256()
    for split in SPLITS:
        files, _, _ = mesh_files(root, split)
        for path in files:
            name, content = path.relative_to(root).as_posix().encode("utf-8"), path.read_bytes()
            for part in (name, content):
                digest.update(len(part).to_bytes(8, "big"))
                digest.update(part)
    return digest.hexdigest()


def _check_mesh_entry(path: Path) -> None:
    """A FileNotFoundError if the ``.off`` entry ``path`` is a symbolic link to nothing, a
    ValueError if it is not a file (a folder, a device, ...); both name it and say what to do."""
    if path.is_file():
        return
    if path.is_symlink():
        raise FileNotFoundError(f"{path} is a symbolic link to {os.readlink(path)}, which does not exist (or "
                                f"cannot be followed); restore the mesh it points to, or delete the link")
    kind = "a folder" if path.is_dir() else "not a regular file"
    raise ValueError(f"{path} is {kind}, not an OFF mesh, but its name ends in .off; rename or move it out "
                     f"of {path.parent} (which should hold only the meshes, {LAYOUT})")


def cache_path(cache_dir: str | os.PathLike, split: str, points: int, seed: int) -> Path:
    """The cache file of one ``(split, points, seed)``:
    ``<cache_dir>/modelnet40-<split>-<points>points-seed<seed>.npz``."""
    return Path(cache_dir) / f"modelnet40-{split}-{points}points-seed{seed}.npz"


def _manifest(root: Path, files: list[Path], split: str, points: int, seed: int) -> dict:
    """What a cache is made from: the sampling parameters and every mesh file's path relative to
    ``root`` (with ``/``), size in bytes and modification time in nanoseconds."""
    meshes = []
    for path in files:
        stat = path.stat()
        meshes.append([path.relative_to(root).as_posix(), stat.st_size, stat.st_mtime_ns])
    return {"format": _CACHE_FORMAT, "split": split, "points": points, "seed": seed, "meshes": meshes}


def _manifest_change(stored: object, today: dict) -> str:
    """How the manifest ``stored`` in a cache differs from ``today``'s (which it does not equal)."""
    if not _is_manifest(stored):
        return "holds a manifest of another layout (made by another version of this loader?)"
    for key in ("format", "split", "points", "seed"):
        if stored[key] != today[key]:
            return f"was made with {key} = {stored[key]!r}, not {today[key]!r}"
    old = {name: (size, mtime) for name, size, mtime in stored["meshes"]}
    new = {name: (size, mtime) for name, size, mtime in today["meshes"]}
    added, removed = sorted(new.keys() - old.keys()), sorted(old.keys() - new.keys())
    if added or removed:
        return (f"was made from {len(old)} mesh files, the folder now holds {len(new)} "
                f"({len(added)} new, e.g. {added[:1]}; {len(removed)} gone, e.g. {removed[:1]})")
    changed = [name for name in sorted(new) if new[name] != old[name]]
    if not changed:
        return "lists the same mesh files as the folder, but in another order or with repeats"
    return (f"is stale: {len(changed)} mesh file(s) changed size or modification time since it was made, "
            f"e.g. {changed[0]}")


def _is_manifest(value: object) -> bool:
    """Whether ``value`` has the layout of :func:`_manifest`'s result: the five keys, and a list of
    ``[path, size, mtime]`` under ``"meshes"``."""
    return (isinstance(value, dict) and set(value) == {"format", "split", "points", "seed", "meshes"}
            and isinstance(value["meshes"], list)
            and all(isinstance(mesh, list) and len(mesh) == 3 and isinstance(mesh[0], str)
                    and all(isinstance(number, int) for number in mesh[1:]) for mesh in value["meshes"]))


def _cache_problem(stored: np.lib.npyio.NpzFile, today: dict, labels: np.ndarray, classes: list[str]
                   ) -> str | None:
    """Why the open cache ``stored`` does not describe ``today``'s folder, or None if it does.

    Checks the keys (exactly :data:`_CACHE_KEYS`), the manifest (one JSON string equal to
    ``today``), the class names and the labels (int64, equal to the folder's). The clouds are
    checked by :func:`_clouds_problem`.
    """
    if set(stored.files) != _CACHE_KEYS:
        return f"holds the arrays {sorted(stored.files)}, not {sorted(_CACHE_KEYS)}"
    manifest = stored["manifest"]
    if manifest.dtype.kind != "U" or manifest.shape != ():
        return f"holds a manifest of dtype {manifest.dtype} and shape {manifest.shape}, not one string"
    try:
        made_from = json.loads(str(manifest))
    except ValueError as err:
        return f"holds a manifest that is not JSON ({err})"
    if made_from != today:
        return _manifest_change(made_from, today)
    names = stored["class_names"]
    if names.dtype.kind != "U" or names.tolist() != classes:
        return f"holds the class names {names.tolist()[:3]}..., not the folder's {classes[:3]}..."
    cached_labels = stored["labels"]
    if cached_labels.dtype != np.int64 or not np.array_equal(cached_labels, labels):
        return (f"holds labels ({cached_labels.dtype}, shape {cached_labels.shape}) other than the folder's "
                f"(int64, shape {labels.shape}, in 0..{len(classes) - 1})")
    return None


def _clouds_problem(clouds: np.ndarray, expected: tuple[int, int, int]) -> str | None:
    """Why ``clouds`` are not finite float32 of shape ``expected``, or None if they are."""
    if clouds.dtype != np.float32 or clouds.shape != expected:
        return f"holds clouds of dtype {clouds.dtype} and shape {clouds.shape}, not float32 {expected}"
    if not np.isfinite(clouds).all():
        return "holds clouds with non-finite coordinates"
    return None


def _read_cache(cache: Path, today: dict, labels: np.ndarray, classes: list[str]
                ) -> tuple[np.ndarray | None, str | None]:
    """``(clouds, None)`` from ``cache`` if it passes :func:`_cache_problem` and
    :func:`_clouds_problem`, else ``(None, why not)``. It is loaded with ``allow_pickle=False``; a
    file that is not a zip archive, or cannot be read as one, is a reason too. The file is opened
    here, not by :func:`numpy.load`, which leaves its own handle open when the archive is damaged."""
    with open(cache, "rb") as file:
        start = file.read(len(_ZIP_STARTS[0]))
        if start not in _ZIP_STARTS:
            return None, f"is not an .npz (zip) archive: it starts with {start!r}"
        file.seek(0)
        try:
            with np.load(file, allow_pickle=False) as stored:
                problem = _cache_problem(stored, today, labels, classes)
                clouds = None if problem else stored["clouds"]
        except _UNREADABLE as err:
            return None, f"cannot be read as an .npz archive ({type(err).__name__}: {err})"
    problem = problem or _clouds_problem(clouds, (len(labels), today["points"], 3))
    return (None, problem) if problem else (clouds, None)


def _write_cache(cache: Path, clouds: np.ndarray, labels: np.ndarray, classes: list[str],
                 manifest: dict) -> None:
    """Writes the cache atomically: to a temporary file in the same folder, then ``os.replace``."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_name(f".{cache.name}.{os.getpid()}-{secrets.token_hex(4)}.partial")
    try:
        with open(partial, "xb") as file:
            np.savez_compressed(file, clouds=clouds, labels=labels, class_names=np.array(classes),
                                manifest=np.array(json.dumps(manifest)))
        os.replace(partial, cache)
    finally:
        partial.unlink(missing_ok=True)


def load_modelnet40(root: str | os.PathLike, split: str = "train", points: int = 1000, seed: int = 0,
                    cache_dir: str | os.PathLike | None = None, progress: bool = True
                    ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Point clouds of one ModelNet40 split: ``(clouds [M, points, 3] float32, labels [M] int64, class_names)``.

    Args:
        root: the folder of the official layout, ``<root>/<class>/{train,test}/*.off``.
        split: ``"train"`` or ``"test"``.
        points: particles per cloud, uniform on each mesh's surface.
        seed: a non-negative integer; mesh ``i`` (in sorted file order) is sampled with
            ``numpy.random.default_rng([seed, i])``.
        cache_dir: where the ``.npz`` cache lives (default: ``root``), one file per
            ``(split, points, seed)`` (:func:`cache_path`).
        progress: a tqdm bar while meshes are parsed.

    **The cache.** Besides the clouds, labels and class names, the ``.npz`` holds a manifest: a
    JSON string (array ``manifest``) with the split, points, seed and, for every mesh file, its
    path relative to ``root``, its size and its modification time (ns). The cache is used only if
    it loads with ``allow_pickle=False``, holds exactly those four arrays, its manifest equals
    today's, its class names and labels equal the folder's, and its clouds are finite float32
    ``[M, points, 3]`` with ``M`` the number of mesh files. Otherwise a warning names the cache
    and the reason and the clouds are sampled again; the new cache is written to a temporary file
    in the same folder and moved over the old one (``os.replace``), so a reader never sees half a
    cache. Only a damaged or stale cache is replaced; a mesh that cannot be read leaves it as it is.

    Raises FileNotFoundError and ValueError for a folder that does not have the layout
    (:func:`mesh_files`), ValueError for a mesh that cannot be read (:func:`~setfuncs.experiments.pointcloud.off.read_off`) or has zero
    surface area (both name the file), and ValueError for a bad ``split``, ``points`` or ``seed``.
    """
    positive_int("points", points)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer (mesh i is sampled with "
                         f"numpy.random.default_rng([seed, i])), got {seed!r}")
    seed = int(seed)
    files, labels, classes = mesh_files(root, split)
    manifest = _manifest(Path(root), files, split, points, seed)
    cache = cache_path(root if cache_dir is None else cache_dir, split, points, seed)
    if cache.is_file():
        cached, problem = _read_cache(cache, manifest, labels, classes)
        if cached is not None:
            return cached, labels, classes
        warnings.warn(f"the ModelNet40 cache {cache} {problem}; sampling the meshes again and replacing it",
                      stacklevel=2)
    clouds = np.empty((len(files), points, 3), dtype=np.float32)
    for i, path in enumerate(progress_bar(files, desc=f"sampling ModelNet40 {split}", unit="mesh",
                                          enabled=progress)):
        clouds[i] = sample_surface(read_off(path), points, np.random.default_rng([seed, i]), name=str(path))
    _write_cache(cache, clouds, labels, classes, manifest)
    return clouds, labels, classes
