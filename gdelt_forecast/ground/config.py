"""Typed configuration: models with defaults and help text, YAML files, ``--set`` overrides.

The field descriptions and the sections' docstrings are the configuration reference, which
:mod:`gdelt_forecast.pipeline.config_doc` writes out as docs/configuration.md;
``configs/default.yaml`` spells the same defaults out (a test keeps each equal to the models).
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, IPvAnyAddress, ValidationError, field_validator

from gdelt_forecast.ground.wellformed import printable, unwritable

REPO_DEFAULT = Path(__file__).resolve().parents[2] / "configs" / "default.yaml"
CONFIG_ENV = "GDELT_FORECAST_CONFIG"
DATA_ROOT_ENV = "GDELT_FORECAST_DATA_ROOT"
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")  # a scheme, as in s3://, gs://, file://
_S3 = re.compile(r"s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/[^/]+)*/?")  # S3's bucket names

Table = Literal["export", "mentions"]


class ConfigError(ValueError):
    """A config file, key or value that cannot be used; the message is one line."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GdeltConfig(_Section):
    """Where `ingest` downloads GDELT 2.0's 15-minute slot files from, and which of them."""

    base_url: str = Field(
        "http://data.gdeltproject.org/gdeltv2",
        description="GDELT 2.0 root holding masterfilelist.txt and the slot zips; "
        "http(s):// or file:// (a local mirror).",
    )
    tables: list[Table] = Field(
        ["export", "mentions"],
        description="Tables `ingest` downloads when its --tables is not given.",
    )
    translation: bool = Field(
        False,
        description="Also ingest the translingual stream (masterfilelist-translation.txt); "
        "its files are stored with a '.translation' suffix on the slot.",
    )


class DownloadConfig(_Section):
    """How `ingest` downloads the slot files: at once, with timeouts, retries and a size
    and md5 check of each against the master file list."""

    parallelism: int = Field(8, ge=1, le=64, description="Slot files downloaded at once.")
    connect_timeout_s: float = Field(
        10.0, gt=0, description="Seconds to wait for the TCP connection to the GDELT server."
    )
    read_timeout_s: float = Field(
        60.0, gt=0, description="Seconds to wait between two received bytes of a download."
    )
    retries: int = Field(
        4, ge=0, description="Retries of a request on connection errors, timeouts and HTTP 5xx."
    )
    backoff_s: float = Field(
        1.0,
        ge=0,
        description="Backoff factor: the n-th retry waits `backoff_s * 2**(n-1)` seconds.",
    )
    verify_attempts: int = Field(
        3,
        ge=1,
        description="Downloads of a file before giving up: a size or md5 mismatch with the "
        "master file list ends as corrupt (quarantined), a broken transfer as failed.",
    )

    @property
    def timeout(self) -> tuple[float, float]:
        """The (connect, read) pair requests takes."""
        return self.connect_timeout_s, self.read_timeout_s


class IngestConfig(_Section):
    """How `ingest` parses the downloaded slot files into bronze Parquet."""

    workers: int = Field(
        2,
        ge=1,
        le=64,
        description="Slot files parsed and written to Parquet at once (in threads).",
    )
    compression: Literal["zstd", "snappy", "gzip", "none"] = Field(
        "zstd", description="Parquet compression of the bronze files."
    )


class EventsConfig(_Section):
    """MIRAI's event cleaning in `normalize` (docs/ingest.md lists its rules); every default is
    MIRAI's."""

    same_day: bool = Field(
        True,
        description="MIRAI's rule 1a: keep a record only if its SQLDATE is its DATEADDED "
        "(publish) day.",
    )
    earliest_url_date: bool = Field(
        True,
        description="MIRAI's rule 1b: a SOURCEURL keeps only its records of its earliest day "
        "(looking back url_lookback_days).",
    )
    url_lookback_days: int = Field(
        31, ge=1, description="Days before a record's that earliest_url_date looks back over."
    )
    international_only: bool = Field(
        True, description="MIRAI's rule 3: drop events whose subject country is its object's."
    )
    mentions_metric: Literal["distinct_sources", "sum_num_mentions"] = Field(
        "distinct_sources",
        description="Daily mentions of a quad: distinct MentionSourceName on its day (MIRAI "
        "paper) or the sum of its records' NumMentions (MIRAI release code).",
    )
    min_daily_mentions: int = Field(
        50,
        ge=0,
        description="MIRAI's database threshold: a quad is kept on a day only with at least "
        "this many daily mentions (mentions_metric).",
    )
    top_reasons: int = Field(
        10, ge=1, description="Most frequent removal reasons kept per row of the funnel."
    )


