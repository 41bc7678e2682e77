// The websocket link to the server: JSON subprotocol, refs, automatic reconnection.

export const SUBPROTOCOL = "scorpion.v1.json";

export class Link {
  // handlers: onMessage(msg), onOpen(), onState(state, detail) where state is
  // "connecting" | "open" | "reconnecting" | "closed".
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    this.ws = null;
    this.nextRef = 1;
    this.pending = new Map();        // ref -> {type, message}: the request awaiting its answer
    this.attempt = 0;
    this.stopped = false;
    this.timer = null;
  }

  connect() {
    this.stopped = false;
    clearTimeout(this.timer);
    this.handlers.onState(this.attempt ? "reconnecting" : "connecting");
    let ws;
    try {
      ws = new WebSocket(this.url, SUBPROTOCOL);
    } catch (err) {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      this.attempt = 0;
      this.handlers.onState("open");
      this.handlers.onOpen();
    };
    ws.onmessage = (event) => {
      if (typeof event.data !== "string") return;
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return;
      }
      if (!msg || typeof msg.type !== "string") return;
      if (msg.ref !== undefined && this.pending.has(msg.ref)) {
        const waiter = this.pending.get(msg.ref);
        this.pending.delete(msg.ref);
        msg.request = waiter.type;
        msg.sent = waiter.message;   // the request itself (without ref), to send it again
      }
      this.handlers.onMessage(msg);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.pending.clear();
      if (this.stopped || event.code === 1000) {
        this.handlers.onState("closed", event);
        return;
      }
      this.handlers.onState("reconnecting", event);
      this.scheduleReconnect(event.code === 1012 ? 0 : undefined);
    };
    ws.onerror = () => {};     // onclose follows and reconnects
  }

  scheduleReconnect(delay) {
    if (this.stopped) return;
    this.attempt += 1;
    const wait = delay ?? Math.min(8000, 400 * 2 ** Math.min(this.attempt - 1, 5)) * (0.75 + Math.random() / 2);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), wait);
  }

  // Close on purpose and open again at once (e.g. to say hello under a new name).
  restart() {
    const old = this.ws;
    this.ws = null;
    if (old) old.close(1000);
    this.attempt = 0;
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close(1000);
  }

  get isOpen() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  // Send a request with a fresh ref; returns the ref (or null when not connected).
  send(message) {
    if (!this.isOpen) return null;
    const ref = this.nextRef++;
    this.pending.set(ref, { type: message.type, message });
    this.ws.send(JSON.stringify({ ...message, ref }));
    return ref;
  }
}
