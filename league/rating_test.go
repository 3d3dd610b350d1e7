package league

import (
	"reflect"
	"testing"
	"testing/synctest"

	"github.com/agentleague/agentleague/league/ratings"
)

// cacheGames are n games among six players, the stronger winning most.
func cacheGames(n int) ([]string, []ratings.Game) {
	players := []string{"a", "b", "c", "d", "e", "f"}
	var games []ratings.Game
	for k := range n {
		i, j := k%6, (k*5+1)%6
		if i == j {
			j = (j + 1) % 6
		}
		score := 1.0
		if k%4 == 0 {
			score = 0
		}
		if i > j {
			score = 1 - score
		}
		games = append(games, ratings.Game{A: players[i], B: players[j], Score: score})
	}
	return players, games
}

// A league whose bootstrap is too costly to compute inline gets its point ratings at once,
// with the intervals of the last full computation (none at first: each point its own
// interval), and the worker catches up to the rows the export computes, exactly.
func TestRatingsCacheRefreshesInTheBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &ratingsCache{inline: 1}
		defer c.close()
		players, games := cacheGames(60)
		exact := func(in ratingsInput) []ratings.Rating {
			rows, err := ratings.League(in.players, in.games, in.samples, in.seed)
			if err != nil {
				t.Fatal(err)
			}
			return rows
		}
		check := func(in ratingsInput, wantIntervals int, wantExact bool) {
			t.Helper()
			got, err := c.get(in)
			if err != nil {
				t.Fatal(err)
			}
			if got.intervalsGames != wantIntervals {
				t.Errorf("%d games: intervals of %d games, want %d", len(in.games), got.intervalsGames, wantIntervals)
			}
			if eq := reflect.DeepEqual(got.rows, exact(in)); eq != wantExact {
				t.Errorf("%d games: rows equal to the full computation: %v, want %v", len(in.games), eq, wantExact)
			}
			for i, r := range got.rows {
				if r.Low > r.Rating || r.Rating > r.High || r.RankLow < 1 || r.RankLow > i+1 || r.RankHigh < i+1 || r.RankHigh > len(players) {
					t.Errorf("%d games: row %d %+v: interval or ranks that do not hold it", len(in.games), i+1, r)
				}
			}
		}
		first := ratingsInput{players: players, games: games[:40], samples: 50, seed: 7}
		check(first, 0, false)
		synctest.Wait() // the worker has computed the first input
		check(first, 40, true)
		all := ratingsInput{players: players, games: games, samples: 50, seed: 7}
		check(all, 40, false)
		// A view that read its results before the last one: its own point ratings, and
		// the cache stays at the newest.
		if got, err := c.get(first); err != nil || got.intervalsGames != 40 || len(got.rows) != len(players) || c.games != 60 {
			t.Errorf("an older view: intervals of %d games, %d rows (%v), cache at %d games; want 40, every player, and the cache at 60", got.intervalsGames, len(got.rows), err, c.games)
		}
		synctest.Wait()
		check(all, 60, true)
	})
}

// A league whose bootstrap is cheap gets the full computation at once, and starts no worker.
func TestRatingsCacheComputesSmallLeaguesInline(t *testing.T) {
	c := &ratingsCache{}
	players, games := cacheGames(30)
	in := ratingsInput{players: players, games: games, samples: 100, seed: 3}
	got, err := c.get(in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ratings.League(players, games, 100, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.rows, want) || got.intervalsGames != 30 || c.kick != nil {
		t.Errorf("got %+v (intervals of %d games, worker %v), want the full computation of 30 games and no worker", got.rows, got.intervalsGames, c.kick != nil)
	}
}
