// Which screen is shown (lobby, room, queue, game, watch, replay or profile), and whether
// the live games list is followed for it.

import { send } from "./link.js";
import { dropHintNotice } from "./notice.js";
import { $, S, myName } from "./state.js";

// ---------------------------------------------------------------- screens

// Whether the live games list is wanted now. It is followed in the lobby, where it is
// shown, and under the result of a watched race, where a rematch of that race is offered
// when it starts.
export function wantGames() {
  return S.mode === "lobby" || Boolean(S.mode === "watch" && S.watch && S.watch.ended);
}

// Subscribe to the live games list, or unsubscribe, as the screen now wants it.
export function followGames() {
  const follow = wantGames();
  if (S.welcomed && follow !== S.followingGames) send({ type: "games_list", subscribe: follow });
  S.followingGames = S.welcomed && follow;
}

// What is done each time the lobby is shown again after another screen (see whenLobbyShown).
const lobbyWatchers = [];

// Run `fn` each time the lobby is shown again after another screen (to bring its boxes up
// to date).
export function whenLobbyShown(fn) {
  lobbyWatchers.push(fn);
}

// Show one screen (lobby | room | queue | game | watch | replay | profile) and hide the others.
export function setMode(mode) {
  if (mode !== "room" && location.search) history.replaceState(null, "", location.pathname);
  const before = S.mode;
  if (mode !== before) dropHintNotice();
  S.mode = mode;
  followGames();
  for (const name of ["lobby", "room", "queue", "game", "watch", "replay", "profile"]) $(`screen-${name}`).hidden = name !== mode;
  if (mode === "lobby") {
    $("name-input").value = myName();
    if (!S.resultOpen) $("result").hidden = true;
    if (before !== "lobby") for (const fn of lobbyWatchers) fn();
  }
}
