import { EventEmitter } from 'node:events';
import type { RunIo } from './command-io';
import { Interrupts } from './interrupts';

/** A command's io whose signals the case sends. */
function fakeIo() {
  const signals = new EventEmitter();
  const stderr: string[] = [];
  const exits: number[] = [];
  const io: RunIo = {
    stdout: { write: () => true },
    stderr: { write: (s: string) => stderr.push(s) },
    signals,
    exitNow: (code) => exits.push(code),
    argv: [],
  };
  return { io, signals, stderr, exits };
}

describe('Interrupts', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('on a first %s, says what happens now and asks the command to stop, once', (signal) => {
    const { io, signals, stderr, exits } = fakeIo();
    const stop = jest.fn();
    const interrupts = new Interrupts(io, 'the sessions drain and the summary is written', stop);
    expect(interrupts.interrupted).toBe(false);
    signals.emit(signal);
    expect(interrupts.interrupted).toBe(true);
    expect(stop).toHaveBeenCalledTimes(1);
    expect(stderr).toEqual(['\ninterrupted: the sessions drain and the summary is written (interrupt again to leave at once)\n']);
    expect(exits).toEqual([]);
  });

  it('leaves at once with status 130 on a second signal, of either kind, without stopping again', () => {
    const { io, signals, stderr, exits } = fakeIo();
    const stop = jest.fn();
    new Interrupts(io, 'the run stops', stop);
    signals.emit('SIGTERM');
    signals.emit('SIGINT');
    expect(stop).toHaveBeenCalledTimes(1);
    expect(exits).toEqual([130]);
    expect(stderr[1]).toBe('\nsecond interrupt: leaving now\n');
  });

  it('stops listening once disposed: a signal then is left to whoever else listens', () => {
    const { io, signals, exits } = fakeIo();
    const stop = jest.fn();
    const interrupts = new Interrupts(io, 'the run stops', stop);
    expect(signals.listenerCount('SIGINT')).toBe(1);
    expect(signals.listenerCount('SIGTERM')).toBe(1);
    interrupts.dispose();
    expect(signals.listenerCount('SIGINT')).toBe(0);
    expect(signals.listenerCount('SIGTERM')).toBe(0);
    signals.emit('SIGINT');
    expect(stop).not.toHaveBeenCalled();
    expect(interrupts.interrupted).toBe(false);
    expect(exits).toEqual([]);
  });

  it('keeps two commands apart: disposing one leaves the other listening', () => {
    const { io, signals } = fakeIo();
    const first = jest.fn();
    const second = jest.fn();
    new Interrupts(io, 'first', first).dispose();
    new Interrupts(io, 'second', second);
    signals.emit('SIGINT');
    expect(first).not.toHaveBeenCalled();
    expect(second).toHaveBeenCalledTimes(1);
  });
});
