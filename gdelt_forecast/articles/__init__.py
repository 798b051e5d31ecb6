"""News articles: polite fetching, trafilatura extraction, OBELICS cleaning."""
