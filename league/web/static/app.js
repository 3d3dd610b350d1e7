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
  const types = ["agent_registered", "round_started", "match_assigned", "move_made", "match_finished", "match_abandoned", "standings_changed", "league_completed", "storage_degraded", "storage_restored", "reset"];
  for (const t of types) es.addEventListener(t, (m) => onEvent(t, m.data ? JSON.parse(m.data) : {}));
  return es;
}

function debounce(fn, ms) {
  let t = null;
  return () => { clearTimeout(t); t = setTimeout(fn, ms); };
}

// ---------- dashboard ----------
const FORMAT_NAMES = { round_robin: "Round robin", swiss: "Swiss", knockout: "Knockout", gauntlet: "Gauntlet", arena: "Arena" };
const TIE_RULES = { higher_seed: "higher seed", coin_toss: "coin toss", sudden_death: "sudden death" };

// formatLabel describes how the league is played, e.g. "Swiss, 5 rounds"; "" before
// registration closes, when the format is not fixed yet.
function formatLabel(f) {
  if (!f || !f.algorithm) return "";
  const name = FORMAT_NAMES[f.algorithm] || f.algorithm;
  switch (f.algorithm) {
    case "round_robin": return f.cycles > 1 ? name + ", " + f.cycles + " cycles" : name;
    case "swiss": return f.rounds > 0 ? name + ", " + f.rounds + (f.rounds === 1 ? " round" : " rounds") : name;
    case "knockout": return name + ", best of " + (f.best_of || 1) + (f.tie_rule ? " (ties: " + (TIE_RULES[f.tie_rule] || f.tie_rule) + ")" : "");
    case "gauntlet": return name + ": " + (f.candidates || []).join(", ") + (f.games_per_pair ? ", " + f.games_per_pair + " games per pair" : "");
    case "arena": return f.arena ? name + ", at most " + f.arena.max_games + " games" : name;
    default: return name;
  }
}

// rankingLabel says which order ranks the standings.
function rankingLabel(f) {
  const tb = (f && f.tiebreaks) || [];
  return "ranked by points, then " + (tb.length ? tb.join(", ") : "wins, draws") + ", player id";
}

// num shows a number with at most two decimals.
function num(x) { return String(Math.round(Number(x) * 100) / 100); }

function numCell(x, cls) { return el("td", { class: "num" + (cls ? " " + cls : "") }, x); }

function renderStandings(v) {
  const tb = (v.format && v.format.tiebreaks) || [];
  document.getElementById("th-sb").classList.toggle("used", tb.includes("sonneborn_berger"));
  document.getElementById("th-h2h").classList.toggle("used", tb.includes("head_to_head"));
  // Until registration closes the format, and so the order, is not fixed yet.
  const fixed = formatLabel(v.format);
  document.getElementById("ranking").textContent = fixed ? fixed + " · " + rankingLabel(v.format) : "";
  const sb = document.querySelector("#standings tbody");
  sb.replaceChildren(...(v.standings || []).map((r) => {
    const player = el("td", { class: "player" }, r.player_id);
    if (r.suspended) player.append(" ", el("span", { class: "badge SUSPENDED" }, "suspended"));
    const pts = numCell(r.points, "pts");
    if (r.bye_points) pts.title = r.bye_points + " from byes";
    return el("tr", {}, numCell(r.rank), player, pts, numCell(r.wins), numCell(r.draws), numCell(r.losses),
      numCell(r.matches_played), numCell(num(r.sonneborn_berger), "tb" + (tb.includes("sonneborn_berger") ? " used" : "")),
      numCell(r.head_to_head, "tb" + (tb.includes("head_to_head") ? " used" : "")));
  }));
}

