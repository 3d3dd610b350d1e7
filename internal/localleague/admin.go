package localleague

import (
	"context"
	"time"

	"github.com/agentleague/agentleague/protocol"
)

// Admin sends admin messages to a League Manager (league demo, bench, start, standings).
type Admin struct{ c *protocol.Client }

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
	return &Admin{c: protocol.NewClientWith(v, nil, opt)}, nil
}

// Close releases the client's connections.
func (a *Admin) Close() { a.c.Close() }

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
