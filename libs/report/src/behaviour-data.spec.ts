import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BehaviourRecorder, encodeSamples, PacingRecorder, SampleStore, type SessionSpeech, type TurnRecord } from '@duplex-bench/metrics';
import { behaviourReport, chooseSession, latencyDistribution, MAX_TIMELINES, sessionTimeline, timelineBehaviour } from './behaviour-data';
import { loadReport } from './report-data';
import { renderReportHtml } from './report-html';

/** One pass of a script as a session played it: say, listen, barge-in, pause, say, listen, backchannel. Times ms from its first packet. */
function speech(session: string): SessionSpeech {
  return {
    session,
    model_speech: 'vad',
    steps: [
      { pass: 0, step: 0, kind: 'say', start_ms: 0, end_ms: 2480, speech_start_ms: 2.5, speech_end_ms: 2104.5 },
      { pass: 0, step: 1, kind: 'listen', start_ms: 2480, end_ms: 4000, ended_by: 'trigger' },
      { pass: 0, step: 2, kind: 'say', expect: 'stop', start_ms: 4000, end_ms: 5000, speech_start_ms: 4000.4, speech_end_ms: 4900 },
      { pass: 0, step: 3, kind: 'silence', expect: 'hold', start_ms: 5000, end_ms: 6500 },
      { pass: 0, step: 4, kind: 'say', start_ms: 6500, end_ms: 7500, speech_start_ms: 6510, speech_end_ms: 7400 },
      { pass: 0, step: 5, kind: 'listen', start_ms: 7500, end_ms: 8400, ended_by: 'trigger' },
      { pass: 0, step: 6, kind: 'say', expect: 'continue', start_ms: 8400, end_ms: 9000, speech_start_ms: 8402, speech_end_ms: 8900 },
      { pass: 0, step: 7, kind: 'listen', start_ms: 9000, end_ms: null, cut: true },
    ],
    model: [
      [2580, 4220.5],
      [5400, 6100],
      [7880, 9600],
    ],
    events: [
      { t_ms: 2500, event: 'created' },
      { t_ms: 4230, event: 'done', status: 'cancelled' },
      { t_ms: 9700, event: 'done', status: 'listen' },
    ],
  };
}

/** The behaviour events of that pass: the response answered after `response_ms`. */
function turns(session: string, response_ms: number): TurnRecord[] {
  const base = { session, pass: 0 };
  return [
    { ...base, step: 0, kind: 'response', outcome: 'answered', user_start_ms: 2.5, user_end_ms: 2104.5, model_start_ms: 2104.5 + response_ms, model_end_ms: 4220.5, latency_ms: response_ms },
    { ...base, step: 2, kind: 'stop', outcome: 'stopped', user_start_ms: 4000.4, user_end_ms: 4900, model_start_ms: 2580, model_end_ms: 4220.5, latency_ms: 220.1, cancel_latency_ms: 229.6, cancel_status: 'cancelled' },
    { ...base, step: 3, kind: 'pause', outcome: 'took_over', user_start_ms: 5000, user_end_ms: 6500, model_start_ms: 5400, model_end_ms: 6100 },
    { ...base, step: 4, kind: 'response', outcome: 'no_response', user_start_ms: 6510, user_end_ms: 7400 },
    { ...base, step: 6, kind: 'backchannel', outcome: 'continued', user_start_ms: 8402, user_end_ms: 8900, model_start_ms: 7880, model_end_ms: 9600 },
  ];
}

