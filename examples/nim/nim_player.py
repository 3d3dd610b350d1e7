#!/usr/bin/env python3
"""A nim player, standard library only: it registers for game_types ["nim"], accepts
every invitation, answers REQUEST_MOVE with {"heap": i, "take": n} and leaves on
LEAGUE_SHUTDOWN. --strategy perfect plays the nim-sum (it wins every position it can);
random takes a random legal move, seeded by --seed.

Run (see README.md beside it):
    python3 examples/nim/nim_player.py --id nim-a --league http://127.0.0.1:8000/mcp --strategy perfect
"""
import argparse
import functools
import json
import operator
import random
import sys
import threading
import time
import urllib.request
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def now():
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def perfect(heaps, rng):
    """A move leaving nim-sum 0 when there is one, else a random legal move."""
    x = functools.reduce(operator.xor, heaps, 0)
    if x:
        for i, h in enumerate(heaps):
            if h ^ x < h:
                return {"heap": i, "take": h - (h ^ x)}
    return rand(heaps, rng)


def rand(heaps, rng):
    i = rng.choice([i for i, h in enumerate(heaps) if h > 0])
    return {"heap": i, "take": rng.randint(1, heaps[i])}


class Player:
    def __init__(self, pid, league, strategy, seed):
        self.pid = pid
        self.league = league
        self.strategy = perfect if strategy == "perfect" else rand
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.token = None
        self.shutdown = threading.Event()

    def envelope(self, message_type, conversation_id, **extra):
        env = {"protocol": "league.v2", "message_type": message_type, "sender": "player:" + self.pid,
               "timestamp": now(), "conversation_id": conversation_id}
        env.update({k: v for k, v in extra.items() if v is not None})
        return env

    def call(self, message_type, payload, **extra):
        body = {"jsonrpc": "2.0", "method": "league.handle", "id": str(uuid.uuid4()),
                "params": {"envelope": self.envelope(message_type, str(uuid.uuid4()), **extra), "payload": payload}}
        req = urllib.request.Request(self.league, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as res:
            return json.loads(res.read())

    def register(self, endpoint):
        for _ in range(200):
            ans = self.call("REGISTER_PLAYER_REQUEST", {"player_id": self.pid, "endpoint_url": endpoint, "game_types": ["nim"]})
            if "result" in ans:
                self.token = ans["result"]["payload"]["auth_token"]
                self.call("AGENT_READY_REQUEST", {}, auth_token=self.token)
                return
            if ans["error"]["data"]["reason"] not in ("NO_REFEREE_REGISTERED", "RATE_LIMITED"):
                raise SystemExit("registration refused: %s" % ans["error"])
            time.sleep(0.1)
        raise SystemExit("registration never succeeded")

    def answer(self, req):
        env = req["params"]["envelope"]
        payload = req["params"]["payload"]
        mt = env["message_type"]
        match_id = env.get("match_id")
        if mt == "GAME_INVITATION":
            return "GAME_JOIN_ACK", {"status": "accepted", "match_id": payload["match_id"]}, match_id
        if mt == "REQUEST_MOVE":
            with self.lock:
                move = self.strategy(payload["step_context"]["heaps"], self.rng)
            return "MOVE_RESPONSE", {"move_payload": move}, match_id
        if mt == "GAME_OVER":
            return "GAME_OVER_ACK", {"status": "acknowledged"}, match_id
        if mt == "LEAGUE_SHUTDOWN":
            return "LEAGUE_SHUTDOWN_ACK", {"status": "acknowledged"}, None
        return None, None, None


def make_handler(player):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            mt, payload, match_id = player.answer(req)
            if mt is None:
                out = {"jsonrpc": "2.0", "id": req.get("id"), "error": {"code": -32015, "message": "unsupported", "data": {"reason": "UNSUPPORTED_MESSAGE"}}}
            else:
                env = player.envelope(mt, req["params"]["envelope"]["conversation_id"], match_id=match_id,
                                      auth_token=player.token if match_id else None)
                out = {"jsonrpc": "2.0", "id": req.get("id"), "result": {"envelope": env, "payload": payload}}
            body = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            if mt == "LEAGUE_SHUTDOWN_ACK":
                # Only once the acknowledgement is written: main then exits, ending this thread.
                player.shutdown.set()

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--id", required=True, help="player id")
    ap.add_argument("--league", required=True, help="League Manager URL, e.g. http://127.0.0.1:8000/mcp")
    ap.add_argument("--strategy", choices=("perfect", "random"), default="random")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    player = Player(args.id, args.league, args.strategy, args.seed)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(player))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = "http://127.0.0.1:%d/mcp" % server.server_address[1]
    print("nim player %s listening on %s" % (args.id, endpoint), flush=True)
    player.register(endpoint)
    player.shutdown.wait()
    print("nim player %s: league shut down, leaving" % args.id, flush=True)
    server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
