-- Version 4 to 5: a player may register an agent card (what it is and how it is set up),
-- stored as JSON; players of before have none.
ALTER TABLE players ADD COLUMN agent_card TEXT;
PRAGMA user_version = 5;
