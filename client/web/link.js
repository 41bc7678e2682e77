// The page's connection to the server: hello, connection states and close reasons, and
// `send`, which holds lobby requests back until the server's welcome. While the server's
// storage is out of reach for a moment, a request it refused as busy goes again after the
// delay it asked for, and a game action whose outcome it could not confirm is settled by
// resuming the game.

import { Link } from "./net.js";
import { clearBusy, isBusy, notify, showBusy } from "./notice.js";
import { $, S, myName } from "./state.js";

// ---------------------------------------------------------------- link

const wsUrl = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/`;
let handle = () => {};       // the page's message handler, given to connect()

// The websocket link (net.js) to the server this page came from.
export const link = new Link(wsUrl, { onMessage: (msg) => { noteAnswer(msg); handle(msg); }, onOpen, onState });

function onOpen() {
  S.welcomed = false;
  S.outbox = [];
  S.pending = null;
  S.unsure = null;       // the welcome's resume brings the board up to date
  sayHello();
}

// What the page calls its device in the sessions list: the browser and its system.
export function deviceName() {
  const ua = navigator.userAgent;
  const browser = /Firefox\//.test(ua) ? "Firefox" : /Edg\//.test(ua) ? "Edge" : /Chrom(e|ium)\//.test(ua) ? "Chromium" : /Safari\//.test(ua) ? "Safari" : "Browser";
  const system = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS X/.test(ua) ? "macOS" : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : "";
  return system ? `${browser} on ${system}` : browser;
}

// Say hello: the player's name, and the saved token if there is one.
export function sayHello() {
  const hello = { type: "hello", name: myName(), client: `scorpion-web 0.1, ${deviceName()}` };
  if (S.token) hello.token = S.token;
  link.send(hello);
}

const CLOSE_REASONS = {
  1001: "The server is shutting down; trying again…",
  1008: "The server closed the connection: too many messages too fast. Reconnecting…",
  1009: "The server refused a message that was too large. Reconnecting…",
  1011: "The server failed; reconnecting and resuming…",
  1012: "The server is restarting; reconnecting…",
};

function onState(state, event) {
  if (event && event.code === 1008 && event.reason === "session revoked") {
    notify("This browser was signed out from another one: playing as a guest.");
  } else if (event && CLOSE_REASONS[event.code]) notify(CLOSE_REASONS[event.code]);
  const conn = $("conn");
  conn.dataset.state = state;
  conn.textContent = { connecting: "Connecting…", open: "Online", reconnecting: "Reconnecting…", closed: "Offline" }[state];
  document.body.classList.toggle("offline", state !== "open");
  if (state !== "open") S.welcomed = false;
}

// Send a request; returns its ref (null when held back until the welcome, or not connected).
export function send(message) {
  if (!S.welcomed && link.isOpen) {
    S.outbox.push(message);          // sent as soon as the server has welcomed us
    return null;
  }
  const ref = link.send(message);
  if (ref === null) notify("Not connected to the server: reconnecting…");
  return ref;
}

// `pong`: the server's clock, against ours.
export function onPong(msg) {
  S.offset = msg.now - Date.now();
}

// Connect, hand every message from the server to `onMessage`, and ping every 30 s.
export function connect(onMessage) {
  handle = onMessage;
  setInterval(() => { if (link.isOpen && S.welcomed) link.send({ type: "ping" }); }, 30000);
  link.connect();
}

// ---------------------------------------------------------------- a busy server

// The requests about the game being played (one at a time: see gameRequest in table.js).
export const GAME_REQUESTS = new Set(["move", "deal", "undo", "hint", "resign", "winnable", "finish"]);

// The game actions the server may answer with `outcome_unknown`.
const ACTIONS = new Set(["move", "deal", "undo", "resign"]);

// How long (ms) a request the server refused as busy is sent again before its error shows.
export const BUSY_FOR = 30000;

// S.pending while a game request waits to go again: no other game request meanwhile.
const WAITING = "waiting";

// The requests a busy server refused, and when it first did.
const busySince = new WeakMap();

// An answer (not an error) to a request the server had refused as busy: it serves again.
function noteAnswer(msg) {
  if (msg.type === "error" || !msg.sent || !busySince.has(msg.sent)) return;
  busySince.delete(msg.sent);
  clearBusy();
}

// The delay before `request` goes again (the server's, and a little more), or null once
// the page has been sending it for BUSY_FOR.
function busyDelay(request, retryAfter) {
  const first = busySince.get(request) ?? Date.now();
  const wait = retryAfter * (1 + Math.random() / 5);
  if (Date.now() + wait - first > BUSY_FOR) {
    busySince.delete(request);
    return null;
  }
  busySince.set(request, first);
  return wait;
}

// A game request's ref is the one awaited, for 6 s at most (one game request at a time).
export function holdPending(ref) {
  S.pending = ref;
  if (ref !== null) setTimeout(() => { if (S.pending === ref) S.pending = null; }, 6000);
}

// `error` with `retry_after_ms` to a request of any kind: `unavailable` says it was not
// carried out, so the same request goes again after the delay. Returns whether it will
// (false once the page has tried for BUSY_FOR: the error is then shown).
export function retryLater(msg) {
  if (msg.code !== "unavailable" || !isBusy(msg) || !msg.sent) return false;
  const request = msg.sent;
  const wait = busyDelay(request, msg.retry_after_ms);
  if (wait === null) return false;
  const ws = link.ws;
  if (GAME_REQUESTS.has(request.type)) S.pending = WAITING;
  showBusy();
  setTimeout(() => sendAgain(request, ws), wait);
  return true;
}

function sendAgain(request, ws) {
  if (request.type === "hello") {
    if (link.ws === ws && !S.welcomed) link.send(request);   // a new connection says hello itself
    return;
  }
  if (!GAME_REQUESTS.has(request.type)) { send(request); return; }
  const game = S.game;
  const waited = S.pending === WAITING;
  if (waited) S.pending = null;
  if (!waited || !game || game.id !== request.game || game.ended) { clearBusy(); return; }  // overtaken
  holdPending(send(request));
}

// `outcome_unknown` to a game action: it may or may not have been applied. After the delay
// the game is resumed from the action's version (settleResumed reads the answer) rather
// than the action sent blindly again. Returns whether it will be (false once the page has
// tried for BUSY_FOR).
export function settleLater(msg) {
  if (msg.code !== "outcome_unknown" || !msg.sent || !ACTIONS.has(msg.sent.type)) return false;
  const action = msg.sent;
  const wait = busyDelay(action, isBusy(msg) ? msg.retry_after_ms : 1000);
  if (wait === null) return false;
  S.pending = WAITING;
  showBusy();
  setTimeout(() => {
    const resume = { type: "resume", game: action.game, v: action.v };
    busySince.set(resume, Date.now());   // its answer clears the busy notice
    S.unsure = { action, resume };
    if (send(resume) === null) { S.unsure = null; S.pending = null; }
  }, wait);
  return true;
}

// The answer (`batch` or `snapshot`) to the resume that settles an action of unknown
// outcome. This player's `accepted` after the action's version in the batch means it was
// applied. Otherwise it goes again at the same version: the server cannot apply it twice
// (had it been applied, the answer is stale_version, and the page resumes).
export function settleResumed(msg) {
  const unsure = S.unsure;
  if (!unsure || msg.sent !== unsure.resume) return;
  S.unsure = null;
  if (S.pending === WAITING) S.pending = null;
  const { action } = unsure;
  const applied = (msg.events || []).some((event) => event.type === "accepted" && event.v > action.v);
  const game = S.game;
  if (applied || !game || game.id !== action.game || game.ended || game.status !== "playing") return;
  holdPending(send(action));
}
