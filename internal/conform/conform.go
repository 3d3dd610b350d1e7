package conform

import (
	"context"
	"crypto/tls"
	"time"

	"github.com/rs/zerolog"
)

// Options configure a run of `league conform`.
type Options struct {
	// Listen is the address the tool serves as League Manager (player and referee
	// subjects); the subject is started with --league http://<Listen>/mcp.
	Listen string
	// URL is the JSON-RPC endpoint of the League Manager under test.
	URL string
	// Game is the game_type played.
	Game string
	// Wait bounds how long the subject may take to register (it is started by hand).
	Wait time.Duration
	// MoveTimeout is the deadline given for each move; a slow agent may need more.
	MoveTimeout time.Duration
	// AdminToken, for a league-manager subject, lets the tool start the league itself.
	AdminToken string
	// ReminderWait, for a league-manager subject, is how long one result is held back
	// to see a RESULT_REMINDER; 0 leaves that check out. It must exceed the League
	// Manager's result_report_ms.
	ReminderWait time.Duration
	// Log receives what the tool does, for --verbose.
	Log zerolog.Logger
	// Ready, when set, is called with the tool's League Manager URL once it listens
	// (player and referee subjects): the moment to start the agent under test.
	Ready func(leagueURL string)
	// ResultTimeout bounds how long a referee may take to report a result once its
	// match is over (DefaultResultTimeout when 0).
	ResultTimeout time.Duration
	// Grace bounds how long an agent may take to stop listening after LEAGUE_SHUTDOWN
	// (DefaultGrace when 0).
	Grace time.Duration
	// ClientTLS configures the tool's https calls, to the League Manager under test or
	// the agent's endpoint (whom to trust); nil: the system's roots.
	ClientTLS *tls.Config
	// Insecure allows calls over plain http to a League Manager that is not on loopback.
	Insecure bool
}

// Defaults of Options.
const (
	// DefaultResultTimeout is seed 004's result_report_ms.
	DefaultResultTimeout = 60 * time.Second
	// DefaultGrace is the time `league demo` gives an agent to leave after the notice.
	DefaultGrace = 5 * time.Second
)

// Subjects maps each subject name of `league conform` to its run, one small type each:
// playerRun, refereeRun and lmRun.
var Subjects = map[string]func(ctx context.Context, opt Options, r *Report) error{
	"player":         onSession((*session).runPlayer),
	"referee":        onSession((*session).runReferee),
	"league-manager": runLeagueManager,
}

// onSession runs an agent subject on a session of the network.
func onSession(run func(*session, context.Context, *Report) error) func(context.Context, Options, *Report) error {
	return func(ctx context.Context, opt Options, r *Report) error {
		s, err := newSession(opt)
		if err != nil {
			return err
		}
		return run(s, ctx, r)
	}
}
