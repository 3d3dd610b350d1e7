package player

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// Fault modes of Config.Fault: a player that misbehaves on purpose, for fault-injection
// tests of a league and for agent developers who test their referees.
const (
	// FaultSlow ("slow:DURATION", e.g. slow:800ms) answers every REQUEST_MOVE only after
	// DURATION, so a referee's move deadline passes first.
	FaultSlow = "slow"
	// FaultGarbage answers every REQUEST_MOVE with an HTTP 200 body that is not JSON-RPC.
	FaultGarbage = "garbage"
	// FaultIllegal answers every REQUEST_MOVE with a move that breaks the rules: a
	// well-formed one where the game has one (an occupied or off-board cell, a choice
	// outside the options), a malformed one otherwise.
	FaultIllegal = "illegal"
	// FaultCrashAfter ("crash-after:N") exits the process with CrashExitCode right after
	// receiving its Nth REQUEST_MOVE, without answering it.
	FaultCrashAfter = "crash-after"
)

// CrashExitCode is the exit code of a player in fault mode crash-after.
const CrashExitCode = 3

// FaultModes describes the accepted values of Config.Fault, for usage texts.
const FaultModes = "slow:DURATION, garbage, illegal, crash-after:N"

// garbageBody is what a player in fault mode garbage answers to REQUEST_MOVE.
const garbageBody = "garbage: this player answers moves with noise, not JSON-RPC\n"

// fault is a parsed Config.Fault; the zero value is no fault.
type fault struct {
	mode  string
	delay time.Duration // slow
	after int           // crash-after
}

// faultInjector makes the player misbehave as its fault says. It owns the count of
// REQUEST_MOVE received, for crash-after, which is atomic and needs no lock.
type faultInjector struct {
	fault
	log zerolog.Logger
	// exit ends the process in fault mode crash-after; os.Exit outside tests.
	exit func(code int)
	// moveRequests counts REQUEST_MOVE received, for fault mode crash-after.
	moveRequests atomic.Int64
}

// parseFault reads a Config.Fault value; "" is no fault.
func parseFault(s string) (fault, error) {
	mode, arg, hasArg := strings.Cut(s, ":")
	switch mode {
	case "":
		if s == "" {
			return fault{}, nil
		}
	case FaultGarbage, FaultIllegal:
		if !hasArg {
			return fault{mode: mode}, nil
		}
		return fault{}, fmt.Errorf("fault %q takes no argument", mode)
	case FaultSlow:
		d, err := time.ParseDuration(arg)
		if err != nil || d <= 0 {
			return fault{}, fmt.Errorf("fault %q: want slow:DURATION with a positive duration, e.g. slow:800ms", s)
		}
		return fault{mode: mode, delay: d}, nil
	case FaultCrashAfter:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return fault{}, fmt.Errorf("fault %q: want crash-after:N with N >= 1, e.g. crash-after:3", s)
		}
		return fault{mode: mode, after: n}, nil
	}
	return fault{}, fmt.Errorf("unknown fault %q (have %s)", s, FaultModes)
}

// crashed reports whether this REQUEST_MOVE must go unanswered: the crash-after count is
// reached. The Nth request exits the process; in tests, where exit returns, it and every
// later request behave like a dead process and never answer.
func (f *faultInjector) crashed(ctx context.Context, matchID string) bool {
	if f.mode != FaultCrashAfter {
		return false
	}
	n := f.moveRequests.Add(1)
	if n == int64(f.after) {
		zerolog.Ctx(ctx).Error().Str("match_id", matchID).Int("exit_code", CrashExitCode).
			Msgf("fault crash-after:%d: exiting after REQUEST_MOVE %d without answering", f.after, n)
		f.exit(CrashExitCode)
	}
	return n >= int64(f.after)
}

// unanswered holds a request that gets no answer until its caller gives up or the player
// stops; the error it returns reaches nobody.
func (p *Player) unanswered(ctx context.Context) error {
	select {
	case <-ctx.Done():
	case <-p.stopping:
	}
	return protocol.Errorf(protocol.ReasonShuttingDown, "player %s is gone", p.cfg.ID)
}

// slowDown delays a move answer until the fault's delay has passed since start. It gives
// up when the caller does (nobody waits for the answer) or the player stops.
func (p *Player) slowDown(ctx context.Context, start time.Time) error {
	if p.fault.mode != FaultSlow || p.pause(ctx, p.fault.delay-time.Since(start)) == nil {
		return nil
	}
	return protocol.Errorf(protocol.ReasonShuttingDown, "fault slow: the move was not answered within %v", p.fault.delay)
}

// illegalMove is a move that breaks the rules of g in the position of stepContext: in
// tic_tac_toe the first occupied cell (a cell off the board on an empty one); in any other
// game the first legal move with its fields changed, keeping their types (an integer
// becomes -1, a string has its halves swapped: "rock" becomes "ckro", "e2e4" becomes
// "e4e2"), so the move is well-formed but not among the legal ones. A malformed move
// stands in when no such move can be made.
func illegalMove(g game.Game, stepContext json.RawMessage) json.RawMessage {
	malformed := json.RawMessage(`"not a move"`)
	if g.Type() == game.TypeTicTacToe {
		if ctx, err := game.ParseTicTacToeContext(stepContext); err == nil {
			for r, row := range ctx.Board {
				for c, mark := range row {
					if mark != "" {
						return json.RawMessage(fmt.Sprintf(`{"row":%d,"col":%d}`, r, c))
					}
				}
			}
		}
		return json.RawMessage(`{"row":3,"col":3}`)
	}
	legal, err := g.LegalMoves(stepContext)
	if err != nil || len(legal) == 0 {
		return malformed
	}
	var fields map[string]any
	dec := json.NewDecoder(bytes.NewReader(legal[0]))
	dec.UseNumber()
	if dec.Decode(&fields) != nil {
		return malformed
	}
	for k, v := range fields {
		switch v := v.(type) {
		case json.Number:
			fields[k] = -1
		case string:
			fields[k] = v[len(v)/2:] + v[:len(v)/2]
		}
	}
	out, err := json.Marshal(fields)
	if err != nil || slices.ContainsFunc(legal, func(m json.RawMessage) bool { return bytes.Equal(m, out) }) {
		return malformed
	}
	return out
}

// garbageMoves wraps the JSON-RPC endpoint rpc for fault mode garbage: a REQUEST_MOVE is
// still handled (validated, logged, counted), but its answer is replaced by a body that is
// not JSON-RPC. Every other request is served as usual.
func (f *faultInjector) garbageMoves(rpc *protocol.Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			rpc.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, protocol.MaxBodyBytes))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, "request body larger than 1 MiB", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "cannot read request body", http.StatusBadRequest)
			return
		}
		var peek struct {
			Params struct {
				Envelope struct {
					MessageType string `json:"message_type"`
				} `json:"envelope"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &peek) != nil || peek.Params.Envelope.MessageType != protocol.RequestMove {
			r.Body = io.NopCloser(bytes.NewReader(body))
			rpc.ServeHTTP(w, r)
			return
		}
		_ = rpc.Process(r.Context(), body)
		f.log.Warn().Msg("fault garbage: answering REQUEST_MOVE with a body that is not JSON-RPC")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, garbageBody)
	})
}
