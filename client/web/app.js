// Scorpion Race browser client: lobby, rooms, quick match, racing, daily, spectating.
// Speaks the JSON subprotocol described in docs/protocol.md.

import { bindDaily, onDaily, onLeaderboard, onSaved, onStats, refreshLobby, tickDaily } from "./daily.js";
import { connect, link, onPong, sayHello, send } from "./link.js";
import { ERRORS, bindNotice, notify, showError } from "./notice.js";
import { setMode, wantGames } from "./screens.js";
import { onBatch, onEvent, onHints, onSnapshot, onWinnableInfo } from "./race.js";
import { bindResults, closeResult, onAnalysis, onRematchOffered, onReplayLog } from "./results.js";
import { bindSpectate, onGames, onGamesUpdate, onSpectate, onSpectateBatch, onSpectateEvent, onSpectators, onWatchEnded, tickWatchClock } from "./spectate.js";
import { addTicker, bindTable, newSolo, renderGame, tickClock } from "./table.js";
import { $, S, VARIANT_TITLE, serverNow } from "./state.js";

const GAME_REQUESTS = new Set(["move", "deal", "undo", "hint", "resign", "winnable"]);

// ---------------------------------------------------------------- messages

function onMessage(msg) {
  switch (msg.type) {
    case "welcome": return onWelcome(msg);
    case "pong": return onPong(msg);
    case "ok": return onOk(msg);
    case "error": return onError(msg);
    case "room": return onRoom(msg);
    case "countdown": return onCountdown(msg);
    case "queued": return onQueued(msg);
    case "match_found": return onMatchFound(msg);
    case "queue_timeout":
      setMode("lobby");
      notify(`Nobody else came to play ${VARIANT_TITLE[msg.variant]} within ${msg.waited} s. Try again later.`);
      return;
    case "race_started":
    case "accepted":
    case "progress":
    case "race_ended":
      if (S.watch && msg.type === "race_ended" && msg.game === S.watch.id) return onWatchEnded(msg);
      return onEvent(msg);
    case "batch": return onBatch(msg);
    case "snapshot": return onSnapshot(msg);
    case "hints": return onHints(msg);
    case "games": return onGames(msg);
    case "games_update": return onGamesUpdate(msg);
    case "spectate": return onSpectate(msg);
    case "spectate_event": return onSpectateEvent(msg);
    case "spectate_batch": return onSpectateBatch(msg);
    case "spectators": return onSpectators(msg);
    case "daily": return onDaily(msg);
    case "leaderboard_page": return onLeaderboard(msg);
    case "stats_info": return onStats(msg);
    case "saved_games_list": return onSaved(msg);
    case "forgotten": return onForgotten(msg);
    case "analysis": return onAnalysis(msg);
    case "winnable_info": return onWinnableInfo(msg);
    case "replay_log": return onReplayLog(msg);
    case "rematch_offered": return onRematchOffered(msg);
    default: return;          // newer servers may send types this page does not know
  }
}

function onWelcome(msg) {
  S.welcomed = true;
  S.me = { player: msg.player, name: msg.name };
  S.token = msg.token;
  localStorage.setItem("scorpion.token", msg.token);
  localStorage.setItem("scorpion.name", msg.name);
  S.offset = msg.now - Date.now();
  S.followingGames = wantGames();
  send({ type: "games_list", subscribe: S.followingGames });
  refreshLobby(true);

  const early = S.outbox.splice(0);
  for (const message of early) send(message);
  const live = msg.games || [];
  if (S.game && (!S.game.ended || live.includes(S.game.id))) {
    send({ type: "resume", game: S.game.id, v: S.game.v });
  } else if (live.length) {
    send({ type: "resume", game: live[0], v: 0 });
  } else if (S.mode === "room" && S.room) {
    send({ type: "room_join", room: S.room.room });
  } else if (S.mode === "queue" && S.queueVariant) {
    send({ type: "queue_join", variant: S.queueVariant });
  } else if (S.mode === "watch" && S.watch && !S.watch.ended) {
    send({ type: "watch", game: S.watch.id, v: S.watch.v });  // answered by spectate_batch or spectate
  } else if (S.linkRoom) {
    const code = S.linkRoom.toUpperCase();
    S.linkRoom = null;
    history.replaceState(null, "", location.pathname);
    joinRoom(code);
  } else if (S.mode !== "game") {
    setMode("lobby");
  }
}

function onOk(msg) {
  if (msg.to === "room_leave") { S.room = null; setMode("lobby"); }
  else if (msg.to === "queue_cancel") { S.queueVariant = null; setMode("lobby"); }
  else if (msg.to === "unwatch") { S.watch = null; setMode("lobby"); }
}

