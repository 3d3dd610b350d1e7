package uci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/rs/zerolog"
)

// Timing of a move and of an engine's life.
const (
	// noDeadline is the time a move may take when the referee gives no deadline.
	noDeadline = 30 * time.Second
	// maxQuitGrace is the most an engine has to exit after quit before it is killed: the
	// handshake timeout, at most this. Stockfish on a loaded machine took over a second.
	maxQuitGrace = 5 * time.Second
	// maxStarts is the first engine of a match and the one restart it may have.
	maxStarts = 2
)

// errNoBestMove is an answer that names no move: the engine is still in step with us.
var errNoBestMove = errors.New("bestmove names no move")

// Strategy plays one chess match with an engine process of its own, started at the first
// move: matches run side by side and a crash costs one match only, for a start of a few
// tens of milliseconds. An engine that dies, or that has to be killed because it did not
// answer, is started again once per match; after that the match's moves fail. Close ends
// the engine (quit, then kill); the player calls it when the match ends.
//
// The move is the engine's bestmove as it gave it, {"uci": "e2e4"}, legal or not: the
// referee judges it, as it judges every player. A bestmove that is no move at all
// ("(none)", "0000", garbage), an engine that does not answer by the deadline even after
// stop, and an engine that cannot run are strategy.ErrNoMove: the referee's deadline rules
// judge those, never a stand-in move.
type Strategy struct {
	cfg     Config
	matchID string
	log     zerolog.Logger
	// closing is closed by Close, so that a move in progress gives up at once.
	closing   chan struct{}
	closeOnce sync.Once

	mu     sync.Mutex // held by a move and by Close
	eng    *engine    // nil before the first move, after a failure and after Close
	starts int
	closed bool
}

var (
	_ strategy.Explainer = (*Strategy)(nil)
	_ io.Closer          = (*Strategy)(nil)
)

// NewStrategy returns the strategy of one match of g, which must be chess. It starts no
// process: the engine starts with the first move.
func NewStrategy(cfg Config, g game.Game, matchID string, log zerolog.Logger) (*Strategy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("engine %s: %w", cfg.Path, err)
	}
	if g == nil || g.Type() != game.TypeChess {
		return nil, errors.New("strategy uci plays only chess")
	}
	return &Strategy{
		cfg: cfg.withDefaults(), matchID: matchID, closing: make(chan struct{}),
		log: log.With().Str("match_id", matchID).Str("engine", cfg.Path).Logger(),
	}, nil
}

// Probe starts the engine of cfg, checks its handshake and that it has every option of cfg,
// and quits it: a player whose engine cannot start refuses to register. It returns the
// engine's name. Errors name the engine's path.
func Probe(ctx context.Context, cfg Config) (string, error) {
	if err := cfg.Validate(); err != nil {
		return "", fmt.Errorf("engine %s: %w", cfg.Path, err)
	}
	cfg = cfg.withDefaults()
	// The two exchanges, uci and isready, have a timeout each.
	e, err := start(cfg, time.Now().Add(2*cfg.HandshakeTimeout), ctx.Done())
	if err != nil {
		return "", fmt.Errorf("engine %s: %w", cfg.Path, err)
	}
	if err := e.close(cfg.quitGrace()); err != nil {
		return "", err
	}
	return e.name, nil
}

// start runs an engine and makes it ready for a game: the uci handshake, the options,
// ucinewgame, isready. Each exchange has the handshake timeout, and all end by limit.
func start(cfg Config, limit time.Time, abort <-chan struct{}) (*engine, error) {
	e, err := startProcess(cfg.Path)
	if err != nil {
		return nil, err
	}
	if err := prepare(e, cfg, limit, abort); err != nil {
		_ = e.close(0)
		return nil, fmt.Errorf("%w%s", err, e.stderrExcerpt())
	}
	return e, nil
}

func prepare(e *engine, cfg Config, limit time.Time, abort <-chan struct{}) error {
	deadline := func() time.Time {
		return earliest(time.Now().Add(cfg.HandshakeTimeout), limit)
	}
	if err := e.handshake(deadline(), abort); err != nil {
		return err
	}
	for _, o := range cfg.Options {
		if !e.options[strings.ToLower(o.Name)] {
			return fmt.Errorf("the engine has no option %q", o.Name)
		}
		if err := e.send(o.command(), limit); err != nil {
			return err
		}
	}
	if err := e.send("ucinewgame", limit); err != nil {
		return err
	}
	return e.sync(deadline(), abort)
}

