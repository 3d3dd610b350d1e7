// Package uci plays chess through an engine that speaks the Universal Chess Interface
// (Stockfish and most others), run as a subprocess. Each match has a process of its own,
// started at its first move and ended with quit when the match ends; nothing an engine
// prints can make the player wait past a move's deadline or hold more than a line of it.
package uci

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentleague/agentleague/protocol"
)

// Defaults and bounds of Config.
const (
	// DefaultMoveTime is the search limit when Config sets none.
	DefaultMoveTime = 100 * time.Millisecond
	// DefaultHandshakeTimeout bounds uci/uciok and each isready/readyok when Config sets none.
	DefaultHandshakeTimeout = 10 * time.Second
	maxMoveTime             = 10 * time.Minute
	maxNodes                = 1 << 40
	maxDepth                = 100
	maxOptions              = 64
)

// Config says which engine to run and how long it searches.
type Config struct {
	// Path is the engine's executable, e.g. /usr/games/stockfish.
	Path string
	// Options are sent with setoption, in order, after the handshake. The engine must have
	// announced each name.
	Options []Option
	// MoveTime, Nodes and Depth bound each search (go movetime, go nodes, go depth): at most
	// one is set; none means MoveTime DefaultMoveTime. The referee's deadline bounds every
	// search as well. Under a clock the engine is given the clocks instead (go wtime
	// btime winc binc) and stopped at the clock's budget (strategy.MoveBudget).
	MoveTime time.Duration
	Nodes    int64
	Depth    int
	// HandshakeTimeout bounds uci/uciok and each isready/readyok (DefaultHandshakeTimeout
	// when 0); never more than the move being played has left.
	HandshakeTimeout time.Duration
}

// Option is one engine option, set with "setoption name <Name> value <Value>" (without
// "value" when Value is empty: a button such as "Clear Hash").
type Option struct {
	Name, Value string
}

// ParseOption reads "Name=Value" (or "Name" for a button), e.g. "Skill Level=5".
func ParseOption(s string) (Option, error) {
	name, value, _ := strings.Cut(s, "=")
	o := Option{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)}
	if err := o.validate(); err != nil {
		return Option{}, err
	}
	return o, nil
}

// validate refuses what would not be one setoption command: an empty name, control
// characters (a newline would smuggle in a command of its own), and the words name and
// value inside the name, which the engine would read as the command's keywords.
func (o Option) validate() error {
	if o.Name == "" {
		return fmt.Errorf("engine option %q: empty name (want Name=Value)", o.Name+"="+o.Value)
	}
	if strings.ContainsFunc(o.Name+o.Value, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("engine option %q: control character", o.Name)
	}
	for _, w := range strings.Fields(strings.ToLower(o.Name)) {
		if w == "name" || w == "value" {
			return fmt.Errorf("engine option %q: the words name and value cannot be part of a name", o.Name)
		}
	}
	return nil
}

// command is the setoption line of o.
func (o Option) command() string {
	if o.Value == "" {
		return "setoption name " + o.Name
	}
	return "setoption name " + o.Name + " value " + o.Value
}

// Validate checks c without side effects: whether the engine starts is for Probe to tell.
func (c Config) Validate() error {
	if strings.TrimSpace(c.Path) == "" {
		return errors.New("no engine path (e.g. /usr/games/stockfish)")
	}
	if len(c.Options) > maxOptions {
		return fmt.Errorf("%d engine options, at most %d", len(c.Options), maxOptions)
	}
	for _, o := range c.Options {
		if err := o.validate(); err != nil {
			return err
		}
	}
	limits := 0
	for _, set := range []bool{c.MoveTime != 0, c.Nodes != 0, c.Depth != 0} {
		if set {
			limits++
		}
	}
	switch {
	case limits > 1:
		return errors.New("set one search limit: movetime, nodes or depth")
	case c.MoveTime < 0 || c.MoveTime > maxMoveTime || (c.MoveTime > 0 && c.MoveTime < time.Millisecond):
		return fmt.Errorf("movetime must be 1ms..%v, got %v", maxMoveTime, c.MoveTime)
	case c.Nodes < 0 || c.Nodes > maxNodes:
		return fmt.Errorf("nodes must be 1..%d, got %d", int64(maxNodes), c.Nodes)
	case c.Depth < 0 || c.Depth > maxDepth:
		return fmt.Errorf("depth must be 1..%d, got %d", maxDepth, c.Depth)
	case c.HandshakeTimeout < 0:
		return fmt.Errorf("negative handshake timeout %v", c.HandshakeTimeout)
	}
	return nil
}

// withDefaults fills in the defaults of the zero fields.
func (c Config) withDefaults() Config {
	if c.MoveTime == 0 && c.Nodes == 0 && c.Depth == 0 {
		c.MoveTime = DefaultMoveTime
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	return c
}

// goCommand is the go line of a search that must end by stopIn: movetime is cut to it, so
// that the engine stops by itself in time. Under a clock (clocks not nil) the engine keeps
// time by the clocks instead of MoveTime, Nodes or Depth: go wtime btime winc binc
// [movestogo], the mover's clock being clocks.You (white tells its colour) and each
// clock its bank included, as the referee spends the bank once the clock is out.
func (c Config) goCommand(stopIn time.Duration, clocks *protocol.Clocks, white bool) string {
	switch {
	case clocks != nil:
		you, opp := clocks.You.RemainingMS+clocks.You.BankMS, clocks.Opponent.RemainingMS+clocks.Opponent.BankMS
		if !white {
			you, opp = opp, you
		}
		line := fmt.Sprintf("go wtime %d btime %d winc %d binc %d", max(you, 0), max(opp, 0), clocks.IncrementMS, clocks.IncrementMS)
		if n := clocks.You.MovesToGo; n > 0 {
			line += fmt.Sprintf(" movestogo %d", n)
		}
		return line
	case c.Nodes > 0:
		return fmt.Sprintf("go nodes %d", c.Nodes)
	case c.Depth > 0:
		return fmt.Sprintf("go depth %d", c.Depth)
	default:
		return fmt.Sprintf("go movetime %d", max(min(c.MoveTime, stopIn).Milliseconds(), 1))
	}
}
