import { createSessionFlow } from './create-flow';

describe('createSessionFlow', () => {
  it("makes each dialect's flow, a new one per call, and names unknown dialects", () => {
    expect(createSessionFlow({ protocol: 'native' }, 's0').protocol).toBe('native');
    expect(createSessionFlow({ protocol: 'openai', turn_detection: 'none', commit_every_packets: 5 }, 's0').protocol).toBe('openai');
    const vllm = { protocol: 'vllm-omni', turn_detection: 'none', commit_every_packets: 5 } as const;
    expect(createSessionFlow(vllm, 's0')).not.toBe(createSessionFlow(vllm, 's0'));
    expect(() => createSessionFlow({ protocol: 'legacy' } as never, 's0')).toThrow('unknown dialect {"protocol":"legacy"}');
  });
});
