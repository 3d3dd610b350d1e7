package league

import (
	"context"
	"errors"

	"github.com/agentleague/agentleague/protocol"
)

// Handle implements protocol.Handler: one validated inbound message. It is the edge
// where a refusal becomes a wire error. A request whose writes failed is refused
// STORAGE_UNAVAILABLE, naming the cause; it changed nothing.
func (m *Manager) Handle(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	ans, err := m.handle(ctx, msg)
	if err == nil {
		return ans, nil
	}
	var r *refusal
	if !errors.As(err, &r) && storageFailure(err) {
		m.e.mu.Lock()
		m.e.outage.failed(err)
		m.e.mu.Unlock()
		m.log.Warn().Err(err).Str("conversation_id", msg.Envelope.ConversationID).Str("message_type", msg.Envelope.MessageType).Msg("request refused: storage failing")
		err = storageRefusal(err)
	}
	return nil, wireError(err)
}

// reasons is the one table from a refusal's kind to its wire reason.
var reasons = map[error]protocol.Reason{
	errWrongLeague:        protocol.ReasonWrongLeague,
	errNotAccepted:        protocol.ReasonUnsupportedMessage,
	errMalformed:          protocol.ReasonSchemaViolation,
	errSenderMismatch:     protocol.ReasonSenderMismatch,
	errUnauthorized:       protocol.ReasonUnauthorized,
	errSuspended:          protocol.ReasonSuspended,
	errAlreadyRegistered:  protocol.ReasonDuplicateRegistration,
	errInsecureEndpoint:   protocol.ReasonInsecureEndpoint,
	errRegistrationClosed: protocol.ReasonRegistrationClosed,
	errNoReferee:          protocol.ReasonNoRefereeRegistered,
	errUnsupportedGame:    protocol.ReasonUnsupportedGame,
	errNotActive:          protocol.ReasonLeagueNotActive,
	errUnknownRound:       protocol.ReasonUnknownRound,
	errUnknownMatch:       protocol.ReasonUnknownMatch,
	errNotAssigned:        protocol.ReasonNotAssignedReferee,
	errStaleAssignment:    protocol.ReasonStaleAssignment,
	errStaleStep:          protocol.ReasonStaleStep,
	errInvalidResult:      protocol.ReasonInvalidResult,
	errDuplicateResult:    protocol.ReasonDuplicateResult,
	errRateLimited:        protocol.ReasonRateLimited,
	errShuttingDown:       protocol.ReasonShuttingDown,
	errStorageUnavailable: protocol.ReasonStorageUnavailable,
}

// wireError turns a refusal into the wire error that answers it. Any other error, or a
// refusal of a kind the table lacks, is returned as it is: the server answers INTERNAL
// and shows nothing of it.
func wireError(err error) error {
	var r *refusal
	if !errors.As(err, &r) {
		return err
	}
	reason, ok := reasons[r.kind]
	if !ok {
		return err
	}
	pe := protocol.Errorf(reason, "%s", r.msg)
	pe.Data.Details, pe.Data.Violations = r.details, r.violations
	return pe
}
