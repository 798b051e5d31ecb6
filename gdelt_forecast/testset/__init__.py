"""MIRAI test queries, the balanced subset and the scorer."""
