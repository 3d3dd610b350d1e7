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

// A negative number of extra players, or no time to wait for them, is a bad command line.
func TestDemoRefusesBadExtra(t *testing.T) {
	for _, args := range [][]string{{"--extra", "-1"}, {"--extra", "1", "--extra-wait", "0s"}} {
		t.Run(args[len(args)-1], func(t *testing.T) {
			if code := run(context.Background(), append([]string{"demo"}, args...)); code != 2 {
				t.Errorf("league demo %v exited %d, want 2 (a bad command line)", args, code)
			}
		})
	}
}
