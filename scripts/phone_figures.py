"""On a phone, every figure that has a phone variant shows it: a local Sphinx extension (``_config.yml``).

The book's kernel adds to each matplotlib figure's output a second SVG, the figure re-laid for a
phone's column (:mod:`setfuncs.phone`), in the output's metadata under
:data:`~setfuncs.phone.PHONE_MIME`. MyST-NB shows
one mime type per output, the book's SVG, written as ``_images/<sha256 of the SVG>.svg``. For every
page built from a notebook, :func:`phone_pictures` reads the executed notebook the page was built
from (:func:`executed_notebook`, from MyST-NB's jupyter-cache), writes each phone variant beside its figure as
``_images/<hash>-phone.svg`` and turns the figure's ``<img>`` into a ``<picture>`` that picks the
phone variant below :data:`PHONE_BREAK` CSS pixels of viewport (:func:`with_phone_source`). The
``<img>`` itself, its alt text and the desktop SVG are unchanged, so a browser without ``<picture>``,
the PDF and ``make figures`` see the book's figure.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

from setfuncs.phone import PHONE_MIME

__all__ = ["PHONE_BREAK", "phone_variants", "with_phone_source", "executed_notebook", "phone_pictures", "setup"]

#: Below this viewport width (CSS pixels) a page shows the phone variants: phones, not tablets.
PHONE_BREAK = 576
#: A figure's image as MyST-NB writes it: ``<img alt="..." src="../_images/<64 hex>.svg" />``.
IMAGE = re.compile(r'<img (?P<attributes>[^>]*?)src="(?P<folder>[^"]*?_images/)(?P<hash>[0-9a-f]{64})\.svg"(?P<rest>[^>]*)>')
#: The hashes of the figures a page's body shows.
IMAGE_HASH = re.compile(r'_images/([0-9a-f]{64})\.svg"')


def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


def phone_variants(notebook: dict[str, Any]) -> dict[str, str]:
    """``{sha256 of a figure's SVG: its phone variant}`` for every output of ``notebook`` that has both."""
    variants = {}
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            data, phone = output.get("data", {}), output.get("metadata", {}).get(PHONE_MIME, {})
            if "image/svg+xml" in data and "svg" in phone:
                # the name MyST-NB gives the figure's file: the SHA-256 of its lines joined by os.linesep
                svg = os.linesep.join(_text(data["image/svg+xml"]).splitlines())
                variants[hashlib.sha256(svg.encode("utf-8")).hexdigest()] = _text(phone["svg"])
    return variants


def with_phone_source(body: str, hashes: set[str]) -> str:
    """``body`` with each ``<img>`` of a figure in ``hashes`` inside a ``<picture>`` whose source,
    below :data:`PHONE_BREAK` px, is ``<hash>-phone.svg`` in the same folder."""
    def picture(found: re.Match) -> str:
        if found["hash"] not in hashes:
            return found[0]
        phone = f'{found["folder"]}{found["hash"]}-phone.svg'
        return (f'<picture><source media="(max-width: {PHONE_BREAK - 0.02}px)" srcset="{phone}" '
                f'type="image/svg+xml" />{found[0]}</picture>')
    return IMAGE.sub(picture, body)


def executed_notebook(app: Any, pagename: str) -> dict[str, Any] | None:
    """The executed notebook the page was built from: the record of MyST-NB's jupyter-cache that
    matches the page's source notebook (None for a page that is no notebook or has no record)."""
    source = Path(app.env.doc2path(pagename))
    # MyST-NB's cache, where _config.yml leaves it: <build folder>/.jupyter_cache
    cache_path = Path(app.env.mystnb_config.execution_cache_path or Path(app.outdir).parent / ".jupyter_cache")
    if source.suffix != ".ipynb" or not cache_path.is_dir():
        return None
    import nbformat
    from jupyter_cache import get_cache

    cache = get_cache(cache_path)
    try:
        record = cache.match_cache_notebook(nbformat.read(source, as_version=4))
    except KeyError:  # not in the cache: the page shows no executed outputs either
        return None
    return cache.get_cache_bundle(record.pk).nb


def phone_pictures(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """Write the page's phone variants into ``_images/`` and point its figures at them."""
    if "body" not in context or not IMAGE_HASH.search(context["body"]):
        return
    notebook = executed_notebook(app, pagename)
    variants = phone_variants(notebook) if notebook is not None else {}
    shown = set(IMAGE_HASH.findall(context["body"])) & set(variants)
    if not shown:
        return
    images = Path(app.outdir) / "_images"
    images.mkdir(exist_ok=True)
    for digest in shown:
        (images / f"{digest}-phone.svg").write_text(variants[digest], encoding="utf-8")
    context["body"] = with_phone_source(context["body"], shown)


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", phone_pictures, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
