import { ConversationError, type ConversationScript } from '@duplex-bench/audio';
import { BEHAVIOUR_DEFAULTS } from './behaviour-session';
import { behaviourReportSettings, resolveBehaviour } from './behaviour-settings';
import { ENERGY_VAD } from './energy-vad';

const RATE = 22050;
const script: ConversationScript = { name: 'two turns', file: '/scripts/two.yaml', steps: [{ kind: 'say', file: '/scripts/q1.wav' }, { kind: 'listen', until: 'model_done', max_s: 15 }] };

describe('resolveBehaviour', () => {
  it('takes the knobs given and the defaults for the rest, with no script when none is given', async () => {
    const load = () => 2;
    const b = await resolveBehaviour({ respond_after_ms: 300, yield_on_backchannel: true }, RATE, load);
    expect(b).toMatchObject({ ...BEHAVIOUR_DEFAULTS, respond_after_ms: 300, yield_on_backchannel: true, script: null });
    expect(b.load).toBe(load);
  });

  it('reads the answer audio at the output rate, answer_ms long', async () => {
    const b = await resolveBehaviour({ answer_ms: 1000 }, RATE, () => 1);
    expect([b.answer.rate, b.answer.samples]).toEqual([RATE, RATE]);
    const d = await resolveBehaviour({ respond_after_ms: 100 }, RATE, () => 1);
    expect(d.answer.samples).toBe((RATE * BEHAVIOUR_DEFAULTS.answer_ms) / 1000);
  });

  it('takes 0 for every ms knob but answer_ms, which must be above 0', async () => {
    await expect(resolveBehaviour({ respond_after_ms: 0, stop_after_ms: 0, takeover_after_ms: 0 }, RATE, () => 1)).resolves.toMatchObject({ respond_after_ms: 0, stop_after_ms: 0, takeover_after_ms: 0 });
    await expect(resolveBehaviour({ answer_ms: 0 }, RATE, () => 1)).rejects.toThrow('behaviour answer_ms must be a number of ms above 0, got 0');
  });

  it('refuses a negative or non-finite knob, naming it', async () => {
    await expect(resolveBehaviour({ respond_after_ms: -1 }, RATE, () => 1)).rejects.toThrow(new RangeError('behaviour respond_after_ms must be a number of ms of 0 or more, got -1'));
    await expect(resolveBehaviour({ stop_after_ms: NaN }, RATE, () => 1)).rejects.toThrow(/stop_after_ms/);
    await expect(resolveBehaviour({ takeover_after_ms: Infinity }, RATE, () => 1)).rejects.toThrow(/takeover_after_ms/);
  });

  it('takes a script as given, or reads a built-in one by name', async () => {
    expect((await resolveBehaviour({ conversation: script }, RATE, () => 1)).script).toBe(script);
    const built = (await resolveBehaviour({ conversation: 'default' }, RATE, () => 1)).script;
    expect(built?.name).toBe('default');
    expect(built?.steps.length).toBeGreaterThan(0);
  });

  it('throws ConversationError for a script it cannot read', async () => {
    await expect(resolveBehaviour({ conversation: '/no/such/script.yaml' }, RATE, () => 1)).rejects.toBeInstanceOf(ConversationError);
  });
});

describe('behaviourReportSettings', () => {
  it('states the knobs, the capacity, the script, the VAD, where the answer is voiced in ms, and the output rate', async () => {
    const b = await resolveBehaviour({ respond_after_ms: 250, takeover_after_ms: 900, conversation: script }, RATE, () => 1);
    const r = behaviourReportSettings(b, 8);
    expect(r).toEqual({
      respond_after_ms: 250,
      answer_ms: BEHAVIOUR_DEFAULTS.answer_ms,
      stop_after_ms: BEHAVIOUR_DEFAULTS.stop_after_ms,
      takeover_after_ms: 900,
      yield_on_backchannel: false,
      capacity_sessions: 8,
      conversation: { name: 'two turns', file: '/scripts/two.yaml' },
      vad: ENERGY_VAD,
      answer_voiced_ms: { onset: (b.answer.onset_sample / RATE) * 1000, offset: (b.answer.offset_sample / RATE) * 1000 },
      output_sample_rate: RATE,
    });
    expect(r.answer_voiced_ms.offset).toBeGreaterThan(r.answer_voiced_ms.onset);
  });

  it('states no capacity and no conversation as null', async () => {
    const r = behaviourReportSettings(await resolveBehaviour({ answer_ms: 500 }, RATE, () => 1), undefined);
    expect([r.capacity_sessions, r.conversation]).toEqual([null, null]);
  });
});
