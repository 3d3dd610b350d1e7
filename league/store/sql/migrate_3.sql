-- Version 2 to 3: live standings are no longer a table. They are counted from
-- match_results (Store.Standings), the one source a partial write cannot make disagree.
DROP TABLE IF EXISTS standings;
PRAGMA user_version = 3;
