// agentleague: an Agent League player in one function, for Node 18+ with no packages.
//
// Copy this file beside your player (or require it from examples/node) and write one function:
//
//     const agentleague = require('./agentleague');
//
//     function chooseMove(state) {
//       return state.legal_moves[0]; // the move_payload to send
//     }
//
//     agentleague.main(chooseMove, { game: 'tic_tac_toe' }); // reads --id, --league, --port, --outbound
//
// or, without a command line:
//
//     agentleague.run({ id: 'js1', league: 'http://127.0.0.1:8000/mcp', game: 'tic_tac_toe', chooseMove });
//
// Without a port the player is outbound: it opens no port and takes its requests from the
// League Manager's relay (protocol/README.md, "Outbound agents"). With port N (--port N; 0 is
// any free port) it listens on http://127.0.0.1:N/mcp instead. main(chooseMove, { port: 0 })
// makes listening the default of a command line; --outbound still wins.
//
// The kit does the rest: registration with retries, AGENT_READY, invitations, match
// credentials, deadlines, GAME_OVER, LEAGUE_COMPLETED, LEAGUE_SHUTDOWN, and one log line per
// match. examples/python/agentleague.py is the same kit in Python, with the same state.
//
// state, the one argument of chooseMove(state), is an object (its keys are the Python kit's):
//
//   game_type    string  the game of the match: "tic_tac_toe", "connect_four", "chess",
//                        "rock_paper_scissors", "even_odd", or an external game's name ("nim")
//   match_id     string  the match, e.g. "r01-m02"
//   step_number  number  the step the referee asks a move for (from 1)
//   context      object  the step_context exactly as the referee sent it (game-specific):
//                          tic_tac_toe   board (3x3 of "X"/"O"/""), your_mark, move_number
//                          connect_four  board (6 rows x 7 of "R"/"Y"/"", row 0 on top),
//                                        your_color, move_number, valid_moves (columns)
//                          chess         fen, side_to_move, your_color ("white"/"black"),
//                                        legal_moves (UCI strings), is_check, last_move,
//                                        moves, move_number, ply
//                          rock_paper_scissors, even_odd
//                                        round, rounds, your_score, opponent_score, history
//                          an external game: whatever its referee sends (nim: heaps, step)
//   legal_moves  array|null  every legal move, each ready to return as it is (a move_payload):
//                          tic_tac_toe {row, col}; connect_four {column}; chess {uci: "e2e4"};
//                          rock_paper_scissors {choice: "rock"} ...; even_odd {choice: "even"|"odd"};
//                          an external game whose context has an array legal_moves gets that
//                          array; otherwise null
//   role         string|null  your side as the context names it: your_mark ("X"/"O"),
//                          your_color ("R"/"Y", "white"/"black"); null when it names none
//   index        number|null  your seat in the match (0 moves first), from the invitation
//   opponent     string|null  the opponent's player id, from the invitation
//   game_params  object  the match's game parameters from the invitation ({} when none)
//   time_left    number  seconds left to return a move: the referee's deadline less a safety
//                        margin (a tenth of it, 0.1 s to 0.5 s) for the answer to travel; under a
//                        clock (clocks below) the clock's budget for this move instead, when
//                        shorter: (your clock + bank) / moves to go (30 without periods) + 3/4
//                        of the increment, at most half of your clock + bank
//   clocks       object|null  both clocks when the match is played on a clock, as the referee
//                        sent them (milliseconds): {you: {remaining_ms, bank_ms, moves_to_go},
//                        opponent: {...}, increment_ms}; null without one
//   last_result  object|null  what became of your previous move, as the referee sent it
//                        (outcome SUCCESS/INVALID/TIMEOUT/FORCED, reason, move)
//   warning      string|null  the referee's warning when it asks again after a miss
//   player_id    string  your id
//
// chooseMove may be sync or async (return a Promise). It returns the move_payload to send (any
// JSON value). The kit sends it as given: the referee judges it, and an illegal move loses the
// match. When chooseMove throws, returns null or undefined, or has not returned at time_left,
// the kit logs why and answers the request with a JSON-RPC error (INTERNAL): for the referee
// that is a missed move (a warning and the same request again, then a forced move, then a
// loss; docs/agents.md, "Deadlines"), never a malformed move. An async strategy still running
// then is left to finish and its move dropped. A sync strategy cannot be interrupted (Node runs
// one thing at a time): the kit answers as soon as it returns, without its move if it is late.
//
// Optional callbacks (sync or async; an exception in one is logged and changes nothing):
//
//   onGameOver(result)      after each match; result is an object: match_id, game_type,
//                           outcome ("win"/"draw"/"loss"), reason, opponent, points, winner,
//                           final_state (the GAME_OVER payload's fields)
//   onLeagueOver(standings) once, when the league completes (LEAGUE_COMPLETED): the final
//                           standings, best first, rows of {rank, player_id, points, wins,
//                           draws, losses, matches_played}
//
// run() returns a Promise of 0 once the League Manager shuts the league down (LEAGUE_SHUTDOWN)
// or the relay closes, and rejects with an Error when registration is refused or never
// succeeds. main() exits the process: 0 then, 1 on such an error, 2 on a bad command line.
//
// Other options of run() and main(): game (the game type, or an array of them, to register
// for and accept; default "tic_tac_toe"), outbound (true or false: overrides what port says),
// displayName, registerTimeout (seconds to keep trying to register, default 120), log (a
// function taking each log line, default console.log).
'use strict';

