// The game being played: drawing it (board, figures, buttons, racers, clock), the requests
// made from it (moves, deal, undo, hint, resign, winnable) and the board's input: clicks
// and double clicks, dragging, keys.

import { cardLabel, fitTableau, renderBoard } from "./cards.js";
import { moveFocus, setupRovingFocus } from "./focus.js";
import { renderGuide } from "./howto.js";
import { holdPending, send } from "./link.js";
import { notify } from "./notice.js";
import { canDeal, targetsFor, wireMove } from "./rules.js";
import { shortSeal } from "./seal.js";
import { $, S, STATUS_TEXT, VARIANT_TITLE, clock, plural, serverNow } from "./state.js";

// ---------------------------------------------------------------- game requests

// Send a request about the game being played (move, deal, undo, hint, resign, winnable);
// returns its ref, or null.
function gameRequest(type, extra = {}) {
  const game = S.game;
  if (!game || game.ended || game.status !== "playing") return null;
  if (S.pending !== null) return null;             // one request at a time keeps versions simple
  const ref = send({ type, game: game.id, v: game.v, ...extra });
  holdPending(ref);
  return ref;
}

// Play a move from a source (a card or a cell) to a column.
function playMove(source, to) {
  const game = S.game;
  const move = wireMove(game.view, source, to);
  S.selected = null;
  gameRequest("move", { move });
  renderGame();
}

// A wire move in words, e.g. "7♥ from column 2 to column 5".
export function moveLabel(move) {
  if (move.deal) return "deal the reserve";
  return `${cardLabel(move.card)} from ${typeof move.from === "string" ? move.from : `column ${move.from}`} to column ${move.to}`;
}

// Whether every card of a view is known: none face down, and no reserve left to deal.
export function allKnown(view) {
  const stock = view.cells && view.cells.length ? 0 : view.reserve_left;
  return stock === 0 && view.columns.every((col) => col.every((card) => card !== null));
}

// Let the server play the rest of a winning line (key F): its moves come as the player's.
function askFinish() {
  if (gameRequest("finish") === null) return;
  notify("Finishing: the solver plays the rest of a winning line…", "", 4000);
}

// Ask the solver whether the solo game can still be won (key W).
function askWinnable() {
  const game = S.game;
  if (!game || game.mode !== "solo") return;
  if (gameRequest("winnable") === null) return;
  S.winnable = { game: game.id, v: game.v, verdict: "asking" };
  renderGame();
}

// A suggested move after "Try": "dealing the reserve", or the card's move.
function tryLabel(move) {
  return move.deal ? "dealing the reserve" : moveLabel(move);
}

function winnableText(info) {
  if (info.verdict === "asking") return "Asking the solver…";
  if (info.verdict === "winnable") return info.move ? `Still winnable: yes. Try ${tryLabel(info.move)}.` : "Still winnable: yes.";
  if (info.verdict === "unwinnable") {
    return info.deal === "unwinnable" ? "Still winnable: no, this deal cannot be won (it never could)."
      : info.deal === "winnable" ? "Still winnable: no, this game can no longer be won."
        : "Still winnable: no, this position cannot be won.";
  }
  return "Still winnable: unknown (the solver gave up).";
}

function modeTitle(game) {
  const variant = VARIANT_TITLE[game.variant];
  if (game.mode === "solo") return `solo · ${variant}`;
  if (game.mode === "daily") return `daily ${game.daily || ""} · ranked`;
  if (game.mode === "practice") return `daily ${game.daily || ""} · practice`;
  return variant;
}

// Start a new solo game with the lobby's variant and reserve rule.
export function newSolo() {
  const winnable = $("solo-winnable").checked;
  if (winnable) notify("Looking for a deal the solver can prove winnable…");
  send({ type: "solo_new", variant: $("variant").value, reserve_rule: $("opt-reserve").value, save: true,
    ...(winnable ? { winnable: true } : {}) });
}

// ---------------------------------------------------------------- drawing the game

