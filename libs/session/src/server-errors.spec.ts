import { ProtocolError } from '@duplex-bench/protocol';
import { emptyResult } from './result';
import { ServerErrors } from './server-errors';

const error = (code: string, fatal = false) => new ProtocolError('SERVER_ERROR', `server error ${code}`, { server_code: code, fatal });

describe('ServerErrors', () => {
  it('counts by code, keeps the last, and stops on the first the dialect stops on, once', () => {
    const errors = new ServerErrors();
    let stops = 0;
    errors.stopped$.subscribe(() => stops++);
    errors.add(error('a'), false);
    errors.add(error('b', true), true);
    errors.add(error('a'), true);
    expect(errors.codes).toEqual({ a: 2, b: 1 });
    expect(errors.last?.info.server_code).toBe('a');
    expect(errors.stoppedBy?.info.server_code).toBe('b');
    expect(stops).toBe(1);
    const result = { ...emptyResult('s'), reason: 'server_error' as const };
    errors.fold(result);
    expect(result).toMatchObject({ server_errors: 3, server_error_codes: { a: 2, b: 1 }, server_error: { code: 'b', fatal: true } });
  });

  it("forgets a refused attempt's errors, and names the last error of a client_protocol_error", () => {
    const errors = new ServerErrors();
    errors.add(error('resource_exhausted'), false);
    errors.forget();
    expect([errors.count, errors.codes, errors.last]).toEqual([0, {}, null]);
    errors.add(error('playback_item_mismatch'), false);
    const result = { ...emptyResult('s'), reason: 'client_protocol_error' as const };
    errors.fold(result);
    expect(result.server_error).toMatchObject({ code: 'playback_item_mismatch', fatal: false });
  });
});