class ArticlesConfig(_Section):
    """`gdelt-forecast articles fetch` (politeness, limits, safety of the requests) and
    `articles process` (extraction, language, OBELICS filters): docs/articles.md."""

    user_agent: str = Field(
        "gdelt-forecast/0.1 (research crawler for a forecasting benchmark; honours robots.txt)",
        description="User-Agent of every article request; it names the project.",
    )
    concurrency: int = Field(
        32, ge=1, le=512, description="Requests in flight at once, in one fetch process."
    )
    per_host: int = Field(
        1,
        ge=1,
        le=32,
        description="Requests in flight per host, over every fetch process. At 1 a request "
        "waits for the last answer to end, so each is spaced from when the last was sent and "
        "the interval holds at the host itself; above 1, requests in flight at once are "
        "spaced by their turns only, and a process that stalls between its turn and its "
        "request shortens the interval the host sees.",
    )
    per_host_delay_s: float = Field(
        1.0,
        ge=0,
        description="Least interval, in seconds, between two requests to a host, whichever "
        "fetch process sent them: from when the last was sent (its bytes written), plus "
        "host_jitter_s.",
    )
    host_jitter_s: float = Field(
        0.05,
        ge=0,
        description="Seconds added to per_host_delay_s: how much longer than the last a "
        "request may take to reach its host and be read there (the network's latency and "
        "the host's own queue vary), so that the host still sees per_host_delay_s between them.",
    )
    politeness_store: str = Field(
        "",
        pattern=r"^((redis|rediss|unix)://.+)?$",
        description="Where every fetch process keeps each host's next permitted request, "
        "leases, pause, down mark and robots.txt: a redis:// URL (the Celery broker's Redis, "
        "say) shares them between machines; empty: a SQLite file in the data root's tmp/, "
        "shared by the processes of one machine.",
    )
    host_lease_s: float = Field(
        10.0,
        gt=0,
        description="Seconds a request's hold on its host outlives its process: a killed "
        "fetch blocks a host at most this long.",
    )
    host_down_after: int = Field(
        5,
        ge=0,
        description="Failures in a row (refused, reset, timeout, 5xx) after which a host is "
        "down: its remaining URLs end host_down without a request; 0: never.",
    )
    host_down_s: float = Field(
        1800.0,
        gt=0,
        description="Seconds a host stays down; after them, one request tries it again.",
    )
    fetch_days: int = Field(
        4,
        ge=1,
        le=64,
        description="Days fetched at once in Airflow: the slots of the pool article_fetch "
        "(`gdelt-forecast airflow init` sets them); they share each host's politeness.",
    )
    connect_timeout_s: float = Field(
        10.0, gt=0, description="Seconds to wait for the TCP connection to a page's host."
    )
    read_timeout_s: float = Field(
        30.0, gt=0, description="Seconds to wait between two received bytes of a page."
    )
    page_timeout_s: float = Field(
        120.0,
        gt=0,
        description="Cap, in seconds, on one response from request to last byte (a server "
        "trickling bytes would otherwise hold a slot for hours).",
    )
    max_redirects: int = Field(5, ge=0, le=20, description="Redirects followed per URL, at most.")
    max_bytes: int = Field(
        5_000_000, ge=1024, description="Cap on a page body after decompression, in bytes."
    )
    retries: int = Field(
        3, ge=0, description="Retries of a page on connection errors, 429 and 5xx, with backoff."
    )
    backoff_s: float = Field(
        2.0,
        ge=0,
        description="Backoff factor: the n-th retry waits `backoff_s * 2**(n-1)` seconds, unless "
        "the answer's Retry-After says how long.",
    )
    max_retry_after_s: float = Field(
        300.0,
        ge=0,
        description="Longest wait before a retry, in seconds: a page whose Retry-After (or "
        "backoff) asks for longer ends as retryable instead.",
    )
    robots: bool = Field(
        True, description="Honour robots.txt: a page it disallows for user_agent is not fetched."
    )
    allow_hosts: list[str] = Field(
        [],
        description="Hosts fetched even though they resolve to loopback or private addresses "
        "(for tests and local mirrors, e.g. 127.0.0.1).",
    )
    resolve: dict[str, IPvAnyAddress] = Field(
        {},
        description="Host names answered without DNS, each with its address (curl's "
        "--resolve), e.g. a local copy of a site, or the month benchmark's simulated news "
        "hosts. The address is checked like a DNS answer: a loopback or private one needs "
        "the host in allow_hosts too.",
    )
    archives: list[Path] = Field(
        [],
        description="WARC files to take pages from instead of the live web: when set, "
        "`articles fetch` fetches nothing and `articles process` reads these.",
    )
    extract_timeout_s: float = Field(
        30.0, gt=0, description="Time limit, in seconds, for extracting one page's text."
    )
    workers: int = Field(
        2, ge=1, le=64, description="Pages extracted and cleaned at once (one process each)."
    )
    language: str = Field(
        "en", description="Language a document must be in to be kept (langdetect's code)."
    )
    preset: Literal["mirai", "obelics"] = Field(
        "mirai",
        description="Thresholds of the OBELICS document filters: MIRAI's or OBELICS' own web "
        "config (`articles explain --preset` overrides it for one call).",
    )


