"""The real-data loaders check what they read ("nothing silently wrong"): OFF
meshes line by line (a vertex float32 cannot hold included), the ModelNet40 folder (class folders
without a split, entries named ``*.off`` that are not files) and its arguments, the ``.npz`` cache
(damaged, short, stale or valid; a damaged one is closed), and MNIST's IDX files (gzipped or not,
truncated anywhere). Every failure is a ValueError or FileNotFoundError (or, for the cache, a
warning and a rebuild) that names the file or the argument and says what to do."""

from __future__ import annotations

import gc
import gzip
import json
import os
import re
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

from setfuncs.experiments.attention import load_mnist_idx
import trimesh

from setfuncs.experiments.pointcloud import load_modelnet40, read_off
from setfuncs.experiments.pointcloud import modelnet
from setfuncs.experiments.pointcloud.modelnet import cache_path
from setfuncs.experiments.pointcloud.surface import sample_surface

#: The unit cube: 8 vertices (lines 3-10) and 12 triangles (lines 11-22) of area 1/2 each.
CUBE_VERTICES = ["0 0 0", "1 0 0", "1 1 0", "0 1 0", "0 0 1", "1 0 1", "1 1 1", "0 1 1"]
CUBE_FACES = ["3 0 2 1", "3 0 3 2", "3 4 5 6", "3 4 6 7", "3 0 1 5", "3 0 5 4",
              "3 3 7 6", "3 3 6 2", "3 0 4 7", "3 0 7 3", "3 1 2 6", "3 1 6 5"]
#: The unit right tetrahedron with corners 0, e_x, e_y, e_z.
TETRAHEDRON = "OFF\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n"


def cube(vertices: list[str] = CUBE_VERTICES, faces: list[str] = CUBE_FACES, counts: str = "8 12 0") -> str:
    """The OFF text of the cube, with its lines (or its counts) replaced as a test needs."""
    return "\n".join(["OFF", counts, *vertices, *faces]) + "\n"


