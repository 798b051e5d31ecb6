"""Complex events (stories in the news corpus) and their timelines of atomic events."""
