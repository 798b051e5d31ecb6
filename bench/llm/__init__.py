"""The LLM path: a vLLM server's throughput, a model-built month's token bill, and the
grounding rule's thresholds."""
