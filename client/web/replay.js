// The replay viewer: one racer's positions through a finished game (`replay_positions`),
// stepped through move by move (buttons, a slider, the arrow keys, Home and End), with the
// solver's "where the win slipped away" marked on the timeline, and a racer picker when
// several raced (each racer's positions asked for once, then kept).

import { renderBoard } from "./cards.js";
import { refreshLobby } from "./daily.js";
import { send } from "./link.js";
import { ERRORS } from "./notice.js";
import { setMode } from "./screens.js";
import { $, S, VARIANT_TITLE, clockTenths } from "./state.js";
import { moveLabel } from "./table.js";

// ---------------------------------------------------------------- positions

// The positions received, by game and racer. A finished game's moves never change; only
// the analysis may come later, so an entry without its verdict is asked for again when a
// replay is opened afresh.
const positions = new Map();
// The requests on their way (same keys): a racer picked twice is asked for once.
const asked = new Set();
const keyOf = (game, player) => `${game} ${player}`;

// Open the replay of `game` on `player`'s moves. `racers`: [{player, name}] for the racer
// picker; when `count` says more raced than that, the roster is asked for (`replay`).
// `back`: the screen the Back button returns to ("lobby" or "profile").
export function openReplay({ game, player, racers = [], count = racers.length, back = "lobby" }) {
  S.replay = { game, player, racers: racers.map((r) => ({ player: r.player, name: r.name })), back, step: 0, error: null };
  if (count > racers.length) send({ type: "replay", game });
  const known = positions.get(keyOf(game, player));
  if (known && !known.verdict) positions.delete(keyOf(game, player));
  setMode("replay");
  $("btn-replay-back").textContent = back === "profile" ? "Back to the profile" : "Back to the lobby";
  choose(player);
  $("h-replay").focus({ preventScroll: true });
}

// Show `player`'s moves, asking for them the first time.
function choose(player) {
  const replay = S.replay;
  replay.player = player;
  replay.error = null;
  const key = keyOf(replay.game, player);
  if (!positions.has(key) && !asked.has(key)) {
    asked.add(key);
    if (send({ type: "replay_positions", game: replay.game, player }) === null) asked.delete(key);
  }
  render();
}

// `replay_positions_info`: a racer's positions, kept, and shown if that racer is picked.
export function onReplayPositions(msg) {
  const key = keyOf(msg.game, msg.player);
  asked.delete(key);
  positions.set(key, msg);
  const replay = S.replay;
  if (!replay || replay.game !== msg.game) return;
  const racer = replay.racers.find((r) => r.player === msg.player);
  if (racer) racer.name = msg.name;
  else replay.racers.push({ player: msg.player, name: msg.name });
  if (replay.player === msg.player) render();
}

// A game's `replay_log`: its racers, for the picker of the replay being shown.
export function noteReplayRoster(msg) {
  const replay = S.replay;
  if (!replay || replay.game !== msg.game) return;
  const known = new Map(replay.racers.map((r) => [r.player, r]));
  replay.racers = msg.logs.map((log) => known.get(log.player) || { player: log.player, name: log.name });
  for (const racer of known.values()) {
    if (!replay.racers.includes(racer)) replay.racers.push(racer);
  }
  render();
}

// The solver's `analysis` of a player's game came: positions kept without it are asked for
// again (at once if shown), to mark where the win slipped away.
export function noteAnalysis(msg) {
  const key = keyOf(msg.game, msg.player);
  const known = positions.get(key);
  if (!known || known.verdict) return;
  positions.delete(key);
  const replay = S.replay;
  if (replay && replay.game === msg.game && replay.player === msg.player) choose(msg.player);
}

// After a reconnection: the requests lost with the old connection are made again.
export function askReplayAgain() {
  asked.clear();
  const replay = S.replay;
  if (replay && !replay.error && !positions.has(keyOf(replay.game, replay.player))) choose(replay.player);
}

// An error to `replay_positions`: the replay says why it cannot be shown.
export function refusedReplay(msg) {
  if (msg.request !== "replay_positions" || !msg.sent) return;
  asked.delete(keyOf(msg.sent.game, msg.sent.player));
  const replay = S.replay;
  if (!replay || replay.game !== msg.sent.game || replay.player !== msg.sent.player) return;
  const sentence = (msg.message || "").trim();
  replay.error = `This replay cannot be shown: ${ERRORS[msg.code] || sentence || "the server refused it."}`;
  render();
}

// ---------------------------------------------------------------- drawing

// What a step of the timeline shows: the deal (step 0) or the move that led to it.
function stepText(info, step) {
  const total = info.moves.length;
  if (step === 0) return total ? `The deal, before move 1 of ${total}.` : "The deal: no move was played.";
  const move = info.moves[step - 1];
  const what = move.undo ? "undo" : moveLabel(move);
  const slip = info.slipped === step - 1 ? " The win slipped away with this move." : "";
  return `Move ${step} of ${total}: ${what}, at ${clockTenths(info.times[step - 1] || 0)}.${slip}`;
}

function verdictText(info) {
  const slipped = info.slipped ?? null;
  if (info.verdict === "winnable") {
    if (slipped === null) return "Deal winnable: yes.";
    const move = info.moves[slipped];
    return `Deal winnable: yes. The win slipped away at move ${slipped + 1}${move && !move.undo ? ` (${moveLabel(move)})` : ""}.`;
  }
  if (info.verdict === "unwinnable") return "Deal winnable: no.";
  if (info.verdict === "unknown") return "Deal winnable: unknown (the solver gave up).";
  return "The solver's analysis of this game is not ready.";
}

