// The result dialog of a finished game or race: standings (each other racer's name opening
// their profile), the revealed deal, a rated race's rating changes (`rating_change`), the
// rematch (Race again, Join the rematch, Watch the rematch), Watch replay, and the solver's
// analysis with the move named from the game's replay log.

import { cardLabel } from "./cards.js";
import { refreshLobby } from "./daily.js";
import { send } from "./link.js";
import { dropHintNotice, notify } from "./notice.js";
import { profileButton } from "./profile.js";
import { noteAnalysis, noteReplayRoster, openReplay } from "./replay.js";
import { setMode } from "./screens.js";
import { sealOf, shortSeal } from "./seal.js";
import { $, PROVISIONAL, S, STATUS_TEXT, VARIANT_TITLE, appendCells, changeText, clock, ratingText } from "./state.js";
import { moveLabel, newSolo } from "./table.js";

const VERDICT_WORD = { winnable: "yes", unwinnable: "no", unknown: "unknown" };

// ---------------------------------------------------------------- results

// The result shown: its `race_ended`, and whether the race was rated and the player raced in it.
let shown = null;

// Show the result of a finished game or race: standings, deal, ratings, rematch, replay, the
// solver's analysis.
export function showResult(msg, roster) {
  const names = new Map((roster || []).map((r) => [r.player, r.name]));
  const body = $("standings");
  body.replaceChildren();
  for (const s of msg.standings) {
    const tr = document.createElement("tr");
    tr.dataset.player = s.player;
    if (s.player === S.me.player) tr.classList.add("me");
    const name = s.name || names.get(s.player);
    appendCells(tr, [s.rank, name, s.score, `${s.runs}/4`, clock(s.elapsed), STATUS_TEXT[s.status] || s.status], 1);
    if (s.player !== S.me.player) tr.children[1].replaceChildren(profileButton(s.player, name, closeResult));
    body.append(tr);
  }
  const mine = msg.standings.find((s) => s.player === S.me.player);
  const solo = msg.standings.length === 1;
  let title = "Race over";
  if (mine && solo) title = mine.status === "finished" ? "You won!" : `Game over: ${mine.score} points`;
  else if (mine) {
    // First on points (or the one who solved it) wins; first only on time is not a win to crow about.
    const level = msg.standings.some((s) => s.player !== mine.player && s.score === mine.score);
    const placed = `Race over: you placed ${mine.rank} of ${msg.standings.length}`;
    if (mine.rank === 1 && (mine.status === "finished" || !level)) title = "You won the race!";
    else title = level ? `${placed} (level on points)` : placed;
  }
  $("h-result").textContent = title;
  // The seal shown at the start (the racer's own game) can be checked here, in the page.
  const sealed = S.game && S.game.id === msg.game ? S.game.commitment : null;
  $("result-deal").textContent = msg.number
    ? `Deal number ${msg.number} (salt ${msg.salt})${sealed ? `: it seals to the commitment shown at the start, ${shortSeal(sealed)}` : ""}.`
    : "The deal number is revealed once the day is over.";
  $("btn-verify").hidden = !(msg.number && sealed);
  $("btn-verify").onclick = () => verifySeal(msg.number, msg.salt, sealed);
  $("verify-result").textContent = "";
  delete $("verify-result").dataset.match;
  // A finished game replays once its deal is revealed (a daily game's once its day is over).
  $("btn-watch-replay").hidden = !msg.number;
  const soloGame = S.game && S.game.id === msg.game && S.game.mode === "solo" ? S.game : null;
  $("btn-replay").hidden = !soloGame;
  $("btn-result-new").hidden = !soloGame;
  // A race between players may be raced again by the same players (a rematch room).
  const raceGame = S.game && S.game.id === msg.game && S.game.mode === "race" && !solo && mine;
  $("btn-rematch").hidden = !raceGame;
  $("btn-rematch").disabled = false;
  S.watchRematch = null;
  showRematchOffer(msg.game);
  // A rated race (the player's own, or the one watched) shows its racers' rating changes.
  const ownGame = S.game && S.game.id === msg.game ? S.game : null;
  const watched = S.watch && S.watch.id === msg.game ? S.watch : null;
  const options = (ownGame || watched || {}).options || {};
  shown = { msg, rated: Boolean(options.rated) || S.ratingChanges.has(msg.game), racer: Boolean(mine && ownGame) };
  // The solver's analysis follows for the player's own solo games and races (a daily
  // game's only once its day is over, and never for practice).
  S.resultGame = msg.game;
  $("analysis").dataset.game = msg.game;
  $("analysis-line").hidden = true;
  $("btn-show-line").setAttribute("aria-expanded", "false");
  $("btn-show-line").textContent = "Show the winning line";
  const expected = Boolean(mine && ownGame && (ownGame.mode === "solo" || ownGame.mode === "race"));
  if (!S.analyses.has(msg.game) && expected) {
    setTimeout(() => {
      if (S.resultGame === msg.game && !S.analyses.has(msg.game)) send({ type: "analyze", game: msg.game });
    }, 5000);
  }
  renderAnalysis(expected);
  renderRatings();
  dropHintNotice();
  S.resultOpen = true;
  $("result").hidden = false;
  $("btn-result-close").focus({ preventScroll: true });
}

