"""LLM agents on a release: MIRAI's ReAct agents with a sandbox for their code."""
