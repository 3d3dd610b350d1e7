package problem

import (
	"errors"
	"fmt"
	"testing"
)

func TestList(t *testing.T) {
	var l List
	if l.Err() != nil {
		t.Fatal("an empty list is no error")
	}
	l.Add("heaps[1]", "must be <= %d, got %d", 100, 400)
	l.Add("", "must be a mapping")
	err := fmt.Errorf("game nim: %w", l.Err())
	var got List
	if !errors.As(err, &got) || len(got) != 2 {
		t.Fatalf("errors.As found %v in %v", got, err)
	}
	if want := "game nim: heaps[1]: must be <= 100, got 400; must be a mapping"; err.Error() != want {
		t.Errorf("got %q, want %q", err.Error(), want)
	}
}

func TestPaths(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{Field("", "league"), "league"},
		{Field(Index("games", 2), "scoring"), "games[2].scoring"},
		{Index(Field("params", "heaps"), 1), "params.heaps[1]"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