class TestsetConfig(_Section):
    """`gdelt-forecast testset`: MIRAI's strict collection, the month's relation queries and
    their balanced subset (docs/testset.md)."""

    min_daily_mentions: int = Field(
        100, ge=0, description="Daily mentions a quad needs to enter the strict collection."
    )
    min_documents: int = Field(
        5, ge=0, description="Kept documents a quad needs to enter the strict collection."
    )
    answer_source: Literal["strict", "database"] = Field(
        "strict",
        description="Where answers come from: the strict collection (the paper) or every "
        "database quad of the month (the MIRAI release code).",
    )
    horizons: list[Annotated[int, Field(ge=1)]] = Field(
        [1], min_length=1, description="Forecasting horizons in days: cutoff = date - horizon."
    )
    subset_size: int = Field(100, ge=1, description="Queries in the balanced subset, at most.")
    seed: int = Field(0, description="Seed of the balanced subset's draw.")
    attempts: int = Field(
        50, ge=1, description="Candidates drawn per subset pick; the most balancing one wins."
    )


class RoundsConfig(_Section):
    """`gdelt-forecast round`: the live rounds' questions, read from the history before each
    round's open date only (docs/rounds.md)."""

    pairs: int = Field(
        30, ge=1, description="Country pairs (subject, object) a round asks about, at most."
    )
    candidates: int = Field(
        90,
        ge=1,
        description="The most active pairs of the recent window, from which the pairs are "
        "drawn balanced by continent (as the test set's subset is).",
    )
    recent_days: int = Field(
        30,
        ge=1,
        description="Days before the open date whose active days rank the pairs, and whose "
        "counts the questions' background gives.",
    )
    history_days: int = Field(
        365,
        ge=1,
        description="Days before the open date that the base rates and the binary questions' "
        "thresholds are computed over (the year before it).",
    )
    window_days: int = Field(
        30,
        ge=1,
        description="A binary question's window: this many days ending on its target day.",
    )
    relations_per_pair: int = Field(
        2,
        ge=0,
        description='First-level relations asked about per pair ("at least once in the '
        'window"), among those base_rate_range admits: the nearest to even odds first.',
    )
    base_rate_range: list[Annotated[float, Field(ge=0, le=1)]] = Field(
        [0.2, 0.8],
        min_length=2,
        max_length=2,
        description='[low, high]: a relation is asked about ("at least once in the window") '
        "only where the pair took it in this share of the history's windows, so that no "
        "question asks what the history already settles (a relation taken in every window, or "
        "in almost none); the others are counted as left out. [0, 1] admits every relation.",
    )
    horizons: list[Annotated[int, Field(ge=1)]] = Field(
        [1, 7, 30],
        min_length=1,
        description="Days from the deadline's day to each target day.",
    )
    grace_days: int = Field(
        2,
        ge=0,
        description="Days after the last target day whose GDELT slots must also be in before "
        "a round resolves (GDELT's late files).",
    )
    seed: int = Field(0, description="Seed of the pairs' balanced draw.")
    attempts: int = Field(
        50, ge=1, description="Candidates drawn per pick of the pairs' balanced draw."
    )

    @field_validator("base_rate_range")
    @classmethod
    def _low_then_high(cls, value: list[float]) -> list[float]:
        if value[0] > value[1]:
            raise ValueError(f"{value}: low above high")
        return value


