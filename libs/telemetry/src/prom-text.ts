/**
 * The Prometheus text exposition format (0.0.4), read: one sample per line, `name{labels} value
 * [timestamp]`, `# TYPE name kind` naming each family's kind. Enough for a server's /metrics; an
 * unreadable line is skipped and counted, never fatal (a server's output is not ours to fail on).
 */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromScrape {
  samples: PromSample[];
  /** Family name → its `# TYPE`. */
  types: Map<string, string>;
  /** Lines that were neither a comment nor a sample. */
  unreadable: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

function parseValue(raw: string): number {
  if (raw === '+Inf' || raw === 'Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  if (raw === 'NaN') return NaN;
  const v = Number(raw);
  if (raw.length === 0 || Number.isNaN(v)) throw new Error(`not a value: ${raw}`);
  return v;
}

/** `{a="x",b="y\"z"}` from `at` (the opening brace); returns the labels and the index after `}`. */
function parseLabels(line: string, at: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at + 1;
  for (;;) {
    while (line[i] === ' ' || line[i] === ',') i++;
    if (line[i] === '}') return { labels, end: i + 1 };
    const name = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
    if (!name || line[i + name[0].length] !== '=' || line[i + name[0].length + 1] !== '"') throw new Error('bad label');
    i += name[0].length + 2;
    let value = '';
    while (i < line.length && line[i] !== '"') {
      if (line[i] === '\\') {
        const next = line[i + 1];
        value += next === 'n' ? '\n' : next;
        i += 2;
      } else value += line[i++];
    }
    if (line[i] !== '"') throw new Error('unterminated label value');
    labels[name[0]] = value;
    i++;
  }
}

export function parsePromText(text: string): PromScrape {
  const samples: PromSample[] = [];
  const types = new Map<string, string>();
  let unreadable = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.length === 0) continue;
    if (line.startsWith('#')) {
      const t = /^#\s*TYPE\s+(\S+)\s+(\S+)/.exec(line);
      if (t) types.set(t[1], t[2]);
      continue;
    }
    try {
      const name = NAME.exec(line);
      if (!name) throw new Error('no name');
      let i = name[0].length;
      let labels: Record<string, string> = {};
      if (line[i] === '{') ({ labels, end: i } = parseLabels(line, i));
      const rest = line.slice(i).trim().split(/\s+/);
      samples.push({ name: name[0], labels, value: parseValue(rest[0] ?? '') });
    } catch {
      unreadable++;
    }
  }
  return { samples, types, unreadable };
}
