#!/usr/bin/env python3
"""A League Manager that does not echo conversation_id: every answer gets a fresh one.
Otherwise it is the seed stand-in, internal/e2e/testdata/seed_league.py."""
import os
import sys
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e", "testdata"))
import seed_league  # noqa: E402


class League(seed_league.League):
    def reply_conversation(self, conversation_id):
        return str(uuid.uuid4())


if __name__ == "__main__":
    sys.exit(seed_league.main(League))