const http = require('http');
const https = require('https');
const crypto = require('crypto');
const { URL, URLSearchParams } = require('url');

const PROTOCOL = 'league.v2';
const MAX_BODY = 1 << 20; // the protocol's limit on a request body, 1 MiB

// JSON-RPC error codes of the reasons the kit answers with (protocol/README.md, "Errors").
const CODES = {
  UNAUTHORIZED: -32000, STALE_STEP: -32013, UNSUPPORTED_MESSAGE: -32015, BUSY: -32017,
  INVALID_REQUEST: -32600, SCHEMA_VIOLATION: -32602, INTERNAL: -32603, PARSE_ERROR: -32700,
};

// Reasons of a League Manager refusal worth trying the registration again for.
const RETRY_REASONS = ['NO_REFEREE_REGISTERED', 'RATE_LIMITED', 'INTERNAL', 'STORAGE_UNAVAILABLE', 'BUSY', 'LEAGUE_NOT_ACTIVE'];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// An answer refused with a JSON-RPC error of a protocol reason.
class Refusal extends Error {
  constructor(reason, message) {
    super(message);
    this.reason = reason;
  }
}

// The League Manager answered with a JSON-RPC error; reason is its data.reason.
class LeagueError extends Error {
  constructor(reason, message) {
    super(`${reason}: ${message}`);
    this.reason = reason;
  }
}

// ---------------------------------------------------------------------------------------
// HTTP client: one request, the whole answer (node:http or node:https by the URL)
// ---------------------------------------------------------------------------------------

