"""Deterministic language identification with langdetect.

OBELICS scores languages with fastText lid.176; MIRAI's paper names langdetect, and so does
this project. langdetect draws random numbers while it estimates, so an unseeded detector
can answer differently for the same text. Here every call uses seed `SEED`.

Threads: calls from several threads at once are safe without a lock. The module keeps its
own `DetectorFactory` (langdetect's module-level `detect` is not used, and its global seed
is left alone): the factory is fully loaded before `functools.cache` hands it out, and
after that it is only read. Each call builds its own `Detector`, which seeds its own
`random.Random` from the factory's seed, so no random state is shared between threads.
(Concurrent first calls may both load the profiles; one copy is kept, both are complete.)

langdetect reads at most the first 10,000 characters of a text.
"""

from __future__ import annotations

from functools import cache

from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory
from langdetect.lang_detect_exception import LangDetectException

SEED = 0


@cache
def _factory() -> DetectorFactory:
    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(SEED)
    return factory


def detect(text: str) -> tuple[str | None, float]:
    """(language code, probability of the top language) of `text`, as OBELICS prepares it:
    lower-cased, newlines as spaces. (None, 0.0) when the text has nothing to go on."""
    detector = _factory().create()
    detector.append(text.lower().replace("\n", " "))
    try:
        ranked = detector.get_probabilities()
    except LangDetectException:  # raised for texts without letters ("No features in text")
        return None, 0.0
    if not ranked:
        return None, 0.0
    return ranked[0].lang, ranked[0].prob
