import WebSocket from 'ws';
import { ResponseTracker, type ResponseEvent } from '@duplex-bench/metrics';
import { monotonicClock } from '@duplex-bench/pacer';
import { startMockServer, type MockServer } from '../src/mock-server';
import type { ModelOptions } from '../src/model-session';

jest.setTimeout(30_000);

const AUDIO_80MS = Buffer.alloc(2560).toString('base64');

/** Streams `units` whole input units at once, ends the input, and collects every event until drained. */
async function converse(server: MockServer, units: number, tailBytes = 0): Promise<Array<{ t_s: number; event: Record<string, unknown> }>> {
  const ws = new WebSocket(server.url);
  const events: Array<{ t_s: number; event: Record<string, unknown> }> = [];
  const drained = new Promise<void>((resolve, reject) => {
    const bound = setTimeout(() => reject(new Error('no drained within 20 s')), 20_000);
    ws.on('message', (data) => {
      const event = JSON.parse(String(data));
      events.push({ t_s: monotonicClock.now_s(), event });
      if (event.type === 'session.created') ws.send(JSON.stringify({ type: 'session.update', event_id: 'u', session: {} }));
      if (event.type === 'session.updated') {
        for (let seq = 0; seq < units; seq++) {
          ws.send(JSON.stringify({ type: 'input_audio_buffer.append', event_id: `a${seq}`, audio: AUDIO_80MS, sglang: { seq, t_start_ms: seq * 80 } }));
        }
        if (tailBytes > 0) ws.send(JSON.stringify({ type: 'input_audio_buffer.append', event_id: 'tail', audio: Buffer.alloc(tailBytes).toString('base64'), sglang: { seq: units, t_start_ms: units * 80 } }));
        ws.send(JSON.stringify({ type: 'sglang.input_audio.end', event_id: 'end' }));
      }
      if (event.type === 'sglang.input_audio.drained') {
        clearTimeout(bound);
        resolve();
      }
    });
    ws.on('error', reject);
  });
  await drained;
  ws.close();
  return events;
}

function track(events: Array<{ t_s: number; event: Record<string, unknown> }>): ResponseTracker {
  const tracker = new ResponseTracker({ output_sample_rate: 22050 }, events[0].t_s);
  for (const { t_s, event: e } of events) {
    const id = String(e.response_id ?? (e.response as { id?: string } | undefined)?.id ?? '');
    const tokens = (e.sglang as { num_tokens?: number } | undefined)?.num_tokens;
    let ev: ResponseEvent | null = null;
    if (e.type === 'response.created') ev = { kind: 'response_created', t_s, response_id: id };
    else if (e.type === 'response.output_audio.delta') ev = { kind: 'audio_delta', t_s, response_id: id, bytes: Buffer.from(String(e.delta), 'base64').length };
    else if (e.type === 'response.output_audio_transcript.delta') ev = { kind: 'text_delta', t_s, response_id: id, chars: String(e.delta).length, tokens };
    else if (e.type === 'response.done') ev = { kind: 'response_done', t_s, response_id: id };
    if (ev) tracker.add(ev);
  }
  return tracker;
}

