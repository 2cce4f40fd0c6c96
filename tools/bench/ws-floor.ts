/**
 * The least a Node client of the native dialect can do per packet: the floor under the probe's CPU
 * per packet cycle on this host. It speaks the same session as the Python baseline
 * (../shared/anchors/python_baseline_client.py) and the probe: the HTTP upgrade (its accept key
 * checked), `session.created`, `session.update` → `session.updated`, an append every 80 ms to the
 * absolute deadline start + N × 80 ms, `sglang.input_audio.end` → `sglang.input_audio.drained`,
 * `session.close` → `session.closed`, a close frame. And nothing else: no JSON is parsed (a frame is
 * found by its header; only its first bytes are looked at, for an `error` event, and the frames of
 * the handshake and the end are searched for their type), nothing is recorded but each packet's
 * deviation, one timer per session, one socket write per append, reads into one buffer of the
 * socket's own. A frame cut by a read is joined with the next read, as the probe's frame reader
 * joins it. Whatever the probe costs above it is what measuring costs (and what its libs cost); the
 * floor itself is Node's and the kernel's.
 *
 * It writes the summary.json subset the Python baseline writes (qualified, sessions, packets,
 * pacing deviation, cpu_cores), so tools/bench/pacing.ts runs it as client `floor`, compiled by
 * esbuild (no tsx load in its CPU), with the kit's Node flags:
 *
 *   node dist-bench/ws-floor.js --url ws://127.0.0.1:PORT/v1/realtime --concurrency S --duration D --output DIR
 *
 * Exit 0; 3, as the Python baseline, when a packet was late (over one packet) or a session failed;
 * 2 on bad usage. Every wait is bounded (STEP_TIMEOUT_MS a step).
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { connect, type NetConnectOpts, type Socket } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { upgradeAccepted, upgradeKey, upgradeRequest } from './ws-upgrade';

const PACKET_MS = 80;
const PACKET_BYTES = 2560; // 80 ms of 16 kHz PCM16, silence, as the Python baseline sends
const STEP_TIMEOUT_MS = 10_000;
const AUDIO_B64 = Buffer.from(Buffer.alloc(PACKET_BYTES).toString('base64'));
const ERROR_EVENT = Buffer.from('{"type":"error"');

const now_ms = (): number => Number(process.hrtime.bigint()) / 1e6;

/** Header and zero masking key (RFC 6455 5.2) of a client frame with an `n`-byte payload, written at the start of `frame`; returns the header's length. */
function writeHeader(frame: Buffer, opcode: number, n: number): number {
  frame[0] = 0x80 | opcode;
  let head = 2;
  if (n < 126) frame[1] = 0x80 | n;
  else if (n < 65536) {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(n, 2);
    head = 4;
  } else {
    frame[1] = 0x80 | 127;
    frame.writeUInt32BE(Math.floor(n / 2 ** 32), 2);
    frame.writeUInt32BE(n >>> 0, 6);
    head = 10;
  }
  frame.writeUInt32BE(0, head);
  return head + 4;
}

const headerBytes = (n: number): number => (n < 126 ? 6 : n < 65536 ? 8 : 14);

/** A masked client frame (zero key, as the probe sends): text by default. */
function clientFrame(payload: Buffer, opcode = 0x1): Buffer {
  const frame = Buffer.allocUnsafe(headerBytes(payload.length) + payload.length);
  payload.copy(frame, writeHeader(frame, opcode, payload.length));
  return frame;
}

const textOf = (s: string): Buffer => clientFrame(Buffer.from(s));

/** An append frame, built in one buffer: header, the JSON head, the shared base64 payload, the JSON tail. */
function append(event_id: string, seq: number): Buffer {
  const head = `{"type":"input_audio_buffer.append","event_id":"${event_id}","audio":"`;
  const tail = `","sglang":{"seq":${seq},"t_start_ms":${seq * PACKET_MS}}}`;
  const n = head.length + AUDIO_B64.length + tail.length;
  const frame = Buffer.allocUnsafe(headerBytes(n) + n);
  let at = writeHeader(frame, 0x1, n);
  at += frame.write(head, at, 'latin1');
  at += AUDIO_B64.copy(frame, at);
  frame.write(tail, at, 'latin1');
  return frame;
}

interface Floor {
  deviations: Float64Array;
  sent: number;
}

/** Where a session is: the server event each step waits for, or streaming (the appends, no wait). */
type Step = 'session.created' | 'session.updated' | 'streaming' | 'sglang.input_audio.drained' | 'session.closed' | 'done';

