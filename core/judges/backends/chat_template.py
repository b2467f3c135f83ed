"""A model's chat template, applied by dialjudge, for servers that only complete text.

An API judge scored from probabilities must be asked the same question as a local one:
the chat-formatted prompt followed by the answer prefix ("Score:"), with the answer's
probabilities read at the very next position. A chat endpoint cannot continue a started
assistant turn, but a completions endpoint continues any text, so dialjudge formats the
prompt itself when it knows the model's template. The template comes from a file the
judge's ``options.chat_template`` names (a GGUF's metadata, a Hugging Face
``tokenizer_config.json``, or a Jinja file), or from a server that shows it (llama.cpp's
``/props``). Formatting uses llama-cpp-python's Jinja formatter, as the local backend
does, so both write the same prompt text for the same template.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import BackendError
from ..types import Message


@dataclass(frozen=True)
class ChatTemplate:
    """A Jinja chat template with the special tokens it refers to, and where it came from."""

    template: str
    bos_token: str
    eos_token: str
    source: str

    def format(self, messages: Sequence[Message]) -> str:
        """The prompt text up to the assistant turn's start (as the local backend writes it)."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        formatter: Any = Jinja2ChatFormatter(template=self.template, eos_token=self.eos_token,
                                             bos_token=self.bos_token, add_generation_prompt=True)
        dicts = [m.to_dict() for m in messages]
        try:
            return str(formatter(messages=dicts).prompt)
        except Exception as first:  # jinja2 errors and raise_exception() from the template
            # Some templates (e.g. Gemma's) refuse a system turn: fold it into the first user turn.
            if len(dicts) > 1 and dicts[0]["role"] == "system":
                merged = [{"role": dicts[1]["role"], "content": dicts[0]["content"] + "\n\n" + dicts[1]["content"]}]
                try:
                    return str(formatter(messages=merged + dicts[2:]).prompt)
                except Exception:
                    pass
            raise BackendError(f"the chat template from {self.source} rejected the prompt: {first}") from None


def load_chat_template(path: str) -> ChatTemplate:
    """Read a chat template from a GGUF file, a tokenizer_config.json or a Jinja file."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise BackendError(f"{file}: chat template file not found (options.chat_template)")
    if file.suffix.lower() == ".gguf":
        return _from_gguf(file)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BackendError(f"{file}: cannot read the chat template (options.chat_template): {exc}") from None
    if file.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except ValueError:
            raise BackendError(f"{file}: not JSON (options.chat_template expects a tokenizer_config.json)") from None
        found = from_mapping(data, str(file)) if isinstance(data, Mapping) else None
        if found is None:
            raise BackendError(f"{file}: has no chat_template (options.chat_template)")
        return found
    if not text.strip():
        raise BackendError(f"{file}: the chat template file is empty (options.chat_template)")
    return ChatTemplate(text, "", "", str(file))


def from_mapping(data: Mapping[str, Any], source: str) -> ChatTemplate | None:
    """A template from a tokenizer_config.json or a llama.cpp server's /props answer, if it has one."""
    template = data.get("chat_template")
    if isinstance(template, list):  # tokenizer_config.json may list named templates
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, Mapping)}
        template = named.get("default")
    if not isinstance(template, str) or not template.strip():
        return None
    return ChatTemplate(template, _token_text(data.get("bos_token")), _token_text(data.get("eos_token")), source)


def _token_text(value: Any) -> str:
    if isinstance(value, Mapping):  # {"content": "<s>", ...} in tokenizer_config.json
        value = value.get("content")
    return value if isinstance(value, str) else ""


def _from_gguf(file: Path) -> ChatTemplate:
    """The template and special tokens from a GGUF's metadata (the vocabulary only is loaded)."""
    import llama_cpp

    try:
        llm = llama_cpp.Llama(model_path=str(file), vocab_only=True, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise BackendError(f"{file}: llama.cpp cannot read this GGUF (options.chat_template): {exc}") from None
    try:
        template = llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise BackendError(f"{file}: the GGUF has no tokenizer.chat_template in its metadata "
                               "(options.chat_template)")
        model = llm._model
        eos, bos = llm.token_eos(), llm.token_bos()
        return ChatTemplate(str(template), model.token_get_text(bos) if bos != -1 else "",
                            model.token_get_text(eos) if eos != -1 else "", str(file))
    finally:
        llm.close()
