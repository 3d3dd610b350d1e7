package player

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// Every call to the League Manager is retried, with the same JSON-RPC id and
// conversation id, on lost connections and on the refusals of protocol.Transient
// (INTERNAL, STORAGE_UNAVAILABLE, RATE_LIMITED: the League Manager could not take the call
// now, e.g. its disk is full), with a capped, jittered backoff, until the call's own
// deadline: Config.RegisterFor for registration and AGENT_READY, leagueQueryFor for
// QUERY_STANDINGS, matchQueryFor for QUERY_MATCH. Any other refusal ends the call at once.

// Backoff of the calls to the League Manager: 100 ms doubling to 2 s, with the client's jitter.
const (
	registerBackoff    = 100 * time.Millisecond
	registerMaxBackoff = 2 * time.Second
)

// leagueQueryFor bounds the retries of QUERY_STANDINGS, asked for a person or a model
// that waits for the answer: about the three attempts of DefaultRegisterTimeout it had.
const leagueQueryFor = 15 * time.Second

// Features are the extensions a player announces at registration: it checks match
// credentials and answers with them, and takes MATCH_CANCELLED and LEAGUE_COMPLETED.
var Features = []string{protocol.FeatureMatchCredentials, protocol.FeatureMatchCancellation, protocol.FeatureLeagueCompleted}

// leagueCaller carries the calls to the League Manager: the player's protocol.Client,
// or a League Manager in memory in tests.
type leagueCaller interface {
	Call(ctx context.Context, url string, m *protocol.Message, opt protocol.CallOptions) (*protocol.Message, error)
}

// retryPolicy retries transport failures and the transient refusals (plus extra) until the
// caller's deadline: the deadline, not a count, ends the retries.
func retryPolicy(backoff, maxBackoff time.Duration, extra ...protocol.Reason) protocol.RetryPolicy {
	return protocol.RetryPolicy{
		Attempts: math.MaxInt32, Backoff: backoff, MaxBackoff: maxBackoff,
		Reasons: slices.Concat(protocol.Transient(), extra),
	}
}

// leagueLink is the player's standing with the League Manager: it carries every call to
// it, and owns what registration answered (token, league id, features) and what the
// player derives from that (match credentials, the referees QUERY_MATCH confirmed), all
// under its mu. registered is closed once the answer is stored.
type leagueLink struct {
	log zerolog.Logger
	// id is the player's id, url the League Manager's endpoint, displayName is sent at
	// registration.
	id, url, displayName string
	card                 *protocol.AgentCard
	// callTimeout bounds each attempt of a call; registerFor all of registration's.
	callTimeout, registerFor time.Duration
	// caller carries every call to the League Manager: the player's client outside tests.
	caller leagueCaller
	// matchQueryFor bounds the retries of QUERY_MATCH (matchQueryFor outside tests).
	matchQueryFor time.Duration
	registered    chan struct{}

	mu       sync.Mutex
	token    string
	leagueID string
	features []string
	// confirmed are the referees without credential the League Manager confirmed.
	confirmed confirmations
	// credential is the last match credential computed (an HMAC): a match's requests
	// follow one another, so each would compute the same one again.
	credential struct{ token, matchID, value string }
	// final is what LEAGUE_COMPLETED brought; matchesLeft the last count the League
	// Manager gave (STANDINGS_RESPONSE matches_left, or none once the league completed).
	final       *protocol.LeagueCompletion
	matchesLeft *int
}

// newLeagueLink is the link of a player configured by cfg, whose defaults are filled in.
func newLeagueLink(cfg Config, caller leagueCaller, log zerolog.Logger) *leagueLink {
	return &leagueLink{
		log: log, id: cfg.ID, url: cfg.LeagueURL, displayName: cfg.DisplayName, card: cfg.AgentCard,
		callTimeout: cfg.RegisterTimeout, registerFor: cfg.RegisterFor,
		caller: caller, matchQueryFor: matchQueryFor, registered: make(chan struct{}),
	}
}

