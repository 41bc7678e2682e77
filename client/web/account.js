// The account: a guest makes one (a passkey, or a username and password), signs in to one on
// another browser, lists and revokes its sessions, adds a passkey, signs out. Ranked play
// needs an account: a guest who asks for it is offered to make one right there.
//
// Making an account and adding a passkey go over the page's link (after hello). Signing in
// comes before hello, so it opens a connection of its own, gets a session token there, and
// then the page's link says hello again with it.

import { SUBPROTOCOL } from "./net.js";
import { deviceName, link, send } from "./link.js";
import { notify } from "./notice.js";
import { $, S } from "./state.js";

// Requests whose answers and refusals this module shows in the account dialog.
export const ACCOUNT_REQUESTS = new Set([
  "register", "passkey_options", "passkey_register", "sessions", "session_revoke", "logout", "password_change",
]);

const TOKEN = "scorpion.token";
const hasPasskeys = () => typeof window.PublicKeyCredential === "function" && Boolean(navigator.credentials);

// ---------------------------------------------------------------- WebAuthn's JSON forms

const fromB64url = (text) => {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
};
const toB64url = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer)))
  .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

// The options as the browser's API takes them (its own JSON parser where it has one).
function creationOptions(json) {
  if (PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(json);
  const exclude = (json.excludeCredentials || []).map((c) => ({ ...c, id: fromB64url(c.id) }));
  return { ...json, challenge: fromB64url(json.challenge), user: { ...json.user, id: fromB64url(json.user.id) }, excludeCredentials: exclude };
}

function requestOptions(json) {
  if (PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(json);
  const allow = (json.allowCredentials || []).map((c) => ({ ...c, id: fromB64url(c.id) }));
  return { ...json, challenge: fromB64url(json.challenge), allowCredentials: allow };
}

// The credential as JSON text (the browser's toJSON where it has one).
function credentialText(credential) {
  if (typeof credential.toJSON === "function") return JSON.stringify(credential.toJSON());
  const r = credential.response;
  const response = { clientDataJSON: toB64url(r.clientDataJSON) };
  if (r.attestationObject) response.attestationObject = toB64url(r.attestationObject);
  if (r.authenticatorData) response.authenticatorData = toB64url(r.authenticatorData);
  if (r.signature) response.signature = toB64url(r.signature);
  if (r.userHandle) response.userHandle = toB64url(r.userHandle);
  if (r.getTransports) response.transports = r.getTransports();
  return JSON.stringify({
    id: credential.id, rawId: toB64url(credential.rawId), type: credential.type, response,
    clientExtensionResults: credential.getClientExtensionResults(), authenticatorAttachment: credential.authenticatorAttachment,
  });
}

// What the browser says when a passkey was not made or not given.
function passkeyRefusal(err) {
  if (err && err.name === "NotAllowedError") return "No passkey was used (cancelled, or timed out).";
  if (err && err.name === "InvalidStateError") return "This device already holds a passkey for this account.";
  return `The browser could not use a passkey${err && err.message ? `: ${err.message}` : "."}`;
}

// ---------------------------------------------------------------- the dialog

function say(text, kind = "") {
  const box = $("account-status");
  box.textContent = text;
  box.dataset.kind = kind;
}

// Show the dialog: a guest's forms, or an account's sessions. `why`: what sent the player here.
export function openAccount(why = "") {
  const dialog = $("account");
  render();
  say(why, why ? "warn" : "");
  if (!dialog.open) dialog.showModal();
  if (S.me && S.me.username) send({ type: "sessions" });
  const first = S.me && S.me.username ? $("btn-account-close") : $("account-username");
  first.focus();
}

// Lay the dialog out for a guest or an account; the lobby's line says which too.
export function render() {
  const account = Boolean(S.me && S.me.username);
  $("account-guest").hidden = account;
  $("account-member").hidden = !account;
  $("account-who").textContent = account ? S.me.username : "";
  $("btn-passkey-create").disabled = !hasPasskeys();
  $("btn-passkey-signin").disabled = !hasPasskeys();
  $("account-no-passkeys").hidden = hasPasskeys();
  $("lobby-account").textContent = account ? `Signed in as ${S.me.username}` : "Playing as a guest";
  $("btn-account").textContent = account ? "Account" : "Sign in or create an account";
}

// ---------------------------------------------------------------- making an account

function createWithPasskey() {
  const username = $("account-username").value.trim();
  if (!username) { say("Choose a username first.", "warn"); $("account-username").focus(); return; }
  say("Asking the server…");
  send({ type: "passkey_options", purpose: "register", username });
}

function createWithPassword() {
  const username = $("account-username").value.trim();
  const password = $("account-password").value;
  if (!username) { say("Choose a username first.", "warn"); $("account-username").focus(); return; }
  if (password.length < 8) { say("A password has at least 8 characters.", "warn"); $("account-password").focus(); return; }
  say("Creating your account…");
  send({ type: "register", username, password });
}

function addPasskey() {
  say("Asking the server…");
  send({ type: "passkey_options", purpose: "register" });
}

// `passkey_challenge` on the page's link: make the passkey, send it back.
export async function onPasskeyChallenge(msg) {
  if (msg.purpose !== "register") return;
  say("Follow your browser's passkey prompt…");
  let credential;
  try {
    credential = await navigator.credentials.create({ publicKey: creationOptions(JSON.parse(msg.options)) });
  } catch (err) {
    say(passkeyRefusal(err), "warn");
    return;
  }
  send({ type: "passkey_register", credential: credentialText(credential) });
}

// `session` after making the account (or a password change): keep the account's token.
export function onAccountSession(msg) {
  S.token = msg.token;
  localStorage.setItem(TOKEN, msg.token);
  if (S.me) S.me.username = msg.username;
  render();
  if ($("account").open) {
    say(`Your account ${msg.username} is ready: ranked play is open to you.`, "ok");
    send({ type: "sessions" });
  }
  notify(`Signed in as ${msg.username}.`);
}

// ---------------------------------------------------------------- signing in (before hello)

// Run a login on a connection of its own: `steps(ask)` sends requests with `ask(message)`
// (a promise of the answer) and returns the `session` answer.
async function signInConnection(steps) {
  const ws = new WebSocket(link.url, SUBPROTOCOL);
  const waiting = new Map();
  let ref = 0;
  const opened = new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error("The server could not be reached."));
  });
  ws.onmessage = (event) => {
    const msg = JSON.parse(event.data);
    if (waiting.has(msg.ref)) { waiting.get(msg.ref)(msg); waiting.delete(msg.ref); }
  };
  const ask = (message) => new Promise((resolve) => {
    ref += 1;
    waiting.set(ref, resolve);
    ws.send(JSON.stringify({ ...message, ref }));
  });
  try {
    await opened;
    return await steps(ask);
  } finally {
    ws.close(1000);
  }
}