def write(path: Path, text: str) -> Path:
    """``text`` written to ``path`` (folders made as needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def raises_at(path: Path, line: int | None, message: str) -> pytest.RaisesExc[ValueError]:
    """``pytest.raises(ValueError)`` for an error that starts with ``"<path>, line <line>: "`` and
    then says ``message`` (a regular expression)."""
    where = re.escape(str(path)) + ("" if line is None else f", line {line}")
    return pytest.raises(ValueError, match=f"^{where}: {message}")


# --- OFF files --------------------------------------------------------------------------------------


def test_a_valid_cube_reads_as_twelve_triangles_of_area_six(tmp_path: Path) -> None:
    mesh = read_off(write(tmp_path / "cube.off", cube()))
    assert mesh.faces.shape == (12, 3) and mesh.vertices.shape == (8, 3)
    assert mesh.area == pytest.approx(6.0)
    assert mesh.is_watertight and mesh.volume == pytest.approx(1.0)
    # the same cube with the ModelNet40 header quirk, comments, blank lines and CRLF line ends
    quirky = ("OFF8 12 0\r\n# vertices\r\n\r\n" + "\r\n".join(CUBE_VERTICES) + "\r\n"
              + "\r\n".join(f"{face}  # face {i}" for i, face in enumerate(CUBE_FACES)) + "\r\n\r\n")
    same = read_off(write(tmp_path / "quirky.off", quirky))
    assert np.array_equal(same.vertices, mesh.vertices) and np.array_equal(same.faces, mesh.faces)


def test_polygons_are_triangulated(tmp_path: Path) -> None:
    """The cube as six quads, and a pentagon beside a triangle (mixed sizes on one mesh)."""
    quads = ["4 0 3 2 1", "4 4 5 6 7", "4 0 1 5 4", "4 3 7 6 2", "4 0 4 7 3", "4 1 2 6 5"]
    mesh = read_off(write(tmp_path / "quads.off", cube(faces=quads, counts="8 6 0")))
    assert mesh.faces.shape == (12, 3) and mesh.area == pytest.approx(6.0) and mesh.is_watertight
    house = "OFF\n6 2 0\n0 0 0\n1 0 0\n1 1 0\n0.5 2 0\n0 1 0\n0 0 5\n5 0 1 2 3 4\n3 0 1 5\n"
    mixed = read_off(write(tmp_path / "house.off", house))
    assert mixed.faces.shape == (4, 3) and mixed.area == pytest.approx(1.5 + 2.5)


def test_a_truncated_cube_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "chair_0001.off", cube(faces=CUBE_FACES[:-3]))
    with raises_at(path, 19, r"the file ends here, after 9 of the 12 faces declared on line 2; "
                             r"expected 3 more face lines .*extract it again"):
        read_off(path)
    # cut inside a face line: that line is wrong
    cut = write(tmp_path / "cut.off", cube()[:-4])
    with raises_at(cut, 22, r"expected a face 'k i1 \.\.\. ik' with 3 integer indices below 8, found '3 1'"):
        read_off(cut)
    # cut inside the vertices
    short = write(tmp_path / "short.off", cube(faces=[])[:-7])
    with raises_at(short, 9, r"the file ends here, after 7 of the 8 vertices declared on line 2"):
        read_off(short)


def test_more_vertices_declared_than_present(tmp_path: Path) -> None:
    path = write(tmp_path / "chair_0002.off", cube(counts="9 12 0"))
    with raises_at(path, 11, r"expected a vertex 'x y z' \(3 finite numbers\), found '3 0 2 1'"):
        read_off(path)


def test_more_lines_than_declared(tmp_path: Path) -> None:
    path = write(tmp_path / "long.off", cube(faces=CUBE_FACES + ["3 0 1 2"]))
    with raises_at(path, 23, r"expected the end of the file after the 8 vertices and 12 faces declared "
                             r"on line 2, found '3 0 1 2'"):
        read_off(path)
    fewer = write(tmp_path / "fewer.off", cube(counts="8 11 0"))
    with raises_at(fewer, 22, "expected the end of the file"):
        read_off(fewer)


@pytest.mark.parametrize("face", ["3 0 9 2", "3 0 8 2", "3 0 -1 2", "3 0 1.5 2", "3 0 one 2", "4 0 1 2"])
def test_a_face_index_out_of_range_or_missing(tmp_path: Path, face: str) -> None:
    path = write(tmp_path / "chair_0001.off", cube(faces=[CUBE_FACES[0], face, *CUBE_FACES[2:]]))
    k = face.split()[0]
    with raises_at(path, 12, rf"expected a face 'k i1 \.\.\. ik' with {k} integer indices below 8, "
                             rf"found '{re.escape(face)}'"):
        read_off(path)


@pytest.mark.parametrize("face", ["2 0 1", "0", "x 0 1 2", "-3 0 1 2"])
def test_a_face_needs_three_vertices(tmp_path: Path, face: str) -> None:
    path = write(tmp_path / "bad.off", cube(faces=[*CUBE_FACES[:5], face, *CUBE_FACES[6:]]))
    with raises_at(path, 16, r"expected a face 'k i1 \.\.\. ik' with k >= 3 vertices"):
        read_off(path)


def test_a_face_colour_is_allowed_but_nothing_more(tmp_path: Path) -> None:
    coloured = [f"{face} 255 0 0" for face in CUBE_FACES]
    assert read_off(write(tmp_path / "colour.off", cube(faces=coloured))).area == pytest.approx(6.0)
    path = write(tmp_path / "merged.off", cube(faces=["3 0 2 1 3 0 3 2 9", *CUBE_FACES[1:]]))
    with raises_at(path, 11, "expected a face 'k i1 .* ik' with k = 3, then at most 4 colour numbers"):
        read_off(path)


@pytest.mark.parametrize("vertex", ["1 one 0", "1 1", "1 1 0 0", "nan 1 0", "1 inf 0"])
def test_a_bad_vertex(tmp_path: Path, vertex: str) -> None:
    path = write(tmp_path / "chair_0003.off", cube(vertices=[*CUBE_VERTICES[:2], vertex, *CUBE_VERTICES[3:]]))
    with raises_at(path, 5, rf"expected a vertex 'x y z' \(3 finite numbers\), found '{vertex}'"):
        read_off(path)


@pytest.mark.parametrize("vertex", ["1e39 0 0", "0 -3.5e38 0", "0 0 3.40282357e38"])
def test_a_vertex_that_overflows_float32(tmp_path: Path, vertex: str) -> None:
    """The clouds are float32: a coordinate it rounds to inf is refused at its line."""
    path = write(tmp_path / "chair_0004.off", cube(vertices=[*CUBE_VERTICES[:2], vertex, *CUBE_VERTICES[3:]]))
    with raises_at(path, 5, rf"expected a vertex 'x y z' \(3 finite numbers\), found '{vertex}', whose "
                            rf"\S+ overflows float32, the type of the point clouds \(largest 3\.403e\+38\); "
                            rf".*extract it again"):
        read_off(path)


def test_the_largest_float32_vertex_is_read_and_sampled(tmp_path: Path) -> None:
    """3.4028235e38 rounds to float32's largest number, not to inf: accepted, and its clouds are finite."""
    root = tmp_path / "ModelNet40"
    write(root / "big" / "train" / "big_0000.off", TETRAHEDRON.replace("1 0 0", "3.4028235e38 0 0", 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clouds, _, _ = load(root, tmp_path / "cache")
    assert bool(np.isfinite(clouds).all()) and clouds[..., 0].max() > 1e37


@pytest.mark.parametrize("corner", [1e39, np.inf, np.nan])
def test_sampling_refuses_a_face_that_float32_cannot_hold(corner: float) -> None:
    """A mesh from elsewhere than :func:`read_off`: its particles would be inf or NaN."""
    mesh = trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [0, corner, 0]], [[0, 1, 2]], process=False)
    with warnings.catch_warnings(), pytest.raises(ValueError, match=r"^bad\.off has a face with the vertex "
                                                                    r"coordinate (1e\+39|inf|nan); the point clouds "
                                                                    r"are float32.*delete the file"):
        warnings.simplefilter("error")
        sample_surface(mesh, 5, np.random.default_rng(0), name="bad.off")


