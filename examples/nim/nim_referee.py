#!/usr/bin/env python3
"""A third-party referee for nim, a game Agent League does not ship, standard library
only. It shows seed 004 section 7.2 at work: a new game needs a referee and a
game_registry.yaml entry (rules: external), and no change to the League Manager.

It registers for game_types ["nim"], plays each assigned match with the params of the
assignment (heaps, default [3, 4, 5]; whoever takes the last stone wins), records every
move in game_metadata, reports the result with its own token and leaves on
LEAGUE_SHUTDOWN. It uses no protocol extension: no heartbeats, no features.

Run (see README.md beside it; the league's registry needs the nim entry):
    python3 examples/nim/nim_referee.py --id nimref --league http://127.0.0.1:8000/mcp
"""
import argparse
import json
import sys
import threading
import time
import urllib.request
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GAME = "nim"
CALL_TIMEOUT = 30


def now():
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def legal(move, heaps):
    """Whether move ({"heap": i, "take": n}) may be played on heaps."""
    if not isinstance(move, dict):
        return False
    h, n = move.get("heap"), move.get("take")
    return (isinstance(h, int) and isinstance(n, int) and not isinstance(h, bool) and not isinstance(n, bool)
            and 0 <= h < len(heaps) and 1 <= n <= heaps[h])


