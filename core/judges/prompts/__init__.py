"""Stage 1, the prompt: templates, personas, few-shot examples, rendering, truncation, answer constraints."""
