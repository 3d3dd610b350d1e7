package league

import (
	"errors"
	"fmt"
)

// The league's refusals, in its own words. Each is a kind a refusal wraps; the edge
// (edge.go) alone turns a kind into its wire reason.
var (
	errWrongLeague        = errors.New("wrong league")
	errNotAccepted        = errors.New("message not accepted")
	errMalformed          = errors.New("malformed payload")
	errSenderMismatch     = errors.New("sender mismatch")
	errUnauthorized       = errors.New("unauthorized")
	errSuspended          = errors.New("suspended")
	errAlreadyRegistered  = errors.New("already registered")
	errInsecureEndpoint   = errors.New("insecure endpoint")
	errRegistrationClosed = errors.New("registration closed")
	errNoReferee          = errors.New("no referee registered")
	errUnsupportedGame    = errors.New("unsupported game")
	errNotActive          = errors.New("league not active")
	errUnknownRound       = errors.New("unknown round")
	errUnknownMatch       = errors.New("unknown match")
	errNotAssigned        = errors.New("not the assigned referee")
	errStaleAssignment    = errors.New("stale assignment")
	errStaleStep          = errors.New("stale step")
	errInvalidResult      = errors.New("invalid result")
	errDuplicateResult    = errors.New("duplicate result")
	errRateLimited        = errors.New("rate limited")
	errShuttingDown       = errors.New("shutting down")
	errStorageUnavailable = errors.New("storage unavailable")
)

// refusal is the league saying no: a kind and a message safe to show a remote caller,
// with the details and violations that go with it.
type refusal struct {
	kind       error
	msg        string
	details    string
	violations []string
}

// refuse builds a refusal of kind whose Error is exactly the formatted message.
func refuse(kind error, format string, args ...any) *refusal {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

func (r *refusal) Error() string { return r.msg }

// Unwrap makes errors.Is(err, kind) hold.
func (r *refusal) Unwrap() error { return r.kind }

// shuttingDown refuses what a League Manager that is shutting down no longer takes.
func shuttingDown() error {
	return refuse(errShuttingDown, "the League Manager is shutting down")
}
