// The page's shared state and the small helpers every screen uses: the state object `S`,
// the names of variants and statuses, `$`, the server's clock, the player's name, and the
// formatting of times, ratings and table rows.

// The element with this id.
export const $ = (id) => document.getElementById(id);

// The title shown for each variant.
export const VARIANT_TITLE = {
  scorpion: "Scorpion", "scorpion-ii": "Scorpion II", wasp: "Wasp", "three-blind-mice": "Three Blind Mice",
};

// The word shown for each racer status.
export const STATUS_TEXT = {
  playing: "playing", finished: "finished", stuck: "stuck", resigned: "resigned", left: "left",
};

// ---------------------------------------------------------------- state

// Everything the page knows; every module reads and changes it in place.
export const S = {
  me: { player: null, name: null },
  token: localStorage.getItem("scorpion.token") || null,
  offset: 0,                 // server clock minus local clock, ms
  mode: "lobby",             // lobby | room | queue | game | watch | replay | profile
  welcomed: false,
  room: null,                // last `room` message
  countdownStart: null,
  queueVariant: null,
  queueRated: true,          // whether the quick match asked for is rated (asked again after a reconnection)
  game: null,                // the race being played (see newGame in race.js)
  selected: null,            // {col,row} | {cell}
  hint: null,                // {source, to} | {deal:true}
  pending: null,             // ref of the game request awaiting its answer
  unsure: null,              // {action, resume}: a game action of unknown outcome, being settled
  watch: null,               // the race being watched
  games: new Map(),          // live games list
  linkRoom: new URLSearchParams(location.search).get("room"),
  daily: null,
  outbox: [],                // lobby requests made before the server's welcome
  followingGames: false,
  analyses: new Map(),       // game id -> `analysis` (the solver's verdict on a finished game)
  rematchOffers: new Map(),  // game id -> `rematch_offered` (another racer opened a rematch room)
  slipped: new Map(),        // game id -> the player's move after which the win slipped away
  resultGame: null,          // the game whose result is shown
  resultOpen: false,         // whether the result is shown
  lastJoin: null,            // the room code last asked for with room_join (watched if started)
  dailyAsked: null,          // the day whose end made the lobby ask for the next day's deal
  watchRematch: null,        // the rematch a spectator's result offers to watch (its game id)
  winnable: null,            // last `winnable_info` (shown while the board is unchanged)
  ratingChanges: new Map(),  // game id -> `rating_change` (every racer's rating before and after)
  replay: null,              // the replay being stepped through (see openReplay in replay.js)
  profile: null,             // the profile shown: {player (null: one's own), info: `profile_info` | null}
};

// The server's clock now, in ms.
export const serverNow = () => Date.now() + S.offset;

function defaultName() {
  return `Player ${Math.floor(100 + Math.random() * 900)}`;
}

// The player's name, kept in localStorage (a new random one the first time).
export function myName() {
  let name = (localStorage.getItem("scorpion.name") || "").trim();
  if (!name) {
    name = defaultName();
    localStorage.setItem("scorpion.name", name);
  }
  return name;
}

// ---------------------------------------------------------------- formatting

// A duration in seconds as m:ss or h:mm:ss.
export function clock(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

// A time after the start in ms, as m:ss.t (tenths).
export function clockTenths(ms) {
  const tenths = Math.max(0, Math.floor(ms / 100));
  return `${clock(tenths / 10)}.${tenths % 10}`;
}

// What a provisional rating's mark ("1523?") means.
// "1 move", "2 moves".
export function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

export const PROVISIONAL = "Provisional: too few recent rated races to trust this rating yet";

// A rating as shown: provisional ones marked with a question mark, e.g. "1523?".
export function ratingText(rating, provisional) {
  return `${rating}${provisional ? "?" : ""}`;
}

// A rating change with its sign: "+12", "−8", "±0".
export function changeText(change) {
  if (change > 0) return `+${change}`;
  return change < 0 ? `−${-change}` : "±0";
}

// A table row's cells, one per text. The player's name (cell `nameAt`) may be 24
// characters with no space: it may break anywhere rather than widen the table.
export function appendCells(tr, texts, nameAt = -1) {
  texts.forEach((text, i) => {
    const td = document.createElement("td");
    td.textContent = text;
    if (i === nameAt) td.className = "who";
    tr.append(td);
  });
}
