// The session with the server as a whole: the welcome (after which the page resumes the
// game, room, queue or watched race it was in), the answers `ok` and `forgotten`, and
// what each refused request undoes before its error is shown.

import { ACCOUNT_REQUESTS, accountRefused, onAccountOk, onAccountSession, openAccount, render } from "./account.js";
import { refreshLobby } from "./daily.js";
import { GAME_REQUESTS, link, retryLater, sayHello, send, settleLater } from "./link.js";
import { joinRoom } from "./lobby.js";
import { ERRORS, notServed, notify, showError } from "./notice.js";
import { setMode, wantGames } from "./screens.js";
import { $, S } from "./state.js";
import { renderGame } from "./table.js";

// ---------------------------------------------------------------- session

// `welcome`: signed in; send what waited, then resume whatever the page was doing.
export function onWelcome(msg) {
  S.welcomed = true;
  S.me = { player: msg.player, name: msg.name, username: msg.username || null };
  render();                                          // account.js: guest or account
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
    send({ type: "queue_join", variant: S.queueVariant, rated: S.queueRated !== false });
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

// `session`: an account's new session (after register or a password change): keep its token.
export function onSession(msg) {
  onAccountSession(msg);
}

// `ok`: leaving a room, the queue, a watched race or a saved game is done; back to the
// lobby (a deleted saved game: its list again).
export function onOk(msg) {
  if (msg.to === "room_leave") { S.room = null; setMode("lobby"); }
  else if (msg.to === "queue_cancel") { S.queueVariant = null; setMode("lobby"); }
  else if (msg.to === "unwatch") { S.watch = null; setMode("lobby"); }
  else if (msg.to === "solo_leave") {
    S.game = null;
    setMode("lobby");
    refreshLobby();
    notify("Game saved, its clock stopped: continue it from Saved games.");
  } else if (msg.to === "saved_delete") send({ type: "saved_games" });
  else onAccountOk(msg);                             // account.js: passkey_register, session_revoke, logout
}

// `forgotten`: the server erased the player; start afresh with a new identity.
export function onForgotten(msg) {
  localStorage.removeItem("scorpion.token");
  S.token = null;
  S.game = null;
  const removed = msg.removed || {};
  const parts = Object.entries(removed).filter(([, n]) => n !== false && n !== 0)
    .map(([what, n]) => (n === true ? what.replace(/_/g, " ") : `${n} ${what.replace(/_/g, " ")}`));
  notify("The server has forgotten you.", parts.length ? `Removed: ${parts.join(", ")}.` : "");
  setTimeout(() => link.restart(), 300);     // a fresh identity
}

// `error`: a busy server's refusal goes again later (see link.js); otherwise undo what the
// refused request expected, then say why (see notice.js).
export function onError(msg) {
  if (retryLater(msg) || settleLater(msg)) return;
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
  if (msg.code === "account_required") {             // ranked play: offer an account right there
    openAccount(`${ERRORS.account_required} Create an account here (a passkey is one tap), or choose the casual form.`);
    if (request === "queue_join" && S.mode === "queue") setMode("lobby");
    return;
  }
  if (ACCOUNT_REQUESTS.has(request)) { accountRefused(msg); return; }
  if (request === "rematch") $("btn-rematch").disabled = false;
  if (request === "daily_info") {
    S.daily = null;
    $("daily-info").textContent = notServed(msg)
      ? "The daily deal is not yet available on this server." : ERRORS[msg.code] || msg.message;
    $("btn-daily").disabled = true;
    $("btn-practice").hidden = true;
    return;
  }
  if (request === "leaderboard" || request === "stats" || request === "saved_games") {
    const box = { leaderboard: "leaderboard", stats: "stats", saved_games: null }[request];
    if (box) $(box).textContent = notServed(msg) ? "Not yet available on this server." : ERRORS[msg.code] || msg.message;
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
    if (!notServed(msg)) { $("analysis").hidden = true; }
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
