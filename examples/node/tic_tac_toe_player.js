#!/usr/bin/env node
// A tic-tac-toe player for Agent League, in JavaScript for Node 20 (18 works too) with no
// packages: node:http serves, fetch calls.
//
// Run it against a local league that waits for it (from the repository root):
//
//     make demo EXTRA=1        # first terminal: a league that waits for one more player
//     node examples/node/tic_tac_toe_player.js --id js1 --league http://127.0.0.1:8000/mcp
//
// The player is a client and a server at once. As a client it registers with the League
// Manager. As a server it answers whoever calls it: referees (GAME_INVITATION,
// REQUEST_MOVE, GAME_OVER) and the League Manager (LEAGUE_SHUTDOWN). Every call is
// JSON-RPC 2.0 over HTTP POST, method "league.handle"; its params, and the result of its
// answer, are one league.v2 message: {"envelope": {...}, "payload": {...}}. Every answer
// is the result of the request that asked for it; nothing is sent back later.
//
// Behind NAT or in a sandbox, where no one can call it, add --outbound: the player then
// opens no port, registers with the feature "outbound" and no endpoint_url, and the League
// Manager answers with an endpoint on its relay (http://LM/relay/player/<id>/mcp) that
// referees call like any other. The player long-polls the relay for the requests sent
// there, answers each with the same code as above, and posts the answer back (see
// serveOutbound).
//
// The schema of each message is in schemas/ (schemas/<message_type in lowercase>.json),
// and docs/agents.md has the flow of a match, credentials and
// deadlines. examples/python/tic_tac_toe_player.py is the same player in Python.
'use strict';

const http = require('node:http');
const crypto = require('node:crypto');
const { parseArgs } = require('node:util');

const PROTOCOL = 'league.v2';
const GAME = 'tic_tac_toe';

// JSON-RPC error codes of the reasons this player answers with (protocol/README.md, "Errors").
const ERROR_CODES = {
  UNAUTHORIZED: -32000,
  UNSUPPORTED_MESSAGE: -32015,
  BUSY: -32017,
  INVALID_REQUEST: -32600,
  SCHEMA_VIOLATION: -32602,
  PARSE_ERROR: -32700,
};

// ---------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------

// A league.v2 envelope. context adds auth_token, match_id, ... when not undefined; the
// envelope refuses any field it does not know. toISOString is RFC 3339 in UTC, ending in Z.
function envelope(sender, messageType, conversationId, context = {}) {
  const env = {
    protocol: PROTOCOL, message_type: messageType, sender,
    timestamp: new Date().toISOString(), conversation_id: conversationId,
  };
  for (const [k, v] of Object.entries(context)) {
    if (v !== undefined) env[k] = v;
  }
  return env;
}

// Refuses a request with a JSON-RPC error of a protocol reason, e.g. UNAUTHORIZED.
class Refusal extends Error {
  constructor(reason, message) {
    super(message);
    this.reason = reason;
  }
}

// The League Manager refused our request; reason is its data.reason.
class LeagueError extends Error {
  constructor(reason, message) {
    super(`${reason}: ${message}`);
    this.reason = reason;
  }
}

// ---------------------------------------------------------------------------------------
// The game: the board comes in REQUEST_MOVE's step_context
// ---------------------------------------------------------------------------------------

// The eight lines of three cells, as [row, col] pairs.
const LINES = [
  [[0, 0], [0, 1], [0, 2]], [[1, 0], [1, 1], [1, 2]], [[2, 0], [2, 1], [2, 2]],
  [[0, 0], [1, 0], [2, 0]], [[0, 1], [1, 1], [2, 1]], [[0, 2], [1, 2], [2, 2]],
  [[0, 0], [1, 1], [2, 2]], [[0, 2], [1, 1], [2, 0]],
];

// Whether putting mark on the empty cell [r, c] makes three in a line.
function completesLine(board, [r, c], mark) {
  return LINES.some((line) => line.some(([lr, lc]) => lr === r && lc === c) &&
    line.every(([lr, lc]) => (lr === r && lc === c) || board[lr][lc] === mark));
}

