// The voice activity thread: the model's received audio of every conversation session, placed on
// its playout clock and run through the VAD here, so the event loop that paces packets never does.
import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '@duplex-bench/pacer';
import { SpeechDetector } from './voice-activity';
import type { FromVoiceWorker, ToVoiceWorker, VoiceWorkerOptions } from './voice-messages';

const options = workerData as VoiceWorkerOptions;
const port = parentPort;
if (!port) throw new Error('voice-worker must run as a worker thread');

/**
 * Digital silence this long, pushed after a segment's last sound, closes the segment: longer than the
 * 500 ms over which spans merge and than libfvad's hangover, so a segment's spans end inside it and
 * never merge with the next one's. Until sound comes again nothing is resampled or run through the VAD:
 * a native model sends silence between answers, and it cost as much as speech did.
 */
const CLOSE_AFTER_SILENCE_S = 0.6;

/** A stretch of one session's playout, from a chunk with sound to the silence that closes it, in one detector. */
interface Segment {
  detector: Promise<SpeechDetector>;
  origin_s: number;
  /** Silence pushed since its last sound, s. */
  silent_s: number;
}

/**
 * One session's audio as its user's speaker plays it: each chunk from its receipt on, after the one
 * before; an arrival gap is silence, so span times stay on the playout clock.
 */
interface Playout {
  rate: number;
  played_until_s: number;
  segment: Segment | null;
  spans: Array<{ start_s: number; end_s: number }>;
  /** Detector work in order: each step waits for the one before. */
  queue: Promise<void>;
  error?: string;
}

const sessions = new Map<string, Playout>();
let zeros = Buffer.alloc(0);

function post(message: FromVoiceWorker): void {
  port?.postMessage(message);
}

/** `bytes` of digital silence: a view of one buffer of zeros, which nothing writes to. */
function silence(bytes: number): Buffer {
  if (zeros.length < bytes) zeros = Buffer.alloc(bytes * 2);
  return zeros.subarray(0, bytes);
}

function isSilent(pcm: Buffer): boolean {
  return pcm.equals(silence(pcm.length));
}

function then(p: Playout, step: () => void | Promise<void>): void {
  p.queue = p.queue.then(step).catch((err: Error) => {
    p.error ??= err.message;
  });
}

/** Pushes `seconds` of silence into the segment, in pieces of at most a second. */
function pushSilence(p: Playout, segment: Segment, seconds: number): void {
  const bytes = Math.round(seconds * p.rate) * 2;
  segment.silent_s += seconds;
  then(p, async () => {
    const d = await segment.detector;
    for (let left = bytes; left > 0; left -= p.rate * 2) d.push(silence(Math.min(left, p.rate * 2)));
  });
}

function closeSegment(p: Playout): void {
  const segment = p.segment;
  if (!segment) return;
  p.segment = null;
  then(p, async () => {
    const d = await segment.detector;
    for (const span of d.end()) p.spans.push({ start_s: segment.origin_s + span.start_ms / 1000, end_s: segment.origin_s + span.end_ms / 1000 });
  });
}

/** A received chunk; `silent` when it is known to be digital silence. */
function add(session: string, received_s: number, rate: number, pcm: Buffer, silent = isSilent(pcm)): void {
  let p = sessions.get(session);
  if (!p) {
    p = { rate, played_until_s: received_s, segment: null, spans: [], queue: Promise.resolve() };
    sessions.set(session, p);
  }
  const start_s = Math.max(received_s, p.played_until_s);
  const gap_s = start_s - p.played_until_s;
  // A chunk at another rate than the session's first is timed by its own rate and taken as is.
  p.played_until_s = start_s + pcm.length / 2 / rate;
  const segment = p.segment;
  if (segment && gap_s > 0) {
    const room = Math.max(0, CLOSE_AFTER_SILENCE_S - segment.silent_s);
    pushSilence(p, segment, Math.min(gap_s, room));
    if (gap_s >= room) closeSegment(p);
  }
  if (!p.segment) {
    if (silent) return;
    p.segment = { detector: SpeechDetector.open(p.rate, options.settings), origin_s: start_s, silent_s: 0 };
  }
  const open = p.segment;
  open.silent_s = silent ? open.silent_s + pcm.length / 2 / rate : 0;
  then(p, async () => (await open.detector).push(pcm));
  if (open.silent_s >= CLOSE_AFTER_SILENCE_S) closeSegment(p);
}

async function end(session: string): Promise<void> {
  const p = sessions.get(session);
  sessions.delete(session);
  if (!p) return post({ kind: 'spans', session, spans: [] });
  closeSegment(p);
  await p.queue;
  post({ kind: 'spans', session, spans: p.spans, ...(p.error ? { error: p.error } : {}) });
}

port.on('message', (m: ToVoiceWorker) => {
  switch (m.kind) {
    case 'chunks': {
      let at = 0;
      for (let i = 0; i < m.sessions.length; i++) {
        if (m.silent_bytes[i] > 0) {
          add(m.sessions[i], m.received_s[i], m.rates[i], silence(m.silent_bytes[i]), true);
          continue;
        }
        add(m.sessions[i], m.received_s[i], m.rates[i], Buffer.from(Buffer.from(m.bytes, at, m.lengths[i]).toString('latin1'), 'base64'));
        at += m.lengths[i];
      }
      return;
    }
    case 'end':
      void end(m.session);
      return;
    case 'stop':
      void Promise.all([...sessions.keys()].map(end)).then(() => post({ kind: 'stopped' }));
      return;
  }
});
lowerThreadPriority(options.nice);
post({ kind: 'ready' });