/** One session, start to close; rejects on a server close, an `error` event, a refused upgrade or a step past its bound. */
function session(i: number, url: URL, packets: number, start_at_ms: number, floor: Floor): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let ev = 0;
    const eid = (): string => `c${i}_${++ev}`;
    const key = upgradeKey();
    let upgraded = false;
    let header = '';
    let pending: Buffer | null = null;
    let step: Step = 'session.created';
    let bound: NodeJS.Timeout | null = null;
    let timer: NodeJS.Timeout | null = null;
    let t0 = 0;
    let seq = 0;

    const fail = (why: string): void => {
      if (step === 'done') return;
      step = 'done';
      if (bound) clearTimeout(bound);
      if (timer) clearTimeout(timer);
      socket.destroy();
      reject(new Error(`session ${i}: ${why}`));
    };
    /** The next step: wait (bounded) for its event. */
    const waitFor = (next: Step): void => {
      step = next;
      if (bound) clearTimeout(bound);
      bound = setTimeout(() => fail(`no ${next} within ${STEP_TIMEOUT_MS} ms`), STEP_TIMEOUT_MS);
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
        waitFor('sglang.input_audio.drained');
        socket.write(textOf(`{"type":"sglang.input_audio.end","event_id":"${eid()}"}`));
      }
    };
    /** A server text frame: an `error` event ends the session; the awaited event takes the next step. */
    const event = (payload: Buffer): void => {
      if (payload.compare(ERROR_EVENT, 0, ERROR_EVENT.length, 0, Math.min(payload.length, ERROR_EVENT.length)) === 0) {
        fail(`the server sent an error event: ${payload.toString('utf8', 0, Math.min(payload.length, 200))}`);
        return;
      }
      // Only the handshake's and the end's few frames are searched: none while streaming.
      if (step === 'streaming' || payload.indexOf(`"${step}"`) < 0) return;
      if (bound) clearTimeout(bound);
      bound = null;
      if (step === 'session.created') {
        waitFor('session.updated');
        socket.write(textOf(`{"type":"session.update","event_id":"${eid()}","session":{"output_modalities":["audio"]}}`));
      } else if (step === 'session.updated') {
        step = 'streaming';
        timer = setTimeout(tick, Math.max(0, start_at_ms - now_ms()));
      } else if (step === 'sglang.input_audio.drained') {
        waitFor('session.closed');
        socket.write(textOf(`{"type":"session.close","event_id":"${eid()}"}`));
      } else if (step === 'session.closed') {
        step = 'done';
        socket.end(clientFrame(Buffer.from([0x03, 0xe8]), 0x8)); // a close frame, 1000
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
          len = buf.readUInt32BE(at + 2) * 2 ** 32 + buf.readUInt32BE(at + 6);
          head = 10;
        }
        if (len > 2 ** 24) return fail(`a frame of ${len} bytes`);
        if (buf.length - at < head + len) break;
        const opcode = buf[at] & 0x0f;
        if (opcode === 0x8) return fail('the server closed the session');
        if (opcode === 0x1) event(buf.subarray(at + head, at + head + len));
        if (step === 'done') return;
        at += head + len;
      }
      // The read buffer is the socket's own and the next read overwrites it: what is left is copied.
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
      if (!upgradeAccepted(header.slice(0, end), key)) {
        fail(`upgrade refused: ${header.split('\r\n')[0]}`);
        return false;
      }
      upgraded = true;
      const rest = Buffer.from(header.slice(end + 4), 'latin1');
      header = '';
      if (rest.length > 0) frames(rest);
      return true;
    };
    const socket: Socket = connect({ host: url.hostname, port: Number(url.port || 80), onread: { buffer: Buffer.allocUnsafe(65536), callback: onread } } as NetConnectOpts);
    socket.setNoDelay(true);
    socket.on('error', (err) => fail(err.message));
    socket.on('close', () => fail('the socket closed'));
    bound = setTimeout(() => fail(`no session.created within ${STEP_TIMEOUT_MS} ms`), STEP_TIMEOUT_MS);
    socket.on('connect', () => {
      socket.write(upgradeRequest(url, key));
    });
  });
}

function pct(sorted: Float64Array, p: number): number | null {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] : null;
}

async function main(): Promise<number> {
  const usage = (why: string): number => {
    process.stderr.write(`ws-floor: ${why}\nusage: ws-floor --url ws://HOST:PORT/PATH --concurrency S --duration D --output DIR\n`);
    return 2;
  };
  let values;
  try {
    ({ values } = parseArgs({ options: { url: { type: 'string' }, concurrency: { type: 'string' }, duration: { type: 'string' }, output: { type: 'string' } } }));
  } catch (err) {
    return usage((err as Error).message.split('\n')[0]);
  }
  const sessions = Number(values.concurrency);
  const duration_s = Number(values.duration);
  if (!values.url || !values.output || !(Number.isInteger(sessions) && sessions >= 1) || !(duration_s > 0)) return usage('--url, --output, --concurrency (1 or more) and --duration (over 0) are needed');
  const url = new URL(values.url);
  const packets = Math.round((duration_s * 1000) / PACKET_MS);
  const floor: Floor = { deviations: new Float64Array(sessions * packets), sent: 0 };
  // As the Python baseline: every session starts after the opens, spread over one packet.
  const start_at_ms = now_ms() + 1000 + sessions * 2;
  const cpu0 = process.cpuUsage();
  const wall0 = now_ms();
  const results = await Promise.allSettled(Array.from({ length: sessions }, (_, i) => session(i, url, packets, start_at_ms + (i * PACKET_MS) / sessions, floor)));
  const cpu = process.cpuUsage(cpu0);
  const wall_ms = now_ms() - wall0;
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
    cpu_cores: { total: (cpu.user + cpu.system) / 1e3 / wall_ms },
    peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
  };
  mkdirSync(values.output, { recursive: true });
  // The file the Python baseline writes, by the same name; written whole under a temporary name, then renamed.
  const file = join(values.output, 'summary.json');
  writeFileSync(`${file}.tmp`, JSON.stringify(summary, null, 1));
  renameSync(`${file}.tmp`, file);
  process.stdout.write(`${JSON.stringify({ qualified: summary.qualified, packets: summary.packets, pacing_deviation_ms: summary.pacing_deviation_ms })}\n`);
  return summary.qualified ? 0 : 3;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`ws-floor: ${err.message}\n`);
    process.exit(1);
  },
);
