package localleague

import (
	"context"
	"net/http"
	"time"

	"github.com/agentleague/agentleague/protocol"
)

// Admin sends admin messages to a League Manager (league demo, bench, start, standings)
// and reads the live view beside it.
type Admin struct {
	c  *protocol.Client
	hc *http.Client // GET of the live view, with the TLS of the calls
}

// NewAdmin makes an admin client that has already compiled the schemas of the
// answers given: bench makes it before its clock starts, so the clock does not count a
// compilation (milliseconds) in the league's time.
func NewAdmin(opt protocol.ClientOptions, answers ...string) (*Admin, error) {
	v, err := protocol.NewValidator()
	if err != nil {
		return nil, err
	}
	if err := v.Warm(answers...); err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = opt.TLS
	return &Admin{c: protocol.NewClientWith(v, nil, opt), hc: &http.Client{Transport: tr}}, nil
}

// Close releases the client's connections.
func (a *Admin) Close() {
	a.c.Close()
	a.hc.CloseIdleConnections()
}

// Call sends one admin message with the admin token, retried on transport failures.
func (a *Admin) Call(ctx context.Context, url, token, messageType string, payload any) (*protocol.Message, error) {
	msg, err := protocol.NewMessage(messageType, protocol.SenderAdmin, payload)
	if err != nil {
		return nil, err
	}
	msg.Envelope.AuthToken = token
	return a.c.Call(ctx, url, msg, protocol.CallOptions{
		Timeout: 10 * time.Second,
		Retry:   protocol.RetryPolicy{Attempts: 3, Backoff: 200 * time.Millisecond},
	})
}

// Started is the League Manager's answer to ADMIN_START_LEAGUE_REQUEST.
type Started struct {
	LeagueID     string
	Status       string `json:"status"`
	LeagueStatus string `json:"league_status"`
}

// StartLeague closes registration and starts the league of the League Manager at url.
func (a *Admin) StartLeague(ctx context.Context, url, token string) (Started, error) {
	var s Started
	ans, err := a.Call(ctx, url, token, protocol.AdminStartLeagueRequest, map[string]any{})
	if err != nil {
		return s, err
	}
	if err := ans.Decode(&s); err != nil {
		return s, err
	}
	s.LeagueID = ans.Envelope.LeagueID
	return s, nil
}
