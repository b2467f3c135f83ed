"""Stage 4, after a run: rescore, retry, cost, pooling and the label and pairwise readings of stored runs."""