// A simple, sensible strategy. board is 3 rows of 3 cells, each "X", "O" or "" (empty);
// mark is ours. Returns the [row, col] to play, 0-based.
function chooseMove(board, mark) {
  const other = mark === 'X' ? 'O' : 'X';
  const empty = [];
  for (let r = 0; r < 3; r++) {
    for (let c = 0; c < 3; c++) {
      if (board[r][c] === '') empty.push([r, c]);
    }
  }
  for (const who of [mark, other]) { // 1. win if we can; 2. else block the opponent's win
    const cell = empty.find((cell) => completesLine(board, cell, who));
    if (cell) return cell;
  }
  for (const [r, c] of [[1, 1], [0, 0], [0, 2], [2, 0], [2, 2]]) { // 3. the centre, then a corner
    if (board[r][c] === '') return [r, c];
  }
  return empty[0]; // 4. the first empty cell
}

// ---------------------------------------------------------------------------------------
// The player
// ---------------------------------------------------------------------------------------

class Player {
  constructor(id, leagueUrl) {
    this.id = id;
    this.sender = `player:${id}`;
    this.leagueUrl = leagueUrl;
    this.token = null; // our league token, from the registration answer
    this.leagueFeatures = []; // protocol extensions the League Manager announced
    this.record = { win: 0, draw: 0, loss: 0 };
    // Resolved once we hold our token (see handle).
    this.registered = new Promise((resolve) => { this.markRegistered = resolve; });
  }

  // --- talking to the League Manager -----------------------------------------------------

