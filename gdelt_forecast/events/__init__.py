"""Event normalization (MIRAI definitions): bronze rows to silver quads, every rule counted."""
