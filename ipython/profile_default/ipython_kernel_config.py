# The kernels that run the chapters for the book (`make notebooks`, `make book`, `make test`; the
# Makefile points IPYTHONDIR here): every matplotlib figure is displayed as SVG, which the HTML book
# shows (sharp at any screen density; its text as text), and as a PNG at 200 dpi, which the PDF
# prints and `make figures` writes beside the SVG. A reader's own kernel keeps IPython's defaults.
c = get_config()  # noqa: F821 (IPython's config loader defines it)
c.InlineBackend.figure_formats = {"svg", "png"}
c.InlineBackend.print_figure_kwargs = {"bbox_inches": "tight", "dpi": 200}
c.InlineBackend.rc = {"svg.fonttype": "none", "svg.hashsalt": "setfuncs"}
c.HistoryManager.enabled = False
