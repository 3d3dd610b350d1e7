package league

// Fault tolerance: what the League Manager does when agents flood it, fail, go away or
// misbehave, and when it is itself stopped or crashes. These are the league's rules.
//
// Rate limits (rate_limits of league.yaml; token buckets keyed by the envelope sender,
// since every agent may share one IP):
//   - Registrations: senders that are not registered share one bucket refilled at
//     registration_per_second with a burst of max_players + max_referees; a registered
//     sender repeating its registration has its own bucket of registration_per_second.
//   - Result reports: results_per_second per referee.
//   - Standings queries: standings_per_minute per sender (player, referee or admin), with
//     a burst of one minute's worth.
//   - Every request of these kinds counts, refused or not. Requests that fail
//     authentication draw from one bucket per kind shared by all such senders: only
//     registered agents get buckets of their own, so the limiters stay bounded.
//   - A request over its limit is answered RATE_LIMITED and changes nothing.
//   - HEARTBEAT_REQUEST and MOVE_EVENT (view.go) are not rate limited: they come only from
//     authenticated referees, at the pace of their leases and of the moves played.
//
// Referee leases and result deadlines:
//   - HEARTBEAT_REQUEST (with the referee's own token) is answered HEARTBEAT_RESPONSE
//     {status: acknowledged, lease_ms}; each heartbeat grants a lease of lease_ms from its
//     arrival. A referee that never sent one holds no lease and is never lost.
//   - When a lease runs out the referee is lost (GET /status: lost): it gets no match
//     until its next heartbeat, and each of its ASSIGNED or IN_PROGRESS matches fails.
//   - How long a match may run, reminders, failures and abandonment: lifetime.go.
//   - MATCH_CANCELLED {match_id, reason} goes to the players and the referee of a failed
//     match that announced match_cancellation (best effort: one attempt, short deadline).
//   - A report from a referee that no longer holds the match is refused with
//     STALE_ASSIGNMENT.
//   - Leases live in memory: after a restart no referee holds one until it heartbeats.
//
// Violations and suspension (timeout_policy.yaml enforcement):
//   - Each entry of game_metadata.violations of an accepted result that names one of the
//     match's two players with a known kind (timeout, invalid_move, malformed_move,
//     stale_answer, unreachable, malformed_answer, refused, no_join) is one violation of
//     that player; other entries are ignored.
//   - An assignment that cannot be delivered to a referee (no answer at all after the
//     retries) is one violation of that referee; a refusal is not.
//   - At suspend_after_violations the agent is SUSPENDED for suspension_duration_seconds
//     (status, suspended_until and violations are stored); then it is ACTIVE again with
//     no violations. Violations while suspended are counted but do not extend the
//     suspension. With suspension_duration_seconds 0 nobody is suspended and the count
//     starts again. SUSPENDED without suspended_until (set by an operator) lasts until
//     the operator lifts it.
//   - A suspended agent's token is refused with SUSPENDED. A suspended referee gets no
//     match, and its ASSIGNED or IN_PROGRESS matches are failed and assigned again.
//   - Forfeit: when a match is to be assigned while one of its players is suspended, the
//     League Manager records its result itself, without a referee: the suspended player
//     loses with 0 points and the opponent wins with the win points; both suspended, both
//     lose with 0 points. game_metadata is {"forfeit": "suspended", "suspended": [ids]},
//     match_results.referee_id is NULL, the audit log gets a RESULT_RECORDED event, and
//     the result counts like a reported one (standings, snapshots, round completion).
//   - Live standings rows carry "suspended": true for suspended players; GET /status
//     shows every agent's status, violations and suspended_until.
//
// Graceful shutdown (SIGTERM or SIGINT of league serve, or ADMIN_SHUTDOWN_REQUEST with
// the admin token, which is answered ADMIN_SHUTDOWN_RESPONSE first):
//  1. No match is assigned or forfeited any more; registrations and
//     ADMIN_START_LEAGUE_REQUEST are refused with SHUTTING_DOWN.
//  2. LEAGUE_SHUTDOWN {reason, league_id} goes to every registered referee and player,
//     with that agent's own token, concurrently, one attempt each, short deadline.
//  3. Matches in flight may finish until the drain deadline (league serve --drain,
//     default 5 s; over as soon as no match is in flight; a second signal cuts it
//     short): their results, heartbeats and standings queries are answered as usual.
//  4. Every match still PENDING, FAILED, ASSIGNED or IN_PROGRESS becomes CANCELLED. The
//     league keeps its status (a league cut short is not COMPLETED); the meta table
//     records shutdown_at and shutdown_reason (a completed league has nothing to cancel
//     and records nothing). From then on everything but QUERY_STANDINGS is refused with
//     SHUTTING_DOWN.
//  5. The database and the audit log are closed and league serve exits 0.
//
// Restart after a graceful shutdown: the league resumes. CANCELLED matches are PENDING
// again under their match_id, shutdown_at and shutdown_reason leave the meta table (the
// audit log keeps a LEAGUE_RESUMED event), agents keep their tokens, and the league goes
// on once referees are back.
//
// Crash recovery (no graceful path): every change is one transaction, committed before it
// is applied in memory or answered, so a restart reloads exactly what was acknowledged.
// ASSIGNED or IN_PROGRESS matches are FAILED and assigned again under the same match_id
// (another referee preferred); a round whose last result was stored but not yet counted
// is completed then; a result stored whose audit line was lost is acknowledged again when
// the referee retries it.
//
// Slow clients: the HTTP server closes a connection whose request headers take longer
// than 5 s, whose request takes longer than 10 s, whose answer is not taken within 30 s,
// or that stays idle between requests for 60 s (DefaultHTTPTimeouts).
//
// The audit log records these decisions as events beside the message exchanges:
// RESULT_RECORDED (a forfeit), MATCH_FAILED, MATCH_ABANDONED, REFEREE_LOST, REFEREE_BACK,
// AGENT_SUSPENDED, AGENT_REINSTATED, LEAGUE_SHUTDOWN and LEAGUE_RESUMED.