function onForgotten(msg) {
  localStorage.removeItem("scorpion.token");
  S.token = null;
  S.game = null;
  const removed = msg.removed || {};
  const parts = Object.entries(removed).filter(([, n]) => n !== false && n !== 0)
    .map(([what, n]) => (n === true ? what.replace(/_/g, " ") : `${n} ${what.replace(/_/g, " ")}`));
  notify("The server has forgotten you.", parts.length ? `Removed: ${parts.join(", ")}.` : "");
  setTimeout(() => link.restart(), 300);     // a fresh identity
}

function onError(msg) {
  const request = msg.request;
  if (GAME_REQUESTS.has(request)) S.pending = null;
  switch (msg.code) {
    case "bad_token":
      S.token = null;
      localStorage.removeItem("scorpion.token");
      sayHello();
      return;
    case "stale_version":
      if (S.game) send({ type: "resume", game: S.game.id, v: S.game.v });
      notify(ERRORS.stale_version);
      return;
    default:
      break;
  }
  if (request === "rematch") $("btn-rematch").disabled = false;
  if (request === "daily_info") {
    S.daily = null;
    $("daily-info").textContent = msg.code === "unavailable"
      ? "The daily deal is not yet available on this server." : ERRORS[msg.code] || msg.message;
    $("btn-daily").disabled = true;
    $("btn-practice").hidden = true;
    return;
  }
  if (request === "leaderboard" || request === "stats" || request === "saved_games") {
    const box = { leaderboard: "leaderboard", stats: "stats", saved_games: null }[request];
    if (box) $(box).textContent = msg.code === "unavailable" ? "Not yet available on this server." : ERRORS[msg.code] || msg.message;
    return;
  }
  if (request === "resume") {
    if (S.game && S.game.mode === "solo" && !S.game.triedSoloResume) {
      S.game.triedSoloResume = true;
      send({ type: "solo_resume", game: S.game.id });
      return;
    }
    S.game = null;
    setMode("lobby");
  }
  if (request === "solo_resume" && S.mode === "game") {
    S.game = null;
    setMode("lobby");
  }
  if (request === "room_join" && S.mode === "room") {  // rejoining after a reconnect failed
    S.room = null;
    setMode("lobby");
  }
  if (request === "queue_join" && S.mode === "queue") setMode("lobby");
  if (request === "watch" && S.mode === "watch") { S.watch = null; setMode("lobby"); }
  if (request === "hint") S.hint = null;
  if (request === "winnable") { S.winnable = null; renderGame(); }
  if (request === "replay") return;          // only asked for the analysis: the move number alone is told
  if (request === "analyze") {
    // Still being computed: the server pushes it when ready. Otherwise there is none to show.
    if (msg.code !== "unavailable") { $("analysis").hidden = true; }
    return;
  }
  if (request === "room_join" && msg.code === "room_started" && S.lastJoin) {
    notify(ERRORS.room_started, "Watching it instead.");
    send({ type: "watch", room: S.lastJoin });
    S.lastJoin = null;
    return;
  }
  showError(msg);
}

// ---------------------------------------------------------------- rooms and queue

function joinRoom(code) {
  S.lastJoin = code.toUpperCase();
  send({ type: "room_join", room: S.lastJoin });
}

function onRoom(msg) {
  if (S.resultOpen) closeResult();                 // a rematch: from the result to its room
  S.room = msg;
  S.lastJoin = null;
  if (S.mode !== "room") S.countdownStart = null;
  setMode("room");
  const url = `${location.origin}/?room=${msg.room}`;
  history.replaceState(null, "", `${location.pathname}?room=${msg.room}`);   // a reload re-joins
  $("room-code").textContent = msg.room;
  $("room-link").value = url;
  const opts = msg.options || {};
  const bits = [VARIANT_TITLE[msg.variant], `up to ${msg.max_players} players`,
    opts.undo ? "undo allowed" : "no undo", opts.hints ? "hints allowed" : "no hints",
    opts.reserve_rule === "when-stuck" ? "reserve only when stuck" : "reserve any time"];
  if (opts.spectators === false) bits.push("no spectators");
  else if (opts.spectator_delay) bits.push(`spectators ${opts.spectator_delay} s behind`);
  $("room-desc").textContent = bits.join(" · ");
  const list = $("room-players");
  list.replaceChildren();
  let allReady = true;
  for (const p of msg.players) {
    const li = document.createElement("li");
    li.dataset.player = p.player;
    const me = p.player === S.me.player ? " (you)" : "";
    const host = p.player === msg.host ? " ★ host" : "";
    li.textContent = `${p.name}${me}${host}`;
    const tag = document.createElement("span");
    tag.className = p.ready ? "tag ready" : "tag";
    tag.textContent = p.ready ? "ready" : "not ready";
    li.append(" ", tag);
    list.append(li);
    if (!p.ready && p.player !== msg.host) allReady = false;
  }
  const mine = msg.players.find((p) => p.player === S.me.player);
  const ready = Boolean(mine && mine.ready);
  $("btn-ready").setAttribute("aria-pressed", String(ready));
  $("btn-ready").textContent = ready ? "Ready ✓ (click to unready)" : "I'm ready";
  const host = msg.host === S.me.player;
  $("btn-ready").hidden = host;                    // the host is ready by starting
  $("btn-start").hidden = !host;
  $("btn-start").disabled = !(allReady && msg.players.length >= 2);
  $("btn-start").title = msg.players.length < 2 ? "Waiting for a second player" : allReady ? "" : "Waiting for everyone to be ready";
}