// Draw the game being played: board, figures, buttons, racers and clock.
export function renderGame() {
  const game = S.game;
  if (!game) return;
  const playing = game.status === "playing" && !game.ended;
  const view = game.view;
  const targets = S.selected ? targetsFor(view, S.selected) : [];
  const hadFocus = document.activeElement && $("board").contains(document.activeElement)
    ? { col: document.activeElement.dataset.col, row: document.activeElement.dataset.row,
        cell: document.activeElement.dataset.cell } : null;
  renderBoard($("board"), view, {
    interactive: playing, selected: S.selected, targets,
    hint: S.hint && !S.hint.deal ? S.hint : null, deal: Boolean(S.hint && S.hint.deal),
  });
  setupRovingFocus(hadFocus);
  markLifted();
  // The deal's seal, from the start: the result reveals what it seals (results.js, Verify).
  $("seal").textContent = game.commitment ? shortSeal(game.commitment) : "…";
  $("seal").title = game.commitment
    ? `SHA-256 of the deal number and a salt, fixed before the first move: ${game.commitment}` : "";
  $("score").textContent = game.summary.score;
  $("runs").textContent = `${game.summary.runs}/4`;
  $("moves").textContent = game.summary.moves;
  const pill = $("game-status");
  pill.textContent = game.ended ? (game.mode === "solo" ? "game over" : "race over")
    : game.status === "playing" ? modeTitle(game)
      : `you ${STATUS_TEXT[game.status]}${game.racers.size > 1 ? " · waiting for the others" : ""}`;
  $("btn-new").hidden = game.mode !== "solo";
  $("btn-leave-saved").hidden = game.mode !== "solo";     // the page's solo games are all saved
  $("btn-leave-saved").disabled = !playing;
  $("btn-winnable").hidden = game.mode !== "solo";
  $("key-winnable").hidden = game.mode !== "solo";       // the solver helps in solo games only
  $("btn-winnable").disabled = !playing;
  const info = S.winnable && S.winnable.game === game.id && playing
    && (S.winnable.v === game.v || S.winnable.verdict === "asking") ? S.winnable : null;
  // The verdict's line is kept in solo games, empty or not: an answer moves nothing.
  $("winnable-verdict").hidden = game.mode !== "solo";
  $("winnable-verdict").textContent = info ? winnableText(info) : "";
  $("winnable-verdict").dataset.verdict = info ? info.verdict : "";
  pill.dataset.status = game.ended ? "ended" : game.status;
  const opts = game.options;
  const hasReserve = view.cells.length === 0 && game.variant !== "three-blind-mice";
  $("btn-deal").hidden = !hasReserve;
  $("key-deal").hidden = !hasReserve;
  $("reserve-left").textContent = view.reserve_left;
  $("btn-deal").disabled = !playing || !canDeal(view, opts.reserve_rule);
  $("btn-deal").classList.toggle("hinted", Boolean(S.hint && S.hint.deal));
  // A rated race and the daily's ranked attempt have neither undo nor hints (their
  // options say so): no button, and no key in the legend.
  $("btn-undo").hidden = !opts.undo;
  $("key-undo").hidden = !opts.undo;
  $("btn-undo").disabled = !playing || game.summary.moves === 0;
  $("btn-hint").hidden = !opts.hints;
  $("key-hint").hidden = !opts.hints;
  $("btn-hint").disabled = !playing;
  // Finish is the solver's help: where hints are allowed (never in a rated race), once
  // every card is known (none face down, the reserve dealt).
  const finishAllowed = Boolean(opts.hints) && !opts.rated;
  $("btn-finish").hidden = !finishAllowed;
  $("key-finish").hidden = !finishAllowed;
  $("btn-finish").disabled = !playing || !allKnown(view);
  $("btn-resign").disabled = !playing;
  if (!playing) $("confirm-resign").hidden = true;
  $("spectator-count-wrap").hidden = game.spectators === null;
  $("spectator-count").textContent = game.spectators ?? 0;
  renderRacers();
  renderGuide(game.variant);
  fitTableau($("board"), spaceBelowBoard());     // once all above the board is laid out
  tickClock();
}

