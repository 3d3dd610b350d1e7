// Package events is the League Manager's live event stream: a hub that numbers every
// event, keeps the recent ones for clients that reconnect with Last-Event-ID, and
// serves them as Server-Sent Events without ever letting a slow client slow the league.
package events

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Event types.
const (
	AgentRegistered = "agent_registered"
	RoundStarted    = "round_started"
	MatchAssigned   = "match_assigned"
	MoveMade        = "move_made"
	MatchFinished   = "match_finished"
	// MatchAbandoned: the match failed too often and will not be played.
	MatchAbandoned   = "match_abandoned"
	StandingsChanged = "standings_changed"
	LeagueCompleted  = "league_completed"
	// StorageDegraded and StorageRestored: the League Manager's database or audit log
	// stopped taking writes, and took them again.
	StorageDegraded = "storage_degraded"
	StorageRestored = "storage_restored"
	// Reset tells a client it asked to resume from an event the hub no longer holds:
	// it should reload the state instead of relying on the stream.
	Reset = "reset"
)

// Event is one numbered event. IDs increase by one across the whole league.
type Event struct {
	ID      uint64          `json:"id"`
	Type    string          `json:"type"`
	MatchID string          `json:"match_id,omitempty"`
	Time    string          `json:"time"`
	Data    json.RawMessage `json:"data"`
	// wire is the event as every stream sends it, encoded once by Publish.
	wire []byte
}

// Hub fans events out to subscribers.
type Hub struct {
	mu     sync.Mutex
	ring   []Event // the most recent events, oldest first
	keep   int
	next   uint64
	subs   map[*sub]struct{}
	closed bool
}

type sub struct {
	ch     chan Event
	filter func(Event) bool
	// lagged is closed when the subscriber fell too far behind and was dropped.
	lagged chan struct{}
}

// subBuffer is how far a client may fall behind before it is dropped; it reconnects
// and resumes from the ring with Last-Event-ID.
const subBuffer = 256

// NewHub keeps the last keep events for resuming clients.
func NewHub(keep int) *Hub {
	return &Hub{keep: keep, next: 1, subs: map[*sub]struct{}{}}
}

// Publish numbers and stores an event and hands it to every subscriber without
// blocking: a subscriber whose buffer is full is dropped.
func (h *Hub) Publish(typ, matchID string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		raw = []byte("null")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	e := Event{ID: h.next, Type: typ, MatchID: matchID, Time: time.Now().UTC().Format(time.RFC3339Nano), Data: raw}
	e.wire = e.encode()
	h.next++
	h.ring = append(h.ring, e)
	if len(h.ring) > h.keep {
		h.ring = h.ring[len(h.ring)-h.keep:]
	}
	for s := range h.subs {
		if s.filter != nil && !s.filter(e) {
			continue
		}
		select {
		case s.ch <- e:
		default:
			delete(h.subs, s)
			close(s.lagged)
		}
	}
}

// subscribe returns the stored events after lastID that pass filter and a live
// subscription; reset is set when events after lastID were already dropped.
func (h *Hub) subscribe(lastID uint64, filter func(Event) bool) (backlog []Event, s *sub, reset bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if lastID > 0 && len(h.ring) > 0 && h.ring[0].ID > lastID+1 {
		reset = true
	}
	for _, e := range h.ring {
		if e.ID > lastID && (filter == nil || filter(e)) {
			backlog = append(backlog, e)
		}
	}
	s = &sub{ch: make(chan Event, subBuffer), filter: filter, lagged: make(chan struct{})}
	if h.closed {
		close(s.lagged)
		return backlog, s, reset
	}
	h.subs[s] = struct{}{}
	return backlog, s, reset
}

func (h *Hub) unsubscribe(s *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
}

// LastID is the id of the last event published (0 before the first). A snapshot read
// together with it, under the publisher's own lock, resumes exactly after it.
func (h *Hub) LastID() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.next - 1
}

// Since returns the stored events after lastID that pass filter (for pages that load
// a snapshot first).
func (h *Hub) Since(lastID uint64, filter func(Event) bool) []Event {
	backlog, s, _ := h.subscribe(lastID, filter)
	h.unsubscribe(s)
	return backlog
}

// Close ends every stream.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		delete(h.subs, s)
		close(s.lagged)
	}
}

// keepAlive is how often an idle stream gets a comment line, so proxies and browsers
// keep the connection.
var keepAlive = 15 * time.Second

// writeWait bounds each write of a stream: a client that stops reading is cut off then,
// so its connection and goroutine do not outlive it.
var writeWait = 10 * time.Second

// ServeSSE streams events passing filter as text/event-stream, first those after the
// request's Last-Event-ID (or ?last_event_id=), then live ones. It returns when the
// client goes away, falls too far behind, or the hub closes.
func (h *Hub) ServeSSE(w http.ResponseWriter, r *http.Request, filter func(Event) bool) {
	var lastID uint64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		lastID, _ = strconv.ParseUint(v, 10, 64)
	} else if v := r.URL.Query().Get("last_event_id"); v != "" {
		lastID, _ = strconv.ParseUint(v, 10, 64)
	}
	rc := http.NewResponseController(w)
	// A stream lives longer than the server's write timeout allows a response: each
	// write gets a deadline of its own instead. (The server clears the read deadline
	// itself once a request without a body is read.)
	_ = rc.SetWriteDeadline(time.Now().Add(writeWait))
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	backlog, s, reset := h.subscribe(lastID, filter)
	defer h.unsubscribe(s)
	if reset {
		fmt.Fprintf(w, "event: %s\ndata: {}\n\n", Reset)
	}
	for _, e := range backlog {
		if writeEvent(w, e) != nil {
			return
		}
	}
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.lagged:
			return
		case e := <-s.ch:
			_ = rc.SetWriteDeadline(time.Now().Add(writeWait))
			if writeEvent(w, e) != nil {
				return
			}
			// Events published together (a batch of moves, a result and the standings
			// after it) go out in one flush, not one write each.
			for range len(s.ch) {
				if writeEvent(w, <-s.ch) != nil {
					return
				}
			}
			if rc.Flush() != nil {
				return
			}
		case <-tick.C:
			_ = rc.SetWriteDeadline(time.Now().Add(writeWait))
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

func writeEvent(w http.ResponseWriter, e Event) error {
	_, err := w.Write(e.wire)
	return err
}

// encode returns the event's SSE frame. Data is already compact JSON (Publish encoded
// it), so it is copied as it is instead of being checked and compacted again for every
// stream: with a hundred players each standings_changed carries the whole table.
func (e Event) encode() []byte {
	b := make([]byte, 0, len(e.Data)+len(e.Type)+len(e.MatchID)+len(e.Time)+96)
	b = fmt.Appendf(b, "id: %d\nevent: %s\ndata: {\"id\":%d,\"type\":", e.ID, e.Type, e.ID)
	b = appendJSONString(b, e.Type)
	if e.MatchID != "" {
		b = append(b, `,"match_id":`...)
		b = appendJSONString(b, e.MatchID)
	}
	b = append(b, `,"time":`...)
	b = appendJSONString(b, e.Time)
	b = append(b, `,"data":`...)
	b = append(b, e.Data...)
	return append(b, "}\n\n"...)
}

// appendJSONString appends s as a JSON string, escaped as encoding/json escapes it.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}
