package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// floor is what bare net/http does on loopback on this machine: the most a league of
// HTTP exchanges could hope for.
type floor struct {
	sequential float64       // round trips per second, one after the other
	roundTrip  time.Duration // of one sequential round trip
	concurrent float64       // round trips per second, workers at once
	workers    int
}

// floorBody is about the size of a small league message.
var floorBody = bytes.Repeat([]byte("x"), 512)

// newEchoServer is the floor's server: it answers a POST with its body.
func newEchoServer() *http.Server {
	return &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "use POST", http.StatusMethodNotAllowed)
			return
		}
		_, _ = io.Copy(w, r.Body)
	}), ReadHeaderTimeout: 5 * time.Second}
}

// measureFloor serves an echo handler on 127.0.0.1:0 and posts to it through a keep-alive
// client for d sequentially, then for d from 2×GOMAXPROCS goroutines.
func measureFloor(ctx context.Context, d time.Duration) (floor, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return floor{}, fmt.Errorf("floor: listen: %w", err)
	}
	srv := newEchoServer()
	served := make(chan error, 1)
	// Ends when Shutdown below closes the listener.
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		_ = srv.Shutdown(context.WithoutCancel(ctx))
		<-served
	}()
	workers := 2 * runtime.GOMAXPROCS(0)
	tr := &http.Transport{MaxIdleConnsPerHost: workers, MaxIdleConns: workers}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	url := "http://" + ln.Addr().String() + "/"

	var f floor
	n, elapsed, err := echoFor(ctx, client, url, d, 1)
	if err != nil {
		return f, err
	}
	f.sequential = float64(n) / elapsed.Seconds()
	f.roundTrip = elapsed / time.Duration(n)
	n, elapsed, err = echoFor(ctx, client, url, d, workers)
	if err != nil {
		return f, err
	}
	f.concurrent, f.workers = float64(n)/elapsed.Seconds(), workers
	return f, nil
}

// echoFor posts to url from workers goroutines until d has passed and returns the round
// trips done and the time they took.
func echoFor(ctx context.Context, client *http.Client, url string, d time.Duration, workers int) (int64, time.Duration, error) {
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	start := time.Now()
	deadline := start.Add(d)
	for w := range workers {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if err := echoOnce(ctx, client, url); err != nil {
					errs[w] = err
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return 0, 0, fmt.Errorf("floor: %w", err)
	}
	if done.Load() == 0 {
		return 0, 0, errors.New("floor: no round trip completed")
	}
	return done.Load(), elapsed, nil
}

func echoOnce(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(floorBody))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	// Read to the end, so the connection is kept for the next request.
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK || n != int64(len(floorBody)) {
		return fmt.Errorf("echo answered %s with %d bytes, want 200 with %d", res.Status, n, len(floorBody))
	}
	return nil
}
