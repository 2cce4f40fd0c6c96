import WebSocket from 'ws';
import { monotonicClock } from '@duplex-bench/pacer';
import { packets, playedSpans, scriptedInput, type SentFrame } from './behaviour.spec-helpers';
import type { BehaviourEvent } from './behaviour-log';
import { startMockServer, type MockServer } from './mock-server';

jest.setTimeout(30_000);

/**
 * Streams `pcm` (16 kHz) to a native mock at its real pace (80 ms appends on deadlines from the
 * first), ends the input, and collects what comes back with its receipt time, ms on the monotonic
 * clock the mock reads too.
 */
async function streamNative(server: MockServer, pcm: Buffer): Promise<{ frames: SentFrame[]; t0_ms: number }> {
  const ws = new WebSocket(server.url);
  const frames: SentFrame[] = [];
  const appends = packets(pcm, 16000);
  let t0_ms = 0;
  await new Promise<void>((resolve, reject) => {
    const bound = setTimeout(() => reject(new Error('no drained within 20 s')), 20_000);
    ws.on('error', reject);
    ws.on('message', (data) => {
      const event = JSON.parse(String(data));
      frames.push({ t_ms: monotonicClock.now_s() * 1000, event });
      if (event.type === 'session.created') ws.send(JSON.stringify({ type: 'session.update', event_id: 'u', session: { output_modalities: ['audio'] } }));
      if (event.type === 'session.updated') {
        t0_ms = monotonicClock.now_s() * 1000;
        const next = (seq: number) => {
          if (seq === appends.length) {
            ws.send(JSON.stringify({ type: 'sglang.input_audio.end', event_id: 'end' }));
            return;
          }
          ws.send(JSON.stringify({ type: 'input_audio_buffer.append', event_id: `a${seq}`, audio: appends[seq], sglang: { seq, t_start_ms: seq * 80 } }));
          setTimeout(() => next(seq + 1), Math.max(0, t0_ms + (seq + 1) * 80 - monotonicClock.now_s() * 1000));
        };
        next(0);
      }
      if (event.type === 'sglang.input_audio.drained') {
        clearTimeout(bound);
        ws.send(JSON.stringify({ type: 'session.close', event_id: 'c' }));
      }
      if (event.type === 'session.closed') resolve();
    });
  });
  ws.close();
  return { frames, t0_ms };
}

describe('native model mock in behaviour mode over a socket', () => {
  let server: MockServer | undefined;
  afterEach(() => server?.close());

  it('answers respond-after past the user speech it heard, and its stats log says when, on the clock the client reads', async () => {
    server = await startMockServer({ port: 0, profile: 'nemotron', behaviour: { respond_after_ms: 400, answer_ms: 1500 } });
    const input = scriptedInput([{ say: 'q1' }, { silence_ms: 2500 }], 16000);
    const { frames, t0_ms } = await streamNative(server, input.pcm);
    const report = server.stats().behaviour;
    expect(report?.settings).toMatchObject({ respond_after_ms: 400, answer_ms: 1500, stop_after_ms: 200, takeover_after_ms: 0, yield_on_backchannel: false, conversation: null, output_sample_rate: 22050 });
    const events = report?.sessions[0].events ?? [];
    const of = <K extends BehaviourEvent['kind']>(k: K) => events.filter((e): e is Extract<BehaviourEvent, { kind: K }> => e.kind === k);
    const q1 = input.says[0];
    const [end] = of('speech_end');
    // Heard where the client sent it (its packet's send plus the sample's offset), within the host's scheduling.
    expect(end.input_ms).toBe(q1.offset_ms);
    expect(Math.abs(end.t_ms - (t0_ms + q1.offset_ms))).toBeLessThan(40);
    const [start] = of('answer_start');
    expect(start.due_ms).toBeCloseTo(end.t_ms + 400, 3);
    expect(Math.abs(start.t_ms - start.due_ms)).toBeLessThanOrEqual(80 + 40);
    const spans = playedSpans(frames, 22050, ['response.output_audio.delta']);
    expect(spans).toHaveLength(1);
    expect(Math.abs(spans[0].start_ms - start.t_ms)).toBeLessThan(40);
    expect(of('answer_end')[0].why).toBe('done');
  });

  it('openai: answers with one response after the user speech it heard, and logs it', async () => {
    server = await startMockServer({ port: 0, protocol: 'openai', profile: 'model', behaviour: { respond_after_ms: 400, answer_ms: 1000 } });
    const input = scriptedInput([{ say: 'mhm' }, { silence_ms: 2000 }], 24000);
    const appends = packets(input.pcm, 24000);
    const ws = new WebSocket(server.url);
    const frames: SentFrame[] = [];
    let t0_ms = 0;
    await new Promise<void>((resolve, reject) => {
      const bound = setTimeout(() => reject(new Error('no response.done within 10 s')), 10_000);
      ws.on('error', reject);
      ws.on('message', (data) => {
        const event = JSON.parse(String(data));
        frames.push({ t_ms: monotonicClock.now_s() * 1000, event });
        if (event.type === 'session.created') {
          expect(event.session.audio.input.turn_detection).toMatchObject({ type: 'server_vad', interrupt_response: true });
          t0_ms = monotonicClock.now_s() * 1000;
          const next = (seq: number) => {
            if (seq === appends.length || ws.readyState !== WebSocket.OPEN) return;
            ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: appends[seq] }));
            setTimeout(() => next(seq + 1), Math.max(0, t0_ms + (seq + 1) * 80 - monotonicClock.now_s() * 1000));
          };
          next(0);
        }
        if (event.type === 'response.done') {
          clearTimeout(bound);
          resolve();
        }
      });
    });
    ws.close(1000);
    const events = server.stats().behaviour?.sessions[0].events ?? [];
    const end = events.find((e) => e.kind === 'speech_end');
    const start = events.find((e) => e.kind === 'answer_start');
    expect(Math.abs((end?.t_ms ?? 0) - (t0_ms + input.says[0].offset_ms))).toBeLessThan(40);
    expect(Math.abs((start?.t_ms ?? 0) - ((end?.t_ms ?? 0) + 400))).toBeLessThan(40);
    const spans = playedSpans(frames, 24000, ['response.output_audio.delta']);
    expect(Math.abs(spans[0].start_ms - (start?.t_ms ?? 0))).toBeLessThan(40);
    expect(frames.filter((f) => f.event.type === 'response.created')).toHaveLength(1);
  });

  it('keeps its stats as they were without a knob: no behaviour block', async () => {
    server = await startMockServer({ port: 0, profile: 'nemotron', capacity_sessions: 2 });
    expect(server.stats().behaviour).toBeUndefined();
  });
});
