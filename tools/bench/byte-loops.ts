/**
 * Loops in plain JavaScript beside the probe's own, for the figures of docs/performance.md's issue
 * 49 fourteenth round that no run of the kit gives: what a byte loop costs on this host, a JSON
 * string check by compares against one by a table of stop bytes, an append's head and tail built as
 * strings and written (as `spliceFrame` does) against written as bytes, and 1,024 sessions' receipt
 * columns (tracer's `ReceiptColumns`, holding 256 receipts each) all doubling at once, as their
 * 257th receipts come within one packet. Prints each case's median and range over ROUNDS rounds.
 *
 *   node --import tsx tools/bench/byte-loops.ts [ROUNDS=5] [N=1000000]
 */
import { ReceiptColumns } from '@duplex-bench/tracer';

const [rounds, n] = [Number(process.argv[2] ?? 5), Number(process.argv[3] ?? 1_000_000)];
if (!(Number.isInteger(rounds) && rounds > 0 && Number.isInteger(n) && n > 0)) {
  process.stderr.write('usage: byte-loops.ts [ROUNDS=5] [N=1000000] (whole numbers above 0)\n');
  process.exit(2);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
// A transcript delta as the append-echo mock sends it with --stamp-sends: 198 bytes.
const frame = Buffer.from(
  '{"type":"response.output_audio_transcript.delta","event_id":"mock_1_e5","response_id":"resp_0","item_id":"item_resp_0","output_index":0,"content_index":0,"delta":" ","duplex_bench_sent_ms":1234567.891}',
);

function countQuotes(b: Buffer): number {
  let q = 0;
  for (let i = 0; i < b.length; i++) if (b[i] === QUOTE) q++;
  return q;
}

/** The end of a JSON string opening at `i - 1`, as json-check.ts's `string` reads it (escapes passed over). */
function stringByCompares(b: Buffer, i: number): number {
  while (i < b.length) {
    const c = b[i++];
    if (c === QUOTE) return i;
    if (c === BACKSLASH) i++;
    else if (c < 0x20) return -1;
  }
  return -1;
}

const STOP = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STOP[c] = 1;
STOP[QUOTE] = STOP[BACKSLASH] = 1;

function stringByTable(b: Buffer, i: number): number {
  while (i < b.length) {
    const c = b[i++];
    if (STOP[c] === 0) continue;
    if (c === QUOTE) return i;
    if (c === BACKSLASH) i++;
    else return -1;
  }
  return -1;
}

/** Every string of the frame read by `read`: what a JSON check's string reader does for it. */
function allStrings(read: (b: Buffer, i: number) => number): number {
  let sum = 0;
  for (let i = 0; i < frame.length; i++) {
    if (frame[i] !== QUOTE) continue;
    const end = read(frame, i + 1);
    if (end < 0) return -1;
    sum += end;
    i = end - 1;
  }
  return sum;
}

const payload = Buffer.from(Buffer.alloc(2560).toString('base64'));
const out = Buffer.allocUnsafeSlow(8192);
const ROOM = 14;

function appendAsStrings(prefix: string, seq: number): number {
  const head = '{"type":"input_audio_buffer.append","event_id":"' + prefix + seq + '","audio":"';
  const tail = '","sglang":{"seq":' + seq + ',"t_start_ms":' + seq * 80 + '}}';
  out.write(head, ROOM, 'latin1');
  out.set(payload, ROOM + head.length);
  out.write(tail, ROOM + head.length + payload.length, 'latin1');
  return head.length + payload.length + tail.length;
}

const HEAD = Buffer.from('{"type":"input_audio_buffer.append","event_id":"');
const AUDIO = Buffer.from('","audio":"');
const SEQ = Buffer.from('","sglang":{"seq":');
const START = Buffer.from(',"t_start_ms":');

function digits(b: Buffer, at: number, v: number): number {
  let width = 1;
  for (let x = v; x >= 10; x = Math.floor(x / 10)) width++;
  for (let i = at + width - 1; i >= at; i--, v = Math.floor(v / 10)) b[i] = 0x30 + (v % 10);
  return at + width;
}

function appendAsBytes(prefix: Buffer, seq: number): number {
  let at = ROOM;
  out.set(HEAD, at);
  at += HEAD.length;
  out.set(prefix, at);
  at = digits(out, at + prefix.length, seq);
  out.set(AUDIO, at);
  at += AUDIO.length;
  out.set(payload, at);
  at += payload.length;
  out.set(SEQ, at);
  at = digits(out, at + SEQ.length, seq);
  out.set(START, at);
  at = digits(out, at + START.length, seq * 80);
  out[at++] = 0x7d;
  out[at++] = 0x7d;
  return at - ROOM;
}

if (allStrings(stringByCompares) !== allStrings(stringByTable)) throw new Error('the two string readers disagree');
if (appendAsStrings('s1_a', 1234) !== appendAsBytes(Buffer.from('s1_a'), 1234)) throw new Error('the two appends differ in length');

function nsPer(f: (i: number) => number, count: number): number {
  let sink = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < count; i++) sink += f(i);
  if (sink === -1) process.stdout.write('');
  return Number(process.hrtime.bigint() - t0) / count;
}

const prefixBytes = Buffer.from('s123_a');
const cases: Record<string, { unit: string; run: () => number }> = {
  [`count the quotes of a ${frame.length}-byte frame, ns a byte`]: { unit: 'ns/byte', run: () => nsPer(() => countQuotes(frame), n) / frame.length },
  "a frame's strings, compares (json-check.ts), ns a frame": { unit: 'ns', run: () => nsPer(() => allStrings(stringByCompares), n) },
  "a frame's strings, a table of stop bytes, ns a frame": { unit: 'ns', run: () => nsPer(() => allStrings(stringByTable), n) },
  'an append, head and tail as strings, ns': { unit: 'ns', run: () => nsPer((i) => appendAsStrings('s123_a', i % 3000), n) },
  'an append, head and tail as bytes, ns': { unit: 'ns', run: () => nsPer((i) => appendAsBytes(prefixBytes, i % 3000), n) },
  "1,024 sessions' receipt columns doubling from 256, ms": {
    unit: 'ms',
    run: () => {
      const columns = Array.from({ length: 1024 }, (_, c) => {
        const receipts = new ReceiptColumns();
        for (let seq = 0; seq < 256; seq++) receipts.push(`s${c}_a${seq}`, seq, seq * 0.08, seq * 0.08, seq * 0.08);
        return receipts;
      });
      const t0 = process.hrtime.bigint();
      for (let c = 0; c < columns.length; c++) columns[c].push(`s${c}_a256`, 256, 20.48, 20.48, 20.48);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (columns[0].size !== 257) throw new Error('a receipt column did not take its 257th receipt');
      return ms;
    },
  },
};

for (const c of Object.values(cases)) c.run(); // warm-up
process.stdout.write(`| case | median [min–max] of ${rounds} rounds |\n| --- | --- |\n`);
for (const [name, c] of Object.entries(cases)) {
  const v = Array.from({ length: rounds }, () => c.run()).sort((a, b) => a - b);
  const f = (x: number) => (c.unit === 'ns/byte' ? x.toFixed(2) : x.toFixed(c.unit === 'ms' ? 1 : 0));
  process.stdout.write(`| ${name} | ${f(v[Math.floor(v.length / 2)])} [${f(v[0])}–${f(v[v.length - 1])}] |\n`);
}
