"""What the stages and the release share, below both: the release's names and layout
(:mod:`.names`, :mod:`.layout`), the documents' schema (:mod:`.documents`), and the soundness
rules, each one function that the stage which drops a row applies and ``release verify``
re-checks (:mod:`.sound`, :mod:`.grounding`, :mod:`.leakage`, :mod:`.reasoning`, with the text
and similarity they read: :mod:`.text`, :mod:`.similarity`, :mod:`.relations`).

Nothing here imports a stage package or ``release/`` (``tests/test_layers.py`` holds it).
"""
