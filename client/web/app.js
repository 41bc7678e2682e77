// Scorpion Race browser client: lobby, rooms, quick match, racing, daily, spectating,
// ratings, profiles and replays.
// Speaks the JSON subprotocol described in docs/protocol.md.
//
// This is the entry point: the table of server messages and their handlers, the binding of
// the page, and the start of the link. Each screen lives in its own module (see
// docs/web.md). They are layered, each importing only from those before it, so no two
// import each other:
//   state -> notice -> link -> screens -> focus -> howto -> table -> daily -> replay -> profile
//   -> ratings -> results -> challenge -> race, spectate, lobby, account -> session -> app

import { bindAccount, onPasskeyChallenge, onSessionsList } from "./account.js";
import {
  bindChallenges, noteChallengeEvent, onChallenge, onChallengeBoard, onChallengeTaken, openLinkedChallenge, resultShown,
} from "./challenge.js";
import { bindDaily, onDaily, onLeaderboard, onSaved, onStats, refreshLobby, tickDaily } from "./daily.js";
import { connect, link, onPong } from "./link.js";
import { bindLobby, onCountdown, onMatchFound, onQueueTimeout, onQueued, onRoom, tickCountdown } from "./lobby.js";
import { bindHowto } from "./howto.js";
import { bindNotice, isBusy, notify } from "./notice.js";
import { askProfileAgain, bindProfile, onProfile, refusedProfile } from "./profile.js";
import { onBatch, onEvent, onFinishInfo, onHints, onSnapshot, onWinnableInfo } from "./race.js";
import { bindRatings, onRatingPage, refreshRatings, refusedRatings, tickRated } from "./ratings.js";
import { askReplayAgain, bindReplay, onReplayPositions, refusedReplay } from "./replay.js";
import { bindResults, onAnalysis, onRatingChange, onRematchOffered, onReplayLog } from "./results.js";
import { setMode } from "./screens.js";
import { onError, onForgotten, onOk, onSession, onWelcome } from "./session.js";
import {
  bindSpectate, onGames, onGamesUpdate, onSpectate, onSpectateBatch, onSpectateEvent, onSpectators, onWatchEnded,
  tickWatchClock,
} from "./spectate.js";
import { $, S } from "./state.js";
import { addTicker, bindTable, renderGame, tickClock } from "./table.js";

// ---------------------------------------------------------------- messages

// A race event goes to the game being played, except the end of the race being watched.
function onRaceEvent(msg) {
  if (S.watch && msg.type === "race_ended" && msg.game === S.watch.id) return onWatchEnded(msg);
  onEvent(msg);
  noteChallengeEvent(msg);                          // challenge.js: a challenge game's board
  if (msg.type === "race_ended" && S.resultOpen && S.resultGame === msg.game) resultShown(msg);
}

// The welcome (session.js), after which the rating board is asked for; a replay or profile
// being looked at stays on screen across a reconnection (what it awaited asked for again).
function onWelcomeBack(msg) {
  const looking = S.mode === "replay" || S.mode === "profile" ? S.mode : null;
  onWelcome(msg);
  refreshRatings();
  openLinkedChallenge();                            // challenge.js: a ?challenge= link
  if (looking && S.mode === "lobby") {
    setMode(looking);
    askReplayAgain();
    askProfileAgain();
  }
}

// An error (session.js), once the screen waiting for what it refused has stopped waiting
// (unless a busy server's refusal goes again: see link.js).
function onRefused(msg) {
  if (!isBusy(msg)) {
    refusedReplay(msg);
    refusedProfile(msg);
    refusedRatings(msg);
  }
  onError(msg);
}

// Each message type the server sends, and the function that handles it.
const HANDLERS = {
  welcome: onWelcomeBack,            // session.js, then ratings.js
  pong: onPong,                      // link.js
  ok: onOk,                          // session.js
  error: onRefused,                  // replay.js, profile.js, ratings.js, then session.js
  room: onRoom,                      // lobby.js
  countdown: onCountdown,            // lobby.js
  queued: onQueued,                  // lobby.js
  match_found: onMatchFound,         // lobby.js
  queue_timeout: onQueueTimeout,     // lobby.js
  race_started: onRaceEvent,         // race.js
  accepted: onRaceEvent,             // race.js
  progress: onRaceEvent,             // race.js
  race_ended: onRaceEvent,           // race.js, or spectate.js for the race being watched
  batch: onBatch,                    // race.js
  snapshot: onSnapshot,              // race.js
  hints: onHints,                    // race.js
  games: onGames,                    // spectate.js
  games_update: onGamesUpdate,       // spectate.js
  spectate: onSpectate,              // spectate.js
  spectate_event: onSpectateEvent,   // spectate.js
  spectate_batch: onSpectateBatch,   // spectate.js
  spectators: onSpectators,          // spectate.js
  daily: onDaily,                    // daily.js
  leaderboard_page: onLeaderboard,   // daily.js
  stats_info: onStats,               // daily.js
  saved_games_list: onSaved,         // daily.js
  forgotten: onForgotten,            // session.js
  session: onSession,                // session.js, then account.js
  sessions_list: onSessionsList,     // account.js
  passkey_challenge: onPasskeyChallenge, // account.js
  analysis: onAnalysis,              // results.js
  winnable_info: onWinnableInfo,     // race.js
  finish_info: onFinishInfo,         // race.js
  replay_log: onReplayLog,           // results.js
  rematch_offered: onRematchOffered, // results.js
  rating_change: onRatingChange,     // results.js
  profile_info: onProfile,           // profile.js
  rating_page: onRatingPage,         // ratings.js
  replay_positions_info: onReplayPositions, // replay.js
  challenge: onChallenge,            // challenge.js
  challenge_board_info: onChallengeBoard, // challenge.js
  challenge_taken: onChallengeTaken, // challenge.js
};

function onMessage(msg) {
  // Newer servers may send types this page does not know: they are ignored.
  if (Object.hasOwn(HANDLERS, msg.type)) HANDLERS[msg.type](msg);
}

// ---------------------------------------------------------------- the page

function bind() {
  bindNotice();
  bindLobby();
  bindTable();
  bindHowto(renderGame);
  bindDaily();
  bindResults();
  bindSpectate();
  bindReplay();
  bindProfile();
  bindRatings();
  bindChallenges();
  bindAccount();
  $("home-link").addEventListener("click", (event) => {
    if (S.mode === "lobby") return;
    event.preventDefault();
    if (S.mode === "game" && S.game && !S.game.ended && S.game.status === "playing") {
      notify("You are racing: resign first to leave this race.");
    } else if (S.mode === "watch") {
      $("btn-unwatch").click();
    } else if (S.mode === "game") {
      $("btn-result-close").click();
    } else if (S.mode === "replay" || S.mode === "profile") {
      S.replay = null;
      S.profile = null;
      setMode("lobby");
      refreshLobby(false);
    }
  });
  addTicker(tickWatchClock);
  addTicker(tickCountdown);
  addTicker(tickDaily);
  addTicker(tickRated);
  setInterval(tickClock, 250);
}

bind();
setMode("lobby");
connect(onMessage);
window.scorpion = { state: S, link };      // for debugging (and tests) from the console
