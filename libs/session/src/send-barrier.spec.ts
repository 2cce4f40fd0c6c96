import { SendBarrier } from './send-barrier';

describe('SendBarrier', () => {
  it('passes once every expected session reported, and at once when none is expected', async () => {
    const b = new SendBarrier();
    let passed = false;
    void b.passed.then(() => (passed = true));
    b.expect(2);
    b.done();
    await Promise.resolve();
    expect(passed).toBe(false);
    b.done();
    await b.passed;
    expect(passed).toBe(true);
    const none = new SendBarrier();
    none.expect(0);
    await expect(none.passed).resolves.toBeUndefined();
  });
});
