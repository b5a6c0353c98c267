# The commands of the README:  `make lab`,  `make book`  and  `make test`.
# `make lab` needs only the virtual environment in .venv (requirements.txt and this package);
# `make book` adds the book's JavaScript from package-lock.json (npm ci); `make test` adds Debian's
# chromium for the browser test and XeLaTeX for the PDF (`make pdf`), the steps that need root
# (apt-get).
SHELL := /bin/bash
# The Python that creates .venv: 3.11 or newer (numpy 2.4, scipy, matplotlib, scikit-learn,
# ipykernel and hypothesis in requirements.txt need it). `make PYTHON=python3.12 lab` picks another.
PYTHON ?= python3
PY := .venv/bin/python
JB := .venv/bin/jupyter-book
# One thread per process: nbmake and the unit tests run two workers on two cores.
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

NOTEBOOKS := $(wildcard book/*.ipynb)
# The two longest chapters first (results/benchmarks/chapter-times.json), so that the two workers
# do not end with one of them running alone.
LONGEST := book/11_attention.ipynb book/06_learnable_aggregations.ipynb
LONGEST_FIRST := $(LONGEST) $(filter-out $(LONGEST),$(NOTEBOOKS))
# Two kernels that start at the same moment can pick the same random port (jupyter_client /
# nbmake issue #129: "Kernel died before replying to kernel_info"). Only that start-up failure is
# retried; a notebook that fails while running fails the build.
KERNEL_START_RERUN := --reruns 2 --only-rerun "Kernel died before replying to kernel_info"
# Build-only, git-ignored folders: the JavaScript the book serves itself, and the copies of the
# chapters that nbmake executes (not under _build: nbmake skips any path with a _build part).
STATIC := _build/static
EXECUTED := .nbmake

# JupyterLab listens here; `make lab LAB_IP=0.0.0.0` serves other machines too. More options of
# `jupyter lab` go in LAB_FLAGS, e.g. `make lab LAB_FLAGS="--no-browser --port 8899"` (or
# `--allow-root` in a container that runs as root, which JupyterLab otherwise refuses).
LAB_IP ?= 127.0.0.1
LAB_FLAGS ?=

.PHONY: setup lab test book unit notebooks built-book built-book-browser built-book-pdf browser bench clean pdf pdf-checked wheel figures

setup: .venv/.stamp $(STATIC)/.stamp

# requirements.txt holds only pins, so it installs from any folder; the package is installed
# editable from this folder, so the chapters import the working tree's setfuncs. uv (pinned here,
# put into .venv by pip) installs them: into a fresh venv it took 81 s where pip took 157 s
# (27 November 2026, this 2-core machine, one core busy, warm caches), the same pins either way.
# Both compile the installed modules: this machine sets PYTHONDONTWRITEBYTECODE=1, so a module
# left uncompiled is compiled again by every process that imports it (uncompiled, the unit tests
# of a fresh clone took 588 s instead of 374 s). uv does not read pip's configuration: where pip
# is told of local wheels (PIP_FIND_LINKS, as on this machine for torch's CPU wheel), uv is told too.
UV := .venv/bin/uv
UV_VERSION := 0.13.9
UV_INSTALL := $(UV) pip install --quiet --python $(PY) --compile-bytecode \
  $(foreach links,$(PIP_FIND_LINKS),--find-links $(links))
# uv at its pinned version in .venv (also in a .venv made before make used uv)
ENSURE_UV := { [ "$$($(UV) --version 2>/dev/null | cut -d' ' -f2)" = "$(UV_VERSION)" ] \
  || $(PY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION); }
.venv/.stamp: requirements.txt pyproject.toml
	@test -x $(PY) || { \
	  where="$$(command -v $(PYTHON))" && version="$$($(PYTHON) -c 'import platform; print(platform.python_version())' 2>/dev/null)" \
	    || { echo "make needs Python 3.11 or newer; '$(PYTHON)' does not run here; set PYTHON=python3.11" >&2; exit 1; }; \
	  $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	    || { echo "make needs Python 3.11 or newer; found $$version at $$where; set PYTHON=python3.11" >&2; exit 1; }; \
	  echo "$(PYTHON) -m venv .venv"; $(PYTHON) -m venv .venv; }
	$(ENSURE_UV)
	$(UV_INSTALL) -r requirements.txt
	$(UV_INSTALL) -e "$(CURDIR)"
	touch $@

# The chapters in JupyterLab (jupyterlab-myst renders their exercises, citations and
# cross-references); it prints the address to open, with its token.
lab: .venv/.stamp
	.venv/bin/jupyter lab --ip=$(LAB_IP) $(LAB_FLAGS) book/

node_modules/.stamp: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	touch $@

# Only the files the pages load: the explorables' ES modules and their loader (every page loads the
# loader, setfuncs/explorables/js/loader.js; it imports a module only where a page has an explorable),
# the search results' snippets without TeX (js/search-snippets.js),
# MathJax with its fonts, TeX extensions and accessibility assets (its menu's speech and explorer
# load a11y/ and sre/ on demand) on pages with maths. Sphinx copies them to _static, but only when it
# writes pages, so a change here drops the HTML (not the execution cache). No widget runtime: the
# book's HTML shows the explorables' own elements, not ipywidgets views.
EXPLORABLES_JS := $(wildcard setfuncs/explorables/js/*.js)
$(STATIC)/.stamp: node_modules/.stamp $(EXPLORABLES_JS) js/search-snippets.js
	rm -rf $(STATIC) _build/html
	mkdir -p $(STATIC)/explorables $(STATIC)/mathjax/output/chtml/fonts $(STATIC)/mathjax/input/tex
	cp $(EXPLORABLES_JS) $(STATIC)/explorables/
	cp js/search-snippets.js $(STATIC)/
	cp node_modules/mathjax/es5/tex-mml-chtml.js $(STATIC)/mathjax/
	cp -r node_modules/mathjax/es5/output/chtml/fonts/woff-v2 $(STATIC)/mathjax/output/chtml/fonts/
	cp -r node_modules/mathjax/es5/input/tex/extensions $(STATIC)/mathjax/input/tex/
	cp -r node_modules/mathjax/es5/a11y node_modules/mathjax/es5/sre node_modules/mathjax/es5/ui $(STATIC)/mathjax/
	touch $@

# The wheel of setfuncs that every chapter's first cell installs from the published site
# (scripts/install_cell.py): the package and the results files the chapters read, and no notebook,
# so that no solution reaches a student's disk. It goes into $(STATIC), which Sphinx copies to
# _build/html/_static (_static/wheels/setfuncs-<version>-py3-none-any.whl), after $(STATIC)/.stamp,
# which empties $(STATIC); `make book`, `make test` and `make student` build it first.
SETFUNCS_VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' pyproject.toml)
WHEEL := $(STATIC)/wheels/setfuncs-$(SETFUNCS_VERSION)-py3-none-any.whl
$(WHEEL): $(STATIC)/.stamp .venv/.stamp scripts/wheel.py scripts/student_edition.py pyproject.toml LICENSE \
          $(shell find setfuncs -name '*.py' -not -path '*/__pycache__/*') \
          $(wildcard results/*.json results/*.txt results/*/*.json results/*/*.txt)
	$(PY) scripts/wheel.py --out $(STATIC)/wheels

wheel: $(WHEEL)

/usr/bin/chromium:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium

# Debian's XeLaTeX with the LaTeX packages Sphinx and sphinx-jupyterbook-latex load (bbm.sty,
# which the latter's document class loads, only comes with texlive-fonts-extra, as does the
# STIX Two maths font), latexmk, xindy for the index, and FreeFont, Sphinx's XeLaTeX fonts (Greek,
# arrows, ≤, ∞ and the like). All are installed at once where any of these files is missing.
TEX := /usr/bin/xelatex /usr/share/texlive/texmf-dist/tex/latex/bbm-macros/bbm.sty \
       /usr/bin/latexmk /usr/bin/xindy /usr/share/fonts/opentype/freefont/FreeSerif.otf
$(TEX) &:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends texlive-xetex \
	  texlive-latex-extra texlive-fonts-recommended texlive-fonts-extra latexmk xindy \
	  fonts-freefont-otf

# Each chapter runs once: nbmake executes copies of the notebooks (the committed ones stay
# clean), the executed copies seed the book's jupyter-cache, and the build reuses them. Chromium
# and XeLaTeX are installed first (apt-get, one at a time). Once the chapters have run, the unit
# tests run beside the built book's steps (built-book): the HTML build and XeLaTeX take one core
# each and the browser test mostly waits for pages and a kernel, so on two cores the unit tests fill
# what they leave (each log is printed whole when its step ends).
test: setup $(WHEEL) /usr/bin/chromium $(TEX) notebooks
	$(MAKE) -j 3 --output-sync=target unit built-book-browser built-book-pdf

# The executed chapters' outputs checked and the book built from them; then the browser test and
# the PDF, side by side.
built-book: setup
	EXECUTED_OUTPUTS_REQUIRED=1 $(PY) -m pytest -q tests/test_executed_outputs.py tests/test_chapter_outputs.py
	$(SEED_CACHE)
	$(JB) build . --all -W -n --keep-going
built-book-browser built-book-pdf: built-book
built-book-browser:
	$(MAKE) browser
built-book-pdf:
	$(MAKE) pdf-checked

# The browser and PDF tests run in `make test` once their book is built, not on an older build;
# tests/test_executed_outputs.py and tests/test_chapter_outputs.py once the chapters have run (no nan or inf
# they do not mean; every cell's output as its committed digest).
unit: setup
	$(PY) -m pytest -n 2 tests --ignore=tests/test_browser.py --ignore=tests/test_figures.py --ignore=tests/test_pdf.py \
	  --ignore=tests/test_executed_outputs.py --ignore=tests/test_chapter_outputs.py --durations=15

# The chapters run as the book shows them: without progress bars (SETFUNCS_PROGRESS=off; a reader's
# kernel shows them) and with every figure as SVG and as a PNG at 200 dpi (the IPython profile in
# ipython/: the HTML book shows the SVG, the PDF prints the PNG, `make figures` writes both).
BOOK_KERNEL_ENV := SETFUNCS_PROGRESS=off IPYTHONDIR=$(CURDIR)/ipython
notebooks: setup
	rm -rf $(EXECUTED)
	mkdir -p $(EXECUTED)
	cp $(NOTEBOOKS) $(EXECUTED)/
	$(BOOK_KERNEL_ENV) $(PY) -m pytest -n 2 --nbmake --overwrite $(addprefix $(EXECUTED)/,$(notdir $(LONGEST_FIRST))) $(KERNEL_START_RERUN)

# Two workers, each with its own chromium: a test spends much of its time waiting (for a page to
# settle, for the kernel), and in `make test` the PDF beside them needs one core for about two minutes
# (fresh-clone `make test`: 214 s on one worker at 685b6a3, 164 s on two at d694b5e). It writes
# `make figures`' files first, which tests/test_figures.py checks.
browser: setup /usr/bin/chromium
	$(FIGURES)
	BOOK_BROWSER_TEST_REQUIRED=1 $(PY) -m pytest -n 2 -rP tests/test_browser.py tests/test_figures.py

# --all re-reads every page (executed outputs still come from the cache): sphinx-proof keeps
# labels of a page's previous version in a reused environment and then reports them as duplicates.
# The book is built from the chapters nbmake has just run (`make notebooks`), seeded into its
# jupyter-cache without their widget state: the pages carry no widget runtime and no widget JSON.
SEED_CACHE = $(PY) scripts/seed_book_cache.py _build/.jupyter_cache book $(EXECUTED)/*.ipynb
book: setup $(WHEEL) notebooks
	$(SEED_CACHE)
	$(JB) build . --all -W -n --keep-going

# Every numbered figure of the built book as _build/figures/fig-<chapter>-<n>.svg and .png (2x),
# named by its number (Fig. 4.1 -> fig-4-1), for slides and handouts (scripts/figures.py).
FIGURES = $(PY) scripts/figures.py --html _build/html --executed $(EXECUTED) --out _build/figures
figures: book
	$(FIGURES)

# The whole book as one PDF, _build/latex/deep-sets-book.pdf (README, "Build and test"), without
# the API reference (`make api-pdf`). It reads the executed chapters from _build/.jupyter_cache, as
# `make book` does; scripts/pdf_book.py writes its configuration and table of contents and adds
# the extension that prints sliders as still frames and result tables as tables.
# (MAKEFLAGS is cleared for the make that Jupyter Book runs in _build/latex: under `make -j` it
# would inherit a jobserver whose pipes Python closed, and warn.)
LATEX_ENV := MAKEFLAGS= LATEXOPTS="-interaction=nonstopmode -halt-on-error"
pdf: setup $(TEX)
	$(PY) scripts/pdf_book.py _build/pdf_config.yml _build/pdf_toc.yml
	$(LATEX_ENV) $(JB) build . --builder pdflatex --config _build/pdf_config.yml --toc _build/pdf_toc.yml \
	  --all -W -n --keep-going
	# the HTML book's "PDF book" entry (scripts/book_pages.py) links this copy
	if [ -d _build/html/_static ]; then cp _build/latex/deep-sets-book.pdf _build/html/_static/; fi

# The API reference of setfuncs as a PDF of its own, _build/api/_build/latex/setfuncs-api.pdf.
api-pdf: setup $(TEX)
	$(PY) scripts/pdf_book.py --api _build/api
	$(LATEX_ENV) $(JB) build . --builder pdflatex --config _build/api/_config.yml --toc _build/api/_toc.yml \
	  --path-output _build/api --all -W -n --keep-going

# The PDF, then its test (`make test` runs both beside the browser test).
pdf-checked: pdf
	BOOK_PDF_TEST_REQUIRED=1 $(PY) -m pytest tests/test_pdf.py

bench: setup
	$(ENSURE_UV)
	$(UV_INSTALL) -r benchmarks/requirements.txt
	OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 $(PY) benchmarks/aggregations.py

clean:
	rm -rf _build .venv node_modules $(EXECUTED)

# The student edition (README, "Teaching with this book"): every {solution} and every self-check
# answer removed from the pages, _sources/ and the .ipynb downloads, no launch buttons, into
# _build/student/_build/html. It reads the executed chapters from the book's _build/.jupyter_cache:
# after `make book` nothing runs again. `make student-pdf`: the same as a PDF, without the API
# reference, _build/student-pdf/_build/latex/deep-sets-book-student.pdf.
.PHONY: student student-pdf api-pdf
student: setup $(WHEEL)
	$(PY) scripts/student_edition.py --out _build/student

student-pdf: setup $(TEX)
	$(LATEX_ENV) $(PY) scripts/student_edition.py --out _build/student-pdf --pdf
	if [ -d _build/student/_build/html/_static ]; then \
	  cp _build/student-pdf/_build/latex/deep-sets-book-student.pdf _build/student/_build/html/_static/; fi
