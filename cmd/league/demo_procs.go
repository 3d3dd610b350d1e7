package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/protocol"
)

// Roles of the demo's processes. An agent's role and id name its output file and say
// who it is on the wire.
const (
	roleLeagueManager = "league_manager"
	roleReferee       = "referee"
	rolePlayer        = "player"
)

// demoDrain is how long the demo's League Manager and referees let matches in flight
// finish on shutdown: short, since a demo stopped early need not wait for them.
const demoDrain = 2 * time.Second

// procSet owns the demo's child processes: the League Manager and the agents. It also
// knows the extra players started by hand, which it reports but cannot stop.
type procSet struct {
	logDir string
	// out receives how the processes were stopped.
	out    io.Writer
	lm     *proc
	agents []*proc
	extras []extraAgent
}

type proc struct {
	name     string // of its output file: league_manager, referee_ref1, player_p01
	role, id string
	cmd      *exec.Cmd
	done     chan struct{} // closed once the process has exited and been reaped
	out      io.Closer
}

// sender is how the League Manager names the agent, e.g. in its audit log.
func (p *proc) sender() string {
	if p.role == roleReferee {
		return protocol.RefereeSender(p.id)
	}
	return protocol.PlayerSender(p.id)
}

func (ps *procSet) start(role, id, bin string, env []string, args ...string) error {
	name := role
	if id != "" {
		name += "_" + id
	}
	out, err := os.Create(filepath.Join(ps.logDir, name+".out"))
	if err != nil {
		return fmt.Errorf("create output file: %w", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Children die with the demo even if it is killed outright.
		Pdeathsig: syscall.SIGKILL,
		// Ctrl-C then reaches the demo alone, which stops the League Manager first; in
		// the terminal's process group every agent would get it at the same moment and
		// leave before the League Manager's notice.
		Setpgid: true,
	}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, role: role, id: id, cmd: cmd, done: make(chan struct{}), out: out}
	// Each waiter ends when its process exits.
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	if role == roleLeagueManager {
		ps.lm = p
	} else {
		ps.agents = append(ps.agents, p)
	}
	return nil
}

