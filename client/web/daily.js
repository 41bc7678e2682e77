// The lobby's boxes about the chosen variant: the daily deal (with its countdown), today's
// leaderboard, the player's stats and saved solo games.

import { send } from "./link.js";
import { $, S, VARIANT_TITLE, appendCells, clock, plural, serverNow } from "./state.js";

// ---------------------------------------------------------------- daily, leaderboard, stats, saved games

// Ask for everything the lobby shows about the chosen variant (subscribe: live leaderboard).
export function refreshLobby(subscribe) {
  const variant = $("variant").value;
  send({ type: "daily_info", variant });
  send({ type: "leaderboard", variant, limit: 10, subscribe: false });
  send({ type: "stats" });
  send({ type: "saved_games" });
}

function dailyText(msg) {
  const left = Math.max(0, Math.ceil((msg.ends - serverNow()) / 60000));
  const until = left >= 60 ? `${Math.floor(left / 60)} h ${left % 60} min` : `${left} min`;
  if (msg.played && !msg.finished) return `${msg.date}: your ranked attempt is under way.`;
  if (msg.finished) return `${msg.date}: you have played your ranked attempt. You may practise the deal again. The next deal comes in ${until}.`;
  return `${msg.date}: ${VARIANT_TITLE[msg.variant]}, one ranked attempt each, ${until} left.`;
}

// The lobby's daily box counts down, and asks for the new day's deal when the day ends.
export function tickDaily() {
  const daily = S.daily;
  if (S.mode !== "lobby" || !daily) return;
  const text = dailyText(daily);
  if ($("daily-info").textContent !== text) $("daily-info").textContent = text;
  if (serverNow() >= daily.ends && S.dailyAsked !== daily.date) {
    S.dailyAsked = daily.date;
    refreshLobby(false);
  }
}

// `daily`: today's deal for the chosen variant, whether it was played, and yesterday's.
export function onDaily(msg) {
  if (msg.variant !== $("variant").value) return;
  S.daily = msg;
  $("daily-info").textContent = dailyText(msg);
  $("btn-daily").disabled = msg.played;
  $("btn-practice").hidden = !msg.finished;
  const prev = msg.previous;
  $("daily-previous").textContent = prev
    ? `Yesterday (${prev.date}): deal ${prev.number}, salt ${prev.salt}.` : "";
}

// How each attempt on the board ended, in a word ("time": still playing at the time limit).
// At equal scores the board puts finished, then stuck or out of time, then resigned or left.
const ENDED = { finished: "finished", stuck: "stuck", playing: "time", resigned: "resigned", left: "left" };

// `leaderboard_page`: today's top 10 for the chosen variant, with the player's rank.
export function onLeaderboard(msg) {
  if (msg.variant !== $("variant").value) return;
  const box = $("leaderboard");
  box.replaceChildren();
  if (!msg.entries.length) {
    box.textContent = `Nobody has finished the ${msg.date} deal yet.`;
    return;
  }
  const table = document.createElement("table");
  table.className = "standings leaderboard";
  table.innerHTML = "<thead><tr><th>#</th><th>Player</th><th>Score</th><th>Time</th><th title='how the attempt ended'>Ended</th></tr></thead>";
  const body = document.createElement("tbody");
  for (const e of msg.entries) {
    const tr = document.createElement("tr");
    tr.dataset.player = e.player;
    if (e.player === S.me.player) tr.classList.add("me");
    appendCells(tr, [e.rank, e.name, e.score, clock(e.elapsed), ENDED[e.status] || e.status || ""], 1);
    body.append(tr);
  }
  table.append(body);
  const note = document.createElement("p");
  note.className = "muted small";
  note.textContent = `${msg.total} on the board${msg.me ? ` · you are #${msg.me}` : ""}`;
  box.append(table, note);
}

// `stats_info`: the player's stats, one row per variant.
export function onStats(msg) {
  const box = $("stats");
  box.replaceChildren();
  if (!msg.stats.length) {
    box.textContent = "No game finished yet.";
    return;
  }
  const table = document.createElement("table");
  table.className = "standings stats-lobby";
  table.innerHTML = "<thead><tr><th>Variant</th><th>Played</th><th>Won</th><th title='best score'>Best</th><th>Fastest</th><th title='current / longest run of wins'>Streak</th></tr></thead>";
  const body = document.createElement("tbody");
  for (const v of msg.stats) {
    const tr = document.createElement("tr");
    tr.dataset.variant = v.variant;
    const fastest = v.best_time === undefined || v.best_time === null ? "–" : clock(v.best_time);
    appendCells(tr, [VARIANT_TITLE[v.variant], v.started, v.won, v.best_score, fastest, `${v.streak} / ${v.longest_streak}`]);
    body.append(tr);
  }
  table.append(body);
  box.append(table);
}

// `saved_games_list`: the saved solo games, each with Continue.
export function onSaved(msg) {
  const list = $("saved");
  list.replaceChildren();
  $("saved-wrap").hidden = msg.games.length === 0;
  for (const g of msg.games) {
    const li = document.createElement("li");
    li.dataset.game = g.game;
    const text = document.createElement("span");
    const when = new Date(g.start - S.offset).toLocaleString([], { dateStyle: "short", timeStyle: "short" });
    text.textContent = `${VARIANT_TITLE[g.variant]} · ${g.summary.score} pts · ${plural(g.summary.moves, "move")} · ${when}`;
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = "small-btn";
    btn.textContent = "Continue";
    btn.addEventListener("click", () => send({ type: "solo_resume", game: g.game }));
    // Delete asks once more on the button itself (no dialog to dismiss by mistake).
    const del = document.createElement("button");
    del.type = "button";
    del.className = "small-btn secondary";
    del.textContent = "Delete";
    del.setAttribute("aria-label", `Delete the saved ${VARIANT_TITLE[g.variant]} game of ${when}`);
    del.addEventListener("click", () => {
      if (del.dataset.armed) send({ type: "saved_delete", game: g.game });
      else { del.dataset.armed = "1"; del.textContent = "Delete it?"; }
    });
    li.append(text, btn, del);
    list.append(li);
  }
}

// Bind the variant (whose boxes the lobby shows) and the daily deal's buttons.
export function bindDaily() {
  $("variant").addEventListener("change", () => refreshLobby(true));
  $("btn-daily").addEventListener("click", () => send({ type: "daily_start", variant: $("variant").value }));
  $("btn-practice").addEventListener("click", () => send({ type: "daily_start", variant: $("variant").value, practice: true }));
}
