"""Scoring a model's answers, below the stages: reading what a model answered
(:mod:`.answers`), MIRAI's metrics (:mod:`.mirai`), a live round's rules (:mod:`.rounds`: an
empty answer, a probability's scores, a leaderboard's intervals and difficulty adjustment),
the predictions and queries files they are read from (:mod:`.predictions`, :mod:`.queries`),
and ``gdelt-forecast evaluate``, which scores any predictions file against any queries file
(:mod:`.evaluate`).

The test set's queries, the agents' and baselines' runs, the six tasks' and EV2's evaluations
and the site's traces are all scored here, so no stage imports another stage's scorer, and
nothing here imports a stage package (``tests/test_layers.py`` holds it).
"""