func (ps *procSet) all() []*proc {
	if ps.lm == nil {
		return ps.agents
	}
	return append([]*proc{ps.lm}, ps.agents...)
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// dead names a child that has exited, if any.
func (ps *procSet) dead() string {
	for _, p := range ps.all() {
		if !p.running() {
			return p.name
		}
	}
	return ""
}

// stop shuts the demo down in the protocol's order and says how each agent left. The
// League Manager gets SIGTERM; its graceful shutdown sends LEAGUE_SHUTDOWN to every
// registered agent. Once it has exited those agents have grace to leave by themselves;
// any still running then gets SIGTERM and, grace later, SIGKILL. An agent it sent no
// notice (not registered yet) has nothing to wait for and gets SIGTERM at once. Extra
// players, not its children, are only watched: their endpoints should close within grace.
func (ps *procSet) stop(grace time.Duration, auditPath string) {
	defer ps.closeOutputs()
	if ps.lm == nil {
		return
	}
	fmt.Fprintln(ps.out, "\nstopping: SIGTERM to the League Manager, whose LEAGUE_SHUTDOWN tells every agent to leave")
	_ = ps.lm.cmd.Process.Signal(syscall.SIGTERM)
	// Its shutdown lasts the drain at most, plus the closing of its server.
	if late := waitExit([]*proc{ps.lm}, demoDrain+grace); len(late) > 0 {
		fmt.Fprintf(ps.out, "League Manager still running %s after SIGTERM: SIGKILL\n", demoDrain+grace)
		kill(late)
	}
	fmt.Fprintf(ps.out, "League Manager stopped (%s)\n", ps.lm.cmd.ProcessState)
	notices, err := readShutdownNotices(auditPath)
	if err != nil {
		fmt.Fprintf(ps.out, "cannot tell which agents got LEAGUE_SHUTDOWN: %v\n", err)
	}
	var told, untold []*proc
	for _, p := range ps.agents {
		switch {
		case notices == nil || notices.sent[p.sender()]:
			told = append(told, p)
		case p.running():
			untold = append(untold, p)
		}
	}
	closed := make(chan []extraAgent, 1)
	// Ends within grace (and one last round of connection attempts).
	go func() { closed <- waitClosed(ps.extras, grace) }()
	signalAll(untold, syscall.SIGTERM)
	stayed := waitExit(told, grace)
	signalAll(stayed, syscall.SIGTERM)
	stubborn := waitExit(slices.Concat(untold, stayed), grace)
	kill(stubborn)
	ps.report(notices, untold, stayed, stubborn, grace)
	reportExtras(ps.out, ps.extras, <-closed, notices, grace)
}

// report prints how each agent left: a line for each one that had to be killed or
// exited otherwise, the ids of those that left on LEAGUE_SHUTDOWN (acknowledged it, then
// exited 0 without a signal from the demo), and a summary.
func (ps *procSet) report(notices *shutdownNotices, untold, stayed, stubborn []*proc, grace time.Duration) {
	var left []string
	var referees, players, killed, others int
	for _, p := range ps.agents {
		acked := notices != nil && notices.acked[p.sender()]
		ack := "it never acknowledged LEAGUE_SHUTDOWN"
		switch {
		case notices == nil:
			ack = "unknown whether it acknowledged LEAGUE_SHUTDOWN"
		case acked:
			ack = "it had acknowledged LEAGUE_SHUTDOWN"
		}
		why := fmt.Sprintf("still running %s after the League Manager stopped (%s)", grace, ack)
		if slices.Contains(untold, p) {
			why = "the League Manager had not registered it, so sent it no LEAGUE_SHUTDOWN"
		}
		switch {
		case slices.Contains(stubborn, p):
			killed++
			fmt.Fprintf(ps.out, "killed %s %s: %s; it ignored SIGTERM for %s too, SIGKILL stopped it\n", p.role, p.id, why, grace)
		case slices.Contains(stayed, p) || slices.Contains(untold, p):
			killed++
			fmt.Fprintf(ps.out, "killed %s %s: %s; SIGTERM stopped it (%s)\n", p.role, p.id, why, p.cmd.ProcessState)
		case acked && p.cmd.ProcessState.Success():
			left = append(left, p.id)
			if p.role == roleReferee {
				referees++
			} else {
				players++
			}
		default:
			others++
			fmt.Fprintf(ps.out, "%s %s exited by itself (%s); %s\n", p.role, p.id, p.cmd.ProcessState, ack)
		}
	}
	if len(left) > 0 {
		fmt.Fprintf(ps.out, "left on LEAGUE_SHUTDOWN: %s\n", strings.Join(left, " "))
	}
	summary := fmt.Sprintf("%s and %s left on LEAGUE_SHUTDOWN; %d killed", count(referees, "referee"), count(players, "player"), killed)
	if others > 0 {
		summary += fmt.Sprintf("; %d exited otherwise", others)
	}
	fmt.Fprintln(ps.out, summary)
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// waitExit waits up to d for every process in procs to exit and returns those still
// running then.
func waitExit(procs []*proc, d time.Duration) []*proc {
	over := make(chan struct{})
	t := time.AfterFunc(d, func() { close(over) })
	defer t.Stop()
	var running []*proc
	for _, p := range procs {
		select {
		case <-p.done:
		case <-over:
			// Both may be ready: select picks either.
			if p.running() {
				running = append(running, p)
			}
		}
	}
	return running
}

func signalAll(procs []*proc, sig os.Signal) {
	for _, p := range procs {
		_ = p.cmd.Process.Signal(sig)
	}
}

// kill sends SIGKILL to every process in procs and waits for each to be reaped.
func kill(procs []*proc) {
	for _, p := range procs {
		_ = p.cmd.Process.Kill()
	}
	for _, p := range procs {
		<-p.done
	}
}

func (ps *procSet) closeOutputs() {
	for _, p := range ps.all() {
		p.out.Close()
	}
}

// shutdownNotices is what the League Manager's audit log says of its LEAGUE_SHUTDOWN
// notices, by the agent it addressed (player:p01): to whom it sent one, and who answered
// LEAGUE_SHUTDOWN_ACK.
type shutdownNotices struct {
	sent, acked map[string]bool
}

func readShutdownNotices(auditPath string) (*shutdownNotices, error) {
	entries, err := audit.Read(auditPath)
	if err != nil {
		return nil, fmt.Errorf("read the league manager's audit log: %w", err)
	}
	n := &shutdownNotices{sent: map[string]bool{}, acked: map[string]bool{}}
	for _, e := range entries {
		type message struct {
			Envelope protocol.Envelope `json:"envelope"`
		}
		var rpc struct {
			Params *message `json:"params"`
			Result *message `json:"result"`
		}
		if json.Unmarshal(e.Message, &rpc) != nil {
			continue
		}
		switch {
		case e.Direction == audit.DirRequest && rpc.Params != nil && rpc.Params.Envelope.MessageType == protocol.LeagueShutdown:
			n.sent[e.Destination] = true
		case e.Direction == audit.DirResponse && rpc.Result != nil && rpc.Result.Envelope.MessageType == protocol.LeagueShutdownAck:
			n.acked[e.Source] = true
		}
	}
	return n, nil
}
