package audit

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// disk injects faults into the files a Log opens: a WriteAt that writes only the bytes
// left in its budget and then fails as a full disk does, fsyncs and truncates that
// fail, and a hook that runs in every fsync. A reopened file shares them.
type disk struct {
	mu        sync.Mutex
	budget    int64 // bytes writes may still take; < 0: no limit
	failSyncs int   // the next fsyncs that fail
	failCuts  int   // the next truncates that fail
	failOpens int   // the next opens that fail
	onSync    func(n int32)
	syncs     atomic.Int32
}

type faultyFile struct {
	*os.File
	d *disk
}

func (d *disk) open(path string) (file, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failOpens > 0 {
		d.failOpens--
		return nil, syscall.EIO
	}
	f, err := openOS(path)
	if err != nil {
		return nil, err
	}
	return &faultyFile{File: f.(*os.File), d: d}, nil
}

func (f *faultyFile) WriteAt(b []byte, off int64) (int, error) {
	f.d.mu.Lock()
	budget := f.d.budget
	if budget >= 0 {
		f.d.budget = max(budget-int64(len(b)), 0)
	}
	f.d.mu.Unlock()
	if budget >= 0 && int64(len(b)) > budget {
		n, _ := f.File.WriteAt(b[:budget], off)
		return n, syscall.ENOSPC
	}
	return f.File.WriteAt(b, off)
}

func (f *faultyFile) Sync() error {
	n := f.d.syncs.Add(1)
	if f.d.onSync != nil {
		f.d.onSync(n)
	}
	f.d.mu.Lock()
	fail := f.d.failSyncs > 0
	if fail {
		f.d.failSyncs--
	}
	f.d.mu.Unlock()
	if fail {
		return syscall.EIO
	}
	return f.File.Sync()
}

func (f *faultyFile) Truncate(size int64) error {
	f.d.mu.Lock()
	fail := f.d.failCuts > 0
	if fail {
		f.d.failCuts--
	}
	f.d.mu.Unlock()
	if fail {
		return syscall.EIO
	}
	return f.File.Truncate(size)
}

func (d *disk) set(fn func(d *disk)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fn(d)
}

func openFaulty(t *testing.T) (*Log, *disk, string) {
	t.Helper()
	d := &disk{budget: -1}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := openWith(path, self, d.open)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, d, path
}