class ReleaseConfig(_Section):
    """`gdelt-forecast release`: the dataset's name and license, its history, the embeddings
    of `mirai/info`, `tkg/` and the stats (docs/release.md)."""

    name: str = Field(
        "gdelt-forecast",
        description="Dataset name in the release's manifest, card and citation.",
    )
    history_start: date | None = Field(
        None,
        description="First day of the released database; empty means the 1st of January of "
        "the test month's year (MIRAI's default).",
    )
    license: str = Field(
        "cc-by-nc-4.0",
        description="License of the release in its manifest, card and Croissant metadata "
        "(SPDX id, lower case, as Hugging Face cards write it).",
    )
    embedding_url: str | None = Field(
        None,
        description="OpenAI-compatible API root (e.g. http://127.0.0.1:8000/v1) whose "
        "/embeddings endpoint embeds mirai/info's names, the agents' fuzzy look-ups and LRAE's "
        "evidence; empty means the local model, all-MiniLM-L6-v2-onnx-int8 (on the CPU).",
    )
    embedding_model: str = Field(
        "text-embedding-3-small",
        description="Model asked of embedding_url (MIRAI used text-embedding-3-small).",
    )
    embedding_api_key_env: str = Field(
        "OPENAI_API_KEY", description="Environment variable holding embedding_url's API key."
    )
    top_pairs: int = Field(
        20, ge=1, description="Country pairs listed in the release's stats and plots."
    )
    tkg_valid_days: int = Field(
        30,
        ge=0,
        description="tkg/: quads of this many days before the test month are `valid` "
        "(tkg/valid.txt), earlier ones `train`, the month's own `test`.",
    )
    memory_limit: str = Field(
        "1GB",
        pattern=r"^\d+(\.\d+)?\s*[KMGT]i?B$",
        description="DuckDB memory limit while `release` exports the warehouse's tables and "
        "writes MIRAI's CSVs (and while `release mirai` does): tables stream to Parquet and "
        "sorts spill, so more memory buys little time (the release keeps under 2 GiB).",
    )


class LlmConfig(_Section):
    """The OpenAI-compatible server (vLLM's, say) of the LLM path: the `llm` methods of
    `timelines`, `tasks` and `reasoning`, the LRAE judge, the `llm` baseline and the agents."""

    base_url: str = Field(
        "http://127.0.0.1:8000/v1",
        description="OpenAI-compatible API root (vLLM's `vllm serve` answers at /v1).",
    )
    model: str = Field(
        "meta-llama/Llama-3.1-8B-Instruct",
        description="Model asked for in every request: a name the server serves.",
    )
    weights_sha256: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{64}$",
        description="sha256 of the served weights' file, as whoever serves them states it "
        '(a server does not say): a release\'s "Model-built parts" names it beside the model.',
    )
    server: str | None = Field(
        None,
        description="What serves the model, e.g. `vLLM 0.32.0 (CPU)`: named beside the model "
        'in a release\'s "Model-built parts".',
    )
    api_key_env: str = Field(
        "GDELT_FORECAST_LLM_API_KEY",
        description="Environment variable holding the API key (vLLM without --api-key "
        "accepts any); the key itself never lives in a config file.",
    )
    max_concurrency: int = Field(
        16, ge=1, le=1024, description="Requests in flight at once (the server batches them)."
    )
    timeout_s: float = Field(120.0, gt=0, description="Time limit of one request, in seconds.")
    max_retries: int = Field(
        4, ge=0, description="Retries of a request on connection errors, timeouts, 429 and 5xx."
    )
    backoff_s: float = Field(
        1.0,
        ge=0,
        description="Backoff factor: the n-th retry waits `backoff_s * 2**(n-1)` seconds (or a "
        "429's numeric Retry-After).",
    )
    invalid_retries: int = Field(
        1,
        ge=0,
        description="Requests again when an answer fails its JSON schema, before falling back "
        "to the paper's numbered-list format.",
    )
    temperature: float = Field(0.0, ge=0, description="Sampling temperature (0: greedy).")
    max_tokens: int = Field(
        1024, ge=1, description="Most tokens of one answer (the request's max_tokens)."
    )
    seed: int | None = Field(
        None,
        description="Sampling seed sent with every request (vLLM seeds each request with "
        "it), so that a sampled answer can be drawn again; null: the server's own.",
    )


