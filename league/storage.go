package league

// Storage failures (a full disk, a failed write or fsync). The database leads: a request
// is acknowledged only once its transaction committed, and one whose transaction failed
// is refused STORAGE_UNAVAILABLE with nothing changed. The audit log follows: an
// exchange or note it could not take is a fact of the database by then, and is written
// to the log as recovered (reconcileAudit) before the League Manager decides anything
// else. While either store fails, the league is degraded: no request that changes it is
// taken, no deadline is held against an agent, and what failed is tried again every
// second; when both take writes again, the clocks of the matches in flight are moved on
// by the length of the outage.

import (
	"errors"
	"syscall"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
	"github.com/mattn/go-sqlite3"
	"github.com/rs/zerolog"
)

// storageRetry is how often a League Manager whose storage fails tries again.
const storageRetry = time.Second

// auditHealth is an Auditor that reports its failures and can be reopened; *audit.Log
// is one.
type auditHealth interface {
	Failures() int64
	Probe() error
	OnFailure(func())
}

// auditFailed runs on the goroutine whose audit append failed, which may hold mu: it
// only arms a check, which brings the log level with the database once it takes lines
// again, so an exchange lost at the end of a league is not left to the next start.
func (m *Manager) auditFailed() {
	if !m.auditCheck.CompareAndSwap(false, true) {
		return
	}
	m.e.opt.AfterFunc(storageRetry, func() {
		m.auditCheck.Store(false)
		m.e.mu.Lock()
		defer m.e.mu.Unlock()
		if m.e.closed {
			return
		}
		if m.e.storageReady() == nil {
			m.e.retryDecisions()
		}
	})
}

// outage owns the engine's view of its storage: whether and since when it fails, and
// the decisions kept to be tried again. It is guarded by engine.mu.
type outage struct {
	log zerolog.Logger
	hub *events.Hub
	now func() time.Time
	// arm makes sure the alarm fires no later than its time (engine.armDeadline); the
	// alarm tries the storage and the kept decisions again.
	arm func(at time.Time)

	since time.Time // zero while storage works
	cause string
	// auditSeen is the audit log's failure count the log was last reconciled at.
	auditSeen int64
	// retry: a decision that follows a committed change (closing registration,
	// settling, assigning, returning a match to the pool) failed to write and is tried
	// again by the alarm.
	retry bool
	// resuming: the start (reopening cancelled matches, failing those in flight at a
	// restart) failed to write; nothing else is decided before it is done.
	resuming bool
}

// storageFailure tells a write the database or the audit log could not make.
func storageFailure(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, audit.ErrUnavailable)
}

// storageCause names the store and the failure for a remote caller and /health: the
// system's words for it, never a path or a statement.
func storageCause(err error) string {
	where := "database"
	if errors.Is(err, audit.ErrUnavailable) {
		where = "audit log"
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		return where + ": " + se.Code.Error()
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return where + ": " + errno.Error()
	}
	return where + ": write failed"
}

// storageRefusal is the answer to a request whose writes failed.
func storageRefusal(err error) error {
	r := refuse(errStorageUnavailable, "the League Manager cannot write to its storage now; nothing was changed, retry later")
	r.details = storageCause(err)
	return r
}

// storageReady brings both stores back to taking writes, if they failed: a database
// that failed makes a write of its own, an audit log that failed is reopened and made
// level with the database. It reports the failure that remains.
func (e *engine) storageReady() error {
	if e.store.Health() != nil {
		if err := e.store.Probe(); err != nil {
			e.outage.failed(err)
			return err
		}
	}
	if err := e.auditReady(); err != nil {
		e.outage.failed(err)
		return err
	}
	if e.outage.resuming {
		if err := e.resume(); err != nil {
			e.outage.retryLater("resume the league", err)
			return err
		}
		e.outage.resuming = false
	}
	e.storageBack()
	return nil
}

// auditReady reopens and reconciles an audit log that lost lines since the last time.
func (e *engine) auditReady() error {
	lg, ok := e.opt.Audit.(auditHealth)
	if !ok {
		return nil
	}
	failures := lg.Failures()
	if failures == e.outage.auditSeen {
		return nil
	}
	if err := lg.Probe(); err != nil {
		return err
	}
	rounds, err := e.store.Schedule()
	if err != nil {
		return err
	}
	if err := e.reconcileAudit(rounds); err != nil {
		return err
	}
	e.outage.auditSeen = failures
	return nil
}

// failed notes an outage and arms its retry.
func (o *outage) failed(err error) {
	now := o.now()
	if o.since.IsZero() {
		o.since = now
		o.log.Error().Err(err).Msg("storage failing: the league is degraded, nothing is changed until writes succeed again")
		o.cause = storageCause(err)
		o.hub.Publish(events.StorageDegraded, "", o.status())
	}
	o.cause = storageCause(err)
	o.arm(now.Add(storageRetry))
}

// retryLater keeps a decision that failed after a committed change for the alarm, which
// tries it again once storage takes writes.
func (o *outage) retryLater(what string, err error) {
	o.log.Error().Err(err).Msg(what + ": tried again in a second")
	o.retry = true
	if storageFailure(err) {
		o.failed(err)
		return
	}
	o.arm(o.now().Add(storageRetry))
}

// storageBack ends an outage: the matches in flight get back the time it lasted, and so
// does an open registration window, since no agent could change anything meanwhile.
func (e *engine) storageBack() {
	if e.outage.since.IsZero() {
		return
	}
	lost := e.opt.Now().Sub(e.outage.since)
	e.log.Info().Dur("outage", lost).Msg("storage takes writes again: the league goes on")
	e.outage.since, e.outage.cause = time.Time{}, ""
	e.hub.Publish(events.StorageRestored, "", map[string]any{"outage_ms": lost.Milliseconds()})
	for _, mt := range e.fx.inFlight() {
		mt.progress.since = mt.progress.since.Add(lost)
		e.setDeadline(mt)
	}
	if e.state == StateRegistration {
		e.window.extend(lost)
		if !e.closed {
			e.window.arm()
		}
	}
}

// retryDecisions runs again the decisions kept by retryLater.
func (e *engine) retryDecisions() {
	if !e.outage.retry {
		return
	}
	e.outage.retry = false
	for _, mt := range e.fx.inFlight() {
		if mt.notTaken != nil {
			e.putBack(mt)
		}
	}
	if e.state == StateScheduling {
		if err := e.activate(); err != nil {
			e.outage.retryLater("activate league", err)
		}
		return
	}
	if err := e.maybeCloseRegistration("retry"); err != nil {
		e.outage.retryLater("close registration", err)
		return
	}
	if err := e.settle(); err != nil {
		e.outage.retryLater("settle", err)
	}
}

// StorageStatus is the state of the League Manager's storage, in /health and /status.
type StorageStatus struct {
	// Degraded is set while the database or the audit log fails to take writes.
	Degraded bool   `json:"degraded"`
	Cause    string `json:"cause,omitempty"`
	Since    string `json:"since,omitempty"`
}

// status is the storage's state for /health and /status.
func (o *outage) status() StorageStatus {
	if o.since.IsZero() {
		return StorageStatus{}
	}
	return StorageStatus{Degraded: true, Cause: o.cause, Since: protocol.Now(o.since)}
}
