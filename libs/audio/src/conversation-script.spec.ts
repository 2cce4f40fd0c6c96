import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConversationError, parseConversation, readConversation, speechDir } from './conversation-script';

describe('readConversation', () => {
  it('reads the built-in default: turns, one barge-in, one pause and one backchannel, its WAVs beside it', async () => {
    const script = await readConversation('default');
    expect(script.name).toBe('default');
    const kinds = script.steps.map((s) => s.kind + ('expect' in s && s.expect ? `:${s.expect}` : ''));
    expect(kinds).toEqual(['say', 'listen', 'say', 'listen', 'say:stop', 'say', 'silence:hold', 'say', 'listen', 'say:continue', 'listen']);
    expect(script.steps[0]).toEqual({ kind: 'say', file: join(speechDir(), 'q1.wav') });
    expect(script.steps[1]).toEqual({ kind: 'listen', until: 'model_done', max_s: 15 });
    expect(script.steps[3]).toEqual({ kind: 'listen', until: 'model_speech', ms: 800, max_s: 15 });
  });

  it('reads JSON as well, paths relative to the script; a missing file or WAV is one clear error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'conv-'));
    await writeFile(join(dir, 'a.wav'), 'RIFF');
    await writeFile(join(dir, 's.json'), JSON.stringify({ steps: [{ say: 'a.wav' }, { silence_ms: 400, expect: 'hold' }] }));
    const script = await readConversation(join(dir, 's.json'));
    expect(script).toEqual({ name: 's', file: join(dir, 's.json'), steps: [{ kind: 'say', file: join(dir, 'a.wav') }, { kind: 'silence', ms: 400, expect: 'hold' }] });
    await expect(readConversation(join(dir, 'none.yaml'))).rejects.toThrow(/no such file \(built-in scripts: default\)/);
    await writeFile(join(dir, 'b.yaml'), 'steps:\n  - say: missing.wav\n');
    await expect(readConversation(join(dir, 'b.yaml'))).rejects.toThrow(/say: no such file .*missing\.wav/);
  });
});

describe('parseConversation', () => {
  const bad = (doc: unknown) => {
    try {
      parseConversation(doc, '/s.yaml');
    } catch (err) {
      expect(err).toBeInstanceOf(ConversationError);
      return (err as Error).message;
    }
    throw new Error('accepted');
  };
  it('refuses each malformed step by its number and key', () => {
    expect(bad([])).toBe('/s.yaml: the script: expected a mapping with name and steps');
    expect(bad({ steps: [] })).toBe('/s.yaml: steps: expected a list of at least one step');
    expect(bad({ steps: [{ say: 'a.wav', listen: {} }] })).toBe('/s.yaml: step 1: expected exactly one of say, listen, silence_ms; found say, listen');
    expect(bad({ steps: [{ say: 'a.wav', expect: 'hold' }] })).toBe('/s.yaml: step 1: say: expect must be stop or continue, got hold');
    expect(bad({ steps: [{ say: 'a.wav' }, { silence_ms: -1 }] })).toBe('/s.yaml: step 2: silence_ms: expected a number of ms above 0, got -1');
    expect(bad({ steps: [{ listen: { until: 'model_speech' } }] })).toBe('/s.yaml: step 1: listen: until model_speech needs ms above 0, got undefined');
    expect(bad({ steps: [{ listen: { until: 'later' } }] })).toBe('/s.yaml: step 1: listen: until must be model_done or model_speech, got later');
    expect(bad({ steps: [{ listen: { until: 'model_done', ms: 5 } }] })).toBe('/s.yaml: step 1: listen: ms goes with until: model_speech');
    expect(bad({ steps: [{ say: 'a.wav', loud: true }] })).toBe('/s.yaml: step 1: unknown key loud');
  });
});
