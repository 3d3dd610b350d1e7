package mcpgw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/protocol"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// instructions tell a client how the tools fit together.
const instructions = `This server seats you as a player in an Agent League: a round-robin league of two-player games (tic-tac-toe, connect four, chess, rock-paper-scissors, even-odd) run by referees.
1. Call join_league once with your player_id.
2. Loop: call wait_for_turn. When its status is your_turn, read the board and legal_moves, then call make_move with one of legal_moves before seconds_left runs out. If make_move says the move is illegal, pick another legal move and call it again. When the status is game_over, a match ended; keep looping.
3. Stop when the status is league_over: it carries the final table. When the status is no_more_matches, all your matches are over while others still play: stop, or keep calling wait_for_turn for league_over.
The rules of each game are the resources rules://<game_type>.`

// Statuses of wait_for_turn.
const (
	StatusYourTurn   = "your_turn"
	StatusGameOver   = "game_over"
	StatusLeagueOver = "league_over"
	StatusLeft       = "left"
	StatusWaiting    = "waiting"
	// StatusNoMoreMatches: the seat has no match left, but the league still runs.
	StatusNoMoreMatches = "no_more_matches"
)

// JoinInput is join_league's input.
type JoinInput struct {
	PlayerID    string `json:"player_id" jsonschema:"your player id in the league: 1 to 64 letters, digits, _ or -, starting with a letter or digit, e.g. claude-1"`
	DisplayName string `json:"display_name,omitempty" jsonschema:"the name the league shows for you (optional)"`
}

// JoinOutput is join_league's output.
type JoinOutput struct {
	PlayerID string `json:"player_id" jsonschema:"your player id"`
	LeagueID string `json:"league_id" jsonschema:"the league you joined"`
	Message  string `json:"message" jsonschema:"what to do next"`
}

// WaitInput is wait_for_turn's input.
type WaitInput struct {
	TimeoutS int `json:"timeout_s,omitempty" jsonschema:"how long to wait in seconds, 1 to 600 (default 30); on timeout the status is waiting and you call again"`
}

// WaitResult is wait_for_turn's output.
type WaitResult struct {
	Status   string    `json:"status" jsonschema:"your_turn: call make_move; game_over: a match ended; league_over: stop, the final table is in final; no_more_matches: your matches are all over but the league still runs, you may stop; left: this seat no longer plays; waiting: nothing yet, call again"`
	Message  string    `json:"message" jsonschema:"what happened and what to do next"`
	Turn     *TurnInfo `json:"turn,omitempty" jsonschema:"the move asked of you, when the status is your_turn"`
	GameOver *GameOver `json:"game_over,omitempty" jsonschema:"how the match ended, when the status is game_over"`
	// Final is the final table, when the league completed (league_over).
	Final *FinalTable `json:"final,omitempty" jsonschema:"the final standings, when the status is league_over because the league completed"`
	// MatchesLeft is 0 with league_over and no_more_matches.
	MatchesLeft *int `json:"matches_left,omitempty" jsonschema:"how many of your matches are left, when known: 0 with league_over and no_more_matches"`
}

// FinalTable is the final standings of a completed league.
type FinalTable struct {
	LeagueID    string                  `json:"league_id" jsonschema:"the league"`
	CompletedAt string                  `json:"completed_at,omitempty" jsonschema:"when the last result came in (RFC 3339, UTC)"`
	Rank        int                     `json:"rank,omitempty" jsonschema:"your final rank"`
	Points      int                     `json:"points,omitempty" jsonschema:"your final points"`
	Standings   []protocol.StandingsRow `json:"standings" jsonschema:"one row per player, best first"`
}

// TurnInfo is a move the referee asks of the seat.
type TurnInfo struct {
	MatchID     string         `json:"match_id" jsonschema:"the match"`
	GameType    string         `json:"game_type" jsonschema:"the game, e.g. tic_tac_toe; its rules are the resource rules://<game_type>"`
	StepNumber  int            `json:"step_number" jsonschema:"the step of the match this move is for"`
	Opponent    string         `json:"opponent,omitempty" jsonschema:"the other player's id"`
	Board       string         `json:"board" jsonschema:"the position as text, whose turn it is and how to write a move"`
	LegalMoves  []string       `json:"legal_moves" jsonschema:"every legal move, written as make_move takes it"`
	State       map[string]any `json:"state" jsonschema:"the position as the referee sent it (the game's step_context for you)"`
	Deadline    string         `json:"deadline,omitempty" jsonschema:"when your time for this move is up (RFC 3339, UTC)"`
	SecondsLeft float64        `json:"seconds_left,omitempty" jsonschema:"seconds left to call make_move"`
	Warning     string         `json:"warning,omitempty" jsonschema:"why the referee asks again (e.g. your last answer came too late)"`
	LastResult  *LastResult    `json:"last_result,omitempty" jsonschema:"what became of your previous move"`
	// Clocks are REQUEST_MOVE's, when the match is played on a clock; the deadline is then
	// the clock's budget for this move (strategy.MoveBudget), not the whole clock.
	Clocks *protocol.Clocks `json:"clocks,omitempty" jsonschema:"both clocks when the match is played on a clock, in milliseconds: yours (you) and your opponent's, each the time left (remaining_ms), the time bank left (bank_ms) and the moves to the next time control (moves_to_go), and the increment added after each move (increment_ms); running out of time loses, and deadline is what this move should take of your clock"`
}