function showRematchOffer(game) {
  const offer = S.rematchOffers.get(game);
  $("rematch-offer").hidden = !offer;
  $("rematch-offer").textContent = offer ? `${offer.name} wants a rematch.` : "";
  $("btn-rematch").textContent = offer ? "Join the rematch" : "Race again";
}

function askRematch() {
  if (S.watchRematch) {
    const game = S.watchRematch;
    closeResult();
    send({ type: "watch", game });
    return;
  }
  if (!S.resultGame) return;
  $("btn-rematch").disabled = true;               // one request; the room answers it
  send({ type: "rematch", game: S.resultGame });
}

// `rematch_offered`: another racer opened a rematch room (offered in the result, or told).
export function onRematchOffered(msg) {
  S.rematchOffers.set(msg.game, msg);
  if (S.resultOpen && S.resultGame === msg.game) {
    showRematchOffer(msg.game);
    return;
  }
  $("join-code").value = msg.room;                // ready beside Join in the lobby
  if (S.mode === "lobby") notify(`${msg.name} wants a rematch in room ${msg.room}: press Join to go there.`);
  else notify(`${msg.name} wants a rematch in room ${msg.room}; join it from the lobby when you are free.`);
}

// Hide the result, and forget the game or watched race it was about if that is over.
export function closeResult() {
  S.resultOpen = false;
  $("result").hidden = true;
  if (S.game && S.game.ended) S.game = null;
  if (S.watch && S.watch.ended) S.watch = null;
}

// ---------------------------------------------------------------- ratings

// `rating_change`: a rated race moved its racers' ratings; shown on its result, else told.
export function onRatingChange(msg) {
  S.ratingChanges.set(msg.game, msg);
  if (S.resultOpen && shown && shown.msg.game === msg.game) {
    shown.rated = true;
    renderRatings();
    return;
  }
  const mine = msg.changes.find((c) => c.player === S.me.player);
  if (mine) {
    notify(`Your ${VARIANT_TITLE[msg.variant] || msg.variant} rating: ${mine.before} → ${ratingText(mine.after, mine.provisional)} ` +
      `(${changeText(mine.after - mine.before)}).`);
  }
}

// The result's ratings: "Rated", and each racer's rating before and after once told.
function renderRatings() {
  const rated = Boolean(shown && shown.rated);
  $("result-rated").hidden = !rated;
  const box = $("result-ratings");
  box.hidden = !rated;
  if (!rated) return;
  const change = S.ratingChanges.get(shown.msg.game);
  const body = $("rating-changes");
  body.replaceChildren();
  $("rating-changes-table").hidden = !change;
  if (!change) {
    box.dataset.state = "waiting";
    $("result-ratings-status").textContent = shown.racer
      ? "Working out the new ratings…" : "The racers' ratings change with this race.";
    return;
  }
  box.dataset.state = "ready";
  const order = new Map(shown.msg.standings.map((s, i) => [s.player, i]));
  const rows = [...change.changes].sort((a, b) => (order.get(a.player) ?? 99) - (order.get(b.player) ?? 99));
  for (const c of rows) {
    const tr = document.createElement("tr");
    tr.dataset.player = c.player;
    if (c.player === S.me.player) tr.classList.add("me");
    const delta = c.after - c.before;
    appendCells(tr, [c.name, c.before, ratingText(c.after, c.provisional), changeText(delta)], 0);
    if (c.provisional) { tr.children[2].title = PROVISIONAL; tr.children[2].classList.add("provisional"); }
    tr.children[3].className = `change ${delta > 0 ? "up" : delta < 0 ? "down" : "even"}`;
    body.append(tr);
  }
  const mine = change.changes.find((c) => c.player === S.me.player);
  $("result-ratings-status").textContent = mine
    ? `Your rating: ${mine.before} → ${ratingText(mine.after, mine.provisional)} (${changeText(mine.after - mine.before)}).`
    : "";
}

// ---------------------------------------------------------------- the solver's analysis

// `analysis`: the solver's verdict on a finished game (and ask for the replay to name a slip).
export function onAnalysis(msg) {
  S.analyses.set(msg.game, msg);
  noteAnalysis(msg);                              // a replay kept without it marks the slip now
  const slipped = msg.slipped ?? null;
  if (slipped !== null && !S.slipped.has(msg.game)) {
    S.slipped.set(msg.game, null);
    send({ type: "replay", game: msg.game });     // the player's line, to name the move
  }
  if (S.resultGame === msg.game) renderAnalysis(true);
}