describe('a conversation session on its timeline', () => {
  it("rows the user's utterances by role, the pauses, the model's spans and the protocol events, in seconds", () => {
    const t = sessionTimeline('p0', speech('s1'), [...turns('s1', 475.5), ...turns('s2', 300)]);
    expect(t.user).toEqual([
      { from_s: 0.0025, to_s: 2.1045, role: 'utterance', pass: 0, step: 0 },
      { from_s: 4.0004, to_s: 4.9, role: 'barge-in', pass: 0, step: 2 },
      { from_s: 6.51, to_s: 7.4, role: 'utterance', pass: 0, step: 4 },
      { from_s: 8.402, to_s: 8.9, role: 'backchannel', pass: 0, step: 6 },
    ]);
    expect(t.pauses).toEqual([{ from_s: 5, to_s: 6.5, pass: 0, step: 3 }]);
    expect(t.model).toEqual([
      [2.58, 4.2205],
      [5.4, 6.1],
      [7.88, 9.6],
    ]);
    expect(t.events.map((e) => e.label)).toEqual(['response.created', 'response.done cancelled', 'response.listen']);
    // Its own events only, the session ending with its last event.
    expect(t.behaviours).toHaveLength(5);
    expect(t.end_s).toBe(9.7);
    expect(t).toMatchObject({ process: 'p0', session: 's1', model_speech: 'vad' });
  });

  it('marks each behaviour over the interval its figure reads, with its outcome said and judged', () => {
    const [response, stop, pause, none, backchannel] = turns('s1', 475.5).map(timelineBehaviour);
    expect(response).toMatchObject({ from_s: 2.1045, to_s: 2.58, latency_ms: 475.5, label: 'response 475.5 ms', expected: true });
    expect(stop).toMatchObject({ from_s: 4.0004, to_s: 4.2205, cancel_s: 4.23, cancel_status: 'cancelled', label: 'stop 220.1 ms; cancel 229.6 ms', expected: true });
    expect(pause).toMatchObject({ from_s: 5, to_s: 6.5, label: 'pause taken over', expected: false });
    expect(none).toMatchObject({ from_s: 7.4, to_s: 7.4, latency_ms: null, label: 'no response', expected: false });
    expect(backchannel).toMatchObject({ from_s: 8.402, to_s: 8.9, label: 'backchannel: continued', expected: true });
    expect(timelineBehaviour({ ...turns('s1', 1)[1], outcome: 'not_speaking' })).toMatchObject({ label: 'barge-in: model not speaking', expected: null });
  });

  it('shows first the complete session whose median response latency is the median of the sessions’ medians', () => {
    const ts = [
      sessionTimeline('', speech('s0'), turns('s0', 900)),
      sessionTimeline('', speech('s1'), turns('s1', 300)),
      sessionTimeline('', speech('s2'), turns('s2', 500)),
      sessionTimeline('', speech('s3'), turns('s3', 400)),
    ];
    expect(chooseSession(ts, () => true)).toEqual({ index: 3, why: "the complete session whose median response latency (400 ms) is the median of 4 sessions' medians" });
    // s3 incomplete: of s0, s1 and s2 the median is s2's.
    expect(chooseSession(ts, (_, id) => id !== 's3').index).toBe(2);
    const silent = ts.map((t) => ({ ...t, behaviours: t.behaviours.filter((b) => b.kind !== 'response') }));
    expect(chooseSession(silent, (_, id) => id !== 's0')).toEqual({ index: 1, why: 'the first complete session: no response latency was measured' });
  });
});

describe('the behaviour distributions', () => {
  it('bins latencies equally, none narrower than 1 ms, every value counted once', () => {
    const values = [400, 410, 420, 430, 440, 450, 460, 470, 480, 490, 500];
    const d = latencyDistribution(values, { answered: 11 });
    expect(d.counts.reduce((a, b) => a + b, 0)).toBe(11);
    expect(d.width_ms).toBe(20);
    expect(d.x_ms[0]).toBe(410);
    expect(d.counts).toEqual([2, 2, 2, 2, 3]);
    const close = latencyDistribution([201.3, 201.5, 201.8], {});
    expect(close).toMatchObject({ count: 3, counts: [0, 0, 3, 0, 0], width_ms: 1 });
    expect(close.x_ms[2]).toBeCloseTo(201.55, 3);
    expect(latencyDistribution([], {})).toEqual({ count: 0, x_ms: [], width_ms: 0, counts: [], outcomes: {} });
  });

  it('reads every latency and outcome from turns.jsonl, and bounds the sessions a page carries', () => {
    const summary = new BehaviourRecorder({ response_latency_ms: 'client' }).summary();
    const many = Array.from({ length: MAX_TIMELINES + 5 }, (_, i) => `s${i}`);
    const r = behaviourReport(summary, [{ process: '', turns: many.flatMap((id, i) => turns(id, 300 + i)), speech: many.map(speech) }], () => true);
    expect(r.distributions.response_latency_ms.count).toBe(many.length);
    expect(r.distributions.response_latency_ms.outcomes).toEqual({ answered: many.length, no_response: many.length });
    expect(r.distributions.stop_latency_ms).toMatchObject({ count: many.length, outcomes: { stopped: many.length } });
    expect(r.distributions.cancel_latency_ms).toMatchObject({ count: many.length, outcomes: { 'cancel evidence': many.length, 'no cancel evidence': 0 } });
    expect(r.outcomes).toEqual({ response: { answered: 45, no_response: 45 }, stop: { stopped: 45 }, pause: { took_over: 45 }, backchannel: { continued: 45 } });
    expect(r.sessions_with_speech).toBe(many.length);
    expect(r.timelines).toHaveLength(MAX_TIMELINES);
    // The median session: s22, 322 ms.
    expect(r.timelines[r.shown].session).toBe('s22');
    expect(r.timelines.map((t) => t.session).slice(0, 3)).toEqual(['s0', 's1', 's2']);
  });

  it('keeps the session it shows when that one is past the first MAX_TIMELINES in id order', () => {
    const summary = new BehaviourRecorder({}).summary();
    const many = Array.from({ length: MAX_TIMELINES + 5 }, (_, i) => `s${i}`);
    // Only s41…s44 complete: the median of their medians is s42's.
    const r = behaviourReport(summary, [{ process: '', turns: many.flatMap((id, i) => turns(id, 500 + i)), speech: many.map(speech) }], (_, id) => Number(id.slice(1)) > MAX_TIMELINES);
    expect(r.timelines[r.shown].session).toBe('s42');
    expect(r.timelines).toHaveLength(MAX_TIMELINES);
    expect(r.timelines.map((t) => t.session).slice(-2)).toEqual(['s38', 's42']);
  });
});

