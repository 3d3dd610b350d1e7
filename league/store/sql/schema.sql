-- League Manager schema. Table and column names of the architecture document (section 5.2)
-- are binding; this file only adds tables, columns and CHECK values.
-- Bump user_version (and SchemaVersion in store.go) on any change, with a migrate_N.sql
-- that brings a database of the version before to N.
PRAGMA user_version = 5;

CREATE TABLE IF NOT EXISTS leagues (
    league_id TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK(status IN ('INIT', 'REGISTRATION', 'SCHEDULING', 'ACTIVE', 'COMPLETED')),
    created_at TEXT NOT NULL,
    config TEXT NOT NULL,
    game_type TEXT NOT NULL,
    seed INTEGER NOT NULL,
    first_player_at TEXT,
    registration_closed_at TEXT,
    completed_at TEXT,
    current_round INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS referees (
    referee_id TEXT PRIMARY KEY,
    league_id TEXT NOT NULL,
    auth_token TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL CHECK(status IN ('REGISTERED', 'ACTIVE', 'SUSPENDED', 'SHUTDOWN')),
    registered_at TEXT NOT NULL,
    endpoint_url TEXT NOT NULL,
    game_types TEXT NOT NULL,            -- JSON array
    max_concurrent_matches INTEGER NOT NULL DEFAULT 1,
    features TEXT NOT NULL DEFAULT '[]', -- JSON array: the extensions it announced
    conversation_id TEXT NOT NULL,       -- of the registration, so a retry gets the same answer
    violations INTEGER NOT NULL DEFAULT 0,
    suspended_until TEXT,
    FOREIGN KEY (league_id) REFERENCES leagues(league_id)
);

CREATE TABLE IF NOT EXISTS players (
    player_id TEXT PRIMARY KEY,
    league_id TEXT NOT NULL,
    auth_token TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL CHECK(status IN ('REGISTERED', 'ACTIVE', 'SUSPENDED', 'SHUTDOWN')),
    registered_at TEXT NOT NULL,
    endpoint_url TEXT NOT NULL,
    display_name TEXT,
    features TEXT NOT NULL DEFAULT '[]', -- JSON array: the extensions it announced
    conversation_id TEXT NOT NULL,
    violations INTEGER NOT NULL DEFAULT 0,
    suspended_until TEXT,
    agent_card TEXT,                     -- JSON object, or NULL: the card it registered with
    FOREIGN KEY (league_id) REFERENCES leagues(league_id)
);

CREATE TABLE IF NOT EXISTS rounds (
    round_id TEXT PRIMARY KEY,
    league_id TEXT NOT NULL,
    round_number INTEGER NOT NULL,
    scheduled_at TEXT,
    status TEXT NOT NULL CHECK(status IN ('PENDING', 'ACTIVE', 'COMPLETED')),
    cycle INTEGER NOT NULL DEFAULT 1,
    started_at TEXT,
    completed_at TEXT,
    FOREIGN KEY (league_id) REFERENCES leagues(league_id)
);

CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    round_id TEXT NOT NULL,
    referee_id TEXT,
    game_type TEXT NOT NULL,
    players TEXT NOT NULL,               -- JSON array of two player ids, first mover first
    status TEXT NOT NULL CHECK(status IN ('PENDING', 'ASSIGNED', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'ABANDONED')),
    assigned_at TEXT,
    match_seed INTEGER NOT NULL,
    match_index INTEGER NOT NULL,
    assignments INTEGER NOT NULL DEFAULT 0, -- how many times it was handed to a referee
    failures INTEGER NOT NULL DEFAULT 0,    -- failures that count toward retries.max_match_attempts
    FOREIGN KEY (round_id) REFERENCES rounds(round_id),
    FOREIGN KEY (referee_id) REFERENCES referees(referee_id)
);

CREATE TABLE IF NOT EXISTS match_results (
    result_id TEXT PRIMARY KEY,
    match_id TEXT NOT NULL UNIQUE,
    outcome TEXT NOT NULL,
    points TEXT NOT NULL,
    game_metadata TEXT,
    reported_at TEXT NOT NULL,
    referee_id TEXT,
    FOREIGN KEY (match_id) REFERENCES matches(match_id)
);

CREATE TABLE IF NOT EXISTS standings_snapshots (
    snapshot_id TEXT PRIMARY KEY,
    league_id TEXT NOT NULL,
    round_id TEXT,
    computed_at TEXT NOT NULL,
    FOREIGN KEY (league_id) REFERENCES leagues(league_id),
    FOREIGN KEY (round_id) REFERENCES rounds(round_id)
);

CREATE TABLE IF NOT EXISTS player_rankings (
    snapshot_id TEXT NOT NULL,
    player_id TEXT NOT NULL,
    rank INTEGER NOT NULL,
    points INTEGER NOT NULL DEFAULT 0,
    wins INTEGER NOT NULL DEFAULT 0,
    draws INTEGER NOT NULL DEFAULT 0,
    losses INTEGER NOT NULL DEFAULT 0,
    matches_played INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (snapshot_id, player_id),
    FOREIGN KEY (snapshot_id) REFERENCES standings_snapshots(snapshot_id),
    FOREIGN KEY (player_id) REFERENCES players(player_id)
);

-- A bye is an unplayed game: it scores nothing and is not a match played.
CREATE TABLE IF NOT EXISTS byes (
    round_id TEXT NOT NULL,
    player_id TEXT NOT NULL,
    -- What the bye scores: 0 in a round robin, scheduling.bye_points in a Swiss.
    points INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (round_id, player_id),
    FOREIGN KEY (round_id) REFERENCES rounds(round_id),
    FOREIGN KEY (player_id) REFERENCES players(player_id)
);

-- Small key/value facts, e.g. the hash of the last audit line.
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
