#!/usr/bin/env python3
"""A league.v2 League Manager written from the seeds alone, standard library only, that behaves
on the wire like the Python implementation captured in shared/interop/python-peer-wire:

- registration answers carry a token and the league id, and announce no features; a player
  registering before any referee, an id already registered and a registration without an id are
  refused;
- every request but a registration must carry the sender's own token;
- the envelope is checked as seed 004 section 4.4 says (protocol league.v2, a known message type,
  the sender's form, a UTC timestamp, a UUID conversation_id); a body that is not JSON is answered
  with a JSON-RPC error (code 4000 and no id, as that implementation does);
- it sends every MATCH_ASSIGNMENT of a round at once, with no auth_token, players and
  player_endpoints, and waits for the round's results before the next round;
- it takes MATCH_RESULT_REPORT from the referee the match is assigned to (seed 004 section 8.2;
  the captured implementation does not check that), exactly once, and answers MATCH_RESULT_ACK;
- it answers QUERY_STANDINGS with the standings recounted from the results, ranked by points,
  wins, draws, then player id;
- it answers AGENT_READY_REQUEST, and any other message type (MOVE_EVENT, HEARTBEAT_REQUEST, ...)
  with a JSON-RPC error of its own: code -32601 and no data.reason;
- it has no body size limit and sends no LEAGUE_SHUTDOWN, like that implementation.

It records every request it receives. GET /status gives the league state (REGISTERING, RUNNING,
COMPLETED or FAILED) and the counts; GET /received gives the schedule, the assignment answers,
the results and every request received.

The methods named as hooks below are what internal/conform/testdata/lm_*.py override to make a
League Manager with one defect."""
import argparse
import json
import re
import sys
import threading
import urllib.request
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LEAGUE_ID = "league-2025-01"
ROUND_TIMEOUT = 60.0
SCORING = {"win": 3, "draw": 1, "loss": 0}
KNOWN_TYPES = {
    "REGISTER_REFEREE_REQUEST", "REGISTER_REFEREE_RESPONSE", "REGISTER_PLAYER_REQUEST", "REGISTER_PLAYER_RESPONSE",
    "MATCH_ASSIGNMENT", "MATCH_ASSIGNMENT_ACK", "MATCH_RESULT_REPORT", "MATCH_RESULT_ACK", "QUERY_STANDINGS",
    "STANDINGS_RESPONSE", "GAME_INVITATION", "GAME_JOIN_ACK", "REQUEST_MOVE", "MOVE_RESPONSE", "GAME_OVER",
}
SENDER = re.compile(r"^(league_manager|admin|(referee|player):[A-Za-z0-9_-]+)$")


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Refused(Exception):
    """A request answered with a JSON-RPC error."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def round_robin(players):
    """Rounds of the circle method: every pair once, nobody twice in a round."""
    ps = list(players)
    if len(ps) % 2:
        ps.append(None)
    rounds = []
    for _ in range(len(ps) - 1):
        pairs = [(ps[i], ps[-1 - i]) for i in range(len(ps) // 2)]
        rounds.append([p for p in pairs if None not in p])
        ps = [ps[0]] + [ps[-1]] + ps[1:-1]
    return rounds


def check_envelope(env):
    """Seed 004 section 4.4, as the captured implementation checks it."""
    if not isinstance(env, dict):
        raise Refused(4003, "Missing 'envelope' in params")
    for field in ("protocol", "message_type", "sender", "timestamp", "conversation_id"):
        if field not in env:
            raise Refused(4005, "Missing required envelope field: %s" % field)
    if env["protocol"] != "league.v2":
        raise Refused(4001, "Invalid protocol version: %s" % env["protocol"])
    if not isinstance(env["sender"], str) or not SENDER.match(env["sender"]):
        raise Refused(4007, "Invalid sender format")
    try:
        ts = datetime.fromisoformat(str(env["timestamp"]).replace("Z", "+00:00"))
        if ts.utcoffset() is None or ts.utcoffset().total_seconds() != 0:
            raise ValueError("not UTC")
    except ValueError:
        raise Refused(4008, "Timestamp must be ISO-8601 UTC")
    try:
        uuid.UUID(str(env["conversation_id"]))
    except ValueError:
        raise Refused(4004, "Invalid UUID format for conversation_id")


class League:
    def __init__(self, players, game):
        self.expected_players = players
        self.game = game
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.state = "REGISTERING"
        self.referees = {}  # id -> {token, endpoint}
        self.players = {}  # id -> {token, endpoint}
        self.received = []
        self.schedule = []  # {match_id, round_id, players, referee_id}
        self.assignment_answers = []
        self.results = {}  # match_id -> [payload, ...] (accepted reports)

    # Hooks.

    def reply_conversation(self, conversation_id):
        """The conversation_id of an answer: the request's."""
        return conversation_id

    def token_ok(self, agent, token):
        return agent is not None and token == agent["token"]

    def unknown_message(self, mt):
        raise Refused(-32601, "Unknown message type: %s" % mt)

    def standings_rows(self, results):
        """Ranked rows recounted from the accepted results."""
        rows = {p: {"player_id": p, "points": 0, "wins": 0, "draws": 0, "losses": 0, "matches_played": 0}
                for p in self.players}
        for reports in results:
            for player, outcome in reports["outcome"].items():
                row = rows.setdefault(player, {"player_id": player, "points": 0, "wins": 0, "draws": 0, "losses": 0,
                                               "matches_played": 0})
                row["points"] += reports["points"].get(player, 0)
                row["matches_played"] += 1
                row[{"win": "wins", "draw": "draws", "loss": "losses"}[outcome]] += 1
        ranked = sorted(rows.values(), key=lambda r: (-r["points"], -r["wins"], -r["draws"], r["player_id"]))
        for i, row in enumerate(ranked):
            row["rank"] = i + 1
        return ranked

    # Requests to this League Manager.

    def envelope(self, message_type, conversation_id, **extra):
        env = {"protocol": "league.v2", "message_type": message_type, "sender": "league_manager",
               "timestamp": now(), "conversation_id": self.reply_conversation(conversation_id)}
        env.update({k: v for k, v in extra.items() if v is not None})
        return env

    def handle(self, req):
        """The (envelope, payload) of the answer to one request; raises Refused."""
        if not isinstance(req, dict) or req.get("jsonrpc") != "2.0":
            raise Refused(4000, "Invalid JSON-RPC version")
        if req.get("method") != "league.handle":
            raise Refused(4002, "Invalid method")
        params = req.get("params")
        if not isinstance(params, dict):
            raise Refused(4005, "Missing or invalid 'params' field")
        env = params.get("envelope")
        payload = params.get("payload") or {}
        check_envelope(env)
        mt = env["message_type"]
        with self.lock:
            self.received.append({"message_type": mt, "sender": env.get("sender"), "match_id": env.get("match_id"),
                                  "conversation_id": env.get("conversation_id")})
        if mt not in KNOWN_TYPES and mt != "AGENT_READY_REQUEST":
            return self.unknown_message(mt)
        conv = env["conversation_id"]
        if mt in ("REGISTER_REFEREE_REQUEST", "REGISTER_PLAYER_REQUEST"):
            return self.register(mt, env, payload)
        kind, _, agent_id = env["sender"].partition(":")
        with self.lock:
            agent = (self.referees if kind == "referee" else self.players).get(agent_id)
            if not self.token_ok(agent, env.get("auth_token")):
                raise Refused(4009, "Authentication failed")
        if mt == "AGENT_READY_REQUEST":
            return self.envelope("AGENT_READY_RESPONSE", conv, league_id=LEAGUE_ID), {
                "status": "acknowledged", "agent_id": agent_id, "agent_type": kind, "agent_state": "ACTIVE"}
        if mt == "MATCH_RESULT_REPORT" and kind == "referee":
            return self.result(env, payload, agent_id)
        if mt == "QUERY_STANDINGS":
            with self.lock:
                rows = self.standings_rows([r[0] for r in self.results.values()])
                round_id = self.schedule[-1]["round_id"] if self.schedule else None
            return self.envelope("STANDINGS_RESPONSE", conv, league_id=LEAGUE_ID), {
                "round_id": round_id, "updated_at": now(), "standings": rows}
        raise Refused(4010, "%s is not accepted from %s" % (mt, kind))

    def register(self, mt, env, payload):
        kind = "referee" if mt == "REGISTER_REFEREE_REQUEST" else "player"
        agent_id = payload.get(kind + "_id")
        if not isinstance(agent_id, str) or not agent_id:
            raise Refused(4018, "Missing %s_id" % kind)
        token = str(uuid.uuid4())
        with self.lock:
            if self.state != "REGISTERING":
                raise Refused(4012, "Registration window is closed")
            if kind == "player" and not self.referees:
                raise Refused(4019, "At least one referee must be registered before players can register")
            agents = self.referees if kind == "referee" else self.players
            if agent_id in agents:
                raise Refused(4011, "Agent %s is already registered" % agent_id)
            agents[agent_id] = {"token": token, "endpoint": payload.get("endpoint_url")}
            self.changed.notify_all()
        answer = mt.replace("REQUEST", "RESPONSE")
        return self.envelope(answer, env["conversation_id"], league_id=LEAGUE_ID), {
            "status": "registered", "auth_token": token, "league_id": LEAGUE_ID}

    def result(self, env, payload, referee_id):
        match_id = env.get("match_id")
        with self.lock:
            match = next((m for m in self.schedule if m["match_id"] == match_id), None)
            if match is None:
                raise Refused(4014, "Unknown match_id: %s" % match_id)
            if match["referee_id"] != referee_id:
                raise Refused(4010, "Match %s is not assigned to %s" % (match_id, referee_id))
            if match_id in self.results:
                raise Refused(4017, "Result already reported for match %s" % match_id)
            outcome, points = payload.get("outcome"), payload.get("points")
            if not isinstance(outcome, dict) or not isinstance(points, dict) or \
                    sorted(outcome) != sorted(match["players"]) or sorted(points) != sorted(match["players"]):
                raise Refused(4018, "outcome and points must name the match's players")
            self.results[match_id] = [payload]
            self.changed.notify_all()
        return self.envelope("MATCH_RESULT_ACK", env["conversation_id"], league_id=LEAGUE_ID), {
            "status": "acknowledged", "match_id": match_id}

    # The league itself.

    def run(self):
        with self.lock:
            while len(self.referees) < 1 or len(self.players) < self.expected_players:
                self.changed.wait()
            self.state = "RUNNING"
            referee_ids = sorted(self.referees)
            player_ids = sorted(self.players)
        for n, pairs in enumerate(round_robin(player_ids)):
            round_id = "round-%s" % uuid.uuid4()
            matches = []
            for i, pair in enumerate(pairs):
                matches.append({"match_id": "match-%s" % uuid.uuid4(), "round_id": round_id, "players": list(pair),
                                "referee_id": referee_ids[i % len(referee_ids)]})
            with self.lock:
                self.schedule.extend(matches)
            # Every assignment of the round at once, whatever the referee's capacity.
            threads = [threading.Thread(target=self.assign, args=(m,)) for m in matches]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            with self.lock:
                done = self.changed.wait_for(lambda: all(m["match_id"] in self.results for m in matches), ROUND_TIMEOUT)
                if not done:
                    self.state = "FAILED"
                    return
        with self.lock:
            self.state = "COMPLETED"

    def assign(self, m):
        with self.lock:
            ref = self.referees[m["referee_id"]]
            endpoints = {p: self.players[p]["endpoint"] for p in m["players"]}
        payload = {"match_id": m["match_id"], "round_id": m["round_id"], "game_type": self.game,
                   "players": m["players"], "player_endpoints": endpoints}
        env = self.envelope("MATCH_ASSIGNMENT", str(uuid.uuid4()), round_id=m["round_id"], match_id=m["match_id"],
                            game_type=self.game)
        body = {"jsonrpc": "2.0", "method": "league.handle", "id": str(uuid.uuid4()),
                "params": {"envelope": env, "payload": payload}}
        try:
            req = urllib.request.Request(ref["endpoint"], data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as res:
                ans = json.loads(res.read())
        except Exception as e:  # recorded for the test to see
            ans = {"transport_error": str(e)}
        with self.lock:
            self.assignment_answers.append({"match_id": m["match_id"], "answer": ans})

    def status(self):
        with self.lock:
            return {"state": self.state, "referees": len(self.referees), "players": len(self.players),
                    "matches_total": len(self.schedule), "results": len(self.results)}

    def record(self):
        with self.lock:
            return {"schedule": self.schedule, "assignment_answers": self.assignment_answers,
                    "results": self.results, "received": self.received}


def make_handler(league):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, doc):
            body = json.dumps(doc).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/status":
                return self.reply(league.status())
            if self.path == "/received":
                return self.reply(league.record())
            self.send_error(404)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                req = json.loads(body)
            except ValueError as e:
                # As the captured implementation answers: its own code, and no id.
                return self.reply({"jsonrpc": "2.0", "error": {"code": 4000, "message": "Invalid JSON: %s" % e, "data": {}}})
            request_id = req.get("id") if isinstance(req, dict) else None
            try:
                env, payload = league.handle(req)
                out = {"jsonrpc": "2.0", "id": request_id, "result": {"envelope": env, "payload": payload}}
            except Refused as e:
                out = {"jsonrpc": "2.0", "id": request_id, "error": {"code": e.code, "message": e.message}}
            except Exception as e:  # an internal error, as that implementation answers it
                out = {"jsonrpc": "2.0", "id": request_id, "error": {"code": 5000, "message": "Internal error: %s" % e}}
            self.reply(out)

    return Handler


def main(league_class=League):
    ap = argparse.ArgumentParser()
    ap.add_argument("--players", type=int, required=True, help="players to wait for before the league starts")
    ap.add_argument("--game", default="tic_tac_toe")
    args = ap.parse_args()
    league = league_class(args.players, args.game)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(league))
    print("league listening on http://127.0.0.1:%d/mcp" % server.server_address[1], flush=True)
    threading.Thread(target=league.run, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
