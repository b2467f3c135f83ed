"""Tuning search: find the judge variant that agrees best with the humans on a tuning part of
the data, then report it on a held-out part it never saw (issue 13).

``space`` reads the search space, ``split`` divides the contexts, ``halving`` does the
successive-halving bookkeeping, ``search`` runs the variants through the run engine,
``report`` builds the leaderboard and held-out report, ``winner`` saves the winner as a template.
"""
