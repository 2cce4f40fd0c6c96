import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { parsePins, type Pins } from '../pins';
import { ROOT } from '../processes';

const DEFAULT_PYTHON_CLIENT = path.resolve(ROOT, '..', 'shared/anchors/python_baseline_client.py');
const DEFAULT_DOC_SECTION = 'pacing';

export class UsageError extends Error {}

export type ClientName = 'probe' | 'probe-full' | 'probe-openai' | 'probe-talk' | 'probe-conversation' | 'python' | 'floor' | 'baseline';
export const CLIENTS: readonly ClientName[] = ['probe', 'probe-full', 'probe-openai', 'probe-talk', 'probe-conversation', 'python', 'floor', 'baseline'];

export interface Options {
  sessions: number[];
  runs: number;
  duration_s: number;
  clients: ClientName[];
  out_dir: string;
  write_doc?: string;
  doc_section: string;
  python_bin?: string;
  python_client: string;
  /** Client `floor`: tools/bench/ws-floor.ts compiled to one file (set before the first run). */
  floor_js?: string;
  /** Another checkout (a worktree of an earlier commit): client `baseline` runs its probe against its own mock. */
  baseline_root?: string;
  settle_s: number;
  /** `--stamp-sends`: every mock stamps each frame it sends, and the probe's receive delay (server send stamp to client receive stamp) is in the table. */
  stamp_sends: boolean;
  /**
   * `--host-samples`: /proc every 100 ms during each client run (host-sampler.ts): the run's mean
   * steal and other processes' cores in the results, and for a probe run with late packets its
   * stalls (what took the cores while they waited) in the run's stalls.md.
   */
  host_samples: boolean;
  /** `--pin C:M`: every client's main thread alone on CPU C, the rest and the mock on CPU M (pins.ts); null without it. */
  pins: Pins | null;
}

const USAGE =
  'usage: node --import tsx tools/bench/pacing.ts [--sessions 64,256,512,1024] [--runs 3] [--duration 30] ' +
  '[--clients probe,probe-full,probe-openai,probe-talk,probe-conversation,python,floor] [--out out/bench] [--write-doc docs/performance.md] [--doc-section pacing] ' +
  '[--python BIN] [--python-client FILE] [--settle 2] [--baseline DIR, with client baseline] [--stamp-sends] [--host-samples] [--pin CLIENT_CPU:MOCK_CPU] [--pin-threads main|all]';

function positiveInt(name: string, text: string, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > max) throw new UsageError(`--${name} must be an integer from 1 to ${max}, got "${text}"`);
  return value;
}

function positiveNumber(name: string, text: string, max: number, allowZero = false): number {
  const value = Number(text);
  const low_ok = allowZero ? value >= 0 : value > 0;
  if (text.trim() === '' || !Number.isFinite(value) || !low_ok || value > max) {
    throw new UsageError(`--${name} must be a number ${allowZero ? '>= 0' : '> 0'} and <= ${max}, got "${text}"`);
  }
  return value;
}

function parseClients(text: string): ClientName[] {
  const names = text.split(',').map((s) => s.trim());
  for (const name of names) {
    if (!CLIENTS.includes(name as ClientName)) throw new UsageError(`--clients: unknown client "${name}" (known: ${CLIENTS.join(', ')})`);
  }
  return [...new Set(names)] as ClientName[];
}

export function parseOptions(argv: string[]): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        sessions: { type: 'string', default: '64,256,512,1024' },
        runs: { type: 'string', default: '3' },
        duration: { type: 'string', default: '30' },
        clients: { type: 'string', default: 'probe,python' },
        out: { type: 'string', default: 'out/bench' },
        'write-doc': { type: 'string' },
        'doc-section': { type: 'string' },
        python: { type: 'string' },
        'python-client': { type: 'string', default: DEFAULT_PYTHON_CLIENT },
        baseline: { type: 'string' },
        settle: { type: 'string', default: '2' },
        'stamp-sends': { type: 'boolean', default: false },
        'host-samples': { type: 'boolean', default: false },
        pin: { type: 'string' },
        'pin-threads': { type: 'string', default: 'main' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) throw new UsageError(USAGE);
  const sessions = values.sessions.split(',').map((s) => positiveInt('sessions', s.trim(), 10_000));
  const doc_section = values['doc-section'] ?? DEFAULT_DOC_SECTION;
  if (!/^[A-Za-z0-9][\w-]*$/.test(doc_section)) throw new UsageError(`--doc-section must be letters, digits, "_" or "-", got "${doc_section}"`);
  if (values['doc-section'] !== undefined && values['write-doc'] === undefined) throw new UsageError('--doc-section needs --write-doc');
  if ((values.baseline === undefined) !== !values.clients.split(',').map((c) => c.trim()).includes('baseline')) {
    throw new UsageError('client baseline and --baseline DIR (a checkout of the commit to compare with, e.g. a git worktree) go together');
  }
  let pins: Pins | null;
  try {
    pins = parsePins('pacing.ts', values.pin, values['pin-threads']);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return {
    sessions: [...new Set(sessions)],
    runs: positiveInt('runs', values.runs, 100),
    duration_s: positiveNumber('duration', values.duration, 3600),
    clients: parseClients(values.clients),
    out_dir: path.resolve(values.out),
    write_doc: values['write-doc'] === undefined ? undefined : path.resolve(values['write-doc']),
    doc_section,
    python_bin: values.python,
    python_client: path.resolve(values['python-client']),
    baseline_root: values.baseline === undefined ? undefined : path.resolve(values.baseline),
    settle_s: positiveNumber('settle', values.settle, 60, true),
    stamp_sends: values['stamp-sends'] === true,
    host_samples: values['host-samples'] === true,
    pins,
  };
}

