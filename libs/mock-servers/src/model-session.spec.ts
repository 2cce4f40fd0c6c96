import { VirtualTimeScheduler } from 'rxjs';
import { schedulerTimerHost } from '@duplex-bench/pacer';
import { ModelSession, type ModelOptions } from './model-session';
import { NativeTurnFrames, OpenAITurnFrames } from './turn-frames';
import { OpenAIServerEvents } from '@duplex-bench/protocol';

/**
 * The model mock's timing in virtual time: every figure is exact, as nothing else shares the clock.
 * (The same profiles over a real socket, with wall-clock tolerances, are in e2e/model-profile.e2e.ts.)
 */
function model(options: Partial<ModelOptions>, unit_ms = 80) {
  const scheduler = new VirtualTimeScheduler();
  const out: Array<{ t_ms: number; type: string; event: Record<string, unknown> }> = [];
  let id = 0;
  const frames = new NativeTurnFrames(Buffer.alloc(3528).toString('base64'), () => `ev_${id++}`);
  const full: ModelOptions = { ttfp_ms: 200, rtf: 0.5, burst_units: 1, turn_every_s: Infinity, ...options };
  const session = new ModelSession(full, unit_ms, frames, schedulerTimerHost(scheduler), (frame) => {
    const event = JSON.parse(frame) as Record<string, unknown>;
    out.push({ t_ms: scheduler.now(), type: String(event.type), event });
  });
  const at = (t_ms: number, fn: () => void) => scheduler.schedule(fn, t_ms);
  const times = (type: string) => out.filter((e) => e.type === type).map((e) => e.t_ms);
  return { session, scheduler, at, out, times };
}

