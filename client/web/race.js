// Racing: the game being played as the server tells it (race events, batch, snapshot), the
// other racers' progress, and the answers to hint and winnable requests.

import { cardLabel } from "./cards.js";
import { focusBoard } from "./focus.js";
import { send, settleResumed } from "./link.js";
import { announce, notify } from "./notice.js";
import { showResult } from "./results.js";
import { locate } from "./rules.js";
import { setMode } from "./screens.js";
import { $, S, serverNow } from "./state.js";
import { renderGame } from "./table.js";

// ---------------------------------------------------------------- racing

function newGame(msg) {
  const racers = new Map();
  // Everyone starts from the same deal: the opening summary follows from the opening view.
  const down = msg.view.columns.flat().filter((card) => card === null).length;
  for (const r of msg.roster) {
    racers.set(r.player, { name: r.name, status: "playing",
      summary: { score: 0, runs: 0, face_down_left: down, moves: 0, reserve_left: msg.view.reserve_left, state: "in_play" } });
  }
  return {
    id: msg.game, v: msg.v, variant: msg.variant, options: msg.options || {}, start: msg.start,
    view: msg.view, summary: { score: 0, runs: 0, moves: 0, reserve_left: msg.view.reserve_left, state: "in_play" },
    status: "playing", racers, roster: msg.roster, room: msg.room || null, daily: msg.daily || null,
    mode: msg.mode || "race", commitment: msg.commitment || null,
    ended: null, endedAt: null, spectators: null,
  };
}

// A race event of the game being played (race_started, accepted, progress, race_ended);
// a gap in the versions asks for resume.
export function onEvent(msg, fromBatch = false) {
  if (msg.type === "race_started") {
    if (S.game && S.game.id === msg.game && S.game.v >= 1) return;
    S.game = newGame(msg);
    S.selected = null;
    S.hint = null;
    S.winnable = null;
    S.room = null;
    S.queueVariant = null;
    S.countdownStart = null;
    S.resultOpen = false;
    $("result").hidden = true;
    setMode("game");
    renderGame();
    focusBoard();
    return;
  }
  const game = S.game;
  if (!game || msg.game !== game.id) return;
  if (msg.ref !== undefined && msg.ref === S.pending) S.pending = null;
  if (msg.v <= game.v) return;                      // already seen
  if (msg.v > game.v + 1) {                         // a gap: ask for what was missed
    if (!fromBatch) send({ type: "resume", game: game.id, v: game.v });
    return;
  }
  game.v = msg.v;
  if (msg.type === "accepted") {
    game.view = msg.view;
    game.summary = msg.summary;
    setStatus(game, msg.status || "playing");
    const me = game.racers.get(S.me.player);
    if (me) { me.summary = msg.summary; me.status = game.status; }
    S.selected = null;
    S.hint = null;
    S.winnable = null;
  } else if (msg.type === "progress") {
    const racer = game.racers.get(msg.player);
    if (racer && msg.player !== S.me.player) announceRival(racer, msg);
    if (racer) { racer.summary = msg.summary; racer.status = msg.status; }
    if (msg.player === S.me.player) { game.summary = msg.summary; setStatus(game, msg.status); }
  } else if (msg.type === "race_ended") {
    game.ended = msg;
    if (!game.endedAt) game.endedAt = serverNow();
    S.selected = null;
    S.hint = null;
    showResult(msg, game.roster);
  }
  renderGame();
}

// Tell screen readers what a rival's progress changes that matters: a finished run, and
// their end (finished, stuck, resigned, left); their every move would be noise.
const RIVAL_END = { finished: "finished the game", stuck: "is stuck", resigned: "resigned", left: "left the race" };

function announceRival(racer, msg) {
  if (msg.status !== racer.status && msg.status !== "playing") {
    announce(`${racer.name} ${RIVAL_END[msg.status] || msg.status}, with ${msg.summary.score} points.`);
  } else if (msg.summary.runs > racer.summary.runs) {
    announce(`${racer.name} finished a run: ${msg.summary.runs} of 4.`);
  }
}

function setStatus(game, status) {
  if (status !== "playing" && game.status === "playing") game.endedAt = serverNow();
  game.status = status;
}

// `batch`: the events missed while away (after resume), oldest first.
export function onBatch(msg) {
  for (const event of msg.events) onEvent(event, true);
  if (S.game && S.game.id === msg.game && S.game.v < msg.v) send({ type: "resume", game: msg.game, v: S.game.v });
  if (S.game && !S.game.ended) { setMode("game"); renderGame(); }
  settleResumed(msg);       // the resume that tells whether an unconfirmed action was applied
}

// `snapshot`: the whole game afresh (after resume, when the missed events are no longer
// kept or the page is too far behind).
export function onSnapshot(msg) {
  const game = newGame({ ...msg, roster: msg.roster });
  game.view = msg.view;
  game.summary = msg.summary;
  game.status = msg.status;
  if (msg.status !== "playing") game.endedAt = msg.now;
  for (const r of msg.racers) {
    const racer = game.racers.get(r.player);
    if (racer) { racer.summary = r.summary; racer.status = r.status; }
  }
  const me = game.racers.get(S.me.player);
  if (me) { me.summary = msg.summary; me.status = msg.status; }
  S.offset = msg.now - Date.now();
  S.game = game;
  S.selected = null;
  S.hint = null;
  S.winnable = null;
  S.pending = null;
  setMode("game");
  renderGame();
  settleResumed(msg);
}

// ---------------------------------------------------------------- hints and the solver's verdict

// `hints`: highlight the first move the server suggests, and say it.
export function onHints(msg) {
  S.pending = null;
  const game = S.game;
  if (!game || msg.game !== game.id) return;
  const first = msg.moves[0];
  if (!first) {
    S.hint = null;
    notify("No move is left: the game is stuck.");
  } else if (first.deal) {
    S.hint = { deal: true };
    notify("Hint: deal the reserve.", "", 5000);
  } else {
    S.hint = hintOf(game, first);
    notify(`Hint: move ${cardLabel(first.card)} to column ${first.to}.`, "", 5000);
  }
  renderGame();
}

// The board highlight of a wire move: its card (and those on it) and its target column.
function hintOf(game, move) {
  if (move.deal) return { deal: true };
  const from = typeof move.from === "string" ? { cell: Number(move.from.slice(1)) - 1 } : null;
  const source = from || locate(game.view, move.card);
  return source ? { source, to: move.to - 1 } : null;
}

// `winnable_info`: the solver's verdict on the solo game, its winning move highlighted.
// `finish_info`: the end of auto-finish. A won game's result comes with `race_ended`;
// otherwise the solver found no winning line from the position, and nothing was played.
export function onFinishInfo(msg) {
  S.pending = null;
  const game = S.game;
  if (!game || msg.game !== game.id) return;
  if (msg.verdict === "unwinnable") notify("No winning line from here: the solver proved this position lost.");
  else if (msg.verdict !== "winnable") notify("No winning line found from here: the solver gave up. Play on!");
  renderGame();
}

export function onWinnableInfo(msg) {
  S.pending = null;
  const game = S.game;
  if (!game || msg.game !== game.id) return;
  S.winnable = msg;
  if (msg.verdict === "winnable" && msg.move && msg.v === game.v) S.hint = hintOf(game, msg.move);
  renderGame();
}
