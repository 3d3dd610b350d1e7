package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/agentleague/agentleague/internal/cli"
)

// The floor between processes: the bench posts to an echo server in a child process,
// so each round trip wakes another process (epoll, futexes, context switches) as a
// league's exchanges do, which the floor in one process does not pay.

// EchoCommand is the internal command that runs the echo server of the floor between
// processes: Run starts its own binary with it, so a command that calls Run also runs
// Echo for it. It is left out of the usage: nobody runs it by hand.
const EchoCommand = "bench-echo"

const (
	// echoStartTime bounds the wait for the echo server's address.
	echoStartTime = 10 * time.Second
	// echoStopTime is how long the echo server may take to leave once its stdin closes,
	// before it is killed.
	echoStopTime = 5 * time.Second
)

// processFloor is the floor between two processes: the same echo and round trips as
// the floor in one process, and the CPU both processes spent on them.
type processFloor struct {
	floor
	// CPU per sequential round trip of the bench (the client) and of the echo server.
	clientCPU, serverCPU time.Duration
	// CPU per concurrent round trip, of both processes.
	concurrentCPU time.Duration
}

// cpu is the CPU both processes spent per sequential round trip.
func (pf processFloor) cpu() time.Duration { return pf.clientCPU + pf.serverCPU }

// Echo is league bench-echo: it serves the floor's echo on --addr, prints the
// address it listens on as one line on stdout, and serves until stdin ends (league bench
// closes it, or dies) or ctx does.
func Echo(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fset := flag.NewFlagSet("league "+EchoCommand, flag.ContinueOnError)
	addr := fset.String("addr", "127.0.0.1:0", "address to listen on")
	if rest, err := cli.Parse(fset, args); err != nil || len(rest) > 0 {
		return cli.UsageError{Err: fmt.Errorf("bad arguments %q: %v", args, err)}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := newEchoServer()
	served := make(chan error, 1)
	// Ends when Shutdown or Close closes the listener.
	go func() { served <- srv.Serve(ln) }()
	if _, err := fmt.Fprintln(stdout, ln.Addr()); err != nil {
		_ = srv.Close()
		<-served
		return fmt.Errorf("print address: %w", err)
	}
	eof := make(chan struct{})
	// Ends at the end of stdin; when ctx ends first, the process exits with it blocked.
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), echoStopTime)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-served
	return err
}

// echoChild is a running league bench-echo.
type echoChild struct {
	cmd    *exec.Cmd
	stdin  io.Closer
	stderr *bytes.Buffer // read only after Wait, which ends its writer
	kill   context.CancelFunc
	addr   string
}

// startEchoChild starts bin bench-echo and waits for the address it listens on. The
// child is killed when ctx ends.
func startEchoChild(ctx context.Context, bin string) (*echoChild, error) {
	ctx, kill := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, bin, EchoCommand)
	// The child dies with the bench even if the bench is killed outright.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	e := &echoChild{cmd: cmd, stderr: new(bytes.Buffer), kill: kill}
	cmd.Stderr = e.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		kill()
		return nil, fmt.Errorf("echo server: %w", err)
	}
	e.stdin = stdin
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		kill()
		return nil, fmt.Errorf("echo server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		kill()
		return nil, fmt.Errorf("start echo server: %w", err)
	}
	line := make(chan string, 1)
	// Ends at the first line or when the child's stdout closes: it exits or is killed.
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	timer := time.NewTimer(echoStartTime)
	defer timer.Stop()
	select {
	case e.addr = <-line:
	case <-timer.C:
		// Killed first, so the reader ends before Wait closes its pipe.
		kill()
		<-line
	}
	if _, _, err := net.SplitHostPort(e.addr); err != nil {
		return nil, errors.Join(fmt.Errorf("echo server printed no address (%q)", e.addr), e.stop())
	}
	return e, nil
}

// stop closes the child's stdin, which makes it leave, kills it if it has not left
// after echoStopTime, and reaps it.
func (e *echoChild) stop() error {
	defer e.kill()
	_ = e.stdin.Close()
	t := time.AfterFunc(echoStopTime, e.kill)
	defer t.Stop()
	if err := e.cmd.Wait(); err != nil {
		if msg := strings.TrimSpace(e.stderr.String()); msg != "" {
			return fmt.Errorf("echo server: %w: %s", err, msg)
		}
		return fmt.Errorf("echo server: %w", err)
	}
	return nil
}

// cpu is the CPU seconds the child has used so far.
func (e *echoChild) cpu() (float64, error) {
	s, err := pidCPUSeconds(e.cmd.Process.Pid)
	if err != nil {
		return 0, fmt.Errorf("cpu time of the echo server: %w", err)
	}
	return s, nil
}

// selfCPUSeconds is the CPU this process has used so far: finer than /proc/self/stat,
// which counts in hundredths of a second.
func selfCPUSeconds() (float64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("cpu time of the bench: %w", err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9, nil
}

// measureProcessFloor starts bin bench-echo and posts to it through a keep-alive client
// for d sequentially, then for d from workers goroutines, reading the CPU of this
// process and of the child around each. Nothing else may run in this process meanwhile:
// its CPU counts as the client's. The child is stopped and reaped before it returns.
func measureProcessFloor(ctx context.Context, bin string, d time.Duration, workers int) (pf processFloor, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("floor between processes: %w", err)
		}
	}()
	echo, err := startEchoChild(ctx, bin)
	if err != nil {
		return pf, err
	}
	// Before the prefix above: deferred later, run earlier.
	defer func() {
		// Once ctx has ended the child was killed: its exit says nothing new.
		if serr := echo.stop(); ctx.Err() == nil {
			err = errors.Join(err, serr)
		}
	}()
	tr := &http.Transport{MaxIdleConnsPerHost: workers, MaxIdleConns: workers}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	url := "http://" + echo.addr + "/"

	// measure runs one half: round trips, their time, and the CPU per round trip of
	// this process and of the child.
	measure := func(w int) (n int64, elapsed, self, child time.Duration, err error) {
		self0, err := selfCPUSeconds()
		if err != nil {
			return 0, 0, 0, 0, err
		}
		child0, err := echo.cpu()
		if err != nil {
			return 0, 0, 0, 0, err
		}
		if n, elapsed, err = echoFor(ctx, client, url, d, w); err != nil {
			return 0, 0, 0, 0, err
		}
		self1, err := selfCPUSeconds()
		if err != nil {
			return 0, 0, 0, 0, err
		}
		child1, err := echo.cpu()
		if err != nil {
			return 0, 0, 0, 0, err
		}
		per := func(s float64) time.Duration { return time.Duration(s * float64(time.Second) / float64(n)) }
		return n, elapsed, per(self1 - self0), per(child1 - child0), nil
	}
	n, elapsed, self, child, err := measure(1)
	if err != nil {
		return pf, err
	}
	pf.sequential, pf.roundTrip = float64(n)/elapsed.Seconds(), elapsed/time.Duration(n)
	pf.clientCPU, pf.serverCPU = self, child
	n, elapsed, self, child, err = measure(workers)
	if err != nil {
		return pf, err
	}
	pf.concurrent, pf.workers = float64(n)/elapsed.Seconds(), workers
	pf.concurrentCPU = self + child
	return pf, nil
}
