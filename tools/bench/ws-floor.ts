/**
 * The least a Node client of the native dialect can do per packet: the floor under the probe's CPU
 * per packet cycle on this host. It speaks the same session as the Python baseline
 * (../shared/anchors/python_baseline_client.py) and the probe: the HTTP upgrade, `session.created`,
 * `session.update` → `session.updated`, an append every 80 ms to the absolute deadline
 * start + N × 80 ms, `sglang.input_audio.end` → `sglang.input_audio.drained`, `session.close`, a
 * close frame. And nothing else: no JSON is parsed (a frame is found by its header and skipped;
 * only the handshake's and the drain's frames are searched for their type), nothing is recorded
 * but each packet's deviation, one timer per session, one socket write per append, reads into one
 * buffer of the socket's own. Whatever the probe costs above it is what measuring costs (and what
 * its libs cost); the floor itself is Node's and the kernel's.
 *
 * It writes the summary.json subset the Python baseline writes (qualified, packets, pacing deviation,
 * cpu_cores), so tools/bench/pacing.ts runs it as client `floor`, compiled by esbuild (no tsx load
 * in its CPU):
 *
 *   node dist-bench/ws-floor.js --url ws://127.0.0.1:PORT/v1/realtime --concurrency S --duration D --output DIR
 *
 * Exit 0, 3 when a packet was late (over one packet), 1 when a session failed. Every wait is bounded.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect, type NetConnectOpts, type Socket } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const PACKET_MS = 80;
const PACKET_BYTES = 2560; // 80 ms of 16 kHz PCM16, silence, as the Python baseline sends
const STEP_TIMEOUT_MS = 30_000;
const AUDIO_B64 = Buffer.from(Buffer.alloc(PACKET_BYTES).toString('base64'));

const now_ms = (): number => Number(process.hrtime.bigint()) / 1e6;

/** A masked client frame (RFC 6455 5.2) with a zero key, as the probe sends: header, key, payload (text by default). */
function textFrame(payload: Buffer, opcode = 0x1): Buffer {
  const n = payload.length;
  const head = n < 126 ? 2 : n < 65536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(head + 4 + n);
  frame[0] = 0x80 | opcode;
  if (n < 126) frame[1] = 0x80 | n;
  else if (n < 65536) {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(n, 2);
  } else {
    frame[1] = 0x80 | 127;
    frame.writeUInt32BE(0, 2);
    frame.writeUInt32BE(n, 6);
  }
  frame.writeUInt32BE(0, head);
  payload.copy(frame, head + 4);
  return frame;
}

const textOf = (s: string): Buffer => textFrame(Buffer.from(s));

function append(event_id: string, seq: number): Buffer {
  const head = Buffer.from(`{"type":"input_audio_buffer.append","event_id":"${event_id}","audio":"`);
  const tail = Buffer.from(`","sglang":{"seq":${seq},"t_start_ms":${seq * PACKET_MS}}}`);
  return textFrame(Buffer.concat([head, AUDIO_B64, tail]));
}

interface Floor {
  deviations: Float64Array;
  sent: number;
}

