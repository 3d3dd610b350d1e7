#!/usr/bin/env python3
"""A connect four player for Agent League on the kit beside it (agentleague.py): win if we
can, block if we must, else the column nearest the centre.

    python3 examples/python/connect_four_player.py --id c4py --league http://127.0.0.1:8000/mcp

The board is 6 rows of 7 cells ("R", "Y" or ""), row 0 at the top; a move is {"column": c}.
"""
import agentleague

ROWS, COLS = 6, 7


def drop(board, col, disc):
    """The board after disc falls into col (which has room): a new board."""
    board = [row[:] for row in board]
    row = max(r for r in range(ROWS) if board[r][col] == "")
    board[row][col] = disc
    return board


def wins(board, disc):
    """Whether disc has four in a row: across, down, or either diagonal."""
    for r in range(ROWS):
        for c in range(COLS):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if all(0 <= rr < ROWS and 0 <= cc < COLS and board[rr][cc] == disc for rr, cc in cells):
                    return True
    return False


def choose_move(state):
    board, me = state["context"]["board"], state["role"]
    other = "Y" if me == "R" else "R"
    columns = [m["column"] for m in state["legal_moves"]]
    for disc in (me, other):  # 1. win now; 2. else take the cell the opponent would win on
        for col in columns:
            if wins(drop(board, col, disc), disc):
                return {"column": col}
    return {"column": min(columns, key=lambda c: abs(c - COLS // 2))}  # 3. nearest the centre


if __name__ == "__main__":
    agentleague.main(choose_move, game="connect_four")