describe('the run page of a conversation, and of a run without one', () => {
  async function runDir(conversation: boolean): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'report-behaviour-'));
    const store = new SampleStore(80);
    const col = store.open('s0');
    for (let seq = 0; seq < 10; seq++) col.push({ seq, scheduled_s: 10 + seq * 0.08, start_s: 10 + seq * 0.08, completed_s: 10 + seq * 0.08, send_ms: 0.1, buffered_bytes: 0 });
    await writeFile(join(dir, 'samples.msgpack'), encodeSamples(store.toFile(new PacingRecorder(80))));
    const recorder = new BehaviourRecorder({ response_latency_ms: 'client: the utterance’s end → the model’s next span' });
    recorder.add(turns('s0', 450), 0);
    const summary = { qualified: true, interrupted: false, packet_ms: 80, packets: { sent: 10, late: 0 }, sessions: { started: 1, completed: 1, incomplete: 0, with_violation: 0, incomplete_reasons: {} } };
    await writeFile(join(dir, 'summary.json'), JSON.stringify(conversation ? { ...summary, behaviour: recorder.summary() } : summary));
    await writeFile(join(dir, 'sessions.json'), JSON.stringify({ sessions: [{ id: 's0', completed: true, packets_sent: 10, late: 0 }] }));
    if (conversation) {
      await writeFile(join(dir, 'turns.jsonl'), turns('s0', 450).map((t) => `${JSON.stringify(t)}\n`).join(''));
      await writeFile(join(dir, 'speech.jsonl'), `${JSON.stringify(speech('s0'))}\n`);
    }
    return dir;
  }

  it('a conversation run: its behaviour, the timeline of its one session, and the section and script to draw them', async () => {
    const data = await loadReport(await runDir(true));
    expect(data.behaviour?.summary.response_latency_ms.count).toBe(1);
    expect(data.behaviour?.summary.response_latency_ms.p50).toBeCloseTo(450, 0);
    expect(data.behaviour?.timelines.map((t) => t.session)).toEqual(['s0']);
    expect(data.behaviour?.shown_why).toMatch(/median response latency \(450 ms\)/);
    expect(data.behaviour?.summary.measurement_origin.response_latency_ms).toMatch(/next span/);
    const html = renderReportHtml(data);
    expect(html).toContain('<div id="behaviour"></div>');
    expect(html).toContain("A conversation run's behaviour");
  });

  it('a run without a conversation: no behaviour, no empty section, no behaviour script', async () => {
    const data = await loadReport(await runDir(false));
    expect(data.behaviour).toBeNull();
    const html = renderReportHtml(data);
    expect(html).not.toContain('id="behaviour"');
    expect(html).not.toContain("A conversation run's behaviour");
    // uPlot, the shared charts and the run page's own script: no behaviour script.
    expect(html.match(/<script>/g)).toHaveLength(3);
  });
});
