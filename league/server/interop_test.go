package server_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

// capture is one file of shared/interop/python-peer-wire.
type capture struct {
	ReceivedBy string         `json:"received_by"`
	Request    map[string]any `json:"request"`
	Response   map[string]any `json:"response"`
}

// captureDir is the interop material: shared/interop beside the repository, or the copy
// the schemas keep in testdata.
func captureDir(t *testing.T) string {
	t.Helper()
	for _, d := range []string{"../../../shared/interop/python-peer-wire", "../../schemas/testdata/python-peer-wire"} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	t.Fatal("no python-peer-wire captures found")
	return ""
}

func loadCaptures(t *testing.T) map[string]capture {
	t.Helper()
	dir := captureDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.wire.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in %s: %v", dir, err)
	}
	out := map[string]capture{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c capture
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".wire.json")] = c
	}
	return out
}

// at walks a decoded JSON object along keys.
func at(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func obj(v any, keys ...string) map[string]any {
	m, _ := at(v, keys...).(map[string]any)
	return m
}

// deepCopy copies a decoded JSON value.
func deepCopy(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(v)
	var out map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// lmReceives lists the captures whose request a League Manager receives, in the order
// of the live run they come from.
var lmReceives = []string{
	"register_referee_request",
	"agent_ready_request",
	"register_player_request",
	"admin_start_league_request",
	"match_result_report",
	"query_standings",
}

// interopReplay replays every captured message a League Manager receives into a fresh
// League Manager, and answers its MATCH_ASSIGNMENT with the captured MATCH_ASSIGNMENT_ACK.
// Only what belongs to that other run is substituted: the tokens it issued (each sender
// gets the token our League Manager issued to it), the referee endpoint (a local fake),
// the admin token (the capture has none, which we refuse first), and the match and round
// ids of its schedule (after replaying them as they are). Answers are compared with the
// captured ones.
func interopReplay(t *testing.T) {
	caps := loadCaptures(t)
	var received []string
	for name, c := range caps {
		if c.ReceivedBy == "127.0.0.1:8000" {
			received = append(received, name)
		}
	}
	if got, want := slices.Sorted(slices.Values(received)), slices.Sorted(slices.Values(lmReceives)); !slices.Equal(got, want) {
		t.Fatalf("captures received by the League Manager %v, this replay handles %v", got, want)
	}

	dir := t.TempDir()
	lm := startLM(t, dir)
	defer lm.stop()
	w := newWire(t, lm)
	db := openRO(t, filepath.Join(dir, "league.db"))

	// The tokens of the captured run, by sender: issued in registration answers, shown
	// in later requests.
	capturedTok := map[string]string{}
	for _, c := range caps {
		sender, _ := at(c.Request, "params", "envelope", "sender").(string)
		if tok, ok := at(c.Request, "params", "envelope", "auth_token").(string); ok {
			capturedTok[sender] = tok
		}
		if tok, ok := at(c.Response, "result", "payload", "auth_token").(string); ok {
			capturedTok[sender] = tok
		}
	}
	issued := map[string]string{}

	ackCap := obj(caps["match_assignment"].Response, "result")
	ref1 := newFakeRef(t, w.v, "ref1")
	ref1.answer = func(msg *protocol.Message) (*protocol.Message, error) {
		ack := deepCopy(t, ackCap)
		env, pl := obj(ack, "envelope"), obj(ack, "payload")
		env["conversation_id"], env["match_id"], pl["match_id"] = msg.Envelope.ConversationID, msg.Envelope.MatchID, msg.Envelope.MatchID
		env["auth_token"] = issued["referee:ref1"]
		b, _ := json.Marshal(ack)
		var out protocol.Message
		err := json.Unmarshal(b, &out)
		return &out, err
	}
	ref2 := newFakeRef(t, w.v, "ref2")
	issued["referee:ref1"] = tokenOf(t, w.ok(regReferee(t, "ref1", ref1.url())))

	replay := func(name string, edit func(req map[string]any)) (map[string]any, []byte) {
		t.Helper()
		req := deepCopy(t, caps[name].Request)
		env := obj(req, "params", "envelope")
		sender, _ := env["sender"].(string)
		if tok, ok := env["auth_token"].(string); ok && tok == capturedTok[sender] && issued[sender] != "" {
			env["auth_token"] = issued[sender]
		}
		if edit != nil {
			edit(req)
		}
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		return w.post(body)
	}
	// same checks our answer against the captured one: JSON-RPC id, the envelope, and
	// the payload fields named (want overrides the captured value where it is ours).
	same := func(name string, got map[string]any, raw []byte, fields []string, want map[string]any) map[string]any {
		t.Helper()
		c := caps[name]
		if got["error"] != nil {
			t.Fatalf("%s refused: %s", name, raw)
		}
		if got["jsonrpc"] != "2.0" || got["id"] != at(c.Response, "id") {
			t.Errorf("%s: jsonrpc %v id %v, want 2.0 and %v", name, got["jsonrpc"], got["id"], at(c.Response, "id"))
		}
		for _, k := range []string{"protocol", "message_type", "sender", "conversation_id", "league_id"} {
			if g, w := at(got, "result", "envelope", k), at(c.Response, "result", "envelope", k); g != w {
				t.Errorf("%s: envelope %s %v, captured %v", name, k, g, w)
			}
		}
		p := obj(got, "result", "payload")
		for _, k := range fields {
			wv, ok := want[k]
			if !ok {
				wv = at(c.Response, "result", "payload", k)
			}
			if g := p[k]; g != wv {
				t.Errorf("%s: payload %s %v, want %v", name, k, g, wv)
			}
		}
		return p
	}
	issuedToken := func(name string, p map[string]any) string {
		t.Helper()
		tok, _ := p["auth_token"].(string)
		if u, err := uuid.Parse(tok); err != nil || u.Version() != 4 {
			t.Errorf("%s: auth_token %q is not a UUID v4", name, tok)
		}
		w.secret(tok)
		return tok
	}

	// REGISTER_REFEREE_REQUEST of ref2, with our fake's endpoint.
	got, raw := replay("register_referee_request", func(r map[string]any) { obj(r, "params", "payload")["endpoint_url"] = ref2.url() })
	issued["referee:ref2"] = issuedToken("register_referee_request", same("register_referee_request", got, raw, []string{"status", "league_id"}, nil))

	// AGENT_READY_REQUEST of ref2: the whole payload as captured.
	got, raw = replay("agent_ready_request", nil)
	same("agent_ready_request", got, raw, []string{"status", "agent_id", "agent_type", "agent_state"}, nil)

	// REGISTER_PLAYER_REQUEST of p03; p01 and p04 join as well.
	got, raw = replay("register_player_request", nil)
	issued["player:p03"] = issuedToken("register_player_request", same("register_player_request", got, raw, []string{"status", "league_id"}, nil))
	for _, id := range []string{"p01", "p04"} {
		issued["player:"+id] = tokenOf(t, w.ok(regPlayer(t, id)))
		w.secret(issued["player:"+id])
	}

	// ADMIN_START_LEAGUE_REQUEST: the capture carries no admin token, which we refuse;
	// with the admin token it starts the league.
	unchanged(t, lm, db, "admin start without a token", func() {
		got, raw := replay("admin_start_league_request", nil)
		if at(got, "error", "data", "reason") != string(protocol.ReasonUnauthorized) {
			t.Errorf("captured admin start answered %s, want UNAUTHORIZED", raw)
		}
	})
	got, raw = replay("admin_start_league_request", func(r map[string]any) { obj(r, "params", "envelope")["auth_token"] = e2eAdminToken })
	same("admin_start_league_request", got, raw, []string{"status", "league_status"}, nil)

	// The only match of round 1 is p03 against p04, assigned to ref1 as in the capture,
	// and the captured MATCH_ASSIGNMENT_ACK is understood (the match goes IN_PROGRESS).
	lm.waitStatus(t, "the captured ack to be accepted", func(s map[string]any) bool { return matchesIn(s, "IN_PROGRESS") == 1 })
	var matchID, roundID string
	if err := db.QueryRow(`SELECT m.match_id, m.round_id FROM matches m JOIN rounds r ON r.round_id = m.round_id WHERE r.status = 'ACTIVE'`).Scan(&matchID, &roundID); err != nil {
		t.Fatal(err)
	}
	a := ref1.assignment(t, matchID)
	var ap struct {
		Players         []string          `json:"players"`
		PlayerEndpoints map[string]string `json:"player_endpoints"`
	}
	_ = a.Decode(&ap)
	capPlayers := at(caps["match_assignment"].Request, "params", "payload", "players")
	if b, _ := json.Marshal(ap.Players); string(b) != mustJSON(capPlayers) || len(ap.PlayerEndpoints) != 2 {
		t.Errorf("assignment players %v endpoints %v, captured %v", ap.Players, ap.PlayerEndpoints, capPlayers)
	}

	// MATCH_RESULT_REPORT: as captured its match is not in our schedule; with our ids it
	// is acknowledged.
	unchanged(t, lm, db, "captured result of another schedule", func() {
		got, raw := replay("match_result_report", nil)
		if at(got, "error", "data", "reason") != string(protocol.ReasonUnknownMatch) {
			t.Errorf("captured result answered %s, want UNKNOWN_MATCH", raw)
		}
	})
	got, raw = replay("match_result_report", func(r map[string]any) {
		env := obj(r, "params", "envelope")
		env["match_id"], env["round_id"] = matchID, roundID
	})
	same("match_result_report", got, raw, []string{"status", "match_id"}, map[string]any{"match_id": matchID})

	// QUERY_STANDINGS of p01: rows with the captured fields, p03 first with its win.
	got, raw = replay("query_standings", nil)
	p := same("query_standings", got, raw, nil, nil)
	rows, _ := p["standings"].([]any)
	capRow := obj(at(caps["query_standings"].Response, "result", "payload", "standings").([]any)[0])
	if len(rows) != 3 {
		t.Fatalf("standings %s, want 3 rows", raw)
	}
	for _, k := range []string{"rank", "player_id", "points", "wins", "draws", "losses", "matches_played"} {
		if _, ok := capRow[k]; !ok {
			t.Fatalf("captured row lacks %s", k)
		}
		for _, r := range rows {
			if _, ok := r.(map[string]any)[k]; !ok {
				t.Errorf("row %v lacks %s", r, k)
			}
		}
	}
	first := rows[0].(map[string]any)
	if first["player_id"] != "p03" || first["points"] != float64(3) || first["wins"] != float64(1) || first["rank"] != float64(1) {
		t.Errorf("first row %v, want p03 with 3 points from 1 win", first)
	}
	if _, ok := p["updated_at"].(string); !ok || p["round_id"] == nil {
		t.Errorf("standings payload %v lacks round_id or updated_at", p)
	}
	lm.stop()

	audit, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w.noSecretIn("interop audit log", audit)
	for _, e := range w.errs {
		w.noSecretIn("interop error answer", e)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
