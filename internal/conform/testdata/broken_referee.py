#!/usr/bin/env python3
"""A tic-tac-toe referee that breaks league.v2 in one way, chosen with --fault, for the
tests of `league conform referee`. Otherwise it is the seed-only referee
(internal/e2e/testdata/seed_referee.py), standard library only.

  wrong-outcome  plays and announces GAME_OVER right, then reports winner and loser swapped
  no-report      never sends MATCH_RESULT_REPORT"""
import argparse
import os
import sys
from http.server import ThreadingHTTPServer

# Imported from the source tree: leave no bytecode there.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e", "testdata"))
import seed_referee  # noqa: E402

SWAP = {"win": "loss", "loss": "win", "draw": "draw"}


class BrokenReferee(seed_referee.Referee):
    def __init__(self, rid, league, fault):
        super().__init__(rid, league)
        self.fault = fault

    def report(self, assignment, outcome, metadata):
        if self.fault == "no-report":
            return
        super().report(assignment, {p: SWAP[o] for p, o in outcome.items()}, metadata)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--id", required=True)
    ap.add_argument("--league", required=True)
    ap.add_argument("--fault", required=True, choices=("wrong-outcome", "no-report"))
    args = ap.parse_args()
    referee = BrokenReferee(args.id, args.league, args.fault)
    server = ThreadingHTTPServer(("127.0.0.1", 0), seed_referee.make_handler(referee))
    endpoint = "http://127.0.0.1:%d/mcp" % server.server_address[1]
    referee.register(endpoint)
    print("referee %s listening on %s" % (args.id, endpoint), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
