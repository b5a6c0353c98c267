r"""The OFF mesh format, read strictly: a ModelNet40 file in, a :class:`trimesh.Trimesh` out.

**Checked line by line.** :func:`read_off` parses the file itself and checks every line against
the counts in the header, so a truncated or garbled file is a ValueError naming the file and the
line, never a smaller or scrambled mesh.

**The header quirk.** Some ModelNet files carry the counts on the header line, ``OFF490 518 0``
instead of ``OFF`` and then ``490 518 0``. :func:`read_off` accepts both; :func:`fix_off_header`
splits such a line for other OFF readers.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import trimesh

from .surface import FLOAT32_OVERFLOW

__all__ = ["MODELNET_URL", "fix_off_header", "read_off"]

#: Where ModelNet40 is published (the errors say where a good copy of a file comes from).
MODELNET_URL = "https://modelnet.cs.princeton.edu/"
#: ``OFF`` followed by anything but a line break on the header line (the counts).
_JOINED_HEADER = re.compile(r"\A(\s*)OFF[ \t]*(?=\S)")
#: What every error of :func:`read_off` ends with: where a good copy of the file comes from.
_OFF_ADVICE = ("the file is probably damaged (a truncated download or extraction): extract it again "
               f"from ModelNet40.zip ({MODELNET_URL}), or delete it to leave this mesh out")
#: The face line format, as the errors spell it.
_FACE = "a face 'k i1 ... ik'"
#: The most numbers an OFF face line may carry after its indices (the optional colour, RGBA).
_MAX_FACE_COLOUR = 4


def fix_off_header(text: str) -> str:
    """``text`` with its header line split when the counts follow ``OFF`` on it.

    ``fix_off_header("OFF490 518 0\\n...") == "OFF\\n490 518 0\\n..."``; a well-formed file comes
    back unchanged. Raises ValueError if the text does not start with ``OFF``.
    """
    if not text.lstrip().startswith("OFF"):
        first = text.lstrip().split("\n", 1)[0][:40]
        raise ValueError(f"an OFF file starts with 'OFF', this one with {first!r}")
    return _JOINED_HEADER.sub(r"\1OFF\n", text, count=1)


#: A line of an OFF file that holds data: its 1-based number and its text, without the ``#``
#: comment and the surrounding white space.
_Line = tuple[int, str]


def _data_lines(text: str) -> list[_Line]:
    """The lines of ``text`` that are not blank once their ``#`` comment is removed."""
    lines = ((number, line.split("#", 1)[0].strip()) for number, line in enumerate(text.split("\n"), 1))
    return [line for line in lines if line[1]]


def _off_error(path: Path, line: int | None, problem: str) -> ValueError:
    """The ValueError of a bad OFF file: ``"<path>, line <line>: <problem>; <advice>"``."""
    where = f"{path}" if line is None else f"{path}, line {line}"
    return ValueError(f"{where}: {problem}; {_OFF_ADVICE}")


def _shown(text: str, limit: int = 60) -> str:
    """``text`` quoted for an error message, cut to ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _counts(path: Path, line: _Line) -> tuple[int, int]:
    """``(n_vertices, n_faces)`` from the counts ``n_vertices n_faces [n_edges]`` (non-negative
    integers; the edge count is not used)."""
    number, text = line
    fields = text.split()
    if 2 <= len(fields) <= 3 and all(field.isdigit() for field in fields):
        return int(fields[0]), int(fields[1])
    raise _off_error(path, number, "expected the counts 'n_vertices n_faces n_edges' (non-negative "
                                   f"integers) after 'OFF', found {_shown(text)}")


def _vertex(path: Path, line: _Line) -> list[float]:
    """The coordinates of a vertex line: exactly 3 finite numbers that float32, the type of the
    clouds, holds without overflow (``|x| < 3.4e38``,
    :data:`~setfuncs.experiments.pointcloud.surface.FLOAT32_OVERFLOW`)."""
    try:
        coordinates = [float(field) for field in line[1].split()]
    except ValueError as err:
        raise _vertex_error(path, line) from err
    if len(coordinates) != 3 or not all(map(math.isfinite, coordinates)):
        raise _vertex_error(path, line)
    too_large = [x for x in coordinates if abs(x) >= FLOAT32_OVERFLOW]
    if too_large:
        raise _vertex_error(path, line, f", whose {too_large[0]:g} overflows float32, the type of the point "
                                        f"clouds (largest {float(np.finfo(np.float32).max):.4g})")
    return coordinates


def _vertex_error(path: Path, line: _Line, why: str = "") -> ValueError:
    """The error of a bad vertex line; ``why`` follows the line's text."""
    return _off_error(path, line[0], f"expected a vertex 'x y z' (3 finite numbers), found {_shown(line[1])}{why}")