// The height kept under the board: its own padding, what follows it (the key legend) and
// the page's bottom margin, so that the whole game fits the window without scrolling.
function spaceBelowBoard() {
  const board = $("board");
  const pad = parseFloat(getComputedStyle(board).paddingBottom) || 0;
  const after = Math.max(0, $("screen-game").getBoundingClientRect().bottom - board.getBoundingClientRect().bottom);
  const keys = document.querySelector("#screen-game .keys");
  const keysMargin = keys ? parseFloat(getComputedStyle(keys).marginBottom) || 0 : 0;
  const main = parseFloat(getComputedStyle(document.querySelector("main")).paddingBottom) || 0;
  return pad + after + keysMargin + main + 2;
}

function renderRacers() {
  const game = S.game;
  const list = $("racers");
  list.replaceChildren();
  $("racers-panel").hidden = game.racers.size < 2;
  document.querySelector(".game-layout").classList.toggle("alone", game.racers.size < 2);
  const sorted = [...game.racers.entries()].sort((a, b) => (b[1].summary.score - a[1].summary.score));
  for (const [player, r] of sorted) {
    const li = document.createElement("li");
    li.dataset.player = player;
    li.dataset.status = r.status;
    if (player === S.me.player) li.classList.add("me");
    const name = document.createElement("span");
    name.className = "racer-name";
    name.textContent = player === S.me.player ? `${r.name} (you)` : r.name;
    const s = r.summary;
    const detail = document.createElement("span");
    detail.className = "racer-detail";
    const down = s.face_down_left === null || s.face_down_left === undefined ? "" : ` · ${s.face_down_left} down`;
    detail.textContent = `${s.score} pts · ${s.runs}/4 runs · ${plural(s.moves, "move")}${down}`;
    const st = document.createElement("span");
    st.className = `tag status-${r.status}`;
    st.textContent = STATUS_TEXT[r.status] || r.status;
    li.append(name, st, detail);
    list.append(li);
  }
}

// Other screens' clocks (the watched race's, the room's countdown, the daily box) tick
// with the game's: every 250 ms, and whenever the game is drawn.
const tickers = [];

// Tick `fn` with the game's clock, after it.
export function addTicker(fn) {
  tickers.push(fn);
}

// Update the game's clock, then the other screens' (see addTicker).
export function tickClock() {
  const game = S.game;
  if (game && S.mode === "game") {
    const end = game.ended ? (game.endedAt ?? serverNow()) : game.status !== "playing" ? game.endedAt : serverNow();
    const elapsed = (end - game.start) / 1000;
    $("clock").textContent = elapsed < 0 ? `-${clock(-elapsed + 1)}` : clock(elapsed);
  }
  for (const tick of tickers) tick();
}

// ---------------------------------------------------------------- board interaction

function sourceOf(node) {
  if (node.dataset.cell !== undefined) return { cell: Number(node.dataset.cell) };
  if (node.classList.contains("card") && node.classList.contains("up")) {
    return { col: Number(node.dataset.col) - 1, row: Number(node.dataset.row) };
  }
  return null;
}

function sameSource(a, b) {
  if (!a || !b) return false;
  return a.cell !== undefined ? a.cell === b.cell : a.col === b.col && a.row === b.row;
}

function onBoardClick(event) {
  if (swallowClick) return; // the end of a drag, not a click
  const game = S.game;
  if (!game || game.status !== "playing" || game.ended) return;
  const node = event.target.closest("[data-col], [data-cell]");
  const column = event.target.closest(".column");
  if (!node && !column) return;
  const col = column ? Number(column.dataset.col) - 1 : null;
  if (S.selected && col !== null && targetsFor(game.view, S.selected).includes(col)) {
    playMove(S.selected, col);
    return;
  }
  const source = node ? sourceOf(node) : null;
  // A double click (or double tap) on a card: the board is redrawn between the two
  // clicks, so the browser's own dblclick is unreliable; detect it here instead.
  const now = performance.now();
  const double = source && sameSource(source, lastClick.source) && now - lastClick.time < 450;
  lastClick = { source: double ? null : source, time: now };
  if (double) {
    S.selected = null;
    autoMove(source);
    return;
  }
  if (!source || sameSource(source, S.selected)) {
    S.selected = null;
  } else {
    S.selected = source;
    if (targetsFor(game.view, source).length === 0) notify(`${cardLabel(nodeCard(source))} has nowhere to go.`);
  }
  renderGame();
}

