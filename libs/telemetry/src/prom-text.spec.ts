import { parsePromText } from './prom-text';

describe('parsePromText', () => {
  it('reads a sample with or without labels, ignoring the timestamp and extra blanks', () => {
    const p = parsePromText('up 1\n  http_requests_total{code="200",method="get"}   1027   1395066363000  \nprocess_cpu_seconds_total\t0.25\n');
    expect(p.samples).toEqual([
      { name: 'up', labels: {}, value: 1 },
      { name: 'http_requests_total', labels: { code: '200', method: 'get' }, value: 1027 },
      { name: 'process_cpu_seconds_total', labels: {}, value: 0.25 },
    ]);
    expect(p.unreadable).toBe(0);
  });

  it('reads the special values and number forms the format allows', () => {
    const values = parsePromText('a +Inf\nb Inf\nc -Inf\nd NaN\ne 1.5e-3\nf -2\ng 0\n').samples.map((s) => s.value);
    expect(values.slice(0, 3)).toEqual([Infinity, Infinity, -Infinity]);
    expect(values[3]).toBeNaN();
    expect(values.slice(4)).toEqual([0.0015, -2, 0]);
  });

  it('reads label values with escapes, commas, braces and blanks inside the quotes, and a trailing comma', () => {
    const p = parsePromText('m{path="/a,b}c", msg="say \\"hi\\"\\nbye", dir="C:\\\\tmp",} 3\n');
    expect(p.samples).toEqual([{ name: 'm', labels: { path: '/a,b}c', msg: 'say "hi"\nbye', dir: 'C:\\tmp' }, value: 3 }]);
    expect(parsePromText('m{} 4\n').samples).toEqual([{ name: 'm', labels: {}, value: 4 }]);
  });

  it("takes each family's kind from its # TYPE line and skips every other comment and blank line", () => {
    const p = parsePromText('# HELP vllm:ttft_seconds Time to first token\n# TYPE vllm:ttft_seconds histogram\n\n# TYPE up gauge\n# a free comment\n# TYPE packed counter\r\nup 1\r\n');
    expect([...p.types]).toEqual([
      ['vllm:ttft_seconds', 'histogram'],
      ['up', 'gauge'],
      ['packed', 'counter'],
    ]);
    expect(p.samples).toEqual([{ name: 'up', labels: {}, value: 1 }]);
    expect(p.unreadable).toBe(0);
  });

  it('counts each line it cannot read and reads the lines around it', () => {
    const bad = ['no_value', 'no_value_after_labels{a="1"}', 'word_value abc', 'm{a="unterminated} 1', 'm{a=unquoted} 1', 'm{1a="x"} 1', '9starts_with_a_digit 1', '{a="x"} 1'];
    const p = parsePromText(['first 1', ...bad, 'last 2'].join('\n'));
    expect(p.samples.map((s) => s.name)).toEqual(['first', 'last']);
    expect(p.unreadable).toBe(bad.length);
  });

  it('reads nothing from an empty answer', () => {
    const p = parsePromText('');
    expect([p.samples, p.types.size, p.unreadable]).toEqual([[], 0, 0]);
  });
});
