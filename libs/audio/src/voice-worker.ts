// The voice activity thread: the model's received audio of every conversation session, placed on
// its playout clock and run through the VAD here, so the event loop that paces packets never does.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { SpeechDetector } from './voice-activity';
import type { FromVoiceWorker, ToVoiceWorker, VoiceWorkerOptions } from './voice-messages';

const options = workerData as VoiceWorkerOptions;
const port = parentPort;
if (!port) throw new Error('voice-worker must run as a worker thread');

/**
 * One session's audio as its user's speaker plays it: each chunk from its receipt on, after the one
 * before; an arrival gap is silence pushed into the detector, so span times stay on the playout clock.
 */
interface Playout {
  detector: Promise<SpeechDetector>;
  rate: number;
  origin_s: number;
  played_until_s: number;
  /** Pushes in order: each waits for the detector and the push before it. */
  queue: Promise<void>;
  error?: string;
}

const sessions = new Map<string, Playout>();

function post(message: FromVoiceWorker): void {
  port?.postMessage(message);
}

function add(session: string, received_s: number, rate: number, pcm: Buffer): void {
  let p = sessions.get(session);
  if (!p) {
    p = { detector: SpeechDetector.open(rate, options.settings), rate, origin_s: received_s, played_until_s: received_s, queue: Promise.resolve() };
    sessions.set(session, p);
  }
  const start_s = Math.max(received_s, p.played_until_s);
  const gap = Math.round((start_s - p.played_until_s) * p.rate) * 2;
  // A chunk at another rate than the session's first is timed by its own rate and taken as is.
  p.played_until_s = start_s + pcm.length / 2 / rate;
  const playout = p;
  p.queue = p.queue
    .then(() => playout.detector)
    .then((d) => {
      if (gap > 0) d.push(Buffer.alloc(gap));
      d.push(pcm);
    })
    .catch((err: Error) => {
      playout.error ??= err.message;
    });
}

async function end(session: string): Promise<void> {
  const p = sessions.get(session);
  sessions.delete(session);
  if (!p) return post({ kind: 'spans', session, spans: [] });
  await p.queue;
  try {
    const d = await p.detector;
    const spans = d.end().map((s) => ({ start_s: p.origin_s + s.start_ms / 1000, end_s: p.origin_s + s.end_ms / 1000 }));
    post({ kind: 'spans', session, spans, ...(p.error ? { error: p.error } : {}) });
  } catch (err) {
    post({ kind: 'spans', session, spans: [], error: p.error ?? (err as Error).message });
  }
}

port.on('message', (m: ToVoiceWorker) => {
  switch (m.kind) {
    case 'chunks': {
      let at = 0;
      for (let i = 0; i < m.sessions.length; i++) {
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
/** Lowers this thread's priority (Linux: setpriority on the thread id); elsewhere it runs at the loop's. */
function lowerPriority(nice: number): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid)) setPriority(tid, nice);
  } catch {
    // not Linux, or not permitted
  }
}

lowerPriority(options.nice);
post({ kind: 'ready' });
