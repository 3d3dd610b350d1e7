#!/usr/bin/env node
// A tic-tac-toe player for Agent League on the kit (agentleague.js, Node 18+, no packages):
// the kit does the protocol, this file only chooses moves.
//
//     make demo EXTRA=1        # first terminal: a league that waits for one more player
//     node examples/node/tic_tac_toe_player.js --id js1 --league http://127.0.0.1:8000/mcp
//
// It opens no port and plays through the League Manager's relay, so it works behind NAT or in
// a sandbox; --port N (0: any free port) makes it listen instead.
// examples/python/tic_tac_toe_player.py is the same player in Python.
'use strict';
const { main } = require('./agentleague');

// The eight lines of three cells, as [row, col] pairs.
const LINES = [[[0, 0], [0, 1], [0, 2]], [[1, 0], [1, 1], [1, 2]], [[2, 0], [2, 1], [2, 2]],
  [[0, 0], [1, 0], [2, 0]], [[0, 1], [1, 1], [2, 1]], [[0, 2], [1, 2], [2, 2]],
  [[0, 0], [1, 1], [2, 2]], [[0, 2], [1, 1], [2, 0]]];

// Whether mark on the empty cell {row, col} makes three in a line.
const completes = (board, { row, col }, mark) => LINES.some((line) =>
  line.some(([r, c]) => r === row && c === col) &&
  line.every(([r, c]) => (r === row && c === col) || board[r][c] === mark));

// state.context is {board: 3x3 of "X"/"O"/"", your_mark, move_number}; state.legal_moves are
// the empty cells as {row, col}, the move to return (agentleague.js lists every key of state).
function chooseMove(state) {
  const { board } = state.context;
  const mark = state.role;
  const free = state.legal_moves;
  for (const who of [mark, mark === 'X' ? 'O' : 'X']) { // win if we can, else block
    const cell = free.find((move) => completes(board, move, who));
    if (cell) return cell;
  }
  const best = [[1, 1], [0, 0], [0, 2], [2, 0], [2, 2]].find(([r, c]) => board[r][c] === ''); // centre, corners
  return best ? { row: best[0], col: best[1] } : free[0];
}

main(chooseMove, { game: 'tic_tac_toe' }); // outbound through the relay; --port N listens instead
