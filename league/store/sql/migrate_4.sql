-- Version 3 to 4: a Swiss bye scores points, which the byes table now records; a
-- round-robin bye scores none, as before.
ALTER TABLE byes ADD COLUMN points INTEGER NOT NULL DEFAULT 0;
PRAGMA user_version = 4;
