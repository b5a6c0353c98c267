"""The inliner of the explorables' modules (setfuncs/explorables/esm.py): one module out of an entry
file and the siblings it imports, each once, and a clear refusal of every import it cannot inline."""

from __future__ import annotations

from pathlib import Path

import pytest

from setfuncs.explorables.esm import module_order, module_source


def write(folder: Path, **files: str) -> Path:
    for name, text in files.items():
        (folder / f"{name}.js").write_text(text, encoding="utf-8")
    return folder


def test_siblings_are_inlined_once_in_import_order_without_export(tmp_path: Path) -> None:
    folder = write(tmp_path, lib='export function a() { return 1; }\nconst hidden = 2;\n',
                   more='import { a } from "./lib.js";\nexport const b = () => a() + 1;\n',
                   entry='import { a } from "./lib.js";\nimport { b } from "./more.js";\n'
                         'export default { render() { return a() + b(); } };\n')
    source = module_source("entry", folder)
    assert source.count("function a()") == 1 and "export function" not in source and "import" not in source
    assert source.index("function a()") < source.index("const b") < source.index("export default")


def test_a_module_comes_after_everything_it_imports_each_once(tmp_path: Path) -> None:
    folder = write(tmp_path, lib="export const a = 1;\n", more='import { a } from "./lib.js";\nexport const b = a;\n',
                   entry='import { b } from "./more.js";\nimport { a } from "./lib.js";\nexport default {};\n')
    assert module_order("entry", folder) == ["lib", "more", "entry"]
    assert module_order("circle") == ["lib", "deepset", "welzl", "circle_data", "circle"]


@pytest.mark.parametrize("files, message", [
    ({"entry": 'import x from "./lib.js";\n', "lib": "export const x = 1;\n"}, "can be inlined"),
    ({"entry": 'import { y } from "./lib.js";\n', "lib": "export const x = 1;\n"}, "does not export"),
    ({"entry": 'import { x } from "./lib.js";\nconst x2 = 1;\n', "lib": 'import { z } from "./entry.js";\nexport const x = 1;\n'},
     "cycle"),
    ({"entry": 'import { x } from "./lib.js";\nconst x = 2;\n', "lib": "export const x = 1;\n"}, "clash"),
    ({"entry": 'import { x } from "./missing.js";\n'}, "no such explorable module"),
])
def test_what_cannot_be_inlined_is_refused_naming_the_file(tmp_path: Path, files: dict, message: str) -> None:
    write(tmp_path, **files)
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        module_source("entry", tmp_path)
