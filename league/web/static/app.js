"use strict";
// Agent League live view: read-only; every change arrives over Server-Sent Events.

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}

async function getJSON(url) {
  const res = await fetch(url, { cache: "no-store" });
  if (!res.ok) throw new Error(url + ": " + res.status);
  return res.json();
}

// stream opens an EventSource and calls onEvent for every event; the browser
// reconnects by itself and sends Last-Event-ID, so nothing is lost or repeated.
function stream(url, onEvent) {
  const live = document.getElementById("live");
  const es = new EventSource(url);
  es.onopen = () => { live.textContent = "live"; live.classList.add("on"); };
  es.onerror = () => { live.textContent = "reconnecting…"; live.classList.remove("on"); };
  const types = ["agent_registered", "round_started", "match_assigned", "move_made", "match_finished", "match_abandoned", "standings_changed", "league_completed", "reset"];
  for (const t of types) es.addEventListener(t, (m) => onEvent(t, m.data ? JSON.parse(m.data) : {}));
  return es;
}

function debounce(fn, ms) {
  let t = null;
  return () => { clearTimeout(t); t = setTimeout(fn, ms); };
}

// ---------- dashboard ----------
function dashboard() {
  const render = (v) => {
    document.getElementById("title").textContent = v.league_id + " · " + v.game_type;
    const kv = document.getElementById("league");
    kv.replaceChildren();
    const done = (v.matches_by_status || {}).COMPLETED || 0;
    const gone = (v.matches_by_status || {}).ABANDONED || 0;
    const matches = done + " / " + v.matches_total + (gone ? " (" + gone + " abandoned)" : "");
    for (const [k, val] of [["State", v.state], ["Round", v.current_round + " / " + v.total_rounds], ["Matches", matches], ["Players", v.players], ["Referees", v.referees]]) {
      kv.append(el("dt", {}, k), el("dd", {}, val));
    }
    const sb = document.querySelector("#standings tbody");
    sb.replaceChildren(...(v.standings || []).map((r) => el("tr", {},
      el("td", { class: "num" }, r.rank), el("td", {}, r.player_id), el("td", { class: "num" }, r.points),
      el("td", { class: "num" }, r.wins), el("td", { class: "num" }, r.draws), el("td", { class: "num" }, r.losses),
      el("td", { class: "num" }, r.matches_played))));
    const mb = document.querySelector("#matches tbody");
    const round = v.round;
    document.getElementById("round-title").textContent = round ? "Round " + round.number : "No round yet";
    document.getElementById("bye").textContent = round && round.bye ? "Bye: " + round.bye : "";
    mb.replaceChildren(...(round ? round.matches : []).map((m) => el("tr", {},
      el("td", {}, el("a", { href: "/match?id=" + encodeURIComponent(m.match_id) }, m.match_id)),
      el("td", {}, m.players[0] + " vs " + m.players[1]),
      el("td", {}, el("span", { class: "badge " + m.status }, m.status)),
      el("td", {}, m.referee_id || ""))));
    // Abandoned matches stay listed for an operator, whatever round is showing.
    const ab = v.abandoned || [];
    document.getElementById("abandoned").hidden = ab.length === 0;
    document.querySelector("#abandoned tbody").replaceChildren(...ab.map((m) => el("tr", {},
      el("td", {}, el("a", { href: "/match?id=" + encodeURIComponent(m.match_id) }, m.match_id)),
      el("td", {}, m.players[0] + " vs " + m.players[1]),
      el("td", {}, el("span", { class: "badge ABANDONED" }, "ABANDONED")),
      el("td", {}, m.referee_id || ""))));
  };
  const refresh = debounce(() => getJSON("/api/league").then(render).catch(() => {}), 100);
  getJSON("/api/league").then((v) => {
    render(v);
    stream("/events?last_event_id=" + v.last_event_id, refresh);
  });
}

// ---------- boards ----------
const PIECES = { K: "♔", Q: "♕", R: "♖", B: "♗", N: "♘", P: "♙", k: "♚", q: "♛", r: "♜", b: "♝", n: "♞", p: "♟" };

function drawGrid(board, cls) {
  const cols = board[0].length;
  const g = el("div", { class: "board " + cls });
  g.style.gridTemplateColumns = "repeat(" + cols + ", auto)";
  for (const row of board) for (const c of row) g.append(el("div", { class: "cell " + c }, cls === "c4" ? "" : c));
  return g;
}

function drawChess(fen) {
  const g = el("div", { class: "chess" });
  const rows = fen.split(" ")[0].split("/");
  rows.forEach((row, r) => {
    let c = 0;
    for (const ch of row) {
      const n = parseInt(ch, 10);
      const count = isNaN(n) ? 1 : n;
      for (let i = 0; i < count; i++, c++) {
        g.append(el("div", { class: (r + c) % 2 ? "d" : "l" }, isNaN(n) ? PIECES[ch] : ""));
      }
    }
  });
  return g;
}

