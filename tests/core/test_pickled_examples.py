"""A dataset's examples cross to the worker processes pickled once: the same bytes for the compute process and
for every run, new bytes once the examples change, and a pickled dataset never carries them along."""

from __future__ import annotations

import dataclasses
import pickle

from dialjudge.core.api.pickled_examples import EXAMPLES_PER_PIECE, pickled_examples, unpickled_examples
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.model import Dataset


def _many(n: int) -> Dataset:
    sample = open_dataset("sample")
    examples = [dataclasses.replace(sample.examples[i % len(sample.examples)], id=f"item-{i}") for i in range(n)]
    return dataclasses.replace(sample, examples=examples)


def test_pieces_round_trip_in_order_and_in_pieces_of_the_stated_size() -> None:
    dataset = _many(2 * EXAMPLES_PER_PIECE + 7)
    pieces = pickled_examples(dataset)
    assert len(pieces) == 3
    assert unpickled_examples(pieces) == dataset.examples
    assert [len(unpickled_examples([piece])) for piece in pieces] == [EXAMPLES_PER_PIECE, EXAMPLES_PER_PIECE, 7]


def test_a_second_crossing_sends_the_same_bytes_until_the_examples_change() -> None:
    dataset = _many(30)
    first = pickled_examples(dataset)
    assert pickled_examples(dataset) is first  # not pickled again
    dataset.examples.append(dataclasses.replace(dataset.examples[0], id="one more"))
    grown = pickled_examples(dataset)
    assert grown is not first and unpickled_examples(grown)[-1].id == "one more"
    dataset.examples = dataset.examples[:5]
    assert [ex.id for ex in unpickled_examples(pickled_examples(dataset))] == [f"item-{i}" for i in range(5)]


def test_an_equal_dataset_gets_its_own_pieces_and_a_pickled_dataset_leaves_them_behind() -> None:
    dataset = _many(EXAMPLES_PER_PIECE)
    twin = dataclasses.replace(dataset, examples=list(dataset.examples))
    assert pickled_examples(twin) is not pickled_examples(dataset)
    pieces_size = sum(map(len, pickled_examples(dataset)))
    copied = pickle.dumps(dataset, protocol=pickle.HIGHEST_PROTOCOL)
    assert len(copied) < 1.5 * pieces_size  # the examples once, not the examples and their pieces
    copy = pickle.loads(copied)
    assert copy.examples == dataset.examples
    assert unpickled_examples(pickled_examples(copy)) == dataset.examples


def test_a_jobs_examples_cross_ahead_of_it_one_message_each_and_are_put_back_in_order() -> None:
    from dialjudge.core.api.run_worker import _AlignJob, _PickledDataset, _pieces_ahead, _with_pieces

    dataset = _many(EXAMPLES_PER_PIECE + 1)
    job = _AlignJob(request=None, dataset=_PickledDataset.of(dataset))  # type: ignore[arg-type]
    bare, pieces = _pieces_ahead(job)
    assert len(pieces) == 2 and bare.dataset is not None and bare.dataset.pieces == ()
    put_back = _with_pieces(bare, list(pieces))
    assert put_back == job and put_back.dataset.dataset().examples == dataset.examples
    without = _AlignJob(request=None, dataset=None)  # type: ignore[arg-type]
    assert _pieces_ahead(without) == (without, ()) and _with_pieces(without, []) is without
