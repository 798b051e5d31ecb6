"""One ReAct agent on one query (MIRAI section 3, appendix J.1): think, act, observe until a
final answer or one of MIRAI's end states, then, without a readable final answer, the
answer extraction of appendix K.3.

Actions are OpenAI tool calls. With ``function`` the tools are the API's functions, run on
the environment opened at the query's cutoff; with ``code`` the one tool ``run_code`` runs
its code in the query's sandbox (:mod:`gdelt_forecast.agents.sandbox`). A reply without a
call that holds "Final Answer:" ends the run. MIRAI's rules for the rest, with its
messages: an invalid action (an error, a call without arguments, a reply with neither call
nor answer) is observed and counted, ``agents.max_invalid`` in a row end the run
(``Invalid Action``); an action repeated is not run again, and repeated more than
``max_invalid`` times ends the run (``Repeated Actions``); ``Max Steps Exceeded``,
``Max Token Length Exceeded`` (the server's prompt tokens of the last step),
``Execution Time Exceeded`` and ``LLM Error`` (the server failed after the client's
retries) end it too. One action runs per step: further calls of the same reply are
answered "not executed".
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from gdelt_forecast.agents import prompts
from gdelt_forecast.ground.config import AgentsConfig
from gdelt_forecast.ground.wellformed import wellformed
from gdelt_forecast.llm.batch import Session
from gdelt_forecast.llm.request import Request
from gdelt_forecast.scoring.answers import parse_prediction

FINAL, MAX_STEPS, INVALID, REPEATED = (
    "Final Answer", "Max Steps Exceeded", "Invalid Action", "Repeated Actions")  # fmt: skip
TOKENS, TIME, LLM_ERROR = "Max Token Length Exceeded", "Execution Time Exceeded", "LLM Error"
END_STATES = (FINAL, MAX_STEPS, INVALID, REPEATED, TOKENS, TIME, LLM_ERROR)
REPEATED_STEP = "Repeated Action"  # an action not run again

# MIRAI's notes after an invalid or a repeated action (agents/react_agents.py).
_NOTE = {
    "function": "Please make sure your action is a valid and executable function call with "
    "correct arguments based on the API description.",
    "code": "If you are collecting data with code, please make sure your action is a valid "
    "and executable block of code with correct syntax based on the API description and "
    "Python libraries, and use print() for outputs; If you are making the final forecast, "
    "please call no function and start the action immediately with 'Final Answer:', for "
    "example, 'Action: Final Answer: {}'",
}
_REPEATED = (
    "The same action has been executed before. Try a different action with correct format. "
    "If you are making the final forecast, please call no function and start the action "
    "immediately with 'Final Answer:', for example, 'Action: Final Answer: {}'"
)
_NO_ACTION = "the reply holds neither a function call nor 'Final Answer:'"


@dataclass
class Query:
    """A test-set query as the prompts need it (``testset/queries.parquet``'s columns)."""

    query_id: str
    date: str
    subject: str
    subject_name: str
    object: str
    object_name: str
    date_nlp: str
    cutoff_nlp: str

    def fields(self, history_start_nlp: str) -> dict[str, str]:
        return {
            "actor1_name": self.subject_name,
            "actor2_name": self.object_name,
            "future_date_nlp": self.date_nlp,
            "current_date_nlp": self.cutoff_nlp,
            "future_date": self.date,
            "actor1_code": self.subject,
            "actor2_code": self.object,
            "history_start_nlp": history_start_nlp,
        }


@dataclass
class Step:
    query_id: str
    sample: int
    step: int
    thought: str = ""
    tool: str | None = None
    arguments: str | None = None
    observation: str = ""
    observation_chars: int = 0  # before truncation
    state: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0  # the model's answer, retries included
    action_s: float = 0.0  # the action: the environment's call, or the sandbox's round trip
    cached: bool = False
    error: str | None = None


@dataclass
class Run:
    query_id: str
    sample: int
    end_state: str = ""
    steps: int = 0
    answer: dict | None = None
    final_text: str = ""  # the reply that held the final answer, or the extraction's
    extracted: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    error: str | None = None
    trace: list[Step] = field(default_factory=list)


# An action: (tool name, arguments as JSON text) -> (observation, error or None).
Act = Callable[[str, str], Awaitable[tuple[str, str | None]]]


@dataclass
class Agent:
    session: Session
    cfg: AgentsConfig
    action: str  # "function" or "code"
    apis: str
    history_start_nlp: str
    seed: int | None = None

    def tools(self) -> list[dict]:
        return [prompts.RUN_CODE] if self.action == "code" else prompts.functions(self.apis)

    def system(self, query: Query) -> str:
        return prompts.text(f"system-{self.action}").format(
            current_date_nlp=query.cutoff_nlp,
            history_start_nlp=self.history_start_nlp,
            max_iterations=self.cfg.max_steps,
            api_description=prompts.api_description(self.apis),
        )

    async def run(self, query: Query, sample: int, act: Act) -> Run:
        started = time.monotonic()
        run = Run(query.query_id, sample)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system(query)},
            {
                "role": "user",
                "content": prompts.text("query").format(**query.fields(self.history_start_nlp)),
            },
        ]
        performed: Counter = Counter()
        invalid = last_prompt = 0
        while not run.end_state:
            if time.monotonic() - started > self.cfg.time_limit_s:
                run.end_state = TIME
            elif len(run.trace) >= self.cfg.max_steps:
                run.end_state = MAX_STEPS
            elif last_prompt > self.cfg.max_context_tokens:
                run.end_state = TOKENS
            if run.end_state:
                break
            step = Step(query.query_id, sample, len(run.trace) + 1)
            run.trace.append(step)
            result = await self.session.ask(
                Request(
                    f"{query.query_id}#{sample}", f"step:{step.step}", list(messages), None,
                    tools=self.tools(), seed=self.seed,
                )
            )  # fmt: skip
            _count(step, result)
            if result.status != "ok":
                step.state, step.error, run.end_state = LLM_ERROR, result.error, LLM_ERROR
                break
            last_prompt = result.prompt_tokens
            reply = result.answer
            step.thought, calls = reply["content"], reply["tool_calls"]
            messages.append(_assistant(reply))
            if not calls:
                if "final answer" in step.thought.lower():
                    step.state, run.end_state, run.final_text = FINAL, FINAL, step.thought
                    break
                invalid += 1
                step.state, step.error = INVALID, _NO_ACTION
                observation = f"Invalid action: {_NO_ACTION}. {_NOTE[self.action]}"
                if invalid >= self.cfg.max_invalid:
                    run.end_state = INVALID
                step.observation, step.observation_chars = self._cut(observation)
                messages.append({"role": "user", "content": f"Observation: {step.observation}"})
                continue
            call = calls[0]
            step.tool, step.arguments = call["name"], call["arguments"]
            key = (call["name"], _canonical(call["arguments"]))
            performed[key] += 1
            if performed[key] > self.cfg.max_invalid:
                step.state, run.end_state = REPEATED, REPEATED
                observation = (
                    f"The same action has been executed over {self.cfg.max_invalid} times. "
                    "Early stop due to repeated actions."
                )
            elif performed[key] > 1:
                step.state, observation = REPEATED_STEP, _REPEATED
            else:
                acted = time.monotonic()
                observation, error = await act(call["name"], call["arguments"])
                step.action_s = time.monotonic() - acted
                if error is None:
                    invalid, step.state = 0, "Valid Action"
                else:
                    invalid += 1
                    step.state, step.error = INVALID, error
                    if invalid >= self.cfg.max_invalid:
                        run.end_state = INVALID
                        observation = (
                            f"Illegal action: {error}. Early stop due to consecutive "
                            f"{self.cfg.max_invalid} invalid actions."
                        )
                    else:
                        observation = f"Invalid action: {error}. {_NOTE[self.action]}"
            step.observation, step.observation_chars = self._cut(observation)
            for i, c in enumerate(calls):
                text = step.observation if i == 0 else "Not executed: one action per step."
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": text})
        run.answer = parse_prediction(run.final_text) if run.final_text else None
        if run.answer is None:
            await self._extract(query, run)
        run.steps = len(run.trace)
        run.prompt_tokens = sum(s.prompt_tokens for s in run.trace if not s.cached)
        run.completion_tokens = sum(s.completion_tokens for s in run.trace if not s.cached)
        run.seconds = time.monotonic() - started
        return run

    def _cut(self, observation: str) -> tuple[str, int]:
        # Whatever an action answered (an error may quote the model's arguments) is written
        # to the journal and sent to the server next: both need well-formed text.
        observation = wellformed(observation, "observation")
        limit = self.cfg.observation_chars
        if len(observation) <= limit:
            return observation, len(observation)
        cut = observation[:limit]
        return (
            f"{cut}\n[observation truncated: the first {limit:,} of {len(observation):,} "
            "characters]",
            len(observation),
        )

    async def _extract(self, query: Query, run: Run) -> None:
        """Appendix K.3: the last two steps that informed the forecast, and the model asked
        for the answer in ``<answer>`` tags."""
        useful = [s for s in run.trace if s.state in ("Valid Action", FINAL)][-2:]
        info = (
            "\n".join(
                f"Thought: {s.thought}\nAction: {s.tool or ''}({s.arguments or ''})"
                + (f"\nObservation: {s.observation}" if s.observation else "")
                for s in useful
            )
            or "No information available."
        )
        prompt = prompts.text("extraction").format(
            info=info, **query.fields(self.history_start_nlp)
        )
        request = Request(
            f"{query.query_id}#{run.sample}", "extraction",
            [{"role": "user", "content": prompt}], None, seed=self.seed,
        )  # fmt: skip
        result = await self.session.ask(request)
        run.extracted = True
        step = Step(query.query_id, run.sample, len(run.trace) + 1, state="Answer Extraction")
        _count(step, result)
        if result.status != "ok":
            step.error = run.error = result.error
        else:
            step.thought = run.final_text = result.answer["content"]
            run.answer = parse_prediction(run.final_text)
        run.trace.append(step)


def _count(step: Step, result) -> None:
    """The model call's counts on its step (a cached answer's are those of its first run)."""
    step.prompt_tokens, step.completion_tokens = result.prompt_tokens, result.completion_tokens
    step.latency_s, step.cached = result.latency_s, result.cached


def _assistant(reply: dict) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": reply["content"] or None}
    if reply["tool_calls"]:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in reply["tool_calls"]
        ]  # fmt: skip
    return message


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except (ValueError, RecursionError):  # a model's arguments may nest past the parser
        return arguments