class TimelinesConfig(_Section):
    """`gdelt-forecast timelines`: a month's documents grouped into complex events (stories),
    each with its timeline of atomic events (docs/timelines.md)."""

    method: Literal["extractive", "llm"] = Field(
        "extractive",
        description="How atomic events are written: `extractive` takes the documents' "
        "dated lead sentences and titles (no model); `llm` asks the `llm` server "
        "(OpenForecast's extraction-then-complement).",
    )
    history_days: int = Field(
        30,
        ge=0,
        description="Days before the month whose documents may open a complex event.",
    )
    max_gap_days: int = Field(
        7, ge=0, description="Most days between a document and the story it joins."
    )
    min_similarity: float = Field(
        0.2,
        ge=0,
        le=1,
        description="TF-IDF cosine similarity of title and lead a document needs with one "
        "of a story's documents to join it.",
    )
    min_documents: int = Field(2, ge=1, description="Documents a complex event needs.")
    max_documents: int = Field(
        20,
        ge=1,
        description="Documents a complex event keeps at most: the latest, the story as it "
        "reaches the month.",
    )
    lead_chars: int = Field(
        600,
        ge=50,
        description="Characters of a document's text that count as its lead: with its title, "
        "what min_similarity compares, and what the `extractive` method takes sentences from.",
    )
    article_chars: int = Field(
        6000,
        ge=100,
        description="Characters of a document's text the `llm` method shows the model (keep "
        "prompts within the server's context length).",
    )
    fill_extractive: bool = Field(
        True,
        description="With `llm`: a document of a story that none of the model's events left "
        "by the soundness rules cites (its call failed, or rule 6 dropped them) gives its "
        "`extractive` events instead (their rows say so in `method`; counted as "
        "`kept_extractive`), so that a weak or failing model does not empty a month's tasks.",
    )


class TasksConfig(_Section):
    """`gdelt-forecast tasks`: OpenForecast's tasks cut from the timelines: the cut dates and
    the split each record goes to."""

    seed: int = Field(0, description="Seed of the cut dates, target events and candidates.")
    cuts_per_timeline: int = Field(
        1,
        ge=1,
        description="Cut dates drawn per timeline (OpenForecast draws one); each cut gives "
        "one record of every task.",
    )
    min_background: int = Field(
        1, ge=1, description="Atomic events a cut needs in the background (dated on or before it)."
    )
    min_targets: int = Field(
        1, ge=1, description="Atomic events a cut needs among the targets (dated after it)."
    )
    test_from: date | None = Field(
        None,
        description="Records whose cut date is on or after this day are `test` (null: the "
        "month's first day).",
    )
    dev_days: int = Field(
        7,
        ge=0,
        description="Records whose cut date falls in the days just before `test_from` are "
        "`dev`; earlier ones are `train`.",
    )


