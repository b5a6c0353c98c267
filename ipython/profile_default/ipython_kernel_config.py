# The kernels that run the chapters for the book (`make notebooks`, `make book`, `make test`; the
# Makefile points IPYTHONDIR here): every matplotlib figure is displayed as SVG, which the HTML book
# shows (sharp at any screen density; its text as text), and as a PNG at 200 dpi, which the PDF
# prints and `make figures` writes beside the SVG, with text at 11 points (14.7 CSS pixels in the
# book's 7-inch column, at least its 14-pixel captions). Each figure's output also holds its phone
# variant (setfuncs.phone: the panels re-laid for a phone's column), which the book's pages show on
# a phone (scripts/phone_figures.py). A reader's own kernel keeps IPython's defaults.
c = get_config()  # noqa: F821 (IPython's config loader defines it)
c.InlineBackend.figure_formats = {"svg", "png"}
c.InlineBackend.print_figure_kwargs = {"bbox_inches": "tight", "dpi": 200}
c.InlineBackend.rc = {"svg.fonttype": "none", "svg.hashsalt": "setfuncs", "font.size": 11}
c.InteractiveShellApp.exec_lines = ["__import__('setfuncs.phone', fromlist=['register']).register(get_ipython())"]
c.HistoryManager.enabled = False