function drawRounds(view, players, gameType) {
  const t = el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "Round"), el("th", {}, players[0]), el("th", {}, players[1]),
    ...(gameType === "even_odd" ? [el("th", { class: "num" }, "Number")] : []), el("th", {}, "Winner"))));
  const tb = el("tbody");
  (view.history || []).forEach((h, i) => {
    const w = h.winner === null || h.winner === undefined ? "draw" : players[h.winner];
    tb.append(el("tr", {}, el("td", {}, i + 1), el("td", {}, h.choices[0]), el("td", {}, h.choices[1]),
      ...(gameType === "even_odd" ? [el("td", { class: "num" }, h.number)] : []), el("td", {}, w)));
  });
  t.append(tb);
  const score = view.score ? el("p", {}, "Score " + view.score[0] + " – " + view.score[1]) : "";
  return el("div", {}, t, score);
}

function drawView(gameType, view, players, rulesKnown) {
  if (rulesKnown === false) {
    return el("p", { class: "muted" }, "No board: the League Manager does not have the rules of " + gameType + ". The moves are listed as the referee recorded them.");
  }
  if (!view) return el("p", { class: "muted" }, "Waiting for the first move…");
  switch (gameType) {
    case "tic_tac_toe": return drawGrid(view.board, "ttt");
    case "connect_four": return drawGrid(view.board, "c4");
    case "chess": return drawChess(view.fen);
    default: return drawRounds(view, players, gameType);
  }
}

// ---------- match page ----------
function matchPage() {
  const id = new URLSearchParams(location.search).get("id");
  let m = null, pos = 0, follow = true, timer = null;
  const show = () => {
    const steps = m.steps;
    pos = Math.max(0, Math.min(pos, steps.length));
    const view = pos === 0 ? m.initial : steps[pos - 1].view;
    document.getElementById("board").replaceChildren(drawView(m.game_type, view, m.players, m.rules_known));
    document.getElementById("pos").textContent = "step " + pos + " / " + steps.length;
    document.getElementById("first").disabled = document.getElementById("prev").disabled = pos === 0;
    document.getElementById("last").disabled = document.getElementById("next").disabled = pos === steps.length;
    const tb = document.querySelector("#moves tbody");
    tb.replaceChildren(...steps.map((s, i) => el("tr", { class: i + 1 === pos ? "cur" : "" },
      el("td", { class: "num" }, s.step),
      el("td", {}, s.moves.map((mv) => mv.player + ": " + JSON.stringify(mv.move) + (mv.outcome !== "SUCCESS" ? " (" + mv.outcome + ")" : "")).join("  ·  ")))));
    const res = document.getElementById("result");
    res.textContent = m.outcome ? "Result: " + m.players.map((p) => p + " " + m.outcome[p] + " (" + (m.points ? m.points[p] : 0) + ")").join(", ") + (m.termination ? " · " + m.termination : "") : "Status: " + m.status;
  };
  const go = (p) => { pos = p; follow = pos === m.steps.length; show(); };
  document.getElementById("first").onclick = () => go(0);
  document.getElementById("prev").onclick = () => go(pos - 1);
  document.getElementById("next").onclick = () => go(pos + 1);
  document.getElementById("last").onclick = () => go(m.steps.length);
  document.getElementById("play").onclick = () => {
    if (timer) { clearInterval(timer); timer = null; return; }
    if (pos >= m.steps.length) pos = 0;
    timer = setInterval(() => { if (pos >= m.steps.length) { clearInterval(timer); timer = null; } else go(pos + 1); }, 600);
  };
  const load = () => getJSON("/api/matches/" + encodeURIComponent(id)).then((v) => {
    m = v;
    document.getElementById("title").textContent = m.match_id + " · " + m.game_type + " · " + m.round_id;
    document.getElementById("players").textContent = m.players[0] + " vs " + m.players[1];
    if (follow) pos = m.steps.length;
    show();
    return v;
  });
  load().then((v) => {
    stream("/matches/" + encodeURIComponent(id) + "/events?last_event_id=" + v.last_event_id, (type, e) => {
      if (type === "move_made" && e.data) {
        const d = e.data;
        const last = m.steps[m.steps.length - 1];
        if (last && last.step === d.step) {
          last.moves.push({ player: d.player, move: d.move, outcome: d.outcome });
          last.view = d.view;
        } else {
          m.steps.push({ step: d.step, moves: [{ player: d.player, move: d.move, outcome: d.outcome }], view: d.view });
        }
        if (follow) pos = m.steps.length;
        show();
      } else {
        load();
      }
    });
  }).catch((err) => { document.getElementById("board").textContent = String(err); });
}