class ReasoningConfig(_Section):
    """`gdelt-forecast reasoning`: EV2's event-reasoning questions (CEC, CRR) from the
    timelines."""

    method: Literal["extractive", "llm"] = Field(
        "extractive",
        description="`extractive`: temporal relations only, from the events' dates; `llm`: "
        "also causal and hierarchical ones, from the `llm` server's labels of event pairs "
        "(asked both ways; only consistent pairs are kept).",
    )
    judged_pairs: int = Field(
        20, ge=0, description="With `llm`: event pairs per story the model labels, at most."
    )
    seed: int = Field(0, description="Seed of the questions drawn, their negatives and order.")
    min_context: int = Field(
        2, ge=1, description="Events a question shows as its context, at least."
    )
    cec_per_story: int = Field(
        3, ge=0, description="CEC questions drawn per story and level, at most."
    )
    crr_per_story: int = Field(
        3,
        ge=0,
        description="CRR questions drawn per story and level, at most (EV2 samples "
        "three pairs per graph).",
    )


class BaselineConfig(_Section):
    """`gdelt-forecast baseline`: the reference forecasters `history` and `frequency`, which
    score a release's test set from the agent environment alone."""

    window_days: int = Field(
        30,
        ge=1,
        description="The history baseline predicts the relations between a query's subject "
        "and object in this many days up to its last visible day.",
    )
    frequency_top: int = Field(
        3,
        ge=1,
        description="The frequency baseline predicts this many of the most frequent "
        "relations before a query's cutoff.",
    )


class SandboxConfig(_Section):
    """The sandbox each `run_code` action of an agent runs in: its process's limits, user
    and importable modules (docs/agents.md)."""

    wall_s: float = Field(
        30.0,
        gt=0,
        description="Wall time, in seconds, of one `run_code` action; past it the sandbox "
        "process is killed and started afresh (its variables are lost, the observation says so).",
    )
    cpu_s: int = Field(20, ge=1, description="CPU seconds of one `run_code` action, at most.")
    memory_mb: int = Field(
        2048,
        ge=256,
        description="Address space of the sandbox process, in MiB (numpy's import "
        "alone maps a few hundred MB); an allocation past it is a MemoryError observation.",
    )
    file_mb: int = Field(
        16,
        ge=0,
        description="Largest file, in MiB, the code may write in its private temporary folder.",
    )
    disk_mb: int = Field(
        64,
        ge=1,
        description="All the files of the private folder together, in MiB (a tmpfs of this "
        "size, where mount namespaces are allowed; elsewhere the harness kills the sandbox process "
        "when its folder's files, folders and links pass it).",
    )
    inodes: int = Field(
        10_000,
        ge=16,
        description="Files, folders and links the private folder holds at most (the tmpfs's "
        "inodes, where mount namespaces are allowed; elsewhere the harness kills the sandbox "
        "process when its folder passes it).",
    )
    files: int = Field(
        64, ge=16, description="Open file descriptors of the sandbox process, at most."
    )
    calls: int = Field(
        1000, ge=1, description="API calls of one `run_code` action; past it, an error."
    )
    uid: int = Field(
        65534,
        ge=1,
        description="User (and group) id the sandbox process runs as when the harness is "
        "root (nobody); an unprivileged harness's worker keeps its ids in a user namespace.",
    )
    output_chars: int = Field(
        20_000,
        ge=100,
        description="Characters of printed output kept of one action; the rest is counted "
        "and dropped inside the sandbox.",
    )
    modules: list[str] = Field(
        [
            "math", "statistics", "collections", "itertools", "functools", "operator",
            "datetime", "json", "re", "random", "string", "heapq", "bisect", "decimal",
            "fractions", "typing", "dataclasses", "textwrap", "pprint", "copy",
            "numpy", "pandas", "networkx", "sklearn", "scipy",
        ],
        description="Modules the code may import (with their submodules), where installed.",
    )  # fmt: skip


class AgentsConfig(_Section):
    """`gdelt-forecast agent`: MIRAI's ReAct agents on a release's test set, each run's
    limits."""

    max_steps: int = Field(20, ge=1, description="Most think-act-observe steps (MIRAI: 20).")
    max_invalid: int = Field(
        3,
        ge=1,
        description="Consecutive invalid actions, or repeats of one action, that end "
        "a run (MIRAI's max_retries: 3).",
    )
    observation_chars: int = Field(
        8_000,
        ge=100,
        description="Characters an observation keeps; a longer one is cut, and says so.",
    )
    max_context_tokens: int = Field(
        30_000,
        ge=1000,
        description="A run whose prompt passes this many tokens (as the "
        "server counted the last request) ends in `Max Token Length Exceeded` (MIRAI: 32k "
        "for Llama).",
    )
    time_limit_s: float = Field(
        900.0,
        gt=0,
        description="Wall time of one query's run, in seconds (MIRAI: 15 minutes).",
    )
    call_s: float = Field(
        10.0,
        gt=0,
        description="Wall time, in seconds, of one API call in the environment (run_code's or "
        "a function call's); past it the call is an error observation.",
    )
    sandbox: SandboxConfig = SandboxConfig()


