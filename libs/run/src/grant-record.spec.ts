import { GrantLog } from './grant-record';

/** A log of grants whose warnings the spec reads. */
function log(output_sample_rate: number, given: boolean) {
  const warnings: string[] = [];
  return { grants: new GrantLog(output_sample_rate, given, (line) => warnings.push(line)), warnings };
}

describe('GrantLog', () => {
  it('before any grant, uses the dialect default, or the rate the user gave, and says which', () => {
    expect(log(24000, false).grants.record).toEqual({ sessions: 0, differing: 0, output_sample_rate_used: 24000, output_sample_rate_source: 'dialect default (the server stated none)' });
    expect(log(16000, true).grants.record).toMatchObject({ output_sample_rate_used: 16000, output_sample_rate_source: '--output-sample-rate' });
  });

  it("keeps the first grant, and the server's output rate decides the figures' rate when the user gave none", () => {
    const { grants, warnings } = log(24000, false);
    grants.add({ output_sample_rate: 22050, native_unit_ms: 80 });
    expect(grants.record).toEqual({ sessions: 1, differing: 0, output_sample_rate: 22050, native_unit_ms: 80, output_sample_rate_used: 22050, output_sample_rate_source: 'server grant' });
    expect(warnings).toEqual([]);
  });

  it('a grant that states no rate leaves the default in use', () => {
    const { grants } = log(24000, false);
    grants.add({ chunk_period_ms: 160 });
    expect(grants.record).toMatchObject({ sessions: 1, chunk_period_ms: 160, output_sample_rate_used: 24000, output_sample_rate_source: 'dialect default (the server stated none)' });
  });

  it('counts the sessions whose grant differs from the first in any field, and keeps the first', () => {
    const { grants } = log(24000, false);
    grants.add({ output_sample_rate: 24000, native_unit_ms: 80 });
    grants.add({ output_sample_rate: 24000, native_unit_ms: 80 });
    grants.add({ output_sample_rate: 16000, native_unit_ms: 80 });
    grants.add({ output_sample_rate: 24000, native_unit_ms: 40 });
    grants.add({ output_sample_rate: 24000, native_unit_ms: 80, chunk_period_ms: 80 });
    expect(grants.record).toMatchObject({ sessions: 5, differing: 3, output_sample_rate: 24000, native_unit_ms: 80 });
  });

  it('a rate the user gave overrides the grant, and a grant that disagrees with it is warned about once', () => {
    const { grants, warnings } = log(16000, true);
    grants.add({ output_sample_rate: 16000 });
    expect(warnings).toEqual([]);
    grants.add({ output_sample_rate: 24000 });
    grants.add({ output_sample_rate: 22050 });
    expect(grants.record).toMatchObject({ output_sample_rate_used: 16000, output_sample_rate_source: '--output-sample-rate' });
    expect(warnings).toEqual([
      "warning: the server grants 24000 Hz output but --output-sample-rate is 16000; figures use 16000 Hz as asked (drop the flag to use the server's rate)",
    ]);
  });

  it('warns of no disagreement without a given rate, or when the server states none', () => {
    const a = log(24000, false);
    a.grants.add({ output_sample_rate: 16000 });
    const b = log(24000, true);
    b.grants.add({ native_unit_ms: 80 });
    expect([...a.warnings, ...b.warnings]).toEqual([]);
  });

  it("pools the rates the sessions' deltas stated, and the most common one becomes the rate used", () => {
    const { grants } = log(24000, false);
    grants.add({ output_sample_rate: 24000 });
    grants.addDeltaRates([{ delta_sample_rates: { '22050': 5, '24000': 3 } }, {}, { delta_sample_rates: { '24000': 4 } }]);
    expect(grants.record.delta_sample_rates).toEqual({ '22050': 5, '24000': 7 });
    expect(grants.record).toMatchObject({ output_sample_rate_used: 24000, output_sample_rate_source: "each audio delta's own sample_rate_hz" });
  });

  it('leaves the record as it was when no delta stated a rate', () => {
    const { grants } = log(24000, false);
    grants.add({ output_sample_rate: 22050 });
    grants.addDeltaRates([{}, { delta_sample_rates: {} }]);
    expect(grants.record).not.toHaveProperty('delta_sample_rates');
    expect(grants.record).toMatchObject({ output_sample_rate_used: 22050, output_sample_rate_source: 'server grant' });
  });
});
