// Drawing boards: cards are buttons styled with CSS, suits are Unicode symbols.

import { RANKS } from "./rules.js";

export const SUIT_SYMBOL = { C: "♣", D: "♦", H: "♥", S: "♠" };
export const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_TEXT = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const RANK_NAME = ["Ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "Jack", "Queen", "King"];

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

function faceUp(card, tag) {
  const suit = card[1].toUpperCase();
  const rank = RANKS.indexOf(card[0].toUpperCase());
  const node = el(tag, `card up suit-${suit}`);
  node.dataset.card = card.toUpperCase();
  const corner = el("span", "corner");
  corner.append(el("span", "rank", RANK_TEXT[rank]), el("span", "pip", SUIT_SYMBOL[suit]));
  node.append(corner, el("span", "center", SUIT_SYMBOL[suit]));
  node.setAttribute("aria-label", cardName(card));
  return node;
}

// Build the DOM of one board view.
// opts: {interactive, selected: {col,row}|{cell}, targets: [col], hint: {source, to}|null,
//        deal: bool (hint says deal)}
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
        const node = faceUp(card, tag);
        node.dataset.cell = String(i);
        if (interactive) node.type = "button";
        node.setAttribute("aria-label", `${cardName(card)}, reserve cell R${i + 1}`);
        if (opts.selected && opts.selected.cell === i) node.classList.add("selected");
        if (opts.hint && opts.hint.source && opts.hint.source.cell === i) node.classList.add("hinted");
        slot.append(node);
      }
      reserve.append(slot);
    });
  } else {
    const stock = el("div", "stock");
    stock.append(el("span", "stock-count", String(view.reserve_left)));
    stock.title = `${view.reserve_left} reserve cards left`;
    stock.setAttribute("aria-label", `Reserve: ${view.reserve_left} cards left`);
    if (view.reserve_left) stock.classList.add("has-cards");
    if (opts.deal) stock.classList.add("hinted");
    reserve.append(stock);
  }
  const foundations = el("div", "foundations");
  foundations.setAttribute("aria-label", `Finished runs: ${view.foundations.length}`);
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
      slot.setAttribute("aria-label", `Empty column ${c + 1}`);
      if (interactive) slot.type = "button";
      column.append(slot);
    }
    col.forEach((card, r) => {
      let node;
      if (card === null) {
        node = el("div", "card down");
        node.setAttribute("aria-hidden", "true");
      } else {
        node = faceUp(card, tag);
        if (interactive) node.type = "button";
        node.setAttribute("aria-label", `${cardName(card)}, column ${c + 1}`);
        const sel = opts.selected;
        if (sel && sel.col === c && r >= sel.row) node.classList.add("selected");
        const hint = opts.hint && opts.hint.source;
        if (hint && hint.col === c && r >= hint.row) node.classList.add("hinted");
      }
      node.dataset.col = String(c + 1);
      node.dataset.row = String(r);
      column.append(node);
    });
    tableau.append(column);
  });
  container.append(top, tableau);
}
