"""Reading a model's reply without a model: the prediction dict in the formats agents and
MIRAI's extraction write, never ``eval``ed."""

import pytest

from gdelt_forecast.scoring.answers import parse_prediction


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"01": ["010"]}, {"01": ["010"]}),
        ('{"01": ["010"]}', {"01": ["010"]}),
        ('Thought: enough.\nAction: Final Answer: {"03": ["036"]}', {"03": ["036"]}),
        # an agent that restates the example first: the last "Final Answer:" counts
        ('e.g. Final Answer: {"01": ["010"]}\nFinal Answer: {"04": ["042"]}', {"04": ["042"]}),
        # MIRAI's extraction reply, with the curly quotes of its prompt
        ("Sure.\n<answer>{\u201c04\u201d: [\u201c042\u201d]}</answer>", {"04": ["042"]}),
        ("<answer>\n{'04': ['042', ],}\n</answer>", {"04": ["042"]}),  # a Python literal
        ('Final Answer: "01": ["010"], "02": ["020"]', {"01": ["010"], "02": ["020"]}),
        ('```json\n{"17": ["173"]}\n```', {"17": ["173"]}),
        ("Final Answer: {}", {}),
        ("I cannot forecast this.", None),
        ('Final Answer: {"01": ["010"', None),  # truncated
        ('<answer>["01"]</answer>', None),  # not a dict
        ("", None),
        (None, None),
        (["01"], None),
    ],
)
def test_parse_prediction(raw: object, expected: dict | None):
    assert parse_prediction(raw) == expected


def test_parse_never_evaluates_code():
    assert parse_prediction("{__import__('os').getcwd(): 1}") is None
