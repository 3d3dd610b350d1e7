package logging

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestEveryLineHasComponentAndConversation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	log, f, err := Open("referee", path, "DEBUG")
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Msg("started")
	log.Info().Str("conversation_id", "c-1").Msg("a message")
	child := log.With().Str("match_id", "m1").Logger()
	child.Warn().Msg("timer fired")
	f.Close()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var cids []string
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if m["component"] != "referee" {
			t.Errorf("line %q lacks the component", sc.Text())
		}
		cid, _ := m["conversation_id"].(string)
		if cid == "" {
			t.Errorf("line %q lacks a conversation_id", sc.Text())
		}
		cids = append(cids, cid)
	}
	if len(cids) != 3 || cids[1] != "c-1" || cids[0] != cids[2] || cids[0] == "c-1" {
		t.Errorf("got conversation ids %v: want the process's own on lines 1 and 3, the message's on line 2", cids)
	}
}

func TestParseLevel(t *testing.T) {
	for _, s := range []string{"DEBUG", "INFO", "", "WARNING", "ERROR", "CRITICAL"} {
		if _, err := ParseLevel(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseLevel("LOUD"); err == nil {
		t.Error("LOUD accepted")
	}
}

// A console that is not a terminal gets the log file's JSON lines; a terminal gets
// zerolog's readable lines.
func TestConsoleLines(t *testing.T) {
	var console bytes.Buffer
	path := filepath.Join(t.TempDir(), "x.log")
	log, f, err := OpenTo("player", path, "INFO", &console)
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Str("match_id", "m1").Msg("match over")
	log.Debug().Msg("not at INFO")
	f.Close()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if console.String() != string(file) || !strings.Contains(console.String(), `"message":"match over"`) || strings.Count(console.String(), "\n") != 1 {
		t.Errorf("console got %q, log file %q: want the same one JSON line", console.String(), file)
	}

	var tty bytes.Buffer
	w := consoleFor(&tty, true)
	if _, err := w.Write([]byte(`{"level":"info","component":"player","match_id":"m1","time":"2026-11-23T06:19:18.46567665Z","message":"match over"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if got := tty.String(); strings.HasPrefix(got, "{") || !strings.Contains(got, "INF") || !strings.Contains(got, "match over") || !strings.Contains(got, "match_id=m1") {
		t.Errorf("terminal got %q: want a readable line", got)
	}
}

// isTerminal tells a terminal (a pseudo-terminal's master) from a file.
func TestIsTerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if !isTerminal(ptmx) || isTerminal(file) || isTerminal(&bytes.Buffer{}) {
		t.Errorf("isTerminal: pseudo-terminal %v, file %v, buffer %v; want true, false, false", isTerminal(ptmx), isTerminal(file), isTerminal(&bytes.Buffer{}))
	}
}

// BenchmarkLine logs a player's "match over" line to a file and a console, readable
// (a terminal) or JSON (anything else).
func BenchmarkLine(b *testing.B) {
	for _, terminal := range []bool{true, false} {
		b.Run(map[bool]string{true: "readable", false: "json"}[terminal], func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "p.log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			log := zerolog.New(zerolog.MultiLevelWriter(f, consoleFor(io.Discard, terminal))).With().Timestamp().Str("component", "player").Logger()
			b.ReportAllocs()
			for b.Loop() {
				log.Info().Str("player_id", "p01").Str("conversation_id", "64957a58-4291-45c2-afad-d61cf348e435").Str("match_id", "r01-m01-0a3f878913c5").
					Str("opponent", "p10").Str("outcome", "win").Str("reason", "normal").Bool("repeated", false).Msg("match over")
			}
		})
	}
}