class SiteConfig(_Section):
    """`gdelt-forecast site`: the static site of the data root's releases."""

    page_size: int = Field(
        100,
        ge=10,
        le=5000,
        description="Records per page of the site's lists (stories, each task's records, a "
        "test-set split's queries); a page of a month of real volume stays small enough to "
        "open at once.",
    )
    files_url: str | None = Field(
        None,
        description="Where the releases' folders are served (a bucket's public URL: "
        "`<files_url>/<version>/<file>`); null: the site links the data root's own files, "
        "relative to the site's folder.",
        pattern=r"^https?://",
    )


class DuckdbConfig(_Section):
    """The DuckDB connections of the stages, which spill to `<data_root>/tmp/duckdb` past the
    memory limit (`release` sets its own: `release.memory_limit`)."""

    memory_limit: str = Field(
        "3GB",
        description="DuckDB memory limit (DuckDB's own syntax: 3GB, 512MB); past it, "
        "DuckDB spills to `<data_root>/tmp/duckdb`.",
    )
    threads: int | None = Field(
        None, ge=1, description="DuckDB threads; null: DuckDB's default, all cores."
    )


class StorageConfig(_Section):
    """An `s3://` data root: the bucket's endpoint and region, the local working copy, and
    the locks kept in the bucket."""

    endpoint_url: str | None = Field(
        None,
        description="S3 endpoint of an s3:// data root (MinIO, moto, ...); null: "
        "$AWS_ENDPOINT_URL, else AWS. Credentials come from the standard AWS variables "
        "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or files, never from a config file.",
    )
    region: str | None = Field(None, description="S3 region; null: $AWS_DEFAULT_REGION.")
    local_dir: Path = Field(
        Path("~/.cache/gdelt-forecast"),
        description="Local folder of an s3:// data root's working copy: the files a stage "
        "reads are pulled here, the ones it writes pushed from here, and warehouse.duckdb "
        "is built here (it never leaves the machine).",
    )
    lock_ttl_s: float = Field(
        600.0,
        gt=0,
        description="Seconds a lock in the bucket (`locks/*.lock`) lasts after its holder last "
        "renewed it (the holder renews it every third of this), so a crashed holder blocks no "
        "one for longer.",
    )


class Config(_Section):
    """The whole configuration: the data root, then one section per stage or service."""

    data_root: Path | str = Field(
        Path("data"),
        description="Root of the data layout (docs/architecture.md): a local folder, or "
        "s3://bucket/prefix (see `storage`). Other URLs are refused. "
        "$GDELT_FORECAST_DATA_ROOT, when set, replaces the config file's; DAG runs need an "
        "absolute folder.",
    )

    @field_validator("data_root", mode="before")
    @classmethod
    def _folder_or_bucket(cls, value: Any) -> Any:
        # Path("gs://b/p") is the relative folder "gs:/b/p": without this check a stage
        # would write there, in the working directory, and a later one fail far from the cause.
        if isinstance(value, str) and _URL.match(value):
            if not _S3.fullmatch(value):
                raise ValueError(
                    f"{value!r} is not a local folder or s3://bucket[/prefix]: no stage can "
                    "serve that URL"
                )
            return value.rstrip("/")
        return Path(value)

    @property
    def remote(self) -> bool:
        """Whether the data root is in a bucket; stages then run on a working copy
        (:mod:`gdelt_forecast.storage.working_copy`) and never see the URL."""
        return isinstance(self.data_root, str)

    gdelt: GdeltConfig = GdeltConfig()
    download: DownloadConfig = DownloadConfig()
    ingest: IngestConfig = IngestConfig()
    events: EventsConfig = EventsConfig()
    articles: ArticlesConfig = ArticlesConfig()
    testset: TestsetConfig = TestsetConfig()
    rounds: RoundsConfig = RoundsConfig()
    release: ReleaseConfig = ReleaseConfig()
    llm: LlmConfig = LlmConfig()
    timelines: TimelinesConfig = TimelinesConfig()
    tasks: TasksConfig = TasksConfig()
    reasoning: ReasoningConfig = ReasoningConfig()
    baseline: BaselineConfig = BaselineConfig()
    agents: AgentsConfig = AgentsConfig()
    site: SiteConfig = SiteConfig()
    duckdb: DuckdbConfig = DuckdbConfig()
    storage: StorageConfig = StorageConfig()