describe('model profile', () => {
  let server: MockServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  // nemotron's 80 ms units and 22,050 Hz output; minicpmo (turns) at the same unit for the turn test.
  const start = async (model: Partial<ModelOptions>, profile: 'nemotron' | 'minicpmo' = 'nemotron') => {
    server = await startMockServer({ port: 0, profile, model, ...(profile === 'minicpmo' ? { unit_ms: 80, output_sample_rate: 22050 } : {}) });
    return server;
  };

  // Tolerances: the server's timers wake late, never early, but the client sees response.created
  // (its origin) when its own loop gets to it, which can shorten what it measures; ±40 ms and
  // ±0.06 cover both on a shared 2-core host with other tests running.
  it('answers with the configured first-packet latency and real-time factor', async () => {
    const events = await converse(await start({ ttfp_ms: 300, rtf: 0.5, burst_units: 1 }), 12);
    const [r] = track(events).done;
    expect(r.ttfp_ms).toBeGreaterThan(300 - 40);
    expect(r.ttfp_ms).toBeLessThan(340);
    // 12 units of 80 ms; the last produced 300 + 11 x 40 ms after the turn began.
    expect(r.audio_duration_ms).toBeCloseTo(960, 3);
    expect(r.rtf).toBeGreaterThan(740 / 960 - 0.06);
    expect(r.rtf).toBeLessThan(740 / 960 + 0.06);
  });

  it('past --capacity-sessions the model shares its compute: TTFP and the real-time factor grow as active/N', async () => {
    // One session against a capacity of half a session: load 2, so TTFP 2 x 100 ms and a unit per 160 ms (not 40).
    server = await startMockServer({ port: 0, profile: 'nemotron', model: { ttfp_ms: 100, rtf: 0.5, burst_units: 1 }, capacity_sessions: 0.5 });
    const [r] = track(await converse(server, 6)).done;
    expect(r.ttfp_ms).toBeGreaterThan(200 - 40);
    expect(r.ttfp_ms).toBeLessThan(200 + 40);
    // The last of 6 units: 200 + 5 x 160 ms after the turn began, over 480 ms of audio.
    expect(r.rtf).toBeGreaterThan(1000 / 480 - 0.15);
    expect(r.rtf).toBeLessThan(1000 / 480 + 0.15);
  });

  it('sends bursts: the first audio waits for a whole burst', async () => {
    const events = await converse(await start({ ttfp_ms: 100, rtf: 0.5, burst_units: 4 }), 8);
    const [r] = track(events).done;
    expect(r.ttfp_ms).toBeGreaterThan(100 + 3 * 40 - 40);
    expect(r.ttfp_ms).toBeLessThan(100 + 3 * 40 + 40);
    const audio = events.filter((e) => e.event.type === 'response.output_audio.delta').map((e) => e.t_s);
    expect(audio).toHaveLength(8);
    expect((audio[3] - audio[0]) * 1000).toBeLessThan(10); // one burst
    expect((audio[4] - audio[3]) * 1000).toBeGreaterThan(100); // the next burst, 4 x 40 ms later
  });

  it('minicpmo: starts a new turn every turn_every_s of input, each with response.created and response.done', async () => {
    const events = await converse(await start({ ttfp_ms: 50, rtf: 0.1, burst_units: 1, turn_every_s: 0.4 }, 'minicpmo'), 12);
    const created = events.filter((e) => e.event.type === 'response.created');
    const done = events.filter((e) => e.event.type === 'response.done');
    expect(created).toHaveLength(3); // 12 units x 80 ms = 0.96 s of input, a turn per 0.4 s
    expect(done).toHaveLength(3);
  });

  it('nemotron: keeps one response for the whole session, whatever turn_every_s says', async () => {
    const events = await converse(await start({ ttfp_ms: 50, rtf: 0.1, burst_units: 1, turn_every_s: 0.4 }), 12);
    expect(events.filter((e) => e.event.type === 'response.created')).toHaveLength(1);
    const done = events.findIndex((e) => e.event.type === 'response.done');
    expect(done).toBeGreaterThan(events.findIndex((e) => e.event.type === 'sglang.input_audio.ended'));
  });

  it('reports per-step tokens so TPOT can be checked: 2 tokens every 40 ms is 20 ms per token', async () => {
    const events = await converse(await start({ ttfp_ms: 50, rtf: 0.5, burst_units: 1, tokens_per_step: 2 }), 10);
    const [r] = track(events).done;
    expect(r.tokens).toBe(20);
    expect(r.tpot_ms).toBeGreaterThan(16);
    expect(r.tpot_ms).toBeLessThan(26);
    const done = events.find((e) => e.event.type === 'response.done')?.event.response as { num_tokens_out?: number };
    expect(done.num_tokens_out).toBe(20);
  });

  it('ends input in order: ended, last audio, last unit done (the remainder), audio done, response done, drained', async () => {
    const events = await converse(await start({ ttfp_ms: 50, rtf: 0.5, burst_units: 1 }), 3, 640);
    const types = events.map((e) => e.event.type as string);
    const ended = types.indexOf('sglang.input_audio.ended');
    const tail = types.slice(ended).filter((t) => t !== 'response.output_audio_transcript.delta' && t !== 'sglang.input_audio.accepted');
    expect(tail.slice(-5)).toEqual(['response.output_audio.delta', 'sglang.unit.done', 'response.output_audio.done', 'response.done', 'sglang.input_audio.drained']);
    const lastUnit = events.filter((e) => e.event.type === 'sglang.unit.done').at(-1)?.event;
    expect(lastUnit).toMatchObject({ unit_id: 'unit_3', sglang: { media_time: { t_start_ms: 240, duration_ms: 20 } } });
    const drained = events.at(-1)?.event as Record<string, number>;
    expect(drained).toMatchObject({ accepted_end_ms: 260, padding_ms: 60, consumed_ms: 260 });
  });
});