@pytest.mark.parametrize(("text", "line", "message"), [
    ("", None, "expected the header 'OFF', found an empty file"),
    ("\n# only a comment\n\n", None, "expected the header 'OFF', found an empty file"),
    ("ply\nformat ascii 1.0\n", 1, "expected the header 'OFF', found 'ply'"),
    ("OFF\n", 1, "the file ends here, after 'OFF'; expected the counts"),
    ("OFF\n8 twelve 0\n", 2, "expected the counts 'n_vertices n_faces n_edges'"),
    ("OFF8 12 0 7\n", 1, "expected the counts 'n_vertices n_faces n_edges'"),
    ("OFF\n-8 12 0\n", 2, "expected the counts"),
])
def test_a_bad_header(tmp_path: Path, text: str, line: int | None, message: str) -> None:
    path = write(tmp_path / "head.off", text)
    with raises_at(path, line, re.escape(message)):
        read_off(path)


def test_a_binary_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "binary.off"
    path.write_bytes(b"OFF\n3 1 0\n0 0 \xff\n")
    with raises_at(path, 3, "expected ASCII text, found the byte 0xff"):
        read_off(path)


# --- the ModelNet40 cache ---------------------------------------------------------------------------


#: What :func:`load_modelnet40` returns: clouds, labels and class names.
Loaded = tuple[np.ndarray, np.ndarray, list[str]]


def write_modelnet(root: Path) -> Path:
    """A tiny ModelNet40-style folder: two cubes and three tetrahedra, training split only."""
    for i in range(2):
        write(root / "cube" / "train" / f"cube_{i:04d}.off", cube())
    for i in range(3):
        write(root / "tetra" / "train" / f"tetra_{i:04d}.off", TETRAHEDRON)
    return root


def load(root: Path, cache_dir: Path) -> Loaded:
    """The training split with 16 points, seed 3, cached in ``cache_dir``."""
    return load_modelnet40(root, "train", points=16, seed=3, cache_dir=cache_dir, progress=False)


def assert_same(a: Loaded, b: Loaded) -> None:
    """Two loads hold the same clouds, labels and class names."""
    assert np.array_equal(a[0], b[0]) and a[0].dtype == b[0].dtype == np.float32
    assert np.array_equal(a[1], b[1]) and a[1].dtype == b[1].dtype == np.int64
    assert a[2] == b[2]