function onCountdown(msg) {
  S.countdownStart = msg.start;
  tickCountdown();
}

function tickCountdown() {
  if (S.countdownStart === null || S.mode !== "room") { $("countdown").textContent = ""; return; }
  const left = Math.max(0, Math.ceil((S.countdownStart - serverNow()) / 1000));
  $("countdown").textContent = left > 0 ? `The race starts in ${left}…` : "Go!";
}

function onQueued(msg) {
  S.queueVariant = msg.variant;
  setMode("queue");
  $("queue-text").textContent = `Looking for an opponent for ${VARIANT_TITLE[msg.variant]}… ` +
    `(${msg.waiting} waiting, you included)`;
}

function onMatchFound(msg) {
  const others = msg.players.filter((p) => p.player !== S.me.player).map((p) => p.name);
  $("queue-text").textContent = `Match found: you against ${others.join(", ")}. Starting…`;
  S.countdownStart = msg.start;
}

// ---------------------------------------------------------------- lobby actions

function raceOptions() {
  const delay = Math.max(0, Math.min(300, Number($("opt-delay").value) || 0));
  return {
    undo: $("opt-undo").checked, hints: $("opt-hints").checked, spectators: $("opt-spectators").checked,
    reserve_rule: $("opt-reserve").value, spectator_delay: delay,
  };
}

function bind() {
  bindNotice();
  bindTable();
  bindDaily();
  bindResults();
  bindSpectate();
  $("name-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("name-input").value.trim();
    if (!name || name.length > 24) { notify("A name has 1 to 24 characters."); return; }
    localStorage.setItem("scorpion.name", name);
    if (S.mode === "lobby") link.restart();    // hello again under the new name (same token)
    else notify("Your new name will be used from your next race.");
  });
  $("btn-create").addEventListener("click", () => {
    const players = Math.max(2, Math.min(8, Number($("opt-players").value) || 2));
    send({ type: "room_create", variant: $("variant").value, max_players: players, options: raceOptions() });
  });
  $("btn-queue").addEventListener("click", () => {
    S.queueVariant = $("variant").value;
    send({ type: "queue_join", variant: S.queueVariant });
  });
  $("btn-solo").addEventListener("click", newSolo);
  $("join-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = $("join-code").value.trim().toUpperCase();
    if (!/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{6}$/.test(code)) {
      notify("A room code has 6 characters (letters and digits, no 0, 1, I, L or O).");
      return;
    }
    joinRoom(code);
  });
  $("btn-forget").addEventListener("click", () => {
    if (window.confirm("Erase your identity and your records from the server? This cannot be undone.")) {
      send({ type: "forget_me" });
    }
  });
  $("btn-copy").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("room-link").value);
      notify("Link copied.");
    } catch {
      $("room-link").select();
      notify("Select the link and copy it.");
    }
  });
  $("btn-ready").addEventListener("click", () => {
    send({ type: "ready", ready: $("btn-ready").getAttribute("aria-pressed") !== "true" });
  });
  $("btn-start").addEventListener("click", () => send({ type: "room_start" }));
  $("btn-leave").addEventListener("click", () => send({ type: "room_leave" }));
  $("btn-cancel-queue").addEventListener("click", () => send({ type: "queue_cancel" }));
  $("home-link").addEventListener("click", (event) => {
    if (S.mode === "lobby") return;
    event.preventDefault();
    if (S.mode === "game" && S.game && !S.game.ended && S.game.status === "playing") {
      notify("You are racing: resign first to leave this race.");
    } else if (S.mode === "watch") {
      $("btn-unwatch").click();
    } else if (S.mode === "game") {
      $("btn-result-close").click();
    }
  });
  addTicker(tickWatchClock);
  addTicker(tickCountdown);
  addTicker(tickDaily);
  setInterval(tickClock, 250);
}

bind();
setMode("lobby");
connect(onMessage);
window.scorpion = { state: S, link };      // for debugging (and tests) from the console
