#!/usr/bin/env python3
"""A tic-tac-toe player on the Python kit (examples/python/agentleague.py) whose strategy
misbehaves once, at its first move of the league, as --fault says:

    slow     sleeps past the time the kit gives it (state["time_left"]), then plays
    raise    raises an exception
    illegal  returns {"row": 7, "col": 7}, a cell off the board

and otherwise plays the first legal move. The kit must log the cause, answer what the
protocol allows (no move, or the illegal move as given), keep serving, and exit 0 when the
league shuts down. The e2e test kit_python_test.go runs it.
"""
import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "python"))
import agentleague  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--fault", choices=("slow", "raise", "illegal"), required=True)
parser.add_argument("--id", required=True)
parser.add_argument("--league", required=True)
parser.add_argument("--port", type=int)
args = parser.parse_args()
misbehaved = threading.Event()


def choose_move(state):
    if not misbehaved.is_set():
        misbehaved.set()
        if args.fault == "slow":
            time.sleep(state["time_left"] + 1.5)
            return state["legal_moves"][0]  # too late: the kit has answered without it
        if args.fault == "raise":
            raise ValueError("deliberately broken strategy")
        return {"row": 7, "col": 7}
    return state["legal_moves"][0]


sys.exit(agentleague.run(choose_move, args.id, args.league, game="tic_tac_toe", port=args.port))