// renderRatings draws one row per player, each interval as a bar on one scale shared by
// all rows, so overlaps show at a glance.
function renderRatings(v) {
  const rows = v.ratings || [];
  // A large league's intervals are recomputed in the background: say when they lag.
  document.getElementById("intervals-age").textContent = v.intervals_games < v.rated_games
    ? " · intervals as of " + v.intervals_games + " of " + v.rated_games + " games" : "";
  const rated = rows.filter((r) => r.games > 0);
  let lo = Math.min(1500, ...rated.map((r) => r.ci_low));
  let hi = Math.max(1500, ...rated.map((r) => r.ci_high));
  const pad = Math.max((hi - lo) * 0.04, 10);
  lo -= pad; hi += pad;
  const pct = (x) => ((x - lo) / (hi - lo) * 100).toFixed(2) + "%";
  const scale = document.getElementById("scale");
  if (rated.length) {
    scale.replaceChildren(el("div", { class: "axis" },
      el("span", { class: "lo" }, Math.round(lo)), el("span", { class: "mid" }, "1500"), el("span", { class: "hi" }, Math.round(hi))));
    scale.querySelector(".mid").style.left = pct(1500);
  } else {
    scale.replaceChildren(el("span", { class: "muted small" }, "no games yet"));
  }
  document.querySelector("#ratings tbody").replaceChildren(...rows.map((r, i) => {
    const track = el("div", { class: "track" });
    const mean = el("div", { class: "mean" });
    mean.style.left = pct(1500);
    track.append(mean);
    if (r.games > 0) {
      const ci = el("div", { class: "ci" });
      ci.style.left = pct(r.ci_low);
      ci.style.width = "calc(" + pct(r.ci_high) + " - " + pct(r.ci_low) + ")";
      const pt = el("div", { class: "pt" });
      pt.style.left = pct(r.rating);
      track.append(ci, pt);
      track.title = r.player_id + ": " + Math.round(r.rating) + " (" + Math.round(r.ci_low) + "–" + Math.round(r.ci_high) + ")";
    }
    const has = r.games > 0;
    // The agent card's model beside the player, its hash on hover; a provisional rating is marked.
    const card = (v.cards || {})[r.player_id];
    const who = el("td", { class: "player" }, r.player_id);
    if (card) {
      who.append(el("span", { class: "card muted small", title: "agent card " + card.hash + (card.provider ? " · " + card.provider : "") + (card.version ? " · v" + card.version : "") }, " " + (card.model || card.hash)));
    }
    return el("tr", {}, numCell(((v.ratings_page && v.ratings_page.offset) || 0) + i + 1), who,
      numCell(has ? Math.round(r.rating) + (r.provisional ? "?" : "") : "–", "rating" + (r.provisional ? " provisional" : "")),
      numCell(has ? Math.round(r.ci_low) + "–" + Math.round(r.ci_high) : "–", "interval"),
      numCell(has ? (r.rank_low === r.rank_high ? r.rank_low : r.rank_low + "–" + r.rank_high) : "–", "ranks"),
      numCell(r.games), el("td", { class: "barcol" }, track));
  }));
}

// renderLLM draws the leaderboard of the language models: strength (the rating with and
// without the games lost by forfeit) apart from legality, and the cost.
function renderLLM(v) {
  const rows = v.llm || [];
  document.getElementById("llm-box").hidden = rows.length === 0;
  const pct = (x) => (100 * x).toFixed(0) + "%";
  const usd = (x) => x > 0 ? "$" + (x < 0.01 ? x.toFixed(4) : x.toFixed(2)) : "–";
  document.querySelector("#llm tbody").replaceChildren(...rows.map((r, i) => el("tr", {},
    numCell(i + 1), el("td", { class: "player" }, r.player_id + (r.model ? " · " + r.model : "")),
    numCell(Math.round(r.rating) + (r.provisional ? "?" : "")), numCell(Math.round(r.rating_without_forfeits)),
    numCell(pct(r.first_try)), numCell(r.unreadable_per_100.toFixed(1)), numCell(r.illegal_per_100.toFixed(1)),
    numCell(r.given_up), numCell(r.forfeits), numCell(Math.round(r.tokens_per_move)), numCell(r.latency_p50_ms),
    numCell(usd(r.cost_per_game_usd)), numCell(usd(r.cost_per_rating_point_usd)))));
}

