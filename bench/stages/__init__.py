"""One stage at a time on one machine, and the object store under them."""
