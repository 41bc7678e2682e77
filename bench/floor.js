#!/usr/bin/env node
// The race benchmark's floor for Node: ws + msgpackr + ioredis, one EVALSHA a message.
//
//   node bench/floor.js REDIS_URL        (after `cd bench && npm install`)
//
// The same floor as bench/floor.py, and run the same way by bench/race.py
// (`--floor-command "node bench/floor.js"`): it listens on a free loopback port, prints
// its ws://127.0.0.1:PORT/ URL as the first line of its standard output, and serves
// until its standard input closes. Each binary frame is decoded as a msgpack map; the
// server runs one EVALSHA of the same one-line script (INCR of the key "floor") and
// answers {"type": "accepted", "ref": <the request's ref>, "v": 1} in msgpack, packed
// byte for byte as the Python floor packs it (fixed-size maps, no records). As the
// Python floor: no subprotocol is selected (whatever the client offers), no compression,
// frames up to 1 MiB, and a frame that is not a msgpack map, or a failed script call,
// closes its connection with 1011.
//
// REDIS_URL is redis://, rediss:// or unix:///path/to/socket (optionally ?db=N), as the
// benchmark's embedded Redis gives it. ioredis sends every client's EVALSHA on one
// connection, in order, each written as it comes.

"use strict";

const { URL } = require("node:url");
const Redis = require("ioredis");
const { Packr } = require("msgpackr");
const { WebSocketServer } = require("ws");

const SCRIPT = "return redis.call('INCR', KEYS[1])";
const MAX_FRAME = 1 << 20; // websockets' default max_size, which the Python floor keeps

// Maps as msgpack's Python packer writes them (fixmap for small ones), plain objects out.
const packr = new Packr({ useRecords: false, variableMapSize: true });

function redisOptions(url) {
  // ioredis reads redis:// and rediss:// URLs itself; a unix:// URL becomes a socket path.
  if (!url.startsWith("unix://")) {
    return url;
  }
  const parsed = new URL(url);
  const options = { path: decodeURIComponent(parsed.pathname) };
  const db = parsed.searchParams.get("db");
  if (db !== null) {
    options.db = Number(db);
  }
  if (parsed.password || parsed.searchParams.get("password")) {
    options.password = decodeURIComponent(parsed.password) || parsed.searchParams.get("password");
  }
  if (parsed.username) {
    options.username = decodeURIComponent(parsed.username);
  }
  return options;
}

function isMap(value) {
  // A msgpack map decodes to a plain object; arrays, buffers, dates, extensions and
  // msgpackr's stand-in for the never-used byte 0xc1 do not count, as Python's dict.get.
  return value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype;
}

async function main() {
  const url = process.argv[process.argv.length - 1];
  if (process.argv.length < 3) {
    console.error("usage: node bench/floor.js REDIS_URL");
    process.exit(2);
  }
  const redis = new Redis(redisOptions(url), { maxRetriesPerRequest: 1 });
  let sha = await redis.script("LOAD", SCRIPT);

  // One EVALSHA a message; if Redis has lost the script (SCRIPT FLUSH, a restart), load it
  // again and retry once, as redis-py's registered script does.
  async function incr() {
    try {
      return await redis.evalsha(sha, 1, "floor");
    } catch (error) {
      if (!String(error && error.message).startsWith("NOSCRIPT")) {
        throw error;
      }
      sha = await redis.script("LOAD", SCRIPT);
      return redis.evalsha(sha, 1, "floor");
    }
  }

  const server = new WebSocketServer({
    host: "127.0.0.1",
    port: 0,
    perMessageDeflate: false,
    maxPayload: MAX_FRAME,
    handleProtocols: () => false,
  });

  server.on("connection", (ws) => {
    ws.on("message", async (frame, isBinary) => {
      let request;
      try {
        request = isBinary ? packr.unpack(frame) : undefined;
      } catch {
        request = undefined;
      }
      if (!isMap(request)) {
        ws.close(1011);
        return;
      }
      try {
        await incr();
      } catch {
        ws.close(1011);
        return;
      }
      const ref = request.ref === undefined ? null : request.ref;
      ws.send(packr.pack({ type: "accepted", ref, v: 1 }));
    });
    ws.on("error", () => ws.terminate());
  });

  await new Promise((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  process.stdout.write(`ws://127.0.0.1:${server.address().port}/\n`);

  let stopping = false;
  const stop = () => {
    if (stopping) {
      return;
    }
    stopping = true;
    for (const client of server.clients) {
      client.terminate();
    }
    server.close(() => {
      redis.quit().finally(() => process.exit(0));
    });
  };
  process.stdin.on("end", stop);
  process.stdin.on("close", stop);
  process.stdin.resume();
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((error) => {
  console.error(`floor.js: ${error && error.stack ? error.stack : error}`);
  process.exit(1);
});
