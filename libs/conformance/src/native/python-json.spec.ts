import { parseTraceLines } from './native-check';

describe('parseTraceLines: JSON read as Python reads it', () => {
  it('reads JSON the way Python does: NaN and Infinity literals, exact big integers, integral floats', () => {
    const huge = '1' + '0'.repeat(400);
    const { records, errors } = parseTraceLines(`[NaN, Infinity, -Infinity, 1e999, ${huge}, 12345678901234567890, 80.0, -0]\n{"__proto__": 1}`);
    expect(errors).toEqual([]);
    // Past the double range an integer stays exact; within it, a double is as exact as any rule needs.
    expect(records[0]).toEqual([NaN, Infinity, -Infinity, Infinity, BigInt(huge), Number('12345678901234567890'), 80, -0]);
    expect(Object.keys(records[1] as object)).toEqual(['__proto__']);
  });

  it('rejects what Python rejects', () => {
    for (const line of ['{"a": 1,}', "{'a': 1}", '[01]', '"a\tb"', '"\\x"', '[1] [2]', '+1', '.5', '-NaN'])
      expect(parseTraceLines(line).errors).toHaveLength(1);
  });
});
