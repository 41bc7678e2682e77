// Drawing boards: cards are buttons styled with CSS, suits are Unicode symbols.

import { RANKS } from "./rules.js";

export const SUIT_SYMBOL = { C: "♣", D: "♦", H: "♥", S: "♠" };
export const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_TEXT = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
// The names a screen reader says ("seven of hearts"): the visible corner ("7♥") is hidden
// from it, and the name is the card's text (in a visually hidden span, see style.css).
const RANK_NAME = ["ace", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "jack", "queen", "king"];

export function cardName(card) {
  const rank = RANKS.indexOf(card[0].toUpperCase());
  return `${RANK_NAME[rank]} of ${SUIT_NAME[card[1].toUpperCase()]}`;
}

export function cardLabel(card) {
  const rank = RANKS.indexOf(card[0].toUpperCase());
  return `${RANK_TEXT[rank]}${SUIT_SYMBOL[card[1].toUpperCase()]}`;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// A card's name for screen readers: the text of a visually hidden span (a button's name
// then is its content, which its visible corner, hidden from them, does not contradict); a
// card that is not a button is an image of that name.
function speak(node, text) {
  if (node.tagName === "BUTTON") node.append(el("span", "sr-only", text));
  else { node.setAttribute("role", "img"); node.setAttribute("aria-label", text); }
}

// `where` ends the name: ", column 3", ", reserve cell R1" (nothing in an example).
function faceUp(card, tag, where = "") {
  const suit = card[1].toUpperCase();
  const rank = RANKS.indexOf(card[0].toUpperCase());
  const node = el(tag, `card up suit-${suit}`);
  node.dataset.card = card.toUpperCase();
  const corner = el("span", "corner");
  corner.append(el("span", "rank", RANK_TEXT[rank]), el("span", "pip", SUIT_SYMBOL[suit]));
  const center = el("span", "center", SUIT_SYMBOL[suit]);
  corner.setAttribute("aria-hidden", "true");
  center.setAttribute("aria-hidden", "true");
  node.append(corner, center);
  speak(node, `${cardName(card)}${where}`);
  return node;
}

// Build the DOM of one board view.
// opts: {interactive, selected: {col,row}|{cell}, targets: [col], hint: {source, to}|null,
//        deal: bool (hint says deal), top: false to leave out the reserve and foundations}
export function renderBoard(container, view, opts = {}) {
  const interactive = Boolean(opts.interactive);
  const tag = interactive ? "button" : "div";
  container.replaceChildren();
  container.style.setProperty("--cols", view.columns.length);
  container.dataset.variant = view.variant;

  const top = el("div", "board-top");
  const reserve = el("div", "reserve");
  if (view.cells && view.cells.length) {
    view.cells.forEach((card, i) => {
      const slot = el("div", "cell-slot");
      slot.append(el("span", "slot-label", `R${i + 1}`));
      if (card) {
        const node = faceUp(card, tag, `, reserve cell R${i + 1}`);
        node.dataset.cell = String(i);
        if (interactive) node.type = "button";
        const picked = Boolean(opts.selected && opts.selected.cell === i);
        if (picked) node.classList.add("selected");
        if (interactive) node.setAttribute("aria-pressed", String(picked));
        if (opts.hint && opts.hint.source && opts.hint.source.cell === i) node.classList.add("hinted");
        slot.append(node);
      }
      reserve.append(slot);
    });
  } else {
    const stock = el("div", "stock");
    stock.append(el("span", "stock-count", String(view.reserve_left)));
    stock.title = `${view.reserve_left} reserve cards left`;
    stock.setAttribute("role", "img");
    stock.setAttribute("aria-label", view.reserve_left
      ? `reserve: ${view.reserve_left} ${view.reserve_left === 1 ? "card" : "cards"} to deal` : "reserve: dealt");
    if (view.reserve_left) stock.classList.add("has-cards");
    if (opts.deal) stock.classList.add("hinted");
    reserve.append(stock);
  }
  const foundations = el("div", "foundations");
  // One name for the four piles: "finished runs: spades, hearts" (or none).
  foundations.setAttribute("role", "img");
  foundations.setAttribute("aria-label", `finished runs: ${view.foundations.map((suit) => SUIT_NAME[suit]).join(", ") || "none"}`);
  for (let i = 0; i < 4; i++) {
    const suit = view.foundations[i];
    const pile = el("div", suit ? `foundation suit-${suit}` : "foundation empty", suit ? SUIT_SYMBOL[suit] : "");
    if (suit) pile.title = `${SUIT_NAME[suit]} run finished`;
    foundations.append(pile);
  }
  top.append(reserve, foundations);

  const tableau = el("div", "tableau");
  const targets = new Set(opts.targets || []);
  view.columns.forEach((col, c) => {
    const column = el("div", "column");
    column.dataset.col = String(c + 1);
    const down = col.filter((card) => card === null).length;
    column.setAttribute("role", "group");
    column.setAttribute("aria-label", `Column ${c + 1}${down ? `, ${down} face down` : ""}`);
    if (targets.has(c)) column.classList.add("target");
    if (opts.hint && opts.hint.to === c) column.classList.add("hint-target");
    if (col.length === 0) {
      const slot = el(tag, "slot");
      slot.dataset.col = String(c + 1);
      speak(slot, `empty column ${c + 1}`);
      if (interactive) slot.type = "button";
      column.append(slot);
    }
    col.forEach((card, r) => {
      let node;
      if (card === null) {
        node = el("div", "card down");
        speak(node, `face-down card, column ${c + 1}`);
      } else {
        node = faceUp(card, tag, `, column ${c + 1}`);
        if (interactive) node.type = "button";
        const sel = opts.selected;
        const picked = Boolean(sel && sel.col === c && r >= sel.row);
        if (picked) node.classList.add("selected");
        if (interactive) node.setAttribute("aria-pressed", String(picked));   // picked (Enter) or not
        const hint = opts.hint && opts.hint.source;
        if (hint && hint.col === c && r >= hint.row) node.classList.add("hinted");
      }
      node.dataset.col = String(c + 1);
      node.dataset.row = String(r);
      column.append(node);
    });
    // A legal place for the picked cards says so, on the card (or empty slot) they would go on.
    const last = column.lastElementChild;
    if (interactive && targets.has(c) && last) last.querySelector(".sr-only")?.append(": the picked cards can go here");
    tableau.append(column);
  });
  if (opts.top === false) container.append(tableau);   // (an example with neither reserve nor foundations)
  else container.append(top, tableau);
}

// ---------------------------------------------------------------- fitting the screen

// How much of a card shows under the next one, as a share of the card's width: the CSS
// fan (see style.css) and the least that still reads (a face-up card's rank and suit; a
// face-down card need only be counted). A card is 1.4 times as tall as it is wide.
const FAN = { up: 0.32, first: 0.22, down: 0.16 };
const LEAST = { up: 0.26, first: 0.12, down: 0.05 };
const CARD_RATIO = 1.4;
const COLUMN_PAD = 8;        // the column's padding under its last card (style.css)

// The shares shown in a column of `gaps` ({up, first, down}: how many cards follow a
// face-up card, a face-down one face up, a face-down one face down) of width `w`, for it
// to fit in `height` px: face-down cards close up first, then face-up ones, down to LEAST.
function fan(gaps, w, height) {
  const room = height - CARD_RATIO * w - COLUMN_PAD;
  const span = (s) => w * (s.up * gaps.up + s.first * gaps.first + s.down * gaps.down);
  if (span(FAN) <= room) return FAN;
  const downRoom = room - w * FAN.up * gaps.up;
  const downFull = w * (FAN.first * gaps.first + FAN.down * gaps.down);
  const downLeast = w * (LEAST.first * gaps.first + LEAST.down * gaps.down);
  if (downRoom >= downLeast) {
    const k = downFull ? downRoom / downFull : 1;
    return { up: FAN.up, first: FAN.first * k, down: FAN.down * k };
  }
  const upRoom = room - downLeast;
  const up = gaps.up ? Math.max(LEAST.up, upRoom / (w * gaps.up)) : FAN.up;
  return { up, first: LEAST.first, down: LEAST.down };
}

function gapsOf(column) {
  const gaps = { up: 0, first: 0, down: 0 };
  let previous = null;
  for (const card of column.querySelectorAll(":scope > .card")) {
    const down = card.classList.contains("down");
    if (previous !== null) {
      if (!previous) gaps.up += 1;
      else if (down) gaps.down += 1;
      else gaps.first += 1;
    }
    previous = down;
  }
  return gaps;
}

// Fit a drawn board's tableau in the window: it takes the height left under its top
// (less `below` px kept for what follows it) and never more, so that its columns growing
// move nothing; each column squeezes its fan to fit, down to a readable least; a column
// that still would not fit narrows the cards.
export function fitTableau(container, below) {
  const tableau = container.querySelector(".tableau");
  if (!tableau || !tableau.isConnected || tableau.getClientRects().length === 0) return;
  const top = tableau.getBoundingClientRect().top + window.scrollY;
  const columns = [...tableau.querySelectorAll(":scope > .column")];
  const first = columns[0];
  if (!first) return;
  const least = CARD_RATIO * first.clientWidth * 2;
  const height = Math.max(least, Math.floor(window.innerHeight - top - below));
  tableau.style.height = `${height}px`;
  tableau.style.maxWidth = "";
  let narrowest = Infinity;
  for (const column of columns) {
    const gaps = gapsOf(column);
    const w = column.clientWidth;
    const shown = fan(gaps, w, height);
    column.style.setProperty("--show-up", `${(shown.up * 100).toFixed(2)}%`);
    column.style.setProperty("--show-first", `${(shown.first * 100).toFixed(2)}%`);
    column.style.setProperty("--show-down", `${(shown.down * 100).toFixed(2)}%`);
    const needed = CARD_RATIO + shown.up * gaps.up + shown.first * gaps.first + shown.down * gaps.down;
    narrowest = Math.min(narrowest, (height - COLUMN_PAD) / needed);
  }
  if (narrowest < first.clientWidth) {
    const gap = parseFloat(getComputedStyle(tableau).columnGap) || 0;
    tableau.style.maxWidth = `${Math.floor(columns.length * (narrowest + gap))}px`;
  }
}
