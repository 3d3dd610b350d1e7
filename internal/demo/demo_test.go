package demo

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/agentleague/agentleague/internal/cli"
)

// Bad settings are a bad command line, refused before any process starts: a grace
// period of zero would kill every agent before its LEAGUE_SHUTDOWN could act, and the
// extra players need a number not negative and time to come.
func TestRunRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--grace", "0s"}, {"--grace", "-1s"}, {"--extra", "-1"}, {"--extra", "1", "--extra-wait", "0s"}, {"--players", "1"}, {"--think", "-1s"}, {"--nope"}} {
		t.Run(args[len(args)-1], func(t *testing.T) {
			var usage cli.UsageError
			if err := Run(context.Background(), args, io.Discard); !errors.As(err, &usage) {
				t.Errorf("league demo %v: %v, want a bad command line", args, err)
			}
		})
	}
}
