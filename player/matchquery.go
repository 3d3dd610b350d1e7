package player

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// Confirming a referee that shows no match credential (protocol/README.md,
// "Authentication on every hop").
const (
	// maxConfirmed bounds the remembered confirmations; the oldest is dropped first.
	maxConfirmed = 1024
	// matchQueryTimeout bounds each QUERY_MATCH attempt, and matchQueryFor all of them
	// (lost connections and transient refusals are retried): the answer to the invitation
	// must come well inside the referee's join deadline (10 s by default).
	matchQueryTimeout = 2 * time.Second
	matchQueryFor     = 4 * time.Second
	// Backoff between QUERY_MATCH attempts: 50 ms doubling to 500 ms, with jitter.
	matchQueryBackoff    = 50 * time.Millisecond
	matchQueryMaxBackoff = 500 * time.Millisecond
)

// confirmations remember, per match, the referee the League Manager named in MATCH_INFO,
// so that this referee's later REQUEST_MOVE and GAME_OVER without a credential are
// accepted. Callers hold the leagueLink's mu.
type confirmations struct {
	referee map[string]string // match id -> referee sender
	order   []string          // match ids, oldest first
}

func (c *confirmations) confirm(matchID, referee string) {
	if c.referee == nil {
		c.referee = map[string]string{}
	}
	if _, known := c.referee[matchID]; !known {
		c.order = append(c.order, matchID)
		if len(c.order) > maxConfirmed {
			delete(c.referee, c.order[0])
			c.order = slices.Delete(c.order, 0, 1)
		}
	}
	c.referee[matchID] = referee
}

func (c *confirmations) forget(matchID string) {
	if _, known := c.referee[matchID]; !known {
		return
	}
	delete(c.referee, matchID)
	c.order = slices.DeleteFunc(c.order, func(id string) bool { return id == matchID })
}

func (c *confirmations) holds(matchID, referee string) bool {
	return c.referee[matchID] == referee
}

// authorizeMatch decides whether a referee's match message (GAME_INVITATION,
// REQUEST_MOVE, GAME_OVER) is taken:
//   - the League Manager did not announce match_credentials: there is nothing to check
//     against (e.g. the Python League Manager), so it is;
//   - the message shows a credential: it must be this player's credential for the match;
//   - it shows none and the League Manager announced match_query: an invitation is
//     confirmed with QUERY_MATCH (invite), and later messages are taken only from the
//     referee so confirmed;
//   - it shows none and the League Manager cannot be asked: plain league.v2, taken.
func (l *leagueLink) authorizeMatch(ctx context.Context, env *protocol.Envelope, invite bool) error {
	l.mu.Lock()
	token := l.token
	credentials := slices.Contains(l.features, protocol.FeatureMatchCredentials)
	query := slices.Contains(l.features, protocol.FeatureMatchQuery)
	confirmed := l.confirmed.holds(env.MatchID, env.Sender)
	l.mu.Unlock()
	switch {
	case !credentials:
		return nil
	case env.AuthToken != "":
		if !protocol.TokenEqual(env.AuthToken, l.matchCredential(token, env.MatchID)) {
			return protocol.Errorf(protocol.ReasonUnauthorized, "wrong match credential for match %s", env.MatchID)
		}
		return nil
	case !query, confirmed:
		return nil
	case invite:
		return l.confirmReferee(ctx, env)
	}
	return protocol.Errorf(protocol.ReasonUnauthorized, "%s shows no match credential and is not the confirmed referee of match %s", env.Sender, env.MatchID)
}

// matchCredential is protocol.MatchCredential(token, matchID), computed again only for
// another match or token.
func (l *leagueLink) matchCredential(token, matchID string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.credential; c.value == "" || c.token != token || c.matchID != matchID {
		l.credential.token, l.credential.matchID, l.credential.value = token, matchID, protocol.MatchCredential(token, matchID)
	}
	return l.credential.value
}

