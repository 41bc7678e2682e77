// Ratings in the lobby and on the table: the rating board of the chosen variant (its top,
// or the page around the player with "Around me"), provisional ratings marked and each
// name opening that player's profile; and the "Rated" mark of the race being played.

import { send } from "./link.js";
import { ERRORS, notServed } from "./notice.js";
import { profileButton, provisionalNote, ratingCell } from "./profile.js";
import { whenLobbyShown } from "./screens.js";
import { $, S, VARIANT_TITLE, appendCells } from "./state.js";

// Places shown on the lobby's rating board.
const PAGE = 10;

// ---------------------------------------------------------------- the rating board

// Ask for the rating board of the lobby's variant (its top, or around the player).
export function refreshRatings() {
  send({ type: "rating_board", variant: $("variant").value, offset: 0, limit: PAGE, around_me: $("ratings-around").checked });
}

// `rating_page`: a page of the chosen variant's rating board, with the player's own rank.
export function onRatingPage(msg) {
  if (msg.variant !== $("variant").value) return;
  const around = $("ratings-around").checked;
  if (msg.sent && Boolean(msg.sent.around_me) !== around) return;   // the answer to the other view
  const box = $("ratings");
  box.replaceChildren();
  box.dataset.view = around ? "around" : "top";
  const variant = VARIANT_TITLE[msg.variant] || msg.variant;
  if (!msg.entries.length) {
    box.textContent = around && msg.total
      ? `You are not rated in ${variant} yet: play a rated race.`
      : `Nobody is rated in ${variant} yet: quick matches are rated.`;
    return;
  }
  const table = document.createElement("table");
  table.className = "standings leaderboard";
  table.innerHTML = "<thead><tr><th>#</th><th>Player</th><th>Rating</th><th title='rated races played'>Races</th></tr></thead>";
  const body = document.createElement("tbody");
  for (const e of msg.entries) {
    const tr = document.createElement("tr");
    tr.dataset.player = e.player;
    if (e.player === S.me.player) tr.classList.add("me");
    appendCells(tr, [e.rank, e.name, "", e.games], 1);
    if (e.player !== S.me.player) tr.children[1].replaceChildren(profileButton(e.player, e.name));
    ratingCell(tr.children[2], e.rating, e.provisional);
    body.append(tr);
  }
  table.append(body);
  const note = document.createElement("p");
  note.className = "muted small";
  note.textContent = `${msg.total} rated${msg.me ? ` · you are #${msg.me}` : ""}`;
  box.append(table, note);
  if (msg.entries.some((e) => e.provisional)) box.append(provisionalNote());
}

// An error to `rating_board`: the board says so.
export function refusedRatings(msg) {
  if (msg.request !== "rating_board") return;
  $("ratings").textContent = notServed(msg) ? "Not yet available on this server." : ERRORS[msg.code] || msg.message;
}

// ---------------------------------------------------------------- the race being played

// Show "Rated" in the header of a rated race being played (ticks with the game's clock).
export function tickRated() {
  const game = S.game;
  $("game-rated").hidden = !(game && game.options && game.options.rated);
}

// Bind the board's "Around me" and the variant; the board is asked for again whenever the
// lobby is shown.
export function bindRatings() {
  $("ratings-around").addEventListener("change", refreshRatings);
  $("variant").addEventListener("change", refreshRatings);
  whenLobbyShown(refreshRatings);
}
