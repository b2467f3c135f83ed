"""A judge run through a batch engine: its requests written to a file for the OpenAI Batch API or vLLM's
``run-batch`` (:mod:`.requests`), their answers read back (:mod:`.answers`) and scored as a live run's
answers are (:mod:`.scoring`): through the response cache and the run engine, never a second copy."""
