#!/usr/bin/env python3
"""A league.v2 League Manager written from the seeds alone, standard library only, that behaves
on the wire like the Python implementation captured in shared/interop/python-peer-wire:

- registration answers carry a token and the league id, and announce no features;
- it sends every MATCH_ASSIGNMENT of a round at once, with no auth_token, players and
  player_endpoints, and waits for the round's results before the next round;
- it takes MATCH_RESULT_REPORT (checking the referee's token) and answers MATCH_RESULT_ACK;
- it answers AGENT_READY_REQUEST, and any other message type (MOVE_EVENT, HEARTBEAT_REQUEST, ...)
  with a JSON-RPC error of its own: code -32601 and no data.reason.

It records every request it receives. GET /status gives the league state (REGISTERING, RUNNING,
COMPLETED or FAILED) and the counts; GET /received gives the schedule, the assignment answers,
the results and every request received."""
import argparse
import json
import sys
import threading
import urllib.request
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LEAGUE_ID = "league-2025-01"
ROUND_TIMEOUT = 60.0


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def envelope(message_type, conversation_id, **extra):
    env = {"protocol": "league.v2", "message_type": message_type, "sender": "league_manager",
           "timestamp": now(), "conversation_id": conversation_id}
    env.update({k: v for k, v in extra.items() if v is not None})
    return env


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
        self.results = {}  # match_id -> [payload, ...]

    # Requests to this League Manager.

    def handle(self, req):
        params = req.get("params") or {}
        env = params.get("envelope") or {}
        payload = params.get("payload") or {}
        mt = env.get("message_type")
        with self.lock:
            self.received.append({"message_type": mt, "sender": env.get("sender"), "match_id": env.get("match_id"),
                                  "conversation_id": env.get("conversation_id")})
        conv = env.get("conversation_id")
        if mt in ("REGISTER_REFEREE_REQUEST", "REGISTER_PLAYER_REQUEST"):
            kind = "referee" if mt == "REGISTER_REFEREE_REQUEST" else "player"
            agent_id = payload.get(kind + "_id")
            token = str(uuid.uuid4())
            with self.lock:
                (self.referees if kind == "referee" else self.players)[agent_id] = {
                    "token": token, "endpoint": payload.get("endpoint_url")}
                self.changed.notify_all()
            answer = mt.replace("REQUEST", "RESPONSE")
            return envelope(answer, conv, league_id=LEAGUE_ID), {"status": "registered", "auth_token": token, "league_id": LEAGUE_ID}
        if mt == "AGENT_READY_REQUEST":
            kind, _, agent_id = env.get("sender", "").partition(":")
            return envelope("AGENT_READY_RESPONSE", conv, league_id=LEAGUE_ID), {
                "status": "acknowledged", "agent_id": agent_id, "agent_type": kind, "agent_state": "ACTIVE"}
        if mt == "MATCH_RESULT_REPORT":
            _, _, referee_id = env.get("sender", "").partition(":")
            with self.lock:
                ref = self.referees.get(referee_id)
                if ref is None or env.get("auth_token") != ref["token"]:
                    return None, {"code": -32000, "message": "Authentication failed"}
                self.results.setdefault(env.get("match_id"), []).append(payload)
                self.changed.notify_all()
            return envelope("MATCH_RESULT_ACK", conv, league_id=LEAGUE_ID), {
                "status": "acknowledged", "match_id": env.get("match_id")}
        return None, {"code": -32601, "message": "Unknown message type: %s" % mt}

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
        env = envelope("MATCH_ASSIGNMENT", str(uuid.uuid4()), round_id=m["round_id"], match_id=m["match_id"], game_type=self.game)
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
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            env, payload = league.handle(req)
            if env is None:
                out = {"jsonrpc": "2.0", "id": req.get("id"), "error": payload}
            else:
                out = {"jsonrpc": "2.0", "id": req.get("id"), "result": {"envelope": env, "payload": payload}}
            self.reply(out)

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--players", type=int, required=True, help="players to wait for before the league starts")
    ap.add_argument("--game", default="tic_tac_toe")
    args = ap.parse_args()
    league = League(args.players, args.game)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(league))
    print("league listening on http://127.0.0.1:%d/mcp" % server.server_address[1], flush=True)
    threading.Thread(target=league.run, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