func exchange(i int) protocol.Exchange {
	return protocol.Exchange{Inbound: true, Peer: "referee:ref1", ConversationID: fmt.Sprintf("c-%d", i),
		Request:  []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"league.handle"}`, i)),
		Response: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i))}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkLog reads the file and checks its chain and the log's mark, returning the
// conversation ids it holds in order.
func checkLog(t *testing.T, a *Log, path string) []string {
	t.Helper()
	entries, err := Read(path)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if err := CheckChain(entries); err != nil {
		t.Fatalf("chain: %v", err)
	}
	lines, hash := a.Mark()
	if err := CheckMark(entries, lines, hash); err != nil {
		t.Fatalf("mark: %v", err)
	}
	var ids []string
	for _, e := range entries {
		if e.Direction == DirRequest {
			ids = append(ids, e.ConversationID)
		}
	}
	return ids
}

// A write that fails after any number of bytes leaves the file as it was; the failure is
// returned, and the next exchange continues the chain from the last whole line.
func TestFailedWriteLeavesTheFileAsItWas(t *testing.T) {
	probe, _, probePath := openFaulty(t)
	if err := probe.Record(exchange(1)); err != nil {
		t.Fatal(err)
	}
	size := int64(len(readFile(t, probePath)))
	for _, n := range []int64{0, 1, size / 2, size - 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			a, d, path := openFaulty(t)
			if err := a.Record(exchange(1)); err != nil {
				t.Fatal(err)
			}
			before := readFile(t, path)
			marked, _ := a.Mark()
			d.set(func(d *disk) { d.budget = n })
			err := a.Record(exchange(2))
			if !errors.Is(err, ErrUnavailable) || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Record on a full disk: %v, want ErrUnavailable wrapping ENOSPC", err)
			}
			if a.Health() == nil || a.Failures() != 1 {
				t.Errorf("health %v, failures %d after a failed write", a.Health(), a.Failures())
			}
			if after := readFile(t, path); !bytes.Equal(after, before) {
				t.Fatalf("the failed write left %d bytes behind:\n%s", len(after)-len(before), after[len(before):])
			}
			if m, _ := a.Mark(); m != marked {
				t.Errorf("mark %d after a failed write, want %d", m, marked)
			}
			d.set(func(d *disk) { d.budget = -1 })
			if err := a.Record(exchange(3)); err != nil {
				t.Fatal(err)
			}
			if a.Health() != nil {
				t.Errorf("health %v after a durable append", a.Health())
			}
			if ids := checkLog(t, a, path); strings.Join(ids, ",") != "c-1,c-3" {
				t.Errorf("log holds %v, want c-1,c-3", ids)
			}
		})
	}
}

// A failed write whose cut also fails leaves the log refusing lines until a reopen cuts
// the file back to its last durable line.
func TestFailedCutIsRepairedByReopen(t *testing.T) {
	a, d, path := openFaulty(t)
	if err := a.Record(exchange(1)); err != nil {
		t.Fatal(err)
	}
	d.set(func(d *disk) { d.budget, d.failCuts = 7, 1 })
	if err := a.Record(exchange(2)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Record: %v", err)
	}
	d.set(func(d *disk) { d.budget = -1 })
	if err := a.Record(exchange(3)); err != nil {
		t.Fatal(err)
	}
	if ids := checkLog(t, a, path); strings.Join(ids, ",") != "c-1,c-3" {
		t.Errorf("log holds %v, want c-1,c-3", ids)
	}
}

// A failed fsync is not retried on the same descriptor: the log refuses lines until it
// has reopened the file and cut it back to the last durable line, whose hash it checks.
func TestFailedSyncReopensAndCutsBack(t *testing.T) {
	a, d, path := openFaulty(t)
	if err := a.Record(exchange(1)); err != nil {
		t.Fatal(err)
	}
	durable, hash := a.Mark()
	d.set(func(d *disk) { d.failSyncs = 1 })
	if err := a.Record(exchange(2)); !errors.Is(err, ErrUnavailable) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("Record with a failing fsync: %v", err)
	}
	if n, h := a.Mark(); n != durable || h != hash {
		t.Errorf("mark moved to line %d after a failed fsync, want %d", n, durable)
	}
	// The reopen itself fails first: still unavailable, nothing written.
	d.set(func(d *disk) { d.failOpens = 1 })
	if err := a.Probe(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Probe with a failing open: %v", err)
	}
	if err := a.Record(exchange(3)); err != nil {
		t.Fatalf("Record after the disk came back: %v", err)
	}
	if ids := checkLog(t, a, path); strings.Join(ids, ",") != "c-1,c-3" {
		t.Errorf("log holds %v, want c-1,c-3: the unsynced exchange is cut", ids)
	}
}

// A reopen that finds the last durable line changed on disk refuses to go on.
func TestReopenRefusesAChangedFile(t *testing.T) {
	a, d, path := openFaulty(t)
	for i := 1; i <= 2; i++ {
		if err := a.Record(exchange(i)); err != nil {
			t.Fatal(err)
		}
	}
	d.set(func(d *disk) { d.failSyncs = 1 })
	if err := a.Record(exchange(3)); err == nil {
		t.Fatal("Record with a failing fsync succeeded")
	}
	b := readFile(t, path)
	lines := bytes.SplitAfter(b, []byte("\n"))
	last := len(lines) - 4 // lines of exchange 2's response line, before exchange 3's two and the empty tail
	lines[last] = bytes.Replace(lines[last], []byte(`"result"`), []byte(`"resulT"`), 1)
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	err := a.Record(exchange(4))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "line 4 changed on disk") {
		t.Fatalf("Record after the file changed: %v, want line 4 changed on disk", err)
	}
}

// Writers sharing a failed fsync all fail: none is told its lines are durable.
func TestGroupCommitSharesAFailedSync(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			a, d, path := openFaulty(t)
			release := make(chan struct{})
			entered := make(chan struct{})
			d.set(func(d *disk) {
				d.onSync = func(n int32) {
					if n == 2 { // the first fsync after Open's
						close(entered)
						<-release
					}
				}
				if fail {
					d.failSyncs = 0
				}
			})
			const writers = 8
			errs := make(chan error, writers+1)
			go func() { errs <- a.Record(exchange(0)) }()
			<-entered
			if fail {
				d.set(func(d *disk) { d.failSyncs = 1 })
			}
			for i := range writers {
				go func() { errs <- a.Record(exchange(i + 1)) }()
			}
			// Every writer has appended (the second fsync waits for the first).
			for {
				a.mu.Lock()
				n := a.at.lines
				a.mu.Unlock()
				if n == 2*(writers+1) {
					break
				}
				runtimeGosched()
			}
			close(release)
			var failed int
			for range writers + 1 {
				if err := <-errs; err != nil {
					failed++
				}
			}
			want := 0
			if fail {
				want = writers + 1
			}
			if failed != want {
				t.Errorf("%d writers failed, want %d", failed, want)
			}
			if n := d.syncs.Load(); !fail && n != 3 {
				t.Errorf("%d fsyncs (Open's included) for %d exchanges recorded during the first, want 3", n, writers)
			}
			if err := a.Probe(); err != nil {
				t.Fatal(err)
			}
			ids := checkLog(t, a, path)
			if len(ids) != writers+1-want {
				t.Errorf("log holds %d exchanges, want %d", len(ids), writers+1-want)
			}
		})
	}
}

// Under random write, cut and fsync failures every exchange that Record acknowledged is
// in the log after a restart, in order, and the chain is whole.
func TestNothingAcknowledgedIsLost(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			a, d, path := openFaulty(t)
			var acked []string
			for i := range 60 {
				d.set(func(d *disk) {
					d.budget, d.failSyncs, d.failCuts, d.failOpens = -1, 0, 0, 0
					switch rng.IntN(6) {
					case 0:
						d.budget = rng.Int64N(200)
					case 1:
						d.failSyncs = 1
					case 2:
						d.budget, d.failCuts = rng.Int64N(200), 1
					case 3:
						d.failOpens = 1
					}
				})
				if err := a.Record(exchange(i)); err == nil {
					acked = append(acked, fmt.Sprintf("c-%d", i))
				}
			}
			d.set(func(d *disk) { d.budget, d.failSyncs, d.failCuts, d.failOpens = -1, 0, 0, 0 })
			a.Close()
			b, err := Open(path, self) // the restart: a torn tail would be cut here
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			entries, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckChain(entries); err != nil {
				t.Fatal(err)
			}
			var logged []string
			for _, e := range entries {
				if e.Direction == DirRequest {
					logged = append(logged, e.ConversationID)
				}
				if e.Direction == DirRecovery {
					t.Errorf("line %d: a torn tail was cut at restart: a failed append left bytes behind", e.Line)
				}
			}
			if strings.Join(logged, ",") != strings.Join(acked, ",") {
				t.Errorf("log holds %v\nacknowledged  %v", logged, acked)
			}
		})
	}
}

func runtimeGosched() { runtime.Gosched() }

// A last line cut short and then ended by a newline (an editor, or `echo >>`) is torn
// too: the League Manager cuts it at start-up rather than chain onto it, as verify
// tells it apart from a line changed in the middle.
func TestOpenCutsATornLineEndedByANewline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := open(t, path)
	if err := a.Record(exchange(1)); err != nil {
		t.Fatal(err)
	}
	closeLog(t, a)
	whole := readFile(t, path)
	torn := []byte(`{"log_id":"x","timestamp":"2026-01-0` + "\n")
	if err := os.WriteFile(path, append(bytes.Clone(whole), torn...), 0o600); err != nil {
		t.Fatal(err)
	}
	a = open(t, path)
	if err := a.Record(exchange(2)); err != nil {
		t.Fatal(err)
	}
	if ids := checkLog(t, a, path); strings.Join(ids, ",") != "c-1,c-2" {
		t.Errorf("log holds %v, want c-1,c-2", ids)
	}
	closeLog(t, a)
	if after := readFile(t, path); !bytes.HasPrefix(after, whole) {
		t.Error("the cut changed the complete lines")
	}
}
