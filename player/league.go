package player

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agentleague/agentleague/protocol"
)

// Registration backoff: 100 ms doubling to 2 s, with the client's jitter.
const (
	registerBackoff    = 100 * time.Millisecond
	registerMaxBackoff = 2 * time.Second
)

// Features are the extensions a player announces at registration: it checks match
// credentials and answers with them, and takes MATCH_CANCELLED.
var Features = []string{protocol.FeatureMatchCredentials, protocol.FeatureMatchCancellation}

// register sends REGISTER_PLAYER_REQUEST until the League Manager takes it or
// cfg.RegisterFor elapses, and stores the token, league id and features.
// errLeagueOver is a registration refused because the League Manager is shutting down.
var errLeagueOver = errors.New("register: the League Manager is shutting down")

func (p *Player) register(ctx context.Context, endpoint string) error {
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
	rctx, cancel := context.WithTimeout(ctx, p.cfg.RegisterFor)
	defer cancel()
	// One call: the client resends the same message (same conversation id), which the
	// League Manager recognises as a retry. The deadline, not a count, ends the retries.
	ans, err := p.client.Call(rctx, p.cfg.LeagueURL, msg, protocol.CallOptions{
		Timeout: p.cfg.RegisterTimeout,
		Retry: protocol.RetryPolicy{
			Attempts:   math.MaxInt32,
			Backoff:    registerBackoff,
			MaxBackoff: registerMaxBackoff,
			Reasons:    []protocol.Reason{protocol.ReasonNoRefereeRegistered, protocol.ReasonRateLimited},
			// A League Manager of another implementation may refuse a player that came
			// before the referees without naming a reason; the deadline ends the wait.
			Unexplained: true,
		},
		Peer: protocol.SenderLeagueManager,
	})
	if err != nil {
		if pe := (*protocol.Error)(nil); errors.As(err, &pe) && pe.Data != nil && pe.Data.Reason == protocol.ReasonShuttingDown {
			// The league ended before this player joined it: nothing failed.
			log.Info().Msg("the League Manager is shutting down: not registered")
			return errLeagueOver
		}
		if ctx.Err() == nil { // else asked to stop: Run reports that
			log.Error().Err(err).Msg("registration failed")
		}
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

// ready sends AGENT_READY_REQUEST. A failure is logged, not fatal: the League Manager
// treats a registered agent as usable (PROTOCOL-NOTES 7).
func (p *Player) ready(ctx context.Context) {
	msg, err := p.leagueMessage(protocol.AgentReadyRequest, protocol.AgentReady{})
	if err != nil {
		p.log.Error().Err(err).Msg("build agent ready request")
		p.setState(StateRegistered)
		return
	}
	log := p.log.With().Str("conversation_id", msg.Envelope.ConversationID).Logger()
	var a protocol.AgentReadyAnswer
	ans, err := p.client.Call(ctx, p.cfg.LeagueURL, msg, p.leagueCallOptions())
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

// Standings asks the League Manager for the current standings (QUERY_STANDINGS). It
// returns ErrNotRegistered before registration succeeded.
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
	ans, err := p.client.Call(ctx, p.cfg.LeagueURL, msg, p.leagueCallOptions())
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

// leagueCallOptions are the settings of calls to the League Manager after registration.
func (p *Player) leagueCallOptions() protocol.CallOptions {
	return protocol.CallOptions{
		Timeout: p.cfg.RegisterTimeout,
		Retry: protocol.RetryPolicy{
			Attempts: 3, Backoff: registerBackoff, MaxBackoff: registerMaxBackoff,
			Reasons: []protocol.Reason{protocol.ReasonRateLimited},
		},
		Peer: protocol.SenderLeagueManager,
	}
}