// confirmReferee asks the League Manager which referee holds the match and remembers the
// answer when it names the sender of the invitation and the match is being played.
func (l *leagueLink) confirmReferee(ctx context.Context, env *protocol.Envelope) error {
	log := zerolog.Ctx(ctx).With().Str("match_id", env.MatchID).Str("referee", env.Sender).Logger()
	info, err := l.queryMatch(ctx, env.MatchID)
	if err != nil {
		log.Warn().Err(err).Msg("cannot confirm an invitation without credential")
		if reason := protocol.ReasonOf(err); reason != "" && !slices.Contains(protocol.Transient(), reason) {
			return protocol.Errorf(protocol.ReasonUnauthorized, "the league manager does not confirm match %s: %s", env.MatchID, reason)
		}
		// Unreachable, busy or failing for longer than matchQueryFor: the invitation may
		// be sent again later.
		return protocol.Errorf(protocol.ReasonBusy, "cannot confirm match %s with the league manager now", env.MatchID)
	}
	holder := ""
	if info.RefereeID != nil {
		holder = protocol.RefereeSender(*info.RefereeID)
	}
	ok := info.MatchID == env.MatchID && holder == env.Sender &&
		(info.Status == protocol.MatchStateAssigned || info.Status == protocol.MatchStateInProgress)
	l.mu.Lock()
	if ok {
		l.confirmed.confirm(env.MatchID, env.Sender)
	} else {
		// The League Manager's view is newer than any earlier confirmation.
		l.confirmed.forget(env.MatchID)
	}
	l.mu.Unlock()
	if !ok {
		log.Warn().Str("holder", holder).Str("status", info.Status).Msg("invitation from a referee the league manager did not assign")
		return protocol.Errorf(protocol.ReasonUnauthorized, "the league manager does not name %s as the referee of match %s (%s)", env.Sender, env.MatchID, info.Status)
	}
	log.Info().Str("status", info.Status).Msg("referee without credential confirmed by the league manager")
	return nil
}

// MatchInfo asks the League Manager about one of the player's matches (QUERY_MATCH, an
// extension it announces as match_query). It returns ErrNotRegistered before
// registration succeeded.
func (p *Player) MatchInfo(ctx context.Context, matchID string) (protocol.MatchDetails, error) {
	select {
	case <-p.link.registered:
	default:
		return protocol.MatchDetails{}, ErrNotRegistered
	}
	return p.link.queryMatch(ctx, matchID)
}

// unconfirm forgets the referee confirmed for matchID, whose next referee must be
// confirmed afresh, and returns the player's token.
func (l *leagueLink) unconfirm(matchID string) (token string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.confirmed.forget(matchID)
	return l.token
}

// queryMatch sends QUERY_MATCH about matchID with the player's own token, retried on lost
// connections and transient refusals until ctx ends or l.matchQueryFor passes.
func (l *leagueLink) queryMatch(ctx context.Context, matchID string) (protocol.MatchDetails, error) {
	msg, err := l.message(protocol.QueryMatch, protocol.MatchQuery{MatchID: matchID})
	if err != nil {
		return protocol.MatchDetails{}, err
	}
	msg.Envelope.MatchID = matchID
	qctx, cancel := context.WithTimeout(ctx, l.matchQueryFor)
	defer cancel()
	ans, err := l.caller.Call(qctx, l.url, msg, protocol.CallOptions{
		Timeout: matchQueryTimeout, Retry: retryPolicy(matchQueryBackoff, matchQueryMaxBackoff), Peer: protocol.SenderLeagueManager,
	})
	if err != nil {
		return protocol.MatchDetails{}, fmt.Errorf("query match %s: %w", matchID, err)
	}
	var info protocol.MatchDetails
	if err := ans.Decode(&info); err != nil {
		return protocol.MatchDetails{}, fmt.Errorf("query match %s: %w", matchID, err)
	}
	return info, nil
}
