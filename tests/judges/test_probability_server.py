"""The bundled model through llama.cpp's real OpenAI-compatible server against the same model in
process, on the first 12 items of USR Topical-Chat (likert-1to5, aspect overall, mode logprob):
every server judgment matches the local one or fails with its valid-answer mass; none is scored
from a mass below the threshold. (Issue: through the chat endpoint every item scored 1.0.)"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from dialjudge.core.config import Config, JudgeConfig
from dialjudge.core.errors import BackendError
from dialjudge.core.judges.backends.openai_api import OpenAIBackend
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.scoring import is_low_mass_failure
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import DEFAULT_MIN_VALID_MASS, Judgment, ScoringMode
from shared_data import require_file

ITEMS = 12
#: How far the server may sit from the local backend. Both read the same model on the same prompt
#: text, but llama.cpp evaluates the prompt in other batches in the server (one token at a time
#: with --n_ubatch 1 on AMX machines, its own n_batch elsewhere) than in the local backend (chunks
#: at fixed places, see llama.py, chunk_ends); the kernels then round differently, which moves
#: single next-token probabilities of this Q4 model by up to a few hundredths (test_backend_llama.py).
#: Measured on these 12 items: the valid mass differs by up to 6 points, the expected rating by up
#: to 0.054 (the distribution is renormalised over about 45% of the mass, which doubles a change).
KERNEL_TOLERANCE = 0.15
#: Items the chat-endpoint test judges: what it checks holds for each answer alone (a refusal up front, then
#: no rating read from too little mass), so fewer items than the comparison, whose point is the spread.
CHAT_ITEMS = 6
MASS_TOLERANCE = 0.10


def _plan(dataset: Any, config: Config, judge: str, limit: int) -> Any:
    from dialjudge.core.planning import plan_run

    return plan_run(dataset, config, template="likert-1to5", judges=[judge], mode=ScoringMode.LOGPROB,
                    aspect="overall", limit=limit, top_k=0).config


async def _judge(store: RunStore, dataset: Any, config: Config, judge: str, backend: Any,
                 limit: int = ITEMS) -> dict[str, Judgment]:
    run = _plan(dataset, config, judge, limit)
    engine = RunEngine(run, dataset, {judge: backend}, store)
    summary = await asyncio.wait_for(engine.run(), 600)
    return store.judgments.load_judgments(summary.run_id)[judge]


def _row(item_id: str, here: Judgment, there: Judgment) -> str:
    def cell(j: Judgment) -> str:
        score = "failed" if j.score is None else f"{j.score:.3f}"
        mass = "?" if j.valid_mass is None else f"{'>=' if j.mass_is_lower_bound else ''}{100 * j.valid_mass:.1f}%"
        return f"{score:>7} {mass:>8}"
    return f"{item_id:<10} local {cell(here)}  server {cell(there)}"


def _api_judge(base_url: str, **options: Any) -> JudgeConfig:
    # The same window as the local judge's n_ctx, so both cut the same dialogues the same way.
    return JudgeConfig(name="server", backend="openai", model="smollm2", base_url=base_url, concurrency=1,
                       timeout=300.0, max_retries=0, extra={"context_window": 1024, **options})


@pytest.fixture
def usr(shared_data: Path) -> tuple[Any, Config]:
    from dialjudge.core.dataset_catalogue import open_dataset

    require_file(shared_data, "usr/usr_topical_chat.json")
    config = Config(data_dirs=(shared_data,))
    return open_dataset("usr-topicalchat", config, remember=False), config


@pytest.mark.server
async def test_the_server_scores_as_the_local_backend_or_fails_with_the_mass(
        llama_server: str, llama_backend: Any, bundled_model: Path, usr: tuple[Any, Config], tmp_path: Path) -> None:
    dataset, data_config = usr
    local_judge = JudgeConfig(name="smollm2", backend="llama", n_ctx=1024)
    server_judge = _api_judge(llama_server, chat_template=str(bundled_model))
    config = Config(data_dirs=data_config.data_dirs, judges={"smollm2": local_judge, "server": server_judge})
    with RunStore(tmp_path / "runs.sqlite3") as store:
        local = await _judge(store, dataset, config, "smollm2", llama_backend)
        api = OpenAIBackend(server_judge)
        remote = await _judge(store, dataset, config, "server", api)
        assert api.scoring_way == "template"
    assert len(local) == len(remote) == ITEMS
    # The numbers, for a reader of `pytest -s`: item, local score and mass, server score and mass.
    for item_id in sorted(remote):
        print(_row(item_id, local[item_id], remote[item_id]))
    for item_id, there in remote.items():
        here = local[item_id]
        assert there.prompt_hash == here.prompt_hash  # the same question
        assert here.valid_mass is not None and there.valid_mass is not None
        if there.score is None:
            assert is_low_mass_failure(there), there.error
            continue
        # The local reading, whether or not its own mass passed: near the threshold the two sides
        # may fall either way of it, within the kernels' difference.
        assert there.score == pytest.approx(_expected_rating(here), abs=KERNEL_TOLERANCE)
        if here.score is None:
            assert is_low_mass_failure(here) and here.valid_mass >= DEFAULT_MIN_VALID_MASS - MASS_TOLERANCE
    for judgment in [*local.values(), *remote.values()]:  # none is scored from too little mass
        assert judgment.score is None or judgment.valid_mass >= DEFAULT_MIN_VALID_MASS


def _expected_rating(judgment: Judgment) -> float:
    assert judgment.distribution is not None
    return sum(int(answer) * p for answer, p in judgment.distribution.items()) / sum(judgment.distribution.values())


@pytest.mark.server
async def test_the_chat_endpoint_is_refused_up_front_or_fails_every_answer_that_is_no_rating(
        llama_server: str, usr: tuple[Any, Config], tmp_path: Path) -> None:
    dataset, data_config = usr
    # As a new user configures it: llama-cpp-python's server shows no template and ignores
    # continue_final_message, so probability modes are refused before anything is judged.
    plain = _api_judge(llama_server)
    config = Config(data_dirs=data_config.data_dirs, judges={"server": plain})
    with RunStore(tmp_path / "runs.sqlite3") as store:
        with pytest.raises(BackendError, match="cannot be made to continue after the template's answer prefix"):
            await _judge(store, dataset, config, "server", OpenAIBackend(plain), CHAT_ITEMS)
        # Insisting: the chat answers are read as they come, and only ratings with enough mass count.
        insisting = _api_judge(llama_server, continuation="unprefixed")
        config = Config(data_dirs=data_config.data_dirs, judges={"server": insisting})
        judged = await _judge(store, dataset, config, "server", OpenAIBackend(insisting), CHAT_ITEMS)
    assert len(judged) == CHAT_ITEMS
    for item_id in sorted(judged):  # for a reader of `pytest -s`
        print(f"{item_id:<10} chat, unprefixed {_row(item_id, judged[item_id], judged[item_id]).split('local ')[1][:16]}")
    for judgment in judged.values():
        assert judgment.valid_mass is not None
        if judgment.score is None:
            assert is_low_mass_failure(judgment) or judgment.error, judgment
        else:
            assert judgment.valid_mass >= DEFAULT_MIN_VALID_MASS