// registration is the token and league id registration gave, empty before.
func (l *leagueLink) registration() (token, leagueID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.token, l.leagueID
}

// errLeagueOver is a registration refused because the League Manager is shutting down.
var errLeagueOver = errors.New("register: the League Manager is shutting down")

// joinContext is the deadline of registration and AGENT_READY together: cfg.RegisterFor,
// cut short when ctx ends or LEAGUE_SHUTDOWN arrives.
func (p *Player) joinContext(ctx context.Context) (context.Context, context.CancelFunc) {
	jctx, cancel := context.WithTimeout(ctx, p.cfg.RegisterFor)
	go func() {
		select {
		case <-p.shutdown:
			cancel()
		case <-jctx.Done():
		}
	}()
	return jctx, cancel
}

// register sends REGISTER_PLAYER_REQUEST, naming the game types the player is limited to
// (none: any), until the League Manager takes it or jctx (see Player.joinContext) ends,
// and stores the token, league id and features. Besides the transient refusals it
// retries NO_REFEREE_REGISTERED: the referees may register after the players.
func (l *leagueLink) register(jctx context.Context, endpoint string, gameTypes []string) error {
	features := Features
	if endpoint == "" {
		// Outbound: the League Manager gives the player an endpoint on its relay.
		features = append(slices.Clip(Features), protocol.FeatureOutbound)
	}
	msg, err := protocol.NewMessage(protocol.RegisterPlayerRequest, protocol.PlayerSender(l.id), protocol.PlayerRegistration{
		PlayerID: l.id, EndpointURL: endpoint, DisplayName: l.displayName,
		// A model server plays only what it listed; the League Manager refuses a league
		// of another game at once.
		GameTypes: gameTypes,
		Features:  features,
		AgentCard: l.card,
	})
	if err != nil {
		return err
	}
	log := l.log.With().Str("conversation_id", msg.Envelope.ConversationID).Logger()
	log.Info().Str("league_url", l.url).Msg("registering")
	retry := retryPolicy(registerBackoff, registerMaxBackoff, protocol.ReasonNoRefereeRegistered)
	// A League Manager of another implementation may refuse a player that came before
	// the referees without naming a reason; the deadline ends the wait.
	retry.Unexplained = true
	// One call: the client resends the same message (same JSON-RPC id and conversation
	// id), which the League Manager recognises as a retry.
	ans, err := l.caller.Call(jctx, l.url, msg, protocol.CallOptions{
		Timeout: l.callTimeout, Retry: retry, Peer: protocol.SenderLeagueManager,
	})
	if err != nil {
		if protocol.ReasonOf(err) == protocol.ReasonShuttingDown {
			// The league ended before this player joined it: nothing failed.
			log.Info().Msg("the League Manager is shutting down: not registered")
			return errLeagueOver
		}
		if errors.Is(jctx.Err(), context.Canceled) {
			return fmt.Errorf("register: %w", err) // asked to stop: Run reports that
		}
		if jctx.Err() != nil {
			err = fmt.Errorf("gave up after %v (the registration deadline): %w", l.registerFor, err)
		}
		log.Error().Err(err).Msg("registration failed")
		return fmt.Errorf("register: %w", err)
	}
	var a protocol.RegistrationAnswer
	if err := ans.Decode(&a); err != nil {
		return fmt.Errorf("register: %w", err)
	}
	l.mu.Lock()
	l.token, l.leagueID, l.features = a.AuthToken, a.LeagueID, a.Features
	l.mu.Unlock()
	close(l.registered)
	log.Info().Str("league_id", a.LeagueID).Strs("features", a.Features).Str("endpoint", cmp.Or(a.EndpointURL, endpoint)).Msg("registered")
	return nil
}