describe('ModelSession in virtual time', () => {
  it('first audio ttfp_ms after the turn began, then a unit every unit_ms x rtf', () => {
    const m = model({ ttfp_ms: 300, rtf: 0.5 });
    let ended_ms = -1;
    m.at(0, () => {
      for (let i = 0; i < 12; i++) m.session.onInputUnit(i);
      m.session.onInputEnd(0, () => (ended_ms = m.scheduler.now()));
    });
    m.scheduler.flush();
    expect(m.times('response.created')).toEqual([0]);
    expect(m.times('response.output_audio.delta')).toEqual(Array.from({ length: 12 }, (_, k) => 300 + 40 * k));
    expect(m.times('response.done')).toEqual([740]);
    expect(ended_ms).toBe(740);
  });

  it('input at its real pace: output waits ttfp_ms, then catches up and leaves each unit as it arrives', () => {
    const m = model({ ttfp_ms: 200, rtf: 0.5 });
    for (let i = 0; i < 10; i++) m.at(i * 80, () => m.session.onInputUnit(i));
    m.scheduler.flush();
    // Unit k is due at max(200 + 40k, 80k): 200, 240, 280, 320, 360, 400, then 480, 560, 640, 720.
    expect(m.times('response.output_audio.delta')).toEqual([200, 240, 280, 320, 360, 400, 480, 560, 640, 720]);
  });

  it('past its capacity the model shares its compute: load 2 doubles TTFP and makes a unit take unit_ms x load', () => {
    const m = model({ ttfp_ms: 100, rtf: 0.5, load: () => 2 });
    m.at(0, () => {
      for (let i = 0; i < 6; i++) m.session.onInputUnit(i);
      m.session.onInputEnd(0, () => undefined);
    });
    m.scheduler.flush();
    expect(m.times('response.output_audio.delta')).toEqual([200, 360, 520, 680, 840, 1000]);
  });

  it('sends bursts: units go out burst_units at a time, when the last of them is produced', () => {
    const m = model({ ttfp_ms: 100, rtf: 0.5, burst_units: 4 });
    m.at(0, () => {
      for (let i = 0; i < 8; i++) m.session.onInputUnit(i);
      m.session.onInputEnd(0, () => undefined);
    });
    m.scheduler.flush();
    expect(m.times('response.output_audio.delta')).toEqual([220, 220, 220, 220, 380, 380, 380, 380]);
  });

  it('starts a turn every turn_every_s of input (minicpmo), and keeps one for the session when it is Infinity (nemotron)', () => {
    const turns = model({ ttfp_ms: 50, rtf: 0.1, turn_every_s: 0.4 });
    for (let i = 0; i < 12; i++) turns.at(i * 80, () => turns.session.onInputUnit(i));
    turns.at(12 * 80, () => turns.session.onInputEnd(0, () => undefined));
    turns.scheduler.flush();
    // 0.96 s of input, a turn per 0.4 s: turns begin with units 0, 5 and 10.
    expect(turns.times('response.created')).toEqual([0, 400, 800]);
    expect(turns.times('response.done')).toHaveLength(3);

    const one = model({ ttfp_ms: 50, rtf: 0.1 });
    for (let i = 0; i < 12; i++) one.at(i * 80, () => one.session.onInputUnit(i));
    one.at(12 * 80, () => one.session.onInputEnd(0, () => undefined));
    one.scheduler.flush();
    expect(one.times('response.created')).toEqual([0]);
    expect(one.times('response.done')).toEqual([960]);
  });

  it('a padded tail owes a whole unit of output while its unit reports the remainder', () => {
    const m = model({ ttfp_ms: 50, rtf: 0.5, tokens_per_step: 2 });
    m.at(0, () => {
      for (let i = 0; i < 3; i++) m.session.onInputUnit(i);
      m.session.onInputEnd(20, () => undefined);
    });
    m.scheduler.flush();
    const units = m.out.filter((e) => e.type === 'sglang.unit.done').map((e) => (e.event.sglang as { media_time: { duration_ms: number } }).media_time.duration_ms);
    expect(units).toEqual([80, 80, 80, 20]);
    expect(m.times('response.output_audio.delta')).toEqual([50, 90, 130, 170]);
    const done = m.out.find((e) => e.type === 'response.done')?.event.response as { num_tokens_out?: number };
    expect(done.num_tokens_out).toBe(8);
  });

  it('cancel drops queued output and ends the open turn cancelled; no timer fires after it', () => {
    const m = model({ ttfp_ms: 200, rtf: 0.5 });
    m.at(0, () => {
      for (let i = 0; i < 4; i++) m.session.onInputUnit(i);
    });
    m.at(250, () => m.session.cancel());
    m.scheduler.flush();
    expect(m.times('response.output_audio.delta')).toEqual([200, 240]);
    const done = m.out.filter((e) => e.type === 'response.done');
    expect(done.map((e) => e.t_ms)).toEqual([250]);
    expect((done[0].event.response as { status: string }).status).toBe('cancelled');
  });

  it("ends each turn with the transcript its deltas carried, an hour's turn held as a count (OpenAI frames: three turns, the last cancelled)", () => {
    const scheduler = new VirtualTimeScheduler();
    const out: Array<Record<string, unknown>> = [];
    const frames = new OpenAITurnFrames(new OpenAIServerEvents('sess', 'ga'), Buffer.alloc(3840).toString('base64'), schedulerTimerHost(scheduler), false);
    const session = new ModelSession({ ttfp_ms: 100, rtf: 0.5, burst_units: 1, turn_every_s: 0.4 }, 80, frames, schedulerTimerHost(scheduler), (frame) => out.push(JSON.parse(frame) as Record<string, unknown>));
    for (let i = 0; i < 14; i++) scheduler.schedule(() => session.onInputUnit(i), i * 80);
    scheduler.schedule(() => session.cancel(), 14 * 80 + 90);
    scheduler.flush();
    const deltas = new Map<string, string>();
    for (const e of out) if (e.type === 'response.output_audio_transcript.delta') deltas.set(String(e.response_id), (deltas.get(String(e.response_id)) ?? '') + String(e.delta));
    const done = out.filter((e) => e.type === 'response.output_audio_transcript.done');
    expect(done.length).toBeGreaterThanOrEqual(3);
    for (const d of done) expect(d.transcript).toBe(deltas.get(String(d.response_id)) ?? '');
    // Not all the same text: each turn starts where its first unit fell in the word cycle.
    expect(new Set(done.map((d) => d.transcript)).size).toBeGreaterThan(1);
  });
});
