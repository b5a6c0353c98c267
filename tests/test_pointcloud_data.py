"""Point-cloud data (Section 4.3): OFF meshes read as ModelNet40 lays them out (header quirk,
damaged files, missing folders, the cache), uniform area-weighted surface samples, the offline
shapes, and Deep Sets' standardisation, augmentation and subsampling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh
from trimesh.triangles import closest_point

from setfuncs.experiments.pointcloud import (SHAPE_NAMES, augment, augmentation_parameters, base_mesh,
                                             fix_off_header, load_modelnet40, read_off, rotate_z,
                                             sample_surface, shape_meshes, standardize, subsample,
                                             synthetic_shapes)
from setfuncs.experiments.pointcloud.modelnet import cache_path

#: The unit right tetrahedron with corners 0, e_x, e_y, e_z; its counts joined to the header line
#: as in some ModelNet40 files.
TETRAHEDRON = ("OFF4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n"
               "3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n")
#: A unit square as one quadrilateral in the plane z = 0, with a well-formed header and a comment.
SQUARE = "OFF\n# a comment\n4 1 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n4 0 1 2 3\n"


def write_modelnet(root: Path, classes: dict[str, str], train: int = 3, test: int = 2) -> Path:
    """A ModelNet40-style folder: ``root/<class>/{train,test}/<class>_<i>.off`` with the given OFF text."""
    for name, text in classes.items():
        for split, count in (("train", train), ("test", test)):
            folder = root / name / split
            folder.mkdir(parents=True)
            for i in range(count):
                (folder / f"{name}_{i:04d}.off").write_text(text)
    return root


def on_tetrahedron_surface(points: np.ndarray, tol: float = 1e-5) -> np.ndarray:
    """Inside the closed tetrahedron and on one of its four faces."""
    inside = np.all(points >= -tol, axis=1) & (points.sum(axis=1) <= 1 + tol)
    on_face = (np.min(points, axis=1) <= tol) | (np.abs(points.sum(axis=1) - 1) <= tol)
    return inside & on_face


def test_the_joined_header_is_split() -> None:
    assert fix_off_header("OFF490 518 0\n1 2 3\n") == "OFF\n490 518 0\n1 2 3\n"
    assert fix_off_header("OFF 4 2 0\n") == "OFF\n4 2 0\n"
    assert fix_off_header(SQUARE) == SQUARE
    assert fix_off_header("OFF \n4 1 0\n") == "OFF \n4 1 0\n"
    with pytest.raises(ValueError, match="starts with 'OFF'"):
        fix_off_header("ply\nformat ascii 1.0\n")


def test_off_files_are_read_with_and_without_the_quirk(tmp_path: Path) -> None:
    (tmp_path / "tetra.off").write_text(TETRAHEDRON)
    (tmp_path / "square.off").write_text(SQUARE)
    tetra = read_off(tmp_path / "tetra.off")
    assert tetra.vertices.shape == (4, 3) and tetra.faces.shape == (4, 3)
    assert tetra.area == pytest.approx(1.5 + np.sqrt(3) / 2)
    square = read_off(tmp_path / "square.off")
    assert square.faces.shape == (2, 3) and square.area == pytest.approx(1.0)   # the quad, triangulated


@pytest.mark.parametrize("text", ["hello world\n", "OFF\n4 2 0\n0 0 0\n1 0\n",
                                  "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n", "", "OFF\nfour two zero\n"])
def test_a_damaged_mesh_names_its_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "chair_0001.off"
    path.write_text(text)
    with pytest.raises(ValueError, match="chair_0001.off.*extract it again"):
        read_off(path)
    path.write_bytes(b"OFF\n\xff\xfe\x00binary")
    with pytest.raises(ValueError, match="chair_0001.off"):
        read_off(path)


def test_a_mesh_without_area_names_its_file(tmp_path: Path) -> None:
    root = write_modelnet(tmp_path / "data", {"good": TETRAHEDRON,
                                             "flat": "OFF\n3 1 0\n0 0 0\n1 1 1\n2 2 2\n3 0 1 2\n"})
    with pytest.raises(ValueError, match=r"flat_0000\.off has zero surface area.*delete the file"):
        load_modelnet40(root, "train", points=8, progress=False)
    without_faces = trimesh.Trimesh(np.eye(3), np.zeros((0, 3), dtype=int), process=False)
    with pytest.raises(ValueError, match="empty.off has zero surface area"):
        sample_surface(without_faces, 5, np.random.default_rng(0), name="empty.off")


def test_missing_and_empty_folders(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError,
                       match=r"no ModelNet40 folder.*modelnet\.cs\.princeton\.edu.*<class>/\{train,test\}"):
        load_modelnet40(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no class folder with a 'train' subfolder"):
        load_modelnet40(tmp_path / "empty")
    (tmp_path / "bare" / "lamp" / "test").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=r"lamp/test holds no \.off mesh"):
        load_modelnet40(tmp_path / "bare", "test")
    with pytest.raises(ValueError, match="split must be one of"):
        load_modelnet40(tmp_path / "bare", "validation")


def test_modelnet_clouds_labels_and_classes(tmp_path: Path) -> None:
    root = write_modelnet(tmp_path / "ModelNet40", {"tetra": TETRAHEDRON, "square": SQUARE}, train=3, test=2)
    clouds, labels, names = load_modelnet40(root, "train", points=50, progress=False)
    assert names == ["square", "tetra"]                                   # sorted class folders
    assert clouds.shape == (6, 50, 3) and clouds.dtype == np.float32
    assert labels.dtype == np.int64 and labels.tolist() == [0, 0, 0, 1, 1, 1]
    square, tetra = clouds[:3].reshape(-1, 3), clouds[3:].reshape(-1, 3)
    assert np.all(square[:, 2] == 0) and np.all((square[:, :2] >= 0) & (square[:, :2] <= 1))
    assert np.all(on_tetrahedron_surface(tetra))
    assert not np.array_equal(clouds[3], clouds[4])                      # every mesh has its own draw
    test_clouds, test_labels, _ = load_modelnet40(root, "test", points=20, progress=False)
    assert test_clouds.shape == (4, 20, 3) and test_labels.tolist() == [0, 0, 1, 1]


def test_the_cache_is_reused_and_keyed(tmp_path: Path) -> None:
    root = write_modelnet(tmp_path / "data", {"tetra": TETRAHEDRON}, train=2, test=1)
    cache = tmp_path / "cache"
    first = load_modelnet40(root, "train", points=30, seed=1, cache_dir=cache, progress=False)
    assert cache_path(cache, "train", 30, 1).is_file() and cache_path(cache, "train", 30, 1).name == \
        "modelnet40-train-30points-seed1.npz"
    second = load_modelnet40(root, "train", points=30, seed=1, cache_dir=cache, progress=False)
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1]) and first[2] == second[2]
    (root / "tetra" / "train" / "tetra_0000.off").write_text("damaged")  # a changed mesh: the cache is stale
    with pytest.raises(ValueError, match="tetra_0000.off"), pytest.warns(UserWarning, match="is stale"):
        load_modelnet40(root, "train", points=30, seed=1, cache_dir=cache, progress=False)
    with pytest.raises(ValueError, match="tetra_0000.off"):              # another key parses the meshes
        load_modelnet40(root, "train", points=31, seed=1, cache_dir=cache, progress=False)
    (root / "tetra" / "train" / "tetra_0000.off").write_text(TETRAHEDRON)
    other_seed = load_modelnet40(root, "train", points=30, seed=2, cache_dir=cache, progress=False)
    assert not np.array_equal(other_seed[0], first[0])
    (root / "tetra" / "train" / "tetra_0002.off").write_text(TETRAHEDRON)  # a new file: the cache is stale
    with pytest.warns(UserWarning, match="made from 2 mesh files, the folder now holds 3"):
        grown = load_modelnet40(root, "train", points=30, seed=1, cache_dir=cache, progress=False)
    assert grown[0].shape == (3, 30, 3) and np.array_equal(grown[0][:2], first[0])
    assert not cache_path(root, "train", 5, 0).exists()
    load_modelnet40(root, "train", points=5, progress=False)                    # default: cached in root
    assert cache_path(root, "train", 5, 0).is_file()


def test_particles_are_spread_by_area() -> None:
    """Two triangles with areas 1 and 3: a quarter of the particles land on the small one, and the
    particles on each triangle are uniform on it (their mean is its centroid)."""
    vertices = np.array([[0, 0, 0], [2, 0, 0], [0, 1, 0], [10, 0, 0], [13, 0, 0], [10, 2, 0]], dtype=float)
    mesh = trimesh.Trimesh(vertices, [[0, 1, 2], [3, 4, 5]], process=False)
    assert mesh.area_faces.tolist() == [1.0, 3.0]
    points = sample_surface(mesh, 40_000, np.random.default_rng(0))
    small = points[:, 0] < 5
    assert abs(small.mean() - 0.25) < 4 * np.sqrt(0.25 * 0.75 / 40_000)
    np.testing.assert_allclose(points[small].mean(axis=0), vertices[:3].mean(axis=0), atol=0.02)
    np.testing.assert_allclose(points[~small].mean(axis=0), vertices[3:].mean(axis=0), atol=0.02)
    assert np.all(points[:, 2] == 0)
    assert np.array_equal(sample_surface(mesh, 100, np.random.default_rng(5)),
                          sample_surface(mesh, 100, np.random.default_rng(5)))


def test_synthetic_shapes_form_and_seeds() -> None:
    clouds, labels, names = synthetic_shapes(3, "train", points=64, seed=0)
    assert names == list(SHAPE_NAMES) and len(names) >= 10 and len(set(names)) == len(names)
    assert clouds.shape == (3 * len(names), 64, 3) and clouds.dtype == np.float32
    assert labels.dtype == np.int64 and labels.tolist() == [c for c in range(len(names)) for _ in range(3)]
    assert np.all(np.isfinite(clouds))
    same, _, _ = synthetic_shapes(3, "train", points=64, seed=0)
    other, _, _ = synthetic_shapes(3, "train", points=64, seed=1)
    test, _, _ = synthetic_shapes(3, "test", points=64, seed=0)
    assert np.array_equal(clouds, same)
    assert not np.array_equal(clouds, other) and not np.array_equal(clouds, test)
    with pytest.raises(ValueError, match="split must be one of"):
        synthetic_shapes(1, "val")
    with pytest.raises(ValueError, match="unknown shape"):
        base_mesh("teapot")


def test_synthetic_particles_lie_on_their_deformed_meshes() -> None:
    meshes, labels = shape_meshes(1, "test", seed=3)
    clouds, cloud_labels, _ = synthetic_shapes(1, "test", points=100, seed=3)
    assert np.array_equal(labels, cloud_labels)
    for mesh, cloud, name in zip(meshes, clouds, SHAPE_NAMES):
        assert base_mesh(name).is_watertight, name
        triangles = np.repeat(mesh.triangles[None], len(cloud), axis=0).reshape(-1, 3, 3)
        nearest = closest_point(triangles, np.repeat(cloud, len(mesh.faces), axis=0))
        distance = np.linalg.norm(nearest - np.repeat(cloud, len(mesh.faces), axis=0), axis=1)
        assert distance.reshape(len(cloud), -1).min(axis=1).max() < 1e-5 * mesh.scale, name
        # the deformation changed the base shape: size, proportions and heading are random
        assert not np.allclose(np.sort(mesh.extents), np.sort(base_mesh(name).extents)), name


def test_standardize_gives_zero_mean_and_unit_std() -> None:
    rng = np.random.default_rng(0)
    clouds = (rng.normal(size=(5, 200, 3)) * [1, 4, 0.2] + rng.normal(size=(5, 1, 3)) * 10).astype(np.float32)
    z = standardize(clouds)
    np.testing.assert_allclose(z.mean(axis=(1, 2)), 0, atol=1e-5)
    np.testing.assert_allclose(z.std(axis=(1, 2)), 1, atol=1e-5)
    assert z.std(axis=1).std(axis=1).min() > 0.1                   # one std for all axes, not one per axis
    np.testing.assert_allclose(standardize(3 * clouds + 7), z, atol=1e-4)
    # a stray vertex 3,000 times the mean |x| is clipped to 100 times it before standardising,
    # so the other particles keep about 30 times more spread than plain standardisation leaves them
    outlier = np.vstack([rng.normal(size=(999, 3)), [[1e7, 0, 0]]]).astype(np.float64)
    plain = (outlier - outlier.mean()) / outlier.std()
    clipped = standardize(outlier[None].astype(np.float32))[0]
    assert clipped[:-1].std() > 10 * plain[:-1].std()
    assert clipped[-1, 0] == pytest.approx(clipped.max())
    with pytest.raises(ValueError, match="all particles at one point"):
        standardize(np.ones((2, 10, 3)))
    with pytest.raises(ValueError, match=r"\[B, N, 3\]"):
        standardize(np.ones((10, 3)))


def test_rotation_is_about_z() -> None:
    x = np.array([[[1, 0, 2], [0, 3, -1]]], dtype=np.float32)
    np.testing.assert_allclose(rotate_z(x, np.array([np.pi / 2])), [[[0, 1, 2], [-3, 0, -1]]], atol=1e-6)


def test_augmentation_is_a_small_z_rotation_and_an_axis_scaling() -> None:
    """Fit the linear map of each augmented cloud: z is only scaled, and the xy block is a scale
    per axis times a rotation by at most 0.1 pi."""
    rng = np.random.default_rng(0)
    clouds = rng.normal(size=(200, 30, 3)).astype(np.float32)
    augmented = augment(clouds, np.random.default_rng(1))
    angles, scales = augmentation_parameters(200, np.random.default_rng(1))
    thetas = []
    for before, after, scale in zip(clouds, augmented, scales):
        maps, *_ = np.linalg.lstsq(before, after, rcond=None)
        a = maps.T                                                     # after = a @ before
        np.testing.assert_allclose(a[2, :2], 0, atol=1e-5)
        np.testing.assert_allclose(a[:2, 2], 0, atol=1e-5)
        row_norms = np.linalg.norm(a[:2, :2], axis=1)
        assert np.all((row_norms >= 0.8 - 1e-5) & (row_norms < 1.25 + 1e-5)) and 0.8 - 1e-5 <= a[2, 2] < 1.25
        np.testing.assert_allclose([*row_norms, a[2, 2]], scale, rtol=1e-4)
        thetas.append(np.arctan2(a[1, 0] / row_norms[1], a[0, 0] / row_norms[0]))
    thetas = np.array(thetas)
    np.testing.assert_allclose(thetas, angles, atol=1e-4)
    assert np.all(np.abs(thetas) <= 0.1 * np.pi + 1e-5)
    assert thetas.min() < -0.08 * np.pi and thetas.max() > 0.08 * np.pi  # the whole range is used
    assert scales.min() < 0.82 and scales.max() > 1.23


def test_subsample_draws_distinct_particles() -> None:
    clouds = np.arange(2 * 50 * 3, dtype=np.float32).reshape(2, 50, 3)
    small = subsample(clouds, 10, np.random.default_rng(0))
    assert small.shape == (2, 10, 3)
    for cloud, subset in zip(clouds, small):
        rows = [int(np.flatnonzero((cloud == p).all(axis=1))[0]) for p in subset]
        assert len(set(rows)) == 10                                    # without replacement
    assert np.array_equal(small, subsample(clouds, 10, np.random.default_rng(0)))
    assert not np.array_equal(small, subsample(clouds, 10, np.random.default_rng(1)))
    assert np.array_equal(np.sort(subsample(clouds, 50, np.random.default_rng(0)), axis=1), clouds)
    with pytest.raises(ValueError, match="n must be an int in 1..50"):
        subsample(clouds, 51, np.random.default_rng(0))