// Move implements strategy.Strategy.
func (s *Strategy) Move(req strategy.Request) (json.RawMessage, error) {
	move, _, err := s.MoveWithMetadata(req)
	return move, err
}

// MoveWithMetadata implements strategy.Explainer: the engine's move, with what it said of
// its search (depth, score, nodes, time, the start of its principal variation).
func (s *Strategy) MoveWithMetadata(req strategy.Request) (json.RawMessage, json.RawMessage, error) {
	begin := time.Now()
	ctx, err := game.ParseChessContext(req.Context)
	if err == nil {
		// The engine gets the moves rather than the FEN: they must lead to it.
		err = ctx.CheckMoves()
	}
	if err != nil {
		// Not the engine's failure: the player answers it as it answers any bad context.
		return nil, nil, err
	}
	log := s.log.With().Str("conversation_id", req.ConversationID).Int("step_number", req.StepNumber).Logger()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eng == nil && !s.closed && s.starts < maxStarts {
		// A cold engine starts within the referee's deadline, not within the move's budget
		// (a few hundred ms under a fast clock, less than Stockfish takes to start): the
		// start-up is the player's time, and the budget comes from what is left of it.
		if _, err := s.engine(begin.Add(startWithin(req)), log); err != nil {
			return nil, nil, fmt.Errorf("%w: engine %s: %w", strategy.ErrNoMove, s.cfg.Path, err)
		}
		req = spent(req, time.Since(begin))
	}
	// The engine gets stop at StopAt; a bestmove by AnswerBy is still played. Under a
	// clock it keeps time by the clocks, and StopAt is the clock's budget.
	b := strategy.MoveBudget(time.Now(), req, noDeadline)
	goLine := func(stopIn time.Duration) string {
		return s.cfg.goCommand(stopIn, req.Clocks, ctx.YourColor == "white")
	}
	note, best, err := s.search(position(ctx), goLine, b.StopAt, b.AnswerBy, log)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: engine %s: %w", strategy.ErrNoMove, s.cfg.Path, err)
	}
	note.ElapsedMS = time.Since(begin).Milliseconds()
	if !slices.Contains(ctx.LegalMoves, best) {
		log.Warn().Str("bestmove", best).Msg("the engine chose an illegal move; it is sent for the referee to judge")
	}
	return json.RawMessage(`{"uci":"` + best + `"}`), note.metadata(), nil
}

// startWithin is how long a cold engine may take to start for req: most of the referee's
// deadline (noDeadline without one), leaving a tenth of it for the search and the answer.
func startWithin(req strategy.Request) time.Duration {
	if req.DeadlineMS <= 0 {
		return noDeadline
	}
	return time.Duration(req.DeadlineMS) * time.Millisecond * 9 / 10
}

// spent is req after d of its time went elsewhere (starting the engine): a shorter
// deadline and, under a clock, less on the player's own clock.
func spent(req strategy.Request, d time.Duration) strategy.Request {
	if req.DeadlineMS > 0 {
		req.DeadlineMS = max(req.DeadlineMS-int(d.Milliseconds()), 1)
	}
	if req.Clocks != nil {
		c := *req.Clocks
		c.You.RemainingMS = max(c.You.RemainingMS-d.Milliseconds(), 0)
		req.Clocks = &c
	}
	return req
}

// search asks the engine for its move in pos, with the go line goLine gives for the time
// to stopAt, starting the engine if need be and once more if it dies on the way, as long
// as the match has a restart left and the move has time.
func (s *Strategy) search(pos string, goLine func(time.Duration) string, stopAt, answerBy time.Time, log zerolog.Logger) (moveNote, string, error) {
	for {
		if s.closed {
			return moveNote{}, "", errAborted
		}
		e, err := s.engine(stopAt, log)
		if err != nil {
			return moveNote{}, "", err
		}
		note, best, err := s.ask(e, pos, goLine, stopAt, answerBy)
		switch {
		case err == nil:
			note.Name, note.Restarts = e.name, s.starts-1
			return note, best, nil
		case errors.Is(err, errNoBestMove):
			return note, "", err
		case errors.Is(err, errDied):
			log.Warn().Err(err).Int("restarts_left", maxStarts-s.starts).Msg("engine died")
			s.drop()
		default:
			// Whatever the engine is doing, it is no longer in step with us: the next move
			// needs another engine.
			log.Warn().Err(err).Bool("stopped", note.Stopped).Msg("engine gave no move; ending it")
			s.drop()
			return note, "", err
		}
	}
}

