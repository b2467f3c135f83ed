"""Stage 2, the run: what a run is, the engine that asks the judges, and how answers become scores."""