function nodeCard(source) {
  return source.cell !== undefined ? S.game.view.cells[source.cell] : S.game.view.columns[source.col][source.row];
}

function autoMove(source) {
  const game = S.game;
  if (!game || game.status !== "playing" || game.ended || !source) return;
  const targets = targetsFor(game.view, source);
  if (targets.length === 1) playMove(source, targets[0]);
  else if (targets.length === 0) notify(`${cardLabel(nodeCard(source))} has nowhere to go.`);
  else { S.selected = source; renderGame(); notify(`${cardLabel(nodeCard(source))} fits in ${targets.length} places: pick one.`); }
}

let lastClick = { source: null, time: 0 };

// ---------------------------------------------------------------- dragging

// A face-up card may also be dragged, with the cards on it, by mouse, pen or finger and
// dropped on a column. A press that moves less than DRAG_START pixels stays a click.
const DRAG_START = 6;
let drag = null; // { pointer, source, game, x, y (where it started), ghost, over (the column under it) }
let swallowClick = false;

function onBoardPointerDown(event) {
  const game = S.game;
  if ((drag && drag.ghost) || !event.isPrimary || event.button !== 0) return;
  if (!game || game.status !== "playing" || game.ended) return;
  const node = event.target.closest("[data-col], [data-cell]");
  const source = node ? sourceOf(node) : null;
  if (!source) return;
  drag = { pointer: event.pointerId, source, game: game.id, x: event.clientX, y: event.clientY, ghost: null, over: null };
}

function onBoardPointerMove(event) {
  if (!drag || event.pointerId !== drag.pointer) return;
  if (!drag.ghost) {
    if (Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < DRAG_START) return;
    liftCards();
  }
  event.preventDefault();
  drag.ghost.style.transform = `translate(${event.clientX - drag.x}px, ${event.clientY - drag.y}px)`;
  const over = columnAt(event.clientX, event.clientY);
  if (over !== drag.over) {
    if (drag.over) drag.over.classList.remove("drop-over");
    if (over) over.classList.add("drop-over");
    drag.over = over;
  }
}

// The drag starts: the legal columns light up as for a pick, and a copy of the cards
// follows the pointer while the cards themselves stay dimmed in place.
function liftCards() {
  const board = $("board");
  board.setPointerCapture(drag.pointer); // the board outlives its redraws; its cards do not
  lastClick = { source: null, time: 0 };
  S.selected = drag.source;
  renderGame();
  const cards = [...board.querySelectorAll(".card.selected")];
  const first = cards[0].getBoundingClientRect();
  const ghost = document.createElement("div");
  ghost.className = "drag-ghost";
  ghost.setAttribute("aria-hidden", "true");
  Object.assign(ghost.style, { left: `${first.left}px`, top: `${first.top}px`, width: `${first.width}px` });
  for (const card of cards) {
    const copy = card.cloneNode(true);
    copy.removeAttribute("id");
    copy.tabIndex = -1;
    copy.style.top = `${card.getBoundingClientRect().top - first.top}px`;
    ghost.append(copy);
  }
  document.body.append(ghost);
  drag.ghost = ghost;
  markLifted();
}

function markLifted() {
  if (drag && drag.ghost) $("board").querySelectorAll(".card.selected").forEach((c) => c.classList.add("lifted"));
}

function columnAt(x, y) {
  const hit = document.elementFromPoint(x, y);
  return hit ? hit.closest("#board .column") : null;
}