// engine returns the match's engine, starting one when there is none and the match has a
// start left. Callers hold mu.
func (s *Strategy) engine(stopAt time.Time, log zerolog.Logger) (*engine, error) {
	if s.eng != nil {
		return s.eng, nil
	}
	if s.starts >= maxStarts {
		return nil, errors.New("no engine: it failed and its one restart in this match is spent")
	}
	s.starts++
	e, err := start(s.cfg, stopAt, s.closing)
	if err != nil {
		log.Warn().Err(err).Int("start", s.starts).Msg("engine did not start")
		return nil, err
	}
	ev := log.Info()
	if s.starts > 1 {
		ev = log.Warn()
	}
	ev.Str("name", e.name).Int("start", s.starts).Msg("engine started")
	s.eng = e
	return e, nil
}

// ask has e search pos: position, isready, go (goLine), then its info lines up to
// bestmove. At stopAt it sends stop and waits for bestmove until answerBy.
func (s *Strategy) ask(e *engine, pos string, goLine func(time.Duration) string, stopAt, answerBy time.Time) (moveNote, string, error) {
	var note moveNote
	if err := e.send(pos, stopAt); err != nil {
		return note, "", err
	}
	if err := e.sync(earliest(time.Now().Add(s.cfg.HandshakeTimeout), stopAt), s.closing); err != nil {
		return note, "", err
	}
	if err := e.send(goLine(time.Until(stopAt)), stopAt); err != nil {
		return note, "", err
	}
	best, answered := "", false
	handle := func(w []string) bool {
		switch w[0] {
		case "info":
			note.update(w)
		case "bestmove":
			answered = true
			if len(w) > 1 {
				best = w[1]
			}
		}
		return answered
	}
	err := e.await(stopAt, s.closing, handle)
	if errors.Is(err, errTimeout) {
		note.Stopped = true
		if err = e.send("stop", answerBy); err == nil {
			err = e.await(answerBy, s.closing, handle)
		}
	}
	switch {
	case err != nil:
		return note, "", err
	case !isUCIMove(best):
		return note, "", fmt.Errorf("%w: %q", errNoBestMove, clipName(best))
	}
	return note, best, nil
}

// drop kills the match's engine, which is dead or out of step. Callers hold mu.
func (s *Strategy) drop() {
	if s.eng != nil {
		_ = s.eng.close(0)
		s.eng = nil
	}
}

// Close ends the match's engine: quit, and a kill if it has not exited maxQuitGrace (or
// the handshake timeout, when shorter) later. A move in progress gives up first. Later
// moves fail. It returns an error when the engine had to be killed.
func (s *Strategy) Close() error {
	s.closeOnce.Do(func() { close(s.closing) })
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.eng == nil {
		return nil
	}
	err := s.eng.close(s.cfg.quitGrace())
	s.eng = nil
	return err
}

// position is the position command of ctx: the moves from the match's start (the
// standard position, or the opening's FEN) when the referee sent them (checked), so that
// the engine knows the repetitions, else the FEN.
func position(ctx game.ChessContext) string {
	start := "position startpos"
	if ctx.StartFEN != "" {
		start = "position fen " + ctx.StartFEN
	}
	switch {
	case ctx.Moves == nil:
		return "position fen " + ctx.Position.String()
	case len(ctx.Moves) == 0:
		return start
	}
	return start + " moves " + strings.Join(ctx.Moves, " ")
}

// quitGrace is how long the engine has to exit after quit.
func (c Config) quitGrace() time.Duration { return min(c.HandshakeTimeout, maxQuitGrace) }

// earliest is the earlier of two instants.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