// ready sends AGENT_READY_REQUEST, retried until jctx (see Player.joinContext) ends, and
// reports whether the League Manager acknowledged it. A failure is logged, not fatal: the
// League Manager treats a registered agent as usable (PROTOCOL-NOTES 7).
func (l *leagueLink) ready(jctx context.Context) bool {
	msg, err := l.message(protocol.AgentReadyRequest, protocol.AgentReady{})
	if err != nil {
		l.log.Error().Err(err).Msg("build agent ready request")
		return false
	}
	log := l.log.With().Str("conversation_id", msg.Envelope.ConversationID).Logger()
	var a protocol.AgentReadyAnswer
	ans, err := l.caller.Call(jctx, l.url, msg, l.callOptions())
	if err == nil {
		err = ans.Decode(&a)
	}
	if err != nil {
		log.Warn().Err(err).Msg("agent ready not acknowledged; staying registered")
		return false
	}
	log.Info().Str("agent_state", a.AgentState).Msg("ready")
	return true
}

// Standings asks the League Manager for the current standings (QUERY_STANDINGS), retried
// until ctx ends or leagueQueryFor passes. It returns ErrNotRegistered before
// registration succeeded.
func (p *Player) Standings(ctx context.Context) (protocol.Standings, error) {
	return p.link.standings(ctx)
}

// standings is Player.Standings.
func (l *leagueLink) standings(ctx context.Context) (protocol.Standings, error) {
	select {
	case <-l.registered:
	default:
		return protocol.Standings{}, ErrNotRegistered
	}
	msg, err := l.message(protocol.QueryStandings, protocol.StandingsQuery{})
	if err != nil {
		return protocol.Standings{}, err
	}
	log := l.log.With().Str("conversation_id", msg.Envelope.ConversationID).Logger()
	qctx, cancel := context.WithTimeout(ctx, leagueQueryFor)
	defer cancel()
	ans, err := l.caller.Call(qctx, l.url, msg, l.callOptions())
	if err != nil {
		log.Warn().Err(err).Msg("standings query failed")
		return protocol.Standings{}, fmt.Errorf("query standings: %w", err)
	}
	var st protocol.Standings
	if err := ans.Decode(&st); err != nil {
		return protocol.Standings{}, fmt.Errorf("query standings: %w", err)
	}
	if st.MatchesLeft != nil {
		l.mu.Lock()
		l.matchesLeft = new(*st.MatchesLeft)
		l.mu.Unlock()
	}
	log.Debug().Int("rows", len(st.Standings)).Msg("standings received")
	return st, nil
}

// message builds a request to the League Manager carrying the player's token.
func (l *leagueLink) message(messageType string, payload any) (*protocol.Message, error) {
	msg, err := protocol.NewMessage(messageType, protocol.PlayerSender(l.id), payload)
	if err != nil {
		return nil, err
	}
	msg.Envelope.AuthToken, msg.Envelope.LeagueID = l.registration()
	return msg, nil
}

// callOptions are the settings of calls to the League Manager after registration:
// retried until the caller's deadline, which every caller sets.
func (l *leagueLink) callOptions() protocol.CallOptions {
	return protocol.CallOptions{
		Timeout: l.callTimeout,
		Retry:   retryPolicy(registerBackoff, registerMaxBackoff),
		Peer:    protocol.SenderLeagueManager,
	}
}

// fromLeague checks that a message comes from the League Manager: the sender, and the
// player's own token when the League Manager announced that it signs its messages.
func (l *leagueLink) fromLeague(env *protocol.Envelope) error {
	// The schemas pin the sender too; Handle is exported, so check it here as well.
	if env.Sender != protocol.SenderLeagueManager {
		return protocol.Errorf(protocol.ReasonUnauthorized, "only the league manager sends %s", env.MessageType)
	}
	l.mu.Lock()
	token, signed := l.token, slices.Contains(l.features, protocol.FeatureSignedAssignments)
	l.mu.Unlock()
	if signed && (env.AuthToken == "" || !protocol.TokenEqual(env.AuthToken, token)) {
		return protocol.Errorf(protocol.ReasonUnauthorized, "%s must carry this player's token", env.MessageType)
	}
	return nil
}
