package main

import (
	"context"
	"testing"
)

// A grace period of zero would kill every agent before its LEAGUE_SHUTDOWN could act.
func TestDemoRefusesGraceNotPositive(t *testing.T) {
	for _, grace := range []string{"0s", "-1s"} {
		t.Run(grace, func(t *testing.T) {
			if code := run(context.Background(), []string{"demo", "--grace", grace}); code != 2 {
				t.Errorf("league demo --grace %s exited %d, want 2 (a bad command line)", grace, code)
			}
		})
	}
}
