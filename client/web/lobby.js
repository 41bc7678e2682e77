// The lobby and the screens before a race: the name form, the lobby's buttons and race
// options (Rated among them), a friend race's waiting room (link, players, ready,
// countdown) and the quick match queue (rated unless unticked).

import { link, send } from "./link.js";
import { notify } from "./notice.js";
import { closeResult } from "./results.js";
import { setMode } from "./screens.js";
import { $, S, VARIANT_TITLE, serverNow } from "./state.js";
import { newSolo } from "./table.js";

// ---------------------------------------------------------------- rooms and queue

// Ask to join the room with this code (watched instead if its race has started).
export function joinRoom(code) {
  S.lastJoin = code.toUpperCase();
  send({ type: "room_join", room: S.lastJoin });
}

// `room`: the waiting room of a friend race: its link, options, players and who is ready.
export function onRoom(msg) {
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
    opts.reserve_rule === "when-stuck" ? "reserve only when stuck" : "reserve any time",
    opts.rated ? "rated" : "not rated"];
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

// `countdown`: the race starts at `start` (server time).
export function onCountdown(msg) {
  S.countdownStart = msg.start;
  tickCountdown();
}

// The room's countdown to the start.
export function tickCountdown() {
  if (S.countdownStart === null || S.mode !== "room") { $("countdown").textContent = ""; return; }
  const left = Math.max(0, Math.ceil((S.countdownStart - serverNow()) / 1000));
  $("countdown").textContent = left > 0 ? `The race starts in ${left}…` : "Go!";
}

// `queued`: waiting in the quick match queue.
export function onQueued(msg) {
  S.queueVariant = msg.variant;
  setMode("queue");
  const rated = msg.rated
    ? ` Rated${msg.rating !== undefined && msg.rating !== null ? `: your rating is ${msg.rating}` : ""}.` : " Not rated.";
  $("queue-text").textContent = `Looking for an opponent for ${VARIANT_TITLE[msg.variant]}… ` +
    `(${msg.waiting} waiting, you included)${rated}`;
}

// `match_found`: the quick match has opponents; the race starts soon.
export function onMatchFound(msg) {
  const others = msg.players.filter((p) => p.player !== S.me.player).map((p) => p.name);
  $("queue-text").textContent = `Match found: you against ${others.join(", ")}. Starting…`;
  S.countdownStart = msg.start;
}

// `queue_timeout`: nobody else came to play in time; back to the lobby.
export function onQueueTimeout(msg) {
  setMode("lobby");
  notify(`Nobody else came to play ${VARIANT_TITLE[msg.variant]} within ${msg.waited} s. Try again later.`);
}

// ---------------------------------------------------------------- lobby actions

// A rated race has no undo and no hints (the server turns them off): while Rated is
// ticked, their boxes are greyed out and sent unticked.
function raceOptions() {
  const delay = Math.max(0, Math.min(300, Number($("opt-delay").value) || 0));
  const rated = $("opt-rated").checked;
  return {
    undo: !rated && $("opt-undo").checked, hints: !rated && $("opt-hints").checked,
    spectators: $("opt-spectators").checked,
    reserve_rule: $("opt-reserve").value, spectator_delay: delay, rated,
  };
}

function showRatedRules() {
  const rated = $("opt-rated").checked;
  for (const id of ["opt-undo", "opt-hints"]) {
    $(id).disabled = rated;
    $(id).closest("label").title = rated ? "A rated race has no undo and no hints" : "";
  }
}

// Bind the name form, the lobby's buttons, the waiting room's and the queue's.
export function bindLobby() {
  $("opt-rated").addEventListener("change", showRatedRules);
  showRatedRules();
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
    S.queueRated = $("queue-rated").checked;
    send({ type: "queue_join", variant: S.queueVariant, rated: S.queueRated });
  });
  $("btn-solo").addEventListener("click", newSolo);
  // "Winnable deals only" for solo games is remembered on this device.
  $("solo-winnable").checked = localStorage.getItem("scorpion.soloWinnable") === "1";
  $("solo-winnable").addEventListener("change", () => {
    localStorage.setItem("scorpion.soloWinnable", $("solo-winnable").checked ? "1" : "0");
  });
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
}