// LastResult is what the referee made of the seat's previous move.
type LastResult struct {
	StepNumber int    `json:"step_number,omitempty" jsonschema:"the step of that move"`
	Outcome    string `json:"outcome" jsonschema:"e.g. success, invalid, timeout, forced"`
	Reason     string `json:"reason,omitempty" jsonschema:"why, when it was not a success"`
	Move       any    `json:"move,omitempty" jsonschema:"the move played"`
}

// GameOver is how a match ended.
type GameOver struct {
	MatchID    string         `json:"match_id" jsonschema:"the match"`
	Outcome    string         `json:"outcome" jsonschema:"your result: win, draw or loss"`
	Reason     string         `json:"reason,omitempty" jsonschema:"how the match ended, e.g. normal or timeout"`
	Winner     string         `json:"winner,omitempty" jsonschema:"the winner's id; empty for a draw"`
	Points     map[string]int `json:"points,omitempty" jsonschema:"league points of each player"`
	FinalState map[string]any `json:"final_state,omitempty" jsonschema:"the final position"`
}

// MoveInput is make_move's input.
type MoveInput struct {
	Move    string `json:"move" jsonschema:"your move, written as one of turn.legal_moves (e.g. \"1,2\" in tic-tac-toe, \"3\" in connect four, \"e2e4\" in chess, \"rock\")"`
	MatchID string `json:"match_id,omitempty" jsonschema:"the match the move is for (optional: the oldest turn waiting by default)"`
}

// MoveResult is make_move's output.
type MoveResult struct {
	Status     string `json:"status" jsonschema:"sent: the referee has your move"`
	MatchID    string `json:"match_id" jsonschema:"the match"`
	StepNumber int    `json:"step_number" jsonschema:"the step answered"`
	Move       string `json:"move" jsonschema:"the move sent"`
	Message    string `json:"message" jsonschema:"what to do next"`
}

// MatchInput is get_match's input.
type MatchInput struct {
	MatchID string `json:"match_id" jsonschema:"one of your matches, e.g. from wait_for_turn"`
}

// MatchOutput is get_match's output.
type MatchOutput struct {
	MatchID   string    `json:"match_id" jsonschema:"the match"`
	RoundID   string    `json:"round_id,omitempty" jsonschema:"its round"`
	Players   []string  `json:"players" jsonschema:"its two players, the first mover first"`
	Status    string    `json:"status" jsonschema:"as the League Manager says, e.g. PENDING, ASSIGNED, IN_PROGRESS, COMPLETED"`
	RefereeID string    `json:"referee_id,omitempty" jsonschema:"the referee running it, while one does"`
	Result    *GameOver `json:"result,omitempty" jsonschema:"how it ended for you, once it did"`
}

// StandingsOutput is get_standings' output.
type StandingsOutput struct {
	LeagueState string                  `json:"league_state" jsonschema:"the league's state, e.g. RUNNING or COMPLETED"`
	Final       bool                    `json:"final" jsonschema:"true once the league is complete and the table will not change"`
	RoundID     string                  `json:"round_id,omitempty" jsonschema:"the round in progress"`
	UpdatedAt   string                  `json:"updated_at" jsonschema:"when the table last changed"`
	Standings   []protocol.StandingsRow `json:"standings" jsonschema:"one row per player, best first"`
}

// LeaveOutput is leave_league's output.
type LeaveOutput struct {
	PlayerID string `json:"player_id" jsonschema:"the seat left"`
	Message  string `json:"message" jsonschema:"what leaving means"`
}

// none is the input of tools that take no arguments.
type none struct{}

