import { ProtocolError } from './errors';
import { decodeFrame } from './frame';
import { serverError } from './native';

describe('ProtocolError', () => {
  it('is an Error that carries its code, names itself, and has empty info unless given', () => {
    const err = new ProtocolError('UNEXPECTED_EVENT', 'response.done before response.created');
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ name: 'ProtocolError', code: 'UNEXPECTED_EVENT', message: 'response.done before response.created' });
    expect(err.info).toEqual({});
    expect(String(err)).toBe('ProtocolError: response.done before response.created');
  });

  it('keeps the context it is given for the reason line', () => {
    const info = { event_type: 'response.done', excerpt: '{"type":"response.done"' };
    expect(new ProtocolError('UNEXPECTED_EVENT', 'x', info).info).toBe(info);
  });
});

describe('the codes, as a session meets each case', () => {
  it('MALFORMED_FRAME: a frame that is not a JSON object with a string type, quoted in its excerpt', () => {
    const caught = (() => {
      try {
        decodeFrame('{"type": 7}');
        return null;
      } catch (err) {
        return err;
      }
    })();
    expect(caught).toBeInstanceOf(ProtocolError);
    expect(caught).toMatchObject({ code: 'MALFORMED_FRAME', info: { excerpt: '{"type": 7}' } });
  });

  it("SERVER_ERROR: the server's error event, with its code and type and whether it ends the session", () => {
    const err = serverError(decodeFrame(JSON.stringify({ type: 'error', error: { type: 'server_error', code: 'overloaded', message: 'try later' }, sglang: { fatal: true } })));
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err).toMatchObject({ code: 'SERVER_ERROR', message: 'server error overloaded (fatal): try later', info: { event_type: 'error', server_code: 'overloaded', server_type: 'server_error', fatal: true } });
  });
});
