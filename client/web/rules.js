// Legal destinations computed from a board view (the server has the last word).
//
// A view is {"variant", "columns": [[card|null]], "reserve_left", "cells", "foundations"}.
// Columns are numbered from 0 here and from 1 on the wire; reserve cells are "R1", "R2".

export const RANKS = "A23456789TJQK";
export const SUITS = "CDHS";

export const rankOf = (card) => RANKS.indexOf(card[0].toUpperCase());   // 0 = Ace … 12 = King
export const suitOf = (card) => card[1].toUpperCase();

// True when `card` may lead a group onto the exposed card `top` (null: empty column).
function fits(card, top, variant) {
  if (top === undefined || top === null) return false;
  if (rankOf(top) === 0) return false;               // nothing goes on an Ace
  if (rankOf(card) === 12) return false;             // a King cannot go on a card
  return suitOf(top) === suitOf(card) && rankOf(top) === rankOf(card) + 1;
}

// The card at a source: {col, row} for a column card, {cell} for a reserve cell.
export function cardAt(view, source) {
  if (source.cell !== undefined) return view.cells[source.cell] ?? null;
  const col = view.columns[source.col];
  return col ? col[source.row] ?? null : null;
}

// Column indexes (from 0) the group led by `source` may move to.
export function targetsFor(view, source) {
  const card = cardAt(view, source);
  if (!card) return [];
  const wasp = view.variant === "wasp";
  const targets = [];
  view.columns.forEach((col, index) => {
    if (source.cell === undefined && index === source.col) return;
    if (col.length === 0) {
      const wholeColumn = source.cell === undefined && source.row === 0;
      if ((wasp || rankOf(card) === 12) && !wholeColumn) targets.push(index);
    } else if (fits(card, col[col.length - 1], view.variant)) {
      targets.push(index);
    }
  });
  return targets;
}

// Every legal card move as {source, to}.
export function cardMoves(view) {
  const moves = [];
  view.columns.forEach((col, c) => {
    col.forEach((card, r) => {
      if (card) for (const to of targetsFor(view, { col: c, row: r })) moves.push({ source: { col: c, row: r }, to });
    });
  });
  (view.cells || []).forEach((card, i) => {
    if (card) for (const to of targetsFor(view, { cell: i })) moves.push({ source: { cell: i }, to });
  });
  return moves;
}

// Whether dealing the reserve is allowed under `reserveRule` ("any-time" / "when-stuck").
export function canDeal(view, reserveRule) {
  if (!view.reserve_left) return false;
  return reserveRule !== "when-stuck" || cardMoves(view).length === 0;
}

// The wire form of a move: {"card", "from", "to"} with columns from 1.
export function wireMove(view, source, to) {
  const from = source.cell !== undefined ? `R${source.cell + 1}` : source.col + 1;
  return { card: cardAt(view, source), from, to: to + 1 };
}

// Find where a wire move's card lies now: {col,row} or {cell}, or null.
export function locate(view, card) {
  if (!card) return null;
  const wanted = card.toUpperCase();
  for (let c = 0; c < view.columns.length; c++) {
    const r = view.columns[c].indexOf(wanted);
    if (r >= 0) return { col: c, row: r };
  }
  const cell = (view.cells || []).indexOf(wanted);
  return cell >= 0 ? { cell } : null;
}