function renderPicker(replay) {
  const picker = $("replay-racer");
  $("replay-racer-wrap").hidden = replay.racers.length < 2;
  const wanted = replay.racers.map((r) => `${r.player}:${r.name}`).join("|");
  if (picker.dataset.racers !== wanted) {
    picker.replaceChildren(...replay.racers.map((r) => {
      const option = document.createElement("option");
      option.value = r.player;
      option.textContent = r.player === S.me.player ? `${r.name} (you)` : r.name;
      return option;
    }));
    picker.dataset.racers = wanted;
  }
  picker.value = replay.player;
}

// Draw the replay: racer, timeline, controls, the move and the board at the step shown.
function render() {
  const replay = S.replay;
  if (!replay) return;
  renderPicker(replay);
  const info = positions.get(keyOf(replay.game, replay.player));
  const racer = replay.racers.find((r) => r.player === replay.player);
  // The player's own name as it is now: the game may have been played under an earlier one.
  const name = replay.player === S.me.player && S.me.name ? S.me.name : info ? info.name : racer ? racer.name : "";
  $("h-replay").textContent = name ? `Replay: ${name}` : "Replay";
  const screen = $("screen-replay");
  const slider = $("replay-slider");
  const controls = ["btn-step-first", "btn-step-back", "btn-step-forward", "btn-step-last"];
  if (!info) {
    screen.dataset.state = replay.error ? "refused" : "waiting";
    $("replay-desc").textContent = "";
    $("replay-move").textContent = replay.error || "Asking the server for the moves…";
    $("replay-verdict").textContent = "";
    for (const id of controls) $(id).disabled = true;
    slider.disabled = true;
    $("replay-slip-mark").hidden = true;
    $("btn-step-slipped").hidden = true;
    $("replay-board").replaceChildren();
    return;
  }
  screen.dataset.state = "ready";
  const total = info.moves.length;
  replay.step = Math.max(0, Math.min(total, replay.step));
  const step = replay.step;
  $("replay-desc").textContent = `${VARIANT_TITLE[info.variant] || info.variant} · ${total} move${total === 1 ? "" : "s"}`;
  slider.max = String(total);
  slider.value = String(step);
  slider.disabled = total === 0;
  slider.setAttribute("aria-valuetext", stepText(info, step));
  $("btn-step-first").disabled = step === 0;
  $("btn-step-back").disabled = step === 0;
  $("btn-step-forward").disabled = step === total;
  $("btn-step-last").disabled = step === total;
  const slipped = info.slipped ?? null;
  const mark = $("replay-slip-mark");
  mark.hidden = slipped === null || total === 0;
  $("btn-step-slipped").hidden = slipped === null;
  if (slipped !== null) {
    mark.dataset.step = String(slipped + 1);
    mark.style.setProperty("--at", String(total ? (slipped + 1) / total : 0));
    mark.title = `The win slipped away at move ${slipped + 1}`;
    $("btn-step-slipped").setAttribute("aria-pressed", String(step === slipped + 1));
  }
  $("replay-move").textContent = stepText(info, step);
  $("replay-move").classList.toggle("slipped", slipped !== null && step === slipped + 1);
  $("replay-verdict").textContent = verdictText(info);
  const board = $("replay-board");
  renderBoard(board, info.views[step], { interactive: false });
  board.dataset.step = String(step);
  const move = step > 0 ? info.moves[step - 1] : null;
  if (move && move.card) {
    // The card moved, and the cards that travelled on it.
    let moved = board.querySelector(`.card[data-card="${String(move.card).toUpperCase()}"]`);
    while (moved && moved.classList.contains("card")) {
      moved.classList.add("moved");
      moved = moved.nextElementSibling;
    }
  }
}

// Show step `step` (clamped to the timeline).
function go(step) {
  const replay = S.replay;
  if (!replay) return;
  const info = positions.get(keyOf(replay.game, replay.player));
  if (!info) return;
  replay.step = Math.max(0, Math.min(info.moves.length, step));
  render();
}

// ---------------------------------------------------------------- input

function onKey(event) {
  if (S.mode !== "replay" || !S.replay) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.matches("input, select, textarea")) return;   // the slider and the picker keep their own keys
  const info = positions.get(keyOf(S.replay.game, S.replay.player));
  if (!info) return;
  const step = S.replay.step;
  const to = { ArrowLeft: step - 1, ArrowRight: step + 1, Home: 0, End: info.moves.length }[event.key];
  if (to === undefined) return;
  event.preventDefault();
  go(to);
}

function leave() {
  const back = S.replay ? S.replay.back : "lobby";
  S.replay = null;
  if (back === "profile" && S.profile) {
    setMode("profile");
    return;
  }
  setMode("lobby");
  refreshLobby(false);
}

// Bind the replay's controls, its keys and its Back button.
export function bindReplay() {
  $("btn-step-first").addEventListener("click", () => go(0));
  $("btn-step-back").addEventListener("click", () => go(S.replay ? S.replay.step - 1 : 0));
  $("btn-step-forward").addEventListener("click", () => go(S.replay ? S.replay.step + 1 : 0));
  $("btn-step-last").addEventListener("click", () => go(Number.MAX_SAFE_INTEGER));
  $("replay-slider").addEventListener("input", (event) => go(Number(event.target.value)));
  const toSlip = () => {
    const info = S.replay && positions.get(keyOf(S.replay.game, S.replay.player));
    if (info && info.slipped !== undefined && info.slipped !== null) go(info.slipped + 1);
  };
  $("btn-step-slipped").addEventListener("click", toSlip);
  $("replay-slip-mark").addEventListener("click", toSlip);
  $("replay-racer").addEventListener("change", (event) => { if (S.replay) choose(event.target.value); });
  $("btn-replay-back").addEventListener("click", leave);
  document.addEventListener("keydown", onKey);
}
