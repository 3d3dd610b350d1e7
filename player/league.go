package player

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/agentleague/agentleague/protocol"
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
// credentials and answers with them, and takes MATCH_CANCELLED.
var Features = []string{protocol.FeatureMatchCredentials, protocol.FeatureMatchCancellation}

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

// register sends REGISTER_PLAYER_REQUEST until the League Manager takes it or jctx (see
// joinContext) ends, and stores the token, league id and features. Besides the transient
// refusals it retries NO_REFEREE_REGISTERED: the referees may register after the players.
func (p *Player) register(jctx context.Context, endpoint string) error {
	msg, err := protocol.NewMessage(protocol.RegisterPlayerRequest, protocol.PlayerSender(p.cfg.ID), protocol.PlayerRegistration{
		PlayerID: p.cfg.ID, EndpointURL: endpoint, DisplayName: p.cfg.DisplayName,
		// A model server plays only what it listed; the League Manager refuses a league
		// of another game at once.
		GameTypes: p.modelGames,
		Features:  Features,
	})
	if err != nil {
		return err
	}
	log := p.log.With().Str("conversation_id", msg.Envelope.ConversationID).Logger()
	log.Info().Str("league_url", p.cfg.LeagueURL).Msg("registering")
	retry := retryPolicy(registerBackoff, registerMaxBackoff, protocol.ReasonNoRefereeRegistered)
	// A League Manager of another implementation may refuse a player that came before
	// the referees without naming a reason; the deadline ends the wait.
	retry.Unexplained = true
	// One call: the client resends the same message (same JSON-RPC id and conversation
	// id), which the League Manager recognises as a retry.
	ans, err := p.league.Call(jctx, p.cfg.LeagueURL, msg, protocol.CallOptions{
		Timeout: p.cfg.RegisterTimeout, Retry: retry, Peer: protocol.SenderLeagueManager,
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
			err = fmt.Errorf("gave up after %v (the registration deadline): %w", p.cfg.RegisterFor, err)
		}
		log.Error().Err(err).Msg("registration failed")
		return fmt.Errorf("register: %w", err)
	}
	var a protocol.RegistrationAnswer
	if err := ans.Decode(&a); err != nil {
		return fmt.Errorf("register: %w", err)
	}
	p.mu.Lock()
	p.token, p.leagueID, p.features = a.AuthToken, a.LeagueID, a.Features
	p.mu.Unlock()
	close(p.registered)
	log.Info().Str("league_id", a.LeagueID).Strs("features", a.Features).Msg("registered")
	return nil
}

// ready sends AGENT_READY_REQUEST, retried until jctx (see joinContext) ends. A failure
// is logged, not fatal: the League Manager treats a registered agent as usable
// (PROTOCOL-NOTES 7).
func (p *Player) ready(jctx context.Context) {
	msg, err := p.leagueMessage(protocol.AgentReadyRequest, protocol.AgentReady{})
	if err != nil {
		p.log.Error().Err(err).Msg("build agent ready request")
		p.setState(StateRegistered)
		return
	}
	log := p.log.With().Str("conversation_id", msg.Envelope.ConversationID).Logger()
	var a protocol.AgentReadyAnswer
	ans, err := p.league.Call(jctx, p.cfg.LeagueURL, msg, p.leagueCallOptions())
	if err == nil {
		err = ans.Decode(&a)
	}
	if err != nil {
		log.Warn().Err(err).Msg("agent ready not acknowledged; staying registered")
		p.setState(StateRegistered)
		return
	}
	p.setState(StateActive)
	log.Info().Str("agent_state", a.AgentState).Msg("ready")
}

// Standings asks the League Manager for the current standings (QUERY_STANDINGS), retried
// until ctx ends or leagueQueryFor passes. It returns ErrNotRegistered before
// registration succeeded.
func (p *Player) Standings(ctx context.Context) (protocol.Standings, error) {
	select {
	case <-p.registered:
	default:
		return protocol.Standings{}, ErrNotRegistered
	}
	msg, err := p.leagueMessage(protocol.QueryStandings, protocol.StandingsQuery{})
	if err != nil {
		return protocol.Standings{}, err
	}
	log := p.log.With().Str("conversation_id", msg.Envelope.ConversationID).Logger()
	qctx, cancel := context.WithTimeout(ctx, leagueQueryFor)
	defer cancel()
	ans, err := p.league.Call(qctx, p.cfg.LeagueURL, msg, p.leagueCallOptions())
	if err != nil {
		log.Warn().Err(err).Msg("standings query failed")
		return protocol.Standings{}, fmt.Errorf("query standings: %w", err)
	}
	var st protocol.Standings
	if err := ans.Decode(&st); err != nil {
		return protocol.Standings{}, fmt.Errorf("query standings: %w", err)
	}
	log.Debug().Int("rows", len(st.Standings)).Msg("standings received")
	return st, nil
}

// leagueMessage builds a request to the League Manager carrying the player's token.
func (p *Player) leagueMessage(messageType string, payload any) (*protocol.Message, error) {
	msg, err := protocol.NewMessage(messageType, protocol.PlayerSender(p.cfg.ID), payload)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	msg.Envelope.AuthToken, msg.Envelope.LeagueID = p.token, p.leagueID
	p.mu.Unlock()
	return msg, nil
}

// leagueCallOptions are the settings of calls to the League Manager after registration:
// retried until the caller's deadline, which every caller sets.
func (p *Player) leagueCallOptions() protocol.CallOptions {
	return protocol.CallOptions{
		Timeout: p.cfg.RegisterTimeout,
		Retry:   retryPolicy(registerBackoff, registerMaxBackoff),
		Peer:    protocol.SenderLeagueManager,
	}
}
