-- The run store as dialjudge wrote it at schema version 1 (frozen: tests open it with newer code).
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'cancelled', 'failed')),
    config TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    total INTEGER NOT NULL DEFAULT 0,
    error TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_fingerprint ON runs (fingerprint, id);

CREATE TABLE IF NOT EXISTS judgments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    item_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    mode TEXT NOT NULL,
    cache_key TEXT,
    prompt_hash TEXT NOT NULL,
    raw_output TEXT NOT NULL,
    score REAL,
    normalized REAL,
    distribution TEXT,
    reasoning TEXT,
    relevancy TEXT,
    latency REAL NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    evaluated_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    -- 1 when the backend itself failed (no answer at all): such rows are retried on resume.
    request_failed INTEGER NOT NULL DEFAULT 0,
    cached INTEGER NOT NULL DEFAULT 0,
    sampling TEXT NOT NULL DEFAULT '{}',
    created TEXT NOT NULL,
    UNIQUE (run_id, item_id, judge, repeat)
);

CREATE TABLE IF NOT EXISTS response_cache (
    cache_key TEXT PRIMARY KEY,
    model_identity TEXT NOT NULL,
    raw_output TEXT NOT NULL,
    choice_probs TEXT,
    top_logprobs TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    evaluated_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    latency REAL NOT NULL DEFAULT 0,
    created TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS reviews (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    item_id TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('judge-wrong', 'human-doubtful', 'fine')),
    note TEXT NOT NULL DEFAULT '',
    own_rating REAL,
    updated TEXT NOT NULL,
    PRIMARY KEY (run_id, item_id)
);
PRAGMA user_version = 1;
