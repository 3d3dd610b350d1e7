#!/usr/bin/env python3
"""A minimal league.v2 tic-tac-toe player, standard library only, written from the wire
captures of the Python implementation (shared/interop). It ignores match credentials, as
third-party agents may. What it puts in auth_token of its answers to a referee is chosen
with --auth: none (like the Python implementation), own (its league token, as seed 004
§8.2 reads), or wrong (a token nobody issued). With --shutdown ignore it does not know
LEAGUE_SHUTDOWN and keeps running; --ignore-sigterm makes it ignore SIGTERM as well, so
only SIGKILL stops it."""
import argparse
import json
import signal
import sys
import threading
import time
import urllib.request
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def now():
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class Player:
    def __init__(self, pid, league, auth, on_shutdown):
        self.pid = pid
        self.league = league
        self.auth = auth
        self.on_shutdown = on_shutdown
        self.token = None
        self.shutdown = threading.Event()

    def answer_token(self):
        """The auth_token of an answer to a referee, as --auth says."""
        if self.auth == "own":
            return self.token
        if self.auth == "wrong":
            return str(uuid.uuid4())
        return None

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
            ans = self.call("REGISTER_PLAYER_REQUEST", {"player_id": self.pid, "endpoint_url": endpoint})
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
            board = payload["step_context"]["board"]
            for r in range(3):
                for c in range(3):
                    if board[r][c] == "":
                        return "MOVE_RESPONSE", {"move_payload": {"row": r, "col": c}}, match_id
        if mt == "GAME_OVER":
            return "GAME_OVER_ACK", {"status": "acknowledged"}, match_id
        if mt == "LEAGUE_SHUTDOWN" and self.on_shutdown == "exit":
            self.shutdown.set()
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
                token = player.answer_token() if match_id is not None else None
                env = player.envelope(mt, req["params"]["envelope"]["conversation_id"], match_id=match_id, auth_token=token)
                out = {"jsonrpc": "2.0", "id": req.get("id"), "result": {"envelope": env, "payload": payload}}
            body = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--id", required=True)
    ap.add_argument("--league", required=True)
    ap.add_argument("--auth", choices=("none", "own", "wrong"), default="none")
    ap.add_argument("--shutdown", choices=("exit", "ignore"), default="exit")
    ap.add_argument("--ignore-sigterm", action="store_true")
    args = ap.parse_args()
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    player = Player(args.id, args.league, args.auth, args.shutdown)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(player))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = "http://127.0.0.1:%d/mcp" % server.server_address[1]
    print("player %s listening on %s" % (args.id, endpoint), flush=True)
    player.register(endpoint)
    player.shutdown.wait()
    server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
