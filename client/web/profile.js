// Player profiles (`profile`): name, ratings per variant (provisional ones marked), the
// statistics per variant, and the newest finished games, each with its rating change and a
// Replay button. One's own is opened from the lobby; another player's from the rating
// board and a race's standings (profileButton).

import { refreshLobby } from "./daily.js";
import { send } from "./link.js";
import { ERRORS } from "./notice.js";
import { openReplay } from "./replay.js";
import { setMode } from "./screens.js";
import { $, PROVISIONAL, S, STATUS_TEXT, VARIANT_TITLE, appendCells, changeText, clock, ratingText } from "./state.js";

// ---------------------------------------------------------------- opening a profile

// Show a player's profile (one's own when `player` is null), asking the server for it.
export function openProfile(player = null) {
  const own = player === null || player === S.me.player;
  S.profile = { player: own ? null : player, info: null, error: null };
  setMode("profile");
  send(own ? { type: "profile" } : { type: "profile", player });
  render();
  $("h-profile").focus({ preventScroll: true });
}

// A player's name as a button that opens their profile (from a table or a list).
export function profileButton(player, name, before = () => {}) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "link name-link";
  button.textContent = name;
  button.title = `Open ${name}'s profile`;
  button.dataset.player = player;
  button.addEventListener("click", () => { before(); openProfile(player); });
  return button;
}

// `profile_info`: the profile asked for (an answer to an older request is dropped).
export function onProfile(msg) {
  const profile = S.profile;
  if (!profile) return;
  if (profile.player === null ? !msg.me : msg.player !== profile.player) return;
  profile.info = msg;
  profile.error = null;
  render();
}

// After a reconnection: the profile still awaited is asked for again.
export function askProfileAgain() {
  const profile = S.profile;
  if (!profile || profile.info || profile.error) return;
  send(profile.player === null ? { type: "profile" } : { type: "profile", player: profile.player });
}

// An error to `profile`: the profile screen says why there is none to show.
export function refusedProfile(msg) {
  if (msg.request !== "profile" || !S.profile || !msg.sent) return;
  const asked = msg.sent.player || null;
  if (asked !== S.profile.player && !(asked === S.me.player && S.profile.player === null)) return;
  const sentence = (msg.message || "").trim();
  const text = msg.code === "no_such_player" ? "No player has that id (or they asked to be forgotten)."
    : ERRORS[msg.code] || sentence || "The server refused that.";
  S.profile.error = text;
  render();
}

// ---------------------------------------------------------------- drawing

function table(headings, rows) {
  const wrap = document.createElement("div");
  wrap.className = "table-wrap";
  wrap.tabIndex = 0;                               // it may scroll sideways: keys scroll it too
  const element = document.createElement("table");
  element.className = "standings";
  const head = document.createElement("thead");
  const tr = document.createElement("tr");
  for (const heading of headings) {
    const th = document.createElement("th");
    th.scope = "col";
    if (Array.isArray(heading)) { th.textContent = heading[0]; th.title = heading[1]; }
    else th.textContent = heading;
    tr.append(th);
  }
  head.append(tr);
  const body = document.createElement("tbody");
  body.append(...rows);
  element.append(head, body);
  wrap.append(element);
  return wrap;
}

// A rating in a table cell: "1523?" when provisional, with a title saying what that means.
export function ratingCell(td, rating, provisional) {
  td.textContent = ratingText(rating, provisional);
  td.classList.add("rating");
  if (provisional) {
    td.classList.add("provisional");
    td.title = PROVISIONAL;
  }
}

// The note under a table with provisional ratings, saying what "?" means.
export function provisionalNote() {
  const note = document.createElement("p");
  note.className = "muted small";
  note.textContent = `? ${PROVISIONAL.replace("Provisional: ", "provisional: ")}.`;
  return note;
}

function renderRatings(info) {
  const box = $("profile-ratings");
  box.replaceChildren();
  if (!info.ratings.length) {
    box.textContent = "Not rated yet: quick matches, and friend races with the Rated option, give a rating.";
    return;
  }
  const rows = info.ratings.map((r) => {
    const tr = document.createElement("tr");
    tr.dataset.variant = r.variant;
    appendCells(tr, [VARIANT_TITLE[r.variant] || r.variant, "", r.games, r.rank ? `#${r.rank}` : "–",
      r.best === undefined || r.best === null ? "–" : r.best]);
    ratingCell(tr.children[1], r.rating, r.provisional);
    return tr;
  });
  box.append(table(["Variant", "Rating", ["Rated races", "rated races played"], ["Rank", "place on the rating board"],
    ["Best", "highest rating reached"]], rows));
  if (info.ratings.some((r) => r.provisional)) box.append(provisionalNote());
}