def _set_dotted(tree: dict[str, Any], key: str, value: Any) -> None:
    *parents, leaf = key.split(".")
    node = tree
    for part in parents:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"config: '{key}': '{part}' is a value, not a section")
        node = child
    node[leaf] = value


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    if first["type"] == "extra_forbidden":
        return f"config: unknown key '{where}'"
    if first["type"] == "value_error":  # our own validators' messages name the value
        return f"config: {where}: {first['ctx']['error']}"
    return f"config: {where}: {first['msg']} (got {first.get('input')!r})"


def _refuse_unwritable(tree: dict[str, Any]) -> None:
    """A config value is written into records, run names and manifests as it was typed, so
    one that no UTF-8 file can hold is refused, not mended (gdelt_forecast/ground/wellformed.py)."""
    stack: list[tuple[str, Any]] = [("", tree)]
    while stack:  # by hand, not recursion: a YAML file may nest as deep as it likes
        where, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            at = f"{where}.{key}" if where else str(key)
            for text in (str(key), value) if isinstance(value, str) else (str(key),):
                if bad := unwritable(text):
                    raise ConfigError(f"config: {printable(at)}: holds {bad}, which no record "
                                      "can hold; write it without")  # fmt: skip
            if isinstance(value, dict | list):
                stack.append((at, value))


def load_config(
    path: str | Path | None = None,
    overrides: list[str] | tuple[str, ...] = (),
    data_root: str | Path | None = None,
) -> Config:
    """Load ``path`` (else $GDELT_FORECAST_CONFIG, else configs/default.yaml, else the
    built-in defaults), then $GDELT_FORECAST_DATA_ROOT, then ``section.key=value`` overrides
    (values parsed as YAML), then ``data_root``. Raises ConfigError with a one-line message."""
    chosen = path or os.environ.get(CONFIG_ENV) or (REPO_DEFAULT if REPO_DEFAULT.exists() else None)
    tree: dict[str, Any] = {}
    if chosen:
        try:
            loaded = yaml.safe_load(Path(chosen).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"config: cannot read {chosen}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(
                f"config: {chosen} is not valid YAML: {exc}".splitlines()[0]
            ) from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"config: {chosen} must hold a mapping at the top level")
        tree = loaded or {}
    if os.environ.get(DATA_ROOT_ENV):
        tree["data_root"] = os.environ[DATA_ROOT_ENV]
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"config: --set expects section.key=value, got {item!r}")
        try:
            value = yaml.safe_load(raw) if raw else ""
        except yaml.YAMLError:
            value = raw
        _set_dotted(tree, key.strip(), value)
    if data_root is not None:
        tree["data_root"] = str(data_root)
    _refuse_unwritable(tree)
    try:
        return Config.model_validate(tree)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None


def from_dag_params(params: dict[str, Any]) -> Config:
    """The config a DAG run asks for with its ``config``, ``set`` and ``data_root`` params.
    A worker's working directory is nobody's choice, so a relative data root is refused."""
    cfg = load_config(params.get("config"), params.get("set") or (), params.get("data_root"))
    if not cfg.remote and not cfg.data_root.is_absolute():
        raise ConfigError(
            f"config: data_root {str(cfg.data_root)!r} is relative, and a DAG task's working "
            f"directory is arbitrary: set ${DATA_ROOT_ENV} on the workers or the data_root "
            "param to an absolute path"
        )
    return cfg
