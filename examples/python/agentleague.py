#!/usr/bin/env python3
"""agentleague: an Agent League player in one function, standard library only (Python 3.9+).

Copy this file beside your player (or put examples/python on sys.path) and write one function:

    import agentleague

    def choose_move(state):
        return state["legal_moves"][0]          # the move_payload to send

    agentleague.main(choose_move, game="tic_tac_toe")   # reads --id, --league, --port, --outbound

or, without a command line, agentleague.run(choose_move, player_id="py1", game="tic_tac_toe",
league="http://127.0.0.1:8000/mcp"). Without a port the player is outbound (it opens no port and
takes its requests from the League Manager's relay: protocol/README.md, "Outbound agents"); with
port=N (--port N; 0 is any free port) it listens on 127.0.0.1:N/mcp instead.

The kit does the rest: registration with retries, AGENT_READY, invitations, match credentials,
deadlines, GAME_OVER, LEAGUE_COMPLETED, LEAGUE_SHUTDOWN, and one log line per match.

state, the one argument of choose_move(state), is a dict:

    game_type    str    the game of the match: "tic_tac_toe", "connect_four", "chess",
                        "rock_paper_scissors", "even_odd", or an external game's name ("nim")
    match_id     str    the match, e.g. "r01-m02"
    step_number  int    the step the referee asks a move for (from 1)
    context      dict   the step_context exactly as the referee sent it (game-specific):
                          tic_tac_toe   board (3x3 of "X"/"O"/""), your_mark, move_number
                          connect_four  board (6 rows x 7 of "R"/"Y"/"", row 0 on top),
                                        your_color, move_number, valid_moves (columns)
                          chess         fen, side_to_move, your_color ("white"/"black"),
                                        legal_moves (UCI strings), is_check, last_move,
                                        moves, move_number, ply
                          rock_paper_scissors, even_odd
                                        round, rounds, your_score, opponent_score, history
                          an external game: whatever its referee sends (nim: heaps, step)
    legal_moves  list|None  every legal move, each ready to return as it is (a move_payload):
                          tic_tac_toe {"row": r, "col": c}; connect_four {"column": c};
                          chess {"uci": "e2e4"}; rock_paper_scissors {"choice": "rock"} ...;
                          even_odd {"choice": "even"|"odd"}; an external game whose context
                          has a list "legal_moves" gets that list; otherwise None
    role         str|None  your side as the context names it: your_mark ("X"/"O"),
                          your_color ("R"/"Y", "white"/"black"); None when it names none
    index        int|None  your seat in the match (0 moves first), from the invitation
    opponent     str|None  the opponent's player id, from the invitation
    game_params  dict   the match's game parameters from the invitation ({} when none)
    time_left    float  seconds left to return a move: the referee's deadline less a safety
                        margin (a tenth of it, 0.1 s to 0.5 s) for the answer to travel
    last_result  dict|None  what became of your previous move, as the referee sent it
                        (outcome SUCCESS/INVALID/TIMEOUT/FORCED, reason, move)
    warning      str|None  the referee's warning when it asks again after a miss
    player_id    str    your id

choose_move returns the move_payload to send (any JSON value). The kit sends it as given: the
referee judges it, and an illegal move loses the match. When choose_move raises, returns None,
or is still thinking at time_left, the kit logs why and answers the request with a JSON-RPC
error (INTERNAL): for the referee that is a missed move (a warning and the same request again,
then a forced move, then a loss; docs/agents.md, "Deadlines"), never a malformed move.

Optional callbacks:

    on_game_over(result)      after each match; result is a dict: match_id, game_type,
                              outcome ("win"/"draw"/"loss"), reason, opponent, points,
                              winner, final_state (the GAME_OVER payload's fields)
    on_league_over(standings) once, when the league completes (LEAGUE_COMPLETED): the final
                              standings, best first, rows of {rank, player_id, points, wins,
                              draws, losses, matches_played}

run() returns 0 once the League Manager shuts the league down (LEAGUE_SHUTDOWN) or the relay
closes, and raises SystemExit with a message when registration is refused or never succeeds.
"""
