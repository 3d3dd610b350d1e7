#!/usr/bin/env python3
"""A tic-tac-toe player that breaks league.v2 in one way, chosen with --fault, for the
tests of `league conform player`. Otherwise it is the stand-in of the Python
implementation's player (internal/e2e/testdata/python_player.py), standard library only.

  wrong-token    sends AGENT_READY_REQUEST with a token the League Manager never issued
  illegal        always plays the top-left cell, taken or not
  no-echo        answers with a conversation_id of its own, not the request's
  crash-unknown  exits at once on a message type it does not know"""
import argparse
import os
import sys
import threading
import uuid
from http.server import ThreadingHTTPServer

# Imported from the source tree: leave no bytecode there.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e", "testdata"))
import python_player  # noqa: E402

KNOWN = {"GAME_INVITATION", "REQUEST_MOVE", "GAME_OVER", "LEAGUE_SHUTDOWN"}


class BrokenPlayer(python_player.Player):
    def __init__(self, pid, league, fault):
        super().__init__(pid, league, "none", "exit")
        self.fault = fault

    def call(self, message_type, payload, **extra):
        if self.fault == "wrong-token" and message_type == "AGENT_READY_REQUEST":
            extra["auth_token"] = str(uuid.uuid4())
        return super().call(message_type, payload, **extra)

    def envelope(self, message_type, conversation_id, **extra):
        if self.fault == "no-echo":
            conversation_id = str(uuid.uuid4())
        return super().envelope(message_type, conversation_id, **extra)

    def answer(self, req):
        env = req["params"]["envelope"]
        if self.fault == "crash-unknown" and env["message_type"] not in KNOWN:
            os._exit(3)
        if self.fault == "illegal" and env["message_type"] == "REQUEST_MOVE":
            return "MOVE_RESPONSE", {"move_payload": {"row": 0, "col": 0}}, env.get("match_id")
        return super().answer(req)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--id", required=True)
    ap.add_argument("--league", required=True)
    ap.add_argument("--fault", required=True, choices=("wrong-token", "illegal", "no-echo", "crash-unknown"))
    args = ap.parse_args()
    player = BrokenPlayer(args.id, args.league, args.fault)
    server = ThreadingHTTPServer(("127.0.0.1", 0), python_player.make_handler(player))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = "http://127.0.0.1:%d/mcp" % server.server_address[1]
    print("player %s listening on %s" % (args.id, endpoint), flush=True)
    player.register(endpoint)
    player.shutdown.wait()
    server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