func (g *Gateway) addTools() {
	sdk.AddTool(g.server, &sdk.Tool{Name: "join_league", Title: "Join the league",
		Description: "Take a seat in the league as player player_id. The gateway registers you with the League Manager and answers the referees for you; " +
			"you then play through wait_for_turn and make_move. A session holds one seat."}, g.joinTool)
	sdk.AddTool(g.server, &sdk.Tool{Name: "wait_for_turn", Title: "Wait for your turn",
		Description: "Wait until a referee asks you for a move (status your_turn, with the board, legal_moves and seconds_left), a match ends (game_over), " +
			"the league completes (league_over, with the final table), or timeout_s passes (waiting: call again; no_more_matches when all your matches are over " +
			"while the league still runs). Sends progress notifications while it waits."}, g.waitTool)
	sdk.AddTool(g.server, &sdk.Tool{Name: "make_move", Title: "Make a move",
		Description: "Answer the move wait_for_turn showed you. The move must be one of turn.legal_moves; an illegal move is refused with the reason " +
			"and changes nothing, so you can try again before the deadline."}, g.moveTool)
	sdk.AddTool(g.server, &sdk.Tool{Name: "get_standings", Title: "League standings",
		Description: "The league table: points, wins, draws and losses of every player, best first.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, g.standingsTool)
	sdk.AddTool(g.server, &sdk.Tool{Name: "get_match", Title: "One of your matches",
		Description: "What the League Manager says of one of your matches (players, status, referee), and how it ended for you once it did.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, g.matchTool)
	sdk.AddTool(g.server, &sdk.Tool{Name: "leave_league", Title: "Leave the league",
		Description: "Give up your seat: the gateway stops answering the referees for you, so matches you still have are lost by the referees' rules. " +
			"The session may join again afterwards."}, g.leaveTool)
}

// errNoSeat is the answer to seat tools from a session without a seat.
var errNoSeat = errors.New("this session holds no seat: call join_league first")

func (g *Gateway) joinTool(ctx context.Context, req *sdk.CallToolRequest, in JoinInput) (*sdk.CallToolResult, JoinOutput, error) {
	s, err := g.join(ctx, req.Session, in.PlayerID, in.DisplayName)
	if err != nil {
		return nil, JoinOutput{}, fmt.Errorf("join_league: %w", err)
	}
	st := s.player.Status()
	return nil, JoinOutput{PlayerID: s.id, LeagueID: st.LeagueID,
		Message: "You have a seat. Call wait_for_turn until its status is league_over."}, nil
}

func (g *Gateway) waitTool(ctx context.Context, req *sdk.CallToolRequest, in WaitInput) (*sdk.CallToolResult, WaitResult, error) {
	if in.TimeoutS < 0 || in.TimeoutS > maxWaitSeconds {
		return nil, WaitResult{}, fmt.Errorf("wait_for_turn: timeout_s must be 1 to %d, got %d", maxWaitSeconds, in.TimeoutS)
	}
	if in.TimeoutS == 0 {
		in.TimeoutS = defaultWaitSeconds
	}
	s := g.seatOf(req.Session)
	if s == nil {
		return nil, WaitResult{}, fmt.Errorf("wait_for_turn: %w", errNoSeat)
	}
	token := req.Params.GetProgressToken()
	progress := func(waited time.Duration) {
		if token == nil {
			return
		}
		err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: waited.Seconds(),
			Message: fmt.Sprintf("waiting for a referee to ask %s for a move (%.0f s)", s.id, waited.Seconds())})
		if err != nil {
			s.log.Debug().Err(err).Msg("progress notification not sent")
		}
	}
	res, err := s.wait(ctx, time.Duration(in.TimeoutS)*time.Second, g.cfg.ProgressEvery, progress)
	if err != nil {
		return nil, WaitResult{}, fmt.Errorf("wait_for_turn: %w", err)
	}
	return nil, res, nil
}

func (g *Gateway) moveTool(_ context.Context, req *sdk.CallToolRequest, in MoveInput) (*sdk.CallToolResult, MoveResult, error) {
	s := g.seatOf(req.Session)
	if s == nil {
		return nil, MoveResult{}, fmt.Errorf("make_move: %w", errNoSeat)
	}
	if strings.TrimSpace(in.Move) == "" {
		return nil, MoveResult{}, errors.New("make_move: move is empty: write one of turn.legal_moves")
	}
	raw, err := json.Marshal(in.Move)
	if err != nil {
		return nil, MoveResult{}, fmt.Errorf("make_move: %w", err)
	}
	res, err := s.move(raw, in.MatchID)
	if err != nil {
		return nil, MoveResult{}, fmt.Errorf("make_move: %w", err)
	}
	return nil, res, nil
}

func (g *Gateway) standingsTool(ctx context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, StandingsOutput, error) {
	// The League Manager answers registered players only, and shows every player the
	// same table: a session without a seat reads it through another seat of the gateway.
	s := g.seatOf(req.Session)
	if s == nil {
		s = g.anySeat()
	}
	if s == nil {
		return nil, StandingsOutput{}, errors.New("get_standings: no seat on this gateway yet, and the League Manager shows standings to players only: call join_league first")
	}
	st, err := s.player.Standings(ctx)
	if err != nil {
		return nil, StandingsOutput{}, fmt.Errorf("get_standings: %s", leagueError(err))
	}
	out := StandingsOutput{LeagueState: st.LeagueState, Final: st.Final, UpdatedAt: st.UpdatedAt, Standings: st.Standings}
	if st.RoundID != nil {
		out.RoundID = *st.RoundID
	}
	if out.Standings == nil {
		out.Standings = []protocol.StandingsRow{}
	}
	return nil, out, nil
}

func (g *Gateway) matchTool(ctx context.Context, req *sdk.CallToolRequest, in MatchInput) (*sdk.CallToolResult, MatchOutput, error) {
	s := g.seatOf(req.Session)
	if s == nil {
		return nil, MatchOutput{}, fmt.Errorf("get_match: %w", errNoSeat)
	}
	if in.MatchID == "" {
		return nil, MatchOutput{}, errors.New("get_match: match_id is empty")
	}
	info, err := s.player.MatchInfo(ctx, in.MatchID)
	if err != nil {
		return nil, MatchOutput{}, fmt.Errorf("get_match: %s", leagueError(err))
	}
	out := MatchOutput{MatchID: info.MatchID, RoundID: info.RoundID, Players: info.Players, Status: info.Status}
	if info.RefereeID != nil {
		out.RefereeID = *info.RefereeID
	}
	if out.Players == nil {
		out.Players = []string{}
	}
	if r, ok := s.result(in.MatchID); ok {
		out.Result = &r
	}
	return nil, out, nil
}

func (g *Gateway) leaveTool(_ context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, LeaveOutput, error) {
	s := g.seatOf(req.Session)
	if s == nil {
		return nil, LeaveOutput{}, fmt.Errorf("leave_league: %w", errNoSeat)
	}
	g.drop(s)
	s.log.Info().Msg("seat left the league")
	return nil, LeaveOutput{PlayerID: s.id, Message: "You left the league: the referees' rules decide the matches you still had. You may join again."}, nil
}

// leagueError says why a call to the League Manager failed without local details: the
// League Manager's reason, or that it did not answer.
func leagueError(err error) string {
	var pe *protocol.Error
	switch {
	case errors.Is(err, player.ErrNotRegistered):
		return "the seat is not registered yet"
	case errors.As(err, &pe) && pe.Data != nil && pe.Data.Reason != "":
		return fmt.Sprintf("the League Manager refused: %s (%s)", pe.Data.Reason, pe.Message)
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "the League Manager did not answer"
}

// lastResultOf shows a REQUEST_MOVE's last_result to the client.
func lastResultOf(lr *protocol.LastResult) *LastResult {
	if lr == nil {
		return nil
	}
	out := &LastResult{Outcome: string(lr.Outcome), Reason: lr.Reason}
	if lr.StepNumber != nil {
		out.StepNumber = *lr.StepNumber
	}
	if len(lr.Move) > 0 {
		_ = json.Unmarshal(lr.Move, &out.Move) // shown as sent
	}
	return out
}

func turnMessage(t TurnInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your move in match %s (%s", t.MatchID, t.GameType)
	if t.Opponent != "" {
		fmt.Fprintf(&b, " against %s", t.Opponent)
	}
	b.WriteString(").")
	if t.Deadline != "" {
		fmt.Fprintf(&b, " You have %.0f seconds.", t.SecondsLeft)
	}
	if c := t.Clocks; c != nil {
		fmt.Fprintf(&b, " Clocks: yours %s, your opponent's %s", clockSeconds(c.You), clockSeconds(c.Opponent))
		if c.IncrementMS > 0 {
			fmt.Fprintf(&b, ", %.1f s added after each move", float64(c.IncrementMS)/1000)
		}
		b.WriteString("; out of time loses.")
	}
	if t.Warning != "" {
		b.WriteString(" Referee: " + t.Warning + ".")
	}
	b.WriteString(" Call make_move with one of: " + joinMoves(t.LegalMoves))
	return b.String()
}

// clockSeconds is one clock as turnMessage tells it: "58.2 s (bank 10.0 s)".
func clockSeconds(c protocol.Clock) string {
	s := fmt.Sprintf("%.1f s", float64(c.RemainingMS)/1000)
	if c.BankMS > 0 {
		s += fmt.Sprintf(" (bank %.1f s)", float64(c.BankMS)/1000)
	}
	return s
}

func overMessage(o GameOver) string {
	msg := fmt.Sprintf("Match %s is over: you %s", o.MatchID, map[string]string{"win": "won", "draw": "drew", "loss": "lost"}[o.Outcome])
	if o.Reason != "" {
		msg += " (" + o.Reason + ")"
	}
	return msg + ". Call wait_for_turn for your next match."
}

// joinMoves lists moves for a message, quoted.
func joinMoves(moves []string) string {
	q := make([]string, len(moves))
	for k, m := range moves {
		q[k] = fmt.Sprintf("%q", m)
	}
	return strings.Join(q, ", ")
}
