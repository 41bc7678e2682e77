// Scorpion Race browser client: lobby, rooms, quick match, racing, daily, spectating.
// Speaks the JSON subprotocol described in docs/protocol.md.

import { bindDaily, onDaily, onLeaderboard, onSaved, onStats, refreshLobby, tickDaily } from "./daily.js";
import { bindLobby, joinRoom, onCountdown, onMatchFound, onQueueTimeout, onQueued, onRoom, tickCountdown } from "./lobby.js";
import { connect, link, onPong, sayHello, send } from "./link.js";
import { ERRORS, bindNotice, notify, showError } from "./notice.js";
import { setMode, wantGames } from "./screens.js";
import { onBatch, onEvent, onHints, onSnapshot, onWinnableInfo } from "./race.js";
import { bindResults, onAnalysis, onRematchOffered, onReplayLog } from "./results.js";
import { bindSpectate, onGames, onGamesUpdate, onSpectate, onSpectateBatch, onSpectateEvent, onSpectators, onWatchEnded, tickWatchClock } from "./spectate.js";
import { addTicker, bindTable, renderGame, tickClock } from "./table.js";
import { $, S } from "./state.js";

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
    case "queue_timeout": return onQueueTimeout(msg);
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

function bind() {
  bindNotice();
  bindTable();
  bindDaily();
  bindResults();
  bindSpectate();
  bindLobby();
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