def reload_without_sampling(root: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Loaded:
    """A load that must come from the cache: parsing or sampling a mesh, or any warning, fails."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the meshes were parsed again although the cache is valid")

    with monkeypatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("error")
        patch.setattr(modelnet, "read_off", refuse)
        patch.setattr(modelnet, "sample_surface", refuse)
        return load(root, cache_dir)


def rebuilt_with_warning(root: Path, cache_dir: Path, reason: str) -> Loaded:
    """A load that warns, naming the cache file and ``reason`` (a regular expression), and rebuilds."""
    cache = cache_path(cache_dir, "train", 16, 3)
    with pytest.warns(UserWarning, match=f"{re.escape(str(cache))} .*{reason}"):
        result = load(root, cache_dir)
    assert sorted(p.name for p in cache_dir.iterdir()) == [cache.name]        # no temporary file left
    return result


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path, Loaded]:
    """``(root, cache_dir, fresh)``: a tiny ModelNet40 folder, a cache folder holding its cache, and
    the result of a load that did not use any cache (its own, separate cache folder)."""
    root = write_modelnet(tmp_path / "ModelNet40")
    fresh = load(root, tmp_path / "fresh")
    assert fresh[0].shape == (5, 16, 3) and fresh[1].tolist() == [0, 0, 1, 1, 1]
    cache_dir = tmp_path / "cache"
    assert_same(load(root, cache_dir), fresh)
    return root, cache_dir, fresh


def rewrite_cache(cache: Path, **changes: np.ndarray) -> None:
    """The cache file rewritten with some of its arrays replaced (and the others kept)."""
    with np.load(cache) as stored:
        arrays = dict(stored)
    arrays.update(changes)
    np.savez_compressed(cache, **arrays)


def test_a_valid_cache_is_reused_without_sampling(folders: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache_dir, fresh = folders
    assert_same(reload_without_sampling(root, cache_dir, monkeypatch), fresh)
    with np.load(cache_path(cache_dir, "train", 16, 3)) as stored:
        assert sorted(stored.files) == ["class_names", "clouds", "labels", "manifest"]
        assert '"cube/train/cube_0000.off"' in str(stored["manifest"])


@pytest.mark.parametrize("damage", ["random", "truncated", "empty"])
def test_a_corrupt_cache_is_rebuilt_with_a_warning(folders: tuple, monkeypatch: pytest.MonkeyPatch,
                                                   damage: str) -> None:
    root, cache_dir, fresh = folders
    cache = cache_path(cache_dir, "train", 16, 3)
    good = cache.read_bytes()
    data = {"random": np.random.default_rng(0).bytes(2000), "truncated": good[:len(good) // 2],
            "empty": b""}[damage]
    cache.write_bytes(data)
    reason = "is not an .npz" if damage != "truncated" else "cannot be read as an .npz archive"
    assert_same(rebuilt_with_warning(root, cache_dir, reason), fresh)
    assert_same(reload_without_sampling(root, cache_dir, monkeypatch), fresh)


def test_a_cache_with_one_cloud_too_few_is_rebuilt(folders: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache_dir, fresh = folders
    cache = cache_path(cache_dir, "train", 16, 3)
    rewrite_cache(cache, clouds=fresh[0][:-1])
    assert_same(rebuilt_with_warning(root, cache_dir, r"shape \(4, 16, 3\), not float32 \(5, 16, 3\)"), fresh)
    assert_same(reload_without_sampling(root, cache_dir, monkeypatch), fresh)


@pytest.mark.parametrize(("changes", "reason"), [
    ({"labels": np.array([0, 0, 1, 1, 7])}, "labels"),
    ({"labels": np.array([0, 0, 1, 1, 1], dtype=np.int32)}, "labels"),
    ({"class_names": np.array(["cube", "tetrahedron"])}, "class names"),
    ({"clouds": np.full((5, 16, 3), np.nan, dtype=np.float32)}, "non-finite"),
    ({"clouds": np.zeros((5, 16, 3), dtype=np.float64)}, "dtype float64"),
    ({"manifest": np.array("not json")}, "not JSON"),
    ({"manifest": np.array(['{"format": 1}'])}, "not one string"),
    ({"files": np.array(["cube/train/cube_0000.off"])}, "holds the arrays"),
])
def test_a_cache_that_does_not_match_is_rebuilt(folders: tuple, changes: dict, reason: str) -> None:
    root, cache_dir, fresh = folders
    rewrite_cache(cache_path(cache_dir, "train", 16, 3), **changes)
    assert_same(rebuilt_with_warning(root, cache_dir, reason), fresh)


def test_the_old_cache_layout_is_rebuilt(folders: tuple) -> None:
    """A cache of the loader before the manifest (its four arrays, file names instead of a manifest)."""
    root, cache_dir, fresh = folders
    names = np.array(["cube/train/cube_0000.off", "cube/train/cube_0001.off", "tetra/train/tetra_0000.off",
                      "tetra/train/tetra_0001.off", "tetra/train/tetra_0002.off"])
    np.savez_compressed(cache_path(cache_dir, "train", 16, 3), clouds=fresh[0], labels=fresh[1],
                        class_names=np.array(fresh[2]), files=names)
    reason = r"holds the arrays \['class_names', 'clouds', 'files', 'labels'\]"
    assert_same(rebuilt_with_warning(root, cache_dir, reason), fresh)


def test_a_pickled_array_in_the_cache_is_not_unpickled(folders: tuple) -> None:
    root, cache_dir, fresh = folders
    rewrite_cache(cache_path(cache_dir, "train", 16, 3), manifest=np.array([{"format": 2}], dtype=object))
    assert_same(rebuilt_with_warning(root, cache_dir, "cannot be read as an .npz archive.*pickle"), fresh)


def test_a_manifest_with_the_meshes_out_of_order_is_rebuilt(folders: tuple) -> None:
    """The same files, sizes and times in another order would pair clouds with the wrong meshes."""
    root, cache_dir, fresh = folders
    cache = cache_path(cache_dir, "train", 16, 3)
    with np.load(cache) as stored:
        manifest = json.loads(str(stored["manifest"]))
    manifest["meshes"].reverse()
    rewrite_cache(cache, manifest=np.array(json.dumps(manifest)))
    assert_same(rebuilt_with_warning(root, cache_dir, "in another order"), fresh)


def test_a_cache_made_for_other_parameters_is_rebuilt(tmp_path: Path, folders: tuple) -> None:
    """Another seed's cache copied to this cache's name: the manifest says which seed it has."""
    root, cache_dir, fresh = folders
    load_modelnet40(root, "train", points=16, seed=4, cache_dir=tmp_path / "other", progress=False)
    os.replace(cache_path(tmp_path / "other", "train", 16, 4), cache_path(cache_dir, "train", 16, 3))
    assert_same(rebuilt_with_warning(root, cache_dir, "was made with seed = 4, not 3"), fresh)


def test_a_changed_mesh_makes_the_cache_stale(tmp_path: Path, folders: tuple,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The first cube doubled in size: the same number of bytes, a later modification time."""
    root, cache_dir, fresh = folders
    mesh = root / "cube" / "train" / "cube_0000.off"
    before = mesh.stat()
    mesh.write_text(cube(vertices=[v.replace("1", "2") for v in CUBE_VERTICES]))
    os.utime(mesh, ns=(before.st_atime_ns, before.st_mtime_ns + 5_000_000_000))
    assert mesh.stat().st_size == before.st_size
    clouds, labels, names = rebuilt_with_warning(root, cache_dir, r"is stale: 1 mesh file\(s\) changed .*"
                                                                  r"cube/train/cube_0000\.off")
    assert clouds[0].max() > 1.5 and clouds[0].min() >= 0 and clouds[0].max() <= 2     # the new, larger cube
    assert np.array_equal(clouds[1:], fresh[0][1:]) and labels.tolist() == fresh[1].tolist()
    assert_same((clouds, labels, names), load(root, tmp_path / "after"))
    assert_same(reload_without_sampling(root, cache_dir, monkeypatch), (clouds, labels, names))


def test_a_mesh_of_another_size_makes_the_cache_stale(folders: tuple) -> None:
    """A comment appended, the modification time put back: the size still tells."""
    root, cache_dir, fresh = folders
    mesh = root / "tetra" / "train" / "tetra_0001.off"
    before = mesh.stat()
    mesh.write_text(TETRAHEDRON + "# touched\n")
    os.utime(mesh, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert_same(rebuilt_with_warning(root, cache_dir, r"is stale: .*tetra/train/tetra_0001\.off"), fresh)


def test_a_new_or_removed_mesh_makes_the_cache_stale(folders: tuple) -> None:
    root, cache_dir, fresh = folders
    write(root / "tetra" / "train" / "tetra_0003.off", TETRAHEDRON)
    grown = rebuilt_with_warning(root, cache_dir, r"made from 5 mesh files, the folder now holds 6 \(1 new")
    assert grown[0].shape == (6, 16, 3) and np.array_equal(grown[0][:5], fresh[0])
    (root / "cube" / "train" / "cube_0001.off").unlink()
    (root / "tetra" / "train" / "tetra_0003.off").unlink()
    shrunk = rebuilt_with_warning(root, cache_dir, r"made from 6 mesh files, the folder now holds 4 .*2 gone")
    assert shrunk[0].shape == (4, 16, 3) and shrunk[1].tolist() == [0, 1, 1, 1]


def test_a_failed_rebuild_leaves_the_cache_alone(folders: tuple) -> None:
    """A mesh damaged after caching: the stale cache is reported, the damaged mesh named, and the
    cache file is neither returned nor replaced."""
    root, cache_dir, _ = folders
    cache = cache_path(cache_dir, "train", 16, 3)
    stored = cache.read_bytes()
    write(root / "tetra" / "train" / "tetra_0002.off", TETRAHEDRON.replace("3 1 2 3\n", ""))
    with pytest.raises(ValueError, match=r"tetra_0002\.off, line 9: the file ends here"), \
            pytest.warns(UserWarning, match=f"{re.escape(str(cache))} is stale"):
        load(root, cache_dir)
    assert cache.read_bytes() == stored
    assert sorted(p.name for p in cache_dir.iterdir()) == [cache.name]


@pytest.mark.parametrize("damage", ["truncated", "cut after the signature", "junk after the signature"])
def test_a_damaged_cache_is_closed(folders: tuple, damage: str) -> None:
    """numpy.load leaves its file open when the archive is damaged: the loader opens it itself."""
    root, cache_dir, fresh = folders
    cache = cache_path(cache_dir, "train", 16, 3)
    good = cache.read_bytes()
    cache.write_bytes({"truncated": good[:len(good) // 2], "cut after the signature": good[:10],
                       "junk after the signature": good[:4] + bytes(200)}[damage])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert_same(load(root, cache_dir), fresh)
        gc.collect()                                     # an unclosed file warns when it is collected
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
    assert [w.category for w in caught] == [UserWarning] and "cannot be read as an .npz" in str(caught[0].message)


# --- the ModelNet40 folder and arguments ------------------------------------------------------------


def test_an_overflowing_vertex_is_refused_and_never_cached(tmp_path: Path) -> None:
    """Was: numpy's overflow warning, clouds with inf, a cache written with them and rebuilt on every call."""
    root = write_modelnet(tmp_path / "ModelNet40")
    bad = write(root / "tetra" / "train" / "tetra_0001.off", TETRAHEDRON.replace("1 0 0", "1e39 0 0", 1))
    for _ in range(2):
        with warnings.catch_warnings(), raises_at(bad, 4, r"expected a vertex .*found '1e39 0 0', whose 1e\+39 "
                                                          r"overflows float32"):
            warnings.simplefilter("error")
            load(root, tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_class_folders_without_the_split_are_named(tmp_path: Path) -> None:
    """A tree with train folders only, then one class without its test folder: the first missing
    folder is named on one line (the test split used to drop that class, silently)."""
    root = write_modelnet(tmp_path / "ModelNet40")
    advice = re.escape(f"every class folder holds a train and a test folder, {modelnet.LAYOUT}. Extract "
                       f"ModelNet40.zip ({modelnet.MODELNET_URL}) again, or remove the class folder {root / 'cube'}")
    with pytest.raises(FileNotFoundError, match=f"^no folder {re.escape(str(root / 'cube' / 'test'))} "
                                                rf"\(the first of 2 class folders without one\): {advice}$"):
        load_modelnet40(root, "test", points=16, progress=False)
    write(root / "tetra" / "test" / "tetra_0000.off", TETRAHEDRON)
    with pytest.raises(FileNotFoundError, match=f"^no folder {re.escape(str(root / 'cube' / 'test'))}: {advice}$"):
        load_modelnet40(root, "test", points=16, progress=False)
    assert load(root, tmp_path / "cache")[2] == ["cube", "tetra"]             # the train split is whole


def test_an_entry_named_off_that_is_a_folder(tmp_path: Path) -> None:
    root = write_modelnet(tmp_path / "ModelNet40")
    folder = root / "cube" / "train" / "x.off"
    folder.mkdir()
    with pytest.raises(ValueError, match=f"^{re.escape(str(folder))} is a folder, not an OFF mesh, but its name "
                                         rf"ends in \.off; rename or move it out of "
                                         f"{re.escape(str(folder.parent))}"):
        load(root, tmp_path / "cache")


def test_a_broken_symbolic_link(tmp_path: Path) -> None:
    root = write_modelnet(tmp_path / "ModelNet40")
    link = root / "tetra" / "train" / "tetra_0009.off"
    link.symlink_to(tmp_path / "elsewhere" / "tetra_0009.off")
    with pytest.raises(FileNotFoundError, match=f"^{re.escape(str(link))} is a symbolic link to "
                                                f"{re.escape(str(tmp_path / 'elsewhere' / 'tetra_0009.off'))}, "
                                                f"which does not exist .*delete the link"):
        load(root, tmp_path / "cache")


@pytest.mark.parametrize("seed", [-1, 1.5, True, "3", None])
def test_a_bad_seed_names_the_argument(tmp_path: Path, seed: object) -> None:
    root = write_modelnet(tmp_path / "ModelNet40")
    with pytest.raises(ValueError, match=f"^seed must be a non-negative integer .*, got {re.escape(repr(seed))}$"):
        load_modelnet40(root, "train", points=16, seed=seed, cache_dir=tmp_path / "cache", progress=False)
    assert not (tmp_path / "cache").exists()


def test_a_numpy_integer_seed_is_that_seed(tmp_path: Path) -> None:
    root = write_modelnet(tmp_path / "ModelNet40")
    plain = load(root, tmp_path / "cache")
    assert_same(load_modelnet40(root, "train", points=16, seed=np.int64(3), cache_dir=tmp_path / "other",
                                progress=False), plain)
    assert cache_path(tmp_path / "other", "train", 16, 3).is_file()


def test_the_digest_of_a_folder_names_its_meshes_not_where_it_is(tmp_path: Path) -> None:
    """``mesh_digest``, which a point-cloud sweep's identity holds: a copy of the folder elsewhere (its
    files with other modification times) has the digest of the original; a folder with one byte of one
    mesh changed, a mesh renamed, a mesh more or a class more has another."""
    import shutil

    def folder(root: Path) -> Path:
        for split in ("train", "test"):
            write(root / "cube" / split / "cube_0000.off", cube())
            write(root / "tetra" / split / "tetra_0000.off", TETRAHEDRON)
        return root

    original = modelnet.mesh_digest(folder(tmp_path / "A"))
    assert re.fullmatch(r"[0-9a-f]{64}", original)
    shutil.copytree(tmp_path / "A", tmp_path / "elsewhere" / "B")
    assert modelnet.mesh_digest(tmp_path / "elsewhere" / "B") == original
    changes = {
        "one byte": lambda root: write(root / "cube" / "test" / "cube_0000.off", cube().replace("1 1 1", "1 1 2")),
        "a mesh renamed": lambda root: (root / "cube" / "test" / "cube_0000.off").rename(
            root / "cube" / "test" / "cube_0001.off"),
        "a mesh more": lambda root: write(root / "tetra" / "train" / "tetra_0001.off", TETRAHEDRON),
        "a class more": lambda root: [write(root / "wedge" / split / "wedge_0000.off", TETRAHEDRON)
                                      for split in ("train", "test")],
    }
    for k, (what, change) in enumerate(changes.items()):
        root = folder(tmp_path / f"changed-{k}")
        assert modelnet.mesh_digest(root) == original
        change(root)
        assert modelnet.mesh_digest(root) != original, what


# --- MNIST IDX files --------------------------------------------------------------------------------


def idx(images: np.ndarray, magic: int = 0x00000803, count: int | None = None) -> bytes:
    """An IDX file of ``images`` ``[M, rows, cols]``; ``count`` overrides the declared ``M``."""
    shape = (len(images) if count is None else count, *images.shape[1:])
    header = b"".join(int(v).to_bytes(4, "big") for v in (magic, *shape))
    return header + images.astype(np.uint8).tobytes()


IMAGES = np.random.default_rng(0).integers(0, 256, size=(3, 28, 28))


def test_a_valid_gzipped_idx_file_reads(tmp_path: Path) -> None:
    path = tmp_path / "t10k-images-idx3-ubyte.gz"
    path.write_bytes(gzip.compress(idx(IMAGES)))
    np.testing.assert_allclose(load_mnist_idx(path), IMAGES / 255.0, rtol=1e-6)


@pytest.mark.parametrize("damage", ["bad crc", "corrupt stream", "trailing junk"])
def test_a_damaged_gzip_names_the_file(tmp_path: Path, damage: str) -> None:
    good = gzip.compress(idx(IMAGES))
    data = {"bad crc": good[:-8] + bytes([good[-8] ^ 1]) + good[-7:],
            "corrupt stream": good[:12] + b"\xff" * 40 + good[52:],
            "trailing junk": good + b"junk"}[damage]
    path = tmp_path / "train-images-idx3-ubyte.gz"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))} starts like a gzip file but cannot be "
                                         f"decompressed.*expected a complete gzipped") as caught:
        load_mnist_idx(path)
    assert isinstance(caught.value.__cause__, (OSError, EOFError, zlib.error))     # the original error, chained


