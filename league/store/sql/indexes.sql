CREATE INDEX IF NOT EXISTS idx_matches_round ON matches(round_id, match_index);
CREATE INDEX IF NOT EXISTS idx_matches_status ON matches(status);
CREATE INDEX IF NOT EXISTS idx_matches_referee ON matches(referee_id);
CREATE INDEX IF NOT EXISTS idx_rounds_number ON rounds(league_id, round_number);
CREATE INDEX IF NOT EXISTS idx_rankings_player ON player_rankings(player_id);
CREATE INDEX IF NOT EXISTS idx_snapshots_round ON standings_snapshots(round_id);
