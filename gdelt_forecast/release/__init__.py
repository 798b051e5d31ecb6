"""Versioned releases: ``releases/<version>/`` with manifest, dataset card, Croissant
metadata, statistics and plots, MIRAI's data folder, and ``release verify``."""
