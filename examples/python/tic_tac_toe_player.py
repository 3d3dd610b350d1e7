#!/usr/bin/env python3
"""A tic-tac-toe player for Agent League, in Python with the standard library only.

Run it against a local league that waits for it (from the repository root):

    make demo EXTRA=1        # first terminal: a league that waits for one more player
    python3 examples/python/tic_tac_toe_player.py --id py1 --league http://127.0.0.1:8000/mcp

The player is a client and a server at once. As a client it registers with the League
Manager. As a server it answers whoever calls it: referees (GAME_INVITATION, REQUEST_MOVE,
GAME_OVER) and the League Manager (LEAGUE_SHUTDOWN). Every call is JSON-RPC 2.0 over
HTTP POST, method "league.handle"; its params, and the result of its answer, are one
league.v2 message: {"envelope": {...}, "payload": {...}}. Every answer is the result of the
request that asked for it; nothing is sent back later.

Behind NAT or in a sandbox, where no one can call it, add --outbound: the player then opens
no port, registers with the feature "outbound" and no endpoint_url, and the League Manager
answers with an endpoint on its relay (http://LM/relay/player/<id>/mcp) that referees call
like any other. The player long-polls the relay for the requests sent there, answers each
with the same code as above, and posts the answer back (see serve_outbound).

The schema of each message is in schemas/ (schemas/<message_type in lowercase>.json), and
docs/agents.md has the flow of a match, credentials and deadlines.
"""
import argparse
import hashlib
import hmac
import json
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import datetime, timezone
from http.client import HTTPException
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROTOCOL = "league.v2"
GAME = "tic_tac_toe"

# JSON-RPC error codes of the reasons this player answers with (protocol/README.md, "Errors").
ERROR_CODES = {
    "UNAUTHORIZED": -32000,
    "UNSUPPORTED_MESSAGE": -32015,
    "BUSY": -32017,
    "INVALID_REQUEST": -32600,
    "SCHEMA_VIOLATION": -32602,
    "PARSE_ERROR": -32700,
}


# ---------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------

def now():
    """A timestamp as the protocol wants it: RFC 3339 in UTC, ending in Z."""
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def envelope(sender, message_type, conversation_id, **context):
    """A league.v2 envelope. context adds auth_token, match_id, ... when not None; the
    envelope refuses any field it does not know."""
    env = {"protocol": PROTOCOL, "message_type": message_type, "sender": sender,
           "timestamp": now(), "conversation_id": conversation_id}
    env.update({k: v for k, v in context.items() if v is not None})
    return env


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


# ---------------------------------------------------------------------------------------
# The game: the board comes in REQUEST_MOVE's step_context
# ---------------------------------------------------------------------------------------

# The eight lines of three cells, as (row, col) pairs.
LINES = ([[(r, c) for c in range(3)] for r in range(3)] +
         [[(r, c) for r in range(3)] for c in range(3)] +
         [[(0, 0), (1, 1), (2, 2)], [(0, 2), (1, 1), (2, 0)]])


def completes_line(board, cell, mark):
    """Whether putting mark on the empty cell makes three in a line."""
    return any(cell in line and all(board[r][c] == mark for r, c in line if (r, c) != cell)
               for line in LINES)


def choose_move(board, mark):
    """A simple, sensible strategy. board is 3 rows of 3 cells, each "X", "O" or "" (empty);
    mark is ours. Returns the (row, col) to play, 0-based."""
    other = "O" if mark == "X" else "X"
    empty = [(r, c) for r in range(3) for c in range(3) if board[r][c] == ""]
    for who in (mark, other):  # 1. win if we can; 2. else block the opponent's win
        for cell in empty:
            if completes_line(board, cell, who):
                return cell
    for cell in [(1, 1), (0, 0), (0, 2), (2, 0), (2, 2)]:  # 3. the centre, then a corner
        if cell in empty:
            return cell
    return empty[0]  # 4. the first empty cell


# ---------------------------------------------------------------------------------------
# The player
# ---------------------------------------------------------------------------------------

