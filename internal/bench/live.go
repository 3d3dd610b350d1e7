package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentleague/agentleague/league/events"
)

// liveWatch follows the League Manager's live event stream (GET /events, Server-Sent
// Events) as the dashboard does: it counts the moves shown and notes when the league
// completed. Like a browser, it resumes with Last-Event-ID when the stream is cut (the
// League Manager drops a client that falls behind).
type liveWatch struct {
	url string
	// connected is closed once the first stream is open; the events before it are in
	// the League Manager's backlog, which a new stream starts with.
	connected chan struct{}
	// completed is closed when league_completed arrives.
	completed chan struct{}
	// done is closed when run returns.
	done chan struct{}

	mu          sync.Mutex
	moves       int
	completedAt time.Time
	err         error // why the last stream ended before league_completed
}

func newLiveWatch(base string) *liveWatch {
	return &liveWatch{url: base + "/events", connected: make(chan struct{}), completed: make(chan struct{}), done: make(chan struct{})}
}

// run reads the stream until league_completed arrives or ctx ends.
func (lw *liveWatch) run(ctx context.Context) {
	defer close(lw.done)
	var lastID uint64
	var once sync.Once
	for ctx.Err() == nil {
		err := lw.stream(ctx, &lastID, func() { once.Do(func() { close(lw.connected) }) })
		select {
		case <-lw.completed:
			return
		default:
		}
		lw.mu.Lock()
		lw.err = err
		lw.mu.Unlock()
		// A short pause before resuming, as EventSource's retry does.
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stream reads one connection's events; it returns nil when league_completed arrived.
func (lw *liveWatch) stream(ctx context.Context, lastID *uint64, opened func()) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, lw.url, nil)
	if err != nil {
		return fmt.Errorf("live stream: %w", err)
	}
	if *lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(*lastID, 10))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("live stream: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("live stream: GET %s: %s", lw.url, res.Status)
	}
	opened()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var id uint64
	var typ string
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("id: ")):
			id, _ = strconv.ParseUint(string(line[4:]), 10, 64)
		case bytes.HasPrefix(line, []byte("event: ")):
			typ = string(line[7:])
		case len(line) == 0 && typ != "":
			// The end of an event: ids only grow, so one seen before is skipped.
			if id > *lastID {
				*lastID = id
				if lw.note(typ, time.Now()) {
					return nil
				}
			}
			id, typ = 0, ""
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("live stream: %w", err)
	}
	return fmt.Errorf("live stream: %s ended before league_completed", lw.url)
}

// note counts one event that arrived at; it reports whether the league completed.
func (lw *liveWatch) note(typ string, at time.Time) bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	switch typ {
	case events.MoveMade:
		lw.moves++
	case events.LeagueCompleted:
		lw.completedAt = at
		close(lw.completed)
		return true
	}
	return false
}

// lastErr is why the last stream ended early, if one did.
func (lw *liveWatch) lastErr() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.err
}

// seen returns the moves counted and the moment the league completed (zero if it did
// not); call it once run has returned.
func (lw *liveWatch) seen() (moves int, completedAt time.Time) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.moves, lw.completedAt
}
