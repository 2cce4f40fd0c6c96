import { ReplaySubject } from 'rxjs';
import { WebSocketServer, type WebSocket } from 'ws';
import { monotonicClock } from '@duplex-bench/pacer';
import { ManualTimers } from '@duplex-bench/pacer/testing';
import type { AdmissionRefusal, SessionTraceSink } from '@duplex-bench/tracer';
import type { SessionContext } from './context';
import { RealtimeSession } from './realtime-session';

const BOUND_MS = 3000;

/** A vLLM-Omni-like server whose first `refusals` openings are refused as a full server does. */
async function fullServer(refusals: number): Promise<{ url: string; openings: () => number; close: () => Promise<void> }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  let openings = 0;
  wss.on('connection', (ws: WebSocket) => {
    ws.on('message', (data) => {
      if (JSON.parse(String(data)).type !== 'session.update') return;
      if (++openings <= refusals) {
        ws.send(JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', code: 'resource_exhausted', message: 'duplex_session_capacity_exhausted: limit=1' } }));
        ws.close(1000, 'resource_exhausted');
        return;
      }
      ws.send(JSON.stringify({ type: 'session.created', session: { id: 's', audio: { output: { sample_rate_hz: 24000 } } } }));
    });
  });
  const port = (wss.address() as { port: number }).port;
  return {
    url: `ws://127.0.0.1:${port}/v1/realtime?duplex=1&autostart=0`,
    openings: () => openings,
    close: () => new Promise<void>((resolve) => {
      for (const c of wss.clients) c.terminate();
      wss.close(() => resolve());
    }),
  };
}

/** What a session's open needs of its run: the dialect, the bounds, the admission policy, the timers. */
function context(url: string, timers: ManualTimers, retries: number): SessionContext {
  return {
    url,
    dialect: { protocol: 'vllm-omni', turn_detection: 'none', commit_every_packets: Infinity },
    clock: monotonicClock,
    timers,
    connect_timeout_ms: BOUND_MS,
    handshake_timeout_ms: BOUND_MS,
    drain_timeout_ms: BOUND_MS,
    // 300 ms, not the playback ack's 250: the test fires the backoff by its delay.
    admission: { retries, backoff_ms: 300, max_backoff_ms: 5000 },
    output_sample_rate: 24000,
    unknownEvents: new Map(),
    stop$: new ReplaySubject<void>(1),
    onStreamStart: () => undefined,
    onStreamEnd: () => undefined,
    // open() reads the input rate only; the rest of a run's context is for streaming.
    packets: { sample_rate: 16000 },
  } as unknown as SessionContext;
}

function sink(admissions: Array<[number, AdmissionRefusal]>): SessionTraceSink {
  return {
    tracesFrames: false,
    sent: () => true,
    received: () => true,
    receipt: () => undefined,
    error: () => undefined,
    close: async () => undefined,
    admission: (attempt: number, refusal: AdmissionRefusal) => admissions.push([attempt, refusal]),
  } as unknown as SessionTraceSink;
}

/** Waits (bounded, on the real clock) until the session has armed its backoff, then fires that one timer by hand. */
async function fireBackoff(timers: ManualTimers, delay_ms: number): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  for (;;) {
    const entry = timers.pending.find((t) => t.delay_ms === delay_ms);
    if (entry) {
      timers.pending = timers.pending.filter((t) => t !== entry);
      entry.fn();
      return;
    }
    if (Date.now() > deadline) throw new Error(`no ${delay_ms} ms backoff armed within ${BOUND_MS} ms`);
    await new Promise((r) => setImmediate(r));
  }
}

describe('RealtimeSession.open on a full server', () => {
  it('records each refusal, waits the doubling backoff on its timers, and opens once a slot is free', async () => {
    const server = await fullServer(2);
    const timers = new ManualTimers();
    const admissions: Array<[number, AdmissionRefusal]> = [];
    const session = new RealtimeSession('s0', context(server.url, timers, 3), sink(admissions));
    try {
      const opened = session.open();
      await fireBackoff(timers, 300);
      await fireBackoff(timers, 600);
      await opened;
      expect(server.openings()).toBe(3);
      expect(admissions).toEqual([
        [1, { code: 'resource_exhausted' }],
        [2, { code: 'resource_exhausted' }],
      ]);
    } finally {
      session.conn.fail(new Error('test over'));
      await server.close();
    }
  });

  it('gives up as admission_refused once its retries are spent, without a further wait', async () => {
    const server = await fullServer(5);
    const timers = new ManualTimers();
    const admissions: Array<[number, AdmissionRefusal]> = [];
    const session = new RealtimeSession('s0', context(server.url, timers, 1), sink(admissions));
    try {
      const opened = session.open();
      await fireBackoff(timers, 300);
      await expect(opened).rejects.toMatchObject({ reason: 'admission_refused', message: 'server refused the session with resource_exhausted 2 times' });
      expect(server.openings()).toBe(2);
      // Every refusal is recorded, the last one too: a blocked arrival's trace says it was refused.
      expect(admissions.map(([attempt]) => attempt)).toEqual([1, 2]);
    } finally {
      await server.close();
    }
  });
});
