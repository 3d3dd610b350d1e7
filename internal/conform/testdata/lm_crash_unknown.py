#!/usr/bin/env python3
"""A League Manager that crashes on a message type it does not know: the process exits
without answering. Otherwise it is the seed stand-in, internal/e2e/testdata/seed_league.py."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e", "testdata"))
import seed_league  # noqa: E402


class League(seed_league.League):
    def unknown_message(self, mt):
        sys.stderr.write("unknown message type %s: crashing\n" % mt)
        sys.stderr.flush()
        os._exit(3)


if __name__ == "__main__":
    sys.exit(seed_league.main(League))