  // Sends one request to the League Manager and returns the payload of its answer.
  async callLeague(messageType, payload, authToken) {
    const request = {
      jsonrpc: '2.0', method: 'league.handle', id: crypto.randomUUID(),
      params: { envelope: envelope(this.sender, messageType, crypto.randomUUID(), { auth_token: authToken }), payload },
    };
    const response = await fetch(this.leagueUrl, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(request), signal: AbortSignal.timeout(10000),
    });
    const answer = await response.json();
    if (answer.error) {
      throw new LeagueError(answer.error.data?.reason ?? 'UNKNOWN', answer.error.message ?? '');
    }
    return answer.result.payload;
  }

  // REGISTER_PLAYER_REQUEST, then AGENT_READY_REQUEST. Players may register only once a
  // referee has: until then, and while the League Manager is not up yet, we try again.
  // No endpointUrl registers an outbound player: the League Manager gives it one.
  async register(endpointUrl) {
    const payload = {
      player_id: this.id, endpoint_url: endpointUrl, game_types: [GAME],
      display_name: `Node example ${this.id}`,
    };
    if (endpointUrl === undefined) payload.features = ['outbound']; // JSON drops endpoint_url
    let answer;
    for (let attempt = 0; attempt < 240 && !answer; attempt++) { // two minutes, every half second
      try {
        answer = await this.callLeague('REGISTER_PLAYER_REQUEST', payload);
      } catch (e) {
        if (e instanceof LeagueError && !['NO_REFEREE_REGISTERED', 'RATE_LIMITED'].includes(e.reason)) {
          // REGISTRATION_CLOSED (the league started), DUPLICATE_REGISTRATION (the id is
          // taken), UNSUPPORTED_GAME (the league plays another game), ...
          throw new Error(`${this.id}: registration refused: ${e.message}`);
        }
        // Otherwise: no referee yet, too many registrations at once, or the League
        // Manager is not listening yet.
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    if (!answer) throw new Error(`${this.id}: could not register with ${this.leagueUrl}`);
    this.token = answer.auth_token;
    this.leagueFeatures = answer.features ?? [];
    this.markRegistered();
    console.log(`${this.id} registered in league ${answer.league_id}`);
    if (endpointUrl === undefined) console.log(`${this.id}: referees call us at ${answer.endpoint_url}`);
    // From now on every request to the League Manager carries our token.
    await this.callLeague('AGENT_READY_REQUEST', {}, this.token);
  }

  // --- credentials -------------------------------------------------------------------------

  // Checks the match credential a referee shows, and returns the auth_token to put in our
  // answer.
  //
  // Our League Manager gives the referee of a match one credential per player:
  // hex(HMAC-SHA256(key = that player's league token, message = match_id)). The referee
  // shows it in auth_token of GAME_INVITATION, REQUEST_MOVE and GAME_OVER. We can compute
  // it too, so a right credential proves the League Manager sent this referee; a wrong one
  // is refused. We answer with the same credential, and the referee checks it the same way.
  //
  // Why not answer with our league token, as seed 004 §8.2 reads? Our referee accepts that
  // too, but the referee would then hold our token and could pose as us to the League
  // Manager; a credential is worth nothing outside its match.
  //
  // A referee that shows nothing (one written from the seeds alone) gives us nothing to
  // check, and so does a League Manager that did not announce "match_credentials": then we
  // play and answer without auth_token, which every referee accepts.
  answerToken(env) {
    const shown = env.auth_token;
    if (shown === undefined || !this.leagueFeatures.includes('match_credentials')) return undefined;
    const expected = crypto.createHmac('sha256', this.token).update(env.match_id).digest('hex');
    if (!sameSecret(shown, expected)) {
      throw new Refusal('UNAUTHORIZED', "auth_token is not this player's credential for the match");
    }
    return shown;
  }

  // --- the messages we answer ----------------------------------------------------------------

  // Answers one request: returns [message_type, payload, extra envelope fields].
  async handle(message) {
    const { envelope: env, payload } = message;
    const handlers = {
      GAME_INVITATION: this.invitation, REQUEST_MOVE: this.requestMove,
      GAME_OVER: this.gameOver, LEAGUE_SHUTDOWN: this.leagueShutdown,
    };
    if (!Object.hasOwn(handlers, env.message_type)) {
      throw new Refusal('UNSUPPORTED_MESSAGE', `a player does not accept ${env.message_type}`);
    }
    const handler = handlers[env.message_type];
    // The League Manager may start a match the moment we are registered, even before its
    // answer has reached us: wait for our token before judging anything.
    const waited = await Promise.race([this.registered.then(() => true),
      new Promise((resolve) => setTimeout(resolve, 5000, false))]);
    if (!waited) throw new Refusal('BUSY', 'not registered yet');
    return handler.call(this, env, payload);
  }

  // GAME_INVITATION -> GAME_JOIN_ACK, within the join deadline (10 s by default).
  invitation(env, payload) {
    const token = this.answerToken(env);
    let ack = { status: 'accepted', match_id: payload.match_id };
    if (payload.game_type !== GAME) {
      ack = { status: 'declined', match_id: payload.match_id, reason: `this player plays ${GAME}` };
    }
    return ['GAME_JOIN_ACK', ack, { match_id: env.match_id, auth_token: token }];
  }

  // REQUEST_MOVE -> MOVE_RESPONSE.
  //
  // The referee stops waiting deadline_ms after it sent the request (30 s by default). A
  // late answer is a timeout: first a warning (the request comes again), then a move played
  // for us (the first empty cell), then the match is lost. This strategy takes
  // microseconds; a slower one must watch the clock and answer in time.
  requestMove(env, payload) {
    const token = this.answerToken(env);
    if (payload.warning) console.log(`${this.id}: warning from the referee: ${payload.warning}`);
    const context = payload.step_context; // {"board": [[...], ...], "your_mark": "X", "move_number": 1}
    const [row, col] = chooseMove(context.board, context.your_mark);
    const move = {
      move_payload: { row, col },
      // Echoing the step tells the referee which request this answers.
      step_number: payload.step_number,
    };
    return ['MOVE_RESPONSE', move, { match_id: env.match_id, auth_token: token }];
  }

  // GAME_OVER -> GAME_OVER_ACK. outcome is ours: win, draw or loss.
  gameOver(env, payload) {
    const token = this.answerToken(env);
    this.record[payload.outcome] += 1;
    console.log(`${this.id}: match ${env.match_id}: ${payload.outcome} (${payload.reason ?? ''})`);
    return ['GAME_OVER_ACK', { status: 'acknowledged' }, { match_id: env.match_id, auth_token: token }];
  }

  // LEAGUE_SHUTDOWN -> LEAGUE_SHUTDOWN_ACK, then we leave (the HTTP handler exits once the
  // answer is written). Only the League Manager may stop us: ours sends the notice with our
  // own league token when it announced "signed_assignments".
  leagueShutdown(env, payload) {
    const signed = this.leagueFeatures.includes('signed_assignments');
    if (env.sender !== 'league_manager' || (signed && !sameSecret(env.auth_token ?? '', this.token))) {
      throw new Refusal('UNAUTHORIZED', "LEAGUE_SHUTDOWN must come from the League Manager with this player's token");
    }
    console.log(`${this.id}: league shut down (${payload.reason ?? ''})`);
    return ['LEAGUE_SHUTDOWN_ACK', { status: 'acknowledged' }, {}];
  }
}

// Compares two secrets in constant time.
function sameSecret(a, b) {
  const x = Buffer.from(String(a));
  const y = Buffer.from(String(b));
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

// ---------------------------------------------------------------------------------------
// Answering: one request body in, one JSON-RPC result or error out, whether the request
// came to our HTTP server (POST /mcp) or through the League Manager's relay (--outbound)
// ---------------------------------------------------------------------------------------

// The JSON-RPC answer to one request body.
async function answer(player, body) {
  let requestId = null;
  let conversationId;
  try {
    let request;
    try {
      request = JSON.parse(body);
    } catch {
      throw new Refusal('PARSE_ERROR', 'the body is not JSON');
    }
    if (request === null || typeof request !== 'object' || typeof request.params !== 'object' || request.params === null) {
      throw new Refusal('INVALID_REQUEST', 'not a JSON-RPC request with params');
    }
    requestId = request.id ?? null;
    let messageType, payload, context;
    try {
      conversationId = request.params.envelope.conversation_id;
      [messageType, payload, context] = await player.handle(request.params);
    } catch (e) {
      if (e instanceof Refusal) throw e;
      throw new Refusal('SCHEMA_VIOLATION', `missing or malformed field: ${e.message}`);
    }
    // The answer echoes the request's conversation_id: that is how the caller pairs them.
    const reply = { envelope: envelope(player.sender, messageType, conversationId, context), payload };
    return { jsonrpc: '2.0', id: requestId, result: reply };
  } catch (e) {
    const data = { reason: e.reason };
    if (conversationId) data.conversation_id = conversationId;
    return { jsonrpc: '2.0', id: requestId, error: { code: ERROR_CODES[e.reason], message: e.message, data } };
  }
}

function serve(player, port) {
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/mcp') {
      res.writeHead(req.method !== 'POST' ? 405 : 404).end();
      return;
    }
    const chunks = [];
    let size = 0;
    let tooBig = false;
    req.on('data', (chunk) => {
      if (tooBig) return; // the rest is read and dropped: the answer is already sent
      size += chunk.length;
      if (size > 1 << 20) { // the protocol's limit is 1 MiB
        tooBig = true;
        res.writeHead(413, { Connection: 'close' }).end();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', async () => {
      if (tooBig) return;
      const out = await answer(player, Buffer.concat(chunks).toString('utf8'));
      // Every JSON-RPC answer, errors included, is HTTP 200.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(out), () => {
        if (leaving(out)) bye(player); // only now, once the acknowledgement is written
      });
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

// Whether an answer is our LEAGUE_SHUTDOWN_ACK: once it is out, we leave.
const leaving = (out) => out.result?.envelope.message_type === 'LEAGUE_SHUTDOWN_ACK';

function bye(player) {
  const { win, draw, loss } = player.record;
  console.log(`${player.id}: wins ${win}, draws ${draw}, losses ${loss}; bye`);
  process.exit(0);
}

// ---------------------------------------------------------------------------------------
// Outbound (--outbound): no port. The League Manager's relay holds the requests sent to
// the endpoint it gave us; we fetch them and post the answers over connections we open
// (protocol/README.md, "Outbound agents").
// ---------------------------------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// GET <League Manager base><path>, or POST post there, with our token as a Bearer; returns
// the decoded JSON. A status other than 200 throws an error carrying it.
async function relay(player, path, post) {
  const response = await fetch(player.leagueUrl.replace(/\/mcp$/, '') + path, {
    method: post ? 'POST' : 'GET', body: post && JSON.stringify(post),
    headers: { Authorization: `Bearer ${player.token}`, 'Content-Type': 'application/json' },
    signal: AbortSignal.timeout(40000), // a poll waits up to 25 s
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    throw Object.assign(new Error(`relay ${path}: HTTP ${response.status}`), { status: response.status });
  }
  return response.json();
}

// Answers request seq, then posts the answer, trying again for 30 s if the connection
// fails. "gone" (answered already, or its caller gave up) is fine too.
async function serveRelayed(player, { seq, body }) {
  const out = await answer(player, body);
  const deadline = Date.now() + 30000;
  for (let wait = 100; ; wait = Math.min(2 * wait, 5000)) {
    try {
      await relay(player, '/relay/answer', { seq, status: 200, body: JSON.stringify(out) });
      break;
    } catch (e) {
      // 410: the relay closed; 401: not our token; retrying would not help.
      if (e.status || Date.now() + wait > deadline) break;
      await sleep(wait);
    }
  }
  if (leaving(out)) bye(player); // only now that the LEAGUE_SHUTDOWN_ACK is out
}

// Polls the relay until it closes (410: the league is over), answering each request as it
// comes, without waiting for the others: moves of different matches overlap. A failed poll
// is repeated, after a pause growing from 0.1 to 5 s, with the same epoch and after: it
// hands out the same requests.
async function serveOutbound(player) {
  let epoch = '';
  let after = 0;
  for (let wait = 100; ;) {
    let poll;
    try {
      poll = await relay(player, `/relay/poll?${new URLSearchParams({ epoch, after })}`);
    } catch (e) {
      if (e.status === 401 || e.status === 410) {
        console.log(`${player.id}: the relay closed (HTTP ${e.status})`);
        return;
      }
      await sleep(wait);
      wait = Math.min(2 * wait, 5000);
      continue;
    }
    wait = 100;
    if (poll.epoch !== epoch) [epoch, after] = [poll.epoch, 0]; // a new relay counts from 1
    for (const request of poll.requests) {
      after = Math.max(after, request.seq);
      serveRelayed(player, request); // not awaited
    }
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      id: { type: 'string' }, // player id, e.g. js1 (letters, digits, _ and -)
      league: { type: 'string' }, // the League Manager's URL, e.g. http://127.0.0.1:8000/mcp
      port: { type: 'string', default: '0' }, // port to listen on (default: any free port)
      outbound: { type: 'boolean', default: false }, // open no port: take requests from the relay
    },
  });
  if (!values.id || !values.league) {
    console.error('usage: node tic_tac_toe_player.js --id ID --league http://127.0.0.1:8000/mcp [--port N | --outbound]');
    process.exit(2);
  }
  const player = new Player(values.id, values.league);
  process.once('SIGINT', () => {
    console.log(`${values.id}: interrupted`);
    bye(player);
  });
  if (values.outbound) {
    console.log(`player ${values.id} outbound through ${values.league}`);
    await player.register(); // the relay keeps what comes before we poll
    await serveOutbound(player);
    bye(player); // the relay closed: the league is over
    return;
  }
  // Serve before registering: a match may start as soon as the registration is accepted.
  const server = await serve(player, Number(values.port));
  const endpointUrl = `http://127.0.0.1:${server.address().port}/mcp`;
  console.log(`player ${values.id} listening on ${endpointUrl}`);
  await player.register(endpointUrl);
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
