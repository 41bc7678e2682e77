// Keyboard focus on the board (roving focus), for table.js and the keys it binds.

import { $, S } from "./state.js";

// ---------------------------------------------------------------- roving focus

// Roving focus: one focusable element per board; arrows move between columns and cards.
function focusables() {
  return [...$("board").querySelectorAll("button")];
}

// Give the board one focusable element: the one focused before the redraw (`previous`),
// else the picked card, else the last card of column 1.
export function setupRovingFocus(previous) {
  const items = focusables();
  if (!items.length) return;
  items.forEach((b) => { b.tabIndex = -1; });
  let target = null;
  if (previous) {
    target = previous.cell !== undefined
      ? items.find((b) => b.dataset.cell === previous.cell)
      : columnItems(Number(previous.col)).find((b) => b.dataset.row === previous.row)
        || columnItems(Number(previous.col)).at(-1);
  }
  target = target || items.find((b) => b.classList.contains("selected")) || columnItems(1).at(-1) || items[0];
  target.tabIndex = 0;
  if (previous) target.focus();
}

function columnItems(col) {
  return [...$("board").querySelectorAll(`.column[data-col="${col}"] button`)];
}

// Focus the board's focusable element, without scrolling.
export function focusBoard() {
  const first = $("board").querySelector("button[tabindex='0']");
  if (first) first.focus({ preventScroll: true });
}

// Move the focus from `node` by dx columns or dy cards (the cells sit above the columns).
export function moveFocus(node, dx, dy) {
  let next = null;
  const cols = S.game.view.columns.length;
  if (node.dataset.cell !== undefined) {
    const cells = [...$("board").querySelectorAll("button[data-cell]")];
    const i = cells.indexOf(node);
    if (dx) next = cells[i + dx];
    if (dy > 0 || (!next && dx)) next = columnItems(1).at(-1);
  } else {
    const col = Number(node.dataset.col);
    const items = columnItems(col);
    const i = items.indexOf(node);
    if (dy) {
      next = items[i + dy];
      if (!next && dy < 0) next = $("board").querySelector("button[data-cell]");
    }
    if (dx) {
      for (let c = col + dx; c >= 1 && c <= cols; c += dx) {
        const there = columnItems(c);
        if (there.length) { next = there.at(-1); break; }
      }
    }
  }
  if (next) {
    node.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  }
}
