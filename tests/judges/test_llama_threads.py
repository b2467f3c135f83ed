"""A local judge computes with the cores other work leaves it: llama.cpp's thread count follows
:meth:`LlamaBackend.share_cores` from the next evaluation on, with the same answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_backend_llama import LIKERT, request

from dialjudge.core.judges.backends import llama as llama_module
from dialjudge.core.judges.backends.llama import LlamaBackend
from dialjudge.core.judges.types import CoreSharingBackend, ScoringMode

pytestmark = pytest.mark.model


def test_the_thread_budget_is_the_configured_threads_within_the_free_cores(bundled_model: Path, monkeypatch):
    monkeypatch.setattr(llama_module, "available_cores", lambda: 8)
    backend = LlamaBackend(bundled_model, n_threads=4, n_threads_batch=6)
    assert isinstance(backend, CoreSharingBackend)
    assert backend.thread_budget() == (4, 6)
    backend.share_cores(3)  # 5 free: the configured 4 fit, the prompts' 6 do not
    assert backend.thread_budget() == (4, 5)
    backend.share_cores(7)
    assert backend.thread_budget() == (1, 1)
    backend.share_cores(20)  # never none: the judge still has a run to finish
    assert backend.thread_budget() == (1, 1)
    backend.share_cores(0)
    assert backend.thread_budget() == (4, 6)


async def test_the_loaded_model_changes_its_threads_between_evaluations_with_the_same_answer(
        llama_backend: LlamaBackend, monkeypatch):
    # The session's model computes with one thread (tests/judges/conftest.py); pretend four cores so that two
    # threads fit and then only one, and let it use two while the test runs.
    monkeypatch.setattr(llama_module, "available_cores", lambda: 4)
    monkeypatch.setattr(llama_backend, "n_threads", 2)
    monkeypatch.setattr(llama_backend, "n_threads_batch", 2)
    session = llama_backend._session
    assert session is not None
    likert = request("B: The Alps, mostly in summer.", LIKERT, ScoringMode.LOGPROB)
    try:
        llama_backend.share_cores(0)
        wide = await llama_backend.complete(likert)
        assert session.threads == (2, 2)
        llama_backend.share_cores(3)
        session.forget_cache()  # evaluate the whole prompt again, now on one thread
        narrow = await llama_backend.complete(likert)
        assert session.threads == (1, 1)
    finally:
        llama_backend.share_cores(0)
        monkeypatch.undo()
        await llama_backend.complete(likert)  # back to the fixture's one thread for the tests after
    assert session.threads == (1, 1)
    assert narrow.choice_probs is not None and wide.choice_probs is not None
    assert narrow.choice_probs.keys() == wide.choice_probs.keys()
    for choice, p in wide.choice_probs.items():
        assert narrow.choice_probs[choice] == pytest.approx(p, abs=1e-4)


