import { meetsGoodput, ownGoodputValues, parseGoodput } from './goodput';
import { newRecord } from './request-record';

describe('parseGoodput', () => {
  it("reads vLLM's KEY:MS pairs, joined by commas or spaces", () => {
    expect(parseGoodput('ttft:300,tpot:50')).toEqual({ bounds: { ttft: 300, tpot: 50 } });
    expect(parseGoodput('e2el:1500.5 ttft:200')).toEqual({ bounds: { e2el: 1500.5, ttft: 200 } });
  });

  it.each([
    ['', /no KEY:MS pair/],
    ['ttft=300', /cannot read "ttft=300"/],
    ['ttft:-1', /cannot read "ttft:-1"/],
    ['itl:20', /unknown figure "itl"; the figures are ttft, tpot, e2el/],
  ])('%j is refused with its reason', (text, why) => {
    const g = parseGoodput(text);
    expect('error' in g && g.error).toMatch(why);
  });
});

describe('meetsGoodput', () => {
  it('is at or under every bound given; a figure never reached fails its bound', () => {
    expect(meetsGoodput({ ttft: 300, tpot: 50 }, { ttft: 300, tpot: 50, e2el: 9000 })).toBe(true);
    expect(meetsGoodput({ ttft: 300 }, { ttft: 300.001, tpot: 0, e2el: 1 })).toBe(false);
    expect(meetsGoodput({ e2el: 100 }, { ttft: 1, tpot: 0, e2el: null })).toBe(false);
    expect(meetsGoodput({}, { ttft: null, tpot: 99, e2el: null })).toBe(true);
  });

  it('ownGoodputValues: from the end of the client queue, TPOT 0 for one token (vLLM)', () => {
    const r = { ...newRecord(0, 10), dispatched_s: 10.5, first_token_s: 10.7, last_token_s: 10.7, end_s: 10.8, tokens: 1 };
    const v = ownGoodputValues(r);
    expect(v.ttft).toBeCloseTo(200, 6);
    expect(v.e2el).toBeCloseTo(300, 6);
    expect(v.tpot).toBe(0);
    const two = ownGoodputValues({ ...r, last_token_s: 10.75, tokens: 3 });
    expect(two.tpot).toBeCloseTo(25, 6);
  });
});
