"""A dataset's examples as they cross to a worker process: pickled a few hundred at a time, once per dataset.

Both worker processes receive the open dataset: the compute process when the dataset opens (its description,
metrics and statistics are computed there), the judge process at every run, search or alignment. Pickling
100,000 examples takes 0.3 s of the interpreter alone and took 0.46-0.49 s beside the app's UI thread, and a
run's start did it again for a dataset the compute process had already received: held in moments of the
interpreter's switch interval on the thread that starts the run, it lengthened the UI's waits for the lock as
the run began. So the pieces are kept with the dataset until its examples change (``Dataset.derived``; about
19 MB at 100,000 items, against hundreds of MB for the dataset itself) and every later crossing sends the same
bytes.

Each piece holds :data:`EXAMPLES_PER_PIECE` examples, so that no single pickling or unpickling holds the
interpreter long (a piece 1.4 ms, 2.2 ms at most; all 100,000 examples at once 0.5 s); the pieces are pickled
together, on the caller's thread, which is never the UI's.
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Iterable

from ..model import Dataset, Example

#: Examples pickled together.
EXAMPLES_PER_PIECE = 500

#: One pickling at a time: a second caller for the same dataset waits and takes the first one's pieces.
_pickling = threading.Lock()


def pickled_examples(dataset: Dataset) -> tuple[bytes, ...]:
    """``dataset``'s examples, pickled :data:`EXAMPLES_PER_PIECE` at a time (the same bytes until the dataset's
    examples list is replaced or grows)."""
    with _pickling:
        return dataset.derived("pickled examples", _pieces)


def unpickled_examples(pieces: Iterable[bytes]) -> list[Example]:
    """The examples of :func:`pickled_examples`' pieces, in their order."""
    return [example for piece in pieces for example in pickle.loads(piece)]


def _pieces(examples: list[Example]) -> tuple[bytes, ...]:
    return tuple(pickle.dumps(examples[start:start + EXAMPLES_PER_PIECE], protocol=pickle.HIGHEST_PROTOCOL)
                 for start in range(0, len(examples), EXAMPLES_PER_PIECE))


__all__ = ["EXAMPLES_PER_PIECE", "pickled_examples", "unpickled_examples"]
