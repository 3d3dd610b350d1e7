package protocol_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

func intp(n int) *int       { return &n }
func strp(s string) *string { return &s }

// The typed payloads must put on the wire the very bytes the roles sent before them:
// each case encodes a payload and what its sender used to encode (a map, or the struct
// it declared), and compares the bytes.
func TestPayloadBytesUnchanged(t *testing.T) {
	view := map[string]any{"board": []any{[]any{"X", "", ""}, []any{"", "O", ""}, []any{"", "", ""}}, "your_mark": "X", "move_number": 2}
	viewJSON, _ := json.Marshal(view)
	move := json.RawMessage(`{"row":1,"col":2}`)
	final := map[string]any{"board": "x<o>&", "winner": nil}
	finalJSON, _ := json.Marshal(final)
	progress := []protocol.MatchProgress{{MatchID: "m1", Step: 3, Phase: protocol.PhasePlaying}}

	// assignmentPayload is what the League Manager declared for MATCH_ASSIGNMENT.
	type assignmentPayload struct {
		MatchID           string            `json:"match_id"`
		RoundID           string            `json:"round_id"`
		GameType          string            `json:"game_type"`
		Players           [2]string         `json:"players"`
		PlayerEndpoints   map[string]string `json:"player_endpoints"`
		MatchSeed         int64             `json:"match_seed"`
		MatchCredentials  map[string]string `json:"match_credentials"`
		GameParams        map[string]any    `json:"game_params"`
		Scoring           map[string]int    `json:"scoring"`
		Deadlines         map[string]int    `json:"deadlines"`
		IllegalMovePolicy string            `json:"illegal_move_policy"`
		Penalties         map[string]int    `json:"penalties"`
	}
	// refereeMetadata is what the referee declared for game_metadata.
	type moveRecord struct {
		Step      int             `json:"step"`
		Player    string          `json:"player"`
		Move      json.RawMessage `json:"move"`
		Outcome   string          `json:"outcome"`
		ElapsedMS int64           `json:"elapsed_ms"`
		Metadata  json.RawMessage `json:"metadata,omitempty"`
	}
	type violation struct {
		Step   int    `json:"step"`
		Player string `json:"player"`
		Kind   string `json:"kind"`
		Action string `json:"action"`
		Detail string `json:"detail,omitempty"`
	}
	type refereeMetadata struct {
		MatchSeed   int64          `json:"match_seed"`
		GameParams  map[string]any `json:"game_params"`
		Moves       []moveRecord   `json:"moves"`
		FinalState  map[string]any `json:"final_state"`
		Termination string         `json:"termination"`
		Loser       string         `json:"loser,omitempty"`
		Violations  []violation    `json:"violations"`
		Steps       int            `json:"steps"`
		TotalMoves  int            `json:"total_moves"`
		Referee     string         `json:"referee_id"`
		StartedAt   string         `json:"started_at"`
		FinishedAt  string         `json:"finished_at"`
	}
	type standingsRow struct {
		Rank          int    `json:"rank"`
		PlayerID      string `json:"player_id"`
		Points        int    `json:"points"`
		Wins          int    `json:"wins"`
		Draws         int    `json:"draws"`
		Losses        int    `json:"losses"`
		MatchesPlayed int    `json:"matches_played"`
	}
	type liveRow struct {
		standingsRow
		Suspended bool `json:"suspended,omitempty"`
	}
	type standingsAnswer struct {
		RoundID     *string   `json:"round_id"`
		UpdatedAt   string    `json:"updated_at"`
		Standings   []liveRow `json:"standings"`
		LeagueState string    `json:"league_state"`
		Final       bool      `json:"final"`
	}
	type matchInfo struct {
		MatchID   string    `json:"match_id"`
		RoundID   string    `json:"round_id"`
		Players   [2]string `json:"players"`
		RefereeID *string   `json:"referee_id"`
		Status    string    `json:"status"`
	}
	seed := int64(-7)
	meta := protocol.GameMetadata{
		MatchSeed: &seed, GameParams: map[string]any{"rounds": 5},
		Moves: []protocol.MoveRecord{
			{Step: 1, Player: "p1", Move: move, Outcome: protocol.MoveSuccess, ElapsedMS: 12, Metadata: json.RawMessage(`{"llm":{"tokens_in":3}}`)},
			{Step: 2, Player: "p2", Move: move, Outcome: protocol.MoveForced},
		},
		FinalState: finalJSON, Termination: protocol.TerminationTimeout, Loser: "p2",
		Violations: []protocol.MatchViolation{{Step: 2, Player: "p2", Kind: protocol.ViolationTimeout, Action: protocol.ActionForcedMove, Detail: "deadline exceeded"}},
		Steps:      2, TotalMoves: 2, RefereeID: "ref1", StartedAt: "2026-01-02T03:04:05.000000Z", FinishedAt: "2026-01-02T03:04:06.000000Z",
	}
	oldMeta := refereeMetadata{
		MatchSeed: seed, GameParams: map[string]any{"rounds": 5},
		Moves: []moveRecord{
			{Step: 1, Player: "p1", Move: move, Outcome: "SUCCESS", ElapsedMS: 12, Metadata: json.RawMessage(`{"llm":{"tokens_in":3}}`)},
			{Step: 2, Player: "p2", Move: move, Outcome: "FORCED"},
		},
		FinalState: final, Termination: "timeout", Loser: "p2",
		Violations: []violation{{Step: 2, Player: "p2", Kind: "timeout", Action: "forced_move", Detail: "deadline exceeded"}},
		Steps:      2, TotalMoves: 2, Referee: "ref1", StartedAt: "2026-01-02T03:04:05.000000Z", FinishedAt: "2026-01-02T03:04:06.000000Z",
	}
	metaJSON, _ := json.Marshal(meta)
	noShow := protocol.GameMetadata{MatchSeed: &seed, GameParams: map[string]any{}, Moves: []protocol.MoveRecord{}, FinalState: finalJSON,
		Termination: protocol.TerminationDoubleNoShow, Violations: []protocol.MatchViolation{}}
	oldNoShow := refereeMetadata{MatchSeed: seed, GameParams: map[string]any{}, Moves: []moveRecord{}, FinalState: final,
		Termination: "double_no_show", Violations: []violation{}}

	tests := []struct {
		name     string
		got, old any
	}{
		{"REGISTER_REFEREE_REQUEST",
			protocol.RefereeRegistration{RefereeID: "ref1", EndpointURL: "http://127.0.0.1:1/mcp", GameTypes: []string{"tic_tac_toe"}, MaxConcurrentMatches: 2, Features: []string{"heartbeats"}},
			map[string]any{"referee_id": "ref1", "endpoint_url": "http://127.0.0.1:1/mcp", "game_types": []string{"tic_tac_toe"}, "max_concurrent_matches": 2, "features": []string{"heartbeats"}}},
		{"REGISTER_PLAYER_REQUEST",
			protocol.PlayerRegistration{PlayerID: "p1", EndpointURL: "http://127.0.0.1:2/mcp", DisplayName: "P", Features: []string{"match_credentials"}},
			json.RawMessage(`{"player_id":"p1","endpoint_url":"http://127.0.0.1:2/mcp","display_name":"P","features":["match_credentials"]}`)},
		{"REGISTER_REFEREE_RESPONSE",
			protocol.RegistrationAnswer{Status: protocol.StatusRegistered, AuthToken: "tok", LeagueID: "l1", RefereeID: "ref1", Features: []string{"heartbeats"}, HeartbeatIntervalMS: 1000, LeaseMS: 3000},
			json.RawMessage(`{"status":"registered","auth_token":"tok","league_id":"l1","referee_id":"ref1","features":["heartbeats"],"heartbeat_interval_ms":1000,"lease_ms":3000}`)},
		{"AGENT_READY_REQUEST", protocol.AgentReady{}, map[string]any{}},
		{"AGENT_READY_RESPONSE",
			protocol.AgentReadyAnswer{Status: protocol.StatusAcknowledged, AgentID: "p1", AgentType: "player", AgentState: "ACTIVE"},
			map[string]string{"status": "acknowledged", "agent_id": "p1", "agent_type": "player", "agent_state": "ACTIVE"}},
		{"MATCH_ASSIGNMENT",
			protocol.Assignment{MatchID: "m1", RoundID: "r1", GameType: "tic_tac_toe", Players: []string{"p1", "p2"},
				PlayerEndpoints: map[string]string{"p1": "u1", "p2": "u2"}, MatchSeed: 9, MatchCredentials: map[string]string{"p1": "c1", "p2": "c2"},
				GameParams: map[string]any{}, Scoring: &protocol.Scoring{Win: 3, Draw: 1, Loss: 0}, Deadlines: &protocol.Deadlines{JoinAckMS: 5000, MoveMS: 30000},
				IllegalMovePolicy: "loss", Penalties: &protocol.Penalties{MoveWarnings: 1, ForcedMoves: 2}},
			assignmentPayload{MatchID: "m1", RoundID: "r1", GameType: "tic_tac_toe", Players: [2]string{"p1", "p2"},
				PlayerEndpoints: map[string]string{"p1": "u1", "p2": "u2"}, MatchSeed: 9, MatchCredentials: map[string]string{"p1": "c1", "p2": "c2"},
				GameParams: map[string]any{}, Scoring: map[string]int{"win": 3, "draw": 1, "loss": 0}, Deadlines: map[string]int{"join_ack_ms": 5000, "move_ms": 30000},
				IllegalMovePolicy: "loss", Penalties: map[string]int{"move_warnings": 1, "forced_moves": 2}}},
		{"MATCH_ASSIGNMENT_ACK", protocol.MatchAck{Status: protocol.StatusAcknowledged, MatchID: "m1"}, map[string]string{"status": "acknowledged", "match_id": "m1"}},
		{"MATCH_RESULT_REPORT",
			protocol.ResultReport{GameType: "tic_tac_toe", Players: []string{"p1", "p2"}, Outcome: map[string]string{"p1": "win", "p2": "loss"},
				Points: map[string]int{"p1": 3, "p2": 0}, GameMetadata: metaJSON, MatchID: "m1", RoundID: "r1"},
			map[string]any{"game_type": "tic_tac_toe", "players": []string{"p1", "p2"}, "outcome": map[string]string{"p1": "win", "p2": "loss"},
				"points": map[string]int{"p1": 3, "p2": 0}, "game_metadata": oldMeta, "match_id": "m1", "round_id": "r1"}},
		{"game_metadata", meta, oldMeta},
		{"game_metadata of a double no-show", noShow, oldNoShow},
		{"game_metadata of a forfeit", protocol.ForfeitMetadata{Forfeit: protocol.ForfeitSuspended, Suspended: []string{"p2"}},
			map[string]any{"forfeit": "suspended", "suspended": []string{"p2"}}},
		{"GAME_INVITATION",
			protocol.Invitation{MatchID: "m1", GameType: "tic_tac_toe", Opponents: []string{"p2"}, OpponentID: "p2", YourIndex: 0,
				Players: []string{"p1", "p2"}, GameParams: map[string]any{"n": 3}, Deadlines: &protocol.Deadlines{JoinAckMS: 5000, MoveMS: 30000}},
			map[string]any{"match_id": "m1", "game_type": "tic_tac_toe", "opponents": []string{"p2"}, "opponent_id": "p2", "your_index": 0,
				"players": []string{"p1", "p2"}, "game_params": map[string]any{"n": 3}, "deadlines": map[string]int64{"join_ack_ms": 5000, "move_ms": 30000}}},
		{"GAME_INVITATION (without game_params)",
			protocol.Invitation{MatchID: "m1", GameType: "tic_tac_toe", Opponents: []string{"p2"}, OpponentID: "p2", YourIndex: 1, Players: []string{"p2", "p1"},
				Deadlines: &protocol.Deadlines{JoinAckMS: 5000, MoveMS: 30000}},
			map[string]any{"match_id": "m1", "game_type": "tic_tac_toe", "opponents": []string{"p2"}, "opponent_id": "p2", "your_index": 1,
				"players": []string{"p2", "p1"}, "deadlines": map[string]int64{"join_ack_ms": 5000, "move_ms": 30000}}},
		{"GAME_INVITATION (empty game_params)",
			protocol.Invitation{MatchID: "m1", GameType: "g", Opponents: []string{"p2"}, GameParams: map[string]any{}},
			json.RawMessage(`{"game_params":{},"game_type":"g","match_id":"m1","opponents":["p2"],"your_index":0}`)},
		{"GAME_JOIN_ACK", protocol.JoinAck{Status: protocol.StatusDeclined, MatchID: "m1", Reason: "the match is over"},
			json.RawMessage(`{"status":"declined","match_id":"m1","reason":"the match is over"}`)},
		{"REQUEST_MOVE (first)",
			protocol.MoveRequest{StepNumber: 1, StepContext: viewJSON, ContextHash: "ab", DeadlineMS: 30000, Deadline: "2026-01-02T03:04:05.000000Z"},
			map[string]any{"step_number": 1, "step_context": view, "context_hash": "ab", "deadline_ms": int64(30000), "deadline": "2026-01-02T03:04:05.000000Z"}},
		{"REQUEST_MOVE (after a success)",
			protocol.MoveRequest{StepNumber: 3, StepContext: viewJSON, ContextHash: "ab", DeadlineMS: 30000, Deadline: "d",
				LastResult: &protocol.LastResult{StepNumber: intp(2), Intent: protocol.IntentMove, Outcome: protocol.MoveSuccess, Move: move}},
			map[string]any{"step_number": 3, "step_context": view, "context_hash": "ab", "deadline_ms": int64(30000), "deadline": "d",
				"last_result": map[string]any{"step_number": 2, "intent": "MOVE", "outcome": "SUCCESS", "move": move}}},
		{"REQUEST_MOVE (a warning)",
			protocol.MoveRequest{StepNumber: 3, StepContext: viewJSON, ContextHash: "ab", DeadlineMS: 30000, Deadline: "d", Warning: "w",
				LastResult: &protocol.LastResult{StepNumber: intp(3), Intent: protocol.IntentMove, Outcome: protocol.MoveTimeout, Reason: "w"}},
			map[string]any{"step_number": 3, "step_context": view, "context_hash": "ab", "deadline_ms": int64(30000), "deadline": "d", "warning": "w",
				"last_result": map[string]any{"step_number": 3, "intent": "MOVE", "outcome": "TIMEOUT", "reason": "w"}}},
		{"REQUEST_MOVE (a forced move)",
			protocol.MoveRequest{StepNumber: 4, StepContext: viewJSON, ContextHash: "ab", DeadlineMS: 30000, Deadline: "d",
				LastResult: &protocol.LastResult{StepNumber: intp(3), Intent: protocol.IntentMove, Outcome: protocol.MoveForced, Reason: "r", Move: move}},
			map[string]any{"step_number": 4, "step_context": view, "context_hash": "ab", "deadline_ms": int64(30000), "deadline": "d",
				"last_result": map[string]any{"step_number": 3, "intent": "MOVE", "outcome": "FORCED", "reason": "r", "move": move}}},
		{"MOVE_RESPONSE",
			protocol.MoveAnswer{MovePayload: move, StepNumber: intp(0), ContextHash: "ab", Metadata: json.RawMessage(`{"why":"x"}`)},
			json.RawMessage(`{"move_payload":{"row":1,"col":2},"step_number":0,"context_hash":"ab","metadata":{"why":"x"}}`)},
		{"MOVE_RESPONSE (bare)", protocol.MoveAnswer{MovePayload: move, StepNumber: intp(5)},
			json.RawMessage(`{"move_payload":{"row":1,"col":2},"step_number":5}`)},
		{"GAME_OVER",
			protocol.GameResult{Outcome: protocol.Win, FinalState: finalJSON, Outcomes: map[string]string{"p1": "win", "p2": "loss"},
				Points: map[string]int{"p1": 3, "p2": 0}, Reason: string(protocol.TerminationNormal), Winner: strp("p1")},
			map[string]any{"outcome": "win", "final_state": final, "outcomes": map[string]string{"p1": "win", "p2": "loss"},
				"points": map[string]int{"p1": 3, "p2": 0}, "reason": "normal", "winner": "p1"}},
		{"GAME_OVER (a draw)",
			protocol.GameResult{Outcome: protocol.Draw, FinalState: finalJSON, Outcomes: map[string]string{"p1": "draw", "p2": "draw"},
				Points: map[string]int{"p1": 1, "p2": 1}, Reason: "normal"},
			map[string]any{"outcome": "draw", "final_state": final, "outcomes": map[string]string{"p1": "draw", "p2": "draw"},
				"points": map[string]int{"p1": 1, "p2": 1}, "reason": "normal", "winner": nil}},
		{"GAME_OVER_ACK", protocol.Ack{Status: protocol.StatusAcknowledged}, map[string]string{"status": "acknowledged"}},
		{"MOVE_EVENT",
			protocol.MoveNotice{StepNumber: 2, PlayerID: "p1", Move: move, Outcome: protocol.MoveSuccess, State: finalJSON},
			map[string]any{"step_number": 2, "player_id": "p1", "move": move, "outcome": "SUCCESS", "state": final}},
		{"MOVE_EVENT (a batch)",
			protocol.MoveBatch{Moves: []protocol.MoveNotice{
				{StepNumber: 2, PlayerID: "p1", Move: move, Outcome: protocol.MoveSuccess, State: finalJSON},
				{StepNumber: 3, PlayerID: "p2", Move: move, Outcome: protocol.MoveForced}}},
			map[string]any{"moves": []map[string]any{
				{"step_number": 2, "player_id": "p1", "move": move, "outcome": "SUCCESS", "state": final},
				{"step_number": 3, "player_id": "p2", "move": move, "outcome": "FORCED"}}}},
		{"HEARTBEAT_REQUEST", protocol.Heartbeat{ActiveMatches: []string{"m1"}, MatchProgress: progress},
			map[string]any{"active_matches": []string{"m1"}, "match_progress": progress}},
		{"HEARTBEAT_REQUEST (no match held)", protocol.Heartbeat{ActiveMatches: []string{}, MatchProgress: []protocol.MatchProgress{}},
			map[string]any{"active_matches": []string{}, "match_progress": []protocol.MatchProgress{}}},
		{"HEARTBEAT_REQUEST (without match_progress)", protocol.Heartbeat{ActiveMatches: []string{}},
			map[string]any{"active_matches": []string{}}},
		{"HEARTBEAT_RESPONSE", protocol.HeartbeatAnswer{Status: protocol.StatusAcknowledged, LeaseMS: 3000},
			map[string]any{"status": "acknowledged", "lease_ms": 3000}},
		{"MATCH_CANCELLED", protocol.Cancellation{MatchID: "m1", Reason: "lost"}, map[string]string{"match_id": "m1", "reason": "lost"}},
		{"RESULT_REMINDER", protocol.Reminder{MatchID: "m1", Attempt: 2, Reason: "late"},
			map[string]any{"match_id": "m1", "attempt": 2, "reason": "late"}},
		{"RESULT_REMINDER_ACK", protocol.ReminderAck{Status: protocol.StatusAcknowledged, MatchID: "m1", Phase: protocol.PhaseReporting, Resent: true},
			map[string]any{"status": "acknowledged", "match_id": "m1", "phase": "reporting", "resent": true}},
		{"LEAGUE_SHUTDOWN", protocol.Shutdown{Reason: "done", LeagueID: "l1"}, map[string]string{"reason": "done", "league_id": "l1"}},
		{"QUERY_MATCH", protocol.MatchQuery{MatchID: "m1"}, map[string]string{"match_id": "m1"}},
		{"MATCH_INFO", protocol.MatchDetails{MatchID: "m1", RoundID: "r1", Players: []string{"p1", "p2"}, Status: protocol.MatchStatePending},
			matchInfo{MatchID: "m1", RoundID: "r1", Players: [2]string{"p1", "p2"}, Status: "PENDING"}},
		{"QUERY_STANDINGS", protocol.StandingsQuery{}, map[string]any{}},
		{"STANDINGS_RESPONSE",
			protocol.Standings{RoundID: strp("r1"), UpdatedAt: "u", LeagueState: "ACTIVE", Standings: []protocol.StandingsRow{
				{Rank: 1, PlayerID: "p1", Points: 3, Wins: 1, MatchesPlayed: 1},
				{Rank: 2, PlayerID: "p2", Losses: 1, MatchesPlayed: 1, Suspended: true}}},
			standingsAnswer{RoundID: strp("r1"), UpdatedAt: "u", LeagueState: "ACTIVE", Standings: []liveRow{
				{standingsRow: standingsRow{Rank: 1, PlayerID: "p1", Points: 3, Wins: 1, MatchesPlayed: 1}},
				{standingsRow: standingsRow{Rank: 2, PlayerID: "p2", Losses: 1, MatchesPlayed: 1}, Suspended: true}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.got)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(tc.old)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// Every captured message of the Python implementation decodes into its typed payload,
// as Message.Decode reads it.
func TestPayloadsReadCaptures(t *testing.T) {
	targets := map[string]func() any{
		protocol.RegisterRefereeRequest:  func() any { return new(protocol.RefereeRegistration) },
		protocol.RegisterPlayerRequest:   func() any { return new(protocol.PlayerRegistration) },
		protocol.RegisterRefereeResponse: func() any { return new(protocol.RegistrationAnswer) },
		protocol.RegisterPlayerResponse:  func() any { return new(protocol.RegistrationAnswer) },
		protocol.AgentReadyRequest:       func() any { return new(protocol.AgentReady) },
		protocol.AgentReadyResponse:      func() any { return new(protocol.AgentReadyAnswer) },
		protocol.MatchAssignment:         func() any { return new(protocol.Assignment) },
		protocol.MatchAssignmentAck:      func() any { return new(protocol.MatchAck) },
		protocol.MatchResultReport:       func() any { return new(protocol.ResultReport) },
		protocol.MatchResultAck:          func() any { return new(protocol.MatchAck) },
		protocol.GameInvitation:          func() any { return new(protocol.Invitation) },
		protocol.GameJoinAck:             func() any { return new(protocol.JoinAck) },
		protocol.RequestMove:             func() any { return new(protocol.MoveRequest) },
		protocol.MoveResponse:            func() any { return new(protocol.MoveAnswer) },
		protocol.GameOver:                func() any { return new(protocol.GameResult) },
		protocol.GameOverAck:             func() any { return new(protocol.Ack) },
		protocol.QueryStandings:          func() any { return new(protocol.StandingsQuery) },
		protocol.StandingsResponse:       func() any { return new(protocol.Standings) },
	}
	files, err := filepath.Glob(filepath.Join("testdata", "interop", "*.wire.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Request struct {
				Params protocol.Message `json:"params"`
			} `json:"request"`
			Response struct {
				Result *protocol.Message `json:"result"`
			} `json:"response"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		msgs := []*protocol.Message{&c.Request.Params}
		if c.Response.Result != nil && !strings.HasPrefix(filepath.Base(f), "game_over") {
			msgs = append(msgs, c.Response.Result)
		}
		for _, m := range msgs {
			newTarget, ok := targets[m.Envelope.MessageType]
			if !ok {
				continue
			}
			seen++
			if err := m.Decode(newTarget()); err != nil {
				t.Errorf("%s: %s: %v", filepath.Base(f), m.Envelope.MessageType, err)
			}
		}
	}
	if seen < len(files) {
		t.Errorf("decoded %d captured payloads from %d files", seen, len(files))
	}
}

// A MATCH_ASSIGNMENT of a League Manager written from the seeds alone carries no
// scoring, deadlines or penalties: they stay nil, so the referee's own defaults apply.
func TestAssignmentWithoutExtras(t *testing.T) {
	var a protocol.Assignment
	if err := json.Unmarshal([]byte(`{"match_id":"m","round_id":"r","game_type":"tic_tac_toe","players":["a","b"],"player_endpoints":{"a":"x","b":"y"}}`), &a); err != nil {
		t.Fatal(err)
	}
	if a.Scoring != nil || a.Deadlines != nil || a.Penalties != nil || a.MatchCredentials != nil {
		t.Errorf("got %+v, want no scoring, deadlines, penalties or credentials", a)
	}
}

func TestConsistent(t *testing.T) {
	all := []protocol.Outcome{protocol.Win, protocol.Draw, protocol.Loss, "", "WIN"}
	want := map[[2]protocol.Outcome]bool{
		{protocol.Win, protocol.Loss}: true, {protocol.Loss, protocol.Win}: true,
		{protocol.Draw, protocol.Draw}: true, {protocol.Loss, protocol.Loss}: true,
	}
	for _, a := range all {
		for _, b := range all {
			if got := protocol.Consistent(a, b); got != want[[2]protocol.Outcome{a, b}] {
				t.Errorf("Consistent(%q, %q) = %v", a, b, got)
			}
		}
	}
}

func TestScoringPoints(t *testing.T) {
	s := protocol.Scoring{Win: 3, Draw: 1, Loss: 0}
	for o, want := range map[protocol.Outcome]int{protocol.Win: 3, protocol.Draw: 1, protocol.Loss: 0, "": 0, "won": 0} {
		if got := s.Points(o); got != want {
			t.Errorf("Points(%q) = %d, want %d", o, got, want)
		}
	}
	for _, o := range []protocol.Outcome{protocol.Win, protocol.Draw, protocol.Loss} {
		if !o.Valid() {
			t.Errorf("%s not valid", o)
		}
	}
	if protocol.Outcome("WIN").Valid() {
		t.Error("WIN is valid")
	}
}