@pytest.mark.parametrize("kept", ["half", "nine tenths", "24 bytes", "5 bytes"])
def test_a_truncated_gzip_says_what_it_holds_and_what_was_declared(tmp_path: Path, kept: str) -> None:
    """Cut inside the pixels, inside the compressed IDX header or inside the gzip header: the error
    names the file, the bytes its stream decompresses to and (once the IDX header is among them)
    how many that header declares."""
    good = gzip.compress(idx(IMAGES))
    data = good[:{"half": len(good) // 2, "nine tenths": 9 * len(good) // 10, "24 bytes": 24, "5 bytes": 5}[kept]]
    held = len(zlib.decompressobj(wbits=31).decompress(data))
    path = tmp_path / "train-images-idx3-ubyte.gz"
    path.write_bytes(data)
    found = (f"{held} of the {16 + 3 * 784} bytes that its IDX header declares \\(3 images of 28x28 pixels\\)"
             if held >= 16 else f"{held} bytes, not even the 16-byte IDX header")
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))} is a truncated gzip file: its {len(data)} bytes "
                                         f"stop before the end of the compressed stream and decompress to {found}; "
                                         f"expected a complete gzipped .*: fetch it again$") as caught:
        load_mnist_idx(path)
    assert isinstance(caught.value.__cause__, EOFError)