def _face(path: Path, line: _Line, n_vertices: int) -> list[int]:
    """The vertex indices of a face line ``k i1 ... ik``: ``k >= 3`` and ``k`` integer indices in
    ``[0, n_vertices)``, optionally followed by a colour of at most :data:`_MAX_FACE_COLOUR` numbers."""
    number, text = line
    fields = text.split()
    k = int(fields[0]) if fields[0].isdigit() else 0
    if k < 3:
        raise _off_error(path, number, f"expected {_FACE} with k >= 3 vertices, found {_shown(text)}")
    try:
        indices = [int(index) for index in fields[1:k + 1]]
    except ValueError as err:
        raise _indices_error(path, line, k, n_vertices) from err
    if len(indices) < k or min(indices) < 0 or max(indices) >= n_vertices:
        raise _indices_error(path, line, k, n_vertices)
    colour = fields[k + 1:]
    if colour and (len(colour) > _MAX_FACE_COLOUR or not all(map(_is_number, colour))):
        raise _off_error(path, number, f"expected {_FACE} with k = {k}, then at most {_MAX_FACE_COLOUR} "
                                       f"colour numbers, found {_shown(text)}")
    return indices


def _indices_error(path: Path, line: _Line, k: int, n_vertices: int) -> ValueError:
    """The error of a face line whose indices are missing, not integers or out of range."""
    return _off_error(path, line[0], f"expected {_FACE} with {k} integer indices below {n_vertices}, "
                                     f"found {_shown(line[1])}")


def _is_number(text: str) -> bool:
    """Whether ``float(text)`` succeeds."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _parse_off(path: Path, text: str) -> tuple[np.ndarray, list[list[int]]]:
    """The vertices ``[n, 3]`` and the faces (lists of indices) of an OFF file's text.

    Checks the header (``OFF``, with the counts on its line or on the next one), every vertex and
    face line, and that exactly the declared numbers of vertex and face lines follow; blank lines
    and ``#`` comments are skipped. Raises ValueError naming ``path`` and the line.
    """
    lines = _data_lines(text)
    if not lines:
        raise _off_error(path, None, "expected the header 'OFF', found an empty file")
    (header_number, header), body, last = lines[0], lines[1:], lines[-1][0]
    if not header.startswith("OFF"):
        raise _off_error(path, header_number, f"expected the header 'OFF', found {_shown(header)}")
    if header[3:].strip():                                    # the quirk: 'OFF490 518 0'
        counts_line = (header_number, header[3:].strip())
    elif body:
        counts_line, body = body[0], body[1:]
    else:
        raise _off_error(path, last, "the file ends here, after 'OFF'; expected the counts "
                                     "'n_vertices n_faces n_edges'")
    n_vertices, n_faces = _counts(path, counts_line)
    declared = f"declared on line {counts_line[0]}"
    vertices = np.array([_vertex(path, line) for line in body[:n_vertices]], dtype=np.float64).reshape(-1, 3)
    if len(vertices) < n_vertices:
        raise _off_error(path, last, f"the file ends here, after {len(vertices)} of the {n_vertices} "
                                     f"vertices {declared}; expected {n_vertices - len(vertices)} more "
                                     f"vertex lines 'x y z'")
    faces = [_face(path, line, n_vertices) for line in body[n_vertices:n_vertices + n_faces]]
    if len(faces) < n_faces:
        raise _off_error(path, last, f"the file ends here, after {len(faces)} of the {n_faces} faces "
                                     f"{declared}; expected {n_faces - len(faces)} more face lines 'k i1 ... ik'")
    if len(body) > n_vertices + n_faces:
        extra_number, extra = body[n_vertices + n_faces]
        raise _off_error(path, extra_number, f"expected the end of the file after the {n_vertices} vertices "
                                             f"and {n_faces} faces {declared}, found {_shown(extra)}")
    return vertices, faces


def read_off(path: str | os.PathLike) -> trimesh.Trimesh:
    """The triangle mesh of one OFF file (polygons are triangulated, nothing else is changed).

    What is checked: the file is ASCII text; its first line with data is ``OFF`` (the counts may
    follow on the same line, as in some ModelNet40 files); the counts are 2 or 3 non-negative
    integers; every vertex line is 3 finite numbers of float32's range (``|x| < 3.4e38``: the
    clouds are float32); every face line is ``k i1 ... ik`` with ``k >= 3`` and ``k`` integer
    indices in ``[0, n_vertices)`` (and at most 4 colour numbers after them); the file holds
    exactly the declared numbers of vertex and face lines. Blank lines and ``#`` comments are
    skipped. Polygons are split into triangles as trimesh's OFF reader does
    (:func:`trimesh.geometry.triangulate_quads`: triangles first, then quads, then fans).

    Raises ValueError naming the file, the 1-based line (where there is one) and what was expected,
    e.g. ``".../chair_0001.off, line 12: expected a face 'k i1 ... ik' with 3 integer indices
    below 8, found '3 0 9 2'; ..."``.
    """
    path = Path(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise _off_error(path, line, f"expected ASCII text, found the byte {raw[err.start]:#04x}") from err
    vertices, faces = _parse_off(path, text)
    triangles = trimesh.geometry.triangulate_quads(faces).reshape(-1, 3)
    return trimesh.Trimesh(vertices=vertices, faces=triangles, process=False)