// renderCrosstable draws the matrix of scores, players in rank order.
function renderCrosstable(v) {
  const ct = v.crosstable || {};
  const ps = ct.players || [];
  const cells = ct.cells || [];
  const points = Object.fromEntries((v.standings || []).map((r) => [r.player_id, r.points]));
  // On a page the players are numbered from the page's first place.
  const first = ((v.page && v.page.offset) || 0) + 1;
  const head = el("tr", {}, el("th", { class: "num" }, "#"), el("th", {}, "Player"),
    ...ps.map((p, j) => el("th", { class: "num xc", title: p }, first + j)), el("th", { class: "num" }, "Pts"));
  document.querySelector("#crosstable thead").replaceChildren(head);
  document.querySelector("#crosstable tbody").replaceChildren(...ps.map((p, i) => el("tr", {},
    numCell(first + i), el("td", { class: "player" }, p),
    ...ps.map((q, j) => {
      if (i === j) return el("td", { class: "xc diag", title: p }, "");
      const s = ((cells[i] || [])[j]) || [];
      const td = el("td", { class: "xc", title: p + " vs " + q }, s.join(" "));
      if (s.length) {
        const score = s.reduce((a, x) => a + (x === "1" ? 1 : x === "½" ? 0.5 : 0), 0) / s.length;
        td.classList.add(score > 0.5 ? "win" : score < 0.5 ? "loss" : "draw");
      }
      return td;
    }),
    numCell(p in points ? points[p] : ""))));
}

const DECIDED = { wins: "on wins", higher_seed: "tie: higher seed", coin_toss: "tie: coin toss", sudden_death: "sudden death", bye: "bye" };

// renderBracket draws a knockout's stages as columns; the section is hidden otherwise.
function renderBracket(v) {
  const stages = v.bracket || [];
  const box = document.getElementById("bracket-box");
  box.hidden = stages.length === 0;
  const fin = stages.length ? stages[stages.length - 1] : null;
  const champ = fin && fin.pairings.length === 1 ? fin.pairings[0].winner : "";
  document.getElementById("champion").replaceChildren(...(champ ? ["Winner: ", el("strong", {}, champ)] : []));
  document.getElementById("bracket").replaceChildren(...stages.map((st) => {
    const rounds = (st.rounds || []).length ? "round" + (st.rounds.length > 1 ? "s " : " ") + st.rounds.join(", ") : "";
    return el("div", { class: "stage" },
      el("div", { class: "stage-head" }, el("span", { class: "stage-name" }, st.name), el("span", { class: "muted small" }, rounds)),
      el("div", { class: "pairings" }, ...st.pairings.map((pr) => {
        const side = (k) => {
          const id = pr.players[k];
          const name = id ? el("span", { class: "who" }, id) : el("span", { class: "who muted" }, pr.decided === "bye" ? "bye" : "—");
          const cls = "side" + (id && pr.winner === id ? " winner" : "") + (id && pr.winner && pr.winner !== id ? " out" : "");
          return el("div", { class: cls }, el("span", { class: "seed" }, pr.seeds[k] || ""), name,
            el("span", { class: "wins" }, id && pr.decided !== "bye" && pr.legs > 0 ? pr.wins[k] : ""));
        };
        const note = [];
        if (pr.decided) note.push(DECIDED[pr.decided] || pr.decided);
        else if (pr.legs > 0) note.push("playing");
        if (pr.legs > 0) note.push(pr.legs + (pr.legs === 1 ? " game" : " games"));
        if (pr.draws > 0) note.push(pr.draws + (pr.draws === 1 ? " draw" : " draws"));
        return el("div", { class: "pairing" + (pr.winner ? " done" : "") }, side(0), side(1), el("div", { class: "how muted" }, note.join(" · ")));
      })));
  }));
}

