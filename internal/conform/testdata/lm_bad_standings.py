#!/usr/bin/env python3
"""A League Manager whose standings disagree with the results: it gives a win 2 points
whatever the referee reported. Otherwise it is the seed stand-in,
internal/e2e/testdata/seed_league.py."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e", "testdata"))
import seed_league  # noqa: E402


class League(seed_league.League):
    def standings_rows(self, results):
        rescored = []
        for r in results:
            points = {p: (2 if o == "win" else r["points"].get(p, 0)) for p, o in r["outcome"].items()}
            rescored.append(dict(r, points=points))
        return super().standings_rows(rescored)


if __name__ == "__main__":
    sys.exit(seed_league.main(League))
