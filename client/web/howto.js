// How to play: the rules dialog (reachable from every screen by the top bar's button), its
// examples drawn with the page's own cards, and the short guide shown on a player's first
// games until dismissed (remembered in localStorage).

import { renderBoard } from "./cards.js";
import { $, VARIANT_TITLE } from "./state.js";

const GUIDE_SEEN = "scorpion.guide.seen";

// A small view for an example: `columns` as lists of cards (null: face down).
function view(columns, extra = {}) {
  return { variant: "scorpion", columns, reserve_left: 0, cells: [], foundations: [], ...extra };
}

// The opening layout of a variant: face-down cards where it deals them, face-up ones (any
// cards: the layout is what is shown) elsewhere.
function layout(columns, rows, downColumns, variant, extra) {
  const pack = [];
  for (const suit of "SHDC") for (const rank of "KQJT98765432A") pack.push(`${rank}${suit}`);
  let next = 0;
  const cols = [];
  for (let c = 0; c < columns; c++) {
    const col = [];
    for (let r = 0; r < rows; r++) col.push(r < 3 && downColumns.includes(c) ? null : pack[(next++ * 11) % 52]);
    cols.push(col);
  }
  return view(cols, { variant, ...extra });
}

const EXAMPLES = {
  "move-before": view([[null, "8S"], ["5C", null, "7S", "4D"], ["2H"]]),
  "move-after": view([[null, "8S", "7S", "4D"], ["5C", "QD"], ["2H"]]),
  empty: view([["9C"], ["3D", "KH", "QH"], []]),
  "deal-before": view([["6S"], ["JD"], ["9H"], ["2C"]], { reserve_left: 3 }),
  "deal-after": view([["6S", "4H"], ["JD", "TC"], ["9H", "KS"], ["2C"]], { top: true }),
  run: view([["KH", "QH", "JH", "TH", "9H", "8H", "7H", "6H", "5H", "4H", "3H", "2H"], ["AH"], ["5S"]],
    { foundations: ["S"] }),
  "layout-scorpion": layout(7, 7, [0, 1, 2, 3], "scorpion", { reserve_left: 3 }),
  "layout-scorpion-ii": layout(7, 7, [0, 1, 2], "scorpion-ii", { reserve_left: 3 }),
  "layout-three-blind-mice": layout(10, 5, [7, 8, 9], "three-blind-mice", { cells: ["QS", "3D"] }),
};

let drawn = false;

// Open the rules (drawing their examples the first time).
export function openHowto() {
  if (!drawn) {
    for (const node of document.querySelectorAll("#howto [data-example]")) {
      const example = EXAMPLES[node.dataset.example];
      const top = Boolean(example.top || example.reserve_left || example.cells.length || example.foundations.length);
      renderBoard(node, example, { top });
      node.setAttribute("role", "img");
      node.setAttribute("aria-label", node.closest("figure").querySelector("figcaption").textContent);
    }
    drawn = true;
  }
  const dialog = $("howto");
  if (!dialog.open) dialog.showModal();
}

// The first-game guide, for the variant being played (shown until dismissed).
const GUIDE = {
  scorpion: "an empty column takes only a King.",
  "scorpion-ii": "an empty column takes only a King.",
  wasp: "in Wasp any card may fill an empty column.",
  "three-blind-mice": "an empty column takes only a King; the two cards in R1 and R2 may be played onto the columns.",
};

// Show or hide the guide on the table: shown in `variant`'s game until dismissed (and
// kept when the game ends: it going would move the board).
export function renderGuide(variant) {
  const seen = localStorage.getItem(GUIDE_SEEN) === "1";
  $("guide").hidden = seen;
  if (seen) return;
  $("guide-text").textContent = `First game of ${VARIANT_TITLE[variant] || "Scorpion"}? Build four runs, King down to Ace `
    + "of one suit. Click a face-up card, then a highlighted column: the cards on it go too; "
    + `${GUIDE[variant] || GUIDE.scorpion}`;
}

// Bind the rules' buttons and the guide's; `redraw` draws the table again (the guide gone).
export function bindHowto(redraw) {
  $("btn-howto").addEventListener("click", openHowto);
  $("btn-guide-rules").addEventListener("click", openHowto);
  $("btn-howto-close").addEventListener("click", () => $("howto").close());
  $("btn-guide-close").addEventListener("click", () => {
    localStorage.setItem(GUIDE_SEEN, "1");
    $("guide").hidden = true;
    redraw();
  });
}
