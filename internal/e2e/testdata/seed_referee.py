#!/usr/bin/env python3
"""A tic-tac-toe referee written from seed 004 and the wire captures of the Python
implementation (shared/interop) only, standard library only. It registers with no
features, never sends heartbeats, shows players no credential, and sends nothing but the
seed's messages: GAME_INVITATION, REQUEST_MOVE and GAME_OVER to players, and
MATCH_RESULT_REPORT with its own token to the League Manager. Like that implementation it
records no moves in game_metadata, only the final state and the number of moves.

Unlike it, it serves requests concurrently, so result reports are never dropped."""
import argparse
import json
import sys
import threading
import time
import urllib.request
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

POINTS = {"win": 3, "draw": 1, "loss": 0}  # seed 004 §4.3
CALL_TIMEOUT = 30


def now():
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def winner(board):
    lines = [[(r, c) for c in range(3)] for r in range(3)]
    lines += [[(r, c) for r in range(3)] for c in range(3)]
    lines += [[(i, i) for i in range(3)], [(i, 2 - i) for i in range(3)]]
    for line in lines:
        marks = {board[r][c] for r, c in line}
        if len(marks) == 1 and "" not in marks:
            return marks.pop()
    return ""


class Referee:
    def __init__(self, rid, league):
        self.rid = rid
        self.league = league
        self.token = None
        self.league_id = None

    def envelope(self, message_type, conversation_id, **extra):
        env = {"protocol": "league.v2", "message_type": message_type, "sender": "referee:" + self.rid,
               "timestamp": now(), "conversation_id": conversation_id}
        env.update({k: v for k, v in extra.items() if v is not None})
        return env

    def call(self, url, message_type, payload, **extra):
        """Sends one request and returns its JSON-RPC answer."""
        body = {"jsonrpc": "2.0", "method": "league.handle", "id": str(uuid.uuid4()),
                "params": {"envelope": self.envelope(message_type, str(uuid.uuid4()), **extra), "payload": payload}}
        req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=CALL_TIMEOUT) as res:
            return json.loads(res.read())

    def register(self, endpoint):
        ans = self.call(self.league, "REGISTER_REFEREE_REQUEST", {"referee_id": self.rid, "endpoint_url": endpoint})
        if "result" not in ans:
            raise SystemExit("registration refused: %s" % ans["error"])
        payload = ans["result"]["payload"]
        self.token, self.league_id = payload["auth_token"], payload["league_id"]

    def answer(self, req):
        env = req["params"]["envelope"]
        payload = req["params"]["payload"]
        if env["message_type"] != "MATCH_ASSIGNMENT":
            return None
        threading.Thread(target=self.play, args=(payload,), daemon=True).start()
        ack = self.envelope("MATCH_ASSIGNMENT_ACK", env["conversation_id"], auth_token=self.token,
                            league_id=self.league_id, match_id=payload["match_id"])
        return {"envelope": ack, "payload": {"status": "acknowledged", "match_id": payload["match_id"]}}

    def to_player(self, a, message_type, payload):
        """Sends a match message to player a; None when it failed or was refused."""
        try:
            ans = self.call(a["url"], message_type, payload, match_id=a["match_id"], game_type="tic_tac_toe")
        except (OSError, ValueError) as e:
            print("referee %s: %s to %s failed: %s" % (self.rid, message_type, a["id"], e), file=sys.stderr)
            return None
        if "result" not in ans:
            print("referee %s: %s refused by %s: %s" % (self.rid, message_type, a["id"], ans.get("error")), file=sys.stderr)
            return None
        return ans["result"]["payload"]

    def play(self, assignment):
        match_id, players = assignment["match_id"], assignment["players"]
        seats = [{"id": p, "url": assignment["player_endpoints"][p], "match_id": match_id} for p in players]
        outcome = {}
        joined = []
        for i, s in enumerate(seats):
            ack = self.to_player(s, "GAME_INVITATION", {"match_id": match_id, "game_type": "tic_tac_toe",
                                                         "opponents": [seats[1 - i]["id"]]})
            joined.append(ack is not None and ack.get("status") == "accepted")
        board = [["", "", ""], ["", "", ""], ["", "", ""]]
        moves = 0
        if not all(joined):
            # A player who did not join loses; both lose when neither did.
            for i, s in enumerate(seats):
                outcome[s["id"]] = "loss" if not joined[i] else "win"
        while not outcome:
            i = moves % 2
            mark = "XO"[i]
            ans = self.to_player(seats[i], "REQUEST_MOVE", {"step_number": moves + 1, "step_context": {
                "board": board, "your_mark": mark, "move_number": moves + 1}})
            try:
                r, c = ans["move_payload"]["row"], ans["move_payload"]["col"]
                legal = isinstance(r, int) and isinstance(c, int) and 0 <= r < 3 and 0 <= c < 3 and board[r][c] == ""
            except (TypeError, KeyError):
                legal = False
            if not legal:
                outcome = {seats[i]["id"]: "loss", seats[1 - i]["id"]: "win"}
                break
            board[r][c] = mark
            moves += 1
            w = winner(board)
            if w:
                x_won = w == "X"
                outcome = {seats[0]["id"]: "win" if x_won else "loss", seats[1]["id"]: "loss" if x_won else "win"}
            elif moves == 9:
                outcome = {s["id"]: "draw" for s in seats}
        w = winner(board)
        final = {"board": board, "current_player": seats[moves % 2]["id"], "move_count": moves,
                 "outcome": w + "_WINS" if w else ("DRAW" if moves == 9 else "IN_PROGRESS")}
        for s in seats:
            self.to_player(s, "GAME_OVER", {"outcome": outcome[s["id"]], "final_state": final})
        self.report(assignment, outcome, {"final_state": final, "total_moves": moves})

    def report(self, assignment, outcome, metadata):
        payload = {"game_type": "tic_tac_toe", "players": assignment["players"], "outcome": outcome,
                   "points": {p: POINTS[o] for p, o in outcome.items()}, "game_metadata": metadata}
        for attempt in range(5):
            try:
                ans = self.call(self.league, "MATCH_RESULT_REPORT", payload, auth_token=self.token,
                                league_id=self.league_id, round_id=assignment["round_id"],
                                match_id=assignment["match_id"], game_type="tic_tac_toe")
                if "result" in ans:
                    return
                print("referee %s: result of %s refused: %s" % (self.rid, assignment["match_id"], ans["error"]), file=sys.stderr)
                if ans["error"].get("data", {}).get("reason") not in ("RATE_LIMITED", "INTERNAL"):
                    return
            except (OSError, ValueError) as e:
                print("referee %s: result of %s not delivered: %s" % (self.rid, assignment["match_id"], e), file=sys.stderr)
            time.sleep(0.2 * (attempt + 1))


def make_handler(referee):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            result = referee.answer(req)
            if result is None:
                out = {"jsonrpc": "2.0", "id": req.get("id"), "error": {"code": -32015, "message": "unsupported",
                                                                      "data": {"reason": "UNSUPPORTED_MESSAGE"}}}
            else:
                out = {"jsonrpc": "2.0", "id": req.get("id"), "result": result}
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
    args = ap.parse_args()
    referee = Referee(args.id, args.league)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(referee))
    endpoint = "http://127.0.0.1:%d/mcp" % server.server_address[1]
    # Registered before serving: an assignment needs the token for its acknowledgement.
    referee.register(endpoint)
    print("referee %s listening on %s" % (args.id, endpoint), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
