package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/protocol"
)

// Agent kinds, as the tables name them.
const (
	KindReferee = "referee"
	KindPlayer  = "player"
)

// Meta keys recording a graceful shutdown the league has not resumed from yet.
const (
	metaShutdownAt     = "shutdown_at"
	metaShutdownReason = "shutdown_reason"
	// metaFormat is the league's format (schedule and ranking) as JSON, fixed when the
	// schedule is stored.
	metaFormat = "format"
)

// League is the league's row.
type League struct {
	ID, Status, GameType string
	Seed                 int64
	// FirstPlayerAt is when the first player registered; "" before.
	FirstPlayerAt string
	// Config is the configuration the league was created with, as JSON.
	Config json.RawMessage
}

// Agent is a registered referee or player.
type Agent struct {
	Kind                                                                   string // KindReferee or KindPlayer
	ID, Token, Status, Endpoint, ConversationID, RegisteredAt, DisplayName string
	Games, Features                                                        []string
	MaxMatches, Violations                                                 int
	// SuspendedUntil is "" when no suspension has an end.
	SuspendedUntil string
	// AgentCard is a player's card, nil when it registered none.
	AgentCard *protocol.AgentCard
}

// AgentChange sets an agent's status, violations and end of suspension ("" for none).
type AgentChange struct {
	Kind, ID, Status string
	Violations       int
	SuspendedUntil   string
}

// Round is a round of the schedule with its matches, in match order.
type Round struct {
	ID            string
	Number, Cycle int
	Status        string
	// Bye is the player who sits the round out, "" for none, and ByePoints what the
	// bye scores.
	Bye       string
	ByePoints int
	Matches   []Match
}

// Match is a scheduled match.
type Match struct {
	ID, RoundID string
	// Referee is the referee it was last assigned to, "" before.
	Referee, Status, AssignedAt string
	Players                     [2]string
	Seed                        int64
	Index, Failures             int
	// Result is nil until one is stored.
	Result *Result
}

// Result is a stored match result.
type Result struct {
	Outcome  map[string]string
	Points   map[string]int
	Metadata json.RawMessage
	// Referee is "" for a result the League Manager decided itself (a forfeit).
	Referee, ReportedAt string
}

// LoadLeague reads the row of league id; found is false on a new database. A database
// holding another league is an error.
func (s *Store) LoadLeague(id string) (l League, found bool, err error) {
	var status, gameType, firstPlayer sql.NullString
	var cfg string
	err = s.db.QueryRow(`SELECT status, game_type, seed, coalesce(first_player_at, ''), config FROM leagues WHERE league_id = ?`, id).
		Scan(&status, &gameType, &l.Seed, &firstPlayer, &cfg)
	if errors.Is(err, sql.ErrNoRows) {
		var other int
		if err := s.db.QueryRow(`SELECT count(*) FROM leagues`).Scan(&other); err != nil {
			return l, false, fmt.Errorf("load league: %w", err)
		}
		if other > 0 {
			return l, false, fmt.Errorf("database already holds another league; use a new database for %q", id)
		}
		return l, false, nil
	}
	if err != nil {
		return l, false, fmt.Errorf("load league: %w", err)
	}
	l.ID, l.Status, l.GameType, l.FirstPlayerAt, l.Config = id, status.String, gameType.String, firstPlayer.String, json.RawMessage(cfg)
	return l, true, nil
}

// TheLeague reads the one league of the database, for tools that do not know its id.
func (s *Store) TheLeague() (League, error) {
	var id string
	if err := s.db.QueryRow(`SELECT league_id FROM leagues`).Scan(&id); err != nil {
		return League{}, fmt.Errorf("read league: %w", err)
	}
	l, _, err := s.LoadLeague(id)
	return l, err
}

// CreateLeague stores a new league.
func (s *Store) CreateLeague(l League, createdAt string) error {
	return s.tx(func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO leagues (league_id, status, created_at, config, game_type, seed) VALUES (?, ?, ?, ?, ?, ?)`,
			l.ID, l.Status, createdAt, string(l.Config), l.GameType, l.Seed)
		if err != nil {
			return fmt.Errorf("create league: %w", err)
		}
		return nil
	})
}

// SetLeagueStatus changes the league's status.
func (s *Store) SetLeagueStatus(leagueID, status string) error {
	return s.tx(func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE leagues SET status = ? WHERE league_id = ?`, status, leagueID); err != nil {
			return fmt.Errorf("set league status: %w", err)
		}
		return nil
	})
}

