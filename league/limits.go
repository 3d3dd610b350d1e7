package league

import (
	"math"
	"time"

	"github.com/agentleague/agentleague/config"
	"golang.org/x/time/rate"
)

// limitKind is a kind of rate-limited request.
type limitKind int

const (
	limitRegistration limitKind = iota
	limitResults
	limitStandings
	// limitMatchQueries (QUERY_MATCH) has the standings rate but its own bucket, so that
	// polling standings never keeps a player from confirming a match.
	limitMatchQueries
	limitKinds
)

func (k limitKind) String() string {
	switch k {
	case limitRegistration:
		return "registrations"
	case limitResults:
		return "result reports"
	case limitMatchQueries:
		return "match queries"
	default:
		return "standings queries"
	}
}

// buckets are one sender's token buckets, one per kind, made on first use.
type buckets [limitKinds]*rate.Limiter

// limiters are the token buckets of rate_limits (the rules are in faults.go). Only
// registered agents and the admin get buckets of their own, so bySender never holds more
// than max_referees + max_players + 1 entries. engine.mu guards them.
type limiters struct {
	cfg config.RateLimits
	// registrations is shared by every sender that is not registered.
	registrations *rate.Limiter
	// anonymous is shared by every request that failed authentication.
	anonymous buckets
	bySender  map[string]*buckets
}

func newLimiters(cfg *config.Config) *limiters {
	l := &limiters{
		cfg:           cfg.RateLimits,
		registrations: newBucket(cfg.RateLimits.RegistrationPerSecond, float64(cfg.Registration.MaxPlayers+cfg.Registration.MaxReferees)),
		bySender:      map[string]*buckets{},
	}
	for k := range limitKinds {
		l.anonymous[k] = l.bucket(k)
	}
	return l
}

// bucket is a new bucket of kind k for one sender.
func (l *limiters) bucket(k limitKind) *rate.Limiter {
	switch k {
	case limitRegistration:
		return newBucket(l.cfg.RegistrationPerSecond, l.cfg.RegistrationPerSecond)
	case limitResults:
		return newBucket(l.cfg.ResultsPerSecond, l.cfg.ResultsPerSecond)
	default:
		// Standings and match queries: a minute's worth at once, then the per-minute rate.
		return newBucket(l.cfg.StandingsPerMinute/60, l.cfg.StandingsPerMinute)
	}
}

// newBucket refills perSecond tokens a second and holds up to burst of them (at least 1).
func newBucket(perSecond, burst float64) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(perSecond), max(1, int(math.Ceil(burst))))
}

// allow takes a token of kind k: from sender's own buckets when known (a registered or
// authenticated sender), else from the shared ones.
func (l *limiters) allow(k limitKind, sender string, known bool, now time.Time) bool {
	switch {
	case !known && k == limitRegistration:
		return l.registrations.AllowN(now, 1)
	case !known:
		return l.anonymous[k].AllowN(now, 1)
	}
	b := l.bySender[sender]
	if b == nil {
		b = &buckets{}
		l.bySender[sender] = b
	}
	if b[k] == nil {
		b[k] = l.bucket(k)
	}
	return b[k].AllowN(now, 1)
}

// rateLimit answers RATE_LIMITED when sender is over its limit of kind k. It runs under
// engine.mu, which guards the limiters.
func (m *Manager) rateLimit(k limitKind, sender string, known bool) error {
	if m.limits.allow(k, sender, known, m.e.opt.Now()) {
		return nil
	}
	return refuse(errRateLimited, "too many %s from %s; retry later", k, sender)
}

// refusedAuth charges a request that failed authentication to the shared bucket of its
// kind: over that limit it is answered RATE_LIMITED, else with authErr. It runs under
// engine.mu.
func (m *Manager) refusedAuth(k limitKind, sender string, authErr error) error {
	if err := m.rateLimit(k, sender, false); err != nil {
		return err
	}
	return authErr
}
