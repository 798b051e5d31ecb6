"""The agents' tool API against MIRAI's, and the cost of an agent run."""
