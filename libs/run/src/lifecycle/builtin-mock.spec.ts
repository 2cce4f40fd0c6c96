import { EventEmitter } from 'node:events';
import { UsageError, type RunIo } from '@duplex-bench/cli';
import { builtinMockArgs, withBuiltinMock } from './builtin-mock';

const base = { protocol: 'native' as const, turn_detection: 'none' as const, output: '/r' };

describe('builtinMockArgs', () => {
  it('serves the append-echo mock for a native run, a model with a conversation, or the profile asked', () => {
    expect(builtinMockArgs(base)).toEqual(['--profile', 'append-echo', '--stamp-sends', '--stats-output', '/r/mock.json']);
    expect(builtinMockArgs({ ...base, conversation: 'default' })).toEqual(['--profile', 'nemotron', '--conversation', 'default', '--stamp-sends', '--stats-output', '/r/mock.json']);
    expect(builtinMockArgs({ ...base, mock_profile: 'minicpmo' })).toEqual(['--profile', 'minicpmo', '--stamp-sends', '--stats-output', '/r/mock.json']);
  });

  it("speaks the run's dialect: openai, vLLM-Omni (turn-based under server VAD) and the legacy protocol", () => {
    expect(builtinMockArgs({ ...base, protocol: 'openai' }).slice(0, 2)).toEqual(['--protocol', 'openai']);
    expect(builtinMockArgs({ ...base, protocol: 'vllm-omni' }).slice(0, 4)).toEqual(['--protocol', 'openai', '--flavor', 'vllm-omni']);
    expect(builtinMockArgs({ ...base, protocol: 'vllm-omni', turn_detection: 'server_vad' })).toContain('--turn-based');
    expect(builtinMockArgs({ ...base, protocol: 'sglang-legacy', turn_detection: 'server_vad', conversation: 'default' })).toEqual(['--profile', 'qwen3-omni-half-duplex', '--stamp-sends', '--stats-output', '/r/mock.json']);
  });
});

describe('withBuiltinMock', () => {
  const io: RunIo = { stdout: { write: () => true }, stderr: { write: () => true }, signals: new EventEmitter(), exitNow: () => undefined, argv: [] };
  it.each([
    [{ processes: 2 }],
    [{ processes: 1, start_at_ms: 1 }],
    [{ processes: 1, shard: { index: 0, count: 2 } }],
  ])('needs --url for a run of more than one process (%j), before starting anything', async (more) => {
    let ran = false;
    const run = withBuiltinMock({ ...base, ...more } as never, io, async () => ((ran = true), 0));
    await expect(run).rejects.toThrow(UsageError);
    await expect(run).rejects.toThrow('--url is required with --processes, --shard or --start-at');
    expect(ran).toBe(false);
  });
});