class Referee:
    def __init__(self, rid, league):
        self.rid = rid
        self.league = league
        self.token = None
        self.league_id = None
        self.points = {"win": 3, "draw": 1, "loss": 0}
        self.done = threading.Event()

    def envelope(self, message_type, conversation_id, **extra):
        env = {"protocol": "league.v2", "message_type": message_type, "sender": "referee:" + self.rid,
               "timestamp": now(), "conversation_id": conversation_id}
        env.update({k: v for k, v in extra.items() if v is not None})
        return env

    def call(self, url, message_type, payload, **extra):
        body = {"jsonrpc": "2.0", "method": "league.handle", "id": str(uuid.uuid4()),
                "params": {"envelope": self.envelope(message_type, str(uuid.uuid4()), **extra), "payload": payload}}
        req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=CALL_TIMEOUT) as res:
            return json.loads(res.read())

    def register(self, endpoint):
        ans = self.call(self.league, "REGISTER_REFEREE_REQUEST",
                        {"referee_id": self.rid, "endpoint_url": endpoint, "game_types": [GAME]})
        if "result" not in ans:
            raise SystemExit("registration refused: %s" % ans["error"])
        payload = ans["result"]["payload"]
        self.token, self.league_id = payload["auth_token"], payload["league_id"]

    def answer(self, req):
        env = req["params"]["envelope"]
        payload = req["params"]["payload"]
        mt = env["message_type"]
        if mt == "MATCH_ASSIGNMENT":
            if payload.get("scoring"):
                self.points = payload["scoring"]
            threading.Thread(target=self.play, args=(payload,), daemon=True).start()
            return "MATCH_ASSIGNMENT_ACK", {"status": "acknowledged", "match_id": payload["match_id"]}, payload["match_id"]
        if mt == "LEAGUE_SHUTDOWN":
            return "LEAGUE_SHUTDOWN_ACK", {"status": "acknowledged"}, None
        return None, None, None

    def to_player(self, seat, message_type, payload):
        """Sends a match message to a player; None when it failed or was refused."""
        try:
            ans = self.call(seat["url"], message_type, payload, match_id=seat["match_id"], game_type=GAME)
        except (OSError, ValueError) as e:
            print("nim referee %s: %s to %s failed: %s" % (self.rid, message_type, seat["id"], e), file=sys.stderr)
            return None
        if "result" not in ans:
            print("nim referee %s: %s refused by %s: %s" % (self.rid, message_type, seat["id"], ans.get("error")), file=sys.stderr)
            return None
        return ans["result"]["payload"]

    def play(self, a):
        match_id, players = a["match_id"], a["players"]
        heaps = list((a.get("game_params") or {}).get("heaps") or [3, 4, 5])
        seats = [{"id": p, "url": a["player_endpoints"][p], "match_id": match_id} for p in players]
        joined = []
        for i, s in enumerate(seats):
            ack = self.to_player(s, "GAME_INVITATION", {"match_id": match_id, "game_type": GAME,
                                                        "opponents": [seats[1 - i]["id"]], "your_index": i,
                                                        "game_params": {"heaps": heaps}})
            joined.append(ack is not None and ack.get("status") == "accepted")
        moves, outcome, termination, loser = [], {}, "normal", None
        if not all(joined):
            termination = "no_show"
            outcome = {s["id"]: ("win" if joined[i] else "loss") for i, s in enumerate(seats)}
            loser = next(s["id"] for i, s in enumerate(seats) if not joined[i])
        step = 0
        while not outcome:
            i = step % 2
            me, other = seats[i]["id"], seats[1 - i]["id"]
            step += 1
            ans = self.to_player(seats[i], "REQUEST_MOVE", {"step_number": step, "step_context": {"heaps": heaps, "step": step}})
            move = ans.get("move_payload") if ans else None
            if not legal(move, heaps):
                termination = "timeout" if ans is None else "illegal_move"
                moves.append({"step": step, "player": me, "move": move, "outcome": termination.upper()})
                outcome, loser = {me: "loss", other: "win"}, me
                break
            heaps[move["heap"]] -= move["take"]
            moves.append({"step": step, "player": me, "move": move, "outcome": "SUCCESS"})
            if sum(heaps) == 0:
                outcome = {me: "win", other: "loss"}
        final = {"heaps": heaps, "steps": step}
        for s in seats:
            self.to_player(s, "GAME_OVER", {"outcome": outcome[s["id"]], "final_state": final})
        meta = {"moves": moves, "final_state": final, "termination": termination}
        if loser:
            meta["loser"] = loser
        self.report(a, outcome, meta)

    def report(self, a, outcome, metadata):
        payload = {"game_type": GAME, "players": a["players"], "outcome": outcome,
                   "points": {p: self.points[o] for p, o in outcome.items()}, "game_metadata": metadata}
        for attempt in range(5):
            try:
                ans = self.call(self.league, "MATCH_RESULT_REPORT", payload, auth_token=self.token,
                                league_id=self.league_id, round_id=a["round_id"], match_id=a["match_id"], game_type=GAME)
                if "result" in ans:
                    return
                print("nim referee %s: result of %s refused: %s" % (self.rid, a["match_id"], ans["error"]), file=sys.stderr)
                if ans["error"].get("data", {}).get("reason") not in ("RATE_LIMITED", "INTERNAL"):
                    return
            except (OSError, ValueError) as e:
                print("nim referee %s: result of %s not delivered: %s" % (self.rid, a["match_id"], e), file=sys.stderr)
            time.sleep(0.2 * (attempt + 1))


def make_handler(referee):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            mt, payload, match_id = referee.answer(req)
            if mt is None:
                out = {"jsonrpc": "2.0", "id": req.get("id"), "error": {"code": -32015, "message": "unsupported",
                                                                      "data": {"reason": "UNSUPPORTED_MESSAGE"}}}
            else:
                env = referee.envelope(mt, req["params"]["envelope"]["conversation_id"], auth_token=referee.token,
                                       league_id=referee.league_id, match_id=match_id)
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
                referee.done.set()

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--id", required=True, help="referee id")
    ap.add_argument("--league", required=True, help="League Manager URL, e.g. http://127.0.0.1:8000/mcp")
    args = ap.parse_args()
    referee = Referee(args.id, args.league)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(referee))
    endpoint = "http://127.0.0.1:%d/mcp" % server.server_address[1]
    # Registered before serving: an assignment's acknowledgement needs the token.
    referee.register(endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("nim referee %s listening on %s" % (args.id, endpoint), flush=True)
    referee.done.wait()
    print("nim referee %s: league shut down, leaving" % args.id, flush=True)
    server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
