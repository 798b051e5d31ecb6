"""The benchmarks, in folders by what they measure; each prints its figures and a PASS/FAIL
against its target, and docs/benchmarks.md records them with the command that printed them.

- ``stages/``: one stage at a time on one machine (ingest, normalize, fetch, extraction,
  process, testset, release, site) and the object store under them;
- ``llm/``: the LLM path: a vLLM server's throughput, a model-built month's token bill, the
  grounding rule's thresholds;
- ``agents/``: the agents' tool API against MIRAI's, and an agent run's cost;
- ``month/``: a whole month on the Airflow cluster with faults injected: its mirror, news
  web, cluster, the run itself (``month.run``) and its audit;
- ``install.py``: a plain ``pip install .``'s size and packages;
- ``harness/``: what they share: measured runs in fresh processes, verdicts, and the local
  servers (PostgreSQL, Redis, an S3-compatible server, Chromium, static files).

Every bench is a module run from the repository root: ``python -m bench.stages.ingest``.
"""
