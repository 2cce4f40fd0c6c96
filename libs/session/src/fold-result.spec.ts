import { TraceWriteError } from '@duplex-bench/tracer';
import { nativeServer } from './native-server.spec-helpers';
import { openai, virtualSession } from './session.spec-helpers';

describe('foldResult: the result from what the parts counted', () => {
  it('a trace that cannot be written makes a complete session incomplete as trace_write_failed', async () => {
    const v = virtualSession({ dialect: { protocol: 'native' }, accept: (s) => nativeServer(s) });
    v.sink.failClose = new TraceWriteError('/out/sessions/s0/trace.jsonl', 'ENOSPC', 'cannot write /out/sessions/s0/trace.jsonl: ENOSPC');
    const result = await v.result();
    expect(result).toMatchObject({ completed: false, reason: 'trace_write_failed', message: expect.stringContaining('trace.jsonl') });
    expect(v.sink.closed).toBe(true);
  });

  it('counts a server error after the grant and goes on', async () => {
    const result = await openai({ error_after_grant: 'unknown_parameter' }).result();
    expect(result).toMatchObject({ completed: true, server_errors: 1, server_error_codes: { unknown_parameter: 1 } });
  });

  it('times the first audio from response.created received', async () => {
    const result = await openai({ answer_ms: 40 }).result();
    // Created and its first delta arrive at the same instant.
    expect(result.responses?.[0].ttfp_ms).toBe(0);
  });
});
