#define AGENTLEAGUE_DEFAULT_SLACK_NS 1000000UL
#define AGENTLEAGUE_MAX_SLACK_NS 100000000UL

long agentleague_timer_slack_result(void);
int agentleague_timer_slack_errno(void);
long agentleague_timer_slack_inherited(void);
int agentleague_set_thread_timer_slack(unsigned long ns);

int agentleague_policy(void);
int agentleague_policy_err(void);
int agentleague_inherited_policy(void);
int agentleague_set_thread_policy(int policy);
void agentleague_policy_unbatched(void);
