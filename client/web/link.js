// The page's connection to the server: hello, connection states and close reasons, and
// `send`, which holds lobby requests back until the server's welcome.

import { Link } from "./net.js";
import { notify } from "./notice.js";
import { $, S, myName } from "./state.js";

// ---------------------------------------------------------------- link

const wsUrl = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/`;
let handle = () => {};       // the page's message handler, given to connect()

// The websocket link (net.js) to the server this page came from.
export const link = new Link(wsUrl, { onMessage: (msg) => handle(msg), onOpen, onState });

function onOpen() {
  S.welcomed = false;
  S.outbox = [];
  S.pending = null;
  sayHello();
}

// Say hello: the player's name, and the saved token if there is one.
export function sayHello() {
  const hello = { type: "hello", name: myName(), client: "scorpion-web 0.1" };
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
  if (event && CLOSE_REASONS[event.code]) notify(CLOSE_REASONS[event.code]);
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
