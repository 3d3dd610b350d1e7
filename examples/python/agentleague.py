#!/usr/bin/env python3
"""agentleague: an Agent League player in one function, standard library only (Python 3.9+).

Copy this file beside your player (or put examples/python on sys.path) and write one function:

    import agentleague

    def choose_move(state):
        return state["legal_moves"][0]          # the move_payload to send

    agentleague.main(choose_move, game="tic_tac_toe")   # reads --id, --league, --port, --outbound

or, without a command line, agentleague.run(choose_move, player_id="py1", game="tic_tac_toe",
league="http://127.0.0.1:8000/mcp"). Without a port the player is outbound (it opens no port and
takes its requests from the League Manager's relay: protocol/README.md, "Outbound agents"); with
port=N (--port N; 0 is any free port) it listens on 127.0.0.1:N/mcp instead.

The kit does the rest: registration with retries, AGENT_READY, invitations, match credentials,
deadlines, GAME_OVER, LEAGUE_COMPLETED, LEAGUE_SHUTDOWN, and one log line per match.

state, the one argument of choose_move(state), is a dict:

    game_type    str    the game of the match: "tic_tac_toe", "connect_four", "chess",
                        "rock_paper_scissors", "even_odd", or an external game's name ("nim")
    match_id     str    the match, e.g. "r01-m02"
    step_number  int    the step the referee asks a move for (from 1)
    context      dict   the step_context exactly as the referee sent it (game-specific):
                          tic_tac_toe   board (3x3 of "X"/"O"/""), your_mark, move_number
                          connect_four  board (6 rows x 7 of "R"/"Y"/"", row 0 on top),
                                        your_color, move_number, valid_moves (columns)
                          chess         fen, side_to_move, your_color ("white"/"black"),
                                        legal_moves (UCI strings), is_check, last_move,
                                        moves, move_number, ply
                          rock_paper_scissors, even_odd
                                        round, rounds, your_score, opponent_score, history
                          an external game: whatever its referee sends (nim: heaps, step)
    legal_moves  list|None  every legal move, each ready to return as it is (a move_payload):
                          tic_tac_toe {"row": r, "col": c}; connect_four {"column": c};
                          chess {"uci": "e2e4"}; rock_paper_scissors {"choice": "rock"} ...;
                          even_odd {"choice": "even"|"odd"}; an external game whose context
                          has a list "legal_moves" gets that list; otherwise None
    role         str|None  your side as the context names it: your_mark ("X"/"O"),
                          your_color ("R"/"Y", "white"/"black"); None when it names none
    index        int|None  your seat in the match (0 moves first), from the invitation
    opponent     str|None  the opponent's player id, from the invitation
    game_params  dict   the match's game parameters from the invitation ({} when none)
    time_left    float  seconds left to return a move: the referee's deadline less a safety
                        margin (a tenth of it, 0.1 s to 0.5 s) for the answer to travel; under a
                        clock (clocks below) the clock's budget for this move instead, when
                        shorter: (your clock + bank) / moves to go (30 without periods) + 3/4
                        of the increment, at most half of your clock + bank
    clocks       dict|None  both clocks when the match is played on a clock, as the referee
                        sent them (milliseconds): {"you": {"remaining_ms", "bank_ms",
                        "moves_to_go"}, "opponent": {...}, "increment_ms"}; None without one
    last_result  dict|None  what became of your previous move, as the referee sent it
                        (outcome SUCCESS/INVALID/TIMEOUT/FORCED, reason, move)
    warning      str|None  the referee's warning when it asks again after a miss
    player_id    str    your id

choose_move returns the move_payload to send (any JSON value). The kit sends it as given: the
referee judges it, and an illegal move loses the match. When choose_move raises, returns None,
or is still thinking at time_left, the kit logs why and answers the request with a JSON-RPC
error (INTERNAL): for the referee that is a missed move (a warning and the same request again,
then a forced move, then a loss; docs/agents.md, "Deadlines"), never a malformed move.

Optional callbacks:

    on_game_over(result)      after each match; result is a dict: match_id, game_type,
                              outcome ("win"/"draw"/"loss"), reason, opponent, points,
                              winner, final_state (the GAME_OVER payload's fields)
    on_league_over(standings) once, when the league completes (LEAGUE_COMPLETED): the final
                              standings, best first, rows of {rank, player_id, points, wins,
                              draws, losses, matches_played}

run() returns 0 once the League Manager shuts the league down (LEAGUE_SHUTDOWN) or the relay
closes, and raises SystemExit with a message when registration is refused or never succeeds.
"""
import argparse
import hashlib
import hmac
import json
import sys
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import datetime, timezone
from http.client import HTTPException
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["run", "main", "legal_moves"]