class Player:
    def __init__(self, player_id, league_url):
        self.id = player_id
        self.sender = "player:" + player_id
        self.league_url = league_url
        self.token = None            # our league token, from the registration answer
        self.league_features = []    # protocol extensions the League Manager announced
        self.registered = threading.Event()
        self.leaving = threading.Event()
        self.lock = threading.Lock()  # guards record: the server has a thread per request
        self.record = {"win": 0, "draw": 0, "loss": 0}

    # --- talking to the League Manager -------------------------------------------------

    def call_league(self, message_type, payload, auth_token=None):
        """Sends one request to the League Manager and returns the payload of its answer."""
        request = {"jsonrpc": "2.0", "method": "league.handle", "id": str(uuid.uuid4()),
                   "params": {"envelope": envelope(self.sender, message_type, str(uuid.uuid4()), auth_token=auth_token),
                              "payload": payload}}
        http_request = urllib.request.Request(self.league_url, data=json.dumps(request).encode(),
                                              headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(http_request, timeout=10) as response:
            answer = json.loads(response.read())
        if "error" in answer:
            error = answer["error"]
            raise LeagueError((error.get("data") or {}).get("reason", "UNKNOWN"), error.get("message", ""))
        return answer["result"]["payload"]

    def register(self, endpoint_url):
        """REGISTER_PLAYER_REQUEST, then AGENT_READY_REQUEST. Players may register only once a
        referee has: until then, and while the League Manager is not up yet, we try again.
        endpoint_url None registers an outbound player: the League Manager gives it one."""
        payload = {"player_id": self.id, "endpoint_url": endpoint_url, "game_types": [GAME],
                   "display_name": "Python example " + self.id}
        if endpoint_url is None:
            payload.pop("endpoint_url")
            payload["features"] = ["outbound"]
        for _ in range(240):  # two minutes, every half second
            try:
                answer = self.call_league("REGISTER_PLAYER_REQUEST", payload)
                break
            except LeagueError as e:
                if e.reason not in ("NO_REFEREE_REGISTERED", "RATE_LIMITED"):
                    # REGISTRATION_CLOSED (the league started), DUPLICATE_REGISTRATION (the
                    # id is taken), UNSUPPORTED_GAME (the league plays another game), ...
                    raise SystemExit("%s: registration refused: %s" % (self.id, e))
            except OSError:
                pass  # the League Manager is not listening yet
            time.sleep(0.5)
        else:
            raise SystemExit("%s: could not register with %s" % (self.id, self.league_url))
        self.token = answer["auth_token"]
        self.league_features = answer.get("features", [])
        self.registered.set()  # the request handlers wait for this (see handle)
        print("%s registered in league %s" % (self.id, answer["league_id"]), flush=True)
        if endpoint_url is None:
            print("%s: referees call us at %s" % (self.id, answer.get("endpoint_url")), flush=True)
        # From now on every request to the League Manager carries our token.
        self.call_league("AGENT_READY_REQUEST", {}, auth_token=self.token)

    # --- credentials ---------------------------------------------------------------------

    def answer_token(self, env):
        """Checks the match credential a referee shows, and returns the auth_token to put in
        our answer.

        Our League Manager gives the referee of a match one credential per player:
        hex(HMAC-SHA256(key = that player's league token, message = match_id)). The referee
        shows it in auth_token of GAME_INVITATION, REQUEST_MOVE and GAME_OVER. We can compute
        it too, so a right credential proves the League Manager sent this referee; a wrong one
        is refused. We answer with the same credential, and the referee checks it the same way.

        Why not answer with our league token, as seed 004 §8.2 reads? Our referee accepts that
        too, but the referee would then hold our token and could pose as us to the League
        Manager; a credential is worth nothing outside its match.

        A referee that shows nothing (one written from the seeds alone) gives us nothing to
        check, and so does a League Manager that did not announce "match_credentials": then
        we play and answer without auth_token, which every referee accepts."""
        shown = env.get("auth_token")
        if shown is None or "match_credentials" not in self.league_features:
            return None
        expected = hmac.new(self.token.encode(), env["match_id"].encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(shown, expected):
            raise Refusal("UNAUTHORIZED", "auth_token is not this player's credential for the match")
        return shown

    # --- the messages we answer ------------------------------------------------------------

    def handle(self, message):
        """Answers one request: returns (message_type, payload, extra envelope fields)."""
        env, payload = message["envelope"], message["payload"]
        handlers = {"GAME_INVITATION": self.invitation, "REQUEST_MOVE": self.request_move,
                    "GAME_OVER": self.game_over, "LEAGUE_SHUTDOWN": self.league_shutdown}
        handler = handlers.get(env["message_type"])
        if handler is None:
            raise Refusal("UNSUPPORTED_MESSAGE", "a player does not accept " + env["message_type"])
        # The League Manager may start a match the moment we are registered, even before
        # its answer has reached us: wait for our token before judging anything.
        if not self.registered.wait(timeout=5):
            raise Refusal("BUSY", "not registered yet")
        return handler(env, payload)

    def invitation(self, env, payload):
        """GAME_INVITATION -> GAME_JOIN_ACK, within the join deadline (10 s by default)."""
        token = self.answer_token(env)
        ack = {"status": "accepted", "match_id": payload["match_id"]}
        if payload["game_type"] != GAME:
            ack = {"status": "declined", "match_id": payload["match_id"], "reason": "this player plays " + GAME}
        return "GAME_JOIN_ACK", ack, {"match_id": env["match_id"], "auth_token": token}

    def request_move(self, env, payload):
        """REQUEST_MOVE -> MOVE_RESPONSE.

        The referee stops waiting deadline_ms after it sent the request (30 s by default). A
        late answer is a timeout: first a warning (the request comes again), then a move
        played for us (the first empty cell), then the match is lost. This strategy takes
        microseconds; a slower one must watch the clock and answer in time."""
        token = self.answer_token(env)
        if payload.get("warning"):
            print("%s: warning from the referee: %s" % (self.id, payload["warning"]), flush=True)
        context = payload["step_context"]  # {"board": [[...], ...], "your_mark": "X", "move_number": 1}
        row, col = choose_move(context["board"], context["your_mark"])
        move = {"move_payload": {"row": row, "col": col},
                # Echoing the step tells the referee which request this answers.
                "step_number": payload["step_number"]}
        return "MOVE_RESPONSE", move, {"match_id": env["match_id"], "auth_token": token}

    def game_over(self, env, payload):
        """GAME_OVER -> GAME_OVER_ACK. outcome is ours: win, draw or loss."""
        token = self.answer_token(env)
        with self.lock:
            self.record[payload["outcome"]] += 1
        print("%s: match %s: %s (%s)" % (self.id, env["match_id"], payload["outcome"], payload.get("reason", "")), flush=True)
        return "GAME_OVER_ACK", {"status": "acknowledged"}, {"match_id": env["match_id"], "auth_token": token}

    def league_shutdown(self, env, payload):
        """LEAGUE_SHUTDOWN -> LEAGUE_SHUTDOWN_ACK, then we leave (the HTTP handler sets
        self.leaving once the answer is written). Only the League Manager may stop us: ours
        sends the notice with our own league token when it announced "signed_assignments"."""
        signed = "signed_assignments" in self.league_features
        if env["sender"] != "league_manager" or (signed and not hmac.compare_digest(env.get("auth_token", ""), self.token)):
            raise Refusal("UNAUTHORIZED", "LEAGUE_SHUTDOWN must come from the League Manager with this player's token")
        print("%s: league shut down (%s)" % (self.id, payload.get("reason", "")), flush=True)
        return "LEAGUE_SHUTDOWN_ACK", {"status": "acknowledged"}, {}


# ---------------------------------------------------------------------------------------
# Answering: one request body in, one JSON-RPC result or error out, whether the request
# came to our HTTP server (POST /mcp) or through the League Manager's relay (--outbound)
# ---------------------------------------------------------------------------------------

def answer_request(player, body):
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
        message = request["params"]
        try:
            conversation_id = message["envelope"]["conversation_id"]
            message_type, payload, context = player.handle(message)
        except (KeyError, TypeError, ValueError) as e:
            raise Refusal("SCHEMA_VIOLATION", "missing or malformed field: %s" % e)
    except Refusal as r:
        data = {"reason": r.reason}
        if conversation_id:
            data["conversation_id"] = conversation_id
        error = {"code": ERROR_CODES[r.reason], "message": str(r), "data": data}
        return {"jsonrpc": "2.0", "id": request_id, "error": error}, False
    # The answer echoes the request's conversation_id: that is how the caller pairs them.
    reply = {"envelope": envelope(player.sender, message_type, conversation_id, **context), "payload": payload}
    return {"jsonrpc": "2.0", "id": request_id, "result": reply}, message_type == "LEAGUE_SHUTDOWN_ACK"


def make_handler(player):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass  # quiet: one line per request would drown the match results

        def do_POST(self):
            if self.path != "/mcp":
                self.send_error(404)
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > 1 << 20:  # the protocol's limit is 1 MiB
                self.send_error(413)
                return
            answer, leaving = answer_request(player, self.rfile.read(length))
            body = json.dumps(answer).encode()
            self.send_response(200)  # every JSON-RPC answer, errors included, is HTTP 200
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            if leaving:
                player.leaving.set()  # only now: main exits, which ends this thread

    return Handler


# ---------------------------------------------------------------------------------------
# Outbound (--outbound): no port. The League Manager's relay holds the requests sent to
# the endpoint it gave us; we fetch them and post the answers over connections we open
# (protocol/README.md, "Outbound agents").
# ---------------------------------------------------------------------------------------

def relay(player, path, post=None):
    """GET <League Manager base><path>, or POST post there, with our token as a Bearer;
    returns the decoded JSON. urllib raises HTTPError for a status other than 2xx."""
    base = player.league_url.removesuffix("/mcp")
    data = None if post is None else json.dumps(post).encode()
    request = urllib.request.Request(base + path, data=data, headers={
        "Authorization": "Bearer " + player.token, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=40) as response:  # a poll waits up to 25 s
        return json.loads(response.read())


def serve_relayed(player, seq, body):
    """Answers request seq (in a thread of its own), then posts the answer, trying again
    for 30 s if the connection fails. "gone" (answered already, or its caller gave up) is
    fine too."""
    answer, leaving = answer_request(player, body)
    deadline, wait = time.monotonic() + 30, 0.1
    while True:
        try:
            relay(player, "/relay/answer", {"seq": seq, "status": 200, "body": json.dumps(answer)})
            break
        except urllib.error.HTTPError:
            break  # 410: the relay closed; 401: not our token; retrying would not help
        except (OSError, HTTPException):  # the connection failed or was cut
            if time.monotonic() + wait > deadline:
                break
            time.sleep(wait)
            wait = min(2 * wait, 5)
    if leaving:
        player.leaving.set()  # only now that the LEAGUE_SHUTDOWN_ACK is out


def serve_outbound(player):
    """Polls the relay until it closes (410: the league is over), answering each request in
    a thread: moves of different matches overlap. A failed poll is repeated, after a pause
    growing from 0.1 to 5 s, with the same epoch and after: it hands out the same requests."""
    epoch, after, wait = "", 0, 0.1
    while True:
        try:
            poll = relay(player, "/relay/poll?" + urllib.parse.urlencode({"epoch": epoch, "after": after}))
        except (OSError, HTTPException, ValueError) as e:  # HTTPError too; a cut poll
            if isinstance(e, urllib.error.HTTPError) and e.code in (401, 410):
                print("%s: the relay closed (HTTP %d)" % (player.id, e.code), flush=True)
                player.leaving.set()
                return
            time.sleep(wait)
            wait = min(2 * wait, 5)
            continue
        wait = 0.1
        if poll["epoch"] != epoch:  # a new relay (the League Manager restarted) counts from 1
            epoch, after = poll["epoch"], 0
        for request in poll["requests"]:
            after = max(after, request["seq"])
            threading.Thread(target=serve_relayed, args=(player, request["seq"], request["body"]), daemon=True).start()


def main():
    parser = argparse.ArgumentParser(description="A tic-tac-toe player for Agent League (standard library only).")
    parser.add_argument("--id", required=True, help="player id, e.g. py1 (letters, digits, _ and -)")
    parser.add_argument("--league", required=True, help="the League Manager's URL, e.g. http://127.0.0.1:8000/mcp")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: any free port)")
    parser.add_argument("--outbound", action="store_true",
                        help="open no port: take requests from the League Manager's relay (behind NAT, in a sandbox)")
    args = parser.parse_args()

    player = Player(args.id, args.league)
    server = None
    try:
        if args.outbound:
            print("player %s outbound through %s" % (args.id, args.league), flush=True)
            player.register(None)  # the relay keeps what comes before we poll
            threading.Thread(target=serve_outbound, args=(player,), daemon=True).start()
        else:
            server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(player))
            endpoint_url = "http://127.0.0.1:%d/mcp" % server.server_address[1]
            # Serve before registering: a match may start as soon as the registration is accepted.
            threading.Thread(target=server.serve_forever, daemon=True).start()
            print("player %s listening on %s" % (args.id, endpoint_url), flush=True)
            player.register(endpoint_url)
        player.leaving.wait()
    except KeyboardInterrupt:
        print("%s: interrupted" % args.id, flush=True)
    if server:
        server.shutdown()
    print("%s: wins %d, draws %d, losses %d; bye" % (args.id, player.record["win"], player.record["draw"], player.record["loss"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