// Agents reads every registered referee, then every player.
func (s *Store) Agents() ([]Agent, error) {
	var out []Agent
	rows, err := s.db.Query(`SELECT referee_id, auth_token, status, endpoint_url, game_types, features, max_concurrent_matches, conversation_id, registered_at,
		violations, coalesce(suspended_until, '') FROM referees ORDER BY referee_id`)
	if err != nil {
		return nil, fmt.Errorf("load referees: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		a := Agent{Kind: KindReferee}
		var games, features string
		if err := rows.Scan(&a.ID, &a.Token, &a.Status, &a.Endpoint, &games, &features, &a.MaxMatches, &a.ConversationID, &a.RegisteredAt, &a.Violations, &a.SuspendedUntil); err != nil {
			return nil, fmt.Errorf("load referees: %w", err)
		}
		if err := json.Unmarshal([]byte(games), &a.Games); err != nil {
			return nil, fmt.Errorf("load referee %s games: %w", a.ID, err)
		}
		if err := json.Unmarshal([]byte(features), &a.Features); err != nil {
			return nil, fmt.Errorf("load referee %s features: %w", a.ID, err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load referees: %w", err)
	}
	card := "agent_card"
	if s.schema < 5 {
		card = "NULL" // a database of before cards, read without migrating it
	}
	prows, err := s.db.Query(`SELECT player_id, auth_token, status, endpoint_url, coalesce(display_name, ''), features, conversation_id, registered_at,
		violations, coalesce(suspended_until, ''), coalesce(` + card + `, '') FROM players ORDER BY player_id`)
	if err != nil {
		return nil, fmt.Errorf("load players: %w", err)
	}
	defer prows.Close()
	for prows.Next() {
		a := Agent{Kind: KindPlayer}
		var features, card string
		if err := prows.Scan(&a.ID, &a.Token, &a.Status, &a.Endpoint, &a.DisplayName, &features, &a.ConversationID, &a.RegisteredAt, &a.Violations, &a.SuspendedUntil, &card); err != nil {
			return nil, fmt.Errorf("load players: %w", err)
		}
		if err := json.Unmarshal([]byte(features), &a.Features); err != nil {
			return nil, fmt.Errorf("load player %s features: %w", a.ID, err)
		}
		if card != "" {
			if err := json.Unmarshal([]byte(card), &a.AgentCard); err != nil {
				return nil, fmt.Errorf("load player %s agent card: %w", a.ID, err)
			}
		}
		out = append(out, a)
	}
	if err := prows.Err(); err != nil {
		return nil, fmt.Errorf("load players: %w", err)
	}
	return out, nil
}

// AddAgent stores a new referee or player of league leagueID. The first player also
// starts the registration window (first_player_at).
func (s *Store) AddAgent(leagueID string, a Agent, firstPlayer bool) error {
	features, err := json.Marshal(nonNil(a.Features))
	if err != nil {
		return fmt.Errorf("store %s: %w", a.Kind, err)
	}
	return s.tx(func(tx *sql.Tx) error {
		if a.Kind == KindReferee {
			games, err := json.Marshal(nonNil(a.Games))
			if err != nil {
				return fmt.Errorf("store referee: %w", err)
			}
			if _, err := tx.Exec(`INSERT INTO referees (referee_id, league_id, auth_token, status, registered_at, endpoint_url, game_types, features, max_concurrent_matches, conversation_id)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.ID, leagueID, a.Token, a.Status, a.RegisteredAt, a.Endpoint, string(games), string(features), a.MaxMatches, a.ConversationID); err != nil {
				return fmt.Errorf("store referee: %w", err)
			}
			return nil
		}
		var card any // NULL without a card
		if a.AgentCard != nil {
			b, err := json.Marshal(a.AgentCard)
			if err != nil {
				return fmt.Errorf("store player: %w", err)
			}
			card = string(b)
		}
		if _, err := tx.Exec(`INSERT INTO players (player_id, league_id, auth_token, status, registered_at, endpoint_url, display_name, features, conversation_id, agent_card)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.ID, leagueID, a.Token, a.Status, a.RegisteredAt, a.Endpoint, a.DisplayName, string(features), a.ConversationID, card); err != nil {
			return fmt.Errorf("store player: %w", err)
		}
		if firstPlayer {
			if _, err := tx.Exec(`UPDATE leagues SET first_player_at = ? WHERE league_id = ?`, a.RegisteredAt, leagueID); err != nil {
				return fmt.Errorf("store player: %w", err)
			}
		}
		return nil
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// agentTable is the table of an agent kind; kinds come only from this package's
// constants, never from a message.
func agentTable(kind string) (table, key string, err error) {
	switch kind {
	case KindReferee:
		return "referees", "referee_id", nil
	case KindPlayer:
		return "players", "player_id", nil
	}
	return "", "", fmt.Errorf("unknown agent kind %q", kind)
}

// SetAgentStatus changes an agent's status.
func (s *Store) SetAgentStatus(kind, id, status string) error {
	table, key, err := agentTable(kind)
	if err != nil {
		return err
	}
	return s.tx(func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE `+table+` SET status = ? WHERE `+key+` = ?`, status, id); err != nil {
			return fmt.Errorf("set %s status: %w", kind, err)
		}
		return nil
	})
}

// ChangeAgent stores a change of an agent's violations and suspension.
func (s *Store) ChangeAgent(c AgentChange) error {
	return s.tx(func(tx *sql.Tx) error { return changeAgent(tx, c) })
}

func changeAgent(tx *sql.Tx, c AgentChange) error {
	table, key, err := agentTable(c.Kind)
	if err != nil {
		return err
	}
	var until any
	if c.SuspendedUntil != "" {
		until = c.SuspendedUntil
	}
	if _, err := tx.Exec(`UPDATE `+table+` SET status = ?, violations = ?, suspended_until = ? WHERE `+key+` = ?`, c.Status, c.Violations, until, c.ID); err != nil {
		return fmt.Errorf("change %s %s: %w", c.Kind, c.ID, err)
	}
	return nil
}

// ShutdownRecord is the graceful shutdown the league has not resumed from: its time and
// reason, "" when there is none.
func (s *Store) ShutdownRecord() (at, reason string, err error) {
	err = s.db.QueryRow(`SELECT a.value, r.value FROM meta a, meta r WHERE a.key = ? AND r.key = ?`, metaShutdownAt, metaShutdownReason).Scan(&at, &reason)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", "", fmt.Errorf("read shutdown record: %w", err)
	}
	return at, reason, nil
}

// Standings counts the live standings of every registered player from the stored
// results: the one source no partial write can make disagree.
func (s *Store) Standings() ([]protocol.StandingsRow, error) {
	t, err := s.Table()
	if err != nil {
		return nil, err
	}
	return t.Rows(), nil
}

// Table is the standings table of every stored result and bye, ordered as the format
// says: the source of Standings, and of the tie-break columns and the crosstable.
func (s *Store) Table() (*standings.Table, error) {
	var players []string
	prows, err := s.db.Query(`SELECT player_id FROM players ORDER BY player_id`)
	if err != nil {
		return nil, fmt.Errorf("count standings: %w", err)
	}
	defer prows.Close()
	for prows.Next() {
		var id string
		if err := prows.Scan(&id); err != nil {
			return nil, fmt.Errorf("count standings: %w", err)
		}
		players = append(players, id)
	}
	if err := prows.Err(); err != nil {
		return nil, fmt.Errorf("count standings: %w", err)
	}
	format, _, err := s.Format()
	if err != nil {
		return nil, err
	}
	table := standings.New(players, format.Tiebreaks...)
	if err := byePoints(s.db, table); err != nil {
		return nil, err
	}
	// Only outcomes and points: game_metadata, the bulk of a result, is not read.
	rrows, err := s.db.Query(`SELECT match_id, outcome, points FROM match_results`)
	if err != nil {
		return nil, fmt.Errorf("count standings: %w", err)
	}
	defer rrows.Close()
	for rrows.Next() {
		var id, outcome, points string
		var r Result
		if err := rrows.Scan(&id, &outcome, &points); err != nil {
			return nil, fmt.Errorf("count standings: %w", err)
		}
		if err := json.Unmarshal([]byte(outcome), &r.Outcome); err != nil {
			return nil, fmt.Errorf("count standings: result of %s: %w", id, err)
		}
		if err := json.Unmarshal([]byte(points), &r.Points); err != nil {
			return nil, fmt.Errorf("count standings: result of %s: %w", id, err)
		}
		if err := table.Apply(r.Outcome, r.Points); err != nil {
			return nil, fmt.Errorf("count standings: result of %s: %w", id, err)
		}
	}
	if err := rrows.Err(); err != nil {
		return nil, fmt.Errorf("count standings: %w", err)
	}
	return table, nil
}

// byePoints adds the points of every stored bye to table.
func byePoints(db *sql.DB, table *standings.Table) error {
	rows, err := db.Query(`SELECT player_id, points FROM byes WHERE points > 0 ORDER BY round_id, player_id`)
	if err != nil {
		return fmt.Errorf("count standings: byes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var points int
		if err := rows.Scan(&id, &points); err != nil {
			return fmt.Errorf("count standings: byes: %w", err)
		}
		if err := table.Bye(id, points); err != nil {
			return fmt.Errorf("count standings: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("count standings: byes: %w", err)
	}
	return nil
}

// Format reads the league's format as SaveSchedule stored it; found is false before the
// schedule, and in a database from before formats (a round robin ranked the seed's way).
// A stored format that breaks the format's rules (schedule.Format.Validate) is an error.
func (s *Store) Format() (f schedule.Format, found bool, err error) {
	var v string
	err = s.db.QueryRow(`SELECT value FROM meta WHERE key = ?`, metaFormat).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return schedule.Format{}, false, nil
	}
	if err != nil {
		return schedule.Format{}, false, fmt.Errorf("read the format: %w", err)
	}
	if err := json.Unmarshal([]byte(v), &f); err != nil {
		return schedule.Format{}, false, fmt.Errorf("read the format: %w", err)
	}
	if err := f.Validate(); err != nil {
		return schedule.Format{}, false, fmt.Errorf("read the format: %w", err)
	}
	return f, true, nil
}