// Say hello again as the account a login opened.
function becomeAccount(session) {
  localStorage.setItem(TOKEN, session.token);
  S.token = session.token;
  $("account").close();
  notify(`Signed in as ${session.username}.`);
  link.restart();
}

function refusal(msg) {
  const text = (msg.message || "").trim();
  return text ? `${text[0].toUpperCase()}${text.slice(1)}${text.endsWith(".") ? "" : "."}` : "The server refused that.";
}

async function signInWithPasskey() {
  say("Follow your browser's passkey prompt…");
  try {
    const answer = await signInConnection(async (ask) => {
      const challenge = await ask({ type: "passkey_options", purpose: "login" });
      if (challenge.type !== "passkey_challenge") return challenge;
      const credential = await navigator.credentials.get({ publicKey: requestOptions(JSON.parse(challenge.options)) });
      return ask({ type: "passkey_login", credential: credentialText(credential), device: deviceName() });
    });
    if (answer.type === "session") becomeAccount(answer);
    else say(refusal(answer), "warn");
  } catch (err) {
    say(err instanceof DOMException ? passkeyRefusal(err) : err.message, "warn");
  }
}

async function signInWithPassword() {
  const username = $("signin-username").value.trim();
  const password = $("signin-password").value;
  if (!username || !password) { say("Give your username and password.", "warn"); return; }
  say("Signing in…");
  try {
    const answer = await signInConnection((ask) => ask({ type: "login", username, password, device: deviceName() }));
    if (answer.type === "session") becomeAccount(answer);
    else say(refusal(answer), "warn");
  } catch (err) {
    say(err.message, "warn");
  }
}


// ---------------------------------------------------------------- sessions

const when = (ms) => new Date(ms - (S.offset || 0)).toLocaleString([], { dateStyle: "medium", timeStyle: "short" });

// `sessions_list`: each session with where it was opened and when it was last used.
export function onSessionsList(msg) {
  const list = $("account-sessions");
  list.replaceChildren();
  for (const entry of msg.sessions) {
    const item = document.createElement("li");
    item.dataset.session = entry.session;
    const text = document.createElement("span");
    text.textContent = `${entry.device}${entry.current ? " (this browser)" : ""}, last used ${when(entry.seen)}`;
    item.append(text);
    if (!entry.current) {                           // this browser's: the dialog's Sign out
      const revoke = document.createElement("button");
      revoke.type = "button";
      revoke.className = "secondary small-btn";
      revoke.textContent = "Revoke";
      revoke.setAttribute("aria-label", `Revoke: ${entry.device}, last used ${when(entry.seen)}`);
      revoke.addEventListener("click", () => send({ type: "session_revoke", session: entry.session }));
      item.append(revoke);
    }
    list.append(item);
  }
  $("btn-revoke-others").disabled = msg.sessions.length < 2;
}

function signOut() {
  say("Signing out…");
  send({ type: "logout" });
}

// `ok` to an account request.
export function onAccountOk(msg) {
  if (msg.to === "passkey_register") {
    say("Passkey added: sign in with it on this device or any synced one.", "ok");
  } else if (msg.to === "session_revoke") {
    say("Revoked: that session is signed out.", "ok");
    send({ type: "sessions" });
  } else if (msg.to === "logout") {
    // The server closes the link: start afresh as a new guest.
    localStorage.removeItem(TOKEN);
    S.token = null;
    if (S.me) S.me.username = null;
    if ($("account").open) $("account").close();
    notify("Signed out: you are playing as a guest.");
    setTimeout(() => link.restart(), 100);
  }
}

// A refusal of an account request: said in the dialog (or as a notice when it is closed).
export function accountRefused(msg) {
  if ($("account").open) say(refusal(msg), "warn");
  else notify(refusal(msg));
}

// ---------------------------------------------------------------- binding

export function bindAccount() {
  $("btn-account").addEventListener("click", () => openAccount());
  $("btn-account-close").addEventListener("click", () => $("account").close());
  $("btn-passkey-create").addEventListener("click", createWithPasskey);
  $("account-create-form").addEventListener("submit", (event) => { event.preventDefault(); createWithPassword(); });
  $("btn-passkey-signin").addEventListener("click", signInWithPasskey);
  $("account-signin-form").addEventListener("submit", (event) => { event.preventDefault(); signInWithPassword(); });
  $("btn-passkey-add").addEventListener("click", addPasskey);
  $("btn-revoke-others").addEventListener("click", () => send({ type: "session_revoke", all: true }));
  $("btn-signout").addEventListener("click", signOut);
  render();
}