function httpRequest(url, { method = 'POST', body, headers = {}, timeoutMs = 10000, signal } = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const data = body === undefined ? undefined : Buffer.from(body, 'utf8');
    const h = { ...headers };
    if (data) Object.assign(h, { 'Content-Type': 'application/json', 'Content-Length': data.length });
    const req = (u.protocol === 'https:' ? https : http).request(u, { method, headers: h, signal }, (res) => {
      const chunks = [];
      let size = 0;
      res.on('data', (chunk) => {
        size += chunk.length;
        if (size > 8 * MAX_BODY) req.destroy(new Error('answer too large'));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(data);
  });
}

// ---------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------

// A league.v2 envelope; context adds auth_token, match_id, ... when not undefined.
function envelope(sender, messageType, conversationId, context = {}) {
  const env = {
    protocol: PROTOCOL, message_type: messageType, sender,
    timestamp: new Date().toISOString(), conversation_id: conversationId,
  };
  for (const [k, v] of Object.entries(context)) if (v !== undefined && v !== null) env[k] = v;
  return env;
}

// Compares two secrets in constant time.
function sameSecret(a, b) {
  const x = Buffer.from(String(a));
  const y = Buffer.from(String(b));
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

// The legal moves of a step, each a move_payload, when the game lists them; else null.
function legalMoves(gameType, ctx) {
  const list = (a) => (Array.isArray(a) ? a : null);
  switch (gameType) {
    case 'tic_tac_toe': {
      if (!Array.isArray(ctx.board)) return null;
      const moves = [];
      ctx.board.forEach((row, r) => row.forEach((cell, c) => { if (cell === '') moves.push({ row: r, col: c }); }));
      return moves;
    }
    case 'connect_four': {
      let cols = list(ctx.valid_moves);
      if (!cols && Array.isArray(ctx.board) && Array.isArray(ctx.board[0])) {
        cols = ctx.board[0].map((cell, c) => (cell === '' ? c : -1)).filter((c) => c >= 0);
      }
      return cols && cols.map((column) => ({ column }));
    }
    case 'chess': return list(ctx.legal_moves) && ctx.legal_moves.map((uci) => ({ uci }));
    case 'rock_paper_scissors': return ['rock', 'paper', 'scissors'].map((choice) => ({ choice }));
    case 'even_odd': return ['even', 'odd'].map((choice) => ({ choice }));
    default: return list(ctx.legal_moves);
  }
}

// The seconds a strategy may think: the deadline less a tenth, at least 0.1 s, at most 0.5 s.
// The time is deadline_ms (30 s by default), or less if the deadline instant is nearer (a
// request that waited on the relay). Under a clock deadline_ms is the whole clock: the budget
// is then the clock's (clockBudget), when shorter.
function timeBudget(payload) {
  let ms = payload.deadline_ms > 0 ? payload.deadline_ms : 30000;
  const left = Date.parse(payload.deadline) - Date.now();
  if (left > 0 && left < ms) ms = left;
  let budget = Math.max(0, ms - Math.min(500, Math.max(100, ms / 10))) / 1000;
  const clocks = clocksOf(payload);
  if (clocks && clockBudget(clocks) > 0 && clockBudget(clocks) < budget) budget = clockBudget(clocks);
  return { allowed: ms / 1000, budget };
}

// REQUEST_MOVE's clocks when the match is played on a clock, else null.
const clocksOf = (payload) => (payload.clocks && typeof payload.clocks === 'object' ? payload.clocks : null);

// The seconds a move may take under REQUEST_MOVE's clocks. It mirrors protocol.TimeControl.Budget
// (protocol/clock.go), the one budget rule of a clocked move: your clock and bank spread over
// the moves to go (30 without periods), plus 3/4 of the increment, never more than half of
// what is left.
function clockBudget(clocks) {
  const you = clocks.you && typeof clocks.you === 'object' ? clocks.you : {};
  const left = (you.remaining_ms || 0) + (you.bank_ms || 0);
  const togo = you.moves_to_go > 0 ? you.moves_to_go : 30;
  const ms = left / togo + ((clocks.increment_ms || 0) * 3) / 4;
  return Math.max(Math.min(ms, left / 2), 0) / 1000;
}

// JSON with sorted keys, to compare two moves.
const canonical = (v) => JSON.stringify(v, (k, x) => (x && typeof x === 'object' && !Array.isArray(x)
  ? Object.fromEntries(Object.keys(x).sort().map((key) => [key, x[key]])) : x));

const brief = (v, n = 80) => {
  let s;
  try {
    s = JSON.stringify(v);
  } catch {
    s = String(v);
  }
  s = s === undefined ? String(v) : s;
  return s.length > n ? `${s.slice(0, n)}...` : s;
};

// ---------------------------------------------------------------------------------------
// The player
// ---------------------------------------------------------------------------------------

class Player {
  constructor(opts) {
    this.id = opts.id;
    this.sender = `player:${opts.id}`;
    this.league = opts.league;
    this.games = [].concat(opts.game ?? 'tic_tac_toe');
    this.opts = opts;
    this.log = (line) => (opts.log || console.log)(`${this.id}: ${line}`);
    this.token = null; // our league token
    this.leagueFeatures = [];
    this.matches = new Map(); // match_id -> what we know of it (at most 1024, oldest dropped)
    this.confirmed = new Map(); // match_id -> referee sender confirmed by QUERY_MATCH
    this.record = { win: 0, draw: 0, loss: 0 };
    this.registered = new Promise((resolve) => { this.markRegistered = resolve; });
    this.stopped = new Promise((resolve) => { this.stop = resolve; });
  }

  // --- the League Manager -----------------------------------------------------------------

  // Sends one request to the League Manager; returns the payload of its answer. A retry of
  // the same call passes the same conversationId.
  async callLeague(messageType, payload, { token, conversationId = crypto.randomUUID(), timeoutMs = 10000 } = {}) {
    const request = {
      jsonrpc: '2.0', method: 'league.handle', id: conversationId,
      params: { envelope: envelope(this.sender, messageType, conversationId, { auth_token: token }), payload },
    };
    const res = await httpRequest(this.league, { body: JSON.stringify(request), timeoutMs });
    let answer;
    try {
      answer = JSON.parse(res.text);
    } catch {
      throw new Error(`HTTP ${res.status}: the answer is not JSON`);
    }
    if (answer.error) throw new LeagueError(answer.error.data?.reason ?? 'UNKNOWN', answer.error.message ?? '');
    if (!answer.result?.payload) throw new Error(`HTTP ${res.status}: no result`);
    return answer.result.payload;
  }

  // REGISTER_PLAYER_REQUEST until it is accepted or refused for good, then AGENT_READY.
  async register(endpointUrl) {
    const payload = { player_id: this.id, display_name: this.opts.displayName || `Node kit ${this.id}`,
      features: ['match_credentials', 'league_completed'] };
    payload.game_types = this.games;
    if (endpointUrl) payload.endpoint_url = endpointUrl;
    else payload.features.push('outbound');
    const conversationId = crypto.randomUUID(); // the same for every attempt: a retry, not a new one
    const deadline = Date.now() + 1000 * (this.opts.registerTimeout ?? 120);
    let answer;
    let last = 'no attempt';
    for (let wait = 250; !answer; wait = Math.min(2 * wait, 2000)) {
      try {
        answer = await this.callLeague('REGISTER_PLAYER_REQUEST', payload, { conversationId });
      } catch (e) {
        if (e instanceof LeagueError && !RETRY_REASONS.includes(e.reason)) {
          // REGISTRATION_CLOSED, DUPLICATE_REGISTRATION, UNSUPPORTED_GAME, ... are final.
          throw new Error(`${this.id}: registration refused: ${e.message}`);
        }
        if (String(e.message) !== last) this.log(`registration not accepted yet (${e.message}); trying again`);
        last = String(e.message);
        if (Date.now() + wait > deadline) throw new Error(`${this.id}: could not register with ${this.league}: ${last}`);
        await sleep(wait);
      }
    }
    this.token = answer.auth_token;
    this.leagueFeatures = answer.features ?? [];
    this.markRegistered();
    this.log(`registered in league ${answer.league_id} for ${this.games.join(', ')}`);
    if (!endpointUrl) this.log(`referees call us at ${answer.endpoint_url} (the League Manager's relay)`);
    for (let attempt = 1; ; attempt++) { // AGENT_READY: worth a few tries, not fatal
      try {
        await this.callLeague('AGENT_READY_REQUEST', {}, { token: this.token });
        break;
      } catch (e) {
        if (attempt >= 3 || (e instanceof LeagueError && !RETRY_REASONS.includes(e.reason))) {
          this.log(`AGENT_READY_REQUEST failed (${e.message}); playing on`);
          break;
        }
        await sleep(500);
      }
    }
    return answer;
  }

  // --- credentials --------------------------------------------------------------------------

  // Checks who sends a referee message of a match and returns the auth_token for our answer.
  // A shown credential must be hex(HMAC-SHA256(our token, match_id)), and is answered with.
  // A message showing none is taken when the League Manager announced no match_credentials
  // (nothing to check against), or when QUERY_MATCH confirmed its sender as the match's
  // referee; an invitation showing none is confirmed that way first (see invitation).
  async answerToken(env, invitation) {
    const creds = this.leagueFeatures.includes('match_credentials');
    if (env.auth_token !== undefined && creds) {
      const expected = crypto.createHmac('sha256', this.token).update(String(env.match_id)).digest('hex');
      if (!sameSecret(env.auth_token, expected)) {
        throw new Refusal('UNAUTHORIZED', "auth_token is not this player's credential for the match");
      }
      return env.auth_token;
    }
    if (!creds || !this.leagueFeatures.includes('match_query')) return undefined;
    if (invitation) await this.queryMatch(env);
    if (this.confirmed.get(env.match_id) !== env.sender) {
      throw new Refusal('UNAUTHORIZED', `${env.sender} is not the confirmed referee of match ${env.match_id}`);
    }
    return undefined;
  }

  // Asks the League Manager (QUERY_MATCH) whether the inviting referee holds the match.
  async queryMatch(env) {
    let info;
    try {
      info = await this.callLeague('QUERY_MATCH', { match_id: env.match_id }, { token: this.token, timeoutMs: 3000 });
    } catch (e) {
      if (e instanceof LeagueError && !['RATE_LIMITED', 'INTERNAL', 'STORAGE_UNAVAILABLE'].includes(e.reason)) {
        throw new Refusal('UNAUTHORIZED', `the League Manager does not confirm match ${env.match_id}: ${e.reason}`);
      }
      throw new Refusal('BUSY', `cannot confirm match ${env.match_id} now: ${e.message}`);
    }
    if (`referee:${info.referee_id}` !== env.sender || !['ASSIGNED', 'IN_PROGRESS'].includes(info.status)) {
      throw new Refusal('UNAUTHORIZED', `the League Manager names referee ${info.referee_id} (${info.status}) for match ${env.match_id}`);
    }
    this.confirmed.set(env.match_id, env.sender);
    if (this.confirmed.size > 1024) this.confirmed.delete(this.confirmed.keys().next().value);
  }

  // Whether a League Manager message carries our own token (when it signs them).
  fromLeague(env) {
    const signed = this.leagueFeatures.includes('signed_assignments') || env.auth_token !== undefined;
    return env.sender === 'league_manager' && (!signed || sameSecret(env.auth_token ?? '', this.token));
  }

  match(env, payload = {}) {
    let m = this.matches.get(env.match_id);
    if (!m) {
      m = { match_id: env.match_id, game_type: payload.game_type || env.game_type || null,
        index: null, opponent: null, game_params: {}, moves: 0, missed: 0, lastMove: undefined, lastStep: null };
      this.matches.set(env.match_id, m);
      if (this.matches.size > 1024) this.matches.delete(this.matches.keys().next().value);
    }
    return m;
  }

  // --- the messages we answer -------------------------------------------------------------

  // One request: returns [message_type, payload, extra envelope fields].
  async handle({ envelope: env, payload }) {
    const handlers = {
      GAME_INVITATION: this.invitation, REQUEST_MOVE: this.requestMove, GAME_OVER: this.gameOver,
      LEAGUE_COMPLETED: this.leagueCompleted, LEAGUE_SHUTDOWN: this.leagueShutdown,
    };
    if (!Object.hasOwn(handlers, env.message_type)) {
      throw new Refusal('UNSUPPORTED_MESSAGE', `a player does not accept ${env.message_type}`);
    }
    // A match may start the moment we are registered, before the answer reached us.
    const ok = await Promise.race([this.registered.then(() => true), sleep(5000).then(() => false)]);
    if (!ok) throw new Refusal('BUSY', 'not registered yet');
    return handlers[env.message_type].call(this, env, payload);
  }

  // GAME_INVITATION -> GAME_JOIN_ACK.
  async invitation(env, payload) {
    const token = await this.answerToken(env, true);
    const ctx = { match_id: env.match_id, auth_token: token };
    if (!this.games.includes(payload.game_type)) {
      this.log(`match ${payload.match_id}: declined, it plays ${payload.game_type}`);
      return ['GAME_JOIN_ACK', { status: 'declined', match_id: payload.match_id, reason: `this player plays ${this.games.join(', ')}` }, ctx];
    }
    const m = this.match(env, payload);
    m.game_type = payload.game_type;
    m.index = payload.your_index ?? null;
    m.opponent = payload.opponent_id ?? payload.opponents?.[0] ?? null;
    m.game_params = payload.game_params ?? {};
    return ['GAME_JOIN_ACK', { status: 'accepted', match_id: payload.match_id }, ctx];
  }

  // REQUEST_MOVE -> MOVE_RESPONSE, or a JSON-RPC error (a missed move) when the strategy
  // fails or is too slow.
  async requestMove(env, payload) {
    const received = Date.now();
    const token = await this.answerToken(env, false);
    const m = this.match(env);
    const step = payload.step_number;
    const where = `match ${env.match_id} step ${step}`;
    const last = payload.last_result;
    if (last && last.outcome && last.outcome !== 'SUCCESS') {
      this.log(`${where}: the referee says of your previous move ${brief(last.move ?? null)}: ${last.outcome}${last.reason ? ` (${last.reason})` : ''}`);
    }
    if (payload.warning) this.log(`${where}: warning from the referee: ${payload.warning}`);
    const context = payload.step_context ?? {};
    const gameType = env.game_type || m.game_type || null;
    const { allowed, budget } = timeBudget(payload);
    let legal = null;
    try {
      legal = legalMoves(gameType, context);
    } catch {
      // a context the kit cannot read: no list
    }
    const state = {
      game_type: gameType, match_id: env.match_id, step_number: step, context,
      legal_moves: legal,
      role: ['your_mark', 'your_color', 'your_role'].map((k) => context[k]).find((v) => typeof v === 'string') ?? null,
      index: m.index, opponent: m.opponent, game_params: m.game_params,
      time_left: Math.max(0, budget - (Date.now() - received) / 1000),
      clocks: clocksOf(payload),
      last_result: last ?? null, warning: payload.warning ?? null, player_id: this.id,
    };
    const move = await this.think(state, budget * 1000 - (Date.now() - received), where, allowed);
    if (move === undefined) {
      m.missed++;
      throw new Refusal('INTERNAL', 'no move: the strategy failed or was too slow (see the player log)');
    }
    if (legal && !legal.some((l) => canonical(l) === canonical(move))) {
      this.log(`${where}: ${brief(move)} is not a legal move; sending it as given, the referee judges it`);
    }
    m.moves++;
    m.lastMove = move;
    m.lastStep = step;
    // Echoing the step and the context's digest tells the referee which request this answers.
    const answer = { move_payload: move, step_number: step };
    if (payload.context_hash) answer.context_hash = payload.context_hash;
    return ['MOVE_RESPONSE', answer, { match_id: env.match_id, auth_token: token }];
  }

  // Runs the strategy within ms; returns its move, or undefined (logged) when there is none.
  async think(state, ms, where, allowed) {
    const start = Date.now();
    let timer;
    let result;
    try {
      const late = new Promise((resolve) => { timer = setTimeout(resolve, Math.max(0, ms), LATE); });
      const chosen = Promise.resolve().then(() => this.opts.chooseMove(state));
      chosen.catch(() => {}); // a late strategy that fails later fails silently
      result = await Promise.race([chosen, late]);
    } catch (e) {
      this.log(`${where}: the strategy failed: ${e && e.stack ? e.stack.split('\n').slice(0, 2).join(' ') : e}; answering without a move`);
      return undefined;
    } finally {
      clearTimeout(timer);
    }
    const took = (Date.now() - start) / 1000;
    if (result === LATE || took * 1000 > ms) {
      this.log(`${where}: the strategy is too slow: no move within ${state.time_left.toFixed(2)} s (the referee allows ${allowed.toFixed(2)} s); answering without a move, the referee counts a miss`);
      return undefined;
    }
    if (result === undefined || result === null) {
      this.log(`${where}: the strategy returned no move (${result}); answering without a move`);
      return undefined;
    }
    let json;
    try {
      json = JSON.stringify(result);
    } catch {
      // a BigInt or a cycle: below
    }
    if (json === undefined) {
      this.log(`${where}: the strategy returned ${String(result)}, not a JSON value; answering without a move`);
      return undefined;
    }
    return JSON.parse(json);
  }

  // GAME_OVER -> GAME_OVER_ACK, with the match's log line.
  async gameOver(env, payload) {
    const token = await this.answerToken(env, false);
    const m = this.match(env);
    this.matches.delete(env.match_id);
    this.confirmed.delete(env.match_id);
    const outcome = payload.outcome;
    m.opponent ??= Object.keys(payload.outcomes ?? {}).find((p) => p !== this.id) ?? null;
    m.game_type ??= env.game_type ?? null;
    if (outcome in this.record) this.record[outcome]++;
    let line = `match ${env.match_id}`;
    if (m.opponent) line += ` vs ${m.opponent}`;
    if (m.game_type) line += ` (${m.game_type})`;
    line += `: ${outcome} (${payload.reason ?? 'no reason given'}), ${m.moves} move(s)`;
    if (m.missed) line += `, ${m.missed} answered without a move`;
    if (outcome === 'loss' && /illegal|invalid|malformed/i.test(payload.reason ?? '') && m.lastMove !== undefined) {
      line += `; the referee refused your move ${brief(m.lastMove)} at step ${m.lastStep}`;
    }
    this.log(line);
    const result = {
      match_id: env.match_id, game_type: m.game_type, outcome, reason: payload.reason ?? null,
      opponent: m.opponent, points: payload.points ?? null, winner: payload.winner ?? null,
      final_state: payload.final_state ?? {},
    };
    this.callback('onGameOver', result);
    return ['GAME_OVER_ACK', { status: 'acknowledged' }, { match_id: env.match_id, auth_token: token }];
  }

  // LEAGUE_COMPLETED -> LEAGUE_COMPLETED_ACK: the final standings.
  leagueCompleted(env, payload) {
    if (!this.fromLeague(env)) {
      throw new Refusal('UNAUTHORIZED', "LEAGUE_COMPLETED must come from the League Manager with this player's token");
    }
    const standings = Array.isArray(payload.standings) ? payload.standings : [];
    const mine = standings.find((row) => row.player_id === this.id);
    this.log(`league ${payload.league_id ?? ''} completed: ${mine ? `rank ${mine.rank} of ${standings.length}, ${mine.points} point(s) (${mine.wins}-${mine.draws}-${mine.losses})` : 'not in the standings'}`);
    this.callback('onLeagueOver', standings);
    return ['LEAGUE_COMPLETED_ACK', { status: 'acknowledged' }, {}];
  }

  // LEAGUE_SHUTDOWN -> LEAGUE_SHUTDOWN_ACK; the player leaves once the answer is out.
  leagueShutdown(env, payload) {
    if (!this.fromLeague(env)) {
      throw new Refusal('UNAUTHORIZED', "LEAGUE_SHUTDOWN must come from the League Manager with this player's token");
    }
    this.log(`league shut down (${payload.reason ?? ''})`);
    return ['LEAGUE_SHUTDOWN_ACK', { status: 'acknowledged' }, {}];
  }

  // Calls a user callback without holding up the answer; an exception is only logged.
  callback(name, arg) {
    const f = this.opts[name];
    if (typeof f !== 'function') return;
    Promise.resolve().then(() => f(arg)).catch((e) => this.log(`${name} failed: ${e && e.message ? e.message : e}`));
  }

  // The JSON-RPC answer to one request body, whichever way it came.
  async answer(body) {
    let id = null;
    let conversationId;
    try {
      let request;
      try {
        request = JSON.parse(body);
      } catch {
        throw new Refusal('PARSE_ERROR', 'the body is not JSON');
      }
      if (request === null || typeof request !== 'object' || Array.isArray(request) ||
          typeof request.params !== 'object' || request.params === null) {
        throw new Refusal('INVALID_REQUEST', 'not a JSON-RPC request with params');
      }
      id = request.id ?? null;
      let type, payload, context;
      try {
        const env = request.params.envelope;
        conversationId = env.conversation_id;
        if (typeof env.message_type !== 'string' || typeof request.params.payload !== 'object' || request.params.payload === null) {
          throw new Error('envelope.message_type and payload are required');
        }
        [type, payload, context] = await this.handle(request.params);
      } catch (e) {
        if (e instanceof Refusal) throw e;
        throw new Refusal('SCHEMA_VIOLATION', `missing or malformed field: ${e.message}`);
      }
      return { jsonrpc: '2.0', id, result: { envelope: envelope(this.sender, type, conversationId, context), payload } };
    } catch (e) {
      const data = { reason: e.reason };
      if (typeof conversationId === 'string') data.conversation_id = conversationId;
      return { jsonrpc: '2.0', id, error: { code: CODES[e.reason] ?? -32603, message: e.message, data } };
    }
  }
}

const LATE = Symbol('late');

// Whether an answer is our LEAGUE_SHUTDOWN_ACK: once it is out, we leave.
const leaving = (out) => out.result?.envelope.message_type === 'LEAGUE_SHUTDOWN_ACK';

// ---------------------------------------------------------------------------------------
// Inbound: an HTTP server on 127.0.0.1:port, POST /mcp
// ---------------------------------------------------------------------------------------

function listen(player, port) {
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/mcp') {
      res.writeHead(req.method !== 'POST' ? 405 : 404, req.method !== 'POST' ? { Allow: 'POST' } : {}).end();
      return;
    }
    const chunks = [];
    let size = 0;
    let tooBig = false;
    req.on('data', (chunk) => {
      if (tooBig) return;
      size += chunk.length;
      if (size > MAX_BODY) {
        tooBig = true;
        res.writeHead(413, { Connection: 'close' }).end();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', async () => {
      if (tooBig) return;
      const out = await player.answer(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(out), () => { if (leaving(out)) player.stop('shutdown'); });
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

// ---------------------------------------------------------------------------------------
// Outbound: the League Manager's relay (protocol/README.md, "Outbound agents")
// ---------------------------------------------------------------------------------------

// GET or POST <League Manager base><path> with our token as a Bearer; the decoded JSON.
async function relay(player, path, post, timeoutMs, signal) {
  const res = await httpRequest(player.league.replace(/\/mcp$/, '') + path, {
    method: post ? 'POST' : 'GET', body: post && JSON.stringify(post), timeoutMs, signal,
    headers: { Authorization: `Bearer ${player.token}` },
  });
  if (res.status !== 200) {
    const retryAfter = Number(res.headers['retry-after']);
    throw Object.assign(new Error(`relay ${path.split('?')[0]}: HTTP ${res.status}`), { status: res.status, retryAfter });
  }
  return JSON.parse(res.text);
}

// Answers one relayed request and posts the answer, trying again for 30 s.
async function serveRelayed(player, { seq, body }) {
  const out = await player.answer(body);
  const deadline = Date.now() + 30000;
  for (let wait = 100; ; wait = Math.min(2 * wait, 5000)) {
    try {
      await relay(player, '/relay/answer', { seq, status: 200, body: JSON.stringify(out) }, 10000);
      break;
    } catch (e) {
      if ([400, 401, 404, 410].includes(e.status) || Date.now() + wait > deadline) {
        player.log(`could not post the answer to relayed request ${seq}: ${e.message}`);
        break;
      }
      await sleep(e.retryAfter > 0 ? Math.max(wait, e.retryAfter * 1000) : wait);
    }
  }
  if (leaving(out)) player.stop('shutdown');
}

// Polls the relay until it closes or the player stops, answering each request concurrently.
async function pollRelay(player) {
  let epoch = '';
  let after = 0;
  let stopped = false;
  const abort = new AbortController(); // ends the poll under way when the player stops
  player.stopped.then(() => {
    stopped = true;
    abort.abort();
  });
  const stop = player.stopped.then(() => 'stopped');
  for (let wait = 100; !stopped;) {
    let poll;
    try {
      poll = await Promise.race([relay(player, `/relay/poll?${new URLSearchParams({ epoch, after })}`, undefined, 40000, abort.signal), stop]);
    } catch (e) {
      if (stopped) return;
      if (e.status === 401 || e.status === 410) {
        player.log(`the relay closed (HTTP ${e.status})`);
        player.stop('relay closed');
        return;
      }
      await Promise.race([sleep(e.retryAfter > 0 ? Math.max(wait, e.retryAfter * 1000) : wait), stop]);
      wait = Math.min(2 * wait, 5000);
      continue;
    }
    if (poll === 'stopped') return;
    wait = 100;
    if (poll.epoch !== epoch) [epoch, after] = [poll.epoch, 0]; // a new relay counts from 1
    for (const request of poll.requests ?? []) {
      after = Math.max(after, request.seq);
      serveRelayed(player, request).catch((e) => player.log(`relayed request ${request.seq}: ${e.message}`));
    }
  }
}

// ---------------------------------------------------------------------------------------
// run and main
// ---------------------------------------------------------------------------------------

// Plays in the league until it shuts down; see the top of this file.
async function run(opts) {
  const { id, league, chooseMove } = opts || {};
  if (typeof id !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(id)) throw new Error(`agentleague: bad player id ${id}`);
  if (typeof league !== 'string' || !/^https?:\/\//.test(league)) throw new Error(`agentleague: bad League Manager URL ${league}`);
  if (typeof chooseMove !== 'function') throw new Error('agentleague: chooseMove must be a function');
  const player = new Player(opts);
  const games = player.games.join(', ');
  const outbound = opts.outbound ?? (opts.port === undefined || opts.port === null);
  let server;
  if (outbound) {
    player.log(`playing ${games} outbound through ${league}`);
    await player.register(); // the relay keeps what comes before we poll
    await pollRelay(player);
  } else {
    // Serve before registering: a match may start as soon as the registration is accepted.
    server = await listen(player, Number(opts.port || 0));
    const endpointUrl = `http://127.0.0.1:${server.address().port}/mcp`;
    player.log(`playing ${games}, listening on ${endpointUrl}`);
    await player.register(endpointUrl);
    await player.stopped;
    server.close();
    if (server.closeAllConnections) server.closeAllConnections();
  }
  const { win, draw, loss } = player.record;
  player.log(`wins ${win}, draws ${draw}, losses ${loss}; bye`);
  return 0;
}

const USAGE = `usage: node PLAYER.js --id ID [--league URL] [--port N | --outbound]
  --id ID       player id, e.g. js1 (letters, digits, _ and -)
  --league URL  the League Manager's URL (default: http://127.0.0.1:8000/mcp)
  --port N      listen on this port (0: any free one)
  --outbound    open no port: play through the League Manager's relay`;

// run() with --id, --league, --port and --outbound from the command line (opts gives their
// defaults and the other options of run); exits the process with run's code.
function main(chooseMove, opts = {}) {
  const usage = (problem) => {
    console.error(`${problem ? `${problem}\n` : ''}${USAGE}${opts.port !== undefined ? '\n  (this player listens unless --outbound)' : '\n  (without --port the player is outbound)'}`);
    process.exit(2);
  };
  const args = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    let [flag, value] = argv[i].split(/=(.*)/s);
    if (flag === '-h' || flag === '--help') usage();
    if (flag === '--outbound' && value === undefined) {
      args.outbound = true;
      continue;
    }
    if (!['--id', '--league', '--port'].includes(flag)) usage(`unknown argument ${argv[i]}`);
    if (value === undefined) value = argv[++i];
    if (value === undefined) usage(`${flag} needs a value`);
    args[flag.slice(2)] = value;
  }
  const id = args.id ?? opts.id;
  const league = args.league ?? opts.league ?? 'http://127.0.0.1:8000/mcp';
  if (!id) usage('--id is required');
  if (args.outbound && args.port !== undefined) usage('--outbound and --port exclude each other');
  let port = opts.port;
  if (args.port !== undefined) {
    port = Number(args.port);
    if (!/^\d+$/.test(args.port) || port > 65535) usage(`--port ${args.port} is not a port number`);
  }
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      console.log(`${id}: interrupted (${signal})`);
      process.exit(0);
    });
  }
  run({ ...opts, id, league, port, outbound: args.outbound || undefined, chooseMove }).then((code) => process.exit(code), (e) => {
    console.error(e.message);
    process.exit(1);
  });
}

module.exports = { run, main, legalMoves, clockBudget };
