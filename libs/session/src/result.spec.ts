import { emptyResult } from './result';
import { virtualSession } from './session.spec-helpers';

describe('emptyResult: a session before anything happened', () => {
  it('is not complete and counts nothing, in a record of its own for each call (a session writes into its result)', () => {
    const first = emptyResult('s7');
    expect(first).toEqual({ id: 's7', completed: false, violation: false, packets_sent: 0, late: 0, server_errors: 0 });
    first.packets_sent = 12;
    first.completed = true;
    expect(emptyResult('s7')).toEqual({ id: 's7', completed: false, violation: false, packets_sent: 0, late: 0, server_errors: 0 });
  });

  it('is what a session refused at its upgrade reports, with only what ended it added', async () => {
    const v = virtualSession({ dialect: { protocol: 'native' }, answer: () => ({ refuse: 404 }) });
    const result = await v.result();
    expect(result).toMatchObject({ id: 's0', completed: false, violation: false, packets_sent: 0, late: 0, server_errors: 0, reason: 'connect_failed' });
    expect(v.server.sessions).toHaveLength(0);
  });
});
