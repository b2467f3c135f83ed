"""What every metric family's signature is made of: the versions of the libraries behind the numbers
(read from the installed distributions without importing them) and the shared fields. Below the
family modules, which sign their own metrics with them, and :mod:`.signatures`, which asks the
registry for every family's signature.
"""

from __future__ import annotations

from importlib import metadata

from ... import __version__

#: The distributions whose versions decide the numbers.
VERSIONED_DISTRIBUTIONS = ("sacrebleu", "rouge-score", "nltk", "llama-cpp-python")

#: Several references: BLEU pools them as sacrebleu does, the other metrics take the best one.
NREFS = "var"


def distribution_version(name: str) -> str:
    """The installed version of a distribution, or 'not installed'."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def library_versions() -> dict[str, str]:
    """dialjudge's version and those of the metric and model libraries."""
    return {"dialjudge": __version__, **{name: distribution_version(name) for name in VERSIONED_DISTRIBUTIONS}}


def yes_no(flag: bool) -> str:
    return "yes" if flag else "no"
