#!/usr/bin/env python3
"""A nim player on the Python kit (examples/python/agentleague.py), standard library only:
it registers for game_types ["nim"], answers REQUEST_MOVE with {"heap": i, "take": n} and
leaves on LEAGUE_SHUTDOWN. --strategy perfect plays the nim-sum (it wins every position it
can); random takes a random legal move, seeded by --seed. Nim is an external game: the kit
knows nothing of it and hands over the referee's step_context, {"heaps": [...], "step": n}.

Run (see README.md beside it); without --port it plays outbound through the League
Manager's relay, as every kit player:
    python3 examples/nim/nim_player.py --id nim-a --league http://127.0.0.1:8000/mcp --strategy perfect
"""
import argparse
import functools
import operator
import os
import random
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import agentleague  # noqa: E402 - the kit lives in examples/python


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--id", required=True, help="player id")
    ap.add_argument("--league", required=True, help="League Manager URL, e.g. http://127.0.0.1:8000/mcp")
    ap.add_argument("--strategy", choices=("perfect", "random"), default="random")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--port", type=int, help="listen on this port (0: any free one); default: outbound")
    ap.add_argument("--outbound", action="store_true", help="use the League Manager's relay (the default without --port)")
    args = ap.parse_args()
    strategy, rng, lock = perfect if args.strategy == "perfect" else rand, random.Random(args.seed), threading.Lock()

    def choose_move(state):
        with lock:  # one random generator for every match
            return strategy(state["context"]["heaps"], rng)

    return agentleague.run(choose_move, args.id, args.league, game="nim", port=args.port,
                           outbound=args.outbound or None, display_name="nim " + args.strategy)


if __name__ == "__main__":
    sys.exit(main())
