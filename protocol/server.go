package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/rs/zerolog"
)

// MaxBatch bounds the number of calls in one JSON-RPC batch.
const MaxBatch = 32

// Handler answers one validated message. Returning an *Error sends that error; any
// other error is logged and answered as INTERNAL without details.
type Handler interface {
	Handle(ctx context.Context, m *Message) (*Message, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, m *Message) (*Message, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, m *Message) (*Message, error) { return f(ctx, m) }

// Exchange is one request and its answer as they crossed the wire.
type Exchange struct {
	// Inbound is true when this process received the request.
	Inbound bool
	// Peer is the other side: the sender for inbound requests, the destination otherwise.
	Peer           string
	ConversationID string
	Request        json.RawMessage
	// Response is nil when no answer arrived (transport failure) or none is due (notification).
	Response json.RawMessage
}

// Recorder receives every exchange; for inbound ones before the answer leaves, so an
// audit log can make it durable first. A failure to record is logged and changes no
// answer: the handler has already committed what the answer says.
type Recorder interface {
	Record(ex Exchange) error
}

// Server serves league.v2 over JSON-RPC 2.0 on POST.
type Server struct {
	handler   Handler
	validator *Validator
	recorder  Recorder
	log       zerolog.Logger
	// exchanges counts the request bodies Process has answered (a batch is one).
	exchanges atomic.Int64
}

// NewServer builds a server; recorder may be nil.
func NewServer(h Handler, v *Validator, rec Recorder, log zerolog.Logger) *Server {
	return &Server{handler: h, validator: v, recorder: rec, log: log}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "request body larger than 1 MiB", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read request body", http.StatusBadRequest)
		return
	}
	out := s.Process(r.Context(), body)
	if out == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// Exchanges is the number of request bodies this server has processed: one per HTTP
// exchange, however it was answered.
func (s *Server) Exchanges() int64 { return s.exchanges.Load() }

// Process answers one request body: a call, a notification or a batch. It returns
// nil when nothing is to be sent back.
func (s *Server) Process(ctx context.Context, body []byte) []byte {
	s.exchanges.Add(1)
	v, err := decodeValue(body)
	if err != nil {
		resp := errorResponse(nullID, Errorf(ReasonParseError, "parse error: body is not valid JSON"))
		return s.finish(Exchange{Inbound: true, Request: body}, resp)
	}
	batch, isBatch := v.([]any)
	if !isBatch {
		return s.processOne(ctx, body, v)
	}
	if len(batch) == 0 || len(batch) > MaxBatch {
		resp := errorResponse(nullID, Errorf(ReasonInvalidRequest, "invalid request: a batch holds 1 to %d calls", MaxBatch))
		return s.finish(Exchange{Inbound: true, Request: body}, resp)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		resp := errorResponse(nullID, Errorf(ReasonParseError, "parse error: body is not valid JSON"))
		return s.finish(Exchange{Inbound: true, Request: body}, resp)
	}
	var answers []json.RawMessage
	for i, elem := range batch {
		if out := s.processOne(ctx, raws[i], elem); out != nil {
			answers = append(answers, out)
		}
	}
	if len(answers) == 0 {
		return nil
	}
	out, _ := json.Marshal(answers)
	return out
}

func (s *Server) processOne(ctx context.Context, raw []byte, v any) []byte {
	ex := Exchange{Inbound: true, Request: raw}
	obj, ok := v.(map[string]any)
	if !ok {
		return s.finish(ex, errorResponse(nullID, Errorf(ReasonInvalidRequest, "invalid request: expected a JSON-RPC request object")))
	}
	// The claimed sender and conversation go to the recorder even when the request is refused.
	ex.Peer, ex.ConversationID = envelopeIdentity(obj["params"])
	id, hasID, idOK := requestID(obj)
	if !idOK {
		return s.finish(ex, errorResponse(nullID, Errorf(ReasonInvalidRequest, "invalid request: id must be a string, a number or null")))
	}
	// An invalid request object is answered even without an id (JSON-RPC 2.0 section 5:
	// id null when it cannot be read); only a valid notification goes unanswered.
	if obj["jsonrpc"] != JSONRPCVersion {
		return s.finish(ex, errorResponse(id, Errorf(ReasonInvalidRequest, `invalid request: jsonrpc must be "2.0"`)))
	}
	method, ok := obj["method"].(string)
	if !ok {
		return s.finish(ex, errorResponse(id, Errorf(ReasonInvalidRequest, "invalid request: method must be a string")))
	}
	// Sorted, so that of several unknown members the same one is named every time.
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		switch k {
		case "jsonrpc", "method", "params", "id":
		default:
			return s.finish(ex, errorResponse(id, Errorf(ReasonInvalidRequest, "invalid request: unknown member %q", k)))
		}
	}
	respond := func(resp *Response) []byte { return s.reply(ex, hasID, resp) }
	if method != Method {
		return respond(errorResponse(id, Errorf(ReasonMethodNotFound, "method not found: only %q is served", Method)))
	}
	params, ok := obj["params"]
	if !ok {
		return respond(errorResponse(id, Errorf(ReasonSchemaViolation, "invalid params: missing params")))
	}
	if vs := s.validator.ValidateParams(params); len(vs) > 0 {
		e := Errorf(ReasonSchemaViolation, "invalid params: %d schema violation(s)", len(vs))
		for _, v := range vs {
			e.Data.Violations = append(e.Data.Violations, v.String())
		}
		e.Data.ConversationID = ex.ConversationID
		return respond(errorResponse(id, e))
	}
	// Validated, so the envelope's members are strings: read them from the value decoded
	// above instead of decoding the request a second time.
	paramsObj, _ := params.(map[string]any)
	msg, ok := messageOf(raw, paramsObj)
	if !ok {
		return respond(errorResponse(id, Errorf(ReasonSchemaViolation, "invalid params: cannot decode envelope and payload")))
	}
	return s.answer(ctx, ex, id, hasID, msg)
}

