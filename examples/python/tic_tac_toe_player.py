#!/usr/bin/env python3
"""A tic-tac-toe player for Agent League: one function on the kit beside it (agentleague.py).

    make demo EXTRA=1     # a league that waits for one more player, then in another terminal:
    python3 examples/python/tic_tac_toe_player.py --id py1 --league http://127.0.0.1:8000/mcp

It opens no port and plays through the League Manager's relay, so it works behind NAT too;
--port N (0: any free port) makes it listen instead.
"""
import agentleague

# The eight lines of three cells, as (row, col) pairs.
LINES = ([[(r, c) for c in range(3)] for r in range(3)] + [[(r, c) for r in range(3)] for c in range(3)] +
         [[(0, 0), (1, 1), (2, 2)], [(0, 2), (1, 1), (2, 0)]])


def completes_line(board, cell, mark):
    """Whether putting mark on the empty cell makes three in a line."""
    return any(cell in line and all(board[r][c] == mark for r, c in line if (r, c) != cell) for line in LINES)


def choose_move(state):
    """Win if we can, else block the opponent's win, else the centre, a corner, any cell."""
    board, mark = state["context"]["board"], state["role"]
    empty = [(m["row"], m["col"]) for m in state["legal_moves"]]
    for who in (mark, "O" if mark == "X" else "X"):
        for cell in empty:
            if completes_line(board, cell, who):
                return {"row": cell[0], "col": cell[1]}
    for cell in [(1, 1), (0, 0), (0, 2), (2, 0), (2, 2)] + empty:
        if cell in empty:
            return {"row": cell[0], "col": cell[1]}


if __name__ == "__main__":
    agentleague.main(choose_move, game="tic_tac_toe")
