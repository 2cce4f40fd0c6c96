/**
 * The client's work per received frame, in one process with nothing else running: the four frames
 * the append-echo mock answers each packet with (ack, audio delta, transcript delta, unit done),
 * taken from a real trace, through each stage of the receive path. Figures in ns per packet cycle
 * (the four frames), median of --rounds rounds of --cycles cycles.
 *
 *   node --import tsx tools/bench/receive-path.ts TRACE.jsonl [--cycles 20000] [--rounds 7]
 *   (a trace: duplex-bench run --concurrency 1 --duration 1 --trace full --keep-traces against the mock)
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { ResponseTracker, type ResponseEvent } from '@duplex-bench/metrics';
import { addResponseEvents, decodeFrame, decodeFrameBytes } from '@duplex-bench/protocol';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { cycles: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '7' } } });
const cycles = Number(values.cycles);
const rounds = Number(values.rounds);
const WANTED = ['sglang.input_audio.accepted', 'response.output_audio.delta', 'response.output_audio_transcript.delta', 'sglang.unit.done'];
const records = readFileSync(positionals[0], 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { direction: string; event: { type: string } });
const frames = WANTED.map((t) => {
  const r = records.find((x) => x.direction === 'receive' && x.event.type === t);
  if (!r) throw new Error(`no ${t} in the trace`);
  return Buffer.from(JSON.stringify(r.event));
});
const created = Buffer.from(JSON.stringify(records.find((x) => x.event.type === 'response.created')?.event));

function stage(name: string, body: (buf: Buffer, t_s: number) => void): void {
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < cycles; i++) for (const f of frames) body(f, i * 0.08);
    times.push(((performance.now() - t0) * 1e6) / cycles);
  }
  times.sort((a, b) => a - b);
  console.log(`${name.padEnd(44)} ${times[Math.floor(rounds / 2)].toFixed(0).padStart(7)} ns per packet cycle [${times[0].toFixed(0)}–${times[rounds - 1].toFixed(0)}]`);
}

let sink = 0;
stage('toString', (b) => (sink += b.toString('utf8').length));
stage('toString + decodeFrame', (b) => (sink += decodeFrame(b.toString('utf8')).type.length));
const tracker = new ResponseTracker({ output_sample_rate: 22050 }, 0);
const add = (e: ResponseEvent) => tracker.add(e);
addResponseEvents(decodeFrame(created.toString()), 0, add);
stage('toString + decodeFrame + response events', (b, t) => addResponseEvents(decodeFrame(b.toString('utf8')), t, add));
stage('decodeFrameBytes', (b) => (sink += decodeFrameBytes(b).type.length));
stage('decodeFrameBytes + response events', (b, t) => addResponseEvents(decodeFrameBytes(b), t, add));
if (sink < 0) console.log(sink);

// Stages of the response events, each over the same decoded frames (decoding not counted).
import { audioDeltaInfo, responseRequestMetrics, gaEventName } from '@duplex-bench/protocol';
const texts = frames.map((b) => b.toString('utf8'));
let k = 0;
stage('decodeFrame only', (_b) => (sink += decodeFrame(texts[k++ % 4]).type.length));
k = 0;
stage('gaEventName', (_b) => (sink += gaEventName(WANTED[k++ % 4]).length));
const audio = texts[1];
stage('audioDeltaInfo (fresh frame each time)', () => (sink += audioDeltaInfo(decodeFrame(audio)).bytes));
stage('decodeFrame (audio only, for the above)', () => (sink += decodeFrame(audio).type.length));
const decodedAudio = decodeFrame(audio);
const decodedText = decodeFrame(texts[2]);
stage('responseRequestMetrics (audio + text)', () => {
  sink += responseRequestMetrics(decodedAudio) ? 1 : 0;
  sink += responseRequestMetrics(decodedText) ? 1 : 0;
});
let t = 1;
stage('tracker.add (audio + text events)', () => {
  t += 0.02;
  tracker.add({ kind: 'audio_delta', t_s: t, response_id: 'resp_0', bytes: 3528 });
  tracker.add({ kind: 'text_delta', t_s: t, response_id: 'resp_0', chars: 1 });
});