// answer hands a validated message to the handler and encodes its answer, or nothing
// for a notification (hasID false).
func (s *Server) answer(ctx context.Context, ex Exchange, id json.RawMessage, hasID bool, msg *Message) []byte {
	respond := func(resp *Response) []byte { return s.reply(ex, hasID, resp) }
	log := s.log.With().Str("conversation_id", ex.ConversationID).Str("message_type", msg.Envelope.MessageType).Logger()
	ctx = log.WithContext(ctx)
	answer, err := s.handler.Handle(ctx, msg)
	switch {
	case err != nil:
	case answer == nil:
		if hasID {
			err = errors.New("handler returned no answer")
		}
	case s.validator.SelfCheck:
		if verr := s.validator.ValidateMessage(answer); verr != nil {
			err = fmt.Errorf("answer: %w", verr)
		}
	}
	if err != nil {
		pe := publicError(err)
		if pe == nil {
			log.Error().Err(err).Msg("handler failed")
			pe = Errorf(ReasonInternal, "internal error")
		}
		pe.Data.ConversationID = ex.ConversationID
		log.Debug().Str("reason", string(pe.Data.Reason)).Msg("request refused")
		return respond(errorResponse(id, pe))
	}
	return respond(&Response{JSONRPC: JSONRPCVersion, Result: answer, ID: id})
}

// reply records the exchange and encodes resp, or only records it for a notification
// (hasID false), which is never answered (JSON-RPC 2.0 section 4.1).
func (s *Server) reply(ex Exchange, hasID bool, resp *Response) []byte {
	if !hasID {
		s.finish(ex, nil)
		return nil
	}
	return s.finish(ex, resp)
}

// publicError returns a copy of the *Error err carries, with the code its reason fixes,
// or nil when err carries none (or one without a reason) and must be answered as INTERNAL.
// The copy keeps the handler's value untouched: it may be shared between requests.
func publicError(err error) *Error {
	var pe *Error
	if !errors.As(err, &pe) || pe == nil || pe.Data == nil || pe.Data.Reason == "" {
		return nil
	}
	return &Error{
		Code:    pe.Data.Reason.Code(),
		Message: pe.Message,
		Data: &ErrorData{
			Reason:     pe.Data.Reason,
			Details:    pe.Data.Details,
			Violations: slices.Clone(pe.Data.Violations),
		},
	}
}

// envelopeIdentity reads the claimed sender and conversation id of a decoded params value.
func envelopeIdentity(params any) (sender, conversationID string) {
	p, _ := params.(map[string]any)
	env, _ := p["envelope"].(map[string]any)
	sender, _ = env["sender"].(string)
	conversationID, _ = env["conversation_id"].(string)
	return sender, conversationID
}

// finish records the exchange and encodes the answer.
func (s *Server) finish(ex Exchange, resp *Response) []byte {
	var out []byte
	if resp != nil {
		out, _ = json.Marshal(resp)
		ex.Response = out
	}
	if s.recorder != nil {
		// The answer stands: what it acknowledges is already in the receiver's database,
		// which leads; the recorder owns catching up with what it could not record.
		if err := s.recorder.Record(ex); err != nil {
			s.log.Error().Err(err).Str("conversation_id", ex.ConversationID).Msg("record exchange")
		}
	}
	return out
}

// maxDetailsBytes bounds data.details: the violations of a large request could otherwise
// make the answer larger than the request.
const maxDetailsBytes = 4096

// errorResponse answers with e, filling data.details (seed 004 section 4.1) when the
// error does not carry its own: the violations joined by "; ", else the message.
// INTERNAL says nothing more than "internal error", so it gets none.
func errorResponse(id json.RawMessage, e *Error) *Response {
	if e.Data != nil && e.Data.Details == "" && e.Data.Reason != ReasonInternal {
		d := e.Message
		if len(e.Data.Violations) > 0 {
			d = strings.Join(e.Data.Violations, "; ")
		}
		e.Data.Details = truncateUTF8(d, maxDetailsBytes)
	}
	return &Response{JSONRPC: JSONRPCVersion, Error: e, ID: id}
}

// truncateUTF8 cuts s to at most n bytes without splitting a character, marking the cut.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// requestID reads the id member: present or not, and whether it has a legal type.
func requestID(obj map[string]any) (id json.RawMessage, present, ok bool) {
	v, present := obj["id"]
	if !present {
		return nullID, false, true
	}
	switch v.(type) {
	case nil, string, json.Number:
		b, _ := json.Marshal(v)
		return bytes.TrimSpace(b), true, true
	}
	return nullID, true, false
}
