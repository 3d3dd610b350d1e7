// A tic-tac-toe player on the Node kit whose strategy misbehaves on purpose, for
// TestKitNodeBadStrategy. In the first match it meets, its first move is too slow (it
// thinks 4 s, beyond any move deadline of the test), the next raises an exception, the
// rest are legal; in the second match its first move is illegal (a cell taken, or off the
// board); later matches are played legally. Flags as examples/node/tic_tac_toe_player.js.
'use strict';
const path = require('path');
const { main } = require(path.join(__dirname, '..', '..', '..', 'examples', 'node', 'agentleague'));

const seen = []; // match ids in the order of their first move request
const asked = new Map(); // match_id -> move requests so far

async function chooseMove(state) {
  if (!seen.includes(state.match_id)) seen.push(state.match_id);
  const n = (asked.get(state.match_id) ?? 0) + 1;
  asked.set(state.match_id, n);
  const match = seen.indexOf(state.match_id) + 1;
  if (match === 1 && n === 1) {
    await new Promise((resolve) => setTimeout(resolve, 4000)); // too slow
    return state.legal_moves[0];
  }
  if (match === 1 && n === 2) throw new Error('deliberate failure in chooseMove');
  if (match === 2 && n === 1) {
    const taken = [];
    state.context.board.forEach((row, r) => row.forEach((cell, c) => { if (cell !== '') taken.push({ row: r, col: c }); }));
    return taken[0] ?? { row: 7, col: 7 }; // illegal: a cell taken, or off the board
  }
  return state.legal_moves[0];
}

main(chooseMove, { game: 'tic_tac_toe', port: 0 });
