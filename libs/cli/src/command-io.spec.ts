import { constants } from 'node:os';
import { EXIT } from './command-io';
import { programHelp } from './program';

describe('EXIT', () => {
  it("is the exit statuses every command's help promises, each distinct", () => {
    const help = programHelp({ name: 'kit', version: '0.0.0', summary: 'a kit', commands: [] });
    const promised = /Exit status: (.*)\.\n$/.exec(help)?.[1] ?? '';
    const statuses = Object.fromEntries([...promised.matchAll(/(\d+) ([a-z ]+?)(?: \([^)]*\))?(?:, |$)/g)].map(([, code, what]) => [what, Number(code)]));
    expect(statuses).toEqual({
      done: EXIT.ok,
      failed: EXIT.failed,
      'bad input': EXIT.usage,
      'pacing unqualified': EXIT.unqualified,
      interrupted: EXIT.interrupted,
    });
    expect(new Set(Object.values(EXIT)).size).toBe(Object.keys(EXIT).length);
  });

  it('ends an interrupted command with 128 + SIGINT, as a shell reports a process that SIGINT ended', () => {
    expect(EXIT.interrupted).toBe(128 + constants.signals.SIGINT);
  });
});
