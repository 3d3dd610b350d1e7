#!/usr/bin/env python3
"""A chess player for Agent League on the kit beside it (agentleague.py): it picks from the
legal moves the referee lists, with one idea: capture the most valuable piece it can, else
develop (a knight, bishop or pawn towards the centre), else any legal move.

    python3 examples/python/chess_player.py --id chesspy --league http://127.0.0.1:8000/mcp

The chess step_context lists every legal move (legal_moves, UCI such as "e2e4" or "e7e8q")
beside the position (fen); the kit hands them over as state["legal_moves"], each {"uci": ...}.
It knows no more chess than that: no look-ahead, so it blunders freely.
"""
import random

import agentleague

VALUES = {"p": 1, "n": 3, "b": 3, "r": 5, "q": 9, "k": 0}


def board_of(fen):
    """The pieces of a FEN's placement field, by square name: {"e1": "K", ...}."""
    pieces = {}
    for rank, row in zip("87654321", fen.split()[0].split("/")):
        file = 0
        for ch in row:
            if ch.isdigit():
                file += int(ch)
            else:
                pieces["abcdefgh"[file] + rank] = ch
                file += 1
    return pieces


def score(move, pieces):
    """Captures first, the more valuable the better, promotions too; then central moves."""
    uci = move["uci"]
    victim = pieces.get(uci[2:4])
    gain = 10 * VALUES[victim.lower()] if victim else 0
    gain += 8 if len(uci) == 5 and uci[4] == "q" else 0
    centre = 3.5 - max(abs("abcdefgh".index(uci[2]) - 3.5), abs(int(uci[3]) - 4.5))
    return gain + centre / 10


def choose_move(state):
    pieces = board_of(state["context"]["fen"])
    moves = state["legal_moves"]
    best = max(score(m, pieces) for m in moves)
    return random.choice([m for m in moves if score(m, pieces) == best])


if __name__ == "__main__":
    agentleague.main(choose_move, game="chess")
