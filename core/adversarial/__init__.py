"""Adversarial closed-ended sets (paper 000's KdConv-ADV / DSTC7-ADV, from any data).

Generators propose perturbations of a reply (:mod:`negation`, :mod:`numbers`,
:mod:`dates`, :mod:`knowledge`); :func:`make_adversarial_set` turns a dataset
with references or knowledge into an adversarial set with known labels;
:func:`discernment_table` measures whether evaluators score originals above
their perturbations; :func:`tag_dataset` tags examples open- or closed-ended. (KdConv, the
raw material of paper 000's sets, is read by :mod:`dialjudge.core.loaders.kdconv`.)
"""

from .builder import KINDS, BuildReport, make_adversarial_set
from .closedness import judge_closedness, tag_closedness, tag_dataset
from .discernment import Caught, DiscernmentRow, caught_list, discernment_table

__all__ = [
    "KINDS", "BuildReport", "make_adversarial_set", "judge_closedness", "tag_closedness",
    "tag_dataset", "Caught", "DiscernmentRow", "caught_list", "discernment_table",
]
