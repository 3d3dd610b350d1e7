package player

import (
	"context"
	"errors"
	"time"
)

// errStopping is why a pause ended early when the player stops.
var errStopping = errors.New("player stopping")

// pause waits d before a move is answered: Config.Think before the move is chosen, the
// slow fault's delay after. It ends early, with an error saying why, when the caller
// gives up (nobody waits for the answer any more) or the player stops.
func (p *Player) pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.stopping:
		return errStopping
	}
}