PROTOCOL = "league.v2"
MAX_BODY = 1 << 20  # the protocol's bound on a request body
# JSON-RPC codes of the reasons the kit answers with (protocol/README.md, "Errors").
ERROR_CODES = {"UNAUTHORIZED": -32000, "UNSUPPORTED_MESSAGE": -32015, "BUSY": -32017, "INTERNAL": -32603,
               "INVALID_REQUEST": -32600, "SCHEMA_VIOLATION": -32602, "PARSE_ERROR": -32700}
# Registration refusals worth another try: no referee yet, or the League Manager is busy.
RETRY_REASONS = ("NO_REFEREE_REGISTERED", "RATE_LIMITED", "INTERNAL", "STORAGE_UNAVAILABLE", "BUSY",
                 "LEAGUE_NOT_ACTIVE")
CHOICES = {"rock_paper_scissors": ["rock", "paper", "scissors"], "even_odd": ["even", "odd"]}


def legal_moves(game_type, context):
    """The legal moves of a step_context, each as a move_payload, or None when the kit cannot
    tell (an external game whose context lists no "legal_moves")."""
    if game_type == "tic_tac_toe":
        board = context["board"]
        return [{"row": r, "col": c} for r in range(3) for c in range(3) if board[r][c] == ""]
    if game_type == "connect_four":
        return [{"column": c} for c in context.get("valid_moves", [])]
    if game_type == "chess":
        return [{"uci": m} for m in context.get("legal_moves", [])]
    if game_type in CHOICES:
        return [{"choice": c} for c in CHOICES[game_type]]
    moves = context.get("legal_moves")
    return list(moves) if isinstance(moves, list) else None


def now():
    """A timestamp as the protocol wants it: RFC 3339 in UTC, ending in Z."""
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def clock_budget(clocks):
    """The seconds a move may take under REQUEST_MOVE's clocks. It mirrors
    protocol.TimeControl.Budget (protocol/clock.go), the one budget rule of a clocked move: your
    clock and bank spread over the moves to go (30 without periods), plus 3/4 of the increment,
    never more than half of what is left."""
    you = clocks.get("you") if isinstance(clocks.get("you"), dict) else {}
    left = (you.get("remaining_ms") or 0) + (you.get("bank_ms") or 0)
    togo = you.get("moves_to_go") or 0
    if togo <= 0:
        togo = 30
    ms = left / togo + (clocks.get("increment_ms") or 0) * 3 / 4
    return max(min(ms, left / 2), 0) / 1000.0


def seconds_until(timestamp):
    """Seconds from now until an RFC 3339 timestamp, or None if it cannot be read."""
    try:
        return (datetime.fromisoformat(timestamp.replace("Z", "+00:00")) - datetime.now(timezone.utc)).total_seconds()
    except (AttributeError, TypeError, ValueError):
        return None


def describe(error):
    """An exception as one line: its type and message."""
    return "".join(traceback.format_exception_only(type(error), error)).strip()


class Refusal(Exception):
    """Refuses a request with a JSON-RPC error of a protocol reason, e.g. UNAUTHORIZED."""

    def __init__(self, reason, message):
        super().__init__(message)
        self.reason = reason


