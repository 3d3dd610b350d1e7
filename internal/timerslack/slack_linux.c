//go:build linux && cgo

// Runs before the Go runtime starts (a constructor of the C runtime), so that every
// thread of the process inherits the timer slack, the runtime's sysmon thread included:
// it is created before any Go code runs. See timerslack.go.
#include <errno.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "slack.h"

static long agentleague_slack_result = -1;
static int agentleague_slack_errno;
static long agentleague_inherited = -1;

__attribute__((constructor)) static void agentleague_set_timer_slack(void) {
	agentleague_inherited = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	unsigned long ns = AGENTLEAGUE_DEFAULT_SLACK_NS;
	const char *env = getenv("LEAGUE_TIMER_SLACK_NS");
	if (env != NULL && *env != '\0') {
		char *end;
		errno = 0;
		unsigned long v = strtoul(env, &end, 10);
		if (env[0] < '0' || env[0] > '9' || errno != 0 || *end != '\0' || v > AGENTLEAGUE_MAX_SLACK_NS) {
			agentleague_slack_result = -2; /* left at the kernel's default */
			return;
		}
		ns = v;
	}
	if (prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0) != 0) {
		agentleague_slack_errno = errno;
		return;
	}
	agentleague_slack_result = (long)ns;
}

long agentleague_timer_slack_result(void) { return agentleague_slack_result; }
int agentleague_timer_slack_errno(void) { return agentleague_slack_errno; }

long agentleague_timer_slack_inherited(void) { return agentleague_inherited; }

int agentleague_set_thread_timer_slack(unsigned long ns) {
	if (prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0) != 0) {
		return errno;
	}
	return 0;
}
