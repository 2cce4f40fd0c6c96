/**
 * Voice activity on received audio: CPU time of the detector per second of audio at the rates
 * servers send (16, 22.05 and 24 kHz; resampling to the VAD's rate included), fed in 80 ms chunks
 * as the voice activity thread feeds it, with the default settings (16 kHz, linear interpolation)
 * and, interleaved round by round, with the windowed sinc to 8 kHz that came before; and of the
 * loop's level estimate (pcm16Dbfs) per 80 ms chunk at 22,050 Hz. Median and range of 7 rounds,
 * each on 20 s of the committed espeak-ng speech with silence between (about half of it speech).
 *
 *   node --import tsx tools/bench/vad.ts
 */
import { readWavAs, pcm16Dbfs, SpeechDetector, VOICE_ACTIVITY_DEFAULTS, voiceActivitySettings, type VoiceActivitySettings } from '@duplex-bench/audio';
import { join } from 'node:path';
import { hostInfo, hostLine } from './host';

const ROUNDS = 7;
const AUDIO_S = 20;
const CHUNK_CALLS = 200_000;
const SPEECH = ['q1', 'q2', 'stop', 'q3a', 'q3b', 'mhm', 'answer'];

/** AUDIO_S seconds of speech and 1 s silences at `rate`, as a model's answer might arrive. */
async function received(rate: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let bytes = 0;
  for (let i = 0; bytes < AUDIO_S * rate * 2; i++) {
    const { pcm } = await readWavAs(join(__dirname, '..', '..', 'libs', 'audio', 'speech', `${SPEECH[i % SPEECH.length]}.wav`), rate);
    parts.push(pcm, Buffer.alloc(rate * 2));
    bytes += pcm.length + rate * 2;
  }
  return Buffer.concat(parts).subarray(0, AUDIO_S * rate * 2);
}

/** CPU µs (user + system) per second of audio that the detector takes over `pcm`, fed in 80 ms chunks; and its span count. */
async function detect(pcm: Buffer, rate: number, settings: Readonly<VoiceActivitySettings>): Promise<{ us: number; spans: number }> {
  const t0 = process.cpuUsage();
  const d = await SpeechDetector.open(rate, settings);
  const chunk = Math.round(rate * 0.08) * 2;
  for (let at = 0; at < pcm.length; at += chunk) d.push(pcm.subarray(at, at + chunk));
  const spans = d.end().length;
  const t = process.cpuUsage(t0);
  return { us: (t.user + t.system) / AUDIO_S, spans };
}

function stats(values: number[]): string {
  const v = [...values].sort((a, b) => a - b);
  return `${v[Math.floor(v.length / 2)].toFixed(0)} [${v[0].toFixed(0)}–${v[v.length - 1].toFixed(0)}]`;
}

const SINC = voiceActivitySettings({ sample_rate: 8000, resampler: 'sinc' });

async function main(): Promise<void> {
  console.log(hostLine(hostInfo(undefined)));
  console.log(`SpeechDetector, ${AUDIO_S} s of audio per round in 80 ms chunks, ${ROUNDS} rounds: CPU µs per second of audio, median [range]`);
  console.log(`  rate      default (${VOICE_ACTIVITY_DEFAULTS.sample_rate} Hz, ${VOICE_ACTIVITY_DEFAULTS.resampler})   sinc to 8 kHz        ratio of medians`);
  for (const rate of [16000, 22050, 24000]) {
    const pcm = await received(rate);
    await detect(pcm, rate, VOICE_ACTIVITY_DEFAULTS); // loads the wasm and warms the JIT
    await detect(pcm, rate, SINC);
    const now: number[] = [];
    const before: number[] = [];
    let spans = '';
    for (let r = 0; r < ROUNDS; r++) {
      const a = await detect(pcm, rate, VOICE_ACTIVITY_DEFAULTS);
      const b = await detect(pcm, rate, SINC);
      now.push(a.us);
      before.push(b.us);
      spans = `${a.spans} / ${b.spans} spans`;
    }
    const median = (v: number[]) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)];
    console.log(`  ${String(rate).padStart(5)} Hz  ${stats(now).padEnd(27)} ${stats(before).padEnd(20)} ${(median(now) / median(before)).toFixed(2)}x (${spans})`);
  }
  const pcm = await received(22050);
  const chunk_bytes = 1764 * 2;
  const chunks = Math.floor(pcm.length / chunk_bytes);
  const ns: number[] = [];
  let sink = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < CHUNK_CALLS; i++) {
      const at = (i % chunks) * chunk_bytes;
      sink += pcm16Dbfs(pcm.subarray(at, at + chunk_bytes));
    }
    ns.push(Number(process.hrtime.bigint() - t0) / CHUNK_CALLS);
  }
  console.log(`pcm16Dbfs of one 80 ms chunk at 22,050 Hz (1,764 samples), ${CHUNK_CALLS} calls per round: ns per chunk ${stats(ns)}`);
  if (Number.isNaN(sink)) console.log(sink);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