class LeagueError(Exception):
    """The League Manager refused our request; reason is its data.reason."""

    def __init__(self, reason, message):
        super().__init__("%s: %s" % (reason, message))
        self.reason = reason


class Player:
    """One player: the League Manager's client, and the server of referees' requests."""

    def __init__(self, choose_move, player_id, league, game_types, on_game_over, on_league_over, display_name, log):
        self.choose_move, self.on_game_over, self.on_league_over = choose_move, on_game_over, on_league_over
        self.id, self.sender, self.league = player_id, "player:" + player_id, league
        self.game_types, self.display_name, self.log = game_types, display_name, log
        self.token = None
        self.league_features = []
        self.registered = threading.Event()  # handlers wait for our token
        self.leaving = threading.Event()     # set once LEAGUE_SHUTDOWN_ACK is out, or the relay closed
        self.lock = threading.Lock()
        self.matches = {}                    # match_id -> what the invitation said, and our last move
        self.confirmed = {}                  # match_id -> referee confirmed by QUERY_MATCH
        self.record = {"win": 0, "draw": 0, "loss": 0}

    def say(self, text, *args):
        self.log("%s: %s" % (self.id, text % args if args else text))

    # --- the League Manager ------------------------------------------------------------

    def call_league(self, message_type, payload, auth_token=None, ids=None):
        """Sends one request to the League Manager and returns its answer's payload. ids, a
        (JSON-RPC id, conversation_id) pair, makes a retry the same call."""
        request_id, conversation_id = ids or (str(uuid.uuid4()), str(uuid.uuid4()))
        env = {"protocol": PROTOCOL, "message_type": message_type, "sender": self.sender, "timestamp": now(),
               "conversation_id": conversation_id}
        if auth_token:
            env["auth_token"] = auth_token
        request = {"jsonrpc": "2.0", "method": "league.handle", "id": request_id,
                   "params": {"envelope": env, "payload": payload}}
        http_request = urllib.request.Request(self.league, data=json.dumps(request).encode(),
                                              headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(http_request, timeout=10) as response:
            answer = json.loads(response.read())
        if "error" in answer:
            error = answer["error"]
            raise LeagueError((error.get("data") or {}).get("reason", "UNKNOWN"), error.get("message", ""))
        return answer["result"]["payload"]

    def call_until(self, deadline, message_type, payload, auth_token=None):
        """call_league, again every half second while the League Manager is not reachable or
        answers with a reason worth retrying, until deadline (time.monotonic)."""
        ids = (str(uuid.uuid4()), str(uuid.uuid4()))
        while True:
            try:
                return self.call_league(message_type, payload, auth_token, ids)
            except LeagueError as e:
                if e.reason not in RETRY_REASONS:
                    # REGISTRATION_CLOSED (the league started), DUPLICATE_REGISTRATION (the id
                    # is taken), UNSUPPORTED_GAME (the league plays another game), ...
                    raise SystemExit("%s: %s refused: %s" % (self.id, message_type, e))
                problem = str(e)
            except (OSError, HTTPException, ValueError) as e:  # not listening yet, or a cut answer
                problem = describe(e)
            if time.monotonic() + 0.5 > deadline:
                raise SystemExit("%s: %s to %s failed until the deadline: %s" % (self.id, message_type, self.league, problem))
            time.sleep(0.5)

    def register(self, endpoint_url, timeout):
        """REGISTER_PLAYER_REQUEST, then AGENT_READY_REQUEST. endpoint_url None registers an
        outbound player: the League Manager gives it an endpoint on its relay."""
        features = ["match_credentials", "league_completed"]
        payload = {"player_id": self.id, "game_types": self.game_types, "features": features,
                   "display_name": self.display_name or self.id}
        if endpoint_url is None:
            features.append("outbound")
        else:
            payload["endpoint_url"] = endpoint_url
        deadline = time.monotonic() + timeout
        answer = self.call_until(deadline, "REGISTER_PLAYER_REQUEST", payload)
        self.token = answer["auth_token"]
        self.league_features = answer.get("features", [])
        self.registered.set()
        self.say("registered in league %s for %s", answer.get("league_id"), ", ".join(self.game_types))
        if endpoint_url is None:
            self.say("referees call us at %s (the League Manager's relay)", answer.get("endpoint_url"))
        self.call_until(deadline + 10, "AGENT_READY_REQUEST", {}, auth_token=self.token)

    # --- credentials -------------------------------------------------------------------

    def answer_token(self, env, invitation=False):
        """Checks the match credential a referee shows, hex(HMAC-SHA256(our token, match_id)),
        and returns the auth_token of our answer: that credential, or None when the referee
        showed none. A referee that shows none, under a League Manager that gives credentials
        and answers QUERY_MATCH, must be the one it names for the match (protocol/README.md,
        "Authentication on every hop"); under another League Manager there is nothing to check."""
        shown, match_id = env.get("auth_token"), env["match_id"]
        if "match_credentials" not in self.league_features:
            return None
        if shown is None:
            if "match_query" in self.league_features:
                self.confirm_referee(env, match_id, invitation)
            return None
        expected = hmac.new(self.token.encode(), match_id.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(str(shown), expected):
            raise Refusal("UNAUTHORIZED", "auth_token is not this player's credential for the match")
        return shown

    def confirm_referee(self, env, match_id, invitation):
        """Asks the League Manager (QUERY_MATCH) whether the sender referees match_id, once, at
        the invitation; later requests must come from the referee it named."""
        referee = env.get("sender", "")
        with self.lock:
            confirmed = self.confirmed.get(match_id)
        if confirmed is not None or not invitation:
            if confirmed != referee:
                raise Refusal("UNAUTHORIZED", "no credential, and %s is not the confirmed referee of %s" % (referee, match_id))
            return
        deadline, info = time.monotonic() + 4, None
        while info is None:
            try:
                info = self.call_league("QUERY_MATCH", {"match_id": match_id}, auth_token=self.token)
            except LeagueError as e:
                if e.reason not in ("RATE_LIMITED", "INTERNAL", "STORAGE_UNAVAILABLE"):
                    raise Refusal("UNAUTHORIZED", "the League Manager does not confirm %s: %s" % (match_id, e))
            except (OSError, HTTPException, ValueError):
                pass
            if info is None:
                if time.monotonic() + 0.2 > deadline:
                    raise Refusal("BUSY", "cannot confirm the referee of %s now" % match_id)
                time.sleep(0.2)
        if "referee:%s" % info.get("referee_id") != referee or info.get("status") not in ("ASSIGNED", "IN_PROGRESS"):
            raise Refusal("UNAUTHORIZED", "the League Manager names another referee for %s" % match_id)
        with self.lock:
            self.confirmed[match_id] = referee
            if len(self.confirmed) > 1024:
                self.confirmed.pop(next(iter(self.confirmed)))

    def from_league(self, env, what):
        """Refuses a notice that does not come from the League Manager with our own token."""
        signed = "signed_assignments" in self.league_features or what == "LEAGUE_COMPLETED"
        if env.get("sender") != "league_manager" or (signed and not hmac.compare_digest(str(env.get("auth_token", "")), self.token)):
            raise Refusal("UNAUTHORIZED", "%s must come from the League Manager with this player's token" % what)

    # --- the requests we answer ----------------------------------------------------------

    def handle(self, message):
        """Answers one request: returns (message_type, payload, extra envelope fields)."""
        env, payload = message["envelope"], message["payload"]
        handler = {"GAME_INVITATION": self.invitation, "REQUEST_MOVE": self.request_move,
                   "GAME_OVER": self.game_over, "LEAGUE_COMPLETED": self.league_completed,
                   "LEAGUE_SHUTDOWN": self.league_shutdown}.get(env["message_type"])
        if handler is None:
            raise Refusal("UNSUPPORTED_MESSAGE", "a player does not accept %s" % env["message_type"])
        # A match may start the moment we are registered, before the answer reached us.
        if not self.registered.wait(timeout=5):
            raise Refusal("BUSY", "not registered yet")
        return handler(env, payload)

    def invitation(self, env, payload):
        """GAME_INVITATION -> GAME_JOIN_ACK, accepted for a game we registered for."""
        token = self.answer_token(env, invitation=True)
        match_id, game_type = payload["match_id"], payload["game_type"]
        if game_type not in self.game_types:
            self.say("match %s: declined, it plays %s", match_id, game_type)
            ack = {"status": "declined", "match_id": match_id, "reason": "this player plays " + ", ".join(self.game_types)}
        else:
            with self.lock:
                self.matches[match_id] = {"opponent": payload.get("opponent_id"), "index": payload.get("your_index"),
                                          "game_params": payload.get("game_params") or {}, "game_type": game_type}
            ack = {"status": "accepted", "match_id": match_id}
        return "GAME_JOIN_ACK", ack, {"match_id": env["match_id"], "auth_token": token}

    def request_move(self, env, payload):
        """REQUEST_MOVE -> MOVE_RESPONSE with the strategy's move, or a JSON-RPC error INTERNAL
        (a missed move) when the strategy fails or is too slow."""
        arrived = time.monotonic()
        token = self.answer_token(env)
        match_id, step, context = env["match_id"], payload["step_number"], payload["step_context"]
        if not isinstance(context, dict):
            raise Refusal("SCHEMA_VIOLATION", "step_context is not an object")
        # Time: deadline_ms (30 s by default), or less if the deadline instant is nearer (a
        # request that waited on the relay), less a tenth kept for the answer's way back.
        allowed = (payload.get("deadline_ms") or 30000) / 1000.0
        left = seconds_until(payload.get("deadline"))
        if left is not None and 0 < left < allowed:
            allowed = left
        budget = allowed - min(max(allowed / 10, 0.1), 0.5)
        # Under a clock deadline_ms is the whole clock: the move's budget is the clock's.
        clocks = payload.get("clocks") if isinstance(payload.get("clocks"), dict) else None
        if clocks and 0 < clock_budget(clocks) < budget:
            budget = clock_budget(clocks)
        with self.lock:
            match = dict(self.matches.setdefault(match_id, {"game_type": env.get("game_type"), "game_params": {}}))
        game_type = env.get("game_type") or match.get("game_type")
        last, warning = payload.get("last_result"), payload.get("warning")
        if warning:
            self.say("match %s: warning from the referee: %s", match_id, warning)
        elif isinstance(last, dict) and last.get("outcome") not in (None, "SUCCESS"):
            self.say("match %s: the referee judged our last move %s: %s", match_id, last.get("outcome"), last.get("reason", ""))
        try:
            moves = legal_moves(game_type, context)
        except (KeyError, TypeError, IndexError):
            moves = None
        role = next((context[k] for k in ("your_mark", "your_color", "your_role") if isinstance(context.get(k), str)), None)
        state = {"game_type": game_type, "match_id": match_id, "step_number": step, "context": context,
                 "legal_moves": moves, "role": role, "index": match.get("index"), "opponent": match.get("opponent"),
                 "game_params": match.get("game_params") or {}, "time_left": budget - (time.monotonic() - arrived),
                 "clocks": clocks, "last_result": last, "warning": warning, "player_id": self.id}
        outcome = {}

        def think():
            try:
                outcome["move"] = self.choose_move(state)
            except BaseException as e:  # noqa: BLE001 - a strategy's failure must not stop the player
                outcome["error"] = e
        thinker = threading.Thread(target=think, daemon=True, name="choose_move %s step %s" % (match_id, step))
        thinker.start()
        thinker.join(max(budget - (time.monotonic() - arrived), 0))
        if thinker.is_alive():
            self.say("match %s step %s: choose_move gave no move within %.2f s (the referee allows %.2f s): "
                     "answering without a move; the referee counts a miss", match_id, step, budget, allowed)
            raise Refusal("INTERNAL", "no move: the strategy was too slow")
        if "error" in outcome:
            self.say("match %s step %s: choose_move raised %s: answering without a move; the referee counts a miss",
                     match_id, step, describe(outcome["error"]))
            raise Refusal("INTERNAL", "no move: the strategy failed")
        move = outcome.get("move")
        if move is None:
            self.say("match %s step %s: choose_move returned None: answering without a move", match_id, step)
            raise Refusal("INTERNAL", "no move: the strategy returned none")
        if moves is not None and move not in moves:
            self.say("match %s step %s: %s is not a legal move; sending it as given, the referee judges it",
                     match_id, step, json.dumps(move))
        with self.lock:
            if match_id in self.matches:
                self.matches[match_id]["last_move"] = move
        # Echoing the step and the context's digest tells the referee which request this answers.
        answer = {"move_payload": move, "step_number": step}
        if payload.get("context_hash"):
            answer["context_hash"] = payload["context_hash"]
        return "MOVE_RESPONSE", answer, {"match_id": match_id, "auth_token": token}

    def game_over(self, env, payload):
        """GAME_OVER -> GAME_OVER_ACK, one log line, then on_game_over."""
        token = self.answer_token(env)
        match_id, outcome = env["match_id"], payload["outcome"]
        with self.lock:
            match = self.matches.pop(match_id, {})
            if outcome in self.record:
                self.record[outcome] += 1
        opponent = match.get("opponent") or next((p for p in (payload.get("outcomes") or {}) if p != self.id), None)
        reason = payload.get("reason") or ""
        if outcome == "loss" and reason in ("illegal_move", "invalid_move", "malformed_move") and "last_move" in match:
            reason += "; our last move was %s" % json.dumps(match["last_move"])
        self.say("match %s: %s against %s (%s)", match_id, outcome, opponent or "?", reason)
        result = {"match_id": match_id, "game_type": env.get("game_type") or match.get("game_type"), "outcome": outcome,
                  "reason": payload.get("reason"), "opponent": opponent, "points": payload.get("points"),
                  "winner": payload.get("winner"), "final_state": payload.get("final_state")}
        self.callback(self.on_game_over, result)
        return "GAME_OVER_ACK", {"status": "acknowledged"}, {"match_id": match_id, "auth_token": token}

    def league_completed(self, env, payload):
        """LEAGUE_COMPLETED -> LEAGUE_COMPLETED_ACK: our rank, then on_league_over(standings)."""
        self.from_league(env, "LEAGUE_COMPLETED")
        standings = payload["standings"]
        ours = next((row for row in standings if isinstance(row, dict) and row.get("player_id") == self.id), None)
        if ours:
            self.say("league %s completed: rank %s of %d, %s points (%s wins, %s draws, %s losses)",
                     payload.get("league_id"), ours.get("rank"), len(standings), ours.get("points"),
                     ours.get("wins"), ours.get("draws"), ours.get("losses"))
        else:
            self.say("league %s completed; we are not in its standings", payload.get("league_id"))
        self.callback(self.on_league_over, standings)
        return "LEAGUE_COMPLETED_ACK", {"status": "acknowledged"}, {}

    def league_shutdown(self, env, payload):
        """LEAGUE_SHUTDOWN -> LEAGUE_SHUTDOWN_ACK; we leave once the answer is out."""
        self.from_league(env, "LEAGUE_SHUTDOWN")
        self.say("league shut down (%s)", payload.get("reason", ""))
        return "LEAGUE_SHUTDOWN_ACK", {"status": "acknowledged"}, {}

    def callback(self, function, argument):
        if function is None:
            return
        try:
            function(argument)
        except Exception as e:  # noqa: BLE001 - the user's callback must not break the answer
            self.say("%s raised %s", getattr(function, "__name__", "callback"), describe(e))

    # --- one request body in, one JSON-RPC answer out ------------------------------------

    def answer(self, body):
        """The JSON-RPC answer to one request body, and whether we leave after it."""
        request_id, conversation_id = None, None
        try:
            try:
                request = json.loads(body)
            except ValueError:
                raise Refusal("PARSE_ERROR", "the body is not JSON")
            if not isinstance(request, dict) or not isinstance(request.get("params"), dict):
                raise Refusal("INVALID_REQUEST", "not a JSON-RPC request with params")
            request_id = request.get("id")
            try:
                conversation_id = request["params"]["envelope"]["conversation_id"]
                message_type, payload, context = self.handle(request["params"])
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                raise Refusal("SCHEMA_VIOLATION", "missing or malformed field: %s" % e)
            except Refusal:
                raise
            except Exception as e:  # noqa: BLE001 - a bug here must not stop the server
                self.say("could not answer a request: %s", describe(e))
                raise Refusal("INTERNAL", "internal error")
        except Refusal as r:
            data = {"reason": r.reason}
            if isinstance(conversation_id, str):
                data["conversation_id"] = conversation_id
            return {"jsonrpc": "2.0", "id": request_id,
                    "error": {"code": ERROR_CODES[r.reason], "message": str(r), "data": data}}, False
        env = {"protocol": PROTOCOL, "message_type": message_type, "sender": self.sender, "timestamp": now(),
               "conversation_id": conversation_id}
        env.update({k: v for k, v in context.items() if v is not None})
        return ({"jsonrpc": "2.0", "id": request_id, "result": {"envelope": env, "payload": payload}},
                message_type == "LEAGUE_SHUTDOWN_ACK")

    # --- inbound: an HTTP server on POST /mcp ------------------------------------------

    def server(self, host, port):
        player = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass  # one line per request would drown the match results

            def do_POST(self):
                if self.path != "/mcp":
                    self.send_error(404)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    # Read (and drop) a body of moderate size first: a client still writing
                    # it would see a broken pipe instead of the 413.
                    remaining = length if length <= 8 * MAX_BODY else 0
                    while remaining > 0:
                        chunk = self.rfile.read(min(remaining, 65536))
                        if not chunk:
                            break
                        remaining -= len(chunk)
                    self.close_connection = True
                    self.send_error(413)
                    return
                answer, leaving = player.answer(self.rfile.read(length))
                body = json.dumps(answer).encode()
                self.send_response(200)  # every JSON-RPC answer, errors included
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()
                if leaving:
                    player.leaving.set()

        server = ThreadingHTTPServer((host, port), Handler)
        server.daemon_threads = True
        return server

    # --- outbound: long-poll the League Manager's relay ----------------------------------

    def relay(self, path, post=None):
        """GET or POST <League Manager base><path> with our token as a Bearer; the JSON answer."""
        base = self.league[:-len("/mcp")] if self.league.endswith("/mcp") else self.league
        request = urllib.request.Request(base + path, data=None if post is None else json.dumps(post).encode(),
                                         headers={"Authorization": "Bearer " + self.token,
                                                  "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=40) as response:  # a poll waits up to 25 s
            return json.loads(response.read())

    def serve_relayed(self, seq, body):
        """Answers relayed request seq, then posts the answer, again for 30 s if that fails."""
        answer, leaving = self.answer(body)
        deadline, wait = time.monotonic() + 30, 0.1
        while True:
            try:
                self.relay("/relay/answer", {"seq": seq, "status": 200, "body": json.dumps(answer)})
                break
            except urllib.error.HTTPError as e:
                if e.code not in (429, 503):
                    break  # 410: the relay closed; 401: not our token
            except (OSError, HTTPException, ValueError):
                pass  # the connection failed or was cut
            if time.monotonic() + wait > deadline:
                break
            time.sleep(wait)
            wait = min(2 * wait, 5)
        if leaving:
            self.leaving.set()

    def serve_outbound(self):
        """Polls the relay until it closes, answering each request in a thread of its own."""
        epoch, after, wait = "", 0, 0.1
        while not self.leaving.is_set():
            try:
                poll = self.relay("/relay/poll?" + urllib.parse.urlencode({"epoch": epoch, "after": after}))
            except (OSError, HTTPException, ValueError) as e:
                if isinstance(e, urllib.error.HTTPError) and e.code in (401, 410):
                    self.say("the relay closed (HTTP %d)", e.code)
                    self.leaving.set()
                    return
                time.sleep(wait)
                wait = min(2 * wait, 5)
                continue
            wait = 0.1
            if poll["epoch"] != epoch:  # a new relay (the League Manager restarted) counts from 1
                epoch, after = poll["epoch"], 0
            for request in poll["requests"]:
                after = max(after, request["seq"])
                threading.Thread(target=self.serve_relayed, args=(request["seq"], request["body"]), daemon=True).start()


def run(choose_move, player_id, league, game="tic_tac_toe", port=None, outbound=None, on_game_over=None,
        on_league_over=None, display_name=None, host="127.0.0.1", register_timeout=120, log=None):
    """Plays in the league at league (the League Manager's /mcp URL) as player_id until the
    league shuts down; returns 0. game is the game type, or a list of them, to register for.
    port None (and outbound not False) plays outbound through the League Manager's relay;
    port=N listens on host:N (0: any free port). log takes each log line (default: print)."""
    if log is None:
        def log(line):
            print(line, flush=True)
    game_types = [game] if isinstance(game, str) else list(game)
    if outbound is None:
        outbound = port is None
    player = Player(choose_move, player_id, league, game_types, on_game_over, on_league_over, display_name, log)
    server = None
    try:
        if outbound:
            player.say("playing %s outbound through %s", ", ".join(game_types), league)
            player.register(None, register_timeout)  # the relay keeps what comes before we poll
            threading.Thread(target=player.serve_outbound, daemon=True).start()
        else:
            server = player.server(host, port or 0)
            endpoint_url = "http://%s:%d/mcp" % (host, server.server_address[1])
            # Serve before registering: a match may start as soon as we are registered.
            threading.Thread(target=server.serve_forever, daemon=True).start()
            player.say("playing %s, listening on %s", ", ".join(game_types), endpoint_url)
            player.register(endpoint_url, register_timeout)
        while not player.leaving.wait(0.5):  # a timeout keeps Ctrl-C working
            pass
    except KeyboardInterrupt:
        player.say("interrupted")
    finally:
        if server:
            server.shutdown()
            server.server_close()
    player.say("wins %d, draws %d, losses %d; bye", player.record["win"], player.record["draw"], player.record["loss"])
    return 0


def main(choose_move, game="tic_tac_toe", description=None, argv=None, port=None, **options):
    """run() with --id, --league, --port and --outbound from the command line; exits with
    run()'s code. port is --port's default (None: outbound unless --port is given). options
    go to run (on_game_over, on_league_over, display_name, ...)."""
    parser = argparse.ArgumentParser(description=description or "An Agent League %s player." % game)
    parser.add_argument("--id", required=True, help="player id, e.g. py1 (letters, digits, _ and -)")
    parser.add_argument("--league", default="http://127.0.0.1:8000/mcp",
                        help="the League Manager's URL (default: %(default)s)")
    parser.add_argument("--port", type=int, default=port, help="listen on this port (0: any free one); without it the "
                        "player is outbound: it opens no port and uses the League Manager's relay")
    parser.add_argument("--outbound", action="store_true", help="use the League Manager's relay (the default without --port)")
    args = parser.parse_args(argv)
    if args.outbound:
        args.port = None
    sys.exit(run(choose_move, args.id, args.league, game=game, port=args.port, outbound=args.outbound or None, **options))