// The dashboard shows a page of the standings, the crosstable among its players and a page
// of the ratings: PAGE_SIZE rows (?page_size= in the address changes it), so a league of
// thousands loads as fast as one of ten.
const PAGE_SIZE = Math.min(Math.max(parseInt(new URLSearchParams(location.search).get("page_size"), 10) || 100, 1), 1000);

// renderPager shows which players the page holds, when they are not all there.
function renderPager(v) {
  const pg = v.page || { offset: 0, limit: 0, total: (v.standings || []).length };
  const pager = document.getElementById("pager");
  pager.hidden = pg.total <= PAGE_SIZE;
  document.getElementById("page-of").textContent = "players " + (pg.total ? pg.offset + 1 : 0) + "–" + (pg.offset + (v.standings || []).length) + " of " + pg.total;
  document.getElementById("page-prev").disabled = pg.offset === 0;
  document.getElementById("page-next").disabled = pg.offset + PAGE_SIZE >= pg.total;
}

function dashboard() {
  // page is what the next load of the view asks for: an offset, or the page of a player.
  let page = { offset: 0, player: "" };
  const leagueURL = () => "api/league?limit=" + PAGE_SIZE + (page.player ? "&player=" + encodeURIComponent(page.player) : "&offset=" + page.offset);
  const render = (v) => {
    if (v.page) page = { offset: v.page.offset, player: "" };
    renderPager(v);
    document.getElementById("title").textContent = v.league_id + " · " + v.game_type;
    document.getElementById("format").textContent = formatLabel(v.format);
    const kv = document.getElementById("league");
    kv.replaceChildren();
    const done = (v.matches_by_status || {}).COMPLETED || 0;
    const gone = (v.matches_by_status || {}).ABANDONED || 0;
    const matches = done + " / " + v.matches_total + (gone ? " (" + gone + " abandoned)" : "");
    const rows = [["State", v.state], ["Format", formatLabel(v.format) || "set when registration closes"], ["Round", v.current_round + " / " + v.total_rounds], ["Matches", matches], ["Players", v.players], ["Referees", v.referees]];
    if (v.sprt) {
      // A gauntlet's SPRT: the LLR between its bounds, the pairs and the decision.
      const t = v.format.sprt, st = v.sprt;
      rows.push(["SPRT", "[" + t.elo0 + ", " + t.elo1 + "] LLR " + st.llr.toFixed(2) + " (" + st.lower.toFixed(2) + ", " + st.upper.toFixed(2) + ")"]);
      rows.push(["Pairs", st.pairs + " [" + st.pentanomial.join(" ") + "] · Elo " + (st.elo >= 0 ? "+" : "") + st.elo.toFixed(1)]);
      rows.push(["Decision", st.decision === "H1" ? "H1: " + v.format.candidates[0] + " is stronger" : st.decision === "H0" ? "H0: not " + t.elo1 + " Elo stronger" : "none yet"]);
    }
    if (v.arena) {
      // An arena: its games against the budget, and why it stopped.
      const a = v.arena;
      rows.push(["Games", a.games + " of " + a.budget + (a.stopped ? "" : " · " + a.unsettled + " unsettled")]);
      rows.push(["Stopped", a.stopped ? a.reason : "not yet"]);
    }
    for (const [k, val] of rows) {
      kv.append(el("dt", {}, k), el("dd", {}, val));
    }
    renderStandings(v);
    renderBracket(v);
    renderRatings(v);
    renderLLM(v);
    renderCrosstable(v);
    const mb = document.querySelector("#matches tbody");
    const round = v.round;
    document.getElementById("round-title").textContent = round ? "Round " + round.number : "No round yet";
    document.getElementById("bye").textContent = round && round.bye ? "Bye: " + round.bye : "";
    mb.replaceChildren(...(round ? round.matches : []).map((m) => el("tr", {},
      el("td", {}, el("a", { href: "match?id=" + encodeURIComponent(m.match_id) }, m.match_id)),
      el("td", {}, m.players[0] + " vs " + m.players[1]),
      el("td", {}, el("span", { class: "badge " + m.status }, m.status)),
      el("td", {}, m.referee_id || ""))));
    const sf = document.getElementById("storage");
    sf.hidden = !v.storage_failure;
    sf.textContent = v.storage_failure ? "Storage failing since " + v.storage_since + " (" + v.storage_failure + "): the league is paused and nothing is lost; agents retry, and play resumes once writes succeed again." : "";
    // Abandoned matches stay listed for an operator, whatever round is showing.
    const ab = v.abandoned || [];
    document.getElementById("abandoned").hidden = ab.length === 0;
    document.querySelector("#abandoned tbody").replaceChildren(...ab.map((m) => el("tr", {},
      el("td", {}, el("a", { href: "match?id=" + encodeURIComponent(m.match_id) }, m.match_id)),
      el("td", {}, m.players[0] + " vs " + m.players[1]),
      el("td", {}, el("span", { class: "badge ABANDONED" }, "ABANDONED")),
      el("td", {}, m.referee_id || ""))));
  };
  const refresh = debounce(() => getJSON(leagueURL()).then((v) => { last = v; render(v); }).catch(() => {}), 100);
  document.getElementById("page-prev").onclick = () => { page = { offset: Math.max(page.offset - PAGE_SIZE, 0), player: "" }; refresh(); };
  document.getElementById("page-next").onclick = () => { page = { offset: page.offset + PAGE_SIZE, player: "" }; refresh(); };
  document.getElementById("page-find").onsubmit = (ev) => {
    ev.preventDefault();
    const who = document.getElementById("page-player").value.trim();
    if (!who) return;
    getJSON("api/league?limit=" + PAGE_SIZE + "&player=" + encodeURIComponent(who))
      .then((v) => { last = v; render(v); document.getElementById("page-player").value = ""; })
      .catch(() => { document.getElementById("page-of").textContent = "no player " + who; });
  };
  // The live board follows one match: the first to make a move, until it ends; then the
  // next match that moves takes its place. It shows the view each move_made event carries,
  // and under a clock each player's clock after its last move.
  let last = null, live = null;
  const drawLive = () => {
    const box = document.getElementById("live-box");
    box.hidden = !live;
    if (!live) return;
    const m = ((last && last.round && last.round.matches) || []).find((x) => x.match_id === live.id);
    const players = m ? m.players : ["", ""];
    const a = document.getElementById("live-match");
    a.href = "match?id=" + encodeURIComponent(live.id);
    a.textContent = live.id + (m ? " · " + players[0] + " vs " + players[1] : "");
    document.getElementById("live-board").replaceChildren(drawView(last ? last.game_type : "", live.view, players));
    const clocks = players.filter((p) => live.clocks[p] != null).map((p) => p + " " + clockText(live.clocks[p]));
    document.getElementById("live-status").textContent = (live.done ? "finished after step " : "step ") + live.step + (clocks.length ? " · " + clocks.join(" · ") : "");
  };
  const onEvent = (type, e) => {
    if (type === "move_made" && e.data && e.data.view && (!live || live.done || live.id === e.match_id)) {
      const clocks = live && live.id === e.match_id && !live.done ? live.clocks : {};
      if (e.data.clock_ms != null) clocks[e.data.player] = e.data.clock_ms;
      live = { id: e.match_id, view: e.data.view, step: e.data.step, done: false, clocks };
      drawLive();
    } else if ((type === "match_finished" || type === "match_abandoned") && live && live.id === e.match_id) {
      live.done = true;
      drawLive();
    }
    refresh();
  };
  getJSON(leagueURL()).then((v) => {
    last = v;
    render(v);
    stream("events?last_event_id=" + v.last_event_id, onEvent);
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
// clockText writes a clock in ms as m:ss.t, or h:mm:ss.t from an hour.
function clockText(ms) {
  const t = Math.max(0, Math.floor(ms / 100)), s = Math.floor(t / 10) % 60, m = Math.floor(t / 600) % 60, h = Math.floor(t / 36000);
  const two = (n) => String(n).padStart(2, "0");
  return (h > 0 ? h + ":" + two(m) : String(m)) + ":" + two(s) + "." + (t % 10);
}

// clocksAt is each player's clock after step pos: the clock_ms of its last move by then,
// its base time before its first; null when the match has no clock.
function clocksAt(m, pos) {
  const clocked = m.clock || m.steps.some((s) => s.moves.some((mv) => mv.clock_ms != null));
  if (!clocked) return null;
  const left = {};
  m.players.forEach((p) => { left[p] = m.clock ? m.clock.base_ms : null; });
  for (const s of m.steps.slice(0, pos)) for (const mv of s.moves) if (mv.clock_ms != null) left[mv.player] = mv.clock_ms;
  return left;
}

function matchPage() {
  const id = new URLSearchParams(location.search).get("id");
  let m = null, pos = 0, follow = true, timer = null;
  const show = () => {
    const steps = m.steps;
    pos = Math.max(0, Math.min(pos, steps.length));
    const view = pos === 0 ? m.initial : steps[pos - 1].view;
    document.getElementById("board").replaceChildren(drawView(m.game_type, view, m.players, m.rules_known));
    // Both clocks after the step, when the match has a clock.
    const left = clocksAt(m, pos);
    document.getElementById("clocks").replaceChildren(...(left ? m.players.map((p) => el("span", { class: "clock" }, p + " ", el("b", {}, left[p] == null ? "–" : clockText(left[p])))) : []));
    document.getElementById("pos").textContent = "step " + pos + " / " + steps.length;
    document.getElementById("first").disabled = document.getElementById("prev").disabled = pos === 0;
    document.getElementById("last").disabled = document.getElementById("next").disabled = pos === steps.length;
    const tb = document.querySelector("#moves tbody");
    tb.replaceChildren(...steps.map((s, i) => el("tr", { class: i + 1 === pos ? "cur" : "" },
      el("td", { class: "num" }, s.step),
      el("td", {}, s.moves.map((mv) => mv.player + ": " + JSON.stringify(mv.move) + (mv.outcome !== "SUCCESS" ? " (" + mv.outcome + ")" : "")).join("  ·  ")))));
    const res = document.getElementById("result");
    res.textContent = m.outcome ? "Result: " + m.players.map((p) => p + " " + m.outcome[p] + " (" + (m.points ? m.points[p] : 0) + ")").join(", ") + (m.termination ? " · " + m.termination : "") : "Status: " + m.status;
    // A result stored before malformed game_metadata was refused: what the page could not use.
    document.getElementById("unreadable").textContent = m.unreadable ? "The stored result could not be read in full: " + m.unreadable.join("; ") : "";
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
  const load = () => getJSON("api/matches/" + encodeURIComponent(id)).then((v) => {
    m = v;
    document.getElementById("title").textContent = m.match_id + " · " + m.game_type + " · " + m.round_id + (m.clock ? " · " + m.clock.time_control : "") + (m.opening ? " · from " + m.opening : "");
    document.getElementById("players").textContent = m.players[0] + " vs " + m.players[1];
    if (follow) pos = m.steps.length;
    show();
    return v;
  });
  load().then((v) => {
    stream("matches/" + encodeURIComponent(id) + "/events?last_event_id=" + v.last_event_id, (type, e) => {
      if (type === "move_made" && e.data) {
        const d = e.data;
        const last = m.steps[m.steps.length - 1];
        if (last && last.step === d.step) {
          last.moves.push({ player: d.player, move: d.move, outcome: d.outcome, clock_ms: d.clock_ms });
          last.view = d.view;
        } else {
          m.steps.push({ step: d.step, moves: [{ player: d.player, move: d.move, outcome: d.outcome, clock_ms: d.clock_ms }], view: d.view });
        }
        if (follow) pos = m.steps.length;
        show();
      } else {
        load();
      }
    });
  }).catch((err) => { document.getElementById("board").textContent = String(err); });
}
