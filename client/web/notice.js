// Notices: the one-line messages at the top of the page (among them the one shown while a
// busy server's refusal is sent again), and the sentences shown for the server's error codes.

import { $ } from "./state.js";

// The page's own wording for each error code the server may send.
export const ERRORS = {
  bad_frame: "The server could not read a message from this page.",
  too_large: "A message from this page was too large for the server.",
  unknown_type: "The server does not know that request.",
  bad_field: "The server refused a value.",
  hello_first: "Not signed in yet.",
  not_allowed: "That is not possible right now.",
  bad_token: "Your saved identity has expired; starting afresh.",
  illegal_move: "Illegal move.",
  stale_version: "Your board was out of date; it has been brought up to date.",
  not_your_game: "You are not racing in that game.",
  no_such_game: "That game is over, or does not exist.",
  game_over: "Your part of this race is over.",
  rate_limited: "Too many actions at once: slow down a little.",
  room_full: "That room is full.",
  no_such_room: "No open room has that code.",
  no_such_player: "That player is not known here (or asked to be forgotten).",
  not_started: "That race has not started yet: watch it once it has.",
  not_host: "Only the host can start the race.",
  room_started: "That room's race has already started.",
  not_ready: "Everyone must be ready, and at least two players present, before the start.",
  not_in_queue: "You were no longer in the queue (a match may just have been found).",
  undo_forbidden: "Undo is not allowed in this race.",
  hints_forbidden: "Hints are not allowed in this race.",
  spectating_forbidden: "This game cannot be watched.",
  daily_already_played: "You have already played today's deal.",
  account_required: "Ranked play needs an account; casual play is open to you.",
  bad_passkey: "That passkey could not be checked.",
  bad_login: "No account has that username and password.",
  username_taken: "That username is taken.",
  login_locked: "Too many wrong passwords: wait a little.",
  banned: "You are banned from ranked play; unrated games are still open to you.",
  unavailable: "Not available right now.",
  outcome_unknown: "The server could not confirm that action in time.",
  internal: "The server failed; please try again.",
};

// Whether an error says the server is busy (its storage out of reach for a moment) and the
// same request may go again after `retry_after_ms`, rather than refusing it for good.
export const isBusy = (msg) => typeof msg.retry_after_ms === "number";

// Whether an `unavailable` is not the busy storage's: the server does not serve this (a
// request for a later version, or an analysis still being computed).
export const notServed = (msg) => msg.code === "unavailable" && !isBusy(msg);

// ---------------------------------------------------------------- notices

// A notice floats over the page (it moves nothing under it) and fades out when its time
// is up: FADE_MS of fading at the end of its `ttl`.
let noticeTimer = null;
let fadeTimer = null;
const FADE_MS = 600;

// Show a notice (its text, then any detail) for `ttl` ms.
export function notify(text, detail, ttl = 9000) {
  const box = $("notice");
  $("notice-text").textContent = detail && detail !== text ? `${text} ${detail}` : text;
  box.classList.remove("fading");
  box.hidden = false;
  clearTimeout(noticeTimer);
  clearTimeout(fadeTimer);
  noticeTimer = setTimeout(() => {
    box.classList.add("fading");
    fadeTimer = setTimeout(() => { box.hidden = true; box.classList.remove("fading"); }, FADE_MS);
  }, Math.max(0, ttl - FADE_MS));
}

// The notice shown while requests a busy server refused are sent again. It stays until an
// answer comes (clearBusy), or the error once the page gives up.
export const BUSY_TEXT = "Server busy, retrying…";

// Show that the server is busy and the page sends its request again.
export function showBusy() {
  notify(BUSY_TEXT, "", 60000);
}

// Hide the busy notice (an answer came), unless another notice has taken its place.
export function clearBusy() {
  if ($("notice-text").textContent === BUSY_TEXT) $("notice").hidden = true;
}

// The page's wording for a busy server's refusal it has stopped sending again.
const GAVE_UP = "The server stayed busy: please try again in a moment.";

// Codes whose server sentence says more than the page's own wording.
const DETAILED = new Set(["illegal_move", "bad_field", "not_allowed", "unavailable", "internal", "bad_frame", "unknown_type", "spectating_forbidden", "banned"]);

// Show a server error as a notice: the page's wording, and the server's where it says more.
export function showError(msg) {
  const friendly = isBusy(msg) ? GAVE_UP : ERRORS[msg.code] || "The server refused that.";
  const sentence = (msg.message || "").trim().replace(/\.$/, "");
  const detail = sentence && (DETAILED.has(msg.code) || !ERRORS[msg.code])
    ? `${sentence[0].toUpperCase()}${sentence.slice(1)}.` : "";
  notify(friendly, detail);
}

// Hide a hint's notice. A hint speaks of the position it was asked in: it goes with the game.
export function dropHintNotice() {
  if ($("notice-text").textContent.startsWith("Hint")) $("notice").hidden = true;
}

// Have screen readers say `text` when the player pauses (the visually hidden #announcer):
// what others do that the page shows only in passing, such as a rival's finished run.
export function announce(text) {
  const box = $("announcer");
  box.textContent = box.textContent === text ? `${text}\u00a0` : text;   // the same words again are said again
}

// Bind the notice's close button.
export function bindNotice() {
  $("notice-close").addEventListener("click", () => { $("notice").hidden = true; });
}
