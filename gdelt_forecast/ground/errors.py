"""The error every stage raises when its input cannot be used: one line for the user."""


class StageError(RuntimeError):
    """A stage cannot run on what it was given (exit code 1 on the command line)."""
