/**
 * What reading a received frame's figures costs, ns per frame, in one process: the readers the
 * session runs on each frame the append-echo mock sends for a packet (`serve --stamp-sends`: an
 * audio delta of 80 ms at 22.05 kHz, a transcript delta, a receipt), each from fresh bytes, and
 * `Buffer.indexOf` beside them (a key near the start, a key missing from an audio delta, a byte).
 * Prints each case's median and range over ROUNDS rounds of N frames.
 *
 *   node --import tsx tools/bench/delta-read.ts [ROUNDS=7] [N=50000]
 *
 * Run it in another checkout (a git worktree, node_modules linked in) to compare two builds of the
 * readers; interleave the two on a quiet host, as the figures move with the machine.
 */
import { addResponseEvents, audioDeltaBase64, audioDeltaInfo, decodeFrameBytes, responseRequestMetrics, sentStampOf, stampSent, textDeltaInfo } from '@duplex-bench/protocol';

const [rounds, n] = [Number(process.argv[2] ?? 7), Number(process.argv[3] ?? 50_000)];
if (!(Number.isInteger(rounds) && rounds > 0 && Number.isInteger(n) && n > 0)) {
  process.stderr.write('usage: delta-read.ts [ROUNDS=7] [N=50000] (whole numbers above 0)\n');
  process.exit(2);
}

const payload = Buffer.alloc(3528).toString('base64');
const stamp = 1234567.891;
const audio = Buffer.from(
  stampSent(
    `{"type":"response.output_audio.delta","response_id":"resp_0","item_id":"item_resp_0","output_index":0,"content_index":0,"delta":"${payload}","sglang":{"unit_id":"unit_0","chunk_seq":0,"media_time":{"t_start_ms":0,"duration_ms":80}},"event_id":"mock_1_e4"}`,
    stamp,
  ),
);
const transcript = Buffer.from(stampSent('{"type":"response.output_audio_transcript.delta","event_id":"mock_1_e5","response_id":"resp_0","item_id":"item_resp_0","output_index":0,"content_index":0,"delta":" "}', stamp));
const receipt = Buffer.from(stampSent('{"type":"sglang.input_audio.accepted","event_id":"mock_1_e2","seq":0,"accepted_end_ms":80,"client_event_id":"s0_a0"}', stamp));
const near = Buffer.from('"delta":');
const missing = Buffer.from('"missing"');

let sink = 0;
const add = (e: { t_s: number }) => {
  sink += e.t_s;
};
// Each case decodes the bytes again: the figures a reader keeps are on the frame, so none is found from an earlier round.
const cases: Record<string, () => unknown> = {
  'audio delta: decode': () => decodeFrameBytes(audio),
  'audio delta: decode + audioDeltaInfo': () => audioDeltaInfo(decodeFrameBytes(audio)),
  'audio delta: decode + the response events and the payload (the session)': () => {
    const frame = decodeFrameBytes(audio);
    addResponseEvents(frame, 1, add);
    return audioDeltaBase64(frame);
  },
  'audio delta: decode + responseRequestMetrics alone': () => responseRequestMetrics(decodeFrameBytes(audio)),
  'transcript delta: decode + textDeltaInfo': () => textDeltaInfo(decodeFrameBytes(transcript)),
  'receipt: decode': () => decodeFrameBytes(receipt),
  'send stamp of an audio delta': () => sentStampOf(audio),
  'indexOf: key near the start of an audio delta': () => audio.indexOf(near),
  'indexOf: key missing from an audio delta': () => audio.indexOf(missing),
  'indexOf: one byte, from the payload on': () => audio.indexOf(0x22, 130),
};

function time(f: () => unknown, count: number): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < count; i++) f();
  return Number(process.hrtime.bigint() - t0) / count;
}

const names = Object.keys(cases);
for (const name of names) time(cases[name], Math.min(n, 20_000));
const samples: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
for (let r = 0; r < rounds; r++) for (const name of names) samples[name].push(time(cases[name], n));
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
process.stdout.write(`| case | ns per frame, median [min–max] of ${rounds} rounds of ${n} |\n| --- | --- |\n`);
for (const name of names) {
  const v = samples[name];
  process.stdout.write(`| ${name} | ${median(v).toFixed(0)} [${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)}] |\n`);
}
if (sink === 0) process.stdout.write('(no response event was read)\n');
