// Spectating: the live games list of the lobby, and the screen of a watched race (every
// racer's board, score and status, whether it is rated, then the result, its replay and a
// rematch to watch).

import { renderBoard } from "./cards.js";
import { send } from "./link.js";
import { showResult } from "./results.js";
import { followGames, setMode } from "./screens.js";
import { $, S, STATUS_TEXT, VARIANT_TITLE, clock, plural, serverNow } from "./state.js";
import { renderGame } from "./table.js";

// ---------------------------------------------------------------- live games

// `games`: the whole live games list.
export function onGames(msg) {
  S.games = new Map(msg.games.map((g) => [g.game, g]));
  renderGames();
  offerWatchRematch();
}

// `games_update`: games added to and removed from the live games list.
export function onGamesUpdate(msg) {
  for (const g of msg.added || []) S.games.set(g.game, g);
  for (const id of msg.removed || []) S.games.delete(id);
  renderGames();
  offerWatchRematch();
}

function renderGames() {
  const list = $("games");
  list.replaceChildren();
  if (!S.games.size) {
    const li = document.createElement("li");
    li.className = "muted";
    li.textContent = "No game is being played right now.";
    list.append(li);
    return;
  }
  const sorted = [...S.games.values()].sort((a, b) => b.start - a.start);
  for (const g of sorted) {
    const li = document.createElement("li");
    li.dataset.game = g.game;
    const text = document.createElement("span");
    text.className = "game-text";
    const names = g.players.map((p) => p.name).join(" vs ");
    text.textContent = `${VARIANT_TITLE[g.variant]}: ${names}`;
    const meta = document.createElement("span");
    meta.className = "muted small";
    meta.textContent = ` · ${g.spectators} watching${g.room ? ` · room ${g.room}` : ""}`;
    text.append(meta);
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = "small-btn";
    btn.textContent = "Watch";
    const mine = g.players.some((p) => p.player === S.me.player);
    btn.disabled = mine;
    if (mine) btn.title = "You are racing in this game";
    btn.addEventListener("click", () => send({ type: "watch", game: g.game }));
    li.append(text, btn);
    list.append(li);
  }
}

// ---------------------------------------------------------------- spectating

// `spectate`: the race being watched, afresh: every racer's board and summary.
export function onSpectate(msg) {
  const racers = new Map(msg.racers.map((r) => [r.player, r]));
  S.watch = { id: msg.game, v: msg.v, variant: msg.variant, options: msg.options || {}, start: msg.start,
    racers, spectators: msg.spectators, room: msg.room || null, ended: null, endedAt: null };
  S.offset = msg.now - Date.now();
  S.resultOpen = false;
  $("result").hidden = true;
  setMode("watch");
  renderWatch();
}

// `spectate_event`: a racer's board and summary changed.
export function onSpectateEvent(msg) {
  const w = S.watch;
  if (!w || msg.game !== w.id) return;
  if (msg.v <= w.v) return;
  w.v = msg.v;
  const racer = w.racers.get(msg.player);
  if (racer) Object.assign(racer, { view: msg.view, summary: msg.summary, status: msg.status });
  renderWatch();
}

// `spectate_batch`: the events missed while the connection was down.
export function onSpectateBatch(msg) {
  // The events missed while the connection was down, oldest first.
  if (!S.watch || msg.game !== S.watch.id) return;
  S.watch.spectators = msg.spectators;
  for (const event of msg.events) {
    if (event.type === "race_ended") onWatchEnded(event);
    else onSpectateEvent(event);
  }
  renderWatch();
}

// `spectators`: how many watch the watched race, or the race being played.
export function onSpectators(msg) {
  if (S.watch && msg.game === S.watch.id) { S.watch.spectators = msg.count; renderWatch(); }
  if (S.game && msg.game === S.game.id) { S.game.spectators = msg.count; renderGame(); }
}

// The watched race is over: its result, and the live games list followed for a rematch.
export function onWatchEnded(msg) {
  const w = S.watch;
  w.ended = msg;
  w.endedAt = serverNow();
  renderWatch();
  showResult(msg, [...w.racers.values()].map((r) => ({ player: r.player, name: r.name })));
  followGames();                                   // to see the racers race again
}

// A spectator of a race whose racers race again is offered to watch the rematch.
function offerWatchRematch() {
  const w = S.watch;
  if (!w || !w.ended || !S.resultOpen || S.resultGame !== w.id) return;
  const next = [...S.games.values()].find((g) => g.rematch_of === w.id);
  if (!next || S.watchRematch === next.game) return;
  S.watchRematch = next.game;
  $("rematch-offer").textContent = `${next.players.map((p) => p.name).join(" and ")} are racing again.`;
  $("rematch-offer").hidden = false;
  $("btn-rematch").textContent = "Watch the rematch";
  $("btn-rematch").hidden = false;
  $("btn-rematch").disabled = false;
}

function renderWatch() {
  const w = S.watch;
  if (!w) return;
  $("watch-title").textContent = `${VARIANT_TITLE[w.variant]}${w.room ? ` · room ${w.room}` : ""}`;
  $("watch-count").textContent = w.spectators;
  $("watch-rated").hidden = !w.options.rated;
  const wrap = $("watch-boards");
  wrap.replaceChildren();
  wrap.dataset.count = String(w.racers.size);
  for (const r of w.racers.values()) {
    const box = document.createElement("section");
    box.className = "watch-board";
    box.dataset.player = r.player;
    const head = document.createElement("h3");
    head.textContent = r.name;
    const s = r.summary;
    const detail = document.createElement("span");
    detail.className = "racer-detail";
    detail.textContent = ` ${s.score} pts · ${s.runs}/4 runs · ${plural(s.moves, "move")}`;
    const st = document.createElement("span");
    st.className = `tag status-${r.status}`;
    st.textContent = STATUS_TEXT[r.status] || r.status;
    head.append(" ", st, detail);
    const board = document.createElement("div");
    board.className = "board small";
    renderBoard(board, r.view, { interactive: false });
    box.append(head, board);
    wrap.append(box);
  }
}

// The watched race's clock.
export function tickWatchClock() {
  if (S.watch && S.mode === "watch") {
    const w = S.watch;
    const end = w.ended ? w.endedAt : serverNow();
    $("watch-clock").textContent = clock((end - w.start) / 1000 - (w.options.spectator_delay || 0));
  }
}

// Bind Stop watching.
export function bindSpectate() {
  $("btn-unwatch").addEventListener("click", () => {
    if (S.watch && !S.watch.ended) send({ type: "unwatch", game: S.watch.id });
    else { S.watch = null; setMode("lobby"); }
  });
}