// `replay_log`: the game's moves, to name the move after which the win slipped away (and
// its racers, for the picker of the replay shown).
export function onReplayLog(msg) {
  noteReplayRoster(msg);                          // the racers of the replay being shown
  if (msg.request !== "replay" || !S.slipped.has(msg.game)) return;
  const analysis = S.analyses.get(msg.game);
  if (!analysis) return;
  // The player's final line: their moves with the undos taken back (as the analysis counts).
  const line = [];
  for (const log of msg.logs) {
    if (log.player !== analysis.player) continue;
    for (const move of log.moves) {
      if (move.undo) line.pop();
      else line.push(move);
    }
  }
  S.slipped.set(msg.game, line[analysis.slipped] || null);
  if (S.resultGame === msg.game) renderAnalysis(true);
}

// The analysis box of the result: verdict, where the win slipped away, the winning line.
function renderAnalysis(expected) {
  const box = $("analysis");
  const game = S.resultGame;
  const analysis = game ? S.analyses.get(game) : null;
  if (!analysis) {
    box.hidden = !expected;
    box.dataset.state = "waiting";
    $("analysis-verdict").textContent = "Analysing the deal…";
    $("analysis-slipped").textContent = "";
    $("analysis-line-info").textContent = "";
    $("btn-show-line").hidden = true;
    $("analysis-line").replaceChildren();
    return;
  }
  box.hidden = false;
  box.dataset.state = "ready";
  const word = VERDICT_WORD[analysis.verdict] || analysis.verdict;
  const verdict = $("analysis-verdict");
  verdict.replaceChildren("Deal winnable: ");
  const strong = document.createElement("span");
  strong.className = word;
  strong.textContent = word;
  verdict.append(strong);
  const slipped = analysis.slipped ?? null;
  let outcome = "";
  if (analysis.won) outcome = "You won.";
  else if (slipped !== null) {
    const move = S.slipped.get(game);
    outcome = `Your win slipped away at move ${slipped + 1}${move ? ` (${moveLabel(move)})` : ""}.`;
  } else if (analysis.verdict === "winnable") outcome = "Your game was not proved lost when it ended.";
  $("analysis-slipped").textContent = outcome;
  const line = analysis.line || [];
  $("analysis-line-info").textContent = line.length
    ? `A winning line from the opening has ${line.length} moves.` : "";
  $("btn-show-line").hidden = line.length === 0;
  const list = $("analysis-line");
  list.replaceChildren();
  for (const move of line) {
    const li = document.createElement("li");
    li.textContent = move.deal ? "deal" : `${cardLabel(move.card)} ${move.from}→${move.to}`;
    li.title = moveLabel(move);
    list.append(li);
  }
}

// Bind the result's buttons.
export function bindResults() {
  $("btn-result-new").addEventListener("click", newSolo);
  $("btn-replay").addEventListener("click", () => {
    if (S.game) send({ type: "solo_replay", game: S.game.id });
  });
  $("btn-show-line").addEventListener("click", () => {
    const list = $("analysis-line");
    list.hidden = !list.hidden;
    $("btn-show-line").setAttribute("aria-expanded", String(!list.hidden));
    $("btn-show-line").textContent = list.hidden ? "Show the winning line" : "Hide the winning line";
  });
  $("btn-rematch").addEventListener("click", askRematch);
  $("btn-watch-replay").addEventListener("click", () => {
    if (!shown) return;
    const racers = shown.msg.standings.map((s) => ({ player: s.player, name: s.name }));
    const mine = racers.find((r) => r.player === S.me.player);
    const game = shown.msg.game;
    closeResult();
    openReplay({ game, player: (mine || racers[0]).player, racers });
  });
  $("btn-result-close").addEventListener("click", () => {
    closeResult();
    if (S.mode === "game" || S.mode === "watch") setMode("lobby");
    if (S.mode === "lobby") refreshLobby(false);
  });
}

// Recompute the commitment from the revealed number and salt, in the page, and compare it
// with the one the game started with.
async function verifySeal(number, salt, commitment) {
  const out = $("verify-result");
  const computed = await sealOf(number, salt);
  const match = computed === commitment;
  out.dataset.match = String(match);
  out.textContent = match
    ? `✓ SHA-256 of "${number}:${salt}" is ${shortSeal(computed)}, the seal shown at the start: this was the deal all along.`
    : `✗ SHA-256 of "${number}:${salt}" is ${shortSeal(computed)}, not the seal shown at the start (${shortSeal(commitment)}).`;
}
