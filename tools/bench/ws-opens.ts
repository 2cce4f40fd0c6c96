/**
 * What opening a session's socket costs this process, ws's client against a plain upgrade: N
 * sockets opened at once to URL (an append-echo `serve`), each up to its first frame from the
 * server (`session.created`), then dropped. `ws` is ws's WebSocket as the probe makes it (no
 * compression, the probe's frame bound); `plain` is `net.connect`, the HTTP upgrade written by hand
 * and its accept key checked (ws-upgrade.ts), as tools/bench/ws-floor.ts opens. Prints the process's CPU (user +
 * system) from the first open to the last first frame, ms.
 *
 *   node --import tsx tools/bench/ws-opens.ts URL N ws|plain
 *
 * Run it at N = 1 and N = 256, each way, alternated, in fresh processes: (cpu(256) - cpu(1)) / 255
 * is one open. Everything talks to URL (127.0.0.1 in our benches); every open is bounded at 10 s.
 */
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { upgradeAccepted, upgradeKey, upgradeRequest } from './ws-upgrade';

const BOUND_MS = 10_000;

const [url, count, mode] = process.argv.slice(2);
const n = Number(count);
if (!url?.startsWith('ws://') || !(Number.isInteger(n) && n > 0) || (mode !== 'ws' && mode !== 'plain')) {
  process.stderr.write('usage: ws-opens.ts ws://HOST:PORT/PATH N ws|plain\n');
  process.exit(2);
}
const target = new URL(url);

function bounded<T>(open: (done: (value: T) => void, fail: (err: Error) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no first frame within ${BOUND_MS} ms`)), BOUND_MS);
    open(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

function openWs(): Promise<WebSocket> {
  return bounded((done, fail) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 8 * 2 ** 20 });
    ws.once('message', () => done(ws));
    ws.once('error', fail);
  });
}

function openPlain(): Promise<Socket> {
  return bounded((done, fail) => {
    const key = upgradeKey();
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.setNoDelay(true);
      socket.write(upgradeRequest(target, key));
    });
    let held = Buffer.alloc(0);
    let upgraded = false;
    socket.on('data', (bytes: Buffer) => {
      held = Buffer.concat([held, bytes]);
      if (!upgraded) {
        const end = held.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = held.toString('latin1', 0, end);
        if (!upgradeAccepted(head, key)) return fail(new Error(`upgrade refused: ${head.split('\r\n')[0]}`));
        upgraded = true;
        held = held.subarray(end + 4);
      }
      // A whole first frame: its two-byte header and the payload length it states (under 126 for session.created).
      if (held.length >= 2 && held.length >= 2 + (held[1] & 0x7f)) done(socket);
    });
    socket.once('error', fail);
  });
}

async function main(): Promise<void> {
  const before = process.cpuUsage();
  const opened = await Promise.all(Array.from({ length: n }, () => (mode === 'ws' ? openWs() : openPlain())));
  const cpu = process.cpuUsage(before);
  for (const s of opened) {
    if (s instanceof WebSocket) s.terminate();
    else s.destroy();
  }
  process.stdout.write(`${mode} ${n} ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`ws-opens: ${err.message}\n`);
  process.exit(1);
});