function onBoardPointerUp(event) {
  if (!drag || event.pointerId !== drag.pointer) return;
  const current = drag;
  endDrag();
  if (!current.ghost) return; // it was a click: the click handler has it
  swallowClick = true;
  setTimeout(() => { swallowClick = false; }, 0);
  const game = S.game;
  S.selected = null;
  const column = columnAt(event.clientX, event.clientY);
  const col = column ? Number(column.dataset.col) - 1 : null;
  if (!game || game.id !== current.game || game.status !== "playing" || game.ended) { renderGame(); return; }
  const targets = targetsFor(game.view, current.source);
  if (col !== null && targets.includes(col)) {
    playMove(current.source, col);
    return;
  }
  renderGame();
  const label = cardLabel(nodeCard(current.source));
  if (targets.length === 0) notify(`${label} has nowhere to go.`);
  else if (col !== null && !sameColumn(current.source, col)) notify(`${label} cannot go on column ${col + 1}.`);
}

function sameColumn(source, col) {
  return source.cell === undefined && source.col === col;
}

function endDrag() {
  if (!drag) return;
  if (drag.ghost) drag.ghost.remove();
  if (drag.over) drag.over.classList.remove("drop-over");
  const board = $("board");
  if (board.hasPointerCapture(drag.pointer)) board.releasePointerCapture(drag.pointer);
  drag = null;
}

// Drop a drag under way (Esc, or the browser took the pointer back).
function cancelDrag() {
  if (!drag) return;
  const lifted = Boolean(drag.ghost);
  endDrag();
  if (lifted) { S.selected = null; renderGame(); }
}

// ---------------------------------------------------------------- keys

function onBoardKey(event) {
  const node = event.target.closest("button");
  if (!node || !S.game) return;
  const keys = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  if (keys[event.key]) {
    event.preventDefault();
    moveFocus(node, ...keys[event.key]);
  } else if (event.key === "a" || event.key === "A") {
    event.preventDefault();
    autoMove(sourceOf(node));
  }
}

function onGlobalKey(event) {
  if (event.target.matches("input, select, textarea") || event.ctrlKey || event.metaKey || event.altKey) return;
  if (S.mode !== "game" || !S.game || $("howto").open) return;
  const key = event.key.toLowerCase();
  if (key === "escape") { cancelDrag(); S.selected = null; S.hint = null; renderGame(); }
  else if (key === "d" && !$("btn-deal").disabled && !$("btn-deal").hidden) gameRequest("deal");
  else if (key === "u" && !$("btn-undo").disabled && !$("btn-undo").hidden) gameRequest("undo");
  else if (key === "h" && !$("btn-hint").disabled && !$("btn-hint").hidden) gameRequest("hint");
  else if (key === "w" && !$("btn-winnable").disabled && !$("btn-winnable").hidden) askWinnable();
  else if (key === "f" && !$("btn-finish").disabled && !$("btn-finish").hidden) askFinish();
}

// Bind the game's buttons, the board's pointer and keys, and the page's game keys.
export function bindTable() {
  $("btn-new").addEventListener("click", newSolo);
  $("btn-leave-saved").addEventListener("click", () => { if (S.game) send({ type: "solo_leave", game: S.game.id }); });
  $("btn-deal").addEventListener("click", () => gameRequest("deal"));
  $("btn-undo").addEventListener("click", () => gameRequest("undo"));
  $("btn-hint").addEventListener("click", () => gameRequest("hint"));
  $("btn-winnable").addEventListener("click", askWinnable);
  $("btn-finish").addEventListener("click", askFinish);
  $("btn-resign").addEventListener("click", () => { $("confirm-resign").hidden = false; $("btn-resign-no").focus(); });
  $("btn-resign-no").addEventListener("click", () => { $("confirm-resign").hidden = true; $("btn-resign").focus(); });
  $("btn-resign-yes").addEventListener("click", () => { $("confirm-resign").hidden = true; gameRequest("resign"); });
  const board = $("board");
  board.addEventListener("click", onBoardClick);
  board.addEventListener("pointerdown", onBoardPointerDown);
  board.addEventListener("pointermove", onBoardPointerMove);
  board.addEventListener("pointerup", onBoardPointerUp);
  board.addEventListener("pointercancel", cancelDrag);
  board.addEventListener("keydown", onBoardKey);
  document.addEventListener("keydown", onGlobalKey);
  window.addEventListener("resize", () => { if (S.mode === "game" && S.game) renderGame(); });
}