// The statistics, one column per variant played and one row per figure (narrow enough for
// a phone with every variant).
const STATS = [
  ["played", "Played", (v) => v.started],
  ["won", "Won", (v) => v.won],
  ["best", "Best score", (v) => v.best_score],
  ["average", "Average score", (v) => v.average_score],
  ["fastest", "Fastest win", (v) => (v.best_time === undefined || v.best_time === null ? "–" : clock(v.best_time))],
  ["streak", "Win streak (now / longest)", (v) => `${v.streak} / ${v.longest_streak}`],
  ["dailies", "Daily deals", (v) => v.dailies],
];

function renderStats(info) {
  const box = $("profile-stats");
  box.replaceChildren();
  if (!info.stats.length) {
    box.textContent = "No game played yet.";
    return;
  }
  const rows = STATS.map(([key, label, value]) => {
    const tr = document.createElement("tr");
    tr.dataset.stat = key;
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = label;
    tr.append(th);
    for (const v of info.stats) {
      const td = document.createElement("td");
      td.dataset.variant = v.variant;
      td.textContent = value(v);
      tr.append(td);
    }
    return tr;
  });
  const wrap = table(["", ...info.stats.map((v) => VARIANT_TITLE[v.variant] || v.variant)], rows);
  const heads = wrap.querySelectorAll("thead th");
  heads[0].textContent = "";
  heads[0].setAttribute("aria-label", "Figure");
  info.stats.forEach((v, i) => { heads[i + 1].dataset.variant = v.variant; });
  wrap.querySelector("table").classList.add("stats-table");
  box.append(wrap);
}

const MODE_TEXT = { race: "race", solo: "solo game", daily: "daily deal (ranked)", practice: "daily deal (practice)" };

function recentItem(info, g) {
  const li = document.createElement("li");
  li.dataset.game = g.game;
  const text = document.createElement("span");
  text.className = "game-text";
  const mode = g.mode === "race" && g.racers > 1 ? `race of ${g.racers}` : MODE_TEXT[g.mode] || g.mode;
  text.append(`${VARIANT_TITLE[g.variant] || g.variant} · ${mode}`);
  if (g.rated) {
    const tag = document.createElement("span");
    tag.className = "tag rated";
    tag.textContent = "Rated";
    text.append(" ", tag);
  }
  const detail = document.createElement("span");
  detail.className = "muted small recent-detail";
  const when = new Date(g.start - S.offset).toLocaleString([], { dateStyle: "short", timeStyle: "short" });
  const place = g.racers > 1 ? `placed ${g.rank} of ${g.racers} · ` : "";
  detail.textContent = `${place}${g.score} pts · ${STATUS_TEXT[g.status] || g.status} · ${when}`;
  text.append(detail);
  li.append(text);
  if (g.rated && g.change !== undefined && g.change !== null) {
    const change = document.createElement("span");
    change.className = `change ${g.change > 0 ? "up" : g.change < 0 ? "down" : "even"}`;
    change.textContent = changeText(g.change);
    change.title = "Rating change";
    li.append(change);
  }
  if (g.replayable) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "small-btn secondary";
    button.textContent = "Replay";
    button.setAttribute("aria-label", `Replay this ${VARIANT_TITLE[g.variant] || g.variant} ${mode}`);
    button.addEventListener("click", () => openReplay({
      game: g.game, player: info.player, racers: [{ player: info.player, name: info.name }], count: g.racers, back: "profile",
    }));
    li.append(button);
  } else {
    const later = document.createElement("span");
    later.className = "muted small";
    later.textContent = "replay once its day is over";
    li.append(later);
  }
  return li;
}

function renderRecent(info) {
  const list = $("profile-recent");
  list.replaceChildren();
  if (!info.recent.length) {
    const li = document.createElement("li");
    li.className = "muted";
    li.textContent = "No finished game yet.";
    list.append(li);
    return;
  }
  list.append(...info.recent.map((g) => recentItem(info, g)));
}

// Draw the profile screen: waiting, refused, or the profile itself.
function render() {
  const profile = S.profile;
  if (!profile) return;
  const info = profile.info;
  const screen = $("screen-profile");
  $("profile-body").hidden = !info;
  if (!info) {
    screen.dataset.state = profile.error ? "refused" : "waiting";
    $("h-profile").textContent = "Profile";
    $("profile-status").textContent = profile.error || "Asking the server…";
    return;
  }
  screen.dataset.state = "ready";
  screen.dataset.player = info.player;
  $("h-profile").textContent = info.me ? `${info.name} (you)` : info.name;
  $("profile-status").textContent = "";
  renderRatings(info);
  renderStats(info);
  renderRecent(info);
}

// Bind the lobby's Profile button and the profile's Back button.
export function bindProfile() {
  $("btn-profile").addEventListener("click", () => openProfile());
  $("btn-profile-back").addEventListener("click", () => {
    S.profile = null;
    setMode("lobby");
    refreshLobby(false);
  });
}
