package logging

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
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