def test_random_bytes_named_gz_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "train-images-idx3-ubyte.gz"
    path.write_bytes(b"\x00\x01" + np.random.default_rng(1).bytes(1000))
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))} has magic number 0x0001.*, not 0x00000803"):
        load_mnist_idx(path)


@pytest.mark.parametrize("compress", [False, True])
def test_a_wrong_magic_or_count_names_the_file(tmp_path: Path, compress: bool) -> None:
    def saved(name: str, data: bytes) -> Path:
        path = tmp_path / (name + (".gz" if compress else ""))
        path.write_bytes(gzip.compress(data) if compress else data)
        return path

    wrong_magic = saved("magic", idx(IMAGES, magic=0x00000903))
    with pytest.raises(ValueError, match=f"^{re.escape(str(wrong_magic))} has magic number 0x00000903"):
        load_mnist_idx(wrong_magic)
    for count, held in ((4, 3), (2, 3)):                                       # too few and too many bytes
        mismatch = saved(f"count{count}", idx(IMAGES, count=count))
        with pytest.raises(ValueError, match=f"^{re.escape(str(mismatch))} declares {count} images of 28x28 "
                                             f"pixels \\({count * 784} bytes\\) but holds {held * 784} bytes"):
            load_mnist_idx(mismatch)
    empty = saved("empty", idx(IMAGES[:0]))
    with pytest.raises(ValueError, match=f"^{re.escape(str(empty))} declares 0 images"):
        load_mnist_idx(empty)
    header_only = saved("header", idx(IMAGES)[:10])
    with pytest.raises(ValueError, match=f"^{re.escape(str(header_only))} is too short \\(10 bytes\\)"):
        load_mnist_idx(header_only)
