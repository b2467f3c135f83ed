"""METEOR 1.5 through its Java jar, as nlg-eval runs it (the ``nlg-eval`` profile).

The jar (``meteor-1.5.jar -l en -norm``: English, normalised text, content words weighted
0.75 and function words 0.25, with stem, synonym and paraphrase matching) ships in the
PyPI package ``pycocoevalcap`` (``pip install 'dialjudge[nlg-eval]'``), whose ``Meteor``
wrapper speaks the jar's stdin protocol exactly as nlg-eval's copy of it does; dialjudge
drives that wrapper, one candidate at a time, as nlg-eval's ``compute_individual_metrics``
does. Without Java or the jar the metric is not computed and its row says why: there is
no substitute (NLTK's METEOR has no content/function weighting and gives other numbers).
"""

from __future__ import annotations

import importlib.util
import shutil
from typing import Any

from ..family import MetricFamily, MetricInfo, register_family
from ..signature_parts import distribution_version
from .coco import NLG_EVAL, PROFILE_TAG, nlg_eval_text

METEOR_JAR_ID = f"{NLG_EVAL}-meteor"
METEOR_JAR_LABEL = f"METEOR 1.5 {PROFILE_TAG}"


def meteor_jar_unavailable() -> str | None:
    """Why the jar cannot run here (one line), or None."""
    if shutil.which("java") is None:
        return ("not computed: Java was not found on PATH (METEOR 1.5 is a Java jar; install a JRE, "
                "e.g. Debian's default-jre-headless)")
    if importlib.util.find_spec("pycocoevalcap") is None:
        return ("not computed: the METEOR 1.5 jar is not installed (it ships in pycocoevalcap: "
                "pip install 'dialjudge[nlg-eval]')")
    return None


def meteor_jar_info(metric_id: str, variant: str | None = None) -> MetricInfo:
    return MetricInfo(
        id=metric_id, label=METEOR_JAR_LABEL, family="nlg-eval-meteor",
        description=("METEOR 1.5 (Denkowski & Lavie) through its Java jar with '-l en -norm', as nlg-eval runs "
                     "it: content words weigh 0.75, function words 0.25; exact, stem, synonym and paraphrase "
                     "matching. nlg-eval's preprocessing: texts stripped; '|||' removed from the hypothesis."),
        note=meteor_jar_unavailable(),
    )


def meteor_jar_signature(metric_id: str, variant: str | None = None) -> str:
    return "|".join(("METEOR-1.5", "profile:nlg-eval", "impl:meteor-1.5.jar", "args:-l en -norm", "nrefs:var",
                     "prep:strip", f"version:pycocoevalcap-{distribution_version('pycocoevalcap')}"))


def _one_line(text: str) -> str:
    # The jar reads one segment per line: a line break inside a text would end it early.
    # nlg-eval reads its texts from line-based files, so they never hold one.
    return " ".join(text.splitlines())


class MeteorJarScorer:
    def __init__(self, ids: tuple[str, ...], context: object) -> None:
        reason = meteor_jar_unavailable()
        if reason is not None:
            raise RuntimeError(f"{METEOR_JAR_LABEL}: {reason}")
        from pycocoevalcap.meteor.meteor import Meteor  # starts the JVM: only when METEOR first scores

        self._meteor: Any = Meteor()

    def cache_size(self) -> int:
        return 0

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        hypothesis = _one_line(nlg_eval_text(candidate))
        references = [_one_line(nlg_eval_text(r)) for r in refs]
        _corpus, scores = self._meteor.compute_score({0: references}, {0: [hypothesis]})
        return {METEOR_JAR_ID: float(scores[0])}


register_family(MetricFamily(name="nlg-eval-meteor", order=120, ids=(METEOR_JAR_ID,), info=meteor_jar_info,
                             signature=meteor_jar_signature, scorer=MeteorJarScorer, profile=NLG_EVAL,
                             unavailable=meteor_jar_unavailable))
