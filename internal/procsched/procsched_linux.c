//go:build linux && cgo

// Runs before the Go runtime starts (a constructor of the C runtime), so that every
// thread of the process inherits the timer slack and the scheduling policy, the
// runtime's sysmon thread included: it is created before any Go code runs. See
// procsched.go.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "procsched.h"

static long agentleague_slack_result = -1;
static int agentleague_slack_errno;
static long agentleague_inherited = -1;

static int agentleague_policy_result = -1;
static int agentleague_policy_errno;
static int agentleague_policy_inherited = -1;

static void agentleague_set_timer_slack(void) {
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

// Only a process started under the default policy is moved to SCHED_BATCH: one started
// under another (real-time, SCHED_IDLE, already batch) was put there on purpose.
static void agentleague_set_policy(void) {
	int inherited = sched_getscheduler(0);
	if (inherited < 0) {
		agentleague_policy_errno = errno;
		return;
	}
	inherited &= ~SCHED_RESET_ON_FORK;
	agentleague_policy_inherited = inherited;
	const char *env = getenv("LEAGUE_SCHED_POLICY");
	if (env != NULL && *env != '\0') {
		if (strcmp(env, "inherit") == 0) {
			agentleague_policy_result = inherited;
			return;
		}
		if (strcmp(env, "batch") != 0) {
			agentleague_policy_result = -2; /* left as inherited */
			return;
		}
	}
	if (inherited != SCHED_OTHER) {
		agentleague_policy_result = inherited;
		return;
	}
	struct sched_param p = {.sched_priority = 0};
	if (sched_setscheduler(0, SCHED_BATCH, &p) != 0) {
		agentleague_policy_errno = errno;
		return;
	}
	agentleague_policy_result = SCHED_BATCH;
}

__attribute__((constructor)) static void agentleague_set_scheduling(void) {
	agentleague_set_timer_slack();
	agentleague_set_policy();
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

int agentleague_policy(void) { return agentleague_policy_result; }
int agentleague_policy_err(void) { return agentleague_policy_errno; }
int agentleague_inherited_policy(void) { return agentleague_policy_inherited; }

int agentleague_set_thread_policy(int policy) {
	struct sched_param p = {.sched_priority = 0};
	if (sched_setscheduler(0, policy, &p) != 0) {
		return errno;
	}
	return 0;
}

void agentleague_policy_unbatched(void) { agentleague_policy_result = agentleague_policy_inherited; }