/** One session, start to close; rejects on a server close, an error or a step past its bound. */
function session(i: number, url: URL, packets: number, start_at_ms: number, floor: Floor): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let ev = 0;
    const eid = (): string => `c${i}_${++ev}`;
    let upgraded = false;
    let header = '';
    let pending: Buffer | null = null;
    /** What the next server frame must contain to take the next step; null while streaming. */
    let waitingFor: string | null = '"session.created"';
    let bound: NodeJS.Timeout | null = null;
    let timer: NodeJS.Timeout | null = null;
    let t0 = 0;
    let seq = 0;
    let settled = false;

    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      if (bound) clearTimeout(bound);
      if (timer) clearTimeout(timer);
      socket.destroy();
      reject(new Error(`session ${i}: ${why}`));
    };
    const expect = (type: string): void => {
      waitingFor = `"${type}"`;
      if (bound) clearTimeout(bound);
      bound = setTimeout(() => fail(`no ${type} within ${STEP_TIMEOUT_MS} ms`), STEP_TIMEOUT_MS);
    };
    const tick = (): void => {
      const start = now_ms();
      if (seq === 0) t0 = start;
      socket.write(append(eid(), seq));
      floor.deviations[floor.sent++] = Math.abs(start - (t0 + seq * PACKET_MS));
      seq++;
      if (seq < packets) timer = setTimeout(tick, Math.max(0, t0 + seq * PACKET_MS - now_ms()));
      else {
        timer = null;
        expect('sglang.input_audio.drained');
        socket.write(textOf(`{"type":"sglang.input_audio.end","event_id":"${eid()}"}`));
      }
    };
    const step = (payload: Buffer): void => {
      if (waitingFor === null || payload.indexOf(waitingFor) < 0) return;
      if (bound) clearTimeout(bound);
      bound = null;
      if (waitingFor === '"session.created"') {
        expect('session.updated');
        socket.write(textOf(`{"type":"session.update","event_id":"${eid()}","session":{"output_modalities":["audio"]}}`));
      } else if (waitingFor === '"session.updated"') {
        waitingFor = null;
        timer = setTimeout(tick, Math.max(0, start_at_ms - now_ms()));
      } else if (waitingFor === '"sglang.input_audio.drained"') {
        expect('session.closed');
        socket.write(textOf(`{"type":"session.close","event_id":"${eid()}"}`));
      } else {
        settled = true;
        if (bound) clearTimeout(bound);
        socket.end(textFrame(Buffer.from([0x03, 0xe8]), 0x8)); // a close frame, 1000
        resolve();
      }
    };
    const frames = (bytes: Buffer): void => {
      const buf = pending === null ? bytes : Buffer.concat([pending, bytes]);
      pending = null;
      let at = 0;
      while (buf.length - at >= 2) {
        let len = buf[at + 1] & 0x7f;
        let head = 2;
        if (len === 126) {
          if (buf.length - at < 4) break;
          len = buf.readUInt16BE(at + 2);
          head = 4;
        } else if (len === 127) {
          if (buf.length - at < 10) break;
          len = buf.readUInt32BE(at + 6);
          head = 10;
        }
        if (buf.length - at < head + len) break;
        if ((buf[at] & 0x0f) === 8) return fail('the server closed the session');
        if (waitingFor !== null) step(buf.subarray(at + head, at + head + len));
        at += head + len;
      }
      if (at < buf.length) pending = Buffer.from(buf.subarray(at));
    };
    const onread = (nread: number, buf: Buffer): boolean => {
      const bytes = buf.subarray(0, nread);
      if (upgraded) {
        frames(bytes);
        return true;
      }
      header += bytes.toString('latin1');
      const end = header.indexOf('\r\n\r\n');
      if (end < 0) return true;
      if (!header.startsWith('HTTP/1.1 101')) {
        fail(`upgrade refused: ${header.split('\r\n')[0]}`);
        return false;
      }
      upgraded = true;
      const rest = Buffer.from(header.slice(end + 4), 'latin1');
      header = '';
      if (rest.length > 0) frames(rest);
      return true;
    };
    const socket: Socket = connect({ host: url.hostname, port: Number(url.port), onread: { buffer: Buffer.allocUnsafe(65536), callback: onread } } as NetConnectOpts);
    socket.setNoDelay(true);
    socket.on('error', (err) => fail(err.message));
    socket.on('close', () => fail('the socket closed'));
    bound = setTimeout(() => fail(`no session.created within ${STEP_TIMEOUT_MS} ms`), STEP_TIMEOUT_MS);
    socket.on('connect', () => {
      socket.write(
        `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
  });
}

function pct(sorted: Float64Array, p: number): number | null {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] : null;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { url: { type: 'string' }, concurrency: { type: 'string' }, duration: { type: 'string' }, output: { type: 'string' } } });
  const sessions = Number(values.concurrency);
  const duration_s = Number(values.duration);
  if (!values.url || !values.output || !(Number.isInteger(sessions) && sessions >= 1) || !(duration_s > 0)) {
    process.stderr.write('usage: ws-floor --url ws://HOST:PORT/PATH --concurrency S --duration D --output DIR\n');
    return 2;
  }
  const url = new URL(values.url);
  const packets = Math.round((duration_s * 1000) / PACKET_MS);
  const floor: Floor = { deviations: new Float64Array(sessions * packets), sent: 0 };
  // As the Python baseline: every session starts after the opens, spread over one packet.
  const start_at_ms = now_ms() + 1000 + sessions * 2;
  const cpu0 = process.cpuUsage();
  const wall0 = now_ms();
  const results = await Promise.allSettled(Array.from({ length: sessions }, (_, i) => session(i, url, packets, start_at_ms + (i * PACKET_MS) / sessions, floor)));
  const cpu = process.cpuUsage(cpu0);
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message)] : []));
  const dev = floor.deviations.slice(0, floor.sent).sort();
  let late = 0;
  for (const d of dev) if (d > PACKET_MS) late++;
  const summary = {
    client: 'node-floor',
    qualified: late === 0 && failed.length === 0,
    sessions: { started: sessions, incomplete: failed.length, errors: failed.slice(0, 5) },
    packets: { sent: floor.sent, late },
    pacing_deviation_ms: { p50: pct(dev, 50), p99: pct(dev, 99), max: dev.length ? dev[dev.length - 1] : null },
    cpu_cores: { total: (cpu.user + cpu.system) / 1e3 / (now_ms() - wall0) },
    peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
  };
  mkdirSync(values.output, { recursive: true });
  writeFileSync(join(values.output, 'summary.json'), JSON.stringify(summary, null, 1));
  process.stdout.write(`${JSON.stringify({ qualified: summary.qualified, packets: summary.packets, pacing_deviation_ms: summary.pacing_deviation_ms })}\n`);
  return failed.length ? 1 : summary.qualified ? 0 : 3;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`ws-floor: ${err.message}\n`);
    process.exit(1);
  },
);
