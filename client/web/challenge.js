// Challenges: racing a friend's recorded run (its ghosts), and sending one's own.
//
// A link `?challenge=CODE` opens the challenge's box in the lobby: its ghosts, its board
// (`challenge_board`) and *Race the ghosts* (`challenge_take`). The ghosts race as rivals do
// (their `progress` comes as a live rival's), so the game screen needs nothing new. The
// lobby's *Challenge a friend* plays a fresh deal first (`challenge_new`); the result dialog's
// makes a challenge of the game just finished (`challenge_create`); either way the link to
// send is shown in the result (`challenge`). A challenge game's result shows its board.

import { send } from "./link.js";
import { notify } from "./notice.js";
import { $, S, STATUS_TEXT, appendCells, clock } from "./state.js";

const linkOf = (code) => `${location.origin}/?challenge=${code}`;

// The challenge opened by a link, or taken: its code.
let opened = new URLSearchParams(location.search).get("challenge");
let taking = null;       // the code of the challenge being raced (its board follows the result)
let made = null;         // the game whose `challenge` is awaited for the result dialog
let boardAsks = 0;       // the result's board asked for again while the taker's entry is missing

// Ask for the linked challenge once the session is open (from the welcome).
export function openLinkedChallenge() {
  if (opened) send({ type: "challenge_board", code: opened.toUpperCase() });
}

function ghostList(ghosts) {
  return ghosts.map((g) => `${g.name} (${g.score} pts, ${STATUS_TEXT[g.status] || g.status})`).join(", ");
}

function fillBoard(body, entries) {
  body.replaceChildren();
  for (const e of entries) {
    const tr = document.createElement("tr");
    if (e.player === S.me.player) tr.classList.add("me");
    appendCells(tr, [e.rank, e.name, e.score, clock(e.elapsed), STATUS_TEXT[e.status] || e.status, e.place]);
    body.append(tr);
  }
}

// `challenge_board_info`: the linked challenge's box in the lobby, or the result's board.
export function onChallengeBoard(msg) {
  if (S.resultOpen && taking === msg.code) {
    $("result-challenge").hidden = false;
    $("result-challenge-text").textContent = `Challenge ${msg.code}: ghosts ${ghostList(msg.ghosts)}.`;
    $("result-challenge-link").value = linkOf(msg.code);
    $("result-challenge-table").hidden = false;
    fillBoard($("result-challenge-board"), msg.entries);
    // The result is put on the board just after the race ends: ask again until it is there.
    if (!msg.entries.some((e) => e.player === S.me.player) && boardAsks < 10) {
      boardAsks += 1;
      const code = msg.code;
      setTimeout(() => { if (taking === code) send({ type: "challenge_board", code }); }, 300);
    }
    return;
  }
  opened = msg.code;
  $("challenge-box").hidden = false;
  $("challenge-title").textContent = `Challenge ${msg.code}`;
  $("challenge-ghosts").textContent = `Race the recorded runs of ${ghostList(msg.ghosts)} on the same deal.`;
  $("challenge-link").value = linkOf(msg.code);
  fillBoard($("challenge-board"), msg.entries);
  $("challenge-board-wrap").hidden = !msg.entries.length;
}

// `challenge`: a challenge was made (asked from a result, or a fresh deal's run ended).
export function onChallenge(msg) {
  const text = `Challenge ${msg.code} made: send this link (kept until ${new Date(msg.expires).toLocaleDateString()}).`;
  if (S.resultOpen) {
    $("result-challenge").hidden = false;
    $("result-challenge-text").textContent = text;
    $("result-challenge-link").value = linkOf(msg.code);
    $("btn-challenge-friend").disabled = true;
  } else {
    notify(text, linkOf(msg.code));
  }
  made = null;
}

// `challenge_taken`: someone raced one of this player's challenges.
export function onChallengeTaken(msg) {
  const e = msg.entry;
  notify(`${e.name} took your challenge ${msg.code}: ${e.score} points, place ${e.place}.`);
}

// A race event of the game being played: a challenge game's result shows its board.
export function noteChallengeEvent(msg) {
  if (msg.type === "race_started") {
    const ghost = (msg.roster || []).some((r) => r.player.startsWith("ghost-"));
    if (!ghost || msg.mode !== "challenge") taking = null;
  } else if (msg.type === "race_ended" && taking && S.game && S.game.id === msg.game) {
    boardAsks = 0;
    send({ type: "challenge_board", code: taking });
  }
}

// The result dialog opened: offer *Challenge a friend* for a game of the player's.
export function resultShown(msg) {
  $("result-challenge").hidden = true;
  $("result-challenge-table").hidden = true;
  const mine = msg.standings.some((s) => s.player === S.me.player);
  const daily = S.game && S.game.id === msg.game && S.game.mode === "daily";
  $("btn-challenge-friend").hidden = !mine || !msg.number || daily;
  $("btn-challenge-friend").disabled = false;
}

export function bindChallenges() {
  $("btn-challenge-new").addEventListener("click", () => {
    taking = null;
    send({ type: "challenge_new", variant: $("variant").value });
  });
  $("btn-challenge-take").addEventListener("click", () => {
    if (!opened) return;
    taking = opened.toUpperCase();
    $("challenge-box").hidden = true;
    send({ type: "challenge_take", code: taking });
  });
  $("btn-challenge-friend").addEventListener("click", () => {
    if (!S.resultGame) return;
    made = S.resultGame;
    $("btn-challenge-friend").disabled = true;
    send({ type: "challenge_create", game: made });
  });
  $("btn-challenge-close").addEventListener("click", () => {
    opened = null;
    $("challenge-box").hidden = true;
  });
}
