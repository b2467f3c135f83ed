"""dialjudge's benchmark suite: ``python -m bench`` (``--quick``, ``--json PATH``, ``--only NAMES``).

One table of figures, each with its baseline, value, ratio, target and pass/fail:

1. metrics — reference metrics on 10,000 pairs: engine vs per-call libraries (values identical);
2. judge — the bundled local judge: the papers' generate path vs the default probability scoring;
3. api — an API judge against a local stub (200 ms per answer) at concurrency 1/8/32/64, and with 10% 429s;
4. cache — model calls of an unchanged rerun, a persona change and a grown subset;
5. app — cold start, opening 10,000 items, one running-correlation refresh, the longest UI stall;
6. memory — peak RSS of a 10,000-item run through the engine and store, and of the app holding 10,000 items.
7. pairs — loading 100,000 preference pairs;
8. store — a 100,000-judgment run written, listed, loaded, paged and exported in every format;
9. worker — one local model, one worker: a Prompt lab trial after a run (and a run after a trial) loads no model.
10. batch — a 100,000-judgment run written to a batch file and its answers imported;
11. report — the HTML report of a 100,000-item run;
12. sharing — metrics on 10,000 pairs computed while a local judge runs, against each alone.

See bench/README.md for a full run's table. Speed is measured here, never asserted in tests.
"""
