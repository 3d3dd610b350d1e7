package localleague

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

// Roles of a local league's processes. An agent's role and id name its output file and say
// who it is on the wire.
const (
	RoleLeagueManager = "league_manager"
	RoleReferee       = "referee"
	RolePlayer        = "player"
)

// drain is how long a local league's League Manager and referees let matches in flight
// finish on shutdown: short, since a demo stopped early need not wait for them.
const drain = 2 * time.Second

// Procs owns a local league's child processes: the League Manager and the agents. It also
// knows the extra players started by hand, which it reports but cannot stop.
type Procs struct {
	logDir string
	// out receives how the processes were stopped.
	out    io.Writer
	lm     *Proc
	agents []*Proc
	extras []extraAgent
}

// Proc is one child process of a local league.
type Proc struct {
	Name     string // of its output file: league_manager, referee_ref1, player_p01
	Role, ID string
	Cmd      *exec.Cmd
	done     chan struct{} // closed once the process has exited and been reaped
	out      io.Closer
}

// LogDir is the folder of the processes' output files (<name>.out).
func (ps *Procs) LogDir() string { return ps.logDir }

// AddExtras hands players someone else started (league demo --extra) to ps, which reports
// how they left but cannot stop them.
func (ps *Procs) AddExtras(endpoints map[string]string, ids ...string) {
	for _, id := range ids {
		ps.extras = append(ps.extras, extraAgent{id: id, endpoint: endpoints[id]})
	}
}

// sender is how the League Manager names the agent, e.g. in its audit log.
func (p *Proc) sender() string {
	if p.Role == RoleReferee {
		return protocol.RefereeSender(p.ID)
	}
	return protocol.PlayerSender(p.ID)
}

func (ps *Procs) start(role, id, bin string, env []string, args ...string) error {
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
		// Children die with their parent (league demo, league bench) even if it is killed outright.
		Pdeathsig: syscall.SIGKILL,
		// Ctrl-C then reaches the parent alone, which stops the League Manager first; in
		// the terminal's process group every agent would get it at the same moment and
		// leave before the League Manager's notice.
		Setpgid: true,
	}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{Name: name, Role: role, ID: id, Cmd: cmd, done: make(chan struct{}), out: out}
	// Each waiter ends when its process exits.
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	if role == RoleLeagueManager {
		ps.lm = p
	} else {
		ps.agents = append(ps.agents, p)
	}
	return nil
}

// All is every process: the League Manager first, then the agents in the order they started.
func (ps *Procs) All() []*Proc {
	if ps.lm == nil {
		return ps.agents
	}
	return append([]*Proc{ps.lm}, ps.agents...)
}

func (p *Proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Dead names a child that has exited, if any.
func (ps *Procs) Dead() string {
	for _, p := range ps.All() {
		if !p.running() {
			return p.Name
		}
	}
	return ""
}

// Stop shuts the league down in the protocol's order and says how each agent left. The
// League Manager gets SIGTERM; its graceful shutdown sends LEAGUE_SHUTDOWN to every
// registered agent. Once it has exited those agents have grace to leave by themselves;
// any still running then gets SIGTERM and, grace later, SIGKILL. An agent it sent no
// notice (not registered yet) has nothing to wait for and gets SIGTERM at once. Extra
// players, not its children, are only watched: their endpoints should close within grace.
func (ps *Procs) Stop(grace time.Duration, auditPath string) {
	defer ps.closeOutputs()
	if ps.lm == nil {
		return
	}
	fmt.Fprintln(ps.out, "\nstopping: SIGTERM to the League Manager, whose LEAGUE_SHUTDOWN tells every agent to leave")
	_ = ps.lm.Cmd.Process.Signal(syscall.SIGTERM)
	// Its shutdown lasts the drain at most, plus the closing of its server.
	if late := waitExit([]*Proc{ps.lm}, drain+grace); len(late) > 0 {
		fmt.Fprintf(ps.out, "League Manager still running %s after SIGTERM: SIGKILL\n", drain+grace)
		kill(late)
	}
	fmt.Fprintf(ps.out, "League Manager stopped (%s)\n", ps.lm.Cmd.ProcessState)
	notices, err := readShutdownNotices(auditPath)
	if err != nil {
		fmt.Fprintf(ps.out, "cannot tell which agents got LEAGUE_SHUTDOWN: %v\n", err)
	}
	var told, untold []*Proc
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
func (ps *Procs) report(notices *shutdownNotices, untold, stayed, stubborn []*Proc, grace time.Duration) {
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
			fmt.Fprintf(ps.out, "killed %s %s: %s; it ignored SIGTERM for %s too, SIGKILL stopped it\n", p.Role, p.ID, why, grace)
		case slices.Contains(stayed, p) || slices.Contains(untold, p):
			killed++
			fmt.Fprintf(ps.out, "killed %s %s: %s; SIGTERM stopped it (%s)\n", p.Role, p.ID, why, p.Cmd.ProcessState)
		case acked && p.Cmd.ProcessState.Success():
			left = append(left, p.ID)
			if p.Role == RoleReferee {
				referees++
			} else {
				players++
			}
		default:
			others++
			fmt.Fprintf(ps.out, "%s %s exited by itself (%s); %s\n", p.Role, p.ID, p.Cmd.ProcessState, ack)
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
func waitExit(procs []*Proc, d time.Duration) []*Proc {
	over := make(chan struct{})
	t := time.AfterFunc(d, func() { close(over) })
	defer t.Stop()
	var running []*Proc
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

func signalAll(procs []*Proc, sig os.Signal) {
	for _, p := range procs {
		_ = p.Cmd.Process.Signal(sig)
	}
}

// kill sends SIGKILL to every process in procs and waits for each to be reaped.
func kill(procs []*Proc) {
	for _, p := range procs {
		_ = p.Cmd.Process.Kill()
	}
	for _, p := range procs {
		<-p.done
	}
}

func (ps *Procs) closeOutputs() {
	for _, p := range ps.All() {
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
